//! Triangular solves `op(T)·X = B`: every combination of triangle, transpose and unit
//! diagonal with LAPACK's ratio (xTRT02), only the triangle read (NaN elsewhere), a zero
//! on a diagonal that is read, the errors, and the resident form.

use ndarray::Array2;
use ndgpu_core::{tolerance, Element, Error, Factorize, Ops, Trans, Triangular, Uplo};

use super::{outcome, Shapes, Suite};
use crate::cases::common::{foreign_of, same_bits, shape_mismatch, wrong_place};
use crate::compare::{backward_ratio, triangle};
use crate::data::{Laid, Layout, Rng};
use crate::report::{Recorder, Verdict};

/// (n, nrhs).
const SMALL: Shapes<2> = &[
    [0, 3],
    [1, 1],
    [2, 2],
    [7, 3],
    [31, 1],
    [33, 5],
    [65, 7],
    [100, 2],
    [129, 3],
];
const MEDIUM: Shapes<2> = &[[257, 3], [513, 4]];

/// The eight operands: each triangle, as is or transposed, its diagonal read or not.
fn combinations() -> impl Iterator<Item = Triangular> {
    [Triangular::lower(), Triangular::upper()]
        .into_iter()
        .flat_map(|t| [t, t.trans(Trans::Yes)])
        .flat_map(|t| [t, t.unit(true)])
}

/// Short name of an operand: `L`, `Uᵀ`, `L unit`, ...
fn name(tri: Triangular) -> String {
    let side = if tri.uplo == Uplo::Upper { "U" } else { "L" };
    let t = if tri.trans == Trans::Yes { "ᵀ" } else { "" };
    let unit = if tri.unit { " unit" } else { "" };
    format!("{side}{t}{unit}")
}

/// Whether entry (i, j) of A is read for `tri`.
fn read(tri: Triangular, i: usize, j: usize) -> bool {
    let side = if tri.uplo == Uplo::Upper {
        j >= i
    } else {
        j <= i
    };
    side && !(tri.unit && i == j)
}

/// A random n×n matrix whose triangles are well conditioned: off the diagonal uniform
/// in [−1/n, 1/n), on it ±[1, 2). Each triangle is diagonally dominant by rows and by
/// columns, so every solve has |X| ≤ n·|B| (random triangles with entries of one scale
/// have condition numbers growing like 2ⁿ, which would overflow f32).
fn dominant<T: Element>(rng: &mut Rng, n: usize) -> Array2<T> {
    Array2::from_shape_fn((n, n), |(i, j)| {
        let x = rng.value();
        T::from_f64(if i == j {
            x.signum() * (1.0 + x.abs())
        } else {
            x / n as f64
        })
    })
}

/// A copy of `a` with NaN wherever `tri` does not read.
fn poison<T: Element>(a: &Array2<T>, tri: Triangular) -> Array2<T> {
    Array2::from_shape_fn(
        a.dim(),
        |(i, j)| {
            if read(tri, i, j) {
                a[[i, j]]
            } else {
                T::nan()
            }
        },
    )
}

/// Checks X of `op(T)·X = B`: shape, C order, LAPACK's ratio against `limit`.
fn check<T: Element>(
    v: &mut Verdict,
    a: &Array2<T>,
    tri: Triangular,
    x: &Array2<T>,
    rhs: &Array2<T>,
    limit: f64,
) {
    v.require(x.dim() == rhs.dim(), || {
        format!("X is {:?}, B {:?}", x.dim(), rhs.dim())
    });
    v.require(x.is_standard_layout(), || "output is not C-ordered".into());
    let t = triangle(a.view(), tri);
    let r = backward_ratio(t.view(), x.view(), rhs.view());
    v.ratio(r / limit, || {
        format!("‖B − op(T)·X‖₁/(n·ε·‖op(T)‖₁·‖X‖₁) = {r:.3e} > {limit}")
    });
}

/// Every triangular-solve case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, s: Suite<'_>) {
    let Suite(sizes, rng, rec, cpu) = s;
    let limit = tolerance::trsm_ratio::<T>(rec.precision());
    for (i, &[n, nrhs]) in super::shapes(sizes, SMALL, MEDIUM).iter().enumerate() {
        let a = dominant::<T>(rng, n);
        let rhs = rng.matrix::<T>(n, nrhs);
        for (c, tri) in combinations().enumerate() {
            // Every other case hides NaN where the solve must not read.
            let poisoned = (i + c) % 2 == 1;
            let input = if poisoned { poison(&a, tri) } else { a.clone() };
            let (la, lb) = (Layout::nth(i + c), Layout::nth(i + c + 1));
            let (a_laid, b_laid) = (Laid::new(&input, la), Laid::new(&rhs, lb));
            let nan = if poisoned {
                " (NaN where not read)"
            } else {
                ""
            };
            let case = format!(
                "solve_triangular {} {n} with {nrhs} rhs A:{}{nan} B:{}",
                name(tri),
                la.name(),
                lb.name()
            );
            rec.case(case, |v| {
                let got = b.solve_triangular(a_laid.view(), b_laid.view(), tri);
                let want = cpu.solve_triangular(a_laid.view(), b_laid.view(), tri);
                let (g, w) = (outcome(&got), outcome(&want));
                v.require(g == w, || format!("outcome {g}, cpu reference {w}"));
                if let Some(x) = v.ok(got) {
                    check(v, &a, tri, &x, &rhs, limit);
                }
            });
        }
    }
    errors(b, rng, rec);
}

