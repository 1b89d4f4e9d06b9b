//! k-means clustering (Lloyd's algorithm), written once over two resident steps.

use ndarray::{Array1, ArrayView2};

use super::kernels::need;
use super::{Kernels, Memory, Points, Reduce};
use crate::kmeans::{
    empty_clusters, sample_weights, Assignment, Init, KMeansConfig, KMeansFit, KMeansResult,
};
use crate::{check, Element, Error, Indices, Matrix, ReduceOp, Result};

/// k-means clustering (Lloyd's algorithm).
///
/// The iteration, written once here for every backend: (1) assign each point to its
/// nearest centroid (ties → the lowest index) and count the points whose label changed
/// (all of them in the first iteration); (2) stop if that count is at most
/// `change_tol · N` (by default: none changed) or `max_iter` assignments have been made;
/// (3) else move each centroid to the mean of its points (a centroid with no points stays
/// where it is); (4) with `tol` > 0, stop after one more assignment if that update moved
/// the centroids by Σ‖Δc‖² ≤ `tol` × the mean per-dimension variance of X
/// (scikit-learn's `tol`); else go to (1). So the returned labels are always those of
/// the nearest returned centroid. With sample weights
/// (`KMeansConfig::sample_weight`, uploaded once per fit), the means and the inertia are
/// weighted, and so are the seeding's draws ([`init_centroids`](crate::init_centroids)).
/// Backends implement the two steps ([`ClusterKernels::assign_unchecked`],
/// [`ClusterKernels::update_unchecked`]), which this trait calls after checking the shapes.
///
/// NaN or ±Inf in the points (or the centroids) makes the inertia of an assignment
/// non-finite; [`Cluster::kmeans_dev`] and [`Cluster::predict_dev`] check it after every
/// assignment and then name the first offending entry, so they cost no extra pass.
///
/// The methods a user calls first come first: [`Cluster::kmeans`] and
/// [`Cluster::predict`] (host arrays), then their resident forms [`Cluster::kmeans_dev`]
/// and [`Cluster::predict_dev`]. The methods after them are building blocks, the single
/// steps of the iteration (`assign_dev`, `update_dev`, `shift_dev`, `seed_dev`, ...),
/// there to time or drive an iteration by hand.
pub trait Cluster<T: Element>: Kernels<T> + Reduce<T> {
    /// Runs k-means on the rows of a host `x` (N points × D dimensions): one upload,
    /// [`Cluster::kmeans_dev`], one download of centroids and labels. The result lists
    /// the clusters left empty ([`KMeansResult::empty_clusters`], counted from the
    /// labels on the host).
    ///
    /// # Errors
    /// As [`Cluster::kmeans_dev`].
    fn kmeans(&self, x: ArrayView2<T>, config: &KMeansConfig) -> Result<KMeansResult<T>> {
        check::kmeans_config(x.nrows(), x.ncols(), config)?;
        let fit = self.kmeans_dev(&self.upload(x)?, config)?;
        let labels = self.download_indices(&fit.labels)?;
        Ok(KMeansResult {
            centroids: self.download(&fit.centroids)?,
            empty_clusters: empty_clusters::<T>(config, labels.view()),
            labels,
            inertia: fit.inertia,
            iterations: fit.iterations,
            converged: fit.converged,
            inertia_history: fit.inertia_history,
        })
    }

    /// Labels each row of a host `x` with its nearest centroid (ties → the lowest index).
    ///
    /// # Errors
    /// Shape mismatch between `x` and `centroids`, no centroids, NaN/Inf in either.
    fn predict(&self, x: ArrayView2<T>, centroids: ArrayView2<T>) -> Result<Array1<usize>> {
        check::predict(&x, &centroids)?;
        let labels = self.predict_dev(&self.upload(x)?, &self.upload(centroids)?)?;
        self.download_indices(&labels)
    }

