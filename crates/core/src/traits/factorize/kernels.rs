//! The backend's side of [`Factorize`](super::Factorize): unchecked kernels. Everything
//! past Cholesky has a default that answers [`Error::Unsupported`], so LU, QR, the
//! triangular solve and the spectra (`eigh`, `svd`) land one backend at a time.

use crate::traits::Memory;
use crate::{
    CholeskyFactor, Element, Error, LuFactor, Matrix, QrFactor, Result, Trans, Triangular,
};

/// [`Error::Unsupported`] for `op` on `b`; the operands are dropped unread.
fn unsupported<T: Element, B: Memory<T> + ?Sized>(b: &B, op: &'static str, _: impl Sized) -> Error {
    Error::Unsupported {
        backend: b.name(),
        op,
    }
}

/// The kernels of [`Factorize`](crate::Factorize); see [`Kernels`](crate::Kernels).
pub trait FactorizeKernels<T: Element>: Memory<T> {
    /// Cholesky in place: `a` becomes L. Checked: `a` is square.
    ///
    /// # Errors
    /// [`Error::NotPositiveDefinite`](crate::Error::NotPositiveDefinite) with the first
    /// failing pivot; [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn cholesky_unchecked(&self, a: Matrix<T>) -> Result<CholeskyFactor<T>>;

    /// Solves `A·X = B` in place with A's factor. Checked: `b` has n rows. B is not
    /// looked at, as in [`Self::trsm_unchecked`].
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn cholesky_solve_unchecked(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()>;

    /// Solves `op(A)·X = B` in place (`b` becomes X) with the triangle `tri` of A.
    /// Checked: A is square n×n and B has n rows. B is not looked at: NaN or ±Inf in a
    /// column of B gives NaN or ±Inf in that column of X.
    ///
    /// # Errors
    /// [`Error::Singular`] naming the first zero on a diagonal that is read (then `b` is
    /// unchanged); [`Error::WrongPlace`]; device errors.
    fn trsm_unchecked(&self, a: &Matrix<T>, tri: Triangular, b: &mut Matrix<T>) -> Result<()> {
        Err(unsupported(self, "solve_triangular", (a, tri, b)))
    }

    /// LU with partial pivoting of an m×n matrix, which becomes the factor. Checked: A is
    /// not empty. A zero pivot is recorded in the factor, not an error.
    ///
    /// # Errors
    /// [`Error::NonFinite`] when NaN or ±Inf in A reached the factor; [`Error::WrongPlace`];
    /// device errors.
    fn lu_unchecked(&self, a: Matrix<T>) -> Result<LuFactor<T>> {
        Err(unsupported(self, "lu", a))
    }

    /// Solves `op(A)·X = B` in place with A's LU factor. Checked: A is square, n ≥ 1, no
    /// zero pivot, and B has n rows. B is not looked at, as in [`Self::trsm_unchecked`].
    ///
    /// # Errors
    /// [`Error::WrongPlace`]; device errors.
    fn lu_solve_unchecked(&self, f: &LuFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        Err(unsupported(self, "lu_solve", (f, trans, b)))
    }

    /// Householder QR of an m×n matrix, which becomes the factor (checked: A is not
    /// empty). Errors as [`Self::lu_unchecked`]'s.
    fn qr_unchecked(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        Err(unsupported(self, "qr", a))
    }

    /// `B ← op(Q)·B` in place, Q the m×m orthogonal factor (checked: B has m rows, the
    /// factor has at least one reflection). Errors: [`Error::WrongPlace`], the device's.
    fn qr_apply_unchecked(&self, f: &QrFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        Err(unsupported(self, "qr_apply", (f, trans, b)))
    }

    /// The least-squares solution X (n×nrhs) of `A·X ≈ B` from A's QR factor: the first
    /// n rows of `R⁻¹·Qᵀ·B`. Checked: m ≥ n ≥ 1, B has m rows (it may be overwritten).
    ///
    /// # Errors
    /// [`Error::RankDeficient`] (see [`crate::backend::full_rank`]); [`Error::WrongPlace`];
    /// device errors.
    fn qr_solve_unchecked(&self, f: &QrFactor<T>, b: Matrix<T>) -> Result<Matrix<T>> {
        Err(unsupported(self, "lstsq", (f, b)))
    }

    /// The least-squares solution X (n×nrhs) of `A·X ≈ B`. Checked: m ≥ n ≥ 1, B has m
    /// rows and at least one column. By default the QR factor of a copy of A, then
    /// [`Self::qr_solve_unchecked`]; a backend may solve without keeping a factor (the
    /// `cuda` backend factors `[A | B]` at once by TSQR where it can: `Qᵀ·[A | B]` is
    /// `[R, Qᵀ·B]`).
    ///
    /// # Errors
    /// As [`Self::qr_solve_unchecked`]; out of memory.
    fn lstsq_unchecked(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T>> {
        let f = self.qr_unchecked(self.copy(a)?)?;
        self.qr_solve_unchecked(&f, self.copy(b)?)
    }

    /// The eigendecomposition `A = V·diag(w)·Vᵀ` of a symmetric n×n matrix given by its
    /// lower triangle (the strict upper triangle is not read): `w` n×1 in ascending
    /// order and, when `vectors`, V n×n with orthonormal columns (column j belongs to
    /// `w[j]`). Checked: A is square, n ≥ 1. The kernel looks at the lower triangle
    /// itself: NaN or ±Inf there is [`Error::NonFinite`] naming the entry.
    ///
    /// # Errors
    /// [`Error::NonFinite`]; [`Error::NoConvergence`]; [`Error::WrongPlace`]; device
    /// errors.
    fn eigh_unchecked(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, Option<Matrix<T>>)> {
        Err(unsupported(self, "eigh", (a, vectors)))
    }

    /// The reduced SVD `A = U·diag(s)·Vt` of an m×n matrix, k = min(m, n): `s` k×1 in
    /// descending order, non-negative, and when `vectors` `(U, Vt)`, U m×k and Vt k×n
    /// with orthonormal columns and rows. Checked: A is not empty. NaN or ±Inf in A is
    /// [`Error::NonFinite`] naming the entry.
    ///
    /// # Errors
    /// As [`Self::eigh_unchecked`].
    #[allow(clippy::type_complexity)]
    fn svd_unchecked(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, Option<(Matrix<T>, Matrix<T>)>)> {
        Err(unsupported(self, "svd", (a, vectors)))
    }
}
