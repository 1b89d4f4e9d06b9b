//! Reductions and the dot product.
//!
//! Sums are accumulated in f64 in row-major (logical) order and rounded once. The
//! extreme-value reductions follow the NaN policy documented on
//! [`Reduce`](ndgpu_core::Reduce): NaN wins (the first one, for the index reductions),
//! otherwise the first occurrence of the extreme value.

use ndarray::Axis;
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{host, ArgOp, Element, Indices, Matrix, ReduceKernels, ReduceOp, Result};

use crate::{CpuBackend, HERE};

/// Index (in iteration order) of the element `op` selects: the first NaN if any, else
/// the first extreme. `None` for an empty sequence.
fn arg_of<T: Element>(op: ArgOp, values: impl Iterator<Item = T>) -> Option<usize> {
    let mut best: Option<(usize, T)> = None;
    for (i, v) in values.enumerate() {
        if v.is_nan() {
            return Some(i);
        }
        let better = match best {
            None => true,
            // Strict comparisons keep the lowest index on ties.
            Some((_, b)) => match op {
                ArgOp::ArgMin => v < b,
                ArgOp::ArgMax => v > b,
            },
        };
        if better {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

/// `op` over a sequence; `None` for `Min`/`Max` of nothing.
fn reduce_of<T: Element>(op: ReduceOp, values: impl Iterator<Item = T>) -> Option<T> {
    match op {
        ReduceOp::Sum => Some(T::from_f64(values.map(|v| v.as_f64()).sum())),
        ReduceOp::SumSq => Some(T::from_f64(values.map(|v| v.as_f64() * v.as_f64()).sum())),
        ReduceOp::Min | ReduceOp::Max => {
            let arg = if op == ReduceOp::Min {
                ArgOp::ArgMin
            } else {
                ArgOp::ArgMax
            };
            let values: Vec<T> = values.collect();
            arg_of(arg, values.iter().copied()).map(|i| values[i])
        }
    }
}

impl<T: Element> ReduceKernels<T> for CpuBackend {
    fn reduce_unchecked(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T> {
        let a = HERE.host_view(op.name(), "A", a)?;
        // `iter` walks the logical (row-major) order whatever the memory layout.
        Ok(reduce_of(op, a.iter().copied()).expect("non-empty was checked"))
    }

    fn reduce_axis_unchecked(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>> {
        let a = HERE.host_view(op.name(), "A", a)?;
        // One output per lane along `axis`: per column for Axis(0), per row for Axis(1).
        // Their number is not bounded by the input's bytes when the lanes are empty.
        let kept = backend::kept(a.dim(), axis);
        let mut out = host::filled_vec(op.name(), kept, T::zero())?;
        for (o, lane) in out.iter_mut().zip(a.lanes(axis)) {
            *o = reduce_of(op, lane.iter().copied()).expect("lane length checked");
        }
        Ok(keepdims(axis, out))
    }

    fn arg_reduce_unchecked(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize> {
        let a = HERE.host_view(op.name(), "A", a)?;
        Ok(arg_of(op, a.iter().copied()).expect("non-empty was checked"))
    }

    fn arg_reduce_axis_unchecked(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices> {
        let a = HERE.host_view(op.name(), "A", a)?;
        let kept = backend::kept(a.dim(), axis);
        let data: Vec<usize> = a
            .lanes(axis)
            .into_iter()
            .map(|lane| arg_of(op, lane.iter().copied()).expect("lane length checked"))
            .collect();
        debug_assert_eq!(data.len(), kept);
        Ok(backend::indices(kept, HostStorage { data }))
    }

    fn dot_unchecked(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T> {
        let x = HERE.host_view("dot", "x", x)?;
        let y = HERE.host_view("dot", "y", y)?;
        let s: f64 = x
            .iter()
            .zip(y.iter())
            .map(|(a, b)| a.as_f64() * b.as_f64())
            .sum();
        Ok(T::from_f64(s))
    }
}

/// A per-axis result as NumPy's `keepdims=True` shapes it: 1×n for `Axis(0)`, n×1 for
/// `Axis(1)`.
fn keepdims<T: Element>(axis: Axis, data: Vec<T>) -> Matrix<T> {
    let n = data.len();
    let (rows, cols) = if axis.index() == 0 { (1, n) } else { (n, 1) };
    backend::matrix(rows, cols, HostStorage { data })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};
    use ndgpu_core::prelude::*;
    use ndgpu_core::Error;

    #[test]
    fn nan_policy_and_ties() {
        let cpu = CpuBackend::new();
        let a = array![[3.0f64, 1.0, 1.0], [f64::NAN, 5.0, 5.0]];
        assert!(cpu.reduce(ReduceOp::Min, a.view()).unwrap().is_nan());
        assert!(cpu.reduce(ReduceOp::Max, a.view()).unwrap().is_nan());
        assert_eq!(cpu.arg_reduce(ArgOp::ArgMin, a.view()).unwrap(), 3);
        assert_eq!(cpu.arg_reduce(ArgOp::ArgMax, a.view()).unwrap(), 3);
        let rows = cpu
            .arg_reduce_axis(ArgOp::ArgMin, a.view(), Axis(1))
            .unwrap();
        assert_eq!(rows, array![1, 0]);
        let rows = cpu
            .arg_reduce_axis(ArgOp::ArgMax, a.view(), Axis(1))
            .unwrap();
        assert_eq!(rows, array![0, 0]);
        let cols = cpu
            .arg_reduce_axis(ArgOp::ArgMax, a.view(), Axis(0))
            .unwrap();
        assert_eq!(cols, array![1, 1, 1]);
        let mins = cpu.reduce_axis(ReduceOp::Min, a.view(), Axis(0)).unwrap();
        assert!(mins[0].is_nan());
        assert_eq!(mins.slice(ndarray::s![1..]), array![1.0, 1.0]);
    }

    #[test]
    fn empty_reductions() {
        let cpu = CpuBackend::new();
        let e = Array2::<f32>::zeros((0, 3));
        assert_eq!(cpu.reduce(ReduceOp::Sum, e.view()).unwrap(), 0.0);
        assert!(matches!(
            cpu.reduce(ReduceOp::Min, e.view()),
            Err(Error::Empty { .. })
        ));
        let sums = cpu.reduce_axis(ReduceOp::SumSq, e.view(), Axis(0)).unwrap();
        assert_eq!(sums, array![0.0f32, 0.0, 0.0]);
        let none = cpu.reduce_axis(ReduceOp::Max, e.view(), Axis(1)).unwrap();
        assert_eq!(none.len(), 0);
    }
}
