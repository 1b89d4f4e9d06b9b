//! Transpose ladder. (Stub: being written.)
use ndarray::{Array2, ArrayView2};
use ndgpu_core::{Error, Result, Transpose};

use crate::{CudaBackend, CudaElement, DeviceMatrix, Gpu};

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["naive"];
/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[];
/// Determinism and scope.
pub const NOTE: &str = "transpose: (being written)";

/// `out ← aᵀ` on resident data with the named variant.
///
/// # Errors
/// Shape mismatch, unknown variant, device errors.
pub fn transpose<T: CudaElement>(
    _gpu: &Gpu,
    _variant: &str,
    _a: &DeviceMatrix<T>,
    _out: &mut DeviceMatrix<T>,
) -> Result<()> {
    Err(Error::invalid("transpose", "not yet written"))
}

impl<T: CudaElement> Transpose<T> for CudaBackend {
    fn transpose(&self, _a: ArrayView2<T>) -> Result<Array2<T>> {
        Err(Error::invalid("transpose", "not yet written"))
    }
}
