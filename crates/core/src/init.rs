//! k-means initialisation, the reference every backend follows: the same seed gives the
//! same starting centroids on every backend.
//!
//! Everything that decides a pick is defined here to the bit, so that a backend that
//! seeds on its device can follow it exactly:
//! - squared distances are formed in f64 from the element values, one rounded product
//!   and one rounded sum per dimension, in dimension order ([`sq_dist`]);
//! - a point's D² weight is the smallest distance to the centres chosen so far, kept
//!   only when strictly smaller (ties keep the earlier centre);
//! - weighted draws walk a [`SampleTree`]: pairwise sums over blocks of
//!   [`TREE_LEAVES`] values, blocks summed the same way level over level;
//! - the random numbers are SplitMix64's: one stream from the seed for the first point
//!   and each D² draw, and for k-means‖ one counter-based number per point and round
//!   ([`point_uniform`]).

use ndarray::{Array2, ArrayView1, ArrayView2};

use crate::kmeans::{sample_weights, Init, KMeansConfig, SplitMix64};
use crate::{check, Element, Error, Result};

/// Leaves of one block of a [`SampleTree`].
pub const TREE_LEAVES: usize = 2048;

/// Weighted Lloyd steps that reduce the k-means‖ candidates to k centroids (Spark
/// MLlib's cap).
pub const RECLUSTER_ITERATIONS: usize = 30;

/// Σ (aᵢ − bᵢ)² in f64, in index order, a product and a sum each rounded (no fused
/// multiply-add): the distance every seeding computes.
pub fn sq_dist<T: Element>(a: ArrayView1<T>, b: ArrayView1<T>) -> f64 {
    let mut s = 0.0f64;
    for (x, y) in a.iter().zip(b.iter()) {
        let t = x.as_f64() - y.as_f64();
        s += t * t;
    }
    s
}

/// The pairwise sum tree of one block (at most [`TREE_LEAVES`] values, padded with
/// zeros), heap-ordered: node h ≥ 1 is the sum of nodes 2h and 2h + 1 and leaf i is
/// node `TREE_LEAVES + i`.
fn block_tree(values: &[f64]) -> Vec<f64> {
    let mut t = vec![0.0; 2 * TREE_LEAVES];
    t[TREE_LEAVES..TREE_LEAVES + values.len()].copy_from_slice(values);
    for h in (1..TREE_LEAVES).rev() {
        t[h] = t[2 * h] + t[2 * h + 1];
    }
    t
}

/// Sums of weights arranged for drawing an index with probability proportional to its
/// weight: level 0 holds the weights, each further level the block roots of the one
/// below, up to a single total.
#[derive(Debug, Clone)]
pub struct SampleTree {
    levels: Vec<Vec<f64>>,
}

impl SampleTree {
    /// The tree over `weights` (non-negative).
    pub fn new(weights: &[f64]) -> SampleTree {
        let mut levels = vec![weights.to_vec()];
        loop {
            let below = levels.last().expect("level 0 is there");
            if below.len() <= 1 && levels.len() > 1 {
                break;
            }
            let up = below
                .chunks(TREE_LEAVES)
                .map(|b| block_tree(b)[1])
                .collect::<Vec<_>>();
            levels.push(if up.is_empty() { vec![0.0] } else { up });
        }
        SampleTree { levels }
    }

    /// Σ weights, as the tree adds them.
    pub fn total(&self) -> f64 {
        self.levels.last().expect("a top level")[0]
    }

    /// The index the cumulative weight `target` (0 ≤ target < total) falls in, walking
    /// down from the top: left while `target` is below the left sum or the right one is
    /// empty, else right with the left sum taken off. Never an index of weight 0 when
    /// the total is positive.
    pub fn pick(&self, mut target: f64) -> usize {
        let mut block = 0;
        for level in self.levels[..self.levels.len() - 1].iter().rev() {
            let start = block * TREE_LEAVES;
            let end = (start + TREE_LEAVES).min(level.len());
            let t = block_tree(&level[start..end]);
            let mut h = 1;
            while h < TREE_LEAVES {
                let (left, right) = (t[2 * h], t[2 * h + 1]);
                if target < left || right == 0.0 {
                    h *= 2;
                } else {
                    target -= left;
                    h = 2 * h + 1;
                }
            }
            block = start + (h - TREE_LEAVES);
        }
        block
    }

    /// One D² draw from uniform `u` in [0, 1) among `n` indices: by weight when the
    /// total is positive, else `⌊u·n⌋` (every weight 0: every point sits on a centre).
    pub fn draw(&self, u: f64, n: usize) -> usize {
        let total = self.total();
        if total > 0.0 {
            self.pick(u * total)
        } else {
            ((u * n as f64) as usize).min(n - 1)
        }
    }
}

