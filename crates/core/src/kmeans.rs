//! k-means configuration, results, and the seeded generator of the initialisation.

use ndarray::{Array1, Array2};

use crate::params::setters;
use crate::{Element, Indices, Matrix};

/// How the starting centroids are chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// k-means++ (D² sampling) from `KMeansConfig::seed`.
    KMeansPlusPlus,
    /// k distinct points drawn uniformly from `KMeansConfig::seed`.
    Random,
    /// k-means‖ (Bahmani et al. 2012, as Spark MLlib and cuML seed): `rounds` rounds,
    /// each adding every point independently with probability ℓ·D²/Σ D², ℓ =
    /// `oversampling`·k; the candidates, weighted by the points nearest to each, are
    /// reduced to k by weighted k-means++ and Lloyd steps. With at most k candidates,
    /// k-means++ draws the rest.
    KMeansParallel {
        /// ℓ / k, finite and positive (2 in cuML and here by default).
        oversampling: f64,
        /// Rounds, 1 to 64 (2 here by default, as in Spark MLlib).
        rounds: usize,
    },
    /// These centroids (k × D), converted to the element type.
    Given(Array2<f64>),
}

impl Init {
    /// k-means‖ with ℓ = 2k and 2 rounds (Spark MLlib's default number of steps; the
    /// paper's experiments use 5, which costs 2.5× the candidates to recluster).
    pub fn kmeans_parallel() -> Init {
        Init::KMeansParallel {
            oversampling: 2.0,
            rounds: 2,
        }
    }
    /// A short name: `k-means++`, `k-means||`, `random` or `given`.
    pub fn name(&self) -> &'static str {
        match self {
            Init::KMeansPlusPlus => "k-means++",
            Init::KMeansParallel { .. } => "k-means||",
            Init::Random => "random",
            Init::Given(_) => "given",
        }
    }
}

/// Parameters of [`Cluster::kmeans`](crate::Cluster::kmeans), with scikit-learn's
/// meanings and defaults for `max_iter`, `tol` and `n_init = 1`.
///
/// The fit stops at the first of: an update that moved the centroids by at most `tol`
/// (relative to X's variance, as scikit-learn's `tol`); an assignment in which at most
/// `change_tol · N` points changed cluster (with the default 0: no label changed,
/// scikit-learn's "strict convergence"); `max_iter` assignments.
///
/// ```
/// use ndgpu_core::KMeansConfig;
/// let c = KMeansConfig::new(8).seed(42);
/// assert_eq!((c.max_iter, c.tol, c.change_tol), (300, 1e-4, 0.0));
/// // No shift test: the fit runs until no label changes, or 20 assignments.
/// let by_labels = KMeansConfig::new(8).tol(0.0).max_iter(20);
/// assert_eq!(by_labels.tol, 0.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansConfig {
    /// Number of clusters, 1 ≤ k ≤ N (scikit-learn's `n_clusters`).
    pub k: usize,
    /// Most assignment steps (≥ 1); 300 by default, as scikit-learn.
    pub max_iter: usize,
    /// scikit-learn's `tol`: stop when an update moved the centroids by Σ‖Δc‖² ≤ `tol` ×
    /// the mean per-dimension variance of X; one more assignment then makes the labels
    /// those of the returned centroids. Finite and ≥ 0; 1e-4 by default; 0 turns this
    /// test off (and with it the centroid copy and the shift sum of each iteration).
    pub tol: f64,
    /// Stop when at most `change_tol · N` points changed cluster in an assignment
    /// (0 ≤ change_tol ≤ 1). 0 by default: stop when no label changed.
    pub change_tol: f64,
    /// Starting centroids.
    pub init: Init,
    /// Seed of the initialisation (scikit-learn's `random_state`).
    pub seed: u64,
    /// Starts (≥ 1): start i seeds from `seed + i`, and the fit of least inertia is kept
    /// (the first of equals). Given centroids make one start.
    pub n_init: usize,
    /// Weight of each point (scikit-learn's `sample_weight`): N values, finite, ≥ 0,
    /// of positive total; converted to the element type once ([`sample_weights`]), and
    /// every backend computes with those values. `None`: every weight 1, and the
    /// unweighted computation (bit for bit).
    pub sample_weight: Option<Array1<f64>>,
}

