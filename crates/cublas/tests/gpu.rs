//! GPU tests of the vendor backend: every family and variant through the conformance
//! suite, plus direct checks against f64 host computations with the tolerances of
//! `ndgpu_core::tolerance`. Run on a CUDA machine with
//! `cargo test -p ndgpu-cublas --test gpu -- --ignored`.

mod common;

use common::*;
use ndarray::{s, Array2, Axis};
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{tolerance, Backend, Family, MatMul, Trans, Transpose};
use ndgpu_cublas::{BlasElement, CublasBackend};

macro_rules! conformance {
    ($name:ident, $family:expr) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            let mut b = backend();
            let variants = b.variants($family);
            assert!(!variants.is_empty());
            for v in variants {
                // TF32 is outside the f32 bound by design: tested below against its own.
                if ($family, v) == (Family::MatMul, "gemm_tf32") {
                    continue;
                }
                b.set_variant($family, v).unwrap();
                assert_eq!(b.variant($family), v);
                assert_family(&b, $family, Sizes::from_env(Sizes::Medium));
            }
        }
    };
}

conformance!(conformance_matmul, Family::MatMul);
conformance!(conformance_gram, Family::Gram);
conformance!(conformance_transpose, Family::Transpose);
conformance!(conformance_reduce, Family::Reduce);
conformance!(conformance_cholesky, Family::Cholesky);
conformance!(conformance_kmeans, Family::KMeans);

#[test]
#[ignore = "needs a CUDA device"]
fn description_names_device_and_library_versions() {
    let b = backend();
    let (cublas, cusolver) = ndgpu_cublas::versions().unwrap();
    let d = b.description();
    assert!(d.contains(&cublas) && d.contains(&cusolver), "{d}");
    assert!(d.contains(b.gpu().name()), "{d}");
    assert_eq!(b.variant(Family::MatMul), "gemm", "TF32 must be opt-in");
    assert!(b.notes().iter().any(|n| n.contains("NOT min/max")));
}

