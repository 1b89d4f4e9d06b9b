//! Products: `gemm` (every `Trans` pair, α/β incl. β = 0 over a NaN `C`), `matmul`,
//! `gram`, and their shape errors.
//!
//! Each element of a product with inner dimension k must lie within
//! `tolerance::gemm::<T>(k)·(|α|·(|op(A)|·|op(B)|) + |β|·|C|)` of the f64 product of
//! the same operands and of the CPU reference.

use ndarray::Array2;
use ndgpu_core::{tolerance, Element, Error, Gemm, MatMul, Ops, Trans};
use ndgpu_cpu::CpuBackend;

use super::{Shapes, Suite};
use crate::compare::{
    abs_f64, describe_ratio, gemm_bound, gemm_f64, max_ratio, product_tolerance, to_f64,
};
use crate::data::{Laid, Layout, Rng};
use crate::report::{Recorder, Verdict};
use crate::Sizes;

/// (m, n, k): empty, tiny, primes, non-multiples of 32 and 64, one exact tile.
#[rustfmt::skip]
const SMALL: Shapes<3> = &[
    [0, 0, 0], [0, 5, 3], [4, 0, 3], [3, 4, 0],
    [1, 1, 1], [2, 3, 1],
    [7, 31, 97], [33, 65, 100], [65, 33, 129], [100, 129, 65], [97, 1, 33], [1, 97, 7],
    [64, 64, 64], [32, 33, 31],
];
const MEDIUM: Shapes<3> = &[[257, 511, 300], [511, 257, 129], [1000, 65, 513]];

/// (n, k) of the n×k operand of `gram`.
const GRAM_SMALL: Shapes<2> = &[
    [0, 0],
    [0, 5],
    [5, 0],
    [1, 1],
    [1, 97],
    [7, 31],
    [31, 7],
    [33, 65],
    [65, 100],
    [100, 33],
    [129, 64],
    [64, 129],
];
// n stays within 1024: the cuda backend's stripe rungs (report 003 v008/v009) hold at
// most that many rows and refuse more (their refusal is tested in its gpu_gram tests).
const GRAM_MEDIUM: Shapes<2> = &[[257, 511], [1000, 300], [513, 129]];

const TRANS: [(Trans, Trans); 4] = [
    (Trans::No, Trans::No),
    (Trans::No, Trans::Yes),
    (Trans::Yes, Trans::No),
    (Trans::Yes, Trans::Yes),
];

/// α, β, and what C holds: `None` = no C, `Some(true)` = NaN (β = 0 must not read
/// it), `Some(false)` = random values. One row each: β = 0, general α and β, α or β of 1 or 0.
#[rustfmt::skip]
const SCALES: [(f64, f64, Option<bool>); 6] = [
    (1.0, 0.0, None), (1.0, 0.0, Some(true)),
    (-1.5, 0.5, Some(false)), (0.5, -2.0, Some(false)),
    (1.0, 1.0, Some(false)), (0.0, 1.0, Some(false)),
];

fn tname(t: Trans) -> &'static str {
    match t {
        Trans::No => "N",
        Trans::Yes => "T",
    }
}

/// Checks a product against the f64 definition and the CPU result, with one bound.
fn check_product<T: Element>(
    v: &mut Verdict,
    got: &Array2<T>,
    want: &Array2<f64>,
    cpu: &Array2<T>,
    bound: &Array2<f64>,
) {
    v.require(got.is_standard_layout(), || {
        "output is not C-ordered".into()
    });
    let worst = max_ratio(got.view(), want.view(), bound.view());
    v.ratio(worst.0, || {
        describe_ratio("vs f64 definition", got.view(), want.view(), worst)
    });
    let cpu64 = to_f64(cpu.view());
    let worst = max_ratio(got.view(), cpu64.view(), bound.view());
    v.ratio(worst.0, || {
        describe_ratio("vs cpu reference", got.view(), cpu64.view(), worst)
    });
}

