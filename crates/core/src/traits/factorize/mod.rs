//! Factorizations and the solves they carry: Cholesky of symmetric positive-definite
//! matrices, LU with partial pivoting, Householder QR, triangular solves, and the
//! spectra: the symmetric eigendecomposition and the SVD.

mod kernels;
mod lu;
mod qr;
mod spectra;

use ndarray::{Array1, Array2, ArrayView2};

use super::kernels::need;
use super::Kernels;
use crate::array::factor;
use crate::{
    check, CholeskyFactor, Element, LuFactor, Matrix, QrFactor, QrMode, Result, Trans, Triangular,
};
pub use kernels::FactorizeKernels;

/// The triangular solve's name in errors.
const TRI: &str = "solve_triangular";

/// The factorize kernels of `b`, or [`Error::Unsupported`](crate::Error::Unsupported) for `op`.
fn fk<'a, T: Element, B: Kernels<T> + ?Sized>(
    b: &'a B,
    op: &'static str,
) -> Result<&'a dyn FactorizeKernels<T>> {
    need(b, b.factorize_kernels(), op)
}

/// Factorizations, each returning a factor type that carries its solves, and the
/// operations built on them. Written once for every backend: the methods check the
/// input, then run the backend's kernels.
///
/// | factor | made by | carries |
/// |---|---|---|
/// | [`CholeskyFactor`] `A = L·Lᵀ` | `cholesky*` | `cholesky_solve*` |
/// | [`LuFactor`] `P·A = L·U` | `lu*` | `lu_solve*`, `lu_det`, `lu_slogdet`, `lu_unpack`; and `solve`, `det`, `slogdet`, `inv` |
/// | [`QrFactor`] `A = Q·R` | `qr*` | `qr_apply*`; and `lstsq` |
///
/// and `solve_triangular*` with a triangle of any square matrix; and the spectra,
/// `eigh*`, `eigvalsh*` (symmetric A, lower triangle read) and `svd*`, `svdvals*`, as
/// NumPy's: eigenvalues ascending, singular values descending, never NaN in an output
/// (an iteration that does not converge is [`Error::NoConvergence`](crate::Error::NoConvergence)).
///
/// **Bad input.** The host forms refuse NaN and ±Inf in what they read with
/// [`Error::NonFinite`](crate::Error::NonFinite) naming the entry. The resident forms
/// do not look at the data on the host: NaN or ±Inf in a matrix being factored is
/// reported when it reaches the factor (Cholesky: as a failing pivot; LU and QR:
/// `NonFinite` naming the factor's entry), while in a right-hand side B of a resident
/// solve it gives NaN or ±Inf in the same column of X. A singular matrix (an exactly
/// zero pivot of LU, or a zero on the diagonal of a triangle) is
/// [`Error::Singular`](crate::Error::Singular) naming the pivot, and A without full
/// column rank is [`Error::RankDeficient`](crate::Error::RankDeficient) for `lstsq`:
/// never NaN or ±Inf in an output.
///
/// **Cholesky.** Only the lower triangle of `A` (diagonal included) is read. The factor `L` is lower
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

    /// Solves `A·X = B` in place (`b` becomes X, n×nrhs) given the factor of A. B is not
    /// looked at: NaN or ±Inf in a column of B gives NaN or ±Inf in that column of X, and
    /// the solve never waits for the device.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `b` has other than n
    /// rows; [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
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

    /// Solves `op(T)·X = B` in place (`b` becomes X), T the triangle `tri` of the square
    /// matrix `a` (as `scipy.linalg.solve_triangular`, BLAS `trsm` with side = left).
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare); [`Error::ShapeMismatch`](crate::Error::ShapeMismatch)
    /// when B has other than n rows; [`Error::Singular`](crate::Error::Singular) for a
    /// zero on a diagonal that is read; [`Error::WrongPlace`](crate::Error::WrongPlace);
    /// device errors.
    fn solve_triangular_in_place_dev(
        &self,
        a: &Matrix<T>,
        tri: Triangular,
        b: &mut Matrix<T>,
    ) -> Result<()> {
        check::rhs(TRI, check::square_dim(TRI, a.dim())?, b.dim())?;
        match b.is_empty() {
            true => fk(self, TRI).map(|_| ()),
            false => fk(self, TRI)?.trsm_unchecked(a, tri, b),
        }
    }

    /// `X` with `op(T)·X = B` for host arrays; only the triangle read is checked.
    ///
    /// # Errors
    /// As [`Factorize::solve_triangular_in_place_dev`];
    /// [`Error::NonFinite`](crate::Error::NonFinite) for NaN/Inf in what is read.
    fn solve_triangular(
        &self,
        a: ArrayView2<T>,
        b: ArrayView2<T>,
        tri: Triangular,
    ) -> Result<Array2<T>> {
        check::triangular(&a, tri, &b)?;
        let (a, mut x) = (self.upload(a)?, self.upload(b)?);
        self.solve_triangular_in_place_dev(&a, tri, &mut x)?;
        self.download(&x)
    }

    /// LU with partial pivoting of a resident m×n matrix, which becomes the factor. An
    /// exactly zero pivot is recorded ([`LuFactor::zero_pivot`]), not an error; NaN or
    /// ±Inf that reached the factor is [`Error::NonFinite`](crate::Error::NonFinite);
    /// and [`Error::WrongPlace`](crate::Error::WrongPlace), the device's errors.
    fn lu_in_place_dev(&self, a: Matrix<T>) -> Result<LuFactor<T>> {
        lu::factor(self, a)
    }

    /// The LU factor of a copy of `a` (kept as it was): errors as
    /// [`Factorize::lu_in_place_dev`]'s, and out of memory.
    fn lu_dev(&self, a: &Matrix<T>) -> Result<LuFactor<T>> {
        lu::factor(self, self.copy(a)?)
    }

    /// Solves `op(A)·X = B` in place with A's LU factor (as `scipy.linalg.lu_solve`).
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare) for a factor of a non-square A;
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
    /// [`Error::Singular`](crate::Error::Singular) with the first zero pivot;
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn lu_solve_in_place_dev(&self, f: &LuFactor<T>, t: Trans, b: &mut Matrix<T>) -> Result<()> {
        lu::solve(self, ("lu_solve", f), t, b)
    }

    /// As [`Factorize::lu_solve_in_place_dev`], into a new matrix.
    ///
    /// # Errors
    /// As [`Factorize::lu_solve_in_place_dev`]; out of memory.
    fn lu_solve_dev(&self, f: &LuFactor<T>, trans: Trans, b: &Matrix<T>) -> Result<Matrix<T>> {
        let mut x = self.copy(b)?;
        lu::solve(self, ("lu_solve", f), trans, &mut x)?;
        Ok(x)
    }

    /// `(P, L, U)` with `A = P·L·U` from a factor, on the host (as `scipy.linalg.lu`).
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn lu_unpack(&self, f: &LuFactor<T>) -> Result<(Array2<T>, Array2<T>, Array2<T>)> {
        let (packed, pivots) = lu::host(self, f)?;
        Ok(crate::factors::unpack_lu(packed.view(), &pivots))
    }

    /// det A from A's factor, accumulated in f64 (±Inf in `T` when it overflows `T`; 0
    /// for a singular A).
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare); device errors.
    fn lu_det(&self, f: &LuFactor<T>) -> Result<T> {
        lu::det(self, f)
    }

    /// `(sign, log|det A|)` from A's factor, in f64 (as `numpy.linalg.slogdet`: sign 0
    /// and −∞ for a singular A).
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare); device errors.
    fn lu_slogdet(&self, f: &LuFactor<T>) -> Result<(f64, f64)> {
        lu::slogdet(self, f)
    }

    /// X with `A·X = B` for a general square resident A, through LU (`a` is kept).
    ///
    /// # Errors
    /// As [`Factorize::lu_dev`] and [`Factorize::lu_solve_in_place_dev`].
    fn solve_dev(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T>> {
        check::square_dim("solve", a.dim())?;
        check::rhs("solve", a.rows(), b.dim())?;
        let f = self.lu_dev(a)?;
        let mut x = self.copy(b)?;
        lu::solve(self, ("solve", &f), Trans::No, &mut x)?;
        Ok(x)
    }

    /// A⁻¹ of a square resident A, through LU.
    ///
    /// # Errors
    /// As [`Factorize::solve_dev`].
    fn inv_dev(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        lu::inv(self, a)
    }

    /// `(P, L, U)` with `A = P·L·U` of a host m×n array (as `scipy.linalg.lu`): P m×m,
    /// L m×k with a unit diagonal and |Lᵢⱼ| ≤ 1, U k×n, k = min(m, n).
    ///
    /// # Errors
    /// [`Error::NonFinite`](crate::Error::NonFinite); device errors.
    fn lu(&self, a: ArrayView2<T>) -> Result<(Array2<T>, Array2<T>, Array2<T>)> {
        check::finite("lu", "A", &a)?;
        let f = self.lu_in_place_dev(self.upload(a)?)?;
        self.lu_unpack(&f)
    }

    /// X with `A·X = B` for a general square A (as `numpy.linalg.solve`), through LU.
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare), [`Error::ShapeMismatch`](crate::Error::ShapeMismatch),
    /// [`Error::NonFinite`](crate::Error::NonFinite), [`Error::Singular`](crate::Error::Singular).
    fn solve(&self, a: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        lu::square_inputs("solve", &a, Some(&b))?;
        let f = self.lu_in_place_dev(self.upload(a)?)?;
        let mut x = self.upload(b)?;
        lu::solve(self, ("solve", &f), Trans::No, &mut x)?;
        self.download(&x)
    }

    /// det A (as `numpy.linalg.det`; 1 for a 0×0 A).
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare), [`Error::NonFinite`](crate::Error::NonFinite).
    fn det(&self, a: ArrayView2<T>) -> Result<T> {
        lu::square_inputs("det", &a, None)?;
        self.lu_det(&self.lu_in_place_dev(self.upload(a)?)?)
    }

    /// `(sign, log|det A|)` (as `numpy.linalg.slogdet`).
    ///
    /// # Errors
    /// As [`Factorize::det`].
    fn slogdet(&self, a: ArrayView2<T>) -> Result<(f64, f64)> {
        lu::square_inputs("slogdet", &a, None)?;
        self.lu_slogdet(&self.lu_in_place_dev(self.upload(a)?)?)
    }

    /// A⁻¹ (as `numpy.linalg.inv`).
    ///
    /// # Errors
    /// As [`Factorize::solve`].
    fn inv(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        lu::square_inputs("inv", &a, None)?;
        self.download(&self.inv_dev(&self.upload(a)?)?)
    }

    /// Householder QR of a resident m×n matrix, which becomes the factor. Errors as
    /// [`Factorize::lu_in_place_dev`]'s: NaN or ±Inf that reached the factor, an array
    /// from elsewhere, the device's.
    fn qr_in_place_dev(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        qr::factor(self, a)
    }

    /// The QR factor of a copy of `a` (kept as it was); errors as
    /// [`Factorize::qr_in_place_dev`]'s, and out of memory.
    fn qr_dev(&self, a: &Matrix<T>) -> Result<QrFactor<T>> {
        qr::factor(self, self.copy(a)?)
    }

    /// `B ← op(Q)·B` in place, Q the m×m orthogonal factor, never formed.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when B has other than m
    /// rows; [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn qr_apply_in_place_dev(&self, f: &QrFactor<T>, t: Trans, b: &mut Matrix<T>) -> Result<()> {
        qr::apply(self, f, t, b)
    }

    /// The least-squares solution X (n×nrhs) minimising ‖A·X − B‖ for a resident m×n A
    /// of full column rank, m ≥ n, through QR (as `numpy.linalg.lstsq` for such A).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when m < n;
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
    /// [`Error::RankDeficient`](crate::Error::RankDeficient) naming the first dependent
    /// column; [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn lstsq_dev(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T>> {
        qr::lstsq(self, a, b)
    }

    /// `(Q, R)` of a host m×n array (as `numpy.linalg.qr` with `mode`).
    ///
    /// # Errors
    /// [`Error::NonFinite`](crate::Error::NonFinite); device errors.
    fn qr(&self, a: ArrayView2<T>, mode: QrMode) -> Result<(Array2<T>, Array2<T>)> {
        qr::qr_host(self, a, mode)
    }

    /// As [`Factorize::lstsq_dev`] for host arrays.
    ///
    /// # Errors
    /// As [`Factorize::lstsq_dev`]; [`Error::NonFinite`](crate::Error::NonFinite).
    fn lstsq(&self, a: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        qr::lstsq_host(self, a, b)
    }

    /// `(w, V)` with `A = V·diag(w)·Vᵀ` of a resident symmetric A given by its lower
    /// triangle: w n×1 ascending, V n×n with orthonormal columns.
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare); [`Error::NonFinite`](crate::Error::NonFinite)
    /// naming an entry of the lower triangle; [`Error::NoConvergence`](crate::Error::NoConvergence);
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn eigh_dev(&self, a: &Matrix<T>) -> Result<(Matrix<T>, Matrix<T>)> {
        let (w, v) = spectra::eigh(self, ("eigh", a), true)?;
        Ok((w, spectra::vectors("eigh", v)?))
    }

    /// The eigenvalues (n×1, ascending) of a resident symmetric A; errors as
    /// [`Factorize::eigh_dev`]'s.
    fn eigvalsh_dev(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        Ok(spectra::eigh(self, ("eigvalsh", a), false)?.0)
    }

    /// `(U, s, Vt)` of the reduced SVD `A = U·diag(s)·Vt` of a resident m×n A: U m×k,
    /// s k×1 descending, Vt k×n, k = min(m, n). Errors as [`Factorize::eigh_dev`]'s
    /// (NaN or ±Inf anywhere in A), without `NotSquare`.
    fn svd_dev(&self, a: &Matrix<T>) -> Result<(Matrix<T>, Matrix<T>, Matrix<T>)> {
        let (s, uv) = spectra::svd(self, "svd", a, true)?;
        let (u, vt) = spectra::vectors("svd", uv)?;
        Ok((u, s, vt))
    }

    /// The singular values (k×1, descending) of a resident A; errors as
    /// [`Factorize::svd_dev`]'s.
    fn svdvals_dev(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        Ok(spectra::svd(self, "svdvals", a, false)?.0)
    }

    /// `(w, V)` of a symmetric host array, reading its lower triangle only (as
    /// `numpy.linalg.eigh`): w ascending, V's column j the eigenvector of `w[j]`.
    ///
    /// # Errors
    /// As [`Factorize::eigh_dev`].
    fn eigh(&self, a: ArrayView2<T>) -> Result<(Array1<T>, Array2<T>)> {
        let (w, v) = spectra::eigh_host(self, "eigh", a, true)?;
        Ok((w, spectra::vectors("eigh", v)?))
    }

    /// The eigenvalues, ascending, of a symmetric host array (as `numpy.linalg.eigvalsh`).
    ///
    /// # Errors
    /// As [`Factorize::eigh_dev`].
    fn eigvalsh(&self, a: ArrayView2<T>) -> Result<Array1<T>> {
        Ok(spectra::eigh_host(self, "eigvalsh", a, false)?.0)
    }

    /// `(U, s, Vt)` with `A = U·diag(s)·Vt` (as `numpy.linalg.svd`): reduced (U m×k, Vt
    /// k×n, k = min(m, n)), or with `full_matrices` U m×m and Vt n×n, completed to
    /// orthogonal matrices through a complete QR.
    ///
    /// # Errors
    /// As [`Factorize::svd_dev`].
    fn svd(
        &self,
        a: ArrayView2<T>,
        full_matrices: bool,
    ) -> Result<(Array2<T>, Array1<T>, Array2<T>)> {
        let (s, uv) = spectra::svd_host(self, "svd", a, Some(full_matrices))?;
        let (u, vt) = spectra::vectors("svd", uv)?;
        Ok((u, s, vt))
    }

    /// The singular values, descending (as `numpy.linalg.svd(a, compute_uv=False)`).
    ///
    /// # Errors
    /// As [`Factorize::svd_dev`].
    fn svdvals(&self, a: ArrayView2<T>) -> Result<Array1<T>> {
        Ok(spectra::svd_host(self, "svdvals", a, None)?.0)
    }
}

impl<T: Element, B: Kernels<T> + ?Sized> Factorize<T> for B {}
