//! M·Mᵀ ladder. (Stub: being written.)
use ndgpu_core::{Error, Result};

use crate::{CudaElement, DeviceMatrix, Gpu};

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["naive"];
/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[];
/// Determinism and scope.
pub const NOTE: &str = "gram: (being written)";

/// `out ← m·mᵀ` (n×n for an n×k `m`) on resident data with the named variant.
///
/// # Errors
/// Shape mismatch, unknown variant, device errors.
pub fn gram<T: CudaElement>(
    _gpu: &Gpu,
    _variant: &str,
    _m: &DeviceMatrix<T>,
    _out: &mut DeviceMatrix<T>,
) -> Result<()> {
    Err(Error::invalid("gram", "not yet written"))
}
