//! Clearing a triangle: the factors of both backends' Cholesky variants promise a zero
//! strict upper triangle, and cuSOLVER leaves the input's values there.

use crate::push_args;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use ndgpu_core::{check, Result};

use crate::kernels::KernelFile;
use crate::launch::{blocks, dim_i32, launched};
use crate::{CudaElement, DeviceMatrix, Gpu};

/// Zeroes the strict upper triangle of the square matrix `a` (`cholesky_zero_upper_*`).
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
    let name = crate::kernel!("cholesky_zero_upper").of::<T>();
    let f = gpu.function(KernelFile::CHOLESKY, name)?;
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
