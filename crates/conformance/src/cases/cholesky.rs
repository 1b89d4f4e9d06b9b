//! Cholesky factorization and solve: LAPACK's test ratios on random SPD matrices and
//! on nearly singular ones, the first failing pivot of matrices made indefinite on
//! purpose, and the errors.

use ndarray::{Array2, ArrayView2};
use ndgpu_core::{tolerance, Element, Error, Factorize, Ops, Result};
use ndgpu_cpu::CpuBackend;

use super::{Shapes, Suite};
use crate::compare::{cholesky_ratio, error_kind, solve_ratio};
use crate::data::{spd, spd_with_condition, Laid, Layout, Rng};
use crate::report::{Recorder, Verdict};
use crate::Sizes;

const SMALL: Shapes<1> = &[[0], [1], [2], [7], [31], [33], [65], [100], [129]];
const MEDIUM: Shapes<1> = &[[257], [513]];

/// (n, p): an SPD matrix of order n made indefinite at pivot p.
const PIVOT_SMALL: Shapes<2> = &[[33, 17], [100, 60], [65, 0], [31, 30]];
const PIVOT_MEDIUM: Shapes<2> = &[[513, 300]];

/// Orders of the nearly singular matrices.
const NEAR_SMALL: Shapes<1> = &[[2], [31], [100]];
const NEAR_MEDIUM: Shapes<1> = &[[257]];

/// A copy of `a` with its strict upper triangle set to NaN: only the lower triangle
/// may be read.
fn poison_upper<T: Element>(a: &Array2<T>) -> Array2<T> {
    let mut p = a.clone();
    for ((i, j), v) in p.indexed_iter_mut() {
        if j > i {
            *v = T::nan();
        }
    }
    p
}

/// The outcome as a comparable description: `Ok` or the error's kind (with pivot).
fn outcome<V>(r: &Result<V>) -> String {
    match r {
        Ok(_) => "Ok".into(),
        Err(e) => error_kind(e),
    }
}

/// Checks a factor: shape, C order, exact zeros above the diagonal, LAPACK's ratio
/// against `limit` (the variant's [`tolerance::cholesky_ratio`]).
fn check_factor<T: Element>(v: &mut Verdict, a: &Array2<T>, l: &Array2<T>, limit: f64) {
    let n = a.nrows();
    v.require(l.dim() == (n, n), || {
        format!("shape {:?}, expected {n}x{n}", l.dim())
    });
    if l.dim() != (n, n) {
        return;
    }
    v.require(l.is_standard_layout(), || "output is not C-ordered".into());
    let upper = l
        .indexed_iter()
        .find(|&((i, j), x)| j > i && *x != T::zero());
    v.require(upper.is_none(), || {
        let ((i, j), x) = upper.expect("found");
        format!("L is not lower triangular: L[{i}, {j}] = {x}")
    });
    let r = cholesky_ratio(a.view(), l.view());
    v.ratio(r / limit, || {
        format!("‖A − L·Lᵀ‖₁/(n·ε·‖A‖₁) = {r:.3e} > {limit}")
    });
}

/// Every Cholesky case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, s: Suite<'_>) {
    let Suite(sizes, rng, rec, cpu) = s;
    let limit = tolerance::cholesky_ratio::<T>(rec.precision());
    for (i, &[n]) in super::shapes(sizes, SMALL, MEDIUM).iter().enumerate() {
        let a = spd::<T>(rng, n);
        let nrhs = [1, 3, 7][i % 3];
        let rhs = rng.matrix::<T>(n, nrhs);
        // Every other case hides NaN above the diagonal of A and of L.
        let poisoned = i % 2 == 1;
        let input = if poisoned {
            poison_upper(&a)
        } else {
            a.clone()
        };
        let (la, ll, lb) = (Layout::nth(i), Layout::nth(i + 2), Layout::nth(i + 1));
        let laid = Laid::new(&input, la);
        let upper = if poisoned {
            " (NaN above the diagonal)"
        } else {
            ""
        };
        let name = format!(
            "cholesky {n} A:{}{upper}, solve {nrhs} rhs L:{} B:{}",
            la.name(),
            ll.name(),
            lb.name()
        );
        rec.case(name, |v| {
            let got = b.cholesky(laid.view());
            let want = cpu.cholesky(laid.view());
            v.require(outcome(&got) == outcome(&want), || {
                format!(
                    "outcome {}, cpu reference {}",
                    outcome(&got),
                    outcome(&want)
                )
            });
            let Some(l) = v.ok(got) else { return };
            check_factor(v, &a, &l, limit);
            if l.dim() != (n, n) {
                return;
            }
            let l_in = if poisoned {
                poison_upper(&l)
            } else {
                l.clone()
            };
            let l_laid = Laid::new(&l_in, ll);
            let rhs_laid = Laid::new(&rhs, lb);
            check_solve(v, b, &a, l_laid.view(), rhs_laid.view());
        });
    }
    near_singular(b, sizes, rng, rec);
    pivots(b, sizes, rng, rec, cpu);
    errors(b, rng, rec);
}