/// Every gemm and matmul case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, s: Suite<'_>) {
    let Suite(sizes, rng, rec, cpu) = s;
    let shapes = super::shapes(sizes, SMALL, MEDIUM);
    for (i, &[m, n, k]) in shapes.iter().enumerate() {
        // `gemm_bound` uses tolerance::gemm; a variant on TF32 gets its own tolerance.
        let rescale = product_tolerance::<T>(k, rec.precision()) / tolerance::gemm::<T>(k);
        for (j, &(ta, tb)) in TRANS.iter().enumerate() {
            let (alpha, beta, c_kind) = SCALES[(i * TRANS.len() + j) % SCALES.len()];
            let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
            let (la, lb, lc) = (
                Layout::nth(i + j),
                Layout::nth(i + j + 2),
                Layout::nth(i + 1),
            );
            let a_dim = if ta == Trans::No { (m, k) } else { (k, m) };
            let b_dim = if tb == Trans::No { (k, n) } else { (n, k) };
            let a = Laid::new(&rng.matrix::<T>(a_dim.0, a_dim.1), la);
            let bm = Laid::new(&rng.matrix::<T>(b_dim.0, b_dim.1), lb);
            let c = c_kind.map(|nan| {
                let c = if nan {
                    Array2::from_elem((m, n), T::nan())
                } else {
                    rng.matrix::<T>(m, n)
                };
                Laid::new(&c, lc)
            });
            let c_desc = match c_kind {
                None => "none".to_string(),
                Some(true) => format!("NaN {}", lc.name()),
                Some(false) => lc.name().to_string(),
            };
            let name = format!(
                "gemm {m}x{n}x{k} {}{} A:{} B:{} alpha={alpha} beta={beta} C:{c_desc}",
                tname(ta),
                tname(tb),
                la.name(),
                lb.name()
            );
            let cv = c.as_ref().map(|c| c.view());
            let g = Gemm::new().alpha(alpha).beta(beta).ta(ta).tb(tb);
            rec.case(name, |v| {
                let got = b.gemm(g, a.view(), bm.view(), cv);
                let cpu_c = cpu.gemm(g, a.view(), bm.view(), cv);
                let (Some(got), Some(cpu_c)) = (v.ok(got), v.ok(cpu_c)) else {
                    return;
                };
                let want = gemm_f64(&g, a.view(), bm.view(), cv);
                let bound = gemm_bound(&g, a.view(), bm.view(), cv) * rescale;
                check_product(v, &got, &want, &cpu_c, &bound);
            });
        }
        // `matmul` is a provided method that a backend may override: check it too.
        let (la, lb) = (Layout::nth(i), Layout::nth(i + 3));
        let a = Laid::new(&rng.matrix::<T>(m, k), la);
        let bm = Laid::new(&rng.matrix::<T>(k, n), lb);
        let name = format!("matmul {m}x{n}x{k} A:{} B:{}", la.name(), lb.name());
        rec.case(name, |v| {
            let (Some(got), Some(cpu_c)) = (
                v.ok(b.matmul(a.view(), bm.view())),
                v.ok(cpu.matmul(a.view(), bm.view())),
            ) else {
                return;
            };
            let want = gemm_f64(&Gemm::new(), a.view(), bm.view(), None);
            let bound = gemm_bound(&Gemm::new(), a.view(), bm.view(), None) * rescale;
            check_product(v, &got, &want, &cpu_c, &bound);
        });
    }
    shape_errors(b, rng, rec);
}

fn is_shape(e: &Error) -> bool {
    matches!(e, Error::ShapeMismatch { .. })
}

/// Inner dimensions that differ (directly or through `Trans`), and a missing or
/// misshapen `C` with β ≠ 0.
fn shape_errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let a34: Array2<T> = rng.matrix(3, 4);
    let b52: Array2<T> = rng.matrix(5, 2);
    let b42: Array2<T> = rng.matrix(4, 2);
    let c22: Array2<T> = rng.matrix(2, 2);
    let plain = Gemm::<T>::new();
    let with_c = plain.beta(T::one());
    rec.case("gemm error: 3x4 times 5x2", |v| {
        let r = b.gemm(plain, a34.view(), b52.view(), None);
        v.err(r, "ShapeMismatch", is_shape);
    });
    rec.case("gemm error: (3x4)T times 4x2", |v| {
        let r = b.gemm(plain.ta(Trans::Yes), a34.view(), b42.view(), None);
        v.err(r, "ShapeMismatch", is_shape);
    });
    rec.case("gemm error: beta=1 without C", |v| {
        let r = b.gemm(with_c, a34.view(), b42.view(), None);
        v.err(r, "ShapeMismatch", is_shape);
    });
    rec.case("gemm error: beta=1, C 2x2 for a 3x2 result", |v| {
        let r = b.gemm(with_c, a34.view(), b42.view(), Some(c22.view()));
        v.err(r, "ShapeMismatch", is_shape);
    });
    rec.case("matmul error: 3x4 times 5x2", |v| {
        v.err(b.matmul(a34.view(), b52.view()), "ShapeMismatch", is_shape);
    });
}

/// Every gram case: the bound of a product with inner dimension k, and exact symmetry.
pub(crate) fn run_gram<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    let cpu = CpuBackend::new();
    let precision = rec.precision();
    for (i, &[n, k]) in super::shapes(sizes, GRAM_SMALL, GRAM_MEDIUM)
        .iter()
        .enumerate()
    {
        for layout in [Layout::nth(i), Layout::nth(i + 2)] {
            let m = Laid::new(&rng.matrix::<T>(n, k), layout);
            rec.case(format!("gram {n}x{k} M:{}", layout.name()), |v| {
                let (Some(got), Some(cpu_g)) = (v.ok(b.gram(m.view())), v.ok(cpu.gram(m.view())))
                else {
                    return;
                };
                v.require(got.dim() == (n, n), || {
                    format!("shape {:?}, expected {n}x{n}", got.dim())
                });
                if got.dim() != (n, n) {
                    return;
                }
                let asym = (0..n)
                    .flat_map(|r| (0..r).map(move |c| (r, c)))
                    .find(|&(r, c)| {
                        got[[r, c]].as_f64().to_bits() != got[[c, r]].as_f64().to_bits()
                    });
                v.require(asym.is_none(), || {
                    let (r, c) = asym.unwrap_or_default();
                    format!(
                        "not exactly symmetric at ({r}, {c}): {} vs {}",
                        got[[r, c]],
                        got[[c, r]]
                    )
                });
                let m64 = to_f64(m.view());
                let want = m64.dot(&m64.t());
                let abs = abs_f64(m.view());
                let bound = abs.dot(&abs.t()) * product_tolerance::<T>(k, precision);
                check_product(v, &got, &want, &cpu_g, &bound);
            });
        }
    }
}
