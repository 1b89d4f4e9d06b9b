//! The spectra: `eigh`/`eigvalsh` of symmetric matrices (random, with clustered and
//! repeated eigenvalues, graded, given by the lower triangle only) and `svd`/`svdvals`
//! (tall, wide, square, rank-deficient, thin, empty; reduced and full), with LAPACK's
//! residual and orthogonality ratios, the values against the reference's within Weyl's
//! bound, the order, the errors, the resident forms, and PCA. A backend that answers
//! `Unsupported` for both `eigh` and `svd` has no cases here.

mod errors;
mod matrices;
mod pca;
mod resident;

use errors::errors;

use ndarray::{Array1, Array2};
use ndgpu_core::{tolerance, Element, Error, Factorize, Ops, Precision};

use super::{outcome, Shapes, Suite};
use crate::compare::{
    eigh_ratio, frobenius, orthogonality_ratio, spectrum_ratio, svd_ratio, symmetric_f64,
};
use crate::data::{Laid, Layout};
use crate::report::Verdict;

/// Orders n of the symmetric matrices.
const EIGH_SMALL: &[usize] = &[1, 2, 3, 7, 33, 65];
const EIGH_MEDIUM: &[usize] = &[129, 257];

/// (m, n) of the SVDs.
const SVD_SMALL: Shapes<2> = &[
    [1, 1],
    [1, 7],
    [7, 1],
    [2, 2],
    [7, 7],
    [33, 17],
    [17, 33],
    [65, 65],
];
const SVD_MEDIUM: Shapes<2> = &[[257, 129], [129, 257]];

/// Whether the backend answers `Unsupported` for the whole family.
fn unsupported<T: Element, B: Ops<T> + ?Sized>(b: &B) -> bool {
    let one = Array2::<T>::ones((1, 1));
    let no = |r: ndgpu_core::Result<Array1<T>>| matches!(r, Err(Error::Unsupported { .. }));
    no(b.eigvalsh(one.view())) && no(b.svdvals(one.view()))
}

/// Checks `(w, V)` of the symmetric matrix given by the lower triangle of `a`: shapes,
/// ascending order, xSYT21's ratio, V's orthogonality, and `w` against the reference's.
pub(super) fn check_eigh<T: Element>(
    v: &mut Verdict,
    a: &Array2<T>,
    (w, vecs): &(Array1<T>, Array2<T>),
    want: &Array1<T>,
    precision: Precision,
) {
    let n = a.nrows();
    if (w.len(), vecs.dim()) != (n, (n, n)) {
        let (wl, vd) = (w.len(), vecs.dim());
        v.require(false, || {
            format!("w has {wl} values and V is {vd:?}, expected n = {n}")
        });
        return;
    }
    v.require(vecs.is_standard_layout(), || "V is not C-ordered".into());
    ascending(v, w, "w");
    let limit = tolerance::eigh_ratio::<T>(precision);
    v.within(
        eigh_ratio(a.view(), w.view(), vecs.view()),
        limit,
        "‖A·V − V·Λ‖₁/(n·ε·‖A‖₁)",
    );
    let limit = tolerance::orthogonality_ratio::<T>(precision);
    v.within(orthogonality_ratio(vecs.view()), limit, "‖VᵀV − I‖₁/(n·ε)");
    let norm = symmetric_f64(a.view())
        .iter()
        .fold(0.0f64, |m, x| m.hypot(*x));
    let limit = tolerance::spectrum_ratio::<T>(precision);
    v.within(
        spectrum_ratio(w.view(), want.view(), n, norm),
        limit,
        "max|w − w_ref|/(n·ε·‖A‖_F)",
    );
}

/// Requires `x` ascending.
fn ascending<T: Element>(v: &mut Verdict, x: &Array1<T>, what: &str) {
    let at = (1..x.len()).find(|&i| x[i - 1] > x[i]);
    v.require(at.is_none(), || {
        format!("{what} is not ascending at {at:?}: {x}")
    });
}