/// Solves A·X = B with the factor `l` of `a`: C order and LAPACK's xPOT02 ratio.
fn check_solve<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    a: &Array2<T>,
    l: ArrayView2<T>,
    rhs: ArrayView2<T>,
) {
    if let Some(x) = v.ok(b.cholesky_solve(l, rhs)) {
        v.require(x.is_standard_layout(), || {
            "solve output is not C-ordered".into()
        });
        let r = solve_ratio(a.view(), x.view(), rhs);
        v.ratio(r / tolerance::SOLVE_RATIO, || {
            format!(
                "solve: ‖B − A·X‖₁/(n·ε·‖A‖₁·‖X‖₁) = {r:.3e} > {}",
                tolerance::SOLVE_RATIO
            )
        });
    }
}

/// Nearly singular SPD matrices, as LAPACK's xCHKPO tests them (its matrix types 6
/// and 7): 2-norm condition numbers √(0.1/ε) and 0.1/ε. The ratios bound the backward
/// error, which for Cholesky does not grow with the condition number, so they hold
/// unchanged. At √(0.1/ε) the smallest eigenvalue, ‖A‖₂/κ, is still over thirty times
/// the n·ε·‖A‖₂ that rounding can move it by (f32, n = 257; ten times the three times
/// that of f32 on 3xTF32): the factor must exist. At 0.1/ε rounding
/// (of A to the element type, then in the factorization) can make the matrix
/// indefinite, so either outcome is right: a factor that meets the ratios, or
/// `NotPositiveDefinite` naming a pivot in range with a value that is not positive;
/// never NaN in a factor, never another error.
fn near_singular<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    let limit = tolerance::cholesky_ratio::<T>(rec.precision());
    for &[n] in super::shapes(sizes, NEAR_SMALL, NEAR_MEDIUM).iter() {
        for (must_factor, cond) in [(true, (0.1 / T::EPS).sqrt()), (false, 0.1 / T::EPS)] {
            let a = spd_with_condition::<T>(rng, n, cond);
            let rhs = rng.matrix::<T>(n, 2);
            let name = format!("cholesky: SPD {n} with condition {cond:.1e}");
            rec.case(name, |v| match b.cholesky(a.view()) {
                Ok(l) => {
                    check_factor(v, &a, &l, limit);
                    if l.dim() == (n, n) {
                        check_solve(v, b, &a, l.view(), rhs.view());
                    }
                }
                Err(Error::NotPositiveDefinite { pivot, value }) if !must_factor => {
                    v.require(pivot < n && !(value > 0.0 && value.is_finite()), || {
                        format!("NotPositiveDefinite at pivot {pivot} with value {value}")
                    });
                }
                Err(e) => {
                    v.require(false, || format!("{}: {e}", error_kind(&e)));
                }
            });
        }
    }
}

fn expect_pivot<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    a: ArrayView2<T>,
    p: usize,
) {
    let r = b.cholesky(a);
    v.err(r, &format!("NotPositiveDefinite(pivot {p})"), |e| match e {
        Error::NotPositiveDefinite { pivot, value } => {
            *pivot == p && !(*value > 0.0 && value.is_finite())
        }
        _ => false,
    });
}

