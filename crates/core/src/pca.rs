//! Principal component analysis, written once for every backend on top of its products
//! and spectra, with scikit-learn's attributes and sign convention.
//!
//! **Path.** With X (n_samples×n_features) centred to Xc, the fit takes, as
//! scikit-learn's `svd_solver="auto"` does for dense input:
//!
//! - the covariance path ([`PcaSolver::CovarianceEigh`]) when n_features ≤ 1000 and
//!   n_samples ≥ 10·n_features: `C = Xcᵀ·Xc` through the backend's `gram`, then
//!   `eigh(C)`; the eigenvalues of C are the squared singular values of Xc. This is
//!   cheap for tall data; it squares the condition number, so a component whose
//!   variance is below about ε·σ₁² is known to ε·σ₁² absolutely, not relatively.
//! - the SVD of Xc ([`PcaSolver::Svd`]) otherwise.
//!
//! **Signs.** Each component (a row of Vᵀ) is negated where needed so that its entry of
//! largest absolute value (the first such) is positive: scikit-learn's
//! `svd_flip(u, v, u_based_decision=False)`.

use ndarray::{s, Array1, Array2, ArrayView2, Axis};

use crate::{check, Element, Error, Gemm, Matrix, Ops, ReduceOp, Result, Trans};

/// The operation's name in errors.
const OP: &str = "pca";

/// How a fit computed the components.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PcaSolver {
    /// `eigh` of the covariance `Xcᵀ·Xc` (scikit-learn's `covariance_eigh`).
    CovarianceEigh,
    /// The reduced SVD of the centred data (scikit-learn's `full`).
    Svd,
}

/// The configuration of a PCA (scikit-learn's `PCA(n_components, whiten=False)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pca {
    /// The components kept, 1 to min(n_samples, n_features); `None`: all of them.
    pub n_components: Option<usize>,
}

/// A fitted PCA: scikit-learn's attributes (`components_`, `explained_variance_`, …)
/// without the trailing underscore.
#[derive(Debug, Clone, PartialEq)]
pub struct PcaFit<T> {
    /// The principal axes, k×n_features, orthonormal rows, by decreasing variance.
    pub components: Array2<T>,
    /// The variance along each axis: the squared singular value over n_samples − 1.
    pub explained_variance: Array1<T>,
    /// Each explained variance over the total variance (that of all min(n_samples,
    /// n_features) components, as scikit-learn); they sum to at most 1 up to the
    /// rounding of the divisions. All 0 when the total variance is 0.
    pub explained_variance_ratio: Array1<T>,
    /// The singular values of the centred data, descending.
    pub singular_values: Array1<T>,
    /// The mean of each feature.
    pub mean: Array1<T>,
    /// The samples fitted.
    pub n_samples: usize,
    /// The path taken (see the module's documentation).
    pub solver: PcaSolver,
}

impl Pca {
    /// All components.
    pub fn new() -> Pca {
        Pca::default()
    }

    /// The first `k` components.
    pub fn with_components(k: usize) -> Pca {
        Pca {
            n_components: Some(k),
        }
    }

    /// The path for data of this shape: the covariance when n_features ≤ 1000 and
    /// n_samples ≥ 10·n_features, else the SVD of the centred data.
    pub fn solver(n_samples: usize, n_features: usize) -> PcaSolver {
        match n_features <= 1000 && n_samples >= 10 * n_features {
            true => PcaSolver::CovarianceEigh,
            false => PcaSolver::Svd,
        }
    }

    /// Fits the n_samples×n_features `x` on backend `b`: uploaded, then
    /// [`Pca::fit_dev`].
    ///
    /// # Errors
    /// [`Error::Empty`] for no features; [`Error::InvalidArgument`] for fewer than two
    /// samples (the variance divides by n_samples − 1) or `n_components` outside 1 to
    /// min(n_samples, n_features); [`Error::NonFinite`]; the backend's errors
    /// (`Unsupported` where it has no `eigh` or `svd`).
    pub fn fit<T: Element, B: Ops<T> + ?Sized>(
        &self,
        b: &B,
        x: ArrayView2<T>,
    ) -> Result<PcaFit<T>> {
        self.k(x.dim())?;
        self.fit_dev(b, &b.upload(x)?)
    }

