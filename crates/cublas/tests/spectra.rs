//! GPU tests of the vendor backend's spectra (`eigh` through `syevd`, the SVD through
//! `gesvdj` and `gesvd`): the conformance suite with every variant, LAPACK's ratios and
//! the values against the CPU backend on every layout path (tall, wide, square), a
//! matrix with known eigenvalues, the strict upper triangle never read, NaN or ±Inf
//! named by its entry, and the one host wait of a resident call. Run on a CUDA machine
//! with `cargo test -p ndgpu-cublas --test spectra -- --ignored`.

mod common;

use std::f64::consts::PI;
use std::sync::Arc;

use common::*;
use ndarray::{Array1, Array2};
use ndgpu_conformance::compare::{
    eigh_ratio, frobenius, orthogonality_ratio, spectrum_ratio, svd_ratio,
};
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{tolerance, Backend, Element, Error, Factorize, Family, Memory};
use ndgpu_cpu::CpuBackend;
use ndgpu_cublas::{BlasElement, CublasBackend};
use ndgpu_cuda_runtime::Gpu;

const VARIANTS: [&str; 3] = ["syevd_gesvdj", "syevd_gesvd", "syevd_upper_gesvdj"];

#[test]
#[ignore = "needs a CUDA device"]
fn conformance_spectra_every_variant() {
    let mut b = backend();
    assert_eq!(b.variants(Family::Spectra), VARIANTS);
    every_variant(&mut b, Family::Spectra, |b, _| {
        assert_family(b, Family::Spectra, Sizes::from_env(Sizes::Medium))
    });
}

/// A symmetric matrix from its lower triangle, the strict upper triangle NaN.
fn symmetric<T: Element>(n: usize, seed: u64) -> (Array2<T>, Array2<f64>) {
    let r = random::<T>((n, n), seed);
    let full = Array2::from_shape_fn((n, n), |(i, j)| r[[i.max(j), i.min(j)]].as_f64());
    (poison_upper(&r), full)
}

/// `(w, V)` of every variant: xSYT21's ratio, V orthogonal, w ascending and within
/// Weyl's bound of the CPU backend's, and `eigvalsh` the same values.
fn eigh_checks<T: BlasElement>(b: &mut CublasBackend) {
    let cpu = CpuBackend::new();
    for (i, &n) in [1usize, 2, 5, 64, 129, 300].iter().enumerate() {
        let (a, full) = symmetric::<T>(n, 40 + i as u64);
        let want = cpu.eigvalsh(a.view()).unwrap();
        let fro = full.iter().fold(0.0f64, |m, v| m.hypot(*v));
        every_variant(b, Family::Spectra, |b, v| {
            let what = format!("{} eigh n = {n}, {v}", T::DTYPE);
            let (w, vecs) = b.eigh(a.view()).unwrap();
            let r = eigh_ratio(a.view(), w.view(), vecs.view());
            assert!(r <= tolerance::EIGH_RATIO, "{what}: residual ratio {r}");
            let o = orthogonality_ratio(vecs.view());
            assert!(o <= tolerance::ORTHOGONALITY_RATIO, "{what}: VᵀV ratio {o}");
            assert!(
                w.windows(2).into_iter().all(|p| p[0] <= p[1]),
                "{what}: order"
            );
            let s = spectrum_ratio(w.view(), want.view(), n, fro);
            assert!(s <= 2.0 * tolerance::SPECTRUM_RATIO, "{what}: vs cpu {s}");
            let alone = b.eigvalsh(a.view()).unwrap();
            let s = spectrum_ratio(alone.view(), want.view(), n, fro);
            assert!(s <= 2.0 * tolerance::SPECTRUM_RATIO, "{what}: eigvalsh {s}");
        });
    }
}

both_dtypes_test!(
    eigh_meets_lapacks_ratios_and_agrees_with_the_cpu,
    eigh_checks
);

#[test]
#[ignore = "needs a CUDA device"]
fn eigh_of_the_second_difference_matrix_gives_its_known_eigenvalues() {
    // tridiag(−1, 2, −1): λₖ = 2 − 2·cos(kπ/(n + 1)), k = 1..n, ascending.
    let n = 40;
    let a = Array2::from_shape_fn((n, n), |(i, j)| match i.abs_diff(j) {
        0 => 2.0,
        1 => -1.0,
        _ => 0.0,
    });
    let want = Array1::from_shape_fn(n, |k| {
        2.0 - 2.0 * ((k + 1) as f64 * PI / (n + 1) as f64).cos()
    });
    let mut b = backend();
    every_variant(&mut b, Family::Spectra, |b, v| {
        let (w, _) = b.eigh(poison_upper(&a).view()).unwrap();
        let s = spectrum_ratio(w.view(), want.view(), n, frobenius(a.view()));
        assert!(s <= tolerance::SPECTRUM_RATIO, "{v}: {w} vs {want}");
    });
}