    /// Runs k-means on the rows of a resident `x` (N points × D dimensions); centroids
    /// and labels stay resident. With `n_init` > 1, start i seeds from `seed + i` and
    /// the fit of least final inertia is kept. The labels are not read back:
    /// [`KMeansFit::empty_clusters`] does that for the list of empty clusters.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for k = 0, k > N,
    /// `max_iter` = 0, `n_init` = 0, `tol` negative or not finite, `change_tol` outside
    /// [0, 1], k-means‖ parameters out of range or given centroids of the wrong shape;
    /// [`Error::NonFinite`](crate::Error::NonFinite) for NaN/Inf in `x`; device errors.
    fn kmeans_dev(&self, x: &Matrix<T>, config: &KMeansConfig) -> Result<KMeansFit<T>> {
        let (n, d) = x.dim();
        check::kmeans_config(n, d, config)?;
        let starts = match config.init {
            Init::Given(_) => 1,
            _ => config.n_init,
        };
        // The weights go to the device once per fit.
        let w = upload_weights(self, config)?;
        let mut best: Option<KMeansFit<T>> = None;
        for start in 0..starts {
            let seeded = config.clone().seed(config.seed.wrapping_add(start as u64));
            let centroids = self.seed_weighted_dev(x, w.as_ref(), &seeded)?;
            let fit = lloyd(self, x, w.as_ref(), centroids, config)?;
            if best.as_ref().is_none_or(|b| fit.inertia < b.inertia) {
                best = Some(fit);
            }
        }
        Ok(best.expect("n_init ≥ 1"))
    }

    /// Labels each row of a resident `x` with its nearest centroid (ties → the lowest
    /// index); the labels stay resident.
    ///
    /// # Errors
    /// Shape mismatch between `x` and `centroids`, no centroids, NaN/Inf in either.
    fn predict_dev(&self, x: &Matrix<T>, centroids: &Matrix<T>) -> Result<Indices> {
        check::predict_dims(x.dim(), centroids.dim())?;
        let mut labels = self.unlabeled(x.rows()).map_err(|e| e.for_op("predict"))?;
        let a = self.assign_dev(x, centroids, &mut labels)?;
        finite_inertia(self, "predict", x, centroids, a)?;
        Ok(labels)
    }

    // The building blocks: the single steps of the iteration above, resident.

    /// A building block, as are the methods after it. One assignment step on resident
    /// data: `labels[i]` becomes the index of the centroid nearest to row i of `x` (ties
    /// → the lowest index). On entry `labels` holds the previous labels ([`Device::unlabeled`](crate::Device::unlabeled) before
    /// the first step), against which the changes are counted.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when the dimensions differ
    /// or `labels` does not have N entries; `InvalidArgument` for no centroids;
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn assign_dev(
        &self,
        x: &Matrix<T>,
        centroids: &Matrix<T>,
        labels: &mut Indices,
    ) -> Result<Assignment> {
        self.assign_weighted_dev(x, centroids, None, labels)
    }

    /// [`Cluster::assign_dev`] with sample weights `w` (N×1, resident, as
    /// [`sample_weights`](crate::kmeans::sample_weights) converts them): the inertia is
    /// Σ wᵢ‖xᵢ − c_labelᵢ‖² (each distance times its weight in f64). `None`: every
    /// weight 1, by the unweighted code.
    ///
    /// # Errors
    /// As [`Cluster::assign_dev`]; `ShapeMismatch` for weights that are not N×1.
    fn assign_weighted_dev(
        &self,
        x: &Matrix<T>,
        centroids: &Matrix<T>,
        w: Option<&Matrix<T>>,
        labels: &mut Indices,
    ) -> Result<Assignment> {
        check::kmeans_step(x.dim(), centroids.dim(), labels.len(), w.map(Matrix::dim))?;
        need(self, self.cluster_kernels(), "kmeans")?.assign_unchecked(
            Points { x, weights: w },
            centroids,
            labels,
        )
    }

    /// One update step on resident data: each centroid moves to the mean of the points
    /// `labels` gives it (labels written by [`Cluster::assign_dev`]); a centroid with no
    /// points stays where it is.
    ///
    /// # Errors
    /// As [`Cluster::assign_dev`].
    fn update_dev(&self, x: &Matrix<T>, labels: &Indices, centroids: &mut Matrix<T>) -> Result<()> {
        self.update_weighted_dev(x, labels, None, centroids)
    }

