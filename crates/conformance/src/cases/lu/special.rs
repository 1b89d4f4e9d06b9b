//! LU on exactly and nearly singular matrices, and the errors of the host forms.

use ndarray::Array2;
use ndgpu_core::{tolerance, Element, Error, Factorize, Ops, QrMode};
use ndgpu_cpu::CpuBackend;

use super::{check_lu, check_solve_inv, Shapes, Suite};
use crate::cases::common::non_finite_at;
use crate::data::{spd_with_condition, Laid, Layout, Rng};
use crate::report::{Recorder, Verdict};

/// Orders of the nearly singular matrices.
const NEAR_SMALL: Shapes<1> = &[[2], [31], [100]];
const NEAR_MEDIUM: Shapes<1> = &[[257]];

/// A random n×n matrix (n ≥ 5) whose rows 1 and 4 are equal, made so that every
/// backend meets an exactly zero pivot, at n − 1: their entries are multiples of 2⁻⁸
/// (exact in TF32 too) and their first is 2, the largest of column 0, so that row 1
/// is the first pivot, row 4's multiplier is exactly 1 and its remainder exactly zero,
/// which it stays until it is the last row left.
pub(crate) fn twin_rows<T: Element>(rng: &mut Rng, n: usize) -> Array2<T> {
    let mut a = rng.matrix::<T>(n, n);
    for j in 0..n {
        let x = if j == 0 {
            2.0
        } else {
            (rng.value() * 256.0).round() / 256.0
        };
        a[[1, j]] = T::from_f64(x);
        a[[4, j]] = T::from_f64(x);
    }
    a
}

/// A random n×n matrix whose column `j` is zero: U's column j is zero, so the pivot
/// there is (exactly, on every backend) zero.
fn zero_column<T: Element>(rng: &mut Rng, n: usize, j: usize) -> Array2<T> {
    let mut a = rng.matrix::<T>(n, n);
    a.column_mut(j).fill(T::zero());
    a
}

/// A general (nonsymmetric) matrix of order n with 2-norm condition number `cond`:
/// an SPD matrix of that condition times an orthogonal one (the reference's Q of a
/// random matrix), formed in f64 and rounded to `T`.
fn with_condition<T: Element>(rng: &mut Rng, n: usize, cond: f64, cpu: &CpuBackend) -> Array2<T> {
    let s = spd_with_condition::<f64>(rng, n, cond);
    let (q, _) = cpu
        .qr(rng.matrix::<f64>(n, n).view(), QrMode::Complete)
        .expect("QR of a finite matrix");
    s.dot(&q).mapv(T::from_f64)
}

/// What every backend must say of an exactly singular `a` with its first zero pivot at
/// `p`: a factor (meeting the ratio) with `U[p, p] = 0`; `Singular` at p from `solve`
/// and `inv`; det 0 and slogdet (0, −∞).
fn expect_singular<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    a: &Array2<T>,
    p: usize,
    limit: f64,
) {
    if let Some(plu) = v.ok(b.lu(a.view())) {
        check_lu(v, a, &plu, limit);
        let u = &plu.2;
        v.require(u.dim().0 > p && u[[p, p]] == T::zero(), || {
            format!("U[{p}, {p}] is not zero")
        });
    }
    let rhs = Array2::<T>::ones((a.nrows(), 2));
    let singular = |e: &Error| matches!(e, Error::Singular { pivot, .. } if *pivot == p);
    let expected = format!("Singular(pivot {p})");
    v.err(b.solve(a.view(), rhs.view()), &expected, singular);
    v.err(b.inv(a.view()), &expected, singular);
    if let Some(d) = v.ok(b.det(a.view())) {
        v.require(d == T::zero(), || format!("det = {d}, expected 0"));
    }
    if let Some(s) = v.ok(b.slogdet(a.view())) {
        v.require(s == (0.0, f64::NEG_INFINITY), || {
            format!("slogdet = {s:?}, expected (0, -inf)")
        });
    }
    let zero_pivot = b
        .upload(a.view())
        .and_then(|m| b.lu_in_place_dev(m))
        .map(|f| f.zero_pivot());
    if let Some(z) = v.ok(zero_pivot) {
        v.require(z == Some(p), || {
            format!("zero_pivot() = {z:?}, expected {p}")
        });
    }
}

