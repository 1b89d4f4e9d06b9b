//! Indices resident on a device: k-means labels and the results of per-axis arg
//! reductions.

use std::sync::Arc;

use cudarc::driver::CudaSlice;
use ndgpu_core::backend::Storage;
use ndgpu_core::{Error, Place, Result};

use crate::errors::driver;
use crate::gpu::Gpu;

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

    /// The first `len` indices, on the host, widened as they arrive (through the pinned
    /// ring for large ones).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an index never assigned (negative); driver errors.
    pub fn download_indices(&self, i: &IndexStorage, len: usize) -> Result<Vec<usize>> {
        let mut out = ndgpu_core::host::filled_vec("download", len, 0usize)?;
        let base = Shared(out.as_mut_ptr());
        match &i.data {
            DeviceIndices::I32(s) => self.download_chunks(s, len, |lo, c| {
                // SAFETY: out holds len entries; chunks are disjoint, one thread each.
                unsafe { base.fill(lo, c.iter().map(|&v| i64::from(v))) }
            })?,
            DeviceIndices::I64(s) => self.download_chunks(s, len, |lo, c| {
                // SAFETY: as above.
                unsafe { base.fill(lo, c.iter().copied()) }
            })?,
        }
        Ok(out)
    }
}

/// The host vector the download threads widen their chunks into.
#[derive(Clone, Copy)]
struct Shared(*mut usize);
// SAFETY: each thread writes a disjoint range (one chunk), and the vector outlives them.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// Writes `values` from entry `lo` on, refusing negative ones.
    ///
    /// # Safety
    /// Entries `lo..lo + values.len()` exist and no other thread writes them.
    unsafe fn fill(&self, lo: usize, values: impl ExactSizeIterator<Item = i64>) -> Result<()> {
        let out = std::slice::from_raw_parts_mut(self.0.add(lo), values.len());
        for (k, (o, v)) in out.iter_mut().zip(values).enumerate() {
            *o = usize::try_from(v).map_err(|_| {
                Error::invalid(
                    "download",
                    format!("index {} was never assigned ({v})", lo + k),
                )
            })?;
        }
        Ok(())
    }
}
