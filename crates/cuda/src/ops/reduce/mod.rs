//! Reductions (sum, sum of squares, min, max, argmin, argmax; whole array or along an
//! axis) and the dot product: report 004's atomic dot product and the classic
//! reduction ladder, up to a single-pass shuffle reduction.
//!
//! | variant | whole-array kernels | reproducible | idea | H200, sum of 2²⁸ f32 |
//! |---|---|---|---|---|
//! | `shuffle` | `reduce_<op>_shuffle_*` | yes | 16-byte loads, 4 accumulators, warp shuffles, last block folds the partials | 0.93 of copy (dot 1.00) |
//! | `dot_atomic` | `reduce_{sum,sumsq,dot}_atomic_*` | **no** | report 004: one atomicAdd per block | 0.78 (dot 0.97) |
//! | `unrolled_warp` | `…_unrolled_warp_*` + `…_finish_*` | yes | add during load, last warp without barriers | 0.53 |
//! | `first_add` | `…_first_add_*` + `…_finish_*` | yes | each thread combines two elements while loading | 0.40 |
//! | `sequential` | `…_sequential_*` + `…_finish_*` | yes | sequential addressing: no divergence | 0.22 |
//! | `interleaved` | `…_interleaved_*` + `…_finish_*` | yes | interleaved addressing: divergent | 0.21 |
//!
//! (Fractions of a device copy moving the same bytes, 4.20 TB/s; each call's time
//! includes its scratch allocation and reading the result back.)
//!
//! `dot_atomic` runs min, max, argmin and argmax with the `shuffle` kernels. Axis
//! reductions use the same kernels under every variant ([`reduce_axis`]).
//!
//! NaN policy (that of [`ndgpu_core::Reduce`]): sums and dots follow IEEE arithmetic;
//! min/max return NaN if any element is NaN; argmin/argmax return the first NaN's
//! index, else the lowest index of the extreme. The arg operators combine (value,
//! index) pairs by a total order (NaN, then the extreme, then the lower index), so
//! their results do not depend on the order of combination, hence not on the variant.
mod axis;
mod whole;

use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use ndarray::{Array1, ArrayView1, ArrayView2, Axis};
use ndgpu_core::{check, ArgOp, Backend, Error, Family, Reduce, ReduceOp, Result};

use crate::runtime::driver;
use crate::{CudaBackend, CudaElement, DeviceMatrix, Gpu};

/// Variants, expected fastest first; the first (the default) is bitwise reproducible.
pub const VARIANTS: &[&str] = &[
    "shuffle",
    "dot_atomic",
    "unrolled_warp",
    "first_add",
    "sequential",
    "interleaved",
];

macro_rules! default_kernels {
    ($($whole:literal),* ; $($axis:literal),*) => {
        &[
            $(
                concat!("reduce_", $whole, "_shuffle_f32"),
                concat!("reduce_", $whole, "_shuffle_f64"),
            )*
            $(
                concat!("reduce_", $axis, "_rows_f32"),
                concat!("reduce_", $axis, "_rows_f64"),
                concat!("reduce_", $axis, "_rows_block_f32"),
                concat!("reduce_", $axis, "_rows_block_f64"),
                concat!("reduce_", $axis, "_cols_f32"),
                concat!("reduce_", $axis, "_cols_f64"),
                concat!("reduce_", $axis, "_cols_finish_f32"),
                concat!("reduce_", $axis, "_cols_finish_f64"),
            )*
        ]
    };
}

/// Kernels the default variant launches (whole-array `shuffle`, and the axis kernels
/// every variant shares).
pub const DEFAULT_KERNELS: &[&str] = default_kernels!(
    "sum", "sumsq", "min", "max", "argmin", "argmax", "dot";
    "sum", "sumsq", "min", "max", "argmin", "argmax"
);