/// `(U, s, Vt)` of tall, wide and square matrices with every variant (gesvd's two
/// layout paths among them): xBDT01's ratio, U and V orthonormal, s descending,
/// non-negative and within Mirsky's bound of the CPU backend's.
fn svd_checks<T: BlasElement>(b: &mut CublasBackend) {
    let cpu = CpuBackend::new();
    let shapes = [
        (1, 1),
        (1, 6),
        (6, 1),
        (5, 3),
        (3, 5),
        (64, 64),
        (300, 40),
        (40, 300),
    ];
    for (i, &(m, n)) in shapes.iter().enumerate() {
        let a = random::<T>((m, n), 60 + i as u64);
        let want = cpu.svdvals(a.view()).unwrap();
        let fro = frobenius(a.view());
        every_variant(b, Family::Spectra, |b, v| {
            let what = format!("{} svd {m}x{n}, {v}", T::DTYPE);
            let (u, s, vt) = b.svd(a.view(), false).unwrap();
            let k = m.min(n);
            assert_eq!((u.dim(), s.len(), vt.dim()), ((m, k), k, (k, n)), "{what}");
            let r = svd_ratio(a.view(), u.view(), s.view(), vt.view());
            assert!(r <= tolerance::SVD_RATIO, "{what}: residual ratio {r}");
            for (name, q) in [("U", u.view()), ("V", vt.t())] {
                let o = orthogonality_ratio(q);
                assert!(
                    o <= tolerance::ORTHOGONALITY_RATIO,
                    "{what}: {name} ratio {o}"
                );
            }
            assert!(s.iter().all(|x| x.as_f64() >= 0.0), "{what}: s ≥ 0");
            assert!(
                s.windows(2).into_iter().all(|p| p[0] >= p[1]),
                "{what}: order"
            );
            let d = spectrum_ratio(s.view(), want.view(), m.max(n), fro);
            assert!(d <= 2.0 * tolerance::SPECTRUM_RATIO, "{what}: vs cpu {d}");
            let alone = b.svdvals(a.view()).unwrap();
            let d = spectrum_ratio(alone.view(), want.view(), m.max(n), fro);
            assert!(d <= 2.0 * tolerance::SPECTRUM_RATIO, "{what}: svdvals {d}");
        });
    }
}

both_dtypes_test!(
    svd_meets_lapacks_ratios_on_every_layout_path_and_agrees_with_the_cpu,
    svd_checks
);

/// Whether `e` is the contract's NonFinite naming `index` of A, with the value's kind.
fn names(e: &Error, index: (usize, usize), bad: f64) -> bool {
    matches!(e, Error::NonFinite { what: "A", index: i, value, .. }
        if *i == index && value.is_nan() == bad.is_nan())
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_or_inf_in_a_resident_matrix_is_named_by_its_entry() {
    let mut b = backend();
    every_variant(&mut b, Family::Spectra, |b, v| {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            // eigh: in the lower triangle, with the upper one poisoned as well.
            let (mut a, _) = symmetric::<f64>(9, 1);
            a[[6, 2]] = bad;
            let da = b.upload(a.view()).unwrap();
            for got in [b.eigh_dev(&da).map(drop), b.eigvalsh_dev(&da).map(drop)] {
                assert!(
                    matches!(&got, Err(e) if names(e, (6, 2), bad)),
                    "{v} eigh: {got:?}"
                );
            }
            // svd: the tall, the wide and the square paths.
            for (m, n) in [(9, 7), (7, 9), (8, 8)] {
                let mut a = random::<f64>((m, n), 2);
                a[[5, 3]] = bad;
                let da = b.upload(a.view()).unwrap();
                for got in [b.svd_dev(&da).map(drop), b.svdvals_dev(&da).map(drop)] {
                    let ok = matches!(&got, Err(e) if names(e, (5, 3), bad));
                    assert!(ok, "{v} svd {m}x{n}: {got:?}");
                }
            }
        }
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn huge_finite_entries_whose_row_sums_overflow_are_no_error() {
    let mut b = backend();
    let big = f64::MAX / 4.0;
    let a = Array2::from_shape_fn((6, 6), |(i, j)| if i == j { big } else { big / 2.0 });
    every_variant(&mut b, Family::Spectra, |b, v| {
        let w = b.eigvalsh(a.view());
        assert!(w.is_ok(), "{v} eigvalsh: {w:?}");
        let s = b.svdvals(a.view());
        assert!(s.is_ok(), "{v} svdvals: {s:?}");
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_resident_eigh_or_svd_waits_for_the_device_twice() {
    // Once for A's check before cuSOLVER runs, once for its info.
    // A runtime of its own, so that the count is this test's alone while others run.
    let mut b = CublasBackend::with_gpu(Gpu::new(0).unwrap()).unwrap();
    let gpu = Arc::clone(b.gpu());
    let a = b.upload(random::<f64>((200, 200), 3).view()).unwrap();
    let wide = b.upload(random::<f64>((50, 120), 4).view()).unwrap();
    for v in VARIANTS {
        b.set_variant(Family::Spectra, v).unwrap();
        let waits = [
            ("eigh_dev", waits_of(&gpu, &b, || b.eigh_dev(&a).unwrap())),
            (
                "eigvalsh_dev",
                waits_of(&gpu, &b, || b.eigvalsh_dev(&a).unwrap()),
            ),
            ("svd_dev", waits_of(&gpu, &b, || b.svd_dev(&wide).unwrap())),
            (
                "svdvals_dev",
                waits_of(&gpu, &b, || b.svdvals_dev(&a).unwrap()),
            ),
        ];
        for (what, n) in waits {
            assert_eq!(n, 2, "{v} {what}");
        }
    }
}
