//! Reductions ladder. (Stub: being written.)
use ndarray::{Array1, ArrayView1, ArrayView2, Axis};
use ndgpu_core::{ArgOp, Error, Reduce, ReduceOp, Result};

use crate::CudaBackend;
use crate::CudaElement;

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["naive"];
/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[];
/// Determinism and scope.
pub const NOTE: &str = "reduce: (being written)";

impl<T: CudaElement> Reduce<T> for CudaBackend {
    fn reduce(&self, _op: ReduceOp, _a: ArrayView2<T>) -> Result<T> {
        Err(Error::invalid("reduce", "not yet written"))
    }
    fn reduce_axis(&self, _op: ReduceOp, _a: ArrayView2<T>, _axis: Axis) -> Result<Array1<T>> {
        Err(Error::invalid("reduce", "not yet written"))
    }
    fn arg_reduce(&self, _op: ArgOp, _a: ArrayView2<T>) -> Result<usize> {
        Err(Error::invalid("reduce", "not yet written"))
    }
    fn arg_reduce_axis(&self, _op: ArgOp, _a: ArrayView2<T>, _axis: Axis) -> Result<Array1<usize>> {
        Err(Error::invalid("reduce", "not yet written"))
    }
    fn dot(&self, _x: ArrayView1<T>, _y: ArrayView1<T>) -> Result<T> {
        Err(Error::invalid("dot", "not yet written"))
    }
}
