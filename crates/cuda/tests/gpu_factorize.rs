//! GPU tests of the LU, QR and triangular-solve ladders: the conformance cases on every
//! variant, TSQR on matrices tall enough for several levels of its tree (LAPACK's QR
//! ratios, least squares against the CPU reference's normal-equation residual), and the
//! one host read of a resident LU factorization and solve.
//! Run on a GPU machine with `cargo test -p ndgpu-cuda --test gpu_factorize -- --ignored`.

mod common;

use common::{random, with_variant};
use ndarray::Array2;
use ndgpu_conformance::compare::to_f64;
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{Factorize, Family, Memory, QrMode, Trans};
use ndgpu_cuda::Gpu;
use ndgpu_cuda_runtime::CudaElement;

common::conformance_test!(conformance_trsm_every_variant, Family::Trsm);
common::conformance_test!(conformance_lu_every_variant, Family::Lu);
common::conformance_test!(conformance_qr_every_variant, Family::Qr);

/// ‖X‖₁ of an f64 matrix (largest column sum).
fn norm1(x: &Array2<f64>) -> f64 {
    x.columns()
        .into_iter()
        .map(|c| c.iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// Shapes that take TSQR with one, two and three levels of tiles.
const TALL: &[(usize, usize)] = &[(200, 20), (5000, 64), (70_000, 32), (300_001, 8)];

fn tsqr_ratios<T: CudaElement>() {
    let b = with_variant(Family::Qr, "tsqr");
    let mut rng = SplitMix64::new(11);
    for &(m, n) in TALL {
        let a = random::<T>(&mut rng, m, n);
        let (q, r) = b.qr(a.view(), QrMode::Reduced).unwrap();
        assert_eq!((q.dim(), r.dim()), ((m, n), (n, n)));
        let (q, r, a) = (to_f64(q.view()), to_f64(r.view()), to_f64(a.view()));
        let eps = T::EPS;
        // LAPACK's xQRT01: ‖A − Q·R‖₁/(m·ε·‖A‖₁) and ‖I − QᵀQ‖₁/(m·ε), each ≤ 30.
        let fact = norm1(&(&a - &q.dot(&r))) / (m as f64 * eps * norm1(&a));
        let orth = norm1(&(Array2::eye(n) - q.t().dot(&q))) / (m as f64 * eps);
        assert!(
            fact <= 30.0 && orth <= 30.0,
            "{m}x{n} {}: {fact} {orth}",
            T::SUFFIX
        );
        for ((i, j), v) in r.indexed_iter() {
            assert!(j >= i || *v == 0.0, "R[{i}, {j}] = {v}");
        }
    }
}

fn lstsq_tall<T: CudaElement>() {
    let mut rng = SplitMix64::new(12);
    for variant in ["tsqr", "householder"] {
        let b = with_variant(Family::Qr, variant);
        for &(m, n) in &TALL[..3] {
            let a = random::<T>(&mut rng, m, n);
            let rhs = random::<T>(&mut rng, m, 3);
            let x = to_f64(b.lstsq(a.view(), rhs.view()).unwrap().view());
            let (a, rhs) = (to_f64(a.view()), to_f64(rhs.view()));
            // The residual is orthogonal to A's columns: ‖Aᵀ·(B − A·X)‖₁ /
            // (m·ε·‖A‖₁·(‖A‖₁·‖X‖₁ + ‖B‖₁)) ≤ 30 (LAPACK's xQRT17 in spirit: the
            // backward error of the normal equations).
            let res = &rhs - &a.dot(&x);
            let ratio = norm1(&a.t().dot(&res))
                / (m as f64 * T::EPS * norm1(&a) * (norm1(&a) * norm1(&x) + norm1(&rhs)));
            assert!(ratio <= 30.0, "{variant} {m}x{n} {}: {ratio}", T::SUFFIX);
        }
    }
}

/// TSQR over one to three levels of tiles meets LAPACK's QR ratios, and least squares
/// (TSQR and Householder) is backward stable on tall matrices, in both types.
#[test]
#[ignore = "needs a CUDA device"]
fn tsqr_and_least_squares_on_tall_matrices() {
    tsqr_ratios::<f32>();
    lstsq_tall::<f32>();
    tsqr_ratios::<f64>();
    lstsq_tall::<f64>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_resident_lu_and_solve_read_back_once() {
    let gpu = Gpu::new(0).unwrap();
    let b = ndgpu_cuda::CudaBackend::with_gpu(gpu.clone());
    let mut rng = SplitMix64::new(13);
    let n = 300;
    let a = random::<f64>(&mut rng, n, n) + Array2::<f64>::eye(n) * n as f64;
    let rhs = random::<f64>(&mut rng, n, 4);
    let (da, db) = (b.upload(a.view()).unwrap(), b.upload(rhs.view()).unwrap());
    let before = gpu.host_waits();
    let f = b.lu_dev(&da).unwrap();
    let x = b.lu_solve_dev(&f, Trans::No, &db).unwrap();
    assert_eq!(
        gpu.host_waits() - before,
        1,
        "waits of lu_dev + lu_solve_dev"
    );
    let x = b.download(&x).unwrap();
    let r = &rhs - &a.dot(&x);
    let ratio = norm1(&r) / (norm1(&a) * norm1(&x) * n as f64 * f64::EPSILON);
    assert!(ratio <= 30.0, "{ratio}");
}