/// Every flag combination, odd shapes, k = 0, alpha/beta, against the f64 product.
fn gemm_matches_host<T: BlasElement>(b: &CublasBackend, tf32: bool) {
    let shapes = [
        (1, 1, 1),
        (7, 5, 3),
        (33, 65, 17),
        (128, 96, 257),
        (5, 4, 0),
        (300, 1, 200),
    ];
    for (i, &(m, n, k)) in shapes.iter().enumerate() {
        for ta in [Trans::No, Trans::Yes] {
            for tb in [Trans::No, Trans::Yes] {
                let a = random::<T>(op_shape((m, k), ta), 10 + i as u64);
                let bb = random::<T>(op_shape((k, n), tb), 20 + i as u64);
                let c = random::<T>((m, n), 30 + i as u64);
                for (alpha, beta) in [(1.0, 0.0), (-0.5, 2.0)] {
                    let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
                    let cc = (beta != T::zero()).then(|| c.view());
                    let got =
                        MatMul::gemm(b, alpha, a.view(), ta, bb.view(), tb, beta, cc).unwrap();
                    let (want, scale) =
                        host_gemm(alpha, a.view(), ta, bb.view(), tb, beta, c.view());
                    let rel = if tf32 {
                        tolerance::gemm_tf32(k)
                    } else {
                        tolerance::gemm::<T>(k)
                    };
                    assert_close(
                        &got,
                        &want,
                        &scale,
                        rel,
                        &format!("gemm {m}x{n}x{k} {ta:?} {tb:?}"),
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gemm_matches_the_host_product_for_every_flag_combination() {
    let b = backend();
    gemm_matches_host::<f32>(&b, false);
    gemm_matches_host::<f64>(&b, false);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gemm_tf32_is_within_the_tf32_bound_and_plain_dgemm_for_f64() {
    let mut b = backend();
    b.set_variant(Family::MatMul, "gemm_tf32").unwrap();
    gemm_matches_host::<f32>(&b, true);
    // f64: TF32 does not apply; the variant must be plain DGEMM, bit for bit.
    let a = random::<f64>((129, 77), 1);
    let x = random::<f64>((77, 65), 2);
    let tf32 = b.matmul(a.view(), x.view()).unwrap();
    b.set_variant(Family::MatMul, "gemm").unwrap();
    let plain = b.matmul(a.view(), x.view()).unwrap();
    assert_eq!(tf32, plain, "gemm_tf32 on f64 must be plain DGEMM");
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_default_math_mode_is_restored_after_a_tf32_call() {
    // Every partial sum of j·(1 + 2⁻¹²), j ≤ 256, is exact in f32 (at most 21
    // significant bits), in any order: the product is exactly 256 + 2⁻⁴. TF32 keeps
    // 10 mantissa bits, so its operands round to 1 and it gives 256.
    let n = 256;
    let a = Array2::<f32>::from_elem((n, n), 1.0 + 2f32.powi(-12));
    let ones = Array2::<f32>::ones((n, n));
    let exact = 256.0 + 2f32.powi(-4);
    let mut b = backend();
    b.set_variant(Family::MatMul, "gemm_tf32").unwrap();
    let t = b.matmul(a.view(), ones.view()).unwrap();
    println!(
        "gemm_tf32 on the probe: {} (TF32 tensor cores: {})",
        t[[0, 0]],
        t[[0, 0]] != exact
    );
    b.set_variant(Family::MatMul, "gemm").unwrap();
    let c = b.matmul(a.view(), ones.view()).unwrap();
    assert!(
        c.iter().all(|&v| v == exact),
        "default gemm is not exact f32: {}",
        c[[0, 0]]
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn gemm_with_beta_zero_never_reads_c() {
    let b = backend();
    let gpu = b.gpu();
    for k in [0, 3, 64] {
        let a = gpu.upload(random::<f32>((37, k), 3).view()).unwrap();
        let x = gpu.upload(random::<f32>((k, 41), 4).view()).unwrap();
        let mut c = gpu
            .upload(Array2::from_elem((37, 41), f32::NAN).view())
            .unwrap();
        b.gemm_device(1.0, &a, Trans::No, &x, Trans::No, 0.0, &mut c)
            .unwrap();
        let c = gpu.download(&c).unwrap();
        assert!(
            c.iter().all(|v| v.is_finite()),
            "k = {k}: NaN from C leaked"
        );
        if k == 0 {
            assert!(c.iter().all(|&v| v == 0.0), "an empty product is zero");
        }
    }
}

fn gram_checks<T: BlasElement>(b: &CublasBackend) {
    for (i, &(n, k)) in [(1, 1), (5, 0), (17, 3), (64, 64), (257, 129), (500, 31)]
        .iter()
        .enumerate()
    {
        let m = random::<T>((n, k), 40 + i as u64);
        let g = b.gram(m.view()).unwrap();
        assert_eq!(
            g,
            g.t(),
            "gram {n}x{k} [{}] is not exactly symmetric",
            b.variant(Family::Gram)
        );
        let (want, scale) = host_gemm(
            T::one(),
            m.view(),
            Trans::No,
            m.view(),
            Trans::Yes,
            T::zero(),
            m.view(),
        );
        assert_close(
            &g,
            &want,
            &scale,
            tolerance::gemm::<T>(k),
            &format!("gram {n}x{k}"),
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gram_is_exactly_symmetric_and_accurate_in_every_variant() {
    let mut b = backend();
    for v in b.variants(Family::Gram) {
        b.set_variant(Family::Gram, v).unwrap();
        gram_checks::<f32>(&b);
        gram_checks::<f64>(&b);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn transpose_is_exact_for_every_shape_and_layout() {
    let b = backend();
    for (i, &(r, c)) in [(0, 5), (1, 1), (1, 77), (77, 1), (31, 65), (1000, 513)]
        .iter()
        .enumerate()
    {
        let a = random::<f64>((r, c), 50 + i as u64);
        assert_eq!(b.transpose(a.view()).unwrap(), a.t());
        let a32 = a.mapv(|v| v as f32);
        assert_eq!(b.transpose(a32.t()).unwrap(), a32, "a transposed view");
        let strided = a32.slice(s![..;2, ..;3]);
        assert_eq!(b.transpose(strided).unwrap(), strided.t());
    }
    // GEAM's B operand (the output itself, beta = 0) must not be read.
    let gpu = b.gpu();
    let a = gpu.upload(random::<f32>((33, 47), 5).view()).unwrap();
    let mut out = gpu
        .upload(Array2::from_elem((47, 33), f32::NAN).view())
        .unwrap();
    b.transpose_device(&a, &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), gpu.download(&a).unwrap().t());
}

#[test]
#[ignore = "needs a CUDA device"]
fn reductions_match_the_host() {
    let b = backend();
    // 37×53 = 1961 is not a square: the whole sum has a tail.
    for (i, &(r, c)) in [(1, 1), (37, 53), (1, 1000), (1000, 1), (300, 301)]
        .iter()
        .enumerate()
    {
        check_reductions::<f32>(&b, &random::<f32>((r, c), 60 + i as u64));
        check_reductions::<f64>(&b, &random::<f64>((r, c), 70 + i as u64));
    }
    let x = random::<f32>((1, 100_003), 8);
    check_reductions::<f32>(&b, &x);
    let empty = Array2::<f32>::zeros((0, 4));
    check_reductions::<f32>(&b, &empty);
}

#[test]
#[ignore = "needs a CUDA device"]
fn reductions_along_an_axis_of_length_zero_are_zero() {
    let b = backend();
    let a = Array2::<f64>::zeros((3, 0));
    for op in [ndgpu_core::ReduceOp::Sum, ndgpu_core::ReduceOp::SumSq] {
        let r = ndgpu_core::Reduce::reduce_axis(&b, op, a.view(), Axis(1)).unwrap();
        assert_eq!(r.to_vec(), vec![0.0; 3]);
        let r = ndgpu_core::Reduce::reduce_axis(&b, op, a.view(), Axis(0)).unwrap();
        assert!(r.is_empty());
    }
}

#[path = "gpu/solve.rs"]
mod solve;

/// Empty matrices with a dimension of 2³¹ or 2⁶²: results sized by it are refused with
/// an error, and the backend goes on.
#[test]
#[ignore = "needs a CUDA device"]
fn results_no_device_holds_are_refused_and_the_backend_goes_on() {
    ndgpu_conformance::assert_refuses_results_no_machine_holds(&backend());
}
