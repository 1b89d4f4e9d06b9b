//! The reductions both GPU backends launch (`kernels/reduce.cu`): the single-pass
//! shuffle reduction of a whole array (the `cuda` backend's default rung, and the
//! `cublas` backend's min, max, argmin and argmax, which cuBLAS lacks), and every
//! reduction along an axis.
//!
//! NaN policy (that of [`ndgpu_core::Reduce`]): sums and dots follow IEEE arithmetic;
//! min/max return NaN if any element is NaN; argmin/argmax return the first NaN's
//! index, else the lowest index of the extreme. The arg operators combine (value,
//! index) pairs by a total order (NaN, then the extreme, then the lower index), so
//! their results do not depend on the order of combination.

mod axis;

use crate::push_args;
use cudarc::driver::{CudaSlice, DeviceRepr, PushKernelArg};
use ndarray::Axis;
use ndgpu_core::{check, ArgOp, Error, ReduceOp, Result};

use crate::errors::driver;
use crate::indices::{DeviceIndices, IndexStorage};
use crate::kernels::KernelFile;
use crate::launch::{launched, linear};
use crate::{CudaElement, DeviceMatrix, Gpu};

/// What is reduced: the op decides the kernel names (`reduce_<name>_<technique>_<dtype>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A value reduction.
    Value(ReduceOp),
    /// An index reduction.
    Arg(ArgOp),
    /// The dot product of two arrays.
    Dot,
}

impl Kind {
    /// The op's part of the kernel names.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Value(op) => op.name(),
            Kind::Arg(op) => op.name(),
            Kind::Dot => "dot",
        }
    }
    /// Whether it is a sum (sum, sum of squares, dot).
    pub fn additive(self) -> bool {
        matches!(
            self,
            Kind::Value(ReduceOp::Sum) | Kind::Value(ReduceOp::SumSq) | Kind::Dot
        )
    }
}

/// The operands of a whole-array reduction: the first `n ≥ 1` elements of `x`, and of
/// `y` for a dot product (`x` again otherwise).
#[derive(Debug, Clone, Copy)]
pub struct Whole<'a, T> {
    /// What is reduced.
    pub kind: Kind,
    /// The array.
    pub x: &'a CudaSlice<T>,
    /// The second array of a dot product; `x` otherwise.
    pub y: &'a CudaSlice<T>,
    /// Elements reduced.
    pub n: usize,
}

impl<'a, T> Whole<'a, T> {
    /// Every element of `m` (`kind` not a dot product).
    pub fn of(kind: Kind, m: &'a DeviceMatrix<T>) -> Self {
        Whole {
            kind,
            x: &m.data,
            y: &m.data,
            n: m.len(),
        }
    }
}

/// Threads per block of the shuffle kernels (`SHUFFLE_THREADS` in the kernel file).
const SHUFFLE_THREADS: u32 = 256;
/// Blocks of `shuffle` per multiprocessor: 4 × 256 threads × 64 bytes in flight each
/// keeps 64 KiB of loads outstanding per SM.
const SHUFFLE_BLOCKS_PER_SM: usize = 4;

/// Element `k` of a device buffer, after all queued work.
///
/// # Errors
/// Driver errors, including those of the queued work.
pub fn read_at<U: DeviceRepr + Default + Copy>(gpu: &Gpu, s: &CudaSlice<U>, k: usize) -> Result<U> {
    let mut host = [U::default()];
    gpu.stream()
        .memcpy_dtoh(&s.slice(k..k + 1), &mut host)
        .map_err(|e| driver("reduce: reading the result", e))?;
    gpu.synchronize()?;
    Ok(host[0])
}

/// The (value, index) a reduction left at entry `k` of its outputs, after all queued
/// work; the index is read for arg ops only (-1 otherwise).
///
/// # Errors
/// Driver errors, including those of the queued work.
pub fn read_result<T: CudaElement>(
    gpu: &Gpu,
    kind: Kind,
    pv: &CudaSlice<T>,
    pi: &CudaSlice<i64>,
    k: usize,
) -> Result<(T, i64)> {
    let v = read_at(gpu, pv, k)?;
    let i = match kind {
        Kind::Arg(_) => read_at(gpu, pi, k)?,
        _ => -1,
    };
    Ok((v, i))
}

/// The kernel of `kind` and technique `tech` for `T`.
pub fn kernel_name<T: CudaElement>(kind: Kind, tech: &str) -> String {
    format!("reduce_{}_{tech}_{}", kind.name(), T::SUFFIX)
}

