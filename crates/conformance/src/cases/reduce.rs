//! Reductions (every op, whole and along both axes), arg reductions and dot.
//!
//! Sums are checked against the f64 sum within `tolerance::sum::<T>(n)·Σ|x|`; min,
//! max and indices exactly. The reference here is written from the definitions in
//! [`Reduce`](ndgpu_core::Reduce)'s documentation, independently of the CPU backend.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use ndgpu_core::{ArgOp, Element, Error, Ops, Reduce, ReduceOp};
use ndgpu_cpu::CpuBackend;

use super::Shapes;
use crate::compare::{abs_sum, sum_ratio};
use crate::data::{Laid, Layout, Rng};
use crate::report::{Recorder, Verdict};
use crate::Sizes;

mod special;

const SMALL: Shapes<2> = &[
    [0, 0],
    [0, 5],
    [5, 0],
    [1, 1],
    [1, 97],
    [97, 1],
    [7, 31],
    [33, 65],
    [100, 129],
    [129, 33],
    [64, 64],
];
/// ~100k-element reductions, in one row, one column, and square.
const MEDIUM: Shapes<2> = &[[317, 317], [1, 100_003], [100_003, 1], [1000, 1000]];

const DOT_SMALL: Shapes<1> = &[[0], [1], [7], [31], [33], [65], [100], [129], [1000]];
const DOT_MEDIUM: Shapes<1> = &[[100_003], [1 << 20]];

/// The defining value of `op` over `x` (f64 values of `T` elements): `None` for the
/// min or max of nothing. Sums are in f64 (the reference of the tolerance).
pub(crate) fn reference(op: ReduceOp, x: &[f64]) -> Option<f64> {
    match op {
        ReduceOp::Sum => Some(x.iter().sum()),
        ReduceOp::SumSq => Some(x.iter().map(|v| v * v).sum()),
        ReduceOp::Min | ReduceOp::Max => {
            let arg = if op == ReduceOp::Min {
                ArgOp::ArgMin
            } else {
                ArgOp::ArgMax
            };
            reference_arg(arg, x).map(|i| x[i])
        }
    }
}

/// The defining index of `op` over `x`: the first NaN, else the first extreme.
pub(crate) fn reference_arg(op: ArgOp, x: &[f64]) -> Option<usize> {
    if let Some(i) = x.iter().position(|v| v.is_nan()) {
        return Some(i);
    }
    let mut best: Option<usize> = None;
    for (i, &v) in x.iter().enumerate() {
        let better = match (best, op) {
            (None, _) => true,
            (Some(b), ArgOp::ArgMin) => v < x[b],
            (Some(b), ArgOp::ArgMax) => v > x[b],
        };
        if better {
            best = Some(i);
        }
    }
    best
}

/// The f64 values of a view's lanes along `axis` (all elements, row-major, for None).
fn lanes<T: Element>(a: ArrayView2<T>, axis: Option<Axis>) -> Vec<Vec<f64>> {
    match axis {
        None => vec![a.iter().map(|v| v.as_f64()).collect()],
        Some(ax) => a
            .lanes(ax)
            .into_iter()
            .map(|l| l.iter().map(|v| v.as_f64()).collect())
            .collect(),
    }
}

fn is_empty_err(e: &Error) -> bool {
    matches!(e, Error::Empty { .. })
}

/// Checks one value of a reduction over `lane` (sums within tolerance, the rest exact).
fn check_value<T: Element>(v: &mut Verdict, op: ReduceOp, lane: &[f64], got: T, what: &str) {
    let want = reference(op, lane).expect("non-empty or a sum");
    match op {
        ReduceOp::Sum | ReduceOp::SumSq => {
            let abs_total = match op {
                ReduceOp::Sum => abs_sum(lane.iter().copied()),
                _ => lane.iter().map(|x| x * x).sum(),
            };
            let r = sum_ratio(got, want, lane.len(), abs_total);
            v.ratio(r, || {
                format!("{what}: got {got}, expected {want:e} (error/tolerance {r:.3e})")
            });
        }
        ReduceOp::Min | ReduceOp::Max => {
            let g = got.as_f64();
            let ok = g == want || (g.is_nan() && want.is_nan());
            v.require(ok, || format!("{what}: got {got}, expected {want}"));
        }
    }
}

/// A value reduction, whole (`axis` None) or along an axis, against the definition.
pub(crate) fn check_reduce<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    op: ReduceOp,
    a: ArrayView2<T>,
    axis: Option<Axis>,
) {
    let lanes = lanes(a, axis);
    let needs_element = matches!(op, ReduceOp::Min | ReduceOp::Max);
    let any_empty_lane = lanes.iter().any(|l| l.is_empty());
    match axis {
        None => {
            let r = b.reduce(op, a);
            if needs_element && any_empty_lane {
                v.err(r, "Empty", is_empty_err);
            } else if let Some(got) = v.ok(r) {
                check_value(v, op, &lanes[0], got, op.name());
            }
        }
        Some(ax) => {
            let r = b.reduce_axis(op, a, ax);
            if needs_element && any_empty_lane {
                v.err(r, "Empty", is_empty_err);
            } else if let Some(got) = v.ok(r) {
                check_lengths(v, got.len(), lanes.len());
                for (i, (lane, g)) in lanes.iter().zip(got.iter()).enumerate() {
                    check_value(v, op, lane, *g, &format!("{} [{i}]", op.name()));
                }
            }
        }
    }
}

fn check_lengths(v: &mut Verdict, got: usize, want: usize) {
    v.require(got == want, || format!("{got} results, expected {want}"));
}