/// The singular, nearly singular and bad inputs.
pub(super) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, s: Suite<'_>) {
    let Suite(sizes, rng, rec, cpu) = s;
    let precision = rec.precision();
    let limit = tolerance::lu_ratio::<T>(precision);
    let two_by_two =
        Array2::from_shape_fn((2, 2), |(i, j)| T::from_f64([[1.0, 2.0], [2.0, 4.0]][i][j]));
    let mut singular = vec![
        ("[[1,2],[2,4]]".to_string(), two_by_two, 1),
        ("1x1 zero".to_string(), Array2::zeros((1, 1)), 0),
    ];
    // A zero column first, last or in the middle: LAPACK's xGET matrix types 5 to 7.
    for (n, j) in [(7, 3), (33, 0), (65, 64)] {
        singular.push((
            format!("{n}x{n} with column {j} zero"),
            zero_column(rng, n, j),
            j,
        ));
    }
    for n in [7, 33] {
        singular.push((
            format!("{n}x{n} with rows 1 and 4 equal"),
            twin_rows(rng, n),
            n - 1,
        ));
    }
    for (what, a, p) in singular {
        rec.case(format!("lu: singular {what}: zero pivot {p}"), |v| {
            expect_singular(v, b, &a, p, limit)
        });
    }
    // Nearly singular, as LAPACK's xGET tests (matrix types 8 and 9): condition
    // √(0.1/ε) must factor and solve with the ratios, which bound the backward error
    // whatever the condition. At 0.1/ε a pivot may (very rarely) round to exactly zero;
    // then the solves answer Singular, never NaN.
    for &[n] in super::super::shapes(sizes, NEAR_SMALL, NEAR_MEDIUM).iter() {
        for (must, cond) in [(true, (0.1 / T::EPS).sqrt()), (false, 0.1 / T::EPS)] {
            let a = with_condition::<T>(rng, n, cond, cpu);
            let rhs = rng.matrix::<T>(n, 2);
            let layout = Layout::nth(n);
            let laid = Laid::new(&a, layout);
            let name = format!(
                "lu, solve, inv: {n}x{n} with condition {cond:.1e} A:{}",
                layout.name()
            );
            rec.case(name, |v| {
                if let Some(plu) = v.ok(b.lu(laid.view())) {
                    check_lu(v, &a, &plu, limit);
                }
                match b.solve(laid.view(), rhs.view()) {
                    Err(Error::Singular { .. }) if !must => {}
                    _ => check_solve_inv(v, b, &a, laid.view(), rhs.view(), precision),
                }
            });
        }
    }
    errors(b, rng, rec);
}

/// Bad input of the host forms, and empty ones.
fn errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let not_square = |e: &Error| matches!(e, Error::NotSquare { .. });
    let shape = |e: &Error| matches!(e, Error::ShapeMismatch { .. });
    let a35 = rng.matrix::<T>(3, 5);
    let (a4, b42, b32) = (
        rng.matrix::<T>(4, 4),
        rng.matrix::<T>(4, 2),
        rng.matrix::<T>(3, 2),
    );
    rec.case("lu errors: NotSquare and ShapeMismatch", |v| {
        v.err(b.solve(a35.view(), b32.view()), "NotSquare", not_square);
        v.err(b.solve(a4.view(), b32.view()), "ShapeMismatch", shape);
        v.err(b.det(a35.view()), "NotSquare", not_square);
        v.err(b.slogdet(a35.view()), "NotSquare", not_square);
        v.err(b.inv(a35.view()), "NotSquare", not_square);
    });
    for (what, bad) in [("NaN", T::nan()), ("Inf", T::neg_infinity())] {
        let mut a = rng.matrix::<T>(5, 5);
        a[[3, 1]] = bad;
        let mut wide = rng.matrix::<T>(3, 6);
        wide[[2, 5]] = bad;
        let mut rhs = b42.clone();
        rhs[[0, 1]] = bad;
        rec.case(
            format!("lu errors: {what} in A or B is NonFinite at its index"),
            |v| {
                non_finite_at(v, b.lu(a.view()), (3, 1));
                non_finite_at(v, b.lu(wide.view()), (2, 5));
                non_finite_at(v, b.solve(a.view(), b32.view()), (3, 1));
                non_finite_at(v, b.solve(a4.view(), rhs.view()), (0, 1));
                non_finite_at(v, b.det(a.view()), (3, 1));
                non_finite_at(v, b.slogdet(a.view()), (3, 1));
                non_finite_at(v, b.inv(a.view()), (3, 1));
            },
        );
    }
    let empty = Array2::<T>::zeros((0, 0));
    let (b02, b30) = (Array2::<T>::zeros((0, 2)), Array2::<T>::zeros((3, 0)));
    let a3 = rng.matrix::<T>(3, 3);
    rec.case(
        "lu: empty solves, det 1 and slogdet (1, 0) of 0x0, inv 0x0",
        |v| {
            let x = v.ok(b.solve(empty.view(), b02.view()));
            v.require(x.as_ref().is_some_and(|x| x.dim() == (0, 2)), || {
                format!("solve 0x0: {x:?}")
            });
            let x = v.ok(b.solve(a3.view(), b30.view()));
            v.require(x.as_ref().is_some_and(|x| x.dim() == (3, 0)), || {
                format!("solve, B 3x0: {x:?}")
            });
            let d = v.ok(b.det(empty.view()));
            v.require(d == Some(T::one()), || format!("det of 0x0: {d:?}"));
            let s = v.ok(b.slogdet(empty.view()));
            v.require(s == Some((1.0, 0.0)), || format!("slogdet of 0x0: {s:?}"));
            let i = v.ok(b.inv(empty.view()));
            v.require(i.as_ref().is_some_and(|i| i.dim() == (0, 0)), || {
                format!("inv of 0x0: {i:?}")
            });
        },
    );
}
