//! Householder QR and least squares: LAPACK's ratios of the factorization and of Q's
//! orthogonality (xQRT01) for reduced and complete modes on tall, square, wide, thin and
//! empty matrices in every layout, R exactly upper trapezoidal; `lstsq` on full-rank
//! problems with the normal-equations ratio (after xQRT17); a dependent column named by
//! `RankDeficient`; the errors; and the resident forms.

mod resident;

use ndarray::Array2;
use ndgpu_core::{tolerance, DType, Element, Error, Factorize, Ops, Precision, QrMode};

pub(super) use resident::resident;

use super::{nth_input, outcome, with_layouts, Shapes, Suite};
use crate::cases::common::non_finite_at;
use crate::compare::{lstsq_ratio, orthogonality_ratio, qr_ratio};
use crate::data::{Laid, Layout, Rng};
use crate::report::{Recorder, Verdict};

/// (m, n).
const SMALL: Shapes<2> = &[
    [0, 0],
    [0, 3],
    [3, 0],
    [1, 1],
    [1, 7],
    [7, 1],
    [2, 2],
    [7, 7],
    [33, 1],
    [33, 17],
    [17, 33],
    [65, 65],
    [100, 31],
    [31, 100],
    [129, 64],
];
const MEDIUM: Shapes<2> = &[[257, 257], [513, 257], [257, 513]];

/// (m, n, nrhs) of full-rank least-squares problems, m ≥ n.
const LSTSQ_SMALL: Shapes<3> = &[
    [1, 1, 1],
    [7, 1, 2],
    [7, 3, 2],
    [33, 17, 1],
    [33, 33, 3],
    [65, 65, 2],
    [100, 31, 4],
    [129, 64, 2],
];
const LSTSQ_MEDIUM: Shapes<3> = &[[513, 257, 3], [257, 257, 2]];

/// Checks `(Q, R)` of the m×n `a` in `mode`: shapes, C order, R exactly upper
/// trapezoidal, and LAPACK's two ratios against the variant's thresholds.
pub(super) fn check_qr<T: Element>(
    v: &mut Verdict,
    a: &Array2<T>,
    mode: QrMode,
    (q, r): &(Array2<T>, Array2<T>),
    precision: Precision,
) {
    let (m, n) = a.dim();
    let cols = match mode {
        QrMode::Reduced => m.min(n),
        QrMode::Complete => m,
    };
    if (q.dim(), r.dim()) != ((m, cols), (cols, n)) {
        v.require(false, || {
            let (qd, rd) = (q.dim(), r.dim());
            format!("{mode:?}: Q {qd:?} and R {rd:?}, expected {m}x{cols} and {cols}x{n}")
        });
        return;
    }
    let c_order = q.is_standard_layout() && r.is_standard_layout();
    v.require(c_order, || format!("{mode:?}: an output is not C-ordered"));
    let below = r
        .indexed_iter()
        .find(|&((i, j), &x)| j < i && x != T::zero());
    v.require(below.is_none(), || {
        let ((i, j), x) = below.expect("found");
        format!("{mode:?}: R[{i}, {j}] = {x} below the diagonal")
    });
    let limit = tolerance::qr_ratio::<T>(precision);
    let ratio = qr_ratio(a.view(), q.view(), r.view());
    v.ratio(ratio / limit, || {
        format!("{mode:?}: ‖A − Q·R‖₁/(m·ε·‖A‖₁) = {ratio:.3e} > {limit}")
    });
    let limit = tolerance::orthogonality_ratio::<T>(precision);
    let ratio = orthogonality_ratio(q.view());
    v.ratio(ratio / limit, || {
        format!("{mode:?}: ‖QᵀQ − I‖₁/(m·ε) = {ratio:.3e} > {limit}")
    });
}

/// Checks a least-squares solution X of the m×n `a` and `rhs`: shape, C order and
/// the normal-equations ratio.
pub(super) fn check_lstsq<T: Element>(
    v: &mut Verdict,
    a: &Array2<T>,
    x: &Array2<T>,
    rhs: &Array2<T>,
    precision: Precision,
) {
    let want = (a.ncols(), rhs.ncols());
    v.require(x.dim() == want, || {
        format!("X is {:?}, expected {want:?}", x.dim())
    });
    v.require(x.is_standard_layout(), || "X is not C-ordered".into());
    let limit = tolerance::lstsq_ratio::<T>(precision);
    let r = lstsq_ratio(a.view(), x.view(), rhs.view());
    v.within(
        r,
        limit,
        "‖Aᵀ(B − A·X)‖₁/(max(m,n,nrhs)·ε·‖A‖₁·max(‖B‖₁, ‖A‖₁‖X‖₁))",
    );
}

