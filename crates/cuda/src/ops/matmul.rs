//! GEMM ladder. (Stub: being written.)
use ndarray::{Array2, ArrayView2};
use ndgpu_core::{Error, MatMul, Result, Trans};

use crate::{CudaBackend, CudaElement, DeviceMatrix, Gpu};

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["naive"];
/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[];
/// Determinism and scope.
pub const NOTE: &str = "matmul: (being written)";

/// `C ← alpha·op(A)·op(B) + beta·C` on resident data with the named variant.
///
/// # Errors
/// Shape mismatch, unknown variant, device errors.
#[allow(clippy::too_many_arguments)]
pub fn gemm<T: CudaElement>(
    _gpu: &Gpu,
    _variant: &str,
    _alpha: T,
    _a: &DeviceMatrix<T>,
    _ta: Trans,
    _b: &DeviceMatrix<T>,
    _tb: Trans,
    _beta: T,
    _c: &mut DeviceMatrix<T>,
) -> Result<()> {
    Err(Error::invalid("gemm", "not yet written"))
}

impl<T: CudaElement> MatMul<T> for CudaBackend {
    fn gemm(
        &self,
        _alpha: T,
        _a: ArrayView2<T>,
        _ta: Trans,
        _b: ArrayView2<T>,
        _tb: Trans,
        _beta: T,
        _c: Option<ArrayView2<T>>,
    ) -> Result<Array2<T>> {
        Err(Error::invalid("gemm", "not yet written"))
    }
    fn gram(&self, _m: ArrayView2<T>) -> Result<Array2<T>> {
        Err(Error::invalid("gram", "not yet written"))
    }
}
