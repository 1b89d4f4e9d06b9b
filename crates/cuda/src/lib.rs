//! # ndgpu-cuda
//!
//! ndgpu's hand-written CUDA backend. Kernels live in `kernels/*.cu` (one file per op
//! family), are compiled at run time with NVRTC for the device's own architecture
//! (once per process, cached) and loaded lazily. Every optimisation step of the seed
//! reports is a selectable variant, so each rung can be measured against the vendor.
//!
//! The runtime ([`Gpu`], [`DeviceMatrix`]) is shared with the vendor backend
//! (`ndgpu-cublas`). Each op module offers device-level functions on resident data
//! (for chains of operations and for timing without transfers) and implements the
//! ndarray-level traits as upload → kernel → download.
//!
//! ```no_run
//! use ndgpu_core::{Backend, Family, MatMul};
//! let mut gpu = ndgpu_cuda::CudaBackend::new(0)?; // an error value, never a panic, without a GPU
//! gpu.set_variant(Family::MatMul, "tiled")?;
//! let a = ndarray::Array2::<f32>::ones((64, 32));
//! let c = gpu.matmul(a.view(), a.t())?;
//! assert_eq!(c[[0, 0]], 32.0);
//! # Ok::<(), ndgpu_core::Error>(())
//! ```
#![warn(missing_docs)]

pub mod kernels;
pub mod ops;
mod runtime;

use std::sync::Arc;

use ndgpu_core::{Backend, Family, Result, Variants};

pub use runtime::{blocks, dim_i32, probe, CudaElement, DeviceMatrix, Gpu};

/// The hand-written CUDA backend.
#[derive(Debug)]
pub struct CudaBackend {
    gpu: Arc<Gpu>,
    variants: Variants,
}

impl CudaBackend {
    /// Opens device `ordinal`.
    ///
    /// # Errors
    /// [`ndgpu_core::Error::Unavailable`] with the reason when there is no usable device
    /// (no driver, no device, no NVRTC).
    pub fn new(ordinal: usize) -> Result<Self> {
        Ok(Self::with_gpu(Gpu::new(ordinal)?))
    }

    /// A backend on an already opened device (several backends may share one).
    pub fn with_gpu(gpu: Arc<Gpu>) -> Self {
        let variants = Variants::new(
            "cuda",
            &[
                (Family::MatMul, ops::matmul::VARIANTS),
                (Family::Gram, ops::gram::VARIANTS),
                (Family::Transpose, ops::transpose::VARIANTS),
                (Family::Reduce, ops::reduce::VARIANTS),
                (Family::Cholesky, ops::cholesky::VARIANTS),
                (Family::KMeans, ops::kmeans::VARIANTS),
            ],
        );
        CudaBackend { gpu, variants }
    }

    /// The device.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }
    fn description(&self) -> String {
        let (_, total) = self.gpu.mem_info().unwrap_or((0, 0));
        format!(
            "hand-written kernels on {} ({}, {:.0} GiB), NVRTC {}",
            self.gpu.name(),
            self.gpu.arch(),
            total as f64 / (1u64 << 30) as f64,
            kernels::nvrtc_version()
                .map(|(a, b)| format!("{a}.{b}"))
                .unwrap_or_else(|| "?".into())
        )
    }
    fn variants(&self, family: Family) -> Vec<&'static str> {
        self.variants.list(family)
    }
    fn variant(&self, family: Family) -> &'static str {
        self.variants.current(family)
    }
    fn set_variant(&mut self, family: Family, name: &str) -> Result<()> {
        self.variants.set(family, name)
    }
    fn notes(&self) -> Vec<String> {
        ops::NOTES.iter().map(|s| s.to_string()).collect()
    }
}
