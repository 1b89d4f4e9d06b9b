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

use crate::{check, Element, Error, Factorize, MatMul, Result};

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

    /// Fits the n_samples×n_features `x` on backend `b`.
    ///
    /// # Errors
    /// [`Error::Empty`] for no features; [`Error::InvalidArgument`] for fewer than two
    /// samples (the variance divides by n_samples − 1) or `n_components` outside 1 to
    /// min(n_samples, n_features); [`Error::NonFinite`]; the backend's errors
    /// (`Unsupported` where it has no `eigh` or `svd`).
    pub fn fit<T: Element, B: Factorize<T> + MatMul<T> + ?Sized>(
        &self,
        b: &B,
        x: ArrayView2<T>,
    ) -> Result<PcaFit<T>> {
        let (n, d) = x.dim();
        check::nonempty(OP, &x)?;
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
        check::finite(OP, "X", &x)?;
        let mean = x
            .mapv(|v| v.as_f64())
            .mean_axis(Axis(0))
            .unwrap_or_default();
        let xc = centred(x, &mean);
        let solver = Pca::solver(n, d);
        // Every squared singular value (descending), and the first k axes.
        let (mut components, squares): (Array2<T>, Vec<f64>) = match solver {
            PcaSolver::CovarianceEigh => {
                let (w, v) = b.eigh(b.gram(xc.t())?.view())?;
                let comps = Array2::from_shape_fn((k, d), |(i, j)| v[[j, d - 1 - i]]);
                (comps, w.iter().rev().map(|w| w.as_f64().max(0.0)).collect())
            }
            PcaSolver::Svd => {
                let (_, s, vt) = b.svd(xc.view(), false)?;
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
            mean: mean.mapv(T::from_f64),
            n_samples: n,
            solver,
        })
    }
}

impl<T: Element> PcaFit<T> {
    /// `(X − mean)·componentsᵀ`: the samples in the components' coordinates, through the
    /// backend's product (the centring in f64, rounded once to `T`).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `x` has other than n_features columns;
    /// [`Error::NonFinite`]; the backend's errors.
    pub fn transform<B: MatMul<T> + ?Sized>(&self, b: &B, x: ArrayView2<T>) -> Result<Array2<T>> {
        let d = self.mean.len();
        if x.ncols() != d {
            return Err(Error::shape(
                OP,
                format!("X has {} features, the fit {d}", x.ncols()),
            ));
        }
        check::finite(OP, "X", &x)?;
        let xc = centred(x, &self.mean.mapv(|v| v.as_f64()));
        b.matmul(xc.view(), self.components.t())
    }
}

/// `x − mean` row by row, in f64, rounded once to `T`.
fn centred<T: Element>(x: ArrayView2<T>, mean: &Array1<f64>) -> Array2<T> {
    Array2::from_shape_fn(x.dim(), |(i, j)| T::from_f64(x[[i, j]].as_f64() - mean[j]))
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
