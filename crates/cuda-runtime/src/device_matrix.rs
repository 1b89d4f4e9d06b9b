//! [`DeviceMatrix`]: a row-major matrix resident on a device, the storage behind a CUDA
//! backend's [`Matrix`](ndgpu_core::Matrix).

use std::sync::Arc;

use cudarc::driver::CudaSlice;
use ndgpu_core::backend::Storage;
use ndgpu_core::Place;

use crate::element::CudaElement;
use crate::gpu::Gpu;

/// A row-major matrix resident on a device: the storage behind a CUDA backend's
/// [`Matrix`](ndgpu_core::Matrix). It keeps its runtime alive: dropping every backend
/// first is safe, and a backend opened later on the same device finds the runtime (and
/// so reads the matrix).
#[derive(Debug)]
pub struct DeviceMatrix<T> {
    /// The elements, row-major (`len()` of them are meaningful; the buffer holds at
    /// least one element so that empty matrices have a valid pointer).
    pub data: CudaSlice<T>,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// The runtime, kept alive by the matrix.
    pub(crate) gpu: Arc<Gpu>,
}

impl<T> DeviceMatrix<T> {
    /// `(rows, cols)`.
    pub fn dim(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: CudaElement> Storage for DeviceMatrix<T> {
    fn place(&self) -> Place {
        self.gpu.place()
    }
}