impl KMeansConfig {
    /// k clusters with scikit-learn's defaults: k-means++ from seed 0, one start, at
    /// most 300 iterations, `tol` = 1e-4 on the centroid shift and `change_tol` = 0
    /// (stop when no label changes).
    pub fn new(k: usize) -> Self {
        KMeansConfig {
            k,
            max_iter: 300,
            tol: 1e-4,
            change_tol: 0.0,
            init: Init::KMeansPlusPlus,
            seed: 0,
            n_init: 1,
            sample_weight: None,
        }
    }
    setters! {
        /// Sets the weight of each point (scikit-learn's `sample_weight`).
        sample_weight: Array1<f64> => Some;
        /// Sets the number of starts.
        n_init: usize;
        /// Sets the seed (scikit-learn's `random_state`).
        seed: u64;
        /// Sets the initialisation.
        init: Init;
        /// Sets the iteration cap.
        max_iter: usize;
        /// Sets the tolerance on centroid movement (scikit-learn's `tol`; 0: off).
        tol: f64;
        /// Sets the tolerated fraction of points changing cluster (0: none).
        change_tol: f64;
    }
}

/// What [`Cluster::kmeans`](crate::Cluster::kmeans) returns (host arrays).
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
    /// Whether a tolerance was met (rather than `max_iter` reached).
    pub converged: bool,
    /// The inertia after each assignment step; never increases (Lloyd's monotonicity),
    /// up to rounding.
    pub inertia_history: Vec<f64>,
    /// The clusters no point is labelled with (or only points of weight 0), ascending:
    /// fewer distinct clusters than k, as when X has fewer than k distinct points. Such
    /// a centroid is where the last update left it, and may repeat another one.
    pub empty_clusters: Vec<usize>,
}

/// What [`Cluster::kmeans_dev`](crate::Cluster::kmeans_dev) returns: centroids and labels
/// stay resident.
#[derive(Debug)]
pub struct KMeansFit<T> {
    /// Final centroids, k × D.
    pub centroids: Matrix<T>,
    /// Label of each point: the index of its nearest centroid in `centroids`.
    pub labels: Indices,
    /// Σ‖xᵢ − c_labelᵢ‖² of the last assignment, accumulated in f64.
    pub inertia: f64,
    /// Assignment steps made.
    pub iterations: usize,
    /// Whether a tolerance was met (rather than `max_iter` reached).
    pub converged: bool,
    /// The inertia after each assignment step.
    pub inertia_history: Vec<f64>,
}

impl<T: Element> KMeansFit<T> {
    /// [`KMeansResult::empty_clusters`] of this fit, made with `config`: the labels are
    /// read back once for it (the fit itself never reads them).
    ///
    /// # Errors
    /// Device errors.
    pub fn empty_clusters<B: crate::Device + ?Sized>(
        &self,
        b: &B,
        config: &KMeansConfig,
    ) -> crate::Result<Vec<usize>> {
        let labels = b.download_indices(&self.labels)?;
        Ok(empty_clusters::<T>(config, labels.view()))
    }
}

/// The clusters of `0..config.k` that `labels` gives no point of positive weight (in
/// `T`, as the update weighs them) to, ascending.
pub fn empty_clusters<T: Element>(
    config: &KMeansConfig,
    labels: ndarray::ArrayView1<usize>,
) -> Vec<usize> {
    let mut held = vec![false; config.k];
    let weight = |i: usize| {
        config
            .sample_weight
            .as_ref()
            .is_none_or(|w| T::from_f64(w[i]) > T::zero())
    };
    for (i, &l) in labels.iter().enumerate() {
        if let Some(h) = held.get_mut(l) {
            *h |= weight(i);
        }
    }
    (0..config.k).filter(|&j| !held[j]).collect()
}

