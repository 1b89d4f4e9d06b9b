//! The vendor libraries' failures, turned into [`ndgpu_core::Error`] values.

use std::ffi::CStr;

use cudarc::cublas::sys::{self as blas, cublasStatus_t};
use cudarc::cusolver::sys::cusolverStatus_t;
use cudarc::driver::DriverError;
use ndgpu_core::Error;

/// The backend name every error of this crate carries.
pub(crate) const BACKEND: &str = "cublas";

/// What went wrong inside cuBLAS, cuSOLVER or the driver calls this crate makes.
#[derive(Debug, thiserror::Error)]
pub enum VendorError {
    /// A cuBLAS routine returned a status other than success.
    #[error("cuBLAS returned {name}: {text}")]
    Cublas {
        /// The status' name (`CUBLAS_STATUS_...`).
        name: String,
        /// cuBLAS' own description of it.
        text: String,
    },
    /// A cuSOLVER routine returned a status other than success.
    #[error("cuSOLVER returned {0:?}")]
    Cusolver(cusolverStatus_t),
    /// A cuSOLVER routine reported an illegal argument through its `info` output.
    #[error("cuSOLVER {routine} rejected argument {arg} (info = -{arg})")]
    IllegalArgument {
        /// The routine.
        routine: &'static str,
        /// The 1-based position of the argument.
        arg: i32,
    },
    /// A driver call (memset, copy, binding the context) failed.
    #[error("CUDA driver: {0}")]
    Driver(DriverError),
}

/// `Ok` on success, else a backend error saying what was being done.
pub(crate) fn cublas(status: cublasStatus_t, doing: &str) -> ndgpu_core::Result<()> {
    if status == cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: a status only comes back from a loaded libcublas; both functions return
    // pointers to static NUL-terminated strings (or null, checked).
    let (name, text) = unsafe {
        let name = blas::cublasGetStatusName(status);
        let text = blas::cublasGetStatusString(status);
        let read = |p: *const std::ffi::c_char| {
            if p.is_null() {
                format!("{status:?}")
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        (read(name), read(text))
    };
    Err(Error::backend(
        BACKEND,
        doing,
        VendorError::Cublas { name, text },
    ))
}

/// `Ok` on success, else a backend error saying what was being done.
pub(crate) fn cusolver(status: cusolverStatus_t, doing: &str) -> ndgpu_core::Result<()> {
    if status == cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
        return Ok(());
    }
    Err(Error::backend(
        BACKEND,
        doing,
        VendorError::Cusolver(status),
    ))
}

/// Wraps a driver error.
pub(crate) fn driver(doing: &str, e: DriverError) -> Error {
    Error::backend(BACKEND, doing, VendorError::Driver(e))
}

/// An [`Error::Unavailable`] of this backend.
pub(crate) fn unavailable(reason: impl Into<String>) -> Error {
    Error::Unavailable {
        backend: BACKEND.into(),
        reason: reason.into(),
    }
}

/// What `table` pairs with variant `name` of `family`, else
/// [`Error::UnknownVariant`](ndgpu_core::Error::UnknownVariant) listing `rows`.
pub(crate) fn pick<T: Copy>(
    (family, name): (ndgpu_core::Family, &str),
    rows: &[ndgpu_core::Variant],
    table: &[(&str, T)],
) -> ndgpu_core::Result<T> {
    let found = table.iter().find(|(n, _)| *n == name).map(|&(_, t)| t);
    found.ok_or_else(|| {
        let names = ndgpu_core::Variant::names(rows);
        ndgpu_core::Error::unknown_variant(BACKEND, family, name, &names)
    })
}
