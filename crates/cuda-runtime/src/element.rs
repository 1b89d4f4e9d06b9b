//! The element types with device kernels: [`CudaElement`], implemented for `f32` and
//! `f64`.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use ndgpu_core::Element;

/// An element type with device kernels: `f32` (suffix `f32`) or `f64` (suffix `f64`).
pub trait CudaElement: Element + DeviceRepr + ValidAsZeroBits + Unpin {
    /// Kernel name suffix: kernels are named `{op}_{technique}_{suffix}`.
    const SUFFIX: &'static str;
}
impl CudaElement for f32 {
    const SUFFIX: &'static str = "f32";
}
impl CudaElement for f64 {
    const SUFFIX: &'static str = "f64";
}
