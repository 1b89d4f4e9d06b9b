//! Whether a CUDA device can be used here ([`probe`]), and CUDA driver errors turned
//! into [`ndgpu_core::Error`] values ([`describe`], [`driver`]).

use cudarc::driver::{sys, CudaContext, DriverError};
use ndgpu_core::Error;

use crate::kernels;

/// Why no CUDA device can be used here, or `Ok` if one can. Never panics: the
/// libraries are probed before any of their functions is called.
///
/// # Errors
/// A human-readable reason.
pub fn probe() -> std::result::Result<(), String> {
    // SAFETY: these only try to dlopen the libraries.
    if !unsafe { sys::is_culib_present() } {
        return Err("the CUDA driver library (libcuda.so) is not installed".into());
    }
    if !kernels::nvrtc_present() {
        return Err("NVRTC (libnvrtc.so) is not installed".into());
    }
    match CudaContext::device_count() {
        Ok(0) => Err("the CUDA driver found no device".into()),
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "the CUDA driver could not list devices: {}",
            describe(&e)
        )),
    }
}

/// The name and description of a driver error code.
pub fn describe(e: &DriverError) -> String {
    let name = e
        .error_name()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}: {text}")
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Driver(String);

/// Wraps a driver error as an ndgpu error.
pub fn driver(context: impl Into<String>, e: DriverError) -> Error {
    Error::backend("cuda", context, Driver(describe(&e)))
}
