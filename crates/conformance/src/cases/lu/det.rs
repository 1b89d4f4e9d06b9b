//! `det` and `slogdet` against an f64 reference, within a bound derived from LU's
//! backward error.
//!
//! A backend's factor is exact for a nearby matrix: `P·L̂·Û = A + E` with
//! `|E| ≤ γₙ·|P·L̂|·|Û|` (Higham, *Accuracy and Stability*, Thm. 9.3; γₙ ≈ n·ε/2), and
//! its determinant is the product of Û's diagonal, so its log|det| is that of A + E:
//!
//! `log|det(A + E)| − log|det A| = log|det(I + A⁻¹·E)| = tr(A⁻¹·E) + O(‖A⁻¹E‖²)`,
//!
//! and `|tr(A⁻¹·E)| ≤ Σᵢⱼ |A⁻¹|ⱼᵢ·|E|ᵢⱼ ≤ γₙ·s` with `s = tr(|A⁻¹|·|P·L|·|U|)`, a
//! componentwise condition number of log|det| (at least n; n·κ at worst). There is no
//! bound free of the condition: the determinant of an ill-conditioned matrix is
//! sensitive to the rounding of its entries, so s is computed from the reference's own
//! factor and inverse in f64 (a backend that pivots on other rows has other L and U,
//! but |L|·|U| is ‖A‖ times a small growth factor for either). The tolerance on
//! log|det| is `4·γₙ·s` (twice the bound: the reference in f64 makes the same error
//! again for f64 input, and the first-order term is not the whole of it), scaled for
//! the variant's products as [`tolerance::lu_ratio`], plus the rounding of the n
//! logarithms summed in f64. While that tolerance is under ln 2 the relative error of
//! det is under one, so its sign must be the reference's. The value of `det` is checked
//! the same way (with one more rounding, to `T`), and where the reference's |det| is
//! beyond `T`'s range it must be ±∞ with the right sign (0 below the subnormals).
//!
//! The bound is a worst case: for random matrices s grows like n² to n³ (the errors
//! really made add up like a random walk, far below it), so past a hundred or so it
//! says little in f32. The matrices of [`run`] are permuted diagonally dominant ones,
//! with s ≈ n: there the tolerance, about 2n²·ε, is tight at every size, and the sign,
//! which carries the parity of the row swaps, is always checked.

use std::f64::consts::LN_2;

use ndarray::{Array2, ArrayView2};
use ndgpu_core::{tolerance, Element, Factorize, Ops, Precision};
use ndgpu_cpu::CpuBackend;

use super::{Shapes, Suite};
use crate::compare::{ratio, to_f64};
use crate::data::{Laid, Layout, Rng};
use crate::report::Verdict;

const SMALL: Shapes<1> = &[[1], [2], [7], [33], [129]];
const MEDIUM: Shapes<1> = &[[513]];

/// `P₀·M` for a random permutation P₀ and an M diagonally dominant by columns
/// (diagonal ±[1, 2), off it uniform in [−1/(2n), 1/(2n))): partial pivoting finds
/// P₀'s rows again (a column-dominant matrix needs no swaps, and its Schur complements
/// stay column dominant), so det = ±det M, with the sign of P₀.
fn permuted_dominant<T: Element>(rng: &mut Rng, n: usize) -> Array2<T> {
    let m = Array2::from_shape_fn((n, n), |(i, j)| {
        let x = rng.value();
        if i == j {
            x.signum() * (1.0 + x.abs())
        } else {
            x / (2 * n) as f64
        }
    });
    let mut perm: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        perm.swap(i, rng.below(i + 1));
    }
    Array2::from_shape_fn((n, n), |(i, j)| T::from_f64(m[[perm[i], j]]))
}

/// The determinant cases on permuted diagonally dominant matrices.
pub(super) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, s: Suite<'_>) {
    let Suite(sizes, rng, rec, cpu) = s;
    let precision = rec.precision();
    for (i, &[n]) in super::super::shapes(sizes, SMALL, MEDIUM)
        .iter()
        .enumerate()
    {
        let a = permuted_dominant::<T>(rng, n);
        let layout = Layout::nth(i + 3);
        let laid = Laid::new(&a, layout);
        let name = format!(
            "det, slogdet: {n}x{n} permuted diagonally dominant A:{}",
            layout.name()
        );
        rec.case(name, |v| check(v, b, &a, laid.view(), precision, cpu));
    }
}

/// The reference's `(sign, log|det|)` of `a` and the tolerance on log|det| derived
/// above, or `None` (the verdict failed) when the reference cannot factor it.
fn reference<T: Element>(
    v: &mut Verdict,
    a: &Array2<T>,
    precision: Precision,
    cpu: &CpuBackend,
) -> Option<(f64, f64, f64)> {
    let n = a.nrows();
    let a64 = to_f64(a.view());
    let (p, l, u) = v.ok(cpu.lu(a64.view()))?;
    let inv = v.ok(cpu.inv(a64.view()))?;
    let (sign, log) = v.ok(cpu.slogdet(a64.view()))?;
    let lu_abs = p.dot(&l).mapv(f64::abs).dot(&u.mapv(f64::abs));
    // tr(|A⁻¹|·M) = Σᵢⱼ |A⁻¹|ⱼᵢ·Mᵢⱼ.
    let s: f64 = (&inv.t().mapv(f64::abs) * &lu_abs).sum();
    let logs: f64 = u.diag().iter().map(|d| d.abs().ln().abs()).sum();
    let scale = tolerance::lu_ratio::<T>(precision) / tolerance::LU_RATIO;
    let nf = n as f64;
    let tol = 4.0 * (nf * T::EPS / 2.0) * s * scale + 2.0 * nf * f64::EPSILON * (logs + 1.0);
    Some((sign, log, tol))
}

/// Checks `det` and `slogdet` of the square `a` (given to the backend as `view`).
pub(super) fn check<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    a: &Array2<T>,
    view: ArrayView2<T>,
    precision: Precision,
    cpu: &CpuBackend,
) {
    let Some((sign, log, tol)) = reference(v, a, precision, cpu) else {
        return;
    };
    let signs_hold = tol < LN_2;
    if let Some((got_sign, got_log)) = v.ok(b.slogdet(view)) {
        let r = ratio((got_log - log).abs(), tol);
        v.ratio(r, || {
            format!("slogdet: log|det| = {got_log:e}, reference {log:e}, tolerance {tol:.3e}")
        });
        v.require(!signs_hold || got_sign == sign, || {
            format!("slogdet: sign {got_sign}, reference {sign}")
        });
    }
    let Some(det) = v.ok(b.det(view)) else {
        return;
    };
    let d = det.as_f64();
    let tol = tol + T::EPS;
    let max_log = T::max_value().as_f64().ln();
    let min_log = T::min_positive_value().as_f64().ln();
    if log > max_log + tol {
        v.require(d == sign * f64::INFINITY, || {
            format!("det = {d:e}, reference sign {sign} and log|det| {log:e} beyond the range")
        });
    } else if log < min_log + T::EPS.ln() - tol {
        v.require(d == 0.0, || {
            format!("det = {d:e}, reference log|det| {log:e} below the subnormals")
        });
    } else if log < max_log - tol && log > min_log + tol {
        v.require(!signs_hold || d.signum() == sign, || {
            format!("det = {d:e}, reference sign {sign}")
        });
        let r = ratio((d.abs().ln() - log).abs(), tol);
        v.ratio(r, || {
            format!("det = {d:e}, reference e^{log:e}, tolerance {tol:.3e} on the log")
        });
    }
    // Within the tolerance of the edges of T's range either rounding is right.
}