/// Checks `(U, s, Vt)` of `a`, reduced or full: shapes, s descending and non-negative,
/// xBDT01's ratio, U's and V's orthogonality, and `s` against the reference's.
pub(super) fn check_svd<T: Element>(
    v: &mut Verdict,
    a: &Array2<T>,
    (u, s, vt): &(Array2<T>, Array1<T>, Array2<T>),
    (want, full): (&Array1<T>, bool),
    precision: Precision,
) {
    let (m, n) = a.dim();
    let k = m.min(n);
    let (uc, vr) = if full { (m, n) } else { (k, k) };
    if (u.dim(), s.len(), vt.dim()) != ((m, uc), k, (vr, n)) {
        let (ud, sl, vd) = (u.dim(), s.len(), vt.dim());
        v.require(false, || {
            format!("full {full}: U {ud:?}, s {sl}, Vt {vd:?} for {m}x{n}")
        });
        return;
    }
    v.require(u.is_standard_layout() && vt.is_standard_layout(), || {
        "U or Vt is not C-ordered".into()
    });
    let reversed: Array1<T> = s.iter().rev().copied().collect();
    ascending(v, &reversed, "s reversed");
    v.require(s.iter().all(|x| *x >= T::zero()), || {
        format!("s has a negative value: {s}")
    });
    let limit = tolerance::svd_ratio::<T>(precision);
    v.within(
        svd_ratio(a.view(), u.view(), s.view(), vt.view()),
        limit,
        "‖A − U·S·Vt‖₁/(max(m,n)·ε·‖A‖₁)",
    );
    let limit = tolerance::orthogonality_ratio::<T>(precision);
    v.within(orthogonality_ratio(u.view()), limit, "‖UᵀU − I‖₁/(m·ε)");
    v.within(orthogonality_ratio(vt.t()), limit, "‖V·Vᵀ − I‖₁/(n·ε)");
    let limit = tolerance::spectrum_ratio::<T>(precision);
    let r = spectrum_ratio(s.view(), want.view(), m.max(n), frobenius(a.view()));
    v.within(r, limit, "max|s − s_ref|/(max(m,n)·ε·‖A‖_F)");
}

/// Every case of the spectra.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, s: Suite<'_>) {
    if unsupported(b) {
        return;
    }
    let Suite(sizes, rng, rec, cpu) = s;
    let precision = rec.precision();
    let medium = sizes == crate::Sizes::Medium;
    let orders = EIGH_SMALL
        .iter()
        .chain(if medium { EIGH_MEDIUM } else { &[] });
    for (i, &n) in orders.enumerate() {
        for (kind, a) in matrices::symmetric::<T>(rng, cpu, n) {
            let (laid, layout) = (Laid::new(&a, Layout::nth(i)), Layout::nth(i).name());
            rec.case(format!("eigh {n}x{n} {kind} A:{layout}"), |v| {
                let got = b.eigh(laid.view());
                let want = cpu.eigvalsh(laid.view());
                let (g, w) = (outcome(&got), outcome(&want));
                v.require(g == w, || format!("outcome {g}, cpu reference {w}"));
                let (Some(got), Some(want)) = (v.ok(got), v.ok(want)) else {
                    return;
                };
                check_eigh(v, &a, &got, &want, precision);
                if let Some(vals) = v.ok(b.eigvalsh(laid.view())) {
                    let norm = frobenius(a.view());
                    let r = spectrum_ratio(vals.view(), want.view(), n, norm);
                    v.within(
                        r,
                        tolerance::spectrum_ratio::<T>(precision),
                        "eigvalsh against the reference",
                    );
                }
            });
        }
    }
    for (i, &[m, n]) in super::shapes(sizes, SVD_SMALL, SVD_MEDIUM)
        .iter()
        .enumerate()
    {
        for (kind, a) in matrices::general::<T>(rng, m, n) {
            let laid = Laid::new(&a, Layout::nth(i + 1));
            let name = format!(
                "svd {m}x{n} {kind} reduced and full A:{}",
                laid.layout().name()
            );
            rec.case(name, |v| {
                let want = cpu.svdvals(laid.view());
                let Some(want) = v.ok(want) else {
                    return;
                };
                for full in [false, true] {
                    if let Some(usv) = v.ok(b.svd(laid.view(), full)) {
                        check_svd(v, &a, &usv, (&want, full), precision);
                    }
                }
                if let Some(s) = v.ok(b.svdvals(laid.view())) {
                    let r = spectrum_ratio(s.view(), want.view(), m.max(n), frobenius(a.view()));
                    v.within(
                        r,
                        tolerance::spectrum_ratio::<T>(precision),
                        "svdvals against the reference",
                    );
                }
            });
        }
    }
    errors(b, rng, rec);
    resident::run(b, rng, rec);
    pca::run(b, rng, rec, cpu);
}