/// The uniform number in [0, 1) of point `i` in k-means‖ round `round`: SplitMix64's
/// first output from the state `seed ^ ((round + 1) << 40) ^ i`.
pub fn point_uniform(seed: u64, round: usize, i: usize) -> f64 {
    SplitMix64::new(seed ^ ((round as u64 + 1) << 40) ^ i as u64).next_f64()
}

/// Whether point `i` (D² weight `w`) joins the k-means‖ candidates in `round`, with ℓ
/// `ell` expected picks out of total weight `phi`.
pub fn parallel_pick(seed: u64, round: usize, i: usize, w: f64, ell: f64, phi: f64) -> bool {
    w > 0.0 && point_uniform(seed, round, i) < ell * w / phi
}

/// The error for a D² total that is not finite: NaN or ±Inf in the data, else squared
/// distances past f64.
///
/// # Errors
/// Always: `NonFinite` naming the first bad entry of `x`, else `InvalidArgument`.
pub fn nonfinite_total<T: Element>(x: ArrayView2<T>, total: f64) -> Error {
    match check::finite("kmeans", "X", &x) {
        Err(e) => e,
        Ok(()) => Error::invalid(
            "kmeans",
            format!(
                "the squared distances overflow f64 (their sum is {total}): scale the data down"
            ),
        ),
    }
}

/// D² weights of the points of `x` and the centre each one is nearest to, kept up to
/// date as centres are added; with sample weights, the tree of the weights.
struct Nearest<'a, T> {
    x: ArrayView2<'a, T>,
    closest: Vec<f64>,
    owner: Vec<usize>,
    centres: Vec<usize>,
    /// The sample weights (their `T` values in f64) and their tree.
    weights: Option<(&'a [f64], SampleTree)>,
}

impl<'a, T: Element> Nearest<'a, T> {
    fn new(x: ArrayView2<'a, T>, w: Option<&'a [f64]>) -> Result<Self> {
        let n = x.nrows();
        Ok(Nearest {
            x,
            closest: crate::host::filled_vec("kmeans", n, f64::INFINITY)?,
            owner: crate::host::filled_vec("kmeans", n, 0)?,
            centres: Vec::new(),
            weights: w.map(|w| (w, SampleTree::new(w))),
        })
    }
    /// The first centre ([`first_centre`]).
    fn start(&mut self, rng: &mut SplitMix64) {
        let n = self.x.nrows();
        let first = first_centre(rng, n, self.weights.as_ref().map(|(w, t)| (*w, t)));
        self.add(&[first]);
    }
    /// Adds the points `rows` as centres, in order.
    fn add(&mut self, rows: &[usize]) {
        for &r in rows {
            let j = self.centres.len();
            self.centres.push(r);
            let c = self.x.row(r);
            for (i, xi) in self.x.rows().into_iter().enumerate() {
                let d = sq_dist(xi, c);
                if d < self.closest[i] {
                    self.closest[i] = d;
                    self.owner[i] = j;
                }
            }
        }
    }
    /// The leaves of the D² tree: D²ᵢ, or with weights wᵢ·D²ᵢ (one rounded product).
    fn leaves(&self) -> Vec<f64> {
        match &self.weights {
            None => self.closest.clone(),
            Some((w, _)) => weighted_d2(&self.closest, w),
        }
    }
    /// The D² tree, its total checked.
    fn tree(&self) -> Result<SampleTree> {
        let tree = SampleTree::new(&self.leaves());
        if !tree.total().is_finite() {
            return Err(nonfinite_total(self.x, tree.total()));
        }
        Ok(tree)
    }
    /// D² draws from `rng` until there are k centres. With weights, a D² total of 0
    /// (every point of positive weight on a centre) draws by weight instead, so a point
    /// of weight 0 is never drawn.
    fn plus_plus(&mut self, rng: &mut SplitMix64, k: usize) -> Result<()> {
        let n = self.x.nrows();
        while self.centres.len() < k {
            let tree = self.tree()?;
            let u = rng.next_f64();
            let pick = match &self.weights {
                Some((_, wtree)) if tree.total() <= 0.0 => wtree.draw(u, n),
                _ => tree.draw(u, n),
            };
            self.add(&[pick]);
        }
        // A non-finite point has no finite distance to anything: caught here when k = 1.
        self.tree().map(|_| ())
    }
}

/// The first centre of k-means++ and k-means‖ among `n` points: `rng.below(n)`, or
/// with sample weights `w` (and their tree) a draw by weight from `rng.next_f64()`.
/// Weights all equal draw `rng.below(n)` too: a draw by equal weights is uniform, and
/// so all-ones weights start where no weights do, to the bit.
pub fn first_centre(rng: &mut SplitMix64, n: usize, w: Option<(&[f64], &SampleTree)>) -> usize {
    match w {
        Some((w, tree)) if w.iter().any(|&v| v != w[0]) => tree.draw(rng.next_f64(), n),
        _ => rng.below(n),
    }
}

