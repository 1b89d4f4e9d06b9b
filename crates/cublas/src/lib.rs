//! # ndgpu-cublas
//!
//! ndgpu's vendor backend: the same traits as the hand-written `ndgpu-cuda`, computed by
//! cuBLAS and cuSOLVER, on the same runtime (`ndgpu-cuda-runtime`: one [`Gpu`] per
//! device, shared, so the two backends read each other's resident arrays). It is the
//! yardstick the hand-written kernels are measured against.
//!
//! | family | variants (default first) | what runs |
//! |---|---|---|
//! | matmul | `gemm`, `gemm_tf32` | `{S,D}GEMM`; `gemm_tf32` opts into TF32 tensor cores (f32 only) |
//! | gram | `syrk`, `gemm` | `{S,D}SYRK` (or GEMM) + an exact mirror with GEAM and COPY |
//! | transpose | `geam` | `{S,D}GEAM` with `C = Aᵀ` |
//! | reduce | `cublas` | sum: GEMV/DOT with ones; sum of squares, dot: DOT; min, max, arg*: the runtime's kernels (cuBLAS has none) |
//! | cholesky | see `ndgpu info` | cuSOLVER `potrf` (LOWER on a transposed copy, or UPPER in place; 32- or 64-bit API), solves by two TRSMs or `potrs` |
//! | kmeans | `gemm` | distances by GEMM; argmin and centroid update: the runtime's kernels |
//! | trsm | `trsm` | `{S,D}TRSM` from the right on B's row-major buffer in place (the triangle flipped) |
//! | lu | `getrf` | cuSOLVER `cusolverDnXgetrf` (64-bit API) on a column-major copy; solves: row swaps and two TRSMs from the right |
//! | qr | `geqrf` | cuSOLVER `cusolverDnXgeqrf` (64-bit API) on a column-major copy; Q applied by `{S,D}ORMQR` from the right; lstsq: ORMQR and one TRSM |
//! | spectra | `syevd_gesvdj`, `syevd_gesvd`, `syevd_upper_gesvdj` | eigh: cuSOLVER `cusolverDnXsyevd` (64-bit API) on a copy; svd: `{S,D}gesvdj` with a fallback to `cusolverDnXgesvd`, or `cusolverDnXgesvd` alone |
//!
//! The libraries are loaded at run time: the crate builds, and its tests pass, on
//! machines without CUDA, where [`CublasBackend::new`] returns
//! [`Error::Unavailable`](ndgpu_core::Error::Unavailable).
//!
//! ```no_run
//! use ndgpu_core::{Backend, Family, Gemm, MatMul, Memory, Trans};
//! let mut vendor = ndgpu_cublas::CublasBackend::new(0)?; // an error value without a GPU
//! vendor.set_variant(Family::MatMul, "gemm_tf32")?;
//! let a = vendor.upload(ndarray::Array2::<f32>::ones((64, 32)).view())?;
//! let mut c = vendor.alloc(64, 64)?;
//! vendor.gemm_dev(Gemm::new().tb(Trans::Yes), &a, &a, &mut c)?; // A·Aᵀ on the device
//! assert_eq!(vendor.download(&c)?[[0, 0]], 32.0);
//! # Ok::<(), ndgpu_core::Error>(())
//! ```
#![warn(missing_docs)]

mod cholesky;
mod element;
mod error;
mod factor;
mod gram;
mod kmeans;
pub mod layout;
mod library;
mod lu;
mod matmul;
mod qr;
mod reduce;
mod spectra;
mod transpose;
mod trsm;

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use ndgpu_core::backend::Here;
use ndgpu_core::{Backend, Family, Ladder, Result, Variant, Variants};
use ndgpu_cuda_runtime::{CudaElement, Gpu};

pub use element::BlasElement;
pub use error::VendorError;
pub use library::{probe_libraries, versions};

use library::{BlasHandle, SolverHandle};

/// The vendor backend: cuBLAS and cuSOLVER on one device.
///
/// `Send + Sync`: the library handles sit behind mutexes, and every call makes the
/// device's context current on the calling thread first.
pub struct CublasBackend {
    // Declared first so that they are dropped before the device they live on.
    blas: Mutex<BlasHandle>,
    solver: Mutex<SolverHandle>,
    gpu: Arc<Gpu>,
    variants: Variants,
    versions: (String, String),
}

impl std::fmt::Debug for CublasBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CublasBackend")
            .field("gpu", &self.gpu)
            .field("versions", &self.versions)
            .field("variants", &self.variants)
            .finish()
    }
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<CublasBackend>();
};

/// The note on the whole backend that `ndgpu info` shows after the families' notes.
const DETERMINISM: &str = "determinism: cuBLAS and cuSOLVER give the same bits run to run on one \
     GPU model with one library version (NVIDIA's reproducibility statement, atomics off, \
     which is the default); not across architectures or versions";