/// Determinism and scope.
pub const NOTE: &str = "reduce: shuffle (default; float4/double2 loads, 4 accumulators per \
     thread, warp shuffles, ~4×SM blocks, the last block folds the partials in order: one \
     launch), unrolled_warp, first_add, sequential and interleaved (the classic ladder: \
     per-block partials, then fixed-order passes) are bitwise reproducible run to run; \
     dot_atomic (report 004: atomicAdd of each block's sum) is not, and runs only sum, \
     sumsq and dot — min, max, argmin, argmax fall back to shuffle. Axis reductions use the \
     same kernels under every variant (a group of up to 32 lanes per row, or blocks on \
     chunks of few long rows; threads over columns, chunks of rows; chunks folded in \
     order) and are reproducible. f32 sums accumulate in f32. \
     NaN: sums follow IEEE; min/max return NaN if any element is NaN; argmin/argmax return \
     the first NaN's index, else the lowest index of the extreme (flat row-major for the \
     whole array).";

/// What is reduced: the op decides the kernel names (`reduce_<name>_<technique>_<dtype>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Value(ReduceOp),
    Arg(ArgOp),
    Dot,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Value(op) => op.name(),
            Kind::Arg(op) => op.name(),
            Kind::Dot => "dot",
        }
    }
    /// Whether `dot_atomic`'s atomicAdd kernel computes it.
    fn additive(self) -> bool {
        matches!(
            self,
            Kind::Value(ReduceOp::Sum) | Kind::Value(ReduceOp::SumSq) | Kind::Dot
        )
    }
}

fn unknown_variant(name: &str) -> Error {
    Error::UnknownVariant {
        backend: "cuda".into(),
        family: Family::Reduce,
        name: name.into(),
        available: VARIANTS.join(", "),
    }
}

fn too_short(op: &'static str, what: &str, len: usize, n: usize) -> Error {
    Error::shape(
        op,
        format!("{what} holds {len} elements, fewer than n = {n}"),
    )
}

/// A zeroed scratch buffer (partial indices, the ticket counter).
fn zeroed<U: DeviceRepr + ValidAsZeroBits>(gpu: &Gpu, len: usize) -> Result<CudaSlice<U>> {
    gpu.stream()
        .alloc_zeros::<U>(len.max(1))
        .map_err(|e| driver("reduce: allocating scratch", e))
}

/// Turns a launch's result into ours. (`Gpu::launch` takes a closure that cannot push
/// borrowed arguments, so launches here use the stream's builder directly.)
fn launched<E>(name: &str, r: std::result::Result<E, cudarc::driver::DriverError>) -> Result<()> {
    r.map(drop)
        .map_err(|e| driver(format!("launching {name}"), e))
}

/// Element `k` of a device buffer, after all queued work.
fn read_at<U: DeviceRepr + Default + Copy>(gpu: &Gpu, s: &CudaSlice<U>, k: usize) -> Result<U> {
    let mut host = [U::default()];
    gpu.stream()
        .memcpy_dtoh(&s.slice(k..k + 1), &mut host)
        .map_err(|e| driver("reduce: reading the result", e))?;
    gpu.synchronize()?;
    Ok(host[0])
}

/// Reduces the first `n` elements of `x` with `op` using the named variant.
/// `n = 0` gives 0 for `Sum`/`SumSq` without launching anything.
///
/// # Errors
/// [`Error::UnknownVariant`]; [`Error::ShapeMismatch`] when `x` is shorter than `n`;
/// [`Error::Empty`] for `Min`/`Max` with `n = 0`; device errors.
pub fn reduce<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    op: ReduceOp,
    x: &CudaSlice<T>,
    n: usize,
) -> Result<T> {
    let tech = whole::technique(variant).ok_or_else(|| unknown_variant(variant))?;
    if n > x.len() {
        return Err(too_short(op.name(), "x", x.len(), n));
    }
    if n == 0 {
        return match op {
            ReduceOp::Sum | ReduceOp::SumSq => Ok(T::zero()),
            ReduceOp::Min | ReduceOp::Max => Err(Error::Empty {
                op: op.name(),
                rows: 0,
                cols: 0,
            }),
        };
    }
    whole::run(gpu, tech, Kind::Value(op), x, x, n).map(|(v, _)| v)
}

