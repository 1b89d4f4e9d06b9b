//! The launch configuration of the k-means kernels (`kernels/kmeans.cu`) and their
//! lookup by name.

use cudarc::driver::{CudaFunction, LaunchConfig};
use ndgpu_core::Result;

use crate::gpu::Gpu;
use crate::kernels::KernelFile;

/// Threads of every k-means kernel.
pub const THREADS: u32 = 256;

/// A launch configuration of the k-means kernels.
pub fn cfg(grid: (u32, u32, u32), shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: grid,
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: shared,
    }
}

/// A k-means kernel and its name.
///
/// # Errors
/// NVRTC and driver errors.
pub fn kernel(gpu: &Gpu, name: impl Into<String>) -> Result<(CudaFunction, String)> {
    let name = name.into();
    Ok((gpu.function(KernelFile::KMEANS, &name)?, name))
}
