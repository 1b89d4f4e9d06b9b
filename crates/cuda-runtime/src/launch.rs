//! What every kernel launch needs: grid arithmetic, the checks that make the launch
//! safe, and the launch's result as an ndgpu error.

use cudarc::driver::{CudaSlice, DeviceRepr, DriverError, LaunchArgs, LaunchConfig, PushKernelArg};
use ndgpu_core::{Error, Result};

use crate::errors::driver;
use crate::kernels::KernelFile;
use crate::{DeviceMatrix, Gpu};

/// Pushes a kernel's arguments onto a launch builder in order:
/// `push_args!(builder; a, b, c)`, the list reading like the kernel's parameters.
#[macro_export]
macro_rules! push_args {
    ($b:expr; $($arg:expr),+ $(,)?) => {{
        $( $b.arg($arg); )+
    }};
}

/// One kernel of a `.cu` file in both element types: `{op}_{technique}_f32` and `_f64`,
/// as [`kernel!`](crate::kernel) spells them from the common stem at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    /// The f32 kernel's name.
    pub f32: &'static str,
    /// The f64 kernel's name.
    pub f64: &'static str,
}

impl Kernel {
    /// The name of the kernel for `T`.
    pub fn of<T: crate::CudaElement>(&self) -> &'static str {
        match T::DTYPE {
            ndgpu_core::DType::F32 => self.f32,
            ndgpu_core::DType::F64 => self.f64,
        }
    }
}

/// The [`Kernel`] of stem `"gemm_split_k"`: `gemm_split_k_f32` and `gemm_split_k_f64`.
#[macro_export]
macro_rules! kernel {
    ($stem:literal) => {
        $crate::launch::Kernel {
            f32: concat!($stem, "_f32"),
            f64: concat!($stem, "_f64"),
        }
    };
}

/// Blocks needed to cover `n` with blocks of `per_block`, at least one.
pub fn blocks(n: usize, per_block: usize) -> u32 {
    n.div_ceil(per_block).max(1) as u32
}

/// A 1-D launch: `grid` blocks of `threads` threads, no dynamic shared memory.
pub fn linear(grid: u32, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Converts a dimension to the `int` the kernels take.
///
/// # Errors
/// [`Error::InvalidArgument`] above `i32::MAX`.
pub fn dim_i32(op: &'static str, n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| {
        Error::invalid(
            op,
            format!("dimension {n} exceeds the kernels' 32-bit index range"),
        )
    })
}

/// The number of blocks in a 1-D grid, which the kernels index with an `int`.
///
/// # Errors
/// [`Error::InvalidArgument`] beyond that.
pub fn grid_1d(op: &'static str, n_blocks: usize) -> Result<u32> {
    u32::try_from(n_blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::invalid(op, format!("{n_blocks} blocks exceed the 1-D grid")))
}

/// Checks that a matrix's buffer holds its `rows·cols` elements: kernels index it up to
/// there.
///
/// # Errors
/// [`Error::InvalidArgument`].
pub fn check_buffer<T>(op: &'static str, what: &str, m: &DeviceMatrix<T>) -> Result<()> {
    if m.data.len() < m.len() {
        return Err(Error::invalid(
            op,
            format!(
                "{what} is {}x{} but its buffer holds {} elements",
                m.rows,
                m.cols,
                m.data.len()
            ),
        ));
    }
    Ok(())
}

/// A launch's result as ours, naming the kernel.
///
/// # Errors
/// The driver's error, wrapped.
pub fn launched<E>(name: &str, r: std::result::Result<E, DriverError>) -> Result<()> {
    r.map(drop)
        .map_err(|e| driver(format!("launching {name}"), e))
}

/// Launches `name(int rows, int cols, const T* in, T* out)` of `file` with `cfg`: the
/// shape of the matrix kernels that read one array and write another.
///
/// # Safety
/// The kernel must take exactly these arguments and, launched with `cfg` on a
/// `rows × cols` input, read `input` and write `out` within their lengths only.
///
/// # Errors
/// Compilation or driver errors.
pub unsafe fn launch_in_out<T: DeviceRepr>(
    gpu: &Gpu,
    (file, name): (KernelFile, &str),
    cfg: LaunchConfig,
    (rows, cols): (i32, i32),
    input: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
) -> Result<()> {
    let f = gpu.function(file, name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &rows, &cols, input, out);
    // SAFETY: the caller's contract.
    launched(name, unsafe { l.launch(cfg) })
}

/// Queues a built launch.
///
/// # Safety
/// The pushed arguments must match the kernel's parameters and cover every index the
/// kernel derives from them and `cfg`.
///
/// # Errors
/// The driver's error.
pub unsafe fn go(mut b: LaunchArgs<'_>, name: &str, cfg: LaunchConfig) -> Result<()> {
    b.launch(cfg)
        .map(|_| ())
        .map_err(|e| driver(format!("launching {name}"), e))
}