/// The weight of each of `m` k-means‖ candidates for the reclustering: the number of
/// points whose nearest centre it is (`owner`, in point order), or with sample weights
/// `w` the sum of their weights, added in point order.
pub fn candidate_weights(
    owner: impl Iterator<Item = usize>,
    m: usize,
    w: Option<&[f64]>,
) -> Vec<f64> {
    let mut weights = vec![0.0; m];
    for (i, o) in owner.enumerate() {
        weights[o] += w.map_or(1.0, |w| w[i]);
    }
    weights
}

/// wᵢ·D²ᵢ in f64, each product rounded once: the leaves of a weighted D² draw.
pub fn weighted_d2(closest: &[f64], w: &[f64]) -> Vec<f64> {
    closest.iter().zip(w).map(|(d, w)| d * w).collect()
}

/// The starting centroids for `config` on host data `x` (checked with
/// [`check::kmeans_config`]): the given ones, k distinct random points, k-means++ (D²
/// sampling) or k-means‖, with `config.sample_weight` converted to `T`
/// ([`sample_weights`]). Rounded to `T` once.
///
/// # Errors
/// As [`check::kmeans_config`] and [`sample_weights`]; `NonFinite` for NaN or ±Inf in
/// `x` met while seeding.
pub fn init_centroids<T: Element>(x: ArrayView2<T>, config: &KMeansConfig) -> Result<Array2<T>> {
    check::kmeans_config(x.nrows(), x.ncols(), config)?;
    let w = sample_weights::<T>(config)?;
    init_centroids_weighted(x, w.as_ref().map(|w| w.view()), config)
}

/// [`init_centroids`] with the sample weights given in `T` (`config.sample_weight`
/// converted by [`sample_weights`]; `None`: unweighted). With weights:
/// - k-means++: the first centre is drawn by weight ([`first_centre`]: a [`SampleTree`]
///   over the wᵢ, from the stream's first uniform number; `rng.below(n)` when they are
///   all equal), each later one by wᵢ·D²ᵢ (the product rounded once in f64); when every
///   wᵢ·D²ᵢ is 0, by weight (from the same uniform number);
/// - k-means‖: the first centre as k-means++'s; point i joins in a round when its
///   uniform number is below ℓ·(wᵢ·D²ᵢ) / Σ wD²; candidates are weighted by the sum of
///   the weights of the points nearest to each, added in point order;
/// - random: k distinct points among those of positive weight: [`sample_distinct`] of
///   k among their number m, mapped to the m points in index order.
///
/// # Errors
/// As [`init_centroids`].
pub fn init_centroids_weighted<T: Element>(
    x: ArrayView2<T>,
    w: Option<ArrayView1<T>>,
    config: &KMeansConfig,
) -> Result<Array2<T>> {
    let (n, d) = x.dim();
    check::kmeans_config(n, d, config)?;
    let wf: Option<Vec<f64>> = w.map(|w| w.iter().map(|v| v.as_f64()).collect());
    if let Some(w) = &wf {
        check::weights_dim(n, (w.len(), 1))?;
    }
    let wf = wf.as_deref();
    let k = config.k;
    let mut rng = SplitMix64::new(config.seed);
    let rows = match &config.init {
        Init::Given(c) => return Ok(c.mapv(T::from_f64)),
        Init::Random => random_rows(&mut rng, n, k, wf)?,
        Init::KMeansPlusPlus => {
            let mut near = Nearest::new(x.view(), wf)?;
            near.start(&mut rng);
            near.plus_plus(&mut rng, k)?;
            near.centres
        }
        Init::KMeansParallel {
            oversampling,
            rounds,
        } => {
            let mut near = Nearest::new(x.view(), wf)?;
            near.start(&mut rng);
            let ell = oversampling * k as f64;
            for round in 0..*rounds {
                let phi = near.tree()?.total();
                if phi == 0.0 {
                    break;
                }
                let leaves = near.leaves();
                let new: Vec<usize> = (0..n)
                    .filter(|&i| parallel_pick(config.seed, round, i, leaves[i], ell, phi))
                    .collect();
                near.add(&new);
            }
            if near.centres.len() <= k {
                near.plus_plus(&mut rng, k)?;
                near.centres
            } else {
                near.tree()?;
                let m = near.centres.len();
                let weights = candidate_weights(near.owner.iter().copied(), m, wf);
                let cand = Array2::from_shape_fn((m, d), |(r, c)| x[[near.centres[r], c]].as_f64());
                return Ok(recluster(cand.view(), &weights, k, &mut rng).mapv(T::from_f64));
            }
        }
    };
    Ok(Array2::from_shape_fn((k, d), |(r, c)| x[[rows[r], c]]))
}

