//! The matrices of the spectra's cases, built in f64 and rounded once to `T`.

use ndarray::{Array1, Array2};
use ndgpu_core::{Element, Factorize, QrMode};
use ndgpu_cpu::CpuBackend;

use crate::data::Rng;

/// A random n×n orthogonal matrix: the Q of a random matrix.
pub(super) fn orthogonal(rng: &mut Rng, cpu: &CpuBackend, n: usize) -> Array2<f64> {
    let g = rng.matrix::<f64>(n, n);
    cpu.qr(g.view(), QrMode::Complete)
        .expect("QR of a random matrix")
        .0
}

/// `Q·diag(values)·Qᵀ` for a random orthogonal Q.
pub(super) fn with_values(rng: &mut Rng, cpu: &CpuBackend, values: &Array1<f64>) -> Array2<f64> {
    let q = orthogonal(rng, cpu, values.len());
    let scaled = Array2::from_shape_fn(q.dim(), |(i, j)| q[[i, j]] * values[j]);
    scaled.dot(&q.t())
}

/// The symmetric inputs of order n, named: random (its strict upper triangle different
/// garbage, never read); repeated and clustered eigenvalues; graded (a diagonal scaling
/// over 2⁻² per row, for n ≤ 33 to keep the last rows above underflow in f32).
pub(super) fn symmetric<T: Element>(
    rng: &mut Rng,
    cpu: &CpuBackend,
    n: usize,
) -> Vec<(&'static str, Array2<T>)> {
    let random = rng.matrix::<T>(n, n);
    let repeated = Array1::from_shape_fn(n, |i| [2.0, -1.0, 2.0, 0.5][i % 4]);
    let clustered = Array1::from_shape_fn(n, |i| 1.0 + i as f64 * 1e-6);
    let mut out = vec![
        ("random, upper triangle unread", random),
        (
            "repeated eigenvalues",
            round(&with_values(rng, cpu, &repeated)),
        ),
        (
            "clustered eigenvalues",
            round(&with_values(rng, cpu, &clustered)),
        ),
    ];
    if n <= 33 {
        let r = rng.matrix::<f64>(n, n);
        let d = |i: usize| 0.25f64.powi(i as i32);
        let graded = Array2::from_shape_fn((n, n), |(i, j)| {
            d(i) * d(j) * (r[[i.max(j), i.min(j)]] + if i == j { 2.0 } else { 0.0 })
        });
        out.push(("graded", round(&graded)));
    }
    out
}

/// The m×n inputs of the SVD, named: random; rank-deficient (a product through
/// rank r = min(m, n)/2, rounded); graded columns (scaled by 2⁻² each).
pub(super) fn general<T: Element>(
    rng: &mut Rng,
    m: usize,
    n: usize,
) -> Vec<(&'static str, Array2<T>)> {
    let random = rng.matrix::<T>(m, n);
    let r = (m.min(n) / 2).max(1);
    let low = rng.matrix::<f64>(m, r).dot(&rng.matrix::<f64>(r, n));
    let g = rng.matrix::<f64>(m, n);
    let graded = Array2::from_shape_fn((m, n), |(i, j)| g[[i, j]] * 0.25f64.powi(j.min(40) as i32));
    vec![
        ("random", random),
        ("rank-deficient", round(&low)),
        ("graded columns", round(&graded)),
    ]
}

/// `a` rounded once to `T`.
pub(super) fn round<T: Element>(a: &Array2<f64>) -> Array2<T> {
    a.mapv(T::from_f64)
}
