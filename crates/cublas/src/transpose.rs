//! Out-of-place transpose through cuBLAS GEAM (`C = 1·Aᵀ + 0·B`).

use cudarc::cublas::sys::cublasOperation_t;
use ndgpu_core::Variant;
use ndgpu_core::{Error, Matrix, Result, TransposeKernels};
use ndgpu_cuda_runtime::DeviceMatrix;

use crate::{error, i64_of, ptr, ptr_mut, BlasElement, CublasBackend};

/// Variants, default first.
pub const VARIANTS: &[Variant] = &[Variant::new(
    "geam",
    "cuBLAS SGEAM/DGEAM with C = 1·Aᵀ + 0·C (cuBLAS' documented way to transpose); a pure \
     copy, so bitwise exact",
)];

/// What every variant shares.
pub const NOTE: &str = "";

impl CublasBackend {
    /// `out ← aᵀ` on resident data (`out` is cols×rows of `a`).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `out` has the wrong shape; cuBLAS errors.
    pub(crate) fn geam_transpose<T: BlasElement>(
        &self,
        a: &DeviceMatrix<T>,
        out: &mut DeviceMatrix<T>,
    ) -> Result<()> {
        let (r, c) = a.dim();
        if out.dim() != (c, r) {
            return Err(Error::shape(
                "transpose",
                format!("out is {}x{}, expected {c}x{r}", out.rows, out.cols),
            ));
        }
        if a.is_empty() {
            return Ok(());
        }
        let gpu = &self.gpu;
        let h = self.blas()?;
        let pa = ptr(gpu, &a.data);
        let pout = ptr_mut(gpu, &mut out.data);
        // Column-major, a's buffer is X = aᵀ (c×r, ld c) and out's is Y = out ᵀ = a
        // (r×c, ld r): Y = Xᵀ. B is out itself in GEAM's in-place form (transb = N,
        // ldb = ldc); with beta = 0 it is not read, as for cuBLAS' documented transpose.
        let (rr, cc) = (i64_of(r), i64_of(c));
        // SAFETY: a holds r×c elements, out c×r; the shapes match the arguments.
        let status = unsafe {
            T::geam(
                h.raw,
                cublasOperation_t::CUBLAS_OP_T,
                cublasOperation_t::CUBLAS_OP_N,
                rr,
                cc,
                &T::one(),
                pa,
                cc,
                &T::zero(),
                pout,
                rr,
                pout,
                rr,
            )
        };
        error::cublas(status, "transpose (geam)")
    }
}

impl<T: BlasElement> TransposeKernels<T> for CublasBackend {
    fn transpose_unchecked(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        let gpu = &self.gpu;
        let a = gpu.dm(self.here(), "transpose", "A", a)?;
        let mut out = gpu.alloc_matrix("transpose", a.cols, a.rows)?;
        self.geam_transpose(a, &mut out)?;
        Ok(gpu.matrix(out))
    }
}
