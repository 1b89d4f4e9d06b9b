//! Householder QR through cuSOLVER's 64-bit `geqrf`, products with Q through `ormqr`
//! from the right on B's own buffer, and least squares.
//!
//! **Factor.** As for LU ([`crate::lu`]): A is transposed (GEAM) into a new n×m
//! row-major buffer, which read column-major (lda = m) is A, and `cusolverDnXgeqrf`
//! (64-bit API, as PyTorch calls it) factors it in place: R on and above the diagonal,
//! the reflectors' vectors below it, their scalars in `tau` (a k×1 matrix, k = min(m, n)),
//! `Q = H₀·H₁·…·H_{k−1}`. The factor stays column-major ([`FactorLayout::ColMajor`]). One
//! `diag_scan` of it, and of A's row sums in one more row of its buffer, is the one
//! synchronisation: NaN or ±Inf in either is
//! [`Error::NonFinite`](ndgpu_core::Error::NonFinite).
//!
//! **`B ← op(Q)·B`.** B is row-major m×nrhs: its buffer read column-major is Bᵀ
//! (nrhs×m, ldc = nrhs). Transposing,
//!
//! ```text
//! B ← Q·B   ⟺  Bᵀ ← Bᵀ·Qᵀ    ormqr side = RIGHT, op = T
//! B ← Qᵀ·B  ⟺  Bᵀ ← Bᵀ·Q     ormqr side = RIGHT, op = N
//! ```
//!
//! on the nrhs×m matrix Bᵀ (ormqr's m = nrhs, n = m, k reflectors of length m in the
//! factor's buffer, lda = m): in place on B's buffer, with no transpose of B (side =
//! LEFT would want B column-major: two GEAMs and a copy). cuSOLVER's `ormqr` has no
//! 64-bit form: its dimensions must fit an `int`.
//!
//! **Least squares** (m ≥ n, full column rank): `X = R⁻¹·(Qᵀ·B)[..n]`. R's diagonal
//! comes back for the rank test (NumPy's default `rcond`: [`backend::full_rank`]) by a
//! strided COPY of its n entries, read: the one synchronisation. Then, queued: `Qᵀ·B`
//! as above; the first n rows of the row-major B (a contiguous prefix of n·nrhs
//! elements) copied into the new n×nrhs X; and `R·X = C ⟺ Xᵀ·Rᵀ = Cᵀ`, one TRSM from
//! the right on X's buffer (nrhs×n, ldb = nrhs) with the upper triangle of the
//! factor's buffer (R is its leading n×n upper triangle, lda = m), op T, non-unit.
//!
//! The factor must be column-major with cuSOLVER's `tau`, as this backend makes it:
//! `ormqr` reads each reflector as a contiguous column.

use cudarc::cusolver::sys::{cublasOperation_t, cublasSideMode_t};
use ndgpu_core::backend;
use ndgpu_core::Variant;
use ndgpu_core::{Error, FactorLayout, Matrix, QrFactor, Result, Trans, Triangular, Uplo};
use ndgpu_cuda_runtime::{dim_i32, DeviceMatrix};

use crate::error;
use crate::factor::XFactor;
use crate::{ptr, ptr_mut, BlasElement, CublasBackend};

/// The op of the factorization, in errors.
const OP: &str = "qr";
/// The op of the products with Q.
const APPLY_OP: &str = "qr_apply";
/// The op of least squares.
const SOLVE_OP: &str = "lstsq";

/// Variants, default first.
pub const VARIANTS: &[Variant] = &[Variant::new(
    "geqrf",
    "cusolverDnXgeqrf (64-bit API), as PyTorch calls it, on a column-major copy (GEAM); \
     the factor stays column-major; products with Q by SORMQR/DORMQR from the right on B's \
     row-major buffer in place (op(Q)·B is Bᵀ·op(Q)ᵀ: no transpose of B); lstsq by ORMQR, \
     a copy of the first n rows and one TRSM",
)];

