//! Reductions (sum, sum of squares, min, max, argmin, argmax; whole array or along an
//! axis) and the dot product: report 004's atomic dot product and the classic
//! reduction ladder, up to a single-pass shuffle reduction.
//!
//! | variant | whole-array kernels | reproducible | idea |
//! |---|---|---|---|
//! | `shuffle` | `reduce_<op>_shuffle_*` | yes | 16-byte loads, 4 accumulators, warp shuffles, last block folds the partials |
//! | `dot_atomic` | `reduce_{sum,sumsq,dot}_atomic_*` | **no** | report 004: one atomicAdd per block |
//! | `unrolled_warp` | `…_unrolled_warp_*` + `…_finish_*` | yes | add during load, last warp without barriers |
//! | `first_add` | `…_first_add_*` + `…_finish_*` | yes | each thread combines two elements while loading |
//! | `sequential` | `…_sequential_*` + `…_finish_*` | yes | sequential addressing: no divergence |
//! | `interleaved` | `…_interleaved_*` + `…_finish_*` | yes | interleaved addressing: divergent |
//!
//! `dot_atomic` runs min, max, argmin and argmax with the `shuffle` kernels. Axis
//! reductions use the same kernels under every variant (the runtime's
//! [`reduce::along`](ndgpu_cuda_runtime::reduce::along)). The NaN policy is that of
//! [`ndgpu_core::Reduce`]; the arg operators combine (value, index) pairs by a total
//! order, so their results do not depend on the variant.
mod whole;

use ndarray::Axis;
use ndgpu_core::{
    ArgOp, Backend, Error, Family, Indices, Matrix, ReduceKernels, ReduceOp, Result, Variant,
};
use ndgpu_cuda_runtime::reduce::{self, Kind, Whole};
use ndgpu_cuda_runtime::{CudaElement, DeviceMatrix, Gpu};

use crate::CudaBackend;

/// Variants, expected fastest first; the first (the default) is bitwise reproducible.
pub const VARIANTS: &[Variant] = &[
    Variant::new(
        "shuffle",
        "float4/double2 loads, 4 accumulators per thread, warp shuffles, ~4×SM blocks, the \
         last block folds the partials in order: one launch",
    ),
    Variant::new(
        "dot_atomic",
        "atomicAdd of each block's sum; runs sum, sumsq and dot only (min, max, argmin and \
         argmax fall back to shuffle)",
    )
    .not_reproducible(),
    Variant::new(
        "unrolled_warp",
        "the classic ladder: the last warp unrolled",
    ),
    Variant::new(
        "first_add",
        "the classic ladder: the first add during the load",
    ),
    Variant::new("sequential", "the classic ladder: sequential addressing"),
    Variant::new("interleaved", "the classic ladder: interleaved addressing"),
];

macro_rules! default_kernels {
    ($($whole:literal),* ; $($axis:literal),* ; $($arg:literal),*) => {
        &[
            $(
                concat!("reduce_", $whole, "_shuffle_f32"),
                concat!("reduce_", $whole, "_shuffle_f64"),
            )*
            $(
                concat!("reduce_", $axis, "_rows_f32"),
                concat!("reduce_", $axis, "_rows_f64"),
                concat!("reduce_", $axis, "_rows_vec_f32"),
                concat!("reduce_", $axis, "_rows_vec_f64"),
                concat!("reduce_", $axis, "_rows_block_f32"),
                concat!("reduce_", $axis, "_rows_block_f64"),
                concat!("reduce_", $axis, "_cols_f32"),
                concat!("reduce_", $axis, "_cols_f64"),
                concat!("reduce_", $axis, "_cols_vec_f32"),
                concat!("reduce_", $axis, "_cols_vec_f64"),
                concat!("reduce_", $axis, "_cols_tall_f32"),
                concat!("reduce_", $axis, "_cols_tall_f64"),
                concat!("reduce_", $axis, "_cols_finish_f32"),
                concat!("reduce_", $axis, "_cols_finish_f64"),
            )*
            $(
                concat!("reduce_", $arg, "_rows_thread_f32"),
                concat!("reduce_", $arg, "_rows_thread_f64"),
            )*
        ]
    };
}

/// Kernels the default variant launches (whole-array `shuffle`, and the axis kernels
/// every variant shares).
pub const DEFAULT_KERNELS: &[&str] = default_kernels!(
    "sum", "sumsq", "min", "max", "argmin", "argmax", "dot";
    "sum", "sumsq", "min", "max", "argmin", "argmax";
    "argmin", "argmax"
);

