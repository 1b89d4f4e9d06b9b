//! LU with partial pivoting and what is built on it: LAPACK's test ratios of the
//! factor (xGET01) on random square and rectangular matrices in every layout, with
//! |Lᵢⱼ| ≤ 1, P a permutation and L, U exactly triangular; the backward error of
//! `solve` and `inv` (xGET02); `det` and `slogdet` against an f64 reference within a
//! bound derived from the factor's backward error; exactly and nearly singular
//! matrices; the errors; and the resident forms.

mod det;
mod resident;
mod special;

use ndarray::Array2;
use ndgpu_core::{tolerance, Element, Factorize, Ops, Precision};

pub(super) use resident::resident;

use super::{nth_input, outcome, with_layouts, Shapes, Suite};
use crate::compare::{backward_ratio, lu_ratio, to_f64};
use crate::data::{Laid, Layout};
use crate::report::Verdict;

/// (m, n): square, tall, wide, thin and empty.
const SMALL: Shapes<2> = &[
    [0, 0],
    [0, 3],
    [3, 0],
    [1, 1],
    [2, 2],
    [1, 7],
    [7, 1],
    [7, 7],
    [31, 31],
    [33, 33],
    [33, 1],
    [1, 33],
    [65, 65],
    [65, 31],
    [31, 65],
    [100, 100],
    [100, 33],
    [129, 129],
];
const MEDIUM: Shapes<2> = &[[257, 257], [513, 513], [513, 257], [257, 513]];

/// `(P, L, U)` with `A = P·L·U`.
pub(super) type Plu<T> = (Array2<T>, Array2<T>, Array2<T>);

/// Checks `(P, L, U)` of the m×n `a`: shapes, C order, P a permutation, L unit lower
/// trapezoidal with |Lᵢⱼ| ≤ 1, U upper trapezoidal (exact zeros elsewhere), and
/// LAPACK's ratio against the variant's [`tolerance::lu_ratio`].
pub(super) fn check_lu<T: Element>(v: &mut Verdict, a: &Array2<T>, plu: &Plu<T>, limit: f64) {
    let (p, l, u) = plu;
    let (m, n) = a.dim();
    let k = m.min(n);
    let shapes = (p.dim(), l.dim(), u.dim());
    if shapes != ((m, m), (m, k), (k, n)) {
        v.require(false, || {
            format!("P, L, U of shapes {shapes:?}, expected {m}x{m}, {m}x{k}, {k}x{n}")
        });
        return;
    }
    let c_order = p.is_standard_layout() && l.is_standard_layout() && u.is_standard_layout();
    v.require(c_order, || "an output is not C-ordered".into());
    let (zero, one) = (T::zero(), T::one());
    let binary = p.iter().all(|&x| x == zero || x == one);
    let lines = |sums: Vec<T>| sums.iter().all(|&s| s == one);
    let permutation = binary
        && lines(p.rows().into_iter().map(|r| r.sum()).collect())
        && lines(p.columns().into_iter().map(|c| c.sum()).collect());
    v.require(permutation, || "P is not a permutation matrix".into());
    let bad_l = l.indexed_iter().find(|&((i, j), &x)| match i.cmp(&j) {
        std::cmp::Ordering::Less => x != zero,
        std::cmp::Ordering::Equal => x != one,
        // NaN fails: it is not within the bound.
        std::cmp::Ordering::Greater => x.abs().partial_cmp(&one).is_none_or(|o| o.is_gt()),
    });
    v.require(bad_l.is_none(), || {
        let ((i, j), x) = bad_l.expect("found");
        format!("L[{i}, {j}] = {x}: not unit lower triangular with |Lᵢⱼ| ≤ 1")
    });
    let bad_u = u.indexed_iter().find(|&((i, j), &x)| j < i && x != zero);
    v.require(bad_u.is_none(), || {
        let ((i, j), x) = bad_u.expect("found");
        format!("U[{i}, {j}] = {x} below the diagonal")
    });
    let r = lu_ratio(a.view(), p.view(), l.view(), u.view());
    v.ratio(r / limit, || {
        format!("‖A − P·L·U‖₁/(n·ε·‖A‖₁) = {r:.3e} > {limit}")
    });
}

/// Requires the same outcome as the CPU reference (Ok, or the same error).
pub(super) fn same_outcome<V, W>(
    v: &mut Verdict,
    got: &ndgpu_core::Result<V>,
    want: &ndgpu_core::Result<W>,
) {
    let (g, w) = (outcome(got), outcome(want));
    v.require(g == w, || format!("outcome {g}, cpu reference {w}"));
}

/// `solve` (B with `rhs`) and `inv` of the square `a` as laid out in `view`: C order and
/// the backward-error ratio of each (A·A⁻¹ = I column by column).
pub(super) fn check_solve_inv<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    a: &Array2<T>,
    view: ndarray::ArrayView2<T>,
    rhs: ndarray::ArrayView2<T>,
    precision: Precision,
) {
    let limit = tolerance::solve_ratio::<T>(precision);
    let a64 = to_f64(a.view());
    if let Some(x) = v.ok(b.solve(view, rhs)) {
        v.require(x.is_standard_layout(), || "solve: not C-ordered".into());
        let r = backward_ratio(a64.view(), x.view(), rhs);
        v.within(r, limit, "solve: ‖B − A·X‖₁/(n·ε·‖A‖₁·‖X‖₁)");
    }
    if let Some(inv) = v.ok(b.inv(view)) {
        v.require(inv.is_standard_layout(), || "inv: not C-ordered".into());
        let eye = Array2::<T>::eye(a.nrows());
        let r = backward_ratio(a64.view(), inv.view(), eye.view());
        v.within(r, limit, "inv: ‖I − A·A⁻¹‖₁/(n·ε·‖A‖₁·‖A⁻¹‖₁)");
    }
}

/// Every LU case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, s: Suite<'_>) {
    let Suite(sizes, rng, rec, cpu) = s;
    let precision = rec.precision();
    let limit = tolerance::lu_ratio::<T>(precision);
    for (i, &[m, n]) in super::shapes(sizes, SMALL, MEDIUM).iter().enumerate() {
        let (a, la) = nth_input::<T>(rng, i, m, n);
        let laid = Laid::new(&a, la);
        rec.case(format!("lu {m}x{n} A:{}", la.name()), |v| {
            let got = b.lu(laid.view());
            same_outcome(v, &got, &cpu.lu(laid.view()));
            if let Some(plu) = v.ok(got) {
                check_lu(v, &a, &plu, limit);
            }
        });
        if m != n {
            continue;
        }
        let nrhs = [1, 3, 7][i % 3];
        let rhs = rng.matrix::<T>(n, nrhs);
        let lb = Layout::nth(i + 2);
        let rhs_laid = Laid::new(&rhs, lb);
        let what = format!("solve {n} with {nrhs} rhs, inv, det, slogdet");
        let name = with_layouts(what, la, lb);
        rec.case(name, |v| {
            let got = b.solve(laid.view(), rhs_laid.view());
            same_outcome(v, &got, &cpu.solve(laid.view(), rhs_laid.view()));
            check_solve_inv(v, b, &a, laid.view(), rhs_laid.view(), precision);
            det::check(v, b, &a, laid.view(), precision, cpu);
        });
    }
    det::run(b, Suite(sizes, rng, rec, cpu));
    special::run(b, Suite(sizes, rng, rec, cpu));
}
