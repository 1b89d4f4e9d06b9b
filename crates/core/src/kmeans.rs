//! k-means configuration, result, and the host-side initialisation shared by every
//! backend (same seed → same starting centroids everywhere).

use ndarray::{Array1, Array2, ArrayView2};

use crate::{check, Element, Error, Result};

/// How the starting centroids are chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// k-means++ (D² sampling) from `KMeansConfig::seed`.
    KMeansPlusPlus,
    /// k distinct points drawn uniformly from `KMeansConfig::seed`.
    Random,
    /// These centroids (k × D), converted to the element type.
    Given(Array2<f64>),
}

/// Parameters of [`Cluster::kmeans`](crate::Cluster::kmeans).
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansConfig {
    /// Number of clusters, 1 ≤ k ≤ N.
    pub k: usize,
    /// Most assignment steps (≥ 1). The seed's k-means used 500.
    pub max_iter: usize,
    /// Stop when at most `tol · N` points changed cluster in an assignment (0 ≤ tol ≤ 1).
    pub tol: f64,
    /// Starting centroids.
    pub init: Init,
    /// Seed of the initialisation.
    pub seed: u64,
}

impl KMeansConfig {
    /// k clusters, k-means++ from seed 0, 500 iterations, tolerance 0.001 (report 000's).
    pub fn new(k: usize) -> Self {
        KMeansConfig {
            k,
            max_iter: 500,
            tol: 1e-3,
            init: Init::KMeansPlusPlus,
            seed: 0,
        }
    }
    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// Sets the initialisation.
    pub fn init(mut self, init: Init) -> Self {
        self.init = init;
        self
    }
    /// Sets the iteration cap.
    pub fn max_iter(mut self, max_iter: usize) -> Self {
        self.max_iter = max_iter;
        self
    }
    /// Sets the tolerance.
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }
}

/// What k-means returns.
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansResult<T> {
    /// Final centroids, k × D.
    pub centroids: Array2<T>,
    /// Label of each point: the index of its nearest centroid in `centroids`.
    pub labels: Array1<usize>,
    /// Σ‖xᵢ − c_labelᵢ‖² of the last assignment, accumulated in f64.
    pub inertia: f64,
    /// Assignment steps made.
    pub iterations: usize,
    /// Whether the tolerance was met (rather than `max_iter` reached).
    pub converged: bool,
    /// The inertia after each assignment step; never increases (Lloyd's monotonicity),
    /// up to rounding.
    pub inertia_history: Vec<f64>,
}

/// A small, fast, well-mixed 64-bit generator (SplitMix64). Deterministic across
/// platforms, so the same seed gives the same initial centroids everywhere.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [0, n) (n > 0), without modulo bias worth speaking of for n < 2³².
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// The starting centroids for `config` on data `x` (checked with
/// [`check::kmeans`]). Computed on the host in f64, then rounded to `T`.
///
/// # Errors
/// As [`check::kmeans`].
pub fn init_centroids<T: Element>(x: ArrayView2<T>, config: &KMeansConfig) -> Result<Array2<T>> {
    check::kmeans(x, config)?;
    let (n, d) = x.dim();
    let k = config.k;
    let mut rng = SplitMix64::new(config.seed);
    let rows: Vec<usize> = match &config.init {
        Init::Given(c) => return Ok(c.mapv(T::from_f64)),
        Init::Random => sample_distinct(&mut rng, n, k)?,
        Init::KMeansPlusPlus => {
            let dist2 = |i: usize, j: usize| -> f64 {
                (0..d)
                    .map(|c| (x[[i, c]].as_f64() - x[[j, c]].as_f64()).powi(2))
                    .sum()
            };
            let first = rng.below(n);
            let mut chosen = vec![first];
            // n is not bounded by the data's bytes when d = 0: allocate fallibly.
            let mut closest = crate::host::filled_vec("kmeans", n, 0.0f64)?;
            for (i, c) in closest.iter_mut().enumerate() {
                *c = dist2(i, first);
            }
            while chosen.len() < k {
                let total: f64 = closest.iter().sum();
                let next = if total > 0.0 {
                    let target = rng.next_f64() * total;
                    let mut acc = 0.0;
                    let mut pick = n - 1;
                    for (i, &w) in closest.iter().enumerate() {
                        acc += w;
                        if acc > target && w > 0.0 {
                            pick = i;
                            break;
                        }
                    }
                    pick
                } else {
                    // Every point sits on a chosen centroid: fall back to uniform picks.
                    rng.below(n)
                };
                chosen.push(next);
                for (i, c) in closest.iter_mut().enumerate() {
                    *c = c.min(dist2(i, next));
                }
            }
            chosen
        }
    };
    Ok(Array2::from_shape_fn((k, d), |(r, c)| x[[rows[r], c]]))
}

/// k distinct indices below n, in the order drawn (Floyd's algorithm, then shuffled).
fn sample_distinct(rng: &mut SplitMix64, n: usize, k: usize) -> Result<Vec<usize>> {
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

/// Checks a `KMeansConfig::init` of [`Init::Given`] against the data's dimension.
pub(crate) fn check_given(init: &Init, k: usize, d: usize) -> Result<()> {
    if let Init::Given(c) = init {
        if c.dim() != (k, d) {
            return Err(Error::invalid(
                "kmeans",
                format!(
                    "given centroids are {}x{}, expected k x D = {k}x{d}",
                    c.nrows(),
                    c.ncols()
                ),
            ));
        }
        if let Some(((r, col), v)) = c.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(Error::NonFinite {
                op: "kmeans",
                what: "init centroids",
                value: *v,
                index: (r, col),
            });
        }
    }
    Ok(())
}