/// Flat index of the extreme element among the first `n` of `x` (NaN → the first
/// NaN; ties → the lowest index), using the named variant.
///
/// # Errors
/// [`Error::UnknownVariant`]; [`Error::ShapeMismatch`] when `x` is shorter than `n`;
/// [`Error::Empty`] for `n = 0`; device errors.
pub fn arg_reduce<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    op: ArgOp,
    x: &CudaSlice<T>,
    n: usize,
) -> Result<usize> {
    let tech = whole::technique(variant).ok_or_else(|| unknown_variant(variant))?;
    if n > x.len() {
        return Err(too_short(op.name(), "x", x.len(), n));
    }
    if n == 0 {
        return Err(Error::Empty {
            op: op.name(),
            rows: 0,
            cols: 0,
        });
    }
    whole::run(gpu, tech, Kind::Arg(op), x, x, n).map(|(_, i)| i as usize)
}

/// `Σ xᵢ·yᵢ` over the first `n` elements, using the named variant (`n = 0` gives 0).
///
/// # Errors
/// [`Error::UnknownVariant`]; [`Error::ShapeMismatch`] when `x` or `y` is shorter than
/// `n`; device errors.
pub fn dot<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    x: &CudaSlice<T>,
    y: &CudaSlice<T>,
    n: usize,
) -> Result<T> {
    let tech = whole::technique(variant).ok_or_else(|| unknown_variant(variant))?;
    if n > x.len() {
        return Err(too_short("dot", "x", x.len(), n));
    }
    if n > y.len() {
        return Err(too_short("dot", "y", y.len(), n));
    }
    if n == 0 {
        return Ok(T::zero());
    }
    whole::run(gpu, tech, Kind::Dot, x, y, n).map(|(v, _)| v)
}

/// Reduces `m` along `axis` into `out`: one value per column for `Axis(0)` (`out`
/// needs `m.cols` elements), one per row for `Axis(1)` (`m.rows`); `reduce_axis(SumSq,
/// Axis(1))` gives squared row norms. The same kernels serve every variant, and the
/// result is bitwise reproducible. A reduced axis of length 0 gives zeros for
/// `Sum`/`SumSq`.
///
/// # Errors
/// [`Error::InvalidArgument`] for an axis other than 0 or 1; [`Error::ShapeMismatch`]
/// when `out` is too short; [`Error::Empty`] for `Min`/`Max` along an axis of length 0
/// (unless the result is empty too); device errors.
pub fn reduce_axis<T: CudaElement>(
    gpu: &Gpu,
    op: ReduceOp,
    m: &DeviceMatrix<T>,
    axis: Axis,
    out: &mut CudaSlice<T>,
) -> Result<()> {
    let kept = axis::kept_len(op.name(), m, axis, out.len())?;
    if kept == 0 {
        return Ok(());
    }
    if m.is_empty() {
        return match op {
            ReduceOp::Sum | ReduceOp::SumSq => gpu
                .stream()
                .memset_zeros(&mut out.slice_mut(0..kept))
                .map_err(|e| driver("reduce_axis: zeroing the result", e)),
            ReduceOp::Min | ReduceOp::Max => Err(Error::Empty {
                op: op.name(),
                rows: m.rows,
                cols: m.cols,
            }),
        };
    }
    let mut idx = zeroed::<i64>(gpu, 1)?;
    axis::run(gpu, Kind::Value(op), m, axis, out, &mut idx)
}

/// Index of the extreme element along `axis` into `out` (the row index per column for
/// `Axis(0)`, `out` of `m.cols`; the column index per row for `Axis(1)`, `out` of
/// `m.rows`). NaN and ties as in [`arg_reduce`].
///
/// # Errors
/// As [`reduce_axis`]; an axis of length 0 is always [`Error::Empty`] (unless the
/// result is empty too).
pub fn arg_reduce_axis<T: CudaElement>(
    gpu: &Gpu,
    op: ArgOp,
    m: &DeviceMatrix<T>,
    axis: Axis,
    out: &mut CudaSlice<i64>,
) -> Result<()> {
    let kept = axis::kept_len(op.name(), m, axis, out.len())?;
    if kept == 0 {
        return Ok(());
    }
    if m.is_empty() {
        return Err(Error::Empty {
            op: op.name(),
            rows: m.rows,
            cols: m.cols,
        });
    }
    let mut values = gpu.alloc::<T>(op.name(), kept)?;
    axis::run(gpu, Kind::Arg(op), m, axis, &mut values, out)
}