/// Determinism and scope.
pub const NOTE: &str = "the classic-ladder rungs write per-block partials, then fold them \
    in fixed-order passes. Axis reductions use the same kernels under every variant (a thread \
    per row for argmin/argmax on rows of at most eight 16-byte vectors, up to 32 lanes of \
    16-byte loads per row for rows of whole vectors, a group of up to 32 lanes per row, or \
    blocks on chunks of few long rows; a thread per vector of columns over few rows, threads \
    over columns, chunks of rows; chunks folded in order) and are reproducible. f32 sums \
    accumulate in f32. NaN: sums follow IEEE; min/max return NaN if any element is NaN; \
    argmin/argmax return the first NaN's index, else the lowest index of the extreme (flat \
    row-major for the whole array)";

fn unknown_variant(name: &str) -> Error {
    Error::unknown_variant("cuda", Family::Reduce, name, &Variant::names(VARIANTS))
}

/// `op` of the first `n` elements of `x` (and `y` for dot) with the named variant.
fn whole<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    kind: Kind,
    x: &DeviceMatrix<T>,
    y: &DeviceMatrix<T>,
) -> Result<(T, i64)> {
    let tech = whole::technique(variant).ok_or_else(|| unknown_variant(variant))?;
    let w = Whole {
        kind,
        x: &x.data,
        y: &y.data,
        n: x.len(),
    };
    whole::run(gpu, tech, w)
}

impl<T: CudaElement> ReduceKernels<T> for CudaBackend {
    fn reduce_unchecked(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T> {
        let gpu = self.gpu();
        let a = gpu.dm(self.here(), op.name(), "A", a)?;
        if a.is_empty() {
            return reduce::whole(gpu, op, a);
        }
        whole(gpu, self.variant(Family::Reduce), Kind::Value(op), a, a).map(|(v, _)| v)
    }

    fn reduce_axis_unchecked(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>> {
        let gpu = self.gpu();
        let a = gpu.dm(self.here(), op.name(), "A", a)?;
        Ok(gpu.matrix(reduce::along(gpu, op, a, axis)?))
    }

    fn arg_reduce_unchecked(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize> {
        let gpu = self.gpu();
        let a = gpu.dm(self.here(), op.name(), "A", a)?;
        if a.is_empty() {
            return reduce::arg_whole(gpu, op, a);
        }
        let (_, i) = whole(gpu, self.variant(Family::Reduce), Kind::Arg(op), a, a)?;
        Ok(i as usize)
    }

    fn arg_reduce_axis_unchecked(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices> {
        let gpu = self.gpu();
        let a = gpu.dm(self.here(), op.name(), "A", a)?;
        let (len, s) = reduce::arg_along(gpu, op, a, axis)?;
        Ok(gpu.index_array(len, s))
    }

    fn dot_unchecked(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T> {
        let gpu = self.gpu();
        let x = gpu.dm(self.here(), "dot", "x", x)?;
        let y = gpu.dm(self.here(), "dot", "y", y)?;
        if x.is_empty() {
            return Ok(T::zero());
        }
        whole(gpu, self.variant(Family::Reduce), Kind::Dot, x, y).map(|(v, _)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_technique() {
        for v in Variant::names(VARIANTS) {
            assert!(whole::technique(v).is_some(), "{v}");
        }
        assert!(whole::technique("nope").is_none());
    }

    #[test]
    fn default_kernels_are_the_shuffle_and_axis_kernels() {
        assert_eq!(VARIANTS[0].name, "shuffle");
        // 7 whole-array ops; 6 axis ops × 7 axis kernels; the 2 arg ops' rows_thread; both
        // dtypes.
        assert_eq!(DEFAULT_KERNELS.len(), 7 * 2 + 6 * 7 * 2 + 2 * 2);
        assert!(DEFAULT_KERNELS.contains(&"reduce_argmax_rows_thread_f64"));
        assert!(DEFAULT_KERNELS.contains(&"reduce_dot_shuffle_f64"));
        assert!(DEFAULT_KERNELS.contains(&"reduce_argmin_cols_finish_f32"));
        assert!(DEFAULT_KERNELS.contains(&"reduce_argmax_cols_tall_f32"));
        assert!(!DEFAULT_KERNELS.iter().any(|k| k.contains("atomic")));
    }
}