/// What every variant shares.
pub const NOTE: &str = "one synchronisation per factorization (the factor's first \
    non-finite entry) and one per lstsq (R's diagonal, for the rank test); products with Q \
    are queued and never wait. ORMQR has 32-bit dimensions (m, n, nrhs below 2³¹).";

/// cuSOLVER's op.
fn solver_op(t: Trans) -> cublasOperation_t {
    match t {
        Trans::No => cublasOperation_t::CUBLAS_OP_N,
        Trans::Yes => cublasOperation_t::CUBLAS_OP_T,
    }
}

/// The op of a right-side `ormqr` on Bᵀ giving `op(Q)·B`: the other one, since
/// `(op(Q)·B)ᵀ = Bᵀ·op(Q)ᵀ`.
fn right_op(trans: Trans) -> Trans {
    crate::trsm::flip_trans(trans)
}

impl CublasBackend {
    /// QR of the non-empty m×n `a` (see the module's doc).
    pub(crate) fn qr_kernel<T: BlasElement>(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        let (m, n) = a.dim();
        let (t, _, tau) = self.factor_scanned(OP, &a, |t, info| {
            let mut tau = self.gpu.alloc_matrix::<T>(OP, m.min(n), 1)?;
            let f = XFactor::Geqrf(ptr_mut(&self.gpu, &mut tau.data).cast());
            Ok((self.xfactor(t, info, f)?, tau))
        })?;
        Ok(backend::qr_factor(
            self.gpu.matrix(t),
            self.gpu.matrix(tau),
            FactorLayout::ColMajor,
            (m, n),
        ))
    }

