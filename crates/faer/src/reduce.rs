//! Reductions and the dot product, in parallel, with results independent of the
//! number of threads.
//!
//! Whole-array reductions cut the row-major data into fixed chunks (not one per
//! thread), reduce each, and combine the partial results in chunk order; per-axis
//! reductions give each lane to one task. Sums accumulate in f64 and round once. The
//! extreme-value reductions follow the NaN policy of [`Reduce`]: NaN wins (the first
//! one, for the index reductions), otherwise the first occurrence of the extreme.

use ndarray::Axis;
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{host, ArgOp, Element, Indices, Matrix, ReduceKernels, ReduceOp, Result};
use rayon::prelude::*;

use crate::{FaerBackend, FaerElement, HERE};

/// Elements per chunk of a whole-array reduction.
const CHUNK: usize = 1 << 16;

/// The candidate a run of values offers an index reduction: its first NaN, or else
/// its first extreme.
#[derive(Clone, Copy)]
struct Pick<T> {
    at: usize,
    value: T,
}

/// The pick of `values` (indices from `start`), or `None` if there are none.
fn pick<T: Element>(op: ArgOp, start: usize, values: &[T]) -> Option<Pick<T>> {
    let mut best: Option<Pick<T>> = None;
    for (i, &v) in values.iter().enumerate() {
        if v.is_nan() {
            return Some(Pick {
                at: start + i,
                value: v,
            });
        }
        let better = match best {
            None => true,
            // Strict comparisons keep the lowest index on ties.
            Some(b) => match op {
                ArgOp::ArgMin => v < b.value,
                ArgOp::ArgMax => v > b.value,
            },
        };
        if better {
            best = Some(Pick {
                at: start + i,
                value: v,
            });
        }
    }
    best
}

/// Two picks of consecutive runs, `a` before `b`, as one.
fn combine<T: Element>(op: ArgOp, a: Option<Pick<T>>, b: Option<Pick<T>>) -> Option<Pick<T>> {
    match (a, b) {
        (Some(a), _) if a.value.is_nan() => Some(a),
        (_, Some(b)) if b.value.is_nan() => Some(b),
        (Some(a), Some(b)) => {
            let b_wins = match op {
                ArgOp::ArgMin => b.value < a.value,
                ArgOp::ArgMax => b.value > a.value,
            };
            Some(if b_wins { b } else { a })
        }
        (a, None) => a,
        (None, b) => b,
    }
}

/// Σ f(x) of a run, in f64.
fn sum_of<T: Element>(values: &[T], sq: bool) -> f64 {
    if sq {
        values.iter().map(|v| v.as_f64() * v.as_f64()).sum()
    } else {
        values.iter().map(|v| v.as_f64()).sum()
    }
}

fn arg_op(op: ReduceOp) -> ArgOp {
    if op == ReduceOp::Min {
        ArgOp::ArgMin
    } else {
        ArgOp::ArgMax
    }
}

/// `op` over a whole run of values, cut into chunks reduced in parallel.
fn whole<T: Element>(op: ReduceOp, data: &[T]) -> Option<T> {
    match op {
        ReduceOp::Sum | ReduceOp::SumSq => {
            let sq = op == ReduceOp::SumSq;
            let parts: Vec<f64> = data.par_chunks(CHUNK).map(|c| sum_of(c, sq)).collect();
            Some(T::from_f64(parts.into_iter().sum()))
        }
        ReduceOp::Min | ReduceOp::Max => whole_arg(arg_op(op), data).map(|p| p.value),
    }
}

fn whole_arg<T: Element>(op: ArgOp, data: &[T]) -> Option<Pick<T>> {
    let parts: Vec<Option<Pick<T>>> = data
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(i, c)| pick(op, i * CHUNK, c))
        .collect();
    parts.into_iter().fold(None, |acc, p| combine(op, acc, p))
}

/// One value per lane along `axis`, lanes in parallel. The lanes along `Axis(0)` are
/// columns: the matrix is transposed first so that every lane is contiguous.
fn per_lane<T: Element, R: Send>(
    b: &FaerBackend,
    a: &Matrix<T>,
    axis: Axis,
    f: impl Fn(&[T]) -> R + Sync + Send,
) -> Result<Vec<R>>
where
    FaerBackend: ndgpu_core::Transpose<T>,
{
    let transposed;
    let a = if axis.index() == 0 {
        transposed = ndgpu_core::Transpose::<T>::transpose_dev(b, a)?;
        &transposed
    } else {
        a
    };
    let s: &HostStorage<T> = HERE.matrix("reduce", "A", a)?;
    let len = a.cols();
    if len == 0 {
        return Ok((0..a.rows()).map(|_| f(&[])).collect());
    }
    Ok(s.data.par_chunks(len).map(f).collect())
}

impl<T: FaerElement> ReduceKernels<T> for FaerBackend {
    fn reduce_unchecked(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T> {
        let s: &HostStorage<T> = HERE.matrix(op.name(), "A", a)?;
        Ok(whole(op, &s.data).expect("non-empty was checked"))
    }

    fn reduce_axis_unchecked(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>> {
        HERE.host_view(op.name(), "A", a)?;
        // One output per lane; their number is not bounded by the input's bytes when
        // the lanes are empty.
        let kept = backend::kept(a.dim(), axis);
        let out: Vec<T> = if a.is_empty() {
            host::filled_vec(op.name(), kept, T::zero())?
        } else {
            per_lane(self, a, axis, |lane| match op {
                ReduceOp::Sum | ReduceOp::SumSq => T::from_f64(sum_of(lane, op == ReduceOp::SumSq)),
                ReduceOp::Min | ReduceOp::Max => {
                    pick(arg_op(op), 0, lane)
                        .expect("lane length checked")
                        .value
                }
            })?
        };
        let n = out.len();
        let (rows, cols) = if axis.index() == 0 { (1, n) } else { (n, 1) };
        Ok(backend::matrix(rows, cols, HostStorage { data: out }))
    }

    fn arg_reduce_unchecked(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize> {
        let s: &HostStorage<T> = HERE.matrix(op.name(), "A", a)?;
        Ok(whole_arg(op, &s.data).expect("non-empty was checked").at)
    }

    fn arg_reduce_axis_unchecked(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices> {
        HERE.host_view(op.name(), "A", a)?;
        let kept = backend::kept(a.dim(), axis);
        let data = per_lane(self, a, axis, |lane| {
            pick(op, 0, lane).expect("lane length checked").at
        })?;
        debug_assert_eq!(data.len(), kept);
        Ok(backend::indices(kept, HostStorage { data }))
    }

    fn dot_unchecked(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T> {
        let x: &HostStorage<T> = HERE.matrix("dot", "x", x)?;
        let y: &HostStorage<T> = HERE.matrix("dot", "y", y)?;
        let parts: Vec<f64> = x
            .data
            .par_chunks(CHUNK)
            .zip(y.data.par_chunks(CHUNK))
            .map(|(a, b)| a.iter().zip(b).map(|(p, q)| p.as_f64() * q.as_f64()).sum())
            .collect();
        Ok(T::from_f64(parts.into_iter().sum()))
    }
}