    /// The components kept of data of shape `(n, d)`, after its checks.
    fn k(&self, (n, d): (usize, usize)) -> Result<usize> {
        check::nonempty_dim(OP, (n, d))?;
        if n < 2 {
            return Err(Error::invalid(OP, "PCA needs at least two samples"));
        }
        let k = self.n_components.unwrap_or(n.min(d));
        if k == 0 || k > n.min(d) {
            return Err(Error::invalid(
                OP,
                format!(
                    "n_components = {k} is outside 1 to min(n_samples, n_features) = {}",
                    n.min(d)
                ),
            ));
        }
        Ok(k)
    }

    /// Fits the resident n_samples×n_features `x` where it lives: the finiteness check
    /// (one sum, read back), the column means (a column sum, read back), the centring
    /// (a rank-one product update of a copy), then the covariance path's gram and `eigh`
    /// or the SVD of the centred data, as [`Pca::solver`] picks. Only the small results
    /// (d×d at most) come back to the host.
    ///
    /// # Errors
    /// As [`Pca::fit`].
    pub fn fit_dev<T: Element, B: Ops<T> + ?Sized>(
        &self,
        b: &B,
        x: &Matrix<T>,
    ) -> Result<PcaFit<T>> {
        let (n, d) = x.dim();
        let k = self.k((n, d))?;
        if !b.reduce_dev(ReduceOp::Sum, x)?.as_f64().is_finite() {
            // Names the entry; a sum of finite values that overflowed is no error.
            check::finite(OP, "X", &b.download(x)?.view())?;
        }
        let sums = b.download(&b.reduce_axis_dev(ReduceOp::Sum, x, Axis(0))?)?;
        let mean: Array1<T> = sums
            .iter()
            .map(|s| T::from_f64(s.as_f64() / n as f64))
            .collect();
        let xc = centred(b, x, &mean)?;
        let solver = Pca::solver(n, d);
        // Every squared singular value (descending), and the first k axes.
        let (mut components, squares): (Array2<T>, Vec<f64>) = match solver {
            PcaSolver::CovarianceEigh => {
                let (w, v) = b.eigh_dev(&b.gram_dev(&b.transpose_dev(&xc)?)?)?;
                let (w, v) = (b.download(&w)?, b.download(&v)?);
                let comps = Array2::from_shape_fn((k, d), |(i, j)| v[[j, d - 1 - i]]);
                (
                    comps,
                    w.column(0)
                        .iter()
                        .rev()
                        .map(|w| w.as_f64().max(0.0))
                        .collect(),
                )
            }
            PcaSolver::Svd => {
                let (s, vt) = {
                    let (_, s, vt) = b.svd_dev(&xc)?;
                    (b.download(&s)?, b.download(&vt)?)
                };
                let sq = s.iter().map(|v| v.as_f64().powi(2)).collect();
                (vt.slice(s![..k, ..]).to_owned(), sq)
            }
        };
        // As scikit-learn: the total variance is that of every component, so the
        // ratios of all of them sum to one up to the rounding of the divisions.
        let total = squares.iter().sum::<f64>();
        let squares = &squares[..k];
        flip(&mut components);
        let var: Vec<f64> = squares.iter().map(|s| s / (n - 1) as f64).collect();
        let ratio = |s: &f64| if total > 0.0 { s / total } else { 0.0 };
        Ok(PcaFit {
            components,
            explained_variance: var.iter().map(|&v| T::from_f64(v)).collect(),
            explained_variance_ratio: squares.iter().map(|s| T::from_f64(ratio(s))).collect(),
            singular_values: squares.iter().map(|s| T::from_f64(s.sqrt())).collect(),
            mean,
            n_samples: n,
            solver,
        })
    }
}

