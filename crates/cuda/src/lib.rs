//! # ndgpu-cuda
//!
//! ndgpu's hand-written CUDA backend. Kernels live in `kernels/*.cu` (one file per op
//! family), are compiled at run time with NVRTC for the device's own architecture
//! when a kernel of the file is first launched, once per process, and kept in an
//! on-disk cache that later processes load instead of compiling
//! (`ndgpu_cuda_runtime::cache`). Every optimisation step of the
//! project's reference reports is a selectable variant, so each rung can be measured
//! against the vendor.
//!
//! It runs on the shared CUDA runtime (`ndgpu-cuda-runtime`): resident arrays made by
//! this backend are read by the vendor backend on the same device, and the other way
//! round.
//!
//! ```no_run
//! use ndgpu_core::{Backend, Family, MatMul, Memory};
//! let mut gpu = ndgpu_cuda::CudaBackend::new(0)?; // an error value, never a panic, without a GPU
//! gpu.set_variant(Family::MatMul, "tiled")?;
//! let a = gpu.upload(ndarray::Array2::<f32>::ones((64, 32)).view())?;
//! let g = gpu.gram_dev(&a)?; // stays on the device
//! assert_eq!(gpu.download(&g)?[[0, 0]], 32.0);
//! # Ok::<(), ndgpu_core::Error>(())
//! ```
#![warn(missing_docs)]

mod ops;

use std::sync::Arc;

use ndgpu_core::backend::Here;
use ndgpu_core::{Backend, DType, Family, Ladder, Result, Variant, Variants};
use ndgpu_cuda_runtime::kernels;

pub use ndgpu_cuda_runtime::Gpu;
pub use ops::default_kernels;
pub use ops::gram::gram_row_limit;

/// The backend's name.
const NAME: &str = "cuda";

/// The hand-written CUDA backend.
#[derive(Debug)]
pub struct CudaBackend {
    gpu: Arc<Gpu>,
    variants: Variants,
}

impl CudaBackend {
    /// Opens device `ordinal`, on the runtime every backend of that device shares.
    ///
    /// # Errors
    /// [`ndgpu_core::Error::Unavailable`] with the reason when there is no usable device
    /// (no driver, no device, no NVRTC).
    pub fn new(ordinal: usize) -> Result<Self> {
        Ok(Self::with_gpu(Gpu::shared(ordinal)?))
    }

    /// A backend on a given runtime.
    pub fn with_gpu(gpu: Arc<Gpu>) -> Self {
        let variants = Self::variant_table();
        CudaBackend { gpu, variants }
    }

    /// The variants of every family, default first, one typed row each (name,
    /// precision, what it needs of the device, reproducibility, note): known without a
    /// device.
    pub fn variant_table() -> Variants {
        let rows = |r: &[Variant]| r.to_vec();
        Variants::new(
            NAME,
            vec![
                Ladder::new(Family::MatMul, ops::matmul::variants(), ops::matmul::NOTE),
                Ladder::new(Family::Gram, ops::gram::variants(), ops::gram::NOTE),
                Ladder::new(
                    Family::Transpose,
                    ops::transpose::variants(),
                    ops::transpose::NOTE,
                ),
                Ladder::new(
                    Family::Reduce,
                    rows(ops::reduce::VARIANTS),
                    ops::reduce::NOTE,
                ),
                Ladder::new(
                    Family::Cholesky,
                    rows(ops::cholesky::VARIANTS),
                    ops::cholesky::NOTE,
                ),
                Ladder::new(
                    Family::KMeans,
                    rows(ops::kmeans::VARIANTS),
                    ops::kmeans::NOTE,
                ),
                Ladder::new(Family::Trsm, rows(ops::trsm::VARIANTS), ops::trsm::NOTE),
                Ladder::new(Family::Lu, rows(ops::lu::VARIANTS), ops::lu::NOTE),
                Ladder::new(Family::Qr, rows(ops::qr::VARIANTS), ops::qr::NOTE),
                Ladder::new(
                    Family::Spectra,
                    rows(ops::spectra::VARIANTS),
                    ops::spectra::NOTE,
                ),
            ],
        )
    }

    /// The runtime.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Whether the defaults of matmul and gram may run `dtype` on FP64 tensor cores: f64
    /// on a device with them.
    fn fp64_tensor_cores(&self, dtype: DType) -> bool {
        dtype == DType::F64 && ops::matmul::has_tensor_cores(&self.gpu)
    }

    /// The place check of this backend's operands.
    fn here(&self) -> Here {
        self.gpu.here(NAME)
    }
}

ndgpu_cuda_runtime::impl_device_memory!(CudaBackend);

ndgpu_core::impl_kernels!(CudaBackend, ndgpu_cuda_runtime::CudaElement: matmul, transpose, reduce, factorize, cluster);

impl Backend for CudaBackend {
    fn description(&self) -> String {
        let (_, total) = self.gpu.mem_info().unwrap_or((0, 0));
        format!(
            "hand-written kernels on {} ({}, {:.0} GiB), NVRTC {}; {}",
            self.gpu.name(),
            self.gpu.arch(),
            total as f64 / (1u64 << 30) as f64,
            kernels::nvrtc_version()
                .map(|(a, b)| format!("{a}.{b}"))
                .unwrap_or_else(|| "?".into()),
            ops::dispatch::describe(self.gpu.arch())
        )
    }
    fn variant_table(&self) -> &Variants {
        &self.variants
    }
    fn variant_table_mut(&mut self) -> &mut Variants {
        &mut self.variants
    }
    /// matmul's `split_k` (whether, and into how many slices, K is cut), gram's
    /// `stream_k` (one block per tile, or how the K-steps are dealt out) and k-means'
    /// `tensor_core` (which kernel, or `fused`).
    fn plan(&self, family: Family, dtype: DType, dims: &[usize]) -> Option<String> {
        let dev = ops::dispatch::Dev::of(&self.gpu).ok()?;
        let variant = self.variant(family);
        match (family, dims) {
            (Family::MatMul, &[m, n, k]) => {
                ops::matmul::plan(variant, self.fp64_tensor_cores(dtype), dev, (m, n, k))
            }
            (Family::Gram, &[n, k]) => {
                ops::gram::plan(variant, dtype, self.fp64_tensor_cores(dtype), dev, (n, k))
            }
            (Family::KMeans, &[n, d, k]) => {
                let tc = self.runs_here(Family::MatMul, "tensor_core");
                let optin = self.gpu.shared_memory_optin().ok()?;
                ops::kmeans::plan(variant, dtype, (tc, dev.sms, optin), (n, d, k))
            }
            _ => None,
        }
    }
}
