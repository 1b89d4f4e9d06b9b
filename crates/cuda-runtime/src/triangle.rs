//! What both backends' factorizations need around the factor (`kernels/triangle.cu`):
//! zeroing its strict upper triangle, and the factorization's status read back once.

use crate::push_args;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use ndgpu_core::{check, Result};

use crate::kernels::KernelFile;
use crate::launch::{blocks, dim_i32, launched, linear};
use crate::{CudaElement, DeviceMatrix, Gpu};

/// Zeroes the strict upper triangle of the square matrix `a` (`triangle_zero_upper_*`).
///
/// # Errors
/// [`ndgpu_core::Error::NotSquare`]; dimensions beyond the kernel's 32-bit indices;
/// driver errors.
pub fn zero_upper<T: CudaElement>(gpu: &Gpu, a: &mut DeviceMatrix<T>) -> Result<()> {
    let n = check::square_dim("cholesky", a.dim())?;
    if n < 2 {
        return Ok(());
    }
    let ni = dim_i32("cholesky", n)?;
    let name = crate::kernel!("triangle_zero_upper").of::<T>();
    let f = gpu.function(KernelFile::TRIANGLE, name)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks(n, 256), (n as u32).min(65535), 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &mut a.data, &ni);
    // SAFETY: (T* a, int n): a holds n×n elements (square, checked); rows beyond
    // gridDim.y and columns beyond the grid are walked by the kernel's loops, and every
    // access is inside the n×n matrix.
    launched(name, unsafe { b.launch(cfg) })
}

/// What a factorization left, from one read: the library's `info`, and where it is 0
/// the first non-finite entry of the factor's diagonal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactorStatus {
    /// The library's `info` (0: success; p + 1: pivot p failed; negative: an illegal
    /// argument).
    pub info: i32,
    /// The first p with a non-finite `a[p][p]`, where `info` is 0.
    pub nonfinite: Option<usize>,
}

/// Reads `info` (one device `int`) and scans the diagonal of the square `a` for a
/// non-finite entry, on the device, then reads both back at once: the one
/// synchronisation of a factorization (`triangle_factor_status_*`).
///
/// # Errors
/// [`ndgpu_core::Error::NotSquare`]; dimensions beyond the kernel's 32-bit indices;
/// driver errors, including faults of the factorization queued before.
pub fn factor_status<T: CudaElement>(
    gpu: &Gpu,
    info: &CudaSlice<i32>,
    a: &DeviceMatrix<T>,
) -> Result<FactorStatus> {
    let n = check::square_dim("cholesky", a.dim())?;
    let ni = dim_i32("cholesky", n)?;
    let mut out = gpu.alloc_zeroed::<i32>("cholesky", 2)?;
    let name = crate::kernel!("triangle_factor_status").of::<T>();
    let f = gpu.function(KernelFile::TRIANGLE, name)?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; info, &a.data, &ni, &mut out);
    // SAFETY: (const int* info, const T* a, int n, int* out): info holds one int, a
    // n×n elements (square, checked), out two; one block reads a[p·(n + 1)] for p < n.
    launched(name, unsafe { b.launch(linear(1, 256)) })?;
    let out = gpu.download_slice(&out, 2)?;
    Ok(FactorStatus {
        info: out[0],
        nonfinite: usize::try_from(out[1]).ok(),
    })
}
