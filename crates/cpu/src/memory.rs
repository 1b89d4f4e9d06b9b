//! Resident arrays of the reference: row-major `Vec`s in host memory
//! ([`HostStorage`](ndgpu_core::backend::HostStorage)), shared with every host backend,
//! and the backend's clock.

use ndarray::Array2;
use ndgpu_core::{backend, Element, Matrix};

use crate::{CpuBackend, HERE};

ndgpu_core::impl_host_memory!(CpuBackend, HERE);

/// A host matrix of `T` from an f64 computation, rounded once per element.
pub(crate) fn rounded<T: Element>(a: &Array2<f64>) -> Matrix<T> {
    backend::host_matrix(a.mapv(T::from_f64))
}
