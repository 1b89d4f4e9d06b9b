//! Indices resident on a device: k-means labels and the results of per-axis arg
//! reductions.

use std::sync::Arc;

use cudarc::driver::CudaSlice;
use ndgpu_core::backend::Storage;
use ndgpu_core::{Error, Place, Result};

use crate::gpu::{driver, Gpu};

/// Indices resident on a device: the storage behind a CUDA backend's
/// [`Indices`](ndgpu_core::Indices). k-means labels are 32-bit (−1: no label yet), the
/// results of per-axis arg reductions 64-bit, as the kernels write them.
#[derive(Debug)]
pub enum DeviceIndices {
    /// 32-bit indices.
    I32(CudaSlice<i32>),
    /// 64-bit indices.
    I64(CudaSlice<i64>),
}

/// [`DeviceIndices`] with their place.
#[derive(Debug)]
pub struct IndexStorage {
    /// The indices (the buffer holds at least one).
    pub data: DeviceIndices,
    /// The runtime, kept alive by the indices.
    gpu: Arc<Gpu>,
}

impl IndexStorage {
    /// The 32-bit labels of a k-means step.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for the 64-bit indices of an arg reduction.
    pub fn labels(&self) -> Result<&CudaSlice<i32>> {
        match &self.data {
            DeviceIndices::I32(l) => Ok(l),
            DeviceIndices::I64(_) => Err(not_labels()),
        }
    }

    /// As [`IndexStorage::labels`], for labels a step writes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for the 64-bit indices of an arg reduction.
    pub fn labels_mut(&mut self) -> Result<&mut CudaSlice<i32>> {
        match &mut self.data {
            DeviceIndices::I32(l) => Ok(l),
            DeviceIndices::I64(_) => Err(not_labels()),
        }
    }
}

fn not_labels() -> Error {
    Error::invalid(
        "kmeans",
        "labels: these indices come from an arg reduction, not from `unlabeled`, \
         `predict_dev` or `kmeans_dev`: they cannot hold k-means labels",
    )
}

impl Storage for IndexStorage {
    fn place(&self) -> Place {
        self.gpu.place()
    }
}

impl Gpu {
    /// Indices on this device.
    pub fn indices(&self, data: DeviceIndices) -> IndexStorage {
        IndexStorage {
            data,
            gpu: self.handle(),
        }
    }

    /// `n` 32-bit labels set to −1 (no label yet).
    ///
    /// # Errors
    /// Out of memory; driver errors.
    pub fn unlabeled(&self, n: usize) -> Result<IndexStorage> {
        let mut labels = self.alloc::<i32>("kmeans", n)?;
        // Event tracking is off (see Gpu::new): the guard cudarc returns does nothing.
        let ptr = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut labels, self.stream()).0;
        // SAFETY: the buffer holds max(n, 1) i32 = 4·max(n, 1) bytes, all set to 0xFF
        // (−1 in two's complement) on the compute stream, where the buffer is used next.
        unsafe {
            cudarc::driver::result::memset_d8_async(
                ptr,
                0xFF,
                4 * n.max(1),
                self.stream().cu_stream(),
            )
        }
        .map_err(|e| driver("kmeans: setting the labels to -1", e))?;
        Ok(self.indices(DeviceIndices::I32(labels)))
    }

    /// The first `len` indices, on the host.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an index never assigned (negative); driver errors.
    pub fn download_indices(&self, i: &IndexStorage, len: usize) -> Result<Vec<usize>> {
        let wide = |at: usize, v: i64| {
            usize::try_from(v).map_err(|_| {
                Error::invalid("download", format!("index {at} was never assigned ({v})"))
            })
        };
        // Into a vector of the final size: collecting `Result`s gives no size hint, and
        // growing by doubling costs more than the copy itself.
        let mut out = ndgpu_core::host::with_capacity("download", len)?;
        match &i.data {
            DeviceIndices::I32(s) => {
                for (at, v) in self.download_slice(s, len)?.into_iter().enumerate() {
                    out.push(wide(at, i64::from(v))?);
                }
            }
            DeviceIndices::I64(s) => {
                for (at, v) in self.download_slice(s, len)?.into_iter().enumerate() {
                    out.push(wide(at, v)?);
                }
            }
        }
        Ok(out)
    }
}