/// Reduces `w` in one launch of `min(4·SM, n / (256·vector width))` blocks, 16-byte
/// loads, 4 accumulators per thread and warp shuffles; the last block to finish folds
/// the partials in block order, so the result is bitwise reproducible. Returns (value,
/// index); the index is meaningful for arg ops only.
///
/// # Errors
/// Out of memory; driver errors.
pub fn shuffle<T: CudaElement>(gpu: &Gpu, w: Whole<'_, T>) -> Result<(T, i64)> {
    let Whole { kind, x, y, n } = w;
    debug_assert!(n >= 1 && n <= x.len() && n <= y.len());
    let width = 16 / std::mem::size_of::<T>();
    let cap = SHUFFLE_BLOCKS_PER_SM * gpu.sm_count()?.max(1);
    let grid = n.div_ceil(SHUFFLE_THREADS as usize * width).clamp(1, cap) as u32;
    let mut pv = gpu.alloc::<T>(kind.name(), grid as usize + 1)?;
    let mut pi = gpu.alloc_zeroed::<i64>("reduce", grid as usize + 1)?;
    let mut ticket = gpu.alloc_zeroed::<u32>("reduce", 1)?;
    let n64 = n as i64;
    let cfg = linear(grid, SHUFFLE_THREADS);
    let name = kernel_name::<T>(kind, "shuffle");
    let f = gpu.function(KernelFile::REDUCE, &name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; x, y, &n64, &mut pv, &mut pi, &mut ticket);
    // SAFETY: (const T* x, const T* y, i64 n, T* pv, i64* pi, u32* ticket): x and y
    // hold at least n elements and come from the allocator (16-byte aligned for the
    // vector loads); pv and pi hold grid + 1 entries (one partial per block and the
    // result); the ticket starts at zero.
    launched(&name, unsafe { l.launch(cfg) })?;
    read_result(gpu, kind, &pv, &pi, grid as usize)
}

/// `op` of a whole resident matrix with the shuffle reduction (0 for an empty sum).
///
/// # Errors
/// [`Error::Empty`] for min/max of nothing; as [`shuffle`].
pub fn whole<T: CudaElement>(gpu: &Gpu, op: ReduceOp, m: &DeviceMatrix<T>) -> Result<T> {
    if m.is_empty() {
        return match op.needs_element() {
            true => Err(Error::Empty {
                op: op.name(),
                rows: m.rows,
                cols: m.cols,
            }),
            false => Ok(T::zero()),
        };
    }
    shuffle(gpu, Whole::of(Kind::Value(op), m)).map(|(v, _)| v)
}

/// The flat index that `op` selects in a whole resident matrix (shuffle reduction).
///
/// # Errors
/// [`Error::Empty`] for an empty matrix; as [`shuffle`].
pub fn arg_whole<T: CudaElement>(gpu: &Gpu, op: ArgOp, m: &DeviceMatrix<T>) -> Result<usize> {
    if m.is_empty() {
        return Err(Error::Empty {
            op: op.name(),
            rows: m.rows,
            cols: m.cols,
        });
    }
    shuffle(gpu, Whole::of(Kind::Arg(op), m)).map(|(_, i)| i as usize)
}

/// Reduces `m` along `axis` into a new keepdims matrix (1×cols for `Axis(0)`, rows×1
/// for `Axis(1)`). The same kernels serve every variant of every backend, and the
/// result is bitwise reproducible; `SumSq` along `Axis(1)` gives squared row norms. A
/// reduced axis of length 0 gives zeros for sums.
///
/// # Errors
/// [`Error::InvalidArgument`] for an axis other than 0 or 1, or dimensions beyond the
/// kernels' 32-bit indices; [`Error::Empty`] for min/max along an axis of length 0
/// (unless the result is empty too); out of memory; driver errors.
pub fn along<T: CudaElement>(
    gpu: &Gpu,
    op: ReduceOp,
    m: &DeviceMatrix<T>,
    axis: Axis,
) -> Result<DeviceMatrix<T>> {
    let kept = check::axis_dims(op.name(), m.dim(), axis, op.needs_element())?;
    let (rows, cols) = if axis.index() == 0 {
        (1, kept)
    } else {
        (kept, 1)
    };
    let mut out = gpu.alloc_matrix(op.name(), rows, cols)?;
    if kept == 0 {
        return Ok(out);
    }
    if m.is_empty() {
        // Only sums get here (the check refuses min/max along an empty axis).
        gpu.stream()
            .memset_zeros(&mut out.data.slice_mut(0..kept))
            .map_err(|e| driver("reduce_axis: zeroing the result", e))?;
        return Ok(out);
    }
    axis::check_dims(op.name(), m)?;
    let mut idx = gpu.alloc_zeroed::<i64>("reduce", 1)?;
    let to = axis::Out {
        v: &mut out.data,
        i: &mut idx,
    };
    axis::run(gpu, Kind::Value(op), m, axis, to)?;
    Ok(out)
}

/// The index `op` selects along `axis` of `m` (the row index per column for `Axis(0)`,
/// the column index per row for `Axis(1)`), as 64-bit device indices.
///
/// # Errors
/// As [`along`]; an axis of length 0 is always [`Error::Empty`] (unless the result is
/// empty too).
pub fn arg_along<T: CudaElement>(
    gpu: &Gpu,
    op: ArgOp,
    m: &DeviceMatrix<T>,
    axis: Axis,
) -> Result<(usize, IndexStorage)> {
    let kept = check::axis_dims(op.name(), m.dim(), axis, true)?;
    let mut out = gpu.alloc_zeroed::<i64>("reduce", kept)?;
    if kept > 0 {
        axis::check_dims(op.name(), m)?;
        let mut values = gpu.alloc::<T>(op.name(), kept)?;
        let to = axis::Out {
            v: &mut values,
            i: &mut out,
        };
        axis::run(gpu, Kind::Arg(op), m, axis, to)?;
    }
    Ok((kept, gpu.indices(DeviceIndices::I64(out))))
}