    /// [`Cluster::update_dev`] with sample weights `w` (N×1, resident): each centroid
    /// moves to Σ wᵢxᵢ / Σ wᵢ over its points; one whose Σ wᵢ is 0 (no points, or only
    /// points of weight 0) stays where it is. `None`: the unweighted code.
    ///
    /// # Errors
    /// As [`Cluster::assign_weighted_dev`].
    fn update_weighted_dev(
        &self,
        x: &Matrix<T>,
        labels: &Indices,
        w: Option<&Matrix<T>>,
        centroids: &mut Matrix<T>,
    ) -> Result<()> {
        check::kmeans_step(x.dim(), centroids.dim(), labels.len(), w.map(Matrix::dim))?;
        need(self, self.cluster_kernels(), "kmeans")?.update_unchecked(
            Points { x, weights: w },
            labels,
            centroids,
        )
    }

    /// Σ‖a_j − b_j‖² over the rows of two K×D resident matrices, in f64: how far an
    /// update moved the centroids.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch); device errors.
    fn shift_dev(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<f64> {
        check::same_shape("kmeans", a.dim(), b.dim())?;
        need(self, self.cluster_kernels(), "kmeans")?.shift_unchecked(a, b)
    }

    /// The starting centroids of `config` for a resident `x` (N×D), resident: the given
    /// ones, k distinct random points, k-means++ or k-means‖, as
    /// [`init_centroids`](crate::init_centroids) defines them to the bit (with
    /// `config.sample_weight`, uploaded here). Calls [`Cluster::seed_weighted_dev`].
    ///
    /// # Errors
    /// As [`init_centroids`](crate::init_centroids); device errors.
    fn seed_dev(&self, x: &Matrix<T>, config: &KMeansConfig) -> Result<Matrix<T>> {
        check::kmeans_config(x.rows(), x.cols(), config)?;
        let w = upload_weights(self, config)?;
        self.seed_weighted_dev(x, w.as_ref(), config)
    }

    /// [`Cluster::seed_dev`] with the sample weights already resident: `w` (N×1) holds
    /// `config.sample_weight` converted to `T` ([`sample_weights`](crate::kmeans::sample_weights)),
    /// and the draws use its values.
    ///
    /// # Errors
    /// As [`Cluster::seed_dev`].
    fn seed_weighted_dev(
        &self,
        x: &Matrix<T>,
        w: Option<&Matrix<T>>,
        config: &KMeansConfig,
    ) -> Result<Matrix<T>> {
        check::kmeans_config(x.rows(), x.cols(), config)?;
        match &config.init {
            Init::Given(c) => self.upload(c.mapv(T::from_f64).view()),
            _ => need(self, self.cluster_kernels(), "kmeans")?
                .seed_unchecked(Points { x, weights: w }, config),
        }
    }
}

impl<T: Element, B: Kernels<T> + ?Sized> Cluster<T> for B {}

/// The sample weights of `config` in `T`, resident (N×1), or `None`.
fn upload_weights<T: Element, B: Memory<T> + ?Sized>(
    b: &B,
    config: &KMeansConfig,
) -> Result<Option<Matrix<T>>> {
    sample_weights::<T>(config)?
        .map(|w| b.upload(w.view().insert_axis(ndarray::Axis(1))))
        .transpose()
}

/// Lloyd's iteration from `centroids`, as the trait's documentation states it. The
/// scale of the shift test is computed at the first update, so a fit that stops before
/// one (or has `tol` = 0) does not pay for it.
fn lloyd<T: Element, B: Cluster<T> + ?Sized>(
    b: &B,
    x: &Matrix<T>,
    w: Option<&Matrix<T>>,
    mut centroids: Matrix<T>,
    config: &KMeansConfig,
) -> Result<KMeansFit<T>> {
    let n = x.rows();
    let mut shift_bound = None;
    let mut labels = b.unlabeled(n)?;
    let mut history = Vec::new();
    let assign = |c: &Matrix<T>, labels: &mut Indices, history: &mut Vec<f64>| {
        let a = b.assign_weighted_dev(x, c, w, labels)?;
        finite_inertia(b, "kmeans", x, c, a)?;
        history.push(a.inertia);
        Ok::<_, Error>(a)
    };
    let converged = loop {
        let a = assign(&centroids, &mut labels, &mut history)?;
        if a.changed as f64 <= config.change_tol * n as f64 {
            break true;
        }
        if history.len() >= config.max_iter {
            break false;
        }
        let old = match config.tol > 0.0 {
            true => Some(b.copy(&centroids)?),
            false => None,
        };
        b.update_weighted_dev(x, &labels, w, &mut centroids)?;
        if let Some(old) = old {
            let bound = match shift_bound {
                Some(bound) => bound,
                None => *shift_bound.insert(config.tol * mean_variance(b, x)?),
            };
            if b.shift_dev(&old, &centroids)? <= bound {
                assign(&centroids, &mut labels, &mut history)?;
                break true;
            }
        }
    };
    Ok(KMeansFit {
        centroids,
        labels,
        inertia: *history.last().expect("at least one assignment"),
        iterations: history.len(),
        converged,
        inertia_history: history,
    })
}

/// The mean over the dimensions of the variance of X's columns, from column sums and
/// sums of squares (each rounded in T; clamped at 0), the scale of `tol`.
fn mean_variance<T: Element, B: Cluster<T> + ?Sized>(b: &B, x: &Matrix<T>) -> Result<f64> {
    let (n, d) = x.dim();
    if n == 0 || d == 0 {
        return Ok(0.0);
    }
    let axis = ndarray::Axis(0);
    let sums = b.download(&b.reduce_axis_dev(ReduceOp::Sum, x, axis)?)?;
    let squares = b.download(&b.reduce_axis_dev(ReduceOp::SumSq, x, axis)?)?;
    let total: f64 = sums
        .iter()
        .zip(squares.iter())
        .map(|(s, q)| {
            let mean = s.as_f64() / n as f64;
            (q.as_f64() / n as f64 - mean * mean).max(0.0)
        })
        .sum();
    Ok(total / d as f64)
}

/// A non-finite inertia means NaN or ±Inf in the points or the centroids, or squared
/// distances beyond the element type: find which, on the host (this path only).
fn finite_inertia<T: Element, B: Memory<T> + ?Sized>(
    b: &B,
    op: &'static str,
    x: &Matrix<T>,
    centroids: &Matrix<T>,
    a: Assignment,
) -> Result<()> {
    if a.inertia.is_finite() {
        return Ok(());
    }
    check::finite(op, "X", &b.download(x)?.view())?;
    check::finite(op, "centroids", &b.download(centroids)?.view())?;
    Err(Error::invalid(
        op,
        format!(
            "the squared distances overflow {} (inertia {}): scale the data down",
            T::DTYPE,
            a.inertia
        ),
    ))
}

/// The kernels of [`Cluster`]; see [`Kernels`].
pub trait ClusterKernels<T: Element>: Memory<T> {
    /// k-means' assignment step: `labels[i]` becomes the nearest centroid of point i
    /// (ties → the lowest index), the changes counted against the labels on entry.
    /// Checked: at least one centroid, equal dimensions, N labels, N×1 weights.
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn assign_unchecked(&self, p: Points<T>, c: &Matrix<T>, l: &mut Indices) -> Result<Assignment>;