impl CublasBackend {
    /// The variants of every family, default first, and their precisions: known without
    /// a device.
    pub fn variant_table() -> Variants {
        let ladder = |f, rows: &[Variant], note| Ladder::new(f, rows.iter().copied(), note);
        let ladders = vec![
            ladder(Family::MatMul, matmul::VARIANTS, matmul::NOTE),
            ladder(Family::Gram, gram::VARIANTS, gram::NOTE),
            ladder(Family::Transpose, transpose::VARIANTS, transpose::NOTE),
            ladder(Family::Reduce, reduce::VARIANTS, reduce::NOTE),
            ladder(Family::Cholesky, cholesky::VARIANTS, cholesky::NOTE),
            ladder(Family::KMeans, kmeans::VARIANTS, kmeans::NOTE),
            ladder(Family::Trsm, trsm::VARIANTS, trsm::NOTE),
            ladder(Family::Lu, lu::VARIANTS, lu::NOTE),
            ladder(Family::Qr, qr::VARIANTS, qr::NOTE),
            ladder(Family::Spectra, spectra::VARIANTS, spectra::NOTE),
        ];
        Variants::new(error::BACKEND, ladders).with_notes(&[DETERMINISM])
    }

    /// Opens device `ordinal`, on the runtime every backend of that device shares.
    ///
    /// # Errors
    /// [`ndgpu_core::Error::Unavailable`] with the reason when there is no driver, no
    /// device, no NVRTC (needed by the runtime's kernels it launches), or no usable
    /// cuBLAS / cuSOLVER.
    pub fn new(ordinal: usize) -> Result<Self> {
        ndgpu_cuda_runtime::probe().map_err(error::unavailable)?;
        probe_libraries().map_err(error::unavailable)?;
        let gpu = Gpu::shared(ordinal).map_err(|e| match e {
            ndgpu_core::Error::Unavailable { reason, .. } => error::unavailable(reason),
            other => other,
        })?;
        Self::with_gpu(gpu)
    }

    /// A backend on a given runtime.
    ///
    /// # Errors
    /// [`ndgpu_core::Error::Unavailable`] when cuBLAS or cuSOLVER is missing, too old,
    /// or cannot create a handle on this device.
    pub fn with_gpu(gpu: Arc<Gpu>) -> Result<Self> {
        probe_libraries().map_err(error::unavailable)?;
        let versions = versions()?;
        let blas = BlasHandle::new(&gpu)?;
        let solver = SolverHandle::new(&gpu)?;
        let variants = Self::variant_table();
        Ok(CublasBackend {
            blas: Mutex::new(blas),
            solver: Mutex::new(solver),
            gpu,
            variants,
            versions,
        })
    }

    /// The runtime.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The place check of this backend's operands.
    fn here(&self) -> Here {
        self.gpu.here(error::BACKEND)
    }

    /// The cuBLAS and cuSOLVER versions in use.
    pub fn library_versions(&self) -> (&str, &str) {
        (&self.versions.0, &self.versions.1)
    }

    /// The cuBLAS handle, with the device's context made current on this thread.
    fn blas(&self) -> Result<MutexGuard<'_, BlasHandle>> {
        self.bind()?;
        Ok(self.blas.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The cuSOLVER handle, with the device's context made current on this thread.
    fn solver(&self) -> Result<MutexGuard<'_, SolverHandle>> {
        self.bind()?;
        Ok(self.solver.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn bind(&self) -> Result<()> {
        self.gpu
            .context()
            .bind_to_thread()
            .map_err(|e| error::driver("making the context current", e))
    }

    /// Sets `s` to zero (all bits clear is 0.0 for f32 and f64).
    fn zero<T: CudaElement>(&self, s: &mut CudaSlice<T>) -> Result<()> {
        self.gpu
            .stream()
            .memset_zeros(s)
            .map_err(|e| error::driver("clearing a buffer", e))
    }
}

/// The device address of a buffer as a pointer for a library call.
///
/// The `SyncOnDrop` guard cudarc returns is dropped at once: [`Gpu`] turns cudarc's
/// event tracking off because all of its work, the libraries' included (their handles
/// are set to its stream), is ordered on one stream.
pub(crate) fn ptr<T>(gpu: &Gpu, s: &CudaSlice<T>) -> *const T {
    let (p, _sync) = s.device_ptr(gpu.stream());
    p as *const T
}

/// As [`ptr`], for a buffer the call writes.
pub(crate) fn ptr_mut<T>(gpu: &Gpu, s: &mut CudaSlice<T>) -> *mut T {
    let (p, _sync) = s.device_ptr_mut(gpu.stream());
    p as *mut T
}

/// A dimension as the 64-bit integer of cuBLAS' `_64` interface.
pub(crate) fn i64_of(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

ndgpu_cuda_runtime::impl_device_memory!(CublasBackend);

ndgpu_core::impl_kernels!(CublasBackend, BlasElement: matmul, transpose, reduce, factorize, cluster);

impl Backend for CublasBackend {
    fn description(&self) -> String {
        let (_, total) = self.gpu.mem_info().unwrap_or((0, 0));
        format!(
            "cuBLAS {} and cuSOLVER {} on {} ({}, {:.0} GiB)",
            self.versions.0,
            self.versions.1,
            self.gpu.name(),
            self.gpu.arch(),
            total as f64 / (1u64 << 30) as f64,
        )
    }
    fn variant_table(&self) -> &Variants {
        &self.variants
    }
    fn variant_table_mut(&mut self) -> &mut Variants {
        &mut self.variants
    }
}