/// An index reduction, whole or along an axis, against the definition.
pub(crate) fn check_arg<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    op: ArgOp,
    a: ArrayView2<T>,
    axis: Option<Axis>,
) {
    let lanes = lanes(a, axis);
    let any_empty_lane = lanes.iter().any(|l| l.is_empty());
    let want: Vec<Option<usize>> = lanes.iter().map(|l| reference_arg(op, l)).collect();
    let got: Option<Array1<usize>> = match axis {
        None => {
            let r = b.arg_reduce(op, a);
            if any_empty_lane {
                v.err(r, "Empty", is_empty_err);
                return;
            }
            v.ok(r).map(|i| Array1::from(vec![i]))
        }
        Some(ax) => {
            let r = b.arg_reduce_axis(op, a, ax);
            if any_empty_lane {
                v.err(r, "Empty", is_empty_err);
                return;
            }
            v.ok(r)
        }
    };
    let Some(got) = got else { return };
    check_lengths(v, got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        v.require(Some(*g) == *w, || {
            format!(
                "{} [{i}]: got index {g}, expected {}",
                op.name(),
                w.unwrap_or(usize::MAX)
            )
        });
    }
}

fn axis_name(axis: Option<Axis>) -> String {
    axis.map_or("whole".to_string(), |a| format!("axis {}", a.index()))
}

/// Every reduction of one matrix, one case each.
pub(crate) fn all_reductions<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    rec: &mut Recorder,
    what: &str,
    a: ArrayView2<T>,
) {
    for axis in [None, Some(Axis(0)), Some(Axis(1))] {
        for op in ReduceOp::ALL {
            rec.case(format!("{} {} {what}", op.name(), axis_name(axis)), |v| {
                check_reduce(v, b, op, a, axis)
            });
        }
        for op in ArgOp::ALL {
            rec.case(format!("{} {} {what}", op.name(), axis_name(axis)), |v| {
                check_arg(v, b, op, a, axis)
            });
        }
    }
}

/// A 1-D view of `x` in one of four layouts: contiguous, every other element of a
/// NaN-padded array, reversed, or a column of a row-major matrix.
fn vector_view<T: Element>(x: &Array1<T>, kind: usize) -> (Array2<T>, &'static str) {
    let n = x.len();
    // Stored as a matrix so that each kind is a plain `ArrayView1` of it.
    match kind % 4 {
        0 => (Array2::from_shape_fn((1, n), |(_, j)| x[j]), "contiguous"),
        1 => (
            Array2::from_shape_fn(
                (1, 2 * n),
                |(_, j)| if j % 2 == 0 { x[j / 2] } else { T::nan() },
            ),
            "stride 2",
        ),
        2 => (
            Array2::from_shape_fn((1, n), |(_, j)| x[n - 1 - j]),
            "reversed",
        ),
        _ => (
            Array2::from_shape_fn((n, 3), |(i, j)| if j == 1 { x[i] } else { T::nan() }),
            "column",
        ),
    }
}

fn view_of<T>(stored: &Array2<T>, kind: usize) -> ArrayView1<'_, T> {
    use ndarray::s;
    match kind % 4 {
        0 => stored.row(0),
        1 => stored.slice(s![0, ..;2]),
        2 => stored.slice(s![0, ..;-1]),
        _ => stored.column(1),
    }
}

/// Every reduce case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    for (i, &[m, n]) in super::shapes(sizes, SMALL, MEDIUM).iter().enumerate() {
        let a = rng.matrix::<T>(m, n);
        for layout in [Layout::nth(i), Layout::nth(i + 2)] {
            let laid = Laid::new(&a, layout);
            all_reductions(b, rec, &format!("{m}x{n} A:{}", layout.name()), laid.view());
        }
    }
    let cpu = CpuBackend::new();
    for (i, &[n]) in super::shapes(sizes, DOT_SMALL, DOT_MEDIUM)
        .iter()
        .enumerate()
    {
        let (x, y): (Array1<T>, Array1<T>) = (
            Array1::from_shape_simple_fn(n, || T::from_f64(rng.value())),
            Array1::from_shape_simple_fn(n, || T::from_f64(rng.value())),
        );
        let (xs, xk) = vector_view(&x, i);
        let (ys, yk) = vector_view(&y, i + 1);
        let (xv, yv) = (view_of(&xs, i), view_of(&ys, i + 1));
        rec.case(format!("dot {n} x:{xk} y:{yk}"), |v| {
            let terms: Vec<f64> = x
                .iter()
                .zip(&y)
                .map(|(a, b)| a.as_f64() * b.as_f64())
                .collect();
            let want: f64 = terms.iter().sum();
            let abs_total = abs_sum(terms.iter().copied());
            if let (Some(got), Some(c)) = (v.ok(b.dot(xv, yv)), v.ok(cpu.dot(xv, yv))) {
                let r = sum_ratio(got, want, n, abs_total);
                v.ratio(r, || {
                    format!("got {got}, expected {want:e} (error/tolerance {r:.3e})")
                });
                let r = sum_ratio(got, c.as_f64(), n, abs_total);
                v.ratio(r, || {
                    format!("got {got}, cpu reference {c} (error/tolerance {r:.3e})")
                });
            }
        });
    }
    special::run(b, sizes, rng, rec);
}

/// A matrix from rows of f64 values.
pub(crate) fn from_rows<T: Element>(rows: &[&[f64]]) -> Array2<T> {
    let n = rows.first().map_or(0, |r| r.len());
    Array2::from_shape_fn((rows.len(), n), |(i, j)| T::from_f64(rows[i][j]))
}