    /// k-means' update step: each centroid moves to the (weighted) mean of its points;
    /// one with no weight stays. Checked as `assign_unchecked`.
    ///
    /// # Errors
    /// As `assign_unchecked`.
    fn update_unchecked(&self, p: Points<T>, labels: &Indices, c: &mut Matrix<T>) -> Result<()>;

    /// `Σ‖a_j − b_j‖²` in f64 over two matrices of one shape (checked). This default
    /// reads both back and sums on the host; backends with a device sum there.
    ///
    /// # Errors
    /// Device errors.
    fn shift_unchecked(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<f64> {
        let (a, b) = (self.download(a)?, self.download(b)?);
        Ok(a.iter()
            .zip(b.iter())
            .map(|(x, y)| (x.as_f64() - y.as_f64()).powi(2))
            .sum())
    }

    /// The starting centroids of `config` drawn from `p` (random points, k-means++ or
    /// k-means‖, as [`init_centroids`](crate::init_centroids) defines them to the bit).
    /// Checked: `config` is valid for `p.x`, and does not give the centroids. This
    /// default seeds on the host (the data come back once); backends with a device seed
    /// there.
    ///
    /// # Errors
    /// As [`init_centroids`](crate::init_centroids); device errors.
    fn seed_unchecked(&self, p: Points<T>, config: &KMeansConfig) -> Result<Matrix<T>> {
        let w = p.weights.map(|w| self.download(w)).transpose()?;
        let w = w.as_ref().map(|w| w.column(0));
        let c = crate::init::init_centroids_weighted(self.download(p.x)?.view(), w, config)?;
        self.upload(c.view())
    }
}