/// What one assignment step found ([`Cluster::assign_dev`](crate::Cluster::assign_dev)).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Assignment {
    /// Points whose label changed.
    pub changed: usize,
    /// Σ‖xᵢ − c_labelᵢ‖², accumulated in f64; not finite when the data (or the
    /// centroids) hold NaN or ±Inf.
    pub inertia: f64,
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

/// The update step's last part on the host: each centroid (row of the k×d `centroids`)
/// becomes the mean of its points from their f64 `sums` (k×d, of wᵢ·xᵢ) and `mass` (k:
/// the counts, or the sums of the weights), rounded once; a centroid of mass 0 (no
/// points, or only points of weight 0) stays where it was.
pub fn write_means<T: Element>(sums: &[f64], mass: &[f64], centroids: &mut [T]) {
    let d = if mass.is_empty() {
        0
    } else {
        centroids.len() / mass.len()
    };
    for (j, &m) in mass.iter().enumerate().filter(|(_, &m)| m > 0.0) {
        for col in 0..d {
            centroids[j * d + col] = T::from_f64(sums[j * d + col] / m);
        }
    }
}

/// The sample weights of `config` converted to `T` (once, as scikit-learn does); every
/// backend computes with these values. `None` when the config has none.
///
/// # Errors
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a weight that
/// overflows `T`, or when no weight (for `Init::Random`: fewer than k) stays positive
/// in `T`; the config's own checks are [`check::kmeans_config`](crate::check::kmeans_config)'s.
pub fn sample_weights<T: Element>(config: &KMeansConfig) -> crate::Result<Option<Array1<T>>> {
    let Some(w) = &config.sample_weight else {
        return Ok(None);
    };
    let wt = w.mapv(T::from_f64);
    if let Some((i, v)) = wt.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(crate::Error::invalid(
            "kmeans",
            format!(
                "sample weight {i} = {:e} overflows {} ({v})",
                w[i],
                T::DTYPE
            ),
        ));
    }
    let positive = wt.iter().filter(|&&v| v > T::zero()).count();
    crate::check::positive_weights(positive, config)?;
    Ok(Some(wt))
}

#[cfg(test)]
mod tests {
    use ndarray::array;

    use super::{empty_clusters, KMeansConfig};

    #[test]
    fn defaults_are_scikit_learns() {
        let c = KMeansConfig::new(3);
        assert_eq!((c.max_iter, c.tol, c.change_tol), (300, 1e-4, 0.0));
        assert_eq!((c.n_init, c.seed, c.init.name()), (1, 0, "k-means++"));
        let set = c.tol(0.5).change_tol(0.25);
        assert_eq!((set.tol, set.change_tol), (0.5, 0.25));
    }

    #[test]
    fn empty_clusters_are_those_without_a_point_of_positive_weight() {
        let labels = array![0usize, 0, 1, 1, 3];
        let config = KMeansConfig::new(5);
        assert_eq!(empty_clusters::<f64>(&config, labels.view()), vec![2, 4]);
        assert!(empty_clusters::<f64>(&KMeansConfig::new(2), array![1, 0].view()).is_empty());
        // Cluster 1 holds only points of weight 0; cluster 3 one of weight 0 and one
        // positive.
        let w = array![1.0, 1.0, 0.0, 0.0, 2.0, 0.0];
        let labels = array![0usize, 2, 1, 1, 3, 3];
        let weighted = KMeansConfig::new(4).sample_weight(w);
        assert_eq!(empty_clusters::<f64>(&weighted, labels.view()), vec![1]);
        // Positive in f64 but 0 in f32: no weight in the update of an f32 fit.
        let tiny = KMeansConfig::new(2).sample_weight(array![1.0, 1e-50]);
        let labels = array![0usize, 1];
        assert_eq!(empty_clusters::<f32>(&tiny, labels.view()), vec![1]);
        assert!(empty_clusters::<f64>(&tiny, labels.view()).is_empty());
    }
}