impl<T: Element> PcaFit<T> {
    /// `(X − mean)·componentsᵀ`: the samples in the components' coordinates, on the
    /// backend (uploaded, [`PcaFit::transform_dev`], downloaded).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `x` has other than n_features columns;
    /// [`Error::NonFinite`]; the backend's errors.
    pub fn transform<B: Ops<T> + ?Sized>(&self, b: &B, x: ArrayView2<T>) -> Result<Array2<T>> {
        self.features(x.dim())?;
        b.download(&self.transform_dev(b, &b.upload(x)?)?)
    }

    /// Refuses data of other than n_features columns.
    fn features(&self, (_, d): (usize, usize)) -> Result<()> {
        match d == self.mean.len() {
            true => Ok(()),
            false => Err(Error::shape(
                OP,
                format!("X has {d} features, the fit {}", self.mean.len()),
            )),
        }
    }

    /// [`PcaFit::transform`] of a resident `x`, resident: the centring as in
    /// [`Pca::fit_dev`], then one product with the components.
    ///
    /// # Errors
    /// As [`PcaFit::transform`].
    pub fn transform_dev<B: Ops<T> + ?Sized>(&self, b: &B, x: &Matrix<T>) -> Result<Matrix<T>> {
        self.features(x.dim())?;
        if !b.reduce_dev(ReduceOp::Sum, x)?.as_f64().is_finite() {
            check::finite(OP, "X", &b.download(x)?.view())?;
        }
        let xc = centred(b, x, &self.mean)?;
        let mut out = b.zeros(x.rows(), self.components.nrows())?;
        let g = Gemm::new().tb(Trans::Yes);
        b.gemm_dev(g, &xc, &b.upload(self.components.view())?, &mut out)?;
        Ok(out)
    }
}

/// `x − 1·meanᵀ` on the backend: a copy of `x` updated by a product of rank one
/// (α = −1, β = 1), in `T` as scikit-learn centres.
fn centred<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    x: &Matrix<T>,
    mean: &Array1<T>,
) -> Result<Matrix<T>> {
    let mut xc = b.copy(x)?;
    let ones = b.upload(Array2::from_elem((x.rows(), 1), T::one()).view())?;
    let row = b.upload(mean.view().insert_axis(Axis(0)))?;
    let g = Gemm::new().alpha(-T::one()).beta(T::one());
    b.gemm_dev(g, &ones, &row, &mut xc)?;
    Ok(xc)
}

/// scikit-learn's `svd_flip(u, v, u_based_decision=False)` on the rows of Vᵀ: each row's
/// first entry of largest absolute value made positive.
pub fn flip<T: Element>(vt: &mut Array2<T>) {
    for mut row in vt.rows_mut() {
        let big = row
            .iter()
            .fold((T::zero(), T::zero()), |(m, at), &v| match v.abs() > m {
                true => (v.abs(), v),
                false => (m, at),
            })
            .1;
        if big < T::zero() {
            row.mapv_inplace(|v| -v);
        }
    }
}

#[cfg(test)]
mod tests {
    use ndarray::array;

    use super::*;

    #[test]
    fn flip_makes_each_rows_largest_entry_positive() {
        let mut vt = array![[0.6, -0.8], [-0.8, -0.6], [0.5, -0.5]];
        flip(&mut vt);
        // Row 2 ties: the first largest entry (0.5) decides, as NumPy's argmax.
        assert_eq!(vt, array![[-0.6, 0.8], [0.8, 0.6], [0.5, -0.5]]);
    }

    #[test]
    fn the_covariance_path_is_for_tall_data_of_at_most_1000_features() {
        assert_eq!(Pca::solver(100, 10), PcaSolver::CovarianceEigh);
        assert_eq!(Pca::solver(99, 10), PcaSolver::Svd);
        assert_eq!(Pca::solver(20_000, 1001), PcaSolver::Svd);
    }
}