    /// The factor's buffer and `tau`, refusing a row-major factor.
    fn qr_operands<'a, T: BlasElement>(
        &self,
        op: &'static str,
        f: &'a QrFactor<T>,
    ) -> Result<(&'a DeviceMatrix<T>, &'a DeviceMatrix<T>)> {
        if f.layout() != FactorLayout::ColMajor {
            return Err(Error::invalid(
                op,
                "the QR factor is row-major (made by another backend): cuSOLVER's ormqr \
                 reads the column-major factor this backend's qr makes",
            ));
        }
        let here = self.here();
        Ok((
            self.gpu.dm(here, op, "the factor", f.packed())?,
            self.gpu.dm(here, op, "tau", f.tau())?,
        ))
    }

    /// `B ← op(Q)·B` on the row-major m×nrhs `b`, queued: `ormqr` from the right on its
    /// buffer with the other op (see the module's doc).
    fn ormqr_right<T: BlasElement>(
        &self,
        op: &'static str,
        (m, n): (usize, usize),
        (packed, tau): (&DeviceMatrix<T>, &DeviceMatrix<T>),
        trans: Trans,
        b: &mut DeviceMatrix<T>,
    ) -> Result<()> {
        let nrhs = b.cols;
        if nrhs == 0 || m.min(n) == 0 {
            return Ok(());
        }
        let gpu = &self.gpu;
        let (mc, nc, k) = (dim_i32(op, nrhs)?, dim_i32(op, m)?, dim_i32(op, m.min(n))?);
        let side = cublasSideMode_t::CUBLAS_SIDE_RIGHT;
        let t = solver_op(right_op(trans));
        let (pa, ptau, pc) = (
            ptr(gpu, &packed.data),
            ptr(gpu, &tau.data),
            ptr_mut(gpu, &mut b.data),
        );
        let mut info = gpu.alloc::<i32>(op, 1)?;
        let pi = ptr_mut(gpu, &mut info);
        let h = self.solver()?;
        let mut lwork = 0;
        // SAFETY: the factor holds the k reflectors of length m column-major (lda m),
        // tau k scalars, b nrhs×m column-major (ldc nrhs); lwork a valid out-pointer.
        error::cusolver(
            unsafe {
                T::ormqr_buffer_size(h.raw, side, t, mc, nc, k, pa, nc, ptau, pc, mc, &mut lwork)
            },
            "qr: workspace size (ormqr_bufferSize)",
        )?;
        let mut work = self.lwork::<T>(op, lwork)?;
        let pw = ptr_mut(gpu, &mut work);
        // SAFETY: as above; work holds at least lwork elements, info one.
        error::cusolver(
            unsafe {
                T::ormqr(
                    h.raw,
                    side,
                    t,
                    mc,
                    nc,
                    k,
                    pa,
                    nc,
                    ptau,
                    pc,
                    mc,
                    pw,
                    lwork.max(1),
                    pi,
                )
            },
            "qr_apply (ormqr)",
        )
    }

    /// `B ← op(Q)·B` in place on the row-major m×nrhs `b` (shape checked by the caller).
    pub(crate) fn qr_apply_kernel<T: BlasElement>(
        &self,
        f: &QrFactor<T>,
        (trans, b): (Trans, &mut Matrix<T>),
    ) -> Result<()> {
        let operands = self.qr_operands(APPLY_OP, f)?;
        let db = self.gpu.dm_mut(self.here(), APPLY_OP, "B", b)?;
        self.ormqr_right(APPLY_OP, f.dim(), operands, trans, db)
    }

    /// The least-squares solution of `A·X ≈ B` from A's factor, m ≥ n ≥ 1, b m×nrhs
    /// (checked by the caller; b is overwritten).
    pub(crate) fn qr_solve_kernel<T: BlasElement>(
        &self,
        f: &QrFactor<T>,
        mut b: Matrix<T>,
    ) -> Result<Matrix<T>> {
        let gpu = &self.gpu;
        let (m, n) = f.dim();
        let (packed, tau) = self.qr_operands(SOLVE_OP, f)?;
        // R's diagonal: entry (i, i) of the factor is element i·(m + 1) of its buffer.
        let diag = self.read_diagonal(SOLVE_OP, &packed.data, m + 1, n)?;
        backend::full_rank(SOLVE_OP, &diag, (m, n))?;
        let db = gpu.dm_mut(self.here(), SOLVE_OP, "B", &mut b)?;
        let nrhs = db.cols;
        self.ormqr_right(SOLVE_OP, (m, n), (packed, tau), Trans::Yes, db)?;
        let mut x = gpu.alloc_matrix::<T>(SOLVE_OP, n, nrhs)?;
        let len = n * nrhs;
        if len > 0 {
            gpu.stream()
                .memcpy_dtod(&db.data.slice(0..len), &mut x.data.slice_mut(0..len))
                .map_err(|e| error::driver("lstsq: copying the first n rows of Qᵀ·B", e))?;
        }
        let r = Triangular {
            uplo: Uplo::Upper,
            trans: Trans::Yes,
            unit: false,
        };
        self.trsm_right(
            (&packed.data, m),
            r,
            &mut x.data,
            (nrhs, n),
            "lstsq (trsm with R)",
        )?;
        Ok(gpu.matrix(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trsm::reference::*;
    use ndarray::Array2;

    #[test]
    fn a_right_side_product_on_the_buffer_is_the_row_major_product() {
        // Any orthogonal Q: a Householder reflection H = I − τ·v·vᵀ, τ = 2/vᵀv.
        let m = 5;
        let v = values(m, 1, 7);
        let tau = 2.0 / v.t().dot(&v)[[0, 0]];
        let q = Array2::<f64>::eye(m) - v.dot(&v.t()) * tau;
        let q = q.dot(&values(m, m, 8)); // not symmetric, so that op shows
        let b = values(m, 3, 9);
        for trans in [Trans::No, Trans::Yes] {
            let want = apply(trans, q.clone()).dot(&b);
            // ormqr from the right on the buffer read column-major (bᵀ), read back
            // row-major.
            let got = b.t().dot(&apply(right_op(trans), q.clone())).t().to_owned();
            assert!(max_diff(&got, &want) < 1e-12, "{trans:?}");
        }
    }
}
