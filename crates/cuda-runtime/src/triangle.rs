//! What both backends' factorizations need around the factor (`kernels/triangle.cu`):
//! zeroing its strict upper triangle, the factorization's status read back once, row
//! swaps and gathers, and f32 ↔ f64 copies (for a factorization run in f64).

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

/// The diagonal of a general factor and where it first holds NaN or ±Inf, from one read.
#[derive(Debug, Clone, PartialEq)]
pub struct DiagScan {
    /// `a[i][i]` for i < min(rows, cols), in f64.
    pub diag: Vec<f64>,
    /// The first (row-major) entry of the buffer that is not finite, as (row, column) of
    /// the buffer.
    pub nonfinite: Option<(usize, usize)>,
}

impl DiagScan {
    /// The diagonal, or [`ndgpu_core::Error::NonFinite`] for `op` naming where NaN or
    /// ±Inf reached the factor (`what`: the operand it came from).
    ///
    /// # Errors
    /// As above.
    pub fn finite(self, op: &'static str, what: &'static str) -> Result<Vec<f64>> {
        match self.nonfinite {
            Some(index) => Err(ndgpu_core::Error::NonFinite {
                op,
                what,
                value: f64::NAN,
                index,
            }),
            None => Ok(self.diag),
        }
    }
}

/// Scans a row-major rows×cols buffer (a factor, in either layout: its diagonal is the
/// same) for its diagonal and its first non-finite entry, and reads both back at once
/// (`triangle_diag_scan_*`): the one synchronisation of an LU or QR factorization.
///
/// # Errors
/// Driver errors, including faults of the work queued before.
pub fn diag_scan<T: CudaElement>(
    gpu: &Gpu,
    op: &'static str,
    a: &CudaSlice<T>,
    (rows, cols): (usize, usize),
) -> Result<DiagScan> {
    let k = rows.min(cols);
    let mut out = gpu.alloc_zeroed::<u64>(op, k + 1)?;
    let name = crate::kernel!("triangle_diag_scan").of::<T>();
    let f = gpu.function(KernelFile::TRIANGLE, name)?;
    let (r, c) = (rows as i64, cols as i64);
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; a, &r, &c, &mut out);
    // SAFETY: (const T* a, i64 r, i64 c, unsigned long long* out): a holds r·c elements,
    // out k + 1 zeroed words; the grid-stride loop stays below r·c and writes out[i] for
    // i < k only where i is a diagonal position, out[k] by atomicMax.
    launched(name, unsafe {
        b.launch(linear(blocks(rows * cols, 256).min(4096), 256))
    })?;
    let out = gpu.download_slice(&out, k + 1)?;
    let first = out[k];
    Ok(DiagScan {
        diag: out[..k].iter().map(|&w| f64::from_bits(w)).collect(),
        nonfinite: (first != 0).then(|| {
            let e = (i64::MAX as u64 - first) as usize;
            (e / cols.max(1), e % cols.max(1))
        }),
    })
}

/// LAPACK's 1-based row swaps (`ipiv`, as cuSOLVER's 64-bit `getrf` writes them) made
/// 0-based in place (`triangle_pivots_from_lapack`).
///
/// # Errors
/// Driver errors.
pub fn pivots_from_lapack(gpu: &Gpu, ipiv: &mut CudaSlice<i64>, k: usize) -> Result<()> {
    let name = "triangle_pivots_from_lapack";
    let f = gpu.function(KernelFile::TRIANGLE, name)?;
    let ki = dim_i32("lu", k)?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; ipiv, &ki);
    // SAFETY: (i64* ipiv, int k): ipiv holds at least k entries; the loop stays below k.
    launched(name, unsafe {
        b.launch(linear(blocks(k, 256).min(1024), 256))
    })
}

/// Applies the row swaps `ipiv` (0-based, k of them) to the row-major `b`: in order
/// (`forward`, B ← P·B) or in reverse (B ← Pᵀ·B) (`triangle_laswp_*`).
///
/// # Errors
/// [`ndgpu_core::Error::ShapeMismatch`] when `b` has fewer rows than a swap names is the
/// caller's to rule out (pivots come from a factor of b's row count); driver errors.
pub fn laswp<T: CudaElement>(
    gpu: &Gpu,
    b: &mut DeviceMatrix<T>,
    ipiv: &CudaSlice<i64>,
    k: usize,
    forward: bool,
) -> Result<()> {
    if k == 0 || b.cols == 0 {
        return Ok(());
    }
    let name = crate::kernel!("triangle_laswp").of::<T>();
    let f = gpu.function(KernelFile::TRIANGLE, name)?;
    let (cols, ki, fw) = (b.cols as i64, dim_i32("lu_solve", k)?, i32::from(forward));
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &mut b.data, &cols, ipiv, &ki, &fw);
    // SAFETY: (T* b, i64 cols, const i64* ipiv, int k, int forward): ipiv holds k swaps,
    // each < b.rows (they come from a factor with b's row count); threads walk columns
    // below cols, so every access is inside the rows×cols matrix.
    launched(name, unsafe {
        l.launch(linear(blocks(b.cols, 256).min(4096), 256))
    })
}