/// Every QR case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, s: Suite<'_>) {
    let Suite(sizes, rng, rec, cpu) = s;
    let precision = rec.precision();
    for (i, &[m, n]) in super::shapes(sizes, SMALL, MEDIUM).iter().enumerate() {
        let (a, la) = nth_input::<T>(rng, i, m, n);
        let laid = Laid::new(&a, la);
        rec.case(
            format!("qr {m}x{n} reduced and complete A:{}", la.name()),
            |v| {
                for mode in [QrMode::Reduced, QrMode::Complete] {
                    let got = b.qr(laid.view(), mode);
                    let (g, w) = (outcome(&got), outcome(&cpu.qr(laid.view(), mode)));
                    v.require(g == w, || {
                        format!("{mode:?}: outcome {g}, cpu reference {w}")
                    });
                    if let Some(qr) = v.ok(got) {
                        check_qr(v, &a, mode, &qr, precision);
                    }
                }
            },
        );
    }
    for (i, &[m, n, nrhs]) in super::shapes(sizes, LSTSQ_SMALL, LSTSQ_MEDIUM)
        .iter()
        .enumerate()
    {
        let a = rng.matrix::<T>(m, n);
        let rhs = rng.matrix::<T>(m, nrhs);
        let (la, lb) = (Layout::nth(i + 1), Layout::nth(i + 3));
        let (a_laid, b_laid) = (Laid::new(&a, la), Laid::new(&rhs, lb));
        let name = with_layouts(format!("lstsq {m}x{n} with {nrhs} rhs"), la, lb);
        rec.case(name, |v| {
            let got = b.lstsq(a_laid.view(), b_laid.view());
            let want = cpu.lstsq(a_laid.view(), b_laid.view());
            let (g, w) = (outcome(&got), outcome(&want));
            v.require(g == w, || format!("outcome {g}, cpu reference {w}"));
            if let Some(x) = v.ok(got) {
                check_lstsq(v, &a, &x, &rhs, precision);
            }
        });
    }
    rank_deficient(b, rng, rec);
    errors(b, rng, rec);
}

/// A random m×n matrix (n ≥ 3) whose column 2 is column 0 plus column 1, exactly:
/// those two hold multiples of 2⁻¹⁰, whose sums are exact in `T`.
pub(super) fn dependent<T: Element>(rng: &mut Rng, m: usize, n: usize) -> Array2<T> {
    let mut a = rng.matrix::<T>(m, n);
    for i in 0..m {
        let (x, y) = (
            (rng.value() * 1024.0).round() / 1024.0,
            (rng.value() * 1024.0).round() / 1024.0,
        );
        a[[i, 0]] = T::from_f64(x);
        a[[i, 1]] = T::from_f64(y);
        a[[i, 2]] = T::from_f64(x + y);
    }
    a
}

/// Least squares with a dependent column: `RankDeficient` naming it. A factorization
/// whose products are TF32 makes errors near 2⁻¹⁰·‖A‖ in R, far above the rank test's
/// ε·max(m, n)·max|Rᵢᵢ| for f32, so such a variant may also answer with a solution.
fn rank_deficient<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let coarse = rec.precision() == Precision::Tf32 && T::DTYPE == DType::F32;
    for (m, n) in [(7, 4), (33, 5), (100, 31)] {
        let a = dependent::<T>(rng, m, n);
        let rhs = rng.matrix::<T>(m, 2);
        let name =
            format!("lstsq {m}x{n}, column 2 = column 0 + column 1: RankDeficient(column 2)");
        rec.case(name, |v| {
            let r = b.lstsq(a.view(), rhs.view());
            if coarse && r.is_ok() {
                return;
            }
            v.err(r, "RankDeficient(column 2)", |e| {
                matches!(e, Error::RankDeficient { column: 2, .. })
            });
        });
    }
}

/// Bad input, and empty problems.
fn errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let (wide, a73) = (rng.matrix::<T>(3, 5), rng.matrix::<T>(7, 3));
    let (b31, b61, b72) = (
        rng.matrix::<T>(3, 1),
        rng.matrix::<T>(6, 1),
        rng.matrix::<T>(7, 2),
    );
    rec.case("lstsq errors: fewer rows than columns, B's rows", |v| {
        let r = b.lstsq(wide.view(), b31.view());
        v.err(r, "InvalidArgument", |e| {
            matches!(e, Error::InvalidArgument { .. })
        });
        let r = b.lstsq(a73.view(), b61.view());
        v.err(r, "ShapeMismatch", |e| {
            matches!(e, Error::ShapeMismatch { .. })
        });
    });
    for (what, bad) in [("NaN", T::nan()), ("Inf", T::infinity())] {
        let (mut bad_a, mut bad_b) = (a73.clone(), b72.clone());
        bad_a[[4, 2]] = bad;
        bad_b[[6, 1]] = bad;
        rec.case(
            format!("qr, lstsq errors: {what} in A or B is NonFinite at its index"),
            |v| {
                non_finite_at(v, b.qr(bad_a.view(), QrMode::Reduced), (4, 2));
                non_finite_at(v, b.qr(bad_a.t(), QrMode::Complete), (2, 4));
                non_finite_at(v, b.lstsq(bad_a.view(), b72.view()), (4, 2));
                non_finite_at(v, b.lstsq(a73.view(), bad_b.view()), (6, 1));
            },
        );
    }
    let (a30, b32) = (Array2::<T>::zeros((3, 0)), rng.matrix::<T>(3, 2));
    let (a00, b02) = (Array2::<T>::zeros((0, 0)), Array2::<T>::zeros((0, 2)));
    let b70 = Array2::<T>::zeros((7, 0));
    rec.case(
        "lstsq of empty problems: X of n rows and nrhs columns",
        |v| {
            for (a, rhs, want) in [
                (&a30, &b32, (0, 2)),
                (&a00, &b02, (0, 2)),
                (&a73, &b70, (3, 0)),
            ] {
                let x = v.ok(b.lstsq(a.view(), rhs.view()));
                v.require(x.as_ref().is_some_and(|x| x.dim() == want), || {
                    format!("A {:?}, B {:?}: got {x:?}", a.dim(), rhs.dim())
                });
            }
        },
    );
}