/// Zeros on the diagonal, and bad input.
fn errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let limit = tolerance::trsm_ratio::<T>(rec.precision());
    let mut a = dominant::<T>(rng, 7);
    a[[3, 3]] = T::zero();
    a[[5, 5]] = T::zero();
    let rhs = rng.matrix::<T>(7, 2);
    for tri in combinations() {
        rec.case(
            format!("solve_triangular {}: zeros at pivots 3 and 5", name(tri)),
            |v| {
                let r = b.solve_triangular(a.view(), rhs.view(), tri);
                if tri.unit {
                    // The diagonal is not read: the zeros do not matter.
                    if let Some(x) = v.ok(r) {
                        check(v, &a, tri, &x, &rhs, limit);
                    }
                } else {
                    v.err(r, "Singular(pivot 3)", |e| {
                        matches!(e, Error::Singular { pivot: 3, .. })
                    });
                }
            },
        );
    }
    let not_square = |e: &Error| matches!(e, Error::NotSquare { .. });
    let non_finite = |ix: (usize, usize)| move |e: &Error| matches!(e, Error::NonFinite { index, .. } if *index == ix);
    let (a35, a4) = (rng.matrix::<T>(3, 5), dominant::<T>(rng, 4));
    let (b32, b42) = (rng.matrix::<T>(3, 2), rng.matrix::<T>(4, 2));
    let lower = Triangular::lower();
    let (mut bad_a, mut bad_b) = (a4.clone(), b42.clone());
    bad_a[[2, 1]] = T::nan();
    bad_b[[3, 0]] = T::infinity();
    rec.case(
        "solve_triangular errors: shapes, NaN in what is read",
        |v| {
            v.err(
                b.solve_triangular(a35.view(), b32.view(), lower),
                "NotSquare",
                not_square,
            );
            let r = b.solve_triangular(a4.view(), b32.view(), lower);
            shape_mismatch(v, r, "ShapeMismatch");
            let r = b.solve_triangular(bad_a.view(), b42.view(), lower);
            v.err(r, "NonFinite at (2, 1)", non_finite((2, 1)));
            let r = b.solve_triangular(a4.view(), bad_b.view(), lower.trans(Trans::Yes));
            v.err(r, "NonFinite at (3, 0)", non_finite((3, 0)));
            // (2, 1) is below the diagonal: an upper solve does not read it.
            let upper = Triangular::upper();
            if let Some(x) = v.ok(b.solve_triangular(bad_a.view(), b42.view(), upper)) {
                check(v, &bad_a, upper, &x, &b42, limit);
            }
        },
    );
}

/// The resident triangular-solve cases.
pub(crate) fn resident<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let n = 33;
    let a = dominant::<T>(rng, n);
    let rhs = rng.matrix::<T>(n, 4);
    let limit = tolerance::trsm_ratio::<T>(rec.precision());
    let tri = Triangular::upper().trans(Trans::Yes);
    rec.case(
        "solve_triangular_in_place_dev: ratio; NaN in a column of B stays there",
        |v| {
            let mut bad = rhs.clone();
            bad[[4, 2]] = T::nan();
            let (Some(da), Some(mut db)) = (v.ok(b.upload(a.view())), v.ok(b.upload(bad.view())))
            else {
                return;
            };
            if v.ok(b.solve_triangular_in_place_dev(&da, tri, &mut db))
                .is_none()
            {
                return;
            }
            let Some(x) = v.ok(b.download(&db)) else {
                return;
            };
            let nan_col = x.column(2).iter().any(|x| !x.is_finite());
            v.require(nan_col, || "the NaN of column 2 of B is gone".into());
            let keep = [0, 1, 3];
            let finite = keep
                .iter()
                .all(|&c| x.column(c).iter().all(|x| x.is_finite()));
            v.require(finite, || "NaN in one column of B reached another".into());
            // The finite columns, as C-ordered arrays.
            let x = x
                .select(ndarray::Axis(1), &keep)
                .as_standard_layout()
                .into_owned();
            let rhs = rhs
                .select(ndarray::Axis(1), &keep)
                .as_standard_layout()
                .into_owned();
            check(v, &a, tri, &x, &rhs, limit);
        },
    );
    let mut zero = a.clone();
    zero[[6, 6]] = T::zero();
    rec.case(
        "solve_triangular_in_place_dev: Singular leaves B alone; shapes; places",
        |v| {
            let (Some(dz), Some(da), Some(mut db), Some(wide)) = (
                v.ok(b.upload(zero.view())),
                v.ok(b.upload(a.view())),
                v.ok(b.upload(rhs.view())),
                v.ok(b.zeros(n, n + 1)),
            ) else {
                return;
            };
            let r = b.solve_triangular_in_place_dev(&dz, tri, &mut db);
            v.err(r, "Singular(pivot 6)", |e| {
                matches!(e, Error::Singular { pivot: 6, .. })
            });
            if let Some(kept) = v.ok(b.download(&db)) {
                let same = same_bits(kept.iter(), rhs.iter());
                v.require(same, || "B changed by a refused solve".into());
            }
            let r = b.solve_triangular_in_place_dev(&wide, tri, &mut db);
            v.err(r, "NotSquare", |e| matches!(e, Error::NotSquare { .. }));
            let Some(mut short) = v.ok(b.zeros(n - 1, 2)) else {
                return;
            };
            let r = b.solve_triangular_in_place_dev(&da, tri, &mut short);
            shape_mismatch(v, r, "ShapeMismatch");
            let r = b.solve_triangular_in_place_dev(&foreign_of(n, n), tri, &mut db);
            wrong_place(v, r, "WrongPlace (A from elsewhere)");
            let r = b.solve_triangular_in_place_dev(&da, tri, &mut foreign_of(n, 2));
            wrong_place(v, r, "WrongPlace (B from elsewhere)");
        },
    );
}