/// A grid of 256-thread blocks for a grid-stride loop over `len` elements.
fn strided(len: usize) -> LaunchConfig {
    linear(blocks(len, 256).min(4096), 256)
}

/// An f64 copy of `a` (`triangle_widen`): exact.
///
/// # Errors
/// As [`Gpu::alloc`]; driver errors.
pub fn widen(gpu: &Gpu, a: &DeviceMatrix<f32>) -> Result<DeviceMatrix<f64>> {
    convert(gpu, a, "triangle_widen")
}

/// An f32 copy of `a` (`triangle_narrow`), each entry rounded to nearest.
///
/// # Errors
/// As [`Gpu::alloc`]; driver errors.
pub fn narrow(gpu: &Gpu, a: &DeviceMatrix<f64>) -> Result<DeviceMatrix<f32>> {
    convert(gpu, a, "triangle_narrow")
}

/// `name(const S* src, D* dst, i64 len)` on `a`'s elements, into a new matrix.
fn convert<S: CudaElement, D: CudaElement>(
    gpu: &Gpu,
    a: &DeviceMatrix<S>,
    name: &'static str,
) -> Result<DeviceMatrix<D>> {
    crate::launch::check_buffer(name, "the source", a)?;
    let mut out = gpu.alloc_matrix::<D>(name, a.rows, a.cols)?;
    let len = a.len();
    if len == 0 {
        return Ok(out);
    }
    let f = gpu.function(KernelFile::TRIANGLE, name)?;
    let n = len as i64;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &a.data, &mut out.data, &n);
    // SAFETY: (const S* src, D* dst, i64 len), S and D the kernel's types (widen: f32 →
    // f64, narrow: f64 → f32, as the callers pick): src holds len elements (checked), dst
    // as many; the grid-stride loop stays below len.
    launched(name, unsafe { b.launch(strided(len)) })?;
    Ok(out)
}

/// A new matrix whose row i is row `perm[i]` of the row-major `a`
/// (`triangle_gather_rows_*`); `perm` is uploaded.
///
/// # Errors
/// [`ndgpu_core::Error::InvalidArgument`] where `perm` does not hold one index below
/// `a.rows` for each row; as [`Gpu::alloc`]; driver errors.
pub fn gather_rows<T: CudaElement>(
    gpu: &Gpu,
    a: &DeviceMatrix<T>,
    perm: &[usize],
) -> Result<DeviceMatrix<T>> {
    let name = crate::kernel!("triangle_gather_rows").of::<T>();
    crate::launch::check_buffer(name, "the source", a)?;
    if perm.len() != a.rows || perm.iter().any(|&p| p >= a.rows) {
        return Err(ndgpu_core::Error::invalid(
            "gather_rows",
            format!(
                "the row order must hold one index below {} for each of its {} rows; it \
                 holds {} (or one out of range)",
                a.rows,
                a.rows,
                perm.len()
            ),
        ));
    }
    let mut out = gpu.alloc_matrix::<T>(name, a.rows, a.cols)?;
    let len = a.len();
    if len == 0 {
        return Ok(out);
    }
    let idx: Vec<i64> = perm.iter().map(|&p| p as i64).collect();
    let dperm = gpu.upload_slice(name, &idx)?;
    let f = gpu.function(KernelFile::TRIANGLE, name)?;
    let (rows, cols) = (a.rows as i64, a.cols as i64);
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &a.data, &mut out.data, &dperm, &rows, &cols);
    // SAFETY: (const T* src, T* dst, const i64* perm, i64 rows, i64 cols): src holds
    // rows·cols elements (checked), dst as many, perm rows indices each below rows
    // (checked); the grid-stride loop stays below rows·cols.
    launched(name, unsafe { b.launch(strided(len)) })?;
    Ok(out)
}
