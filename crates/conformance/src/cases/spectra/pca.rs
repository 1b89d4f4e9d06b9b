//! PCA against a direct computation: the reference's SVD of the centred data in f64.
//!
//! Bounds (ε of `T`, Xc the centred data, n_s×n_f): the fit is the exact one of data
//! within `ΔXc`, `‖ΔXc‖ ≲ max(n_s, n_f)·ε·‖Xc‖_F`, or (covariance path) of a covariance
//! within `‖ΔC‖ ≲ (n_s + n_f)·ε·‖Xc‖_F²`. Either way each squared singular value is
//! within `E = 2·(n_s + n_f)·ε·‖Xc‖_F²` (Weyl), and component i within
//! `E / gapᵢ` in angle (Davis–Kahan), gapᵢ the distance from σᵢ² to the other σⱼ².
//! The checks allow 30 times these, as the LAPACK-style ratios do.

use ndarray::{Array1, Array2, Axis};
use ndgpu_core::{tolerance, Element, Error, Factorize, Ops, Pca, PcaFit};
use ndgpu_cpu::CpuBackend;

use super::matrices::{orthogonal, round};
use crate::compare::frobenius;
use crate::data::Rng;
use crate::report::{Recorder, Verdict};

/// Slack on the bounds above.
const SLACK: f64 = 30.0;

/// (n_samples, n_features, n_components): the covariance path (tall) and the SVD path.
const SHAPES: &[(usize, usize, Option<usize>)] = &[
    (200, 5, None),
    (200, 5, Some(2)),
    (20, 30, Some(4)),
    (40, 6, None),
];

/// Data with a spread of variances, 2⁻ʲ/² along the j-th of random orthogonal axes,
/// about a mean far from zero.
fn data(rng: &mut Rng, cpu: &CpuBackend, n: usize, d: usize) -> Array2<f64> {
    let axes = orthogonal(rng, cpu, d);
    let z = Array2::from_shape_fn((n, d), |(_, j)| rng.normal() * 0.5f64.powf(j as f64 / 2.0));
    let mean = Array1::from_shape_fn(d, |j| 3.0 + j as f64);
    z.dot(&axes) + &mean
}

/// The reference: components (flipped), squared singular values, mean, total variance.
fn direct<T: Element>(cpu: &CpuBackend, x: &Array2<T>) -> (Array2<f64>, Vec<f64>, Array1<f64>) {
    let xf = x.mapv(|v| v.as_f64());
    let mean = xf.mean_axis(Axis(0)).expect("samples");
    let xc = &xf - &mean;
    let (_, s, mut vt) = cpu.svd(xc.view(), false).expect("the reference's SVD");
    ndgpu_core::pca::flip(&mut vt);
    (vt, s.iter().map(|s| s * s).collect(), mean)
}

/// Every PCA case.
pub(super) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    rng: &mut Rng,
    rec: &mut Recorder,
    cpu: &CpuBackend,
) {
    for &(n, d, k) in SHAPES {
        let x = round::<T>(&data(rng, cpu, n, d));
        let config = Pca { n_components: k };
        let kk = k.unwrap_or(n.min(d));
        let solver = Pca::solver(n, d);
        rec.case(format!("pca {n}x{d}, {kk} components ({solver:?})"), |v| {
            let Some(fit) = v.ok(config.fit(b, x.view())) else {
                return;
            };
            v.require(fit.solver == solver && fit.n_samples == n, || {
                format!("{:?}", fit.solver)
            });
            let (comps, squares, mean) = direct(cpu, &x);
            let xc = x.mapv(|v| v.as_f64()) - &mean;
            let e = 2.0 * (n + d) as f64 * T::EPS * frobenius(xc.view()).powi(2);
            check_values(v, &fit, (&squares, &mean, &x), (n, kk, e));
            check_components(v, &fit.components, (&comps, &squares), (kk, e));
            let Some(t) = v.ok(fit.transform(b, x.view())) else {
                return;
            };
            check_transform(v, &t, &fit, &x);
        });
    }
    let x = round::<T>(&data(rng, cpu, 10, 3));
    rec.case(
        "pca refusals: one sample, n_components 0 or too many, NaN",
        |v| {
            let invalid = |e: &Error| matches!(e, Error::InvalidArgument { .. });
            v.err(
                Pca::new().fit(b, x.slice(ndarray::s![..1, ..])),
                "InvalidArgument",
                invalid,
            );
            v.err(
                Pca::with_components(0).fit(b, x.view()),
                "InvalidArgument",
                invalid,
            );
            v.err(
                Pca::with_components(4).fit(b, x.view()),
                "InvalidArgument",
                invalid,
            );
            let mut bad = x.clone();
            bad[[4, 2]] = T::nan();
            v.err(Pca::new().fit(b, bad.view()), "NonFinite", |e| {
                matches!(e, Error::NonFinite { index: (4, 2), .. })
            });
        },
    );
}

