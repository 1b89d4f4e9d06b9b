//! Factorizations and the solves they carry: Cholesky of symmetric positive-definite
//! matrices.

use ndarray::{Array2, ArrayView2};

use super::kernels::need;
use super::{Kernels, Memory};
use crate::array::factor;
use crate::{check, CholeskyFactor, Element, Matrix, Result};

/// Factorizations, each returning a factor type that carries its solves: today the
/// Cholesky factorization `A = L·Lᵀ` ([`CholeskyFactor`]) and solves `A·X = B` with it.
/// Written once for every backend: the methods check the input, then run the backend's
/// kernel.
///
/// Only the lower triangle of `A` (diagonal included) is read. The factor `L` is lower
/// triangular with its strict upper triangle zero.
///
/// **Bad input.** The host forms check the lower triangle for NaN and ±Inf first and
/// report [`Error::NonFinite`](crate::Error::NonFinite) with its index. The resident
/// forms do not look at the data on the host: a non-finite entry in row p surfaces as
/// [`Error::NotPositiveDefinite`](crate::Error::NotPositiveDefinite) at pivot p (or at
/// an earlier pivot that fails on its own), with a non-finite `value`.
///
/// **Nearly singular input.** The factorization is sure to complete while κ₂ of `A`
/// scaled to a unit diagonal is below about 1/(n²·u) (Demmel's condition: Higham,
/// *Accuracy and Stability*, §10.1), and in practice completes far beyond that, with
/// the backward error LAPACK's tests allow. Near κ₂ ≈ 1/ε, rounding (of the input to
/// `T`, and in the factorization) can make the matrix indefinite, and then the result
/// is that error, with the pivot where it happened; which pivot, or whether at all, may
/// differ between backends.
pub trait Factorize<T: Element>: Kernels<T> {
    /// Factors a resident matrix in place: it becomes the factor.
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare);
    /// [`Error::NotPositiveDefinite`](crate::Error::NotPositiveDefinite) with the first
    /// failing pivot (the matrix is then consumed: what was left of it is of no use);
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn cholesky_in_place_dev(&self, a: Matrix<T>) -> Result<CholeskyFactor<T>> {
        check::square_dim("cholesky", a.dim())?;
        need(self, self.factorize_kernels(), "cholesky")?.cholesky_unchecked(a)
    }

    /// Solves `A·X = B` in place (`b` becomes X, n×nrhs) given the factor of A.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `b` has other than n
    /// rows; [`Error::NonFinite`](crate::Error::NonFinite) for NaN or ±Inf in `b` (then
    /// `b` is unchanged); [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn cholesky_solve_in_place_dev(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()> {
        check::solve_dims(l.order(), b.dim())?;
        need(self, self.factorize_kernels(), "cholesky_solve")?.cholesky_solve_unchecked(l, b)
    }

    /// Factors a resident matrix into a new one (`a` is left as it was).
    ///
    /// # Errors
    /// As [`Factorize::cholesky_in_place_dev`]; out of memory.
    fn cholesky_dev(&self, a: &Matrix<T>) -> Result<CholeskyFactor<T>> {
        check::square_dim("cholesky", a.dim())?;
        need(self, self.factorize_kernels(), "cholesky")?.cholesky_unchecked(self.copy(a)?)
    }

    /// Solves `A·X = B` into a new resident matrix (`b` is left as it was).
    ///
    /// # Errors
    /// As [`Factorize::cholesky_solve_in_place_dev`]; out of memory.
    fn cholesky_solve_dev(&self, l: &CholeskyFactor<T>, b: &Matrix<T>) -> Result<Matrix<T>> {
        check::solve_dims(l.order(), b.dim())?;
        let mut x = self.copy(b)?;
        need(self, self.factorize_kernels(), "cholesky_solve")?
            .cholesky_solve_unchecked(l, &mut x)?;
        Ok(x)
    }

    /// A factor made from a host array's lower triangle (its strict upper triangle is
    /// not read), for solves with a factor computed elsewhere.
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare);
    /// [`Error::NonFinite`](crate::Error::NonFinite) for NaN/Inf in the lower triangle or
    /// a zero on the diagonal; out of memory.
    fn factor_from_lower(&self, l: ArrayView2<T>) -> Result<CholeskyFactor<T>> {
        let n = check::cholesky_factor(&l)?;
        let lower =
            Array2::from_shape_fn((n, n), |(i, j)| if j <= i { l[[i, j]] } else { T::zero() });
        Ok(factor(self.upload(lower.view())?))
    }

    /// The lower factor `L` of a host array, with `A = L·Lᵀ`.
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare);
    /// [`Error::NonFinite`](crate::Error::NonFinite) for NaN/Inf in the lower triangle;
    /// [`Error::NotPositiveDefinite`](crate::Error::NotPositiveDefinite) with the first
    /// failing pivot (never NaN in an output). A 0×0 matrix has a 0×0 factor.
    fn cholesky(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        check::cholesky(&a)?;
        let f = need(self, self.factorize_kernels(), "cholesky")?
            .cholesky_unchecked(self.upload(a)?)?;
        self.download(f.l())
    }

    /// Solves `A·X = B` given the factor `L` of A as a host array (only its lower
    /// triangle is read).
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare) for `L`,
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `B` has a different
    /// number of rows, [`Error::NonFinite`](crate::Error::NonFinite) for NaN/Inf in `B`
    /// or a zero or non-finite diagonal entry of `L`.
    fn cholesky_solve(&self, l: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        check::cholesky_solve(&l, &b)?;
        let f = self.factor_from_lower(l)?;
        let mut x = self.upload(b)?;
        need(self, self.factorize_kernels(), "cholesky_solve")?
            .cholesky_solve_unchecked(&f, &mut x)?;
        self.download(&x)
    }
}

impl<T: Element, B: Kernels<T> + ?Sized> Factorize<T> for B {}

/// The kernels of [`Factorize`]; see [`Kernels`].
pub trait FactorizeKernels<T: Element>: Memory<T> {
    /// Cholesky in place: `a` becomes L. Checked: `a` is square.
    ///
    /// # Errors
    /// [`Error::NotPositiveDefinite`](crate::Error::NotPositiveDefinite) with the first
    /// failing pivot; [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn cholesky_unchecked(&self, a: Matrix<T>) -> Result<CholeskyFactor<T>>;

    /// Solves `A·X = B` in place with A's factor. Checked: `b` has n rows.
    ///
    /// # Errors
    /// [`Error::NonFinite`](crate::Error::NonFinite) for NaN or ±Inf in `b` (then `b` is
    /// unchanged); [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn cholesky_solve_unchecked(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()>;
}