fn download_i64(gpu: &Gpu, s: &CudaSlice<i64>, len: usize) -> Result<Vec<i64>> {
    let mut host = ndgpu_core::host::filled_vec("download", len, 0i64)?;
    if len > 0 {
        gpu.stream()
            .memcpy_dtoh(&s.slice(0..len), host.as_mut_slice())
            .map_err(|e| driver("copying indices from the device", e))?;
    }
    gpu.synchronize()?;
    Ok(host)
}

impl<T: CudaElement> Reduce<T> for CudaBackend {
    fn reduce(&self, op: ReduceOp, a: ArrayView2<T>) -> Result<T> {
        if matches!(op, ReduceOp::Min | ReduceOp::Max) {
            check::nonempty(op.name(), &a)?;
        }
        if a.is_empty() {
            return Ok(T::zero());
        }
        let gpu = self.gpu();
        let d = gpu.upload(a)?;
        reduce(gpu, self.variant(Family::Reduce), op, &d.data, d.len())
    }

    fn reduce_axis(&self, op: ReduceOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<T>> {
        check::axis(
            op.name(),
            &a,
            axis,
            matches!(op, ReduceOp::Min | ReduceOp::Max),
        )?;
        let kept = a.len_of(Axis(1 - axis.index()));
        if a.is_empty() {
            // Only sums get here with kept > 0: the check rejects min/max.
            // `kept` is not bounded by the input's bytes when the lanes are empty.
            return ndgpu_core::host::filled1(op.name(), kept, T::zero());
        }
        let gpu = self.gpu();
        let d = gpu.upload(a)?;
        let mut out = gpu.alloc::<T>(op.name(), kept)?;
        reduce_axis(gpu, op, &d, axis, &mut out)?;
        Ok(Array1::from(gpu.download_slice(&out, kept)?))
    }

    fn arg_reduce(&self, op: ArgOp, a: ArrayView2<T>) -> Result<usize> {
        check::nonempty(op.name(), &a)?;
        let gpu = self.gpu();
        let d = gpu.upload(a)?;
        arg_reduce(gpu, self.variant(Family::Reduce), op, &d.data, d.len())
    }

    fn arg_reduce_axis(&self, op: ArgOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<usize>> {
        check::axis(op.name(), &a, axis, true)?;
        let kept = a.len_of(Axis(1 - axis.index()));
        if kept == 0 {
            return Ok(Array1::zeros(0));
        }
        let gpu = self.gpu();
        let d = gpu.upload(a)?;
        let mut out = zeroed::<i64>(gpu, kept)?;
        arg_reduce_axis(gpu, op, &d, axis, &mut out)?;
        let idx = download_i64(gpu, &out, kept)?;
        Ok(idx.into_iter().map(|i| i as usize).collect())
    }

    fn dot(&self, x: ArrayView1<T>, y: ArrayView1<T>) -> Result<T> {
        let n = check::dot(&x, &y)?;
        if n == 0 {
            return Ok(T::zero());
        }
        let gpu = self.gpu();
        let dx = gpu.upload_slice("dot", &x.to_vec())?;
        let dy = gpu.upload_slice("dot", &y.to_vec())?;
        dot(gpu, self.variant(Family::Reduce), &dx, &dy, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_technique() {
        for v in VARIANTS {
            assert!(whole::technique(v).is_some(), "{v}");
        }
        assert!(whole::technique("nope").is_none());
    }

    #[test]
    fn default_kernels_are_the_shuffle_and_axis_kernels() {
        assert_eq!(VARIANTS[0], "shuffle");
        assert_eq!(DEFAULT_KERNELS.len(), 7 * 2 + 6 * 4 * 2);
        assert!(DEFAULT_KERNELS.contains(&"reduce_dot_shuffle_f64"));
        assert!(DEFAULT_KERNELS.contains(&"reduce_argmin_cols_finish_f32"));
        assert!(!DEFAULT_KERNELS.iter().any(|k| k.contains("atomic")));
    }
}