/// Matrices whose first failing pivot is known.
fn pivots<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
    cpu: &CpuBackend,
) {
    for (n, p) in [(7, 3), (7, 0), (1, 0)] {
        let a = Array2::from_shape_fn((n, n), |(i, j)| {
            T::from_f64(if i != j {
                0.0
            } else if i == p {
                -1.0
            } else {
                1.0
            })
        });
        rec.case(
            format!("cholesky: diagonal {n}x{n} with -1 at pivot {p}"),
            |v| expect_pivot(v, b, a.view(), p),
        );
    }
    let singular = Array2::from_elem((2, 2), T::one());
    rec.case("cholesky: [[1,1],[1,1]] has a zero pivot 1", |v| {
        expect_pivot(v, b, singular.view(), 1)
    });
    // Keep the leading p×p block, and give A[p][p] half of what the earlier columns
    // take from it (Σₖ L[p][k]², from an f64 factor): the diagonal stays positive but
    // the Schur complement at p is about −½·Σₖ L[p][k]².
    for &[n, p] in super::shapes(sizes, PIVOT_SMALL, PIVOT_MEDIUM).iter() {
        let mut a = spd::<T>(rng, n);
        let a64 = a.mapv(|x| x.as_f64());
        let l = match cpu.cholesky(a64.view()) {
            Ok(l) => l,
            Err(e) => {
                rec.case(format!("cholesky: SPD {n} indefinite at {p}"), |v| {
                    v.require(false, || format!("reference failed on the SPD matrix: {e}"));
                });
                continue;
            }
        };
        let taken: f64 = (0..p).map(|k| l[[p, k]] * l[[p, k]]).sum();
        // p = 0 has nothing taken: a negative diagonal entry is the only way there.
        a[[p, p]] = T::from_f64(if p == 0 { -1.0 } else { 0.5 * taken });
        let layout = Layout::nth(p);
        let laid = Laid::new(&a, layout);
        rec.case(
            format!(
                "cholesky: SPD {n} indefinite at pivot {p} A:{}",
                layout.name()
            ),
            |v| expect_pivot(v, b, laid.view(), p),
        );
    }
}

/// Bad input of both operations.
fn errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let not_square: fn(&Error) -> bool = |e| matches!(e, Error::NotSquare { .. });
    let non_finite: fn(&Error) -> bool = |e| matches!(e, Error::NonFinite { .. });
    let shape: fn(&Error) -> bool = |e| matches!(e, Error::ShapeMismatch { .. });
    for (r, c) in [(3, 5), (5, 3), (0, 2)] {
        let a = rng.matrix::<T>(r, c);
        rec.case(format!("cholesky error: {r}x{c} is not square"), |v| {
            v.err(b.cholesky(a.view()), "NotSquare", not_square);
        });
    }
    for (what, bad) in [("NaN", T::nan()), ("Inf", T::infinity())] {
        for (at, place) in [([5, 2], "below the diagonal"), ([4, 4], "on the diagonal")] {
            let mut a = spd::<T>(rng, 7);
            a[at] = bad;
            rec.case(format!("cholesky error: {what} {place}"), |v| {
                v.err(b.cholesky(a.view()), "NonFinite", non_finite);
            });
        }
    }
    let empty = Array2::<T>::zeros((0, 0));
    rec.case("cholesky 0x0 gives 0x0", |v| {
        let l = v.ok(b.cholesky(empty.view()));
        v.require(l.as_ref().is_some_and(|l| l.dim() == (0, 0)), || {
            format!("got {l:?}")
        });
    });
    let l = b.cholesky(spd::<T>(rng, 3).view()).ok();
    let Some(l) = l else {
        rec.case(
            "cholesky_solve errors (no factor of a 3x3 SPD matrix)",
            |v| {
                v.require(false, || "cholesky of a 3x3 SPD matrix failed".into());
            },
        );
        return;
    };
    let b42 = rng.matrix::<T>(4, 2);
    let l34 = rng.matrix::<T>(3, 4);
    let b32 = rng.matrix::<T>(3, 2);
    let mut bnan = b32.clone();
    bnan[[1, 1]] = T::nan();
    let mut lzero = l.clone();
    lzero[[1, 1]] = T::zero();
    let refused = [
        ("L 3x3, B 4x2", &l, &b42, "ShapeMismatch", shape),
        ("L 3x4", &l34, &b32, "NotSquare", not_square),
        ("NaN in B", &l, &bnan, "NonFinite", non_finite),
        (
            "zero on the diagonal of L",
            &lzero,
            &b32,
            "NonFinite",
            non_finite,
        ),
    ];
    for (what, lm, rhs, expected, is_expected) in refused {
        rec.case(format!("cholesky_solve error: {what}"), |v| {
            v.err(
                b.cholesky_solve(lm.view(), rhs.view()),
                expected,
                is_expected,
            );
        });
    }
    let (b03, b30) = (Array2::<T>::zeros((0, 3)), Array2::<T>::zeros((3, 0)));
    for (name, lm, rhs, dim) in [
        (
            "cholesky_solve 0x0 with B 0x3 gives 0x3",
            &empty,
            &b03,
            (0, 3),
        ),
        ("cholesky_solve with B 3x0 gives 3x0", &l, &b30, (3, 0)),
    ] {
        rec.case(name, |v| {
            let x = v.ok(b.cholesky_solve(lm.view(), rhs.view()));
            v.require(x.as_ref().is_some_and(|x| x.dim() == dim), || {
                format!("got {x:?}")
            });
        });
    }
}
