//! GEMM through cuBLAS, and the [`MatMul`] trait (whose `gram` lives in `gram.rs`).

use cudarc::cublas::sys::{self as blas, cublasHandle_t, cublasMath_t};
use ndarray::{Array2, ArrayView2};
use ndgpu_core::{check, DType, Error, Family, MatMul, Result, Trans};
use ndgpu_cuda::{DeviceMatrix, Gpu};

use crate::layout::{col_major_gemm, flip, op, op_dim};
use crate::{error, i64_of, ptr, ptr_mut, BlasElement, CublasBackend};

/// Variants, default first.
pub const VARIANTS: &[&str] = &["gemm", "gemm_tf32"];

/// Determinism and scope.
pub const NOTE: &str = "matmul: `gemm` (default) is cuBLAS SGEMM/DGEMM in the default math \
    mode (no TF32), row-major handled without copies by computing Cᵀ = op(B)ᵀ·op(A)ᵀ; \
    `gemm_tf32` is opt-in: SGEMM with CUBLAS_TF32_TENSOR_OP_MATH for that call only \
    (operands rounded to 10 mantissa bits, error bound tolerance::gemm_tf32, not the f32 \
    one); for f64 `gemm_tf32` is plain DGEMM, TF32 being a single-precision mode.";

impl CublasBackend {
    /// `C ← alpha·op(A)·op(B) + beta·C` on resident row-major data, with the selected
    /// [`Family::MatMul`] variant. With `beta = 0`, C is not read (NaN in it does not
    /// propagate).
    ///
    /// Named `gemm_device`, not `gemm`, so as not to shadow [`MatMul::gemm`] in method
    /// calls on a `CublasBackend`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when the inner dimensions differ or C has the wrong
    /// shape; cuBLAS errors.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_device<T: BlasElement>(
        &self,
        alpha: T,
        a: &DeviceMatrix<T>,
        ta: Trans,
        b: &DeviceMatrix<T>,
        tb: Trans,
        beta: T,
        c: &mut DeviceMatrix<T>,
    ) -> Result<()> {
        let (m, k) = op_dim(a.dim(), ta);
        let (k2, n) = op_dim(b.dim(), tb);
        if k != k2 {
            return Err(Error::shape(
                "gemm",
                format!("op(A) is {m}x{k} but op(B) is {k2}x{n}: inner dimensions differ"),
            ));
        }
        if c.dim() != (m, n) {
            return Err(Error::shape(
                "gemm",
                format!("C is {}x{}, expected {m}x{n}", c.rows, c.cols),
            ));
        }
        if m == 0 || n == 0 {
            return Ok(());
        }
        let tf32 = T::DTYPE == DType::F32 && self.variants.current(Family::MatMul) == "gemm_tf32";
        let gpu = &self.gpu;
        let h = self.blas()?;
        let (pa, pb, pc) = (
            ptr(gpu, &a.data),
            ptr(gpu, &b.data),
            ptr_mut(gpu, &mut c.data),
        );
        let run = || {
            // SAFETY: a, b, c are live row-major buffers of the shapes checked above,
            // on the handle's stream.
            unsafe { gemm_raw(h.raw, alpha, pa, a.dim(), ta, pb, b.dim(), tb, beta, pc) }
        };
        if tf32 {
            with_math_mode(h.raw, cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH, run)
        } else {
            run()
        }
    }
}

/// Row-major `C (m×n) ← alpha·op(A)·op(B) + beta·C` on raw buffers, through
/// [`col_major_gemm`].
///
/// # Safety
/// `a` and `b` hold contiguous row-major matrices of shapes `a_dim` and `b_dim` whose
/// op's inner dimensions agree; `c` holds m×n elements; all on the handle's stream.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm_raw<T: BlasElement>(
    h: cublasHandle_t,
    alpha: T,
    a: *const T,
    a_dim: (usize, usize),
    ta: Trans,
    b: *const T,
    b_dim: (usize, usize),
    tb: Trans,
    beta: T,
    c: *mut T,
) -> Result<()> {
    let g = col_major_gemm(a_dim, ta, b_dim, tb);
    error::cublas(
        T::gemm(
            h,
            op(g.transa),
            op(g.transb),
            i64_of(g.m),
            i64_of(g.n),
            i64_of(g.k),
            &alpha,
            b,
            i64_of(g.lda),
            a,
            i64_of(g.ldb),
            &beta,
            c,
            i64_of(g.ldc),
        ),
        "gemm",
    )
}

/// Runs `f` with the handle in `mode`, then puts the previous mode back (also when `f`
/// fails), so that no other call inherits it.
pub(crate) fn with_math_mode(
    h: cublasHandle_t,
    mode: cublasMath_t,
    f: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let mut previous = cublasMath_t::CUBLAS_DEFAULT_MATH;
    // SAFETY: a live handle, used under the backend's lock; a valid out-pointer.
    error::cublas(
        unsafe { blas::cublasGetMathMode(h, &mut previous) },
        "reading the math mode",
    )?;
    // SAFETY: as above.
    error::cublas(
        unsafe { blas::cublasSetMathMode(h, mode) },
        "setting the math mode",
    )?;
    let result = f();
    // SAFETY: as above.
    let restored = error::cublas(
        unsafe { blas::cublasSetMathMode(h, previous) },
        "restoring the math mode",
    );
    result.and(restored)
}

/// Uploads an operand, reading a column-major (Fortran-order) view as its transpose,
/// which is row-major as stored: `op(A) = op'(Aᵀ)` with the flag flipped.
pub(crate) fn upload_operand<T: BlasElement>(
    gpu: &Gpu,
    a: ArrayView2<T>,
    t: Trans,
) -> Result<(DeviceMatrix<T>, Trans)> {
    if !a.is_standard_layout() && a.t().is_standard_layout() {
        Ok((gpu.upload(a.t())?, flip(t)))
    } else {
        Ok((gpu.upload(a)?, t))
    }
}

impl<T: BlasElement> MatMul<T> for CublasBackend {
    fn gemm(
        &self,
        alpha: T,
        a: ArrayView2<T>,
        ta: Trans,
        b: ArrayView2<T>,
        tb: Trans,
        beta: T,
        c: Option<ArrayView2<T>>,
    ) -> Result<Array2<T>> {
        let (m, n, _) = check::gemm(a, ta, b, tb, beta, c.as_ref())?;
        if m == 0 || n == 0 {
            return Ok(Array2::zeros((m, n)));
        }
        let gpu = &self.gpu;
        let (da, ta) = upload_operand(gpu, a, ta)?;
        let (db, tb) = upload_operand(gpu, b, tb)?;
        let mut dc = match c {
            Some(c) if beta != T::zero() => gpu.upload(c)?,
            _ => gpu.alloc_matrix("gemm", m, n)?,
        };
        self.gemm_device(alpha, &da, ta, &db, tb, beta, &mut dc)?;
        gpu.download(&dc)
    }

    fn gram(&self, m: ArrayView2<T>) -> Result<Array2<T>> {
        let n = m.nrows();
        if n == 0 {
            return Ok(Array2::zeros((0, 0)));
        }
        let gpu = &self.gpu;
        let dm = gpu.upload(m)?;
        let mut out = gpu.alloc_matrix("gram", n, n)?;
        self.gram_device(&dm, &mut out)?;
        gpu.download(&out)
    }
}
