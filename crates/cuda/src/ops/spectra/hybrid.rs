//! `hybrid`: A read back, converted to f64, decomposed by the faer backend's own
//! kernels (`self_adjoint_eigen` / `thin_svd`, which check the host copy for NaN and
//! ±Inf and name the entry), the results rounded to T and uploaded.

use ndarray::Array2;
use ndgpu_core::backend::host_matrix;
use ndgpu_core::{FactorizeKernels, Matrix, Memory, Result};
use ndgpu_cuda_runtime::CudaElement;
use ndgpu_faer::FaerBackend;

use super::{Eigh, Svd};
use crate::CudaBackend;

/// A resident A as an f64 host matrix the faer backend reads.
fn to_host<T: CudaElement>(b: &CudaBackend, a: &Matrix<T>) -> Result<Matrix<f64>> {
    let host: Array2<T> = b.download(a)?;
    Ok(host_matrix(host.mapv(|x| x.as_f64())))
}

/// A faer host result rounded to T and uploaded.
fn to_device<T: CudaElement>(
    b: &CudaBackend,
    f: &FaerBackend,
    m: &Matrix<f64>,
) -> Result<Matrix<T>> {
    let host: Array2<f64> = f.download(m)?;
    b.upload(host.mapv(T::from_f64).view())
}

/// `FactorizeKernels::eigh_unchecked` on the host.
///
/// # Errors
/// As the faer backend's; device errors.
pub(crate) fn eigh<T: CudaElement>(
    b: &CudaBackend,
    a: &Matrix<T>,
    vectors: bool,
) -> Result<Eigh<T>> {
    let f = FaerBackend::new();
    let (w, v) = f.eigh_unchecked(&to_host(b, a)?, vectors)?;
    let v = v.map(|v| to_device(b, &f, &v)).transpose()?;
    Ok((to_device(b, &f, &w)?, v))
}

/// `FactorizeKernels::svd_unchecked` on the host.
///
/// # Errors
/// As the faer backend's; device errors.
pub(crate) fn svd<T: CudaElement>(b: &CudaBackend, a: &Matrix<T>, vectors: bool) -> Result<Svd<T>> {
    let f = FaerBackend::new();
    let (s, uv) = f.svd_unchecked(&to_host(b, a)?, vectors)?;
    let uv = match uv {
        Some((u, vt)) => Some((to_device(b, &f, &u)?, to_device(b, &f, &vt)?)),
        None => None,
    };
    Ok((to_device(b, &f, &s)?, uv))
}