/// Explained variance, its ratio, the singular values and the mean.
fn check_values<T: Element>(
    v: &mut Verdict,
    fit: &PcaFit<T>,
    (squares, mean, x): (&[f64], &Array1<f64>, &Array2<T>),
    (n, k, e): (usize, usize, f64),
) {
    let dof = (n - 1) as f64;
    let lens = [fit.singular_values.len(), fit.explained_variance.len()];
    v.require(lens == [k, k], || format!("{lens:?} values, expected {k}"));
    let values = fit.singular_values.iter().zip(&fit.explained_variance);
    for ((s, ev), want) in values.zip(squares) {
        let s2 = s.as_f64().powi(2);
        let tol = SLACK * e + 2.0 * T::EPS * s2;
        v.within((s2 - want).abs(), tol, "|σ̂² − σ²|");
        let ev = ev.as_f64();
        v.within((ev - want / dof).abs(), tol / dof, "explained variance");
    }
    let total: f64 = squares.iter().sum();
    let ratios: f64 = fit
        .explained_variance_ratio
        .iter()
        .map(|r| r.as_f64())
        .sum();
    let want: f64 = squares[..k].iter().sum::<f64>() / total;
    v.within(
        (ratios - want).abs(),
        SLACK * (e / total + k as f64 * T::EPS),
        "Σ ratio − Σ σᵢ²/Σ σ²",
    );
    v.require(ratios <= 1.0 + 2.0 * k as f64 * T::EPS, || {
        format!("the ratios sum to {ratios}")
    });
    // A column sum of n terms in T, in any order, is within (n − 1)·u·Σ|x| of the exact
    // one, so the mean is within n·u·max|x| (with the division's rounding).
    let big = x.iter().fold(0.0f64, |m, v| m.max(v.as_f64().abs()));
    for (j, m) in fit.mean.iter().enumerate() {
        v.within(
            (m.as_f64() - mean[j]).abs(),
            n as f64 * T::EPS * big,
            "|mean − mean_ref|",
        );
    }
}

/// Each component against the reference's, within its Davis–Kahan angle.
fn check_components<T: Element>(
    v: &mut Verdict,
    comps: &Array2<T>,
    (want, squares): (&Array2<f64>, &[f64]),
    (k, e): (usize, f64),
) {
    if comps.dim() != (k, want.ncols()) {
        v.require(false, || format!("components {:?}", comps.dim()));
        return;
    }
    for i in 0..k {
        let gap = (0..squares.len())
            .filter(|&j| j != i)
            .map(|j| (squares[i] - squares[j]).abs())
            .fold(f64::INFINITY, f64::min);
        let row = comps.row(i);
        let diff = row
            .iter()
            .zip(want.row(i))
            .map(|(c, w)| (c.as_f64() - w).powi(2));
        let dist = diff.sum::<f64>().sqrt();
        let bound = SLACK * (e / gap + want.ncols() as f64 * T::EPS);
        v.within(
            dist,
            bound,
            "‖component − reference‖ over its Davis–Kahan bound",
        );
    }
}

/// `(X − mean)·componentsᵀ` against the product in f64 of the fit's own parts.
fn check_transform<T: Element>(v: &mut Verdict, t: &Array2<T>, fit: &PcaFit<T>, x: &Array2<T>) {
    let (comps, mean) = (&fit.components, &fit.mean);
    let xc = Array2::from_shape_fn(x.dim(), |(i, j)| x[[i, j]].as_f64() - mean[j].as_f64());
    let c = comps.mapv(|v| v.as_f64());
    let want = xc.dot(&c.t());
    if t.dim() != want.dim() {
        v.require(false, || {
            format!("transform {:?}, expected {:?}", t.dim(), want.dim())
        });
        return;
    }
    let bound = xc.mapv(f64::abs).dot(&c.mapv(f64::abs).t());
    let tol = tolerance::gemm::<T>(c.ncols() + 2);
    for ((ix, g), w) in t.indexed_iter().zip(&want) {
        v.within(
            (g.as_f64() - w).abs(),
            tol * bound[ix] + f64::MIN_POSITIVE,
            "|transform − (X − mean)·Cᵀ|",
        );
    }
}
