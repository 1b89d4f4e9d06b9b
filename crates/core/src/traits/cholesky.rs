//! Cholesky factorization of symmetric positive-definite matrices, and solves with it.

use ndarray::{Array2, ArrayView2};

use super::{Memory, Reduce};
use crate::array::factor;
use crate::{check, CholeskyFactor, Element, Matrix, Result};

/// Cholesky factorization `A = L·Lᵀ` and solves `A·X = B` with the factor.
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
pub trait Cholesky<T: Element>: Memory<T> + Reduce<T> {
    /// Factors a resident matrix in place: it becomes the factor.
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare);
    /// [`Error::NotPositiveDefinite`](crate::Error::NotPositiveDefinite) with the first
    /// failing pivot (the matrix is then consumed: what was left of it is of no use);
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn cholesky_in_place_dev(&self, a: Matrix<T>) -> Result<CholeskyFactor<T>>;

    /// Solves `A·X = B` in place (`b` becomes X, n×nrhs) given the factor of A.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `b` has other than n
    /// rows; [`Error::NonFinite`](crate::Error::NonFinite) for NaN or ±Inf in `b` (then
    /// `b` is unchanged); [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn cholesky_solve_in_place_dev(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()>;

    /// Factors a resident matrix into a new one (`a` is left as it was).
    ///
    /// # Errors
    /// As [`Cholesky::cholesky_in_place_dev`]; out of memory.
    fn cholesky_dev(&self, a: &Matrix<T>) -> Result<CholeskyFactor<T>> {
        check::square_dim("cholesky", a.dim())?;
        self.cholesky_in_place_dev(self.copy(a)?)
    }

    /// Solves `A·X = B` into a new resident matrix (`b` is left as it was).
    ///
    /// # Errors
    /// As [`Cholesky::cholesky_solve_in_place_dev`]; out of memory.
    fn cholesky_solve_dev(&self, l: &CholeskyFactor<T>, b: &Matrix<T>) -> Result<Matrix<T>> {
        check::solve_dims(l.order(), b.dim())?;
        let mut x = self.copy(b)?;
        self.cholesky_solve_in_place_dev(l, &mut x)?;
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
        let f = self.cholesky_in_place_dev(self.upload(a)?)?;
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
        self.cholesky_solve_in_place_dev(&f, &mut x)?;
        self.download(&x)
    }
}
