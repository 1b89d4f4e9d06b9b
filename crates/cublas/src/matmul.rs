//! GEMM through cuBLAS.

use cudarc::cublas::sys::{self as blas, cublasHandle_t, cublasMath_t};
use ndgpu_core::{DType, Family, Gemm, MatMulKernels, Matrix, Precision, Result, Trans};
use ndgpu_core::{Needs, Variant};

use crate::layout::{col_major_gemm, op};
use crate::{error, i64_of, ptr, ptr_mut, BlasElement, CublasBackend};

/// The variant on TF32 tensor cores (for f32).
pub const TF32: &str = "gemm_tf32";

/// Variants, default first.
pub const VARIANTS: &[Variant] = &[
    Variant::new(
        "gemm",
        "cuBLAS SGEMM/DGEMM in the default math mode (no TF32), row-major handled without \
         copies by computing Cᵀ = op(B)ᵀ·op(A)ᵀ",
    ),
    Variant::new(
        TF32,
        "opt-in: SGEMM with CUBLAS_TF32_TENSOR_OP_MATH for that call only (operands rounded \
         to 10 mantissa bits, bound tolerance::gemm_tf32); f64 runs plain DGEMM",
    )
    .precision(Precision::Tf32)
    .needs(Needs::Sm80),
];

/// What every variant shares.
pub const NOTE: &str = "";

impl<T: BlasElement> MatMulKernels<T> for CublasBackend {
    /// `C ← α·op(A)·op(B) + β·C` with the selected [`Family::MatMul`] variant; row-major
    /// handled without copies. With β = 0, C is not read (NaN in it does not propagate).
    fn gemm_unchecked(&self, g: Gemm<T>, ab: [&Matrix<T>; 2], c: &mut Matrix<T>) -> Result<()> {
        let [a, b] = ab;
        let (m, n) = c.dim();
        let (gpu, here) = (&self.gpu, self.here());
        let a = gpu.dm(here, "gemm", "A", a)?;
        let b = gpu.dm(here, "gemm", "B", b)?;
        let c = gpu.dm_mut(here, "gemm", "C", c)?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        let tf32 =
            T::DTYPE == DType::F32 && self.variants.precision(Family::MatMul) == Precision::Tf32;
        let h = self.blas()?;
        let (pa, pb, pc) = (
            ptr(gpu, &a.data),
            ptr(gpu, &b.data),
            ptr_mut(gpu, &mut c.data),
        );
        let (alpha, beta, ta, tb) = (g.alpha, g.beta, g.ta, g.tb);
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

    fn gram_unchecked(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        self.gram_device(m)
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