/// The rows of a random start: k distinct indices below n ([`sample_distinct`]), or
/// with weights `w`, k distinct among the m points of positive weight (drawn as
/// `sample_distinct(rng, m, k)`, mapped to those points in index order).
///
/// # Errors
/// `InvalidArgument` for fewer than k points of positive weight; out of memory.
pub fn random_rows(
    rng: &mut SplitMix64,
    n: usize,
    k: usize,
    w: Option<&[f64]>,
) -> Result<Vec<usize>> {
    let Some(w) = w else {
        return sample_distinct(rng, n, k);
    };
    let positive: Vec<usize> = (0..n).filter(|&i| w[i] > 0.0).collect();
    if positive.len() < k {
        return Err(Error::invalid(
            "kmeans",
            format!("{} points of positive weight, k = {k}", positive.len()),
        ));
    }
    Ok(sample_distinct(rng, positive.len(), k)?
        .into_iter()
        .map(|j| positive[j])
        .collect())
}

/// Σ (aᵢ − bᵢ)² of two f64 rows, as [`sq_dist`] forms it.
fn sq_dist_f64(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0f64;
    for (x, y) in a.iter().zip(b) {
        let t = x - y;
        s += t * t;
    }
    s
}

/// k centroids from m > k weighted candidates (k-means‖'s last step, on the host in
/// f64): weighted k-means++ (the first by weight, then by weight × D²), then weighted
/// Lloyd steps until no label changes or [`RECLUSTER_ITERATIONS`].
pub fn recluster(
    cand: ArrayView2<f64>,
    weights: &[f64],
    k: usize,
    rng: &mut SplitMix64,
) -> Array2<f64> {
    let (m, d) = cand.dim();
    let cand = cand.as_standard_layout();
    let cand = cand.as_slice().expect("standard layout");
    let row = |i: usize| &cand[i * d..(i + 1) * d];
    let first = SampleTree::new(weights).draw(rng.next_f64(), m);
    let mut chosen = vec![first];
    let mut closest: Vec<f64> = (0..m).map(|i| sq_dist_f64(row(i), row(first))).collect();
    while chosen.len() < k {
        let w: Vec<f64> = closest.iter().zip(weights).map(|(c, w)| c * w).collect();
        let pick = SampleTree::new(&w).draw(rng.next_f64(), m);
        chosen.push(pick);
        for (i, c) in closest.iter_mut().enumerate() {
            *c = c.min(sq_dist_f64(row(i), row(pick)));
        }
    }
    let mut cent: Vec<f64> = chosen
        .iter()
        .flat_map(|&j| row(j).iter().copied())
        .collect();
    let mut labels = vec![usize::MAX; m];
    for _ in 0..RECLUSTER_ITERATIONS {
        let mut changed = false;
        for (i, l) in labels.iter_mut().enumerate() {
            let mut best = (0, f64::INFINITY);
            for (j, c) in cent.chunks_exact(d.max(1)).enumerate().take(k) {
                let dist = sq_dist_f64(row(i), &c[..d]);
                if dist < best.1 {
                    best = (j, dist);
                }
            }
            changed |= *l != best.0;
            *l = best.0;
        }
        if !changed {
            break;
        }
        let mut sums = vec![0.0; k * d];
        let mut mass = vec![0.0; k];
        for (i, &l) in labels.iter().enumerate() {
            mass[l] += weights[i];
            for (s, v) in sums[l * d..(l + 1) * d].iter_mut().zip(row(i)) {
                *s += weights[i] * v;
            }
        }
        for j in (0..k).filter(|&j| mass[j] > 0.0) {
            for c in 0..d {
                cent[j * d + c] = sums[j * d + c] / mass[j];
            }
        }
    }
    Array2::from_shape_vec((k, d), cent).expect("k×d centroids")
}

/// k distinct indices below n, in the order drawn (Floyd's algorithm, then shuffled).
pub fn sample_distinct(rng: &mut SplitMix64, n: usize, k: usize) -> Result<Vec<usize>> {
    let mut set = std::collections::BTreeSet::new();
    let mut out = crate::host::with_capacity("kmeans", k)?;
    for j in n - k..n {
        let t = rng.below(j + 1);
        let pick = if set.contains(&t) { j } else { t };
        set.insert(pick);
        out.push(pick);
    }
    for i in (1..out.len()).rev() {
        let j = rng.below(i + 1);
        out.swap(i, j);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
