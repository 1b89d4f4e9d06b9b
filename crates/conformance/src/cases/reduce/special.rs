//! Reductions with known answers: NaN, infinities, ties, constants, and the errors.
//!
//! Each matrix also goes through every reduction against the generic definition; the
//! answers written out here guard that definition itself.

use std::fmt::Debug;

use ndarray::{Array1, Array2, ArrayView1, Axis};
use ndgpu_core::{ArgOp, Element, Error, Ops, ReduceOp, Result};

use super::{all_reductions, from_rows};
use crate::data::{Laid, Layout, Rng};
use crate::report::{Recorder, Verdict};
use crate::Sizes;

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

/// The results of a reduction: `whole`'s one, or `along` `axis`.
fn whole_or_along<R: Clone>(
    axis: Option<Axis>,
    whole: impl FnOnce() -> Result<R>,
    along: impl FnOnce(Axis) -> Result<Array1<R>>,
) -> Result<Vec<R>> {
    match axis {
        None => whole().map(|x| vec![x]),
        Some(ax) => along(ax).map(|a| a.to_vec()),
    }
}

/// Requires the results `got` of the reduction `name` to be exactly `want`, each as
/// `is` compares a result with its answer.
fn expect_exactly<G: Debug, W: Debug>(
    v: &mut Verdict,
    name: &str,
    got: Result<Vec<G>>,
    want: &[W],
    is: impl Fn(&G, &W) -> bool,
) {
    let Some(got) = v.ok(got) else { return };
    let same = got.len() == want.len() && got.iter().zip(want).all(|(g, w)| is(g, w));
    v.require(same, || format!("{name}: got {got:?}, expected {want:?}"));
}

/// Whether a value is the answer `w`, NaN matching NaN.
fn same_value<T: Element>(g: &T, w: &f64) -> bool {
    g.as_f64() == *w || (g.is_nan() && w.is_nan())
}

/// Known answers of one matrix: `(op, axis, values)` and `(op, axis, indices)`.
type Values = &'static [(ReduceOp, Option<Axis>, &'static [f64])];
type Indices = &'static [(ArgOp, Option<Axis>, &'static [usize])];

fn known<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    rec: &mut Recorder,
    what: &str,
    a: &Array2<T>,
    values: Values,
    indices: Indices,
) {
    for layout in [Layout::C, Layout::Transposed, Layout::Strided] {
        let laid = Laid::new(a, layout);
        let name = format!("known answers: {what} A:{}", layout.name());
        let view = laid.view();
        rec.case(name, |v| {
            for &(op, axis, want) in values {
                let along = |ax| b.reduce_axis(op, view, ax);
                let got = whole_or_along(axis, || b.reduce(op, view), along);
                expect_exactly(v, op.name(), got, want, same_value);
            }
            for &(op, axis, want) in indices {
                let along = |ax| b.arg_reduce_axis(op, view, ax);
                let got = whole_or_along(axis, || b.arg_reduce(op, view), along);
                expect_exactly(v, op.name(), got, want, usize::eq);
            }
        });
    }
    all_reductions(b, rec, what, a.view());
}

const A0: Option<Axis> = Some(Axis(0));
const A1: Option<Axis> = Some(Axis(1));

/// Every special case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    use ArgOp::{ArgMax, ArgMin};
    use ReduceOp::{Max, Min, Sum, SumSq};

    let nan = from_rows::<T>(&[&[1.0, NAN, 0.0], &[NAN, 2.0, -1.0]]);
    let values: Values = &[
        (Min, None, &[NAN]),
        (Max, None, &[NAN]),
        (Sum, None, &[NAN]),
        (SumSq, None, &[NAN]),
        (Min, A0, &[NAN, NAN, -1.0]),
        (Max, A0, &[NAN, NAN, 0.0]),
        (Max, A1, &[NAN, NAN]),
    ];
    let indices: Indices = &[
        (ArgMin, None, &[1]),
        (ArgMax, None, &[1]),
        (ArgMin, A0, &[1, 0, 1]),
        (ArgMax, A0, &[1, 0, 0]),
        (ArgMin, A1, &[1, 0]),
        (ArgMax, A1, &[1, 0]),
    ];
    known(b, rec, "NaN 2x3", &nan, values, indices);

    let ties = from_rows::<T>(&[&[3.0, 1.0, 5.0, 1.0], &[5.0, 1.0, 3.0, 5.0]]);
    let values: Values = &[
        (Min, None, &[1.0]),
        (Max, None, &[5.0]),
        (Sum, A1, &[10.0, 14.0]),
    ];
    let indices: Indices = &[
        (ArgMin, None, &[1]),
        (ArgMax, None, &[2]),
        (ArgMin, A0, &[0, 0, 1, 0]),
        (ArgMax, A0, &[1, 0, 0, 1]),
        (ArgMin, A1, &[1, 1]),
        (ArgMax, A1, &[2, 0]),
    ];
    known(b, rec, "ties 2x4", &ties, values, indices);

    let inf = from_rows::<T>(&[&[1.0, INF, -INF, 3.0]]);
    let values: Values = &[
        (Min, None, &[-INF]),
        (Max, None, &[INF]),
        (Sum, None, &[NAN]),
        (SumSq, None, &[INF]),
        (Max, A0, &[1.0, INF, -INF, 3.0]),
    ];
    let indices: Indices = &[
        (ArgMin, None, &[2]),
        (ArgMax, None, &[1]),
        (ArgMax, A1, &[1]),
    ];
    known(b, rec, "infinities 1x4", &inf, values, indices);

    let constant = Array2::from_elem((33, 65), T::from_f64(0.5));
    let values: Values = &[(Min, None, &[0.5]), (Max, None, &[0.5])];
    let indices: Indices = &[(ArgMin, None, &[0]), (ArgMax, None, &[0])];
    known(b, rec, "constant 33x65", &constant, values, indices);

    // Across blocks of a parallel reduction: the answers sit far from index 0 and
    // the first of two candidates must win whichever block sees it first.
    let mut shapes = vec![(100, 129)];
    if sizes == Sizes::Medium {
        shapes.push((317, 317));
    }
    for (m, n) in shapes {
        placed(b, rng, rec, m, n);
    }
    errors(b, rng, rec);
}

