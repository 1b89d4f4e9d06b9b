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

/// Parameters of [`Cluster::kmeans`](crate::Cluster::kmeans).
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansConfig {
    /// Number of clusters, 1 ≤ k ≤ N.
    pub k: usize,
    /// Most assignment steps (≥ 1). The seed's k-means used 500.
    pub max_iter: usize,
    /// Stop when at most `tol · N` points changed cluster in an assignment (0 ≤ tol ≤ 1).
    pub tol: f64,
    /// Also stop when an update moved the centroids by Σ‖Δc‖² ≤ `shift_tol` × the mean
    /// per-dimension variance of X (scikit-learn's `tol`); one more assignment then
    /// makes the labels those of the returned centroids. `None`: off (finite, ≥ 0).
    pub shift_tol: Option<f64>,
    /// Starting centroids.
    pub init: Init,
    /// Seed of the initialisation.
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
    /// k clusters, k-means++ from seed 0, 500 iterations, tolerance 0.001 (report 000's).
    pub fn new(k: usize) -> Self {
        KMeansConfig {
            k,
            max_iter: 500,
            tol: 1e-3,
            init: Init::KMeansPlusPlus,
            seed: 0,
            n_init: 1,
            shift_tol: None,
            sample_weight: None,
        }
    }
    setters! {
        /// Sets the weight of each point (scikit-learn's `sample_weight`).
        sample_weight: Array1<f64> => Some;
        /// Sets the tolerance on centroid movement (scikit-learn's `tol`).
        shift_tol: f64 => Some;
        /// Sets the number of starts.
        n_init: usize;
        /// Sets the seed.
        seed: u64;
        /// Sets the initialisation.
        init: Init;
        /// Sets the iteration cap.
        max_iter: usize;
        /// Sets the tolerance.
        tol: f64;
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
    /// Whether the tolerance was met (rather than `max_iter` reached).
    pub converged: bool,
    /// The inertia after each assignment step; never increases (Lloyd's monotonicity),
    /// up to rounding.
    pub inertia_history: Vec<f64>,
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
    /// Whether the tolerance was met (rather than `max_iter` reached).
    pub converged: bool,
    /// The inertia after each assignment step.
    pub inertia_history: Vec<f64>,
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