/// NaN at two places, and the extremes at two places each, in a random `m × n`
/// matrix; the first of each (row-major) must be found.
fn placed<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    rng: &mut Rng,
    rec: &mut Recorder,
    m: usize,
    n: usize,
) {
    let (r1, r2) = (m * 2 / 5, m * 7 / 10);
    let mut ties = rng.matrix::<T>(m, n);
    ties[[m / 10, n - 29]] = T::from_f64(2.0);
    ties[[m - 10, 5]] = T::from_f64(2.0);
    ties[[m / 10, n - 9]] = T::from_f64(2.0);
    ties[[r2, 0]] = T::from_f64(-2.0);
    ties[[m / 5, n / 2]] = T::from_f64(-2.0);
    let mut nan = ties.clone();
    nan[[r2, 3]] = T::nan();
    nan[[r1, 7]] = T::nan();
    for (what, a, first_max, first_min) in [
        ("ties", &ties, (m / 10, n - 29), (m / 5, n / 2)),
        ("NaN", &nan, (r1, 7), (r1, 7)),
    ] {
        let layout = Layout::Strided;
        let laid = Laid::new(a, layout);
        let name = format!(
            "known answers: {what} placed in {m}x{n} A:{}",
            layout.name()
        );
        rec.case(name, |v| {
            let flat = |(i, j): (usize, usize)| i * n + j;
            for (op, first) in [(ArgOp::ArgMax, first_max), (ArgOp::ArgMin, first_min)] {
                let got = b.arg_reduce(op, laid.view()).map(|i| vec![i]);
                expect_exactly(v, op.name(), got, &[flat(first)], usize::eq);
            }
            if what == "NaN" {
                let cols = b.arg_reduce_axis(ArgOp::ArgMax, laid.view(), Axis(0));
                if let Some(cols) = v.ok(cols) {
                    v.require(cols.get(3) == Some(&r2) && cols.get(7) == Some(&r1), || {
                        format!(
                            "argmax per column at 3, 7: {:?}",
                            (cols.get(3), cols.get(7))
                        )
                    });
                }
                let rows = b.arg_reduce_axis(ArgOp::ArgMin, laid.view(), Axis(1));
                if let Some(rows) = v.ok(rows) {
                    v.require(rows.get(r1) == Some(&7) && rows.get(r2) == Some(&3), || {
                        format!(
                            "argmin per row at {r1}, {r2}: {:?}",
                            (rows.get(r1), rows.get(r2))
                        )
                    });
                }
                let max = v.ok(b.reduce(ReduceOp::Max, laid.view()));
                v.require(max.is_some_and(|x| x.is_nan()), || {
                    format!("max: {max:?}, expected NaN")
                });
            }
        });
        all_reductions(b, rec, &format!("{what} placed in {m}x{n}"), laid.view());
    }
}

fn errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let a = rng.matrix::<T>(3, 4);
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument { .. });
    rec.case("reduce error: axis 2", |v| {
        v.err(
            b.reduce_axis(ReduceOp::Sum, a.view(), Axis(2)),
            "InvalidArgument",
            invalid,
        );
        v.err(
            b.arg_reduce_axis(ArgOp::ArgMin, a.view(), Axis(2)),
            "InvalidArgument",
            invalid,
        );
    });
    let (x, y) = (rng.matrix::<T>(1, 3), rng.matrix::<T>(1, 4));
    rec.case("dot error: lengths 3 and 4", |v| {
        let shape = |e: &Error| matches!(e, Error::ShapeMismatch { .. });
        v.err(b.dot(x.row(0), y.row(0)), "ShapeMismatch", shape);
    });
    let mut z = rng.matrix::<T>(1, 4);
    z[[0, 2]] = T::nan();
    rec.case("dot with NaN is NaN", |v| {
        let d = v.ok(b.dot(z.row(0), y.row(0)));
        v.require(d.is_some_and(|d| d.is_nan()), || {
            format!("got {d:?}, expected NaN")
        });
    });
    rec.case("dot of empty vectors is 0", |v| {
        let empty: [T; 0] = [];
        let e = ArrayView1::from(&empty[..]);
        let d = v.ok(b.dot(e, e));
        v.require(d == Some(T::zero()), || format!("got {d:?}, expected 0"));
    });
}
