//! GPU tests of the vendor backend: every family and variant through the conformance
//! suite; the resident forms (`*_dev`) against f64 host computations with the
//! tolerances of `ndgpu_core::tolerance`; and resident arrays shared with the `cuda`
//! backend, which runs on the same runtime. Run on a CUDA machine with
//! `cargo test -p ndgpu-cublas --test gpu -- --ignored`.

mod common;

use std::sync::Arc;

use common::*;
use ndarray::{s, Array2, Axis};
use ndgpu_conformance::compare::{gemm_bound, gemm_f64, product_tolerance, solve_ratio};
use ndgpu_conformance::data::{Laid, Layout};
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{
    tolerance, ArgOp, Backend, Device, Error, Factorize, Family, Gemm, MatMul, Memory, Precision,
    Reduce, ReduceOp, Trans, Transpose,
};
use ndgpu_cublas::{BlasElement, CublasBackend};
use ndgpu_cuda_runtime::Gpu;

macro_rules! conformance {
    ($name:ident, $family:expr) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            every_variant(&mut backend(), $family, |b, _| {
                // TF32 is outside the f32 bound by design: tested below against its own.
                if b.precision($family) == Precision::Ieee {
                    assert_family(b, $family, Sizes::from_env(Sizes::Medium));
                }
            });
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
    assert_eq!(b.variant(Family::Cholesky), "xlower_trsm");
    assert!(b.notes().iter().any(|n| n.contains("NOT min/max")));
    assert_eq!(Device::place(&b), b.gpu().place());
}

/// Every flag combination, odd shapes, k = 0, α/β, against the f64 product, with the
/// bound of the selected variant: the resident form with C in place, and the host form
/// with column-major operands, which it uploads as their transposes with the flags
/// flipped, so that cuBLAS sees the other flag on the other buffer.
fn gemm_matches_host<T: BlasElement>(b: &CublasBackend) {
    let (variant, precision) = (b.variant(Family::MatMul), b.precision(Family::MatMul));
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
                let a = random::<T>(ta.dim((m, k)), 10 + i as u64);
                let bm = random::<T>(tb.dim((k, n)), 20 + i as u64);
                let c = random::<T>((m, n), 30 + i as u64);
                for (alpha, beta) in [(1.0, 0.0), (-0.5, 2.0)] {
                    let g = Gemm::new()
                        .alpha(T::from_f64(alpha))
                        .beta(T::from_f64(beta))
                        .ta(ta)
                        .tb(tb);
                    let want = gemm_f64(&g, a.view(), bm.view(), Some(c.view()));
                    // gemm_bound is the plain bound: scaled to the variant's.
                    let bound = gemm_bound(&g, a.view(), bm.view(), Some(c.view()))
                        * (product_tolerance::<T>(k, precision) / tolerance::gemm::<T>(k));
                    let what =
                        format!("gemm [{variant}] {m}x{n}x{k} {ta:?} {tb:?} α={alpha} β={beta}");

                    let (da, db) = (b.upload(a.view()).unwrap(), b.upload(bm.view()).unwrap());
                    let mut dc = b.upload(c.view()).unwrap();
                    b.gemm_dev(g, &da, &db, &mut dc).unwrap();
                    let got = b.download(&dc).unwrap();
                    assert_within(&what, got.view(), want.view(), bound.view());

                    let (af, bf) = (Laid::new(&a, Layout::F), Laid::new(&bm, Layout::F));
                    let cc = (beta != 0.0).then(|| c.view());
                    let got = b.gemm(g, af.view(), bf.view(), cc).unwrap();
                    let what = format!("{what}, column-major operands");
                    assert_within(&what, got.view(), want.view(), bound.view());
                }
            }
        }
    }
}

both_dtypes_test!(
    gemm_matches_the_host_product_for_every_flag_combination_and_layout,
    gemm_matches_host
);

#[test]
#[ignore = "needs a CUDA device"]
fn gemm_tf32_is_within_the_tf32_bound_and_plain_dgemm_for_f64() {
    let mut b = backend();
    b.set_variant(Family::MatMul, "gemm_tf32").unwrap();
    assert_eq!(b.precision(Family::MatMul), Precision::Tf32);
    gemm_matches_host::<f32>(&b);
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
    for k in [0, 3, 64] {
        let a = b.upload(random::<f32>((37, k), 3).view()).unwrap();
        let x = b.upload(random::<f32>((k, 41), 4).view()).unwrap();
        let mut c = b
            .upload(Array2::from_elem((37, 41), f32::NAN).view())
            .unwrap();
        b.gemm_dev(Gemm::new(), &a, &x, &mut c).unwrap();
        let c = b.download(&c).unwrap();
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
    let variant = b.variant(Family::Gram);
    let mmt = Gemm::new().tb(Trans::Yes);
    for (i, &(n, k)) in [(1, 1), (5, 0), (17, 3), (64, 64), (257, 129), (500, 31)]
        .iter()
        .enumerate()
    {
        let m = random::<T>((n, k), 40 + i as u64);
        let g = b.gram_dev(&b.upload(m.view()).unwrap()).unwrap();
        assert_eq!(g.dim(), (n, n));
        let g = b.download(&g).unwrap();
        // The mirror copies one triangle onto the other: equal to the bit.
        assert_eq!(
            g,
            g.t(),
            "gram {n}x{k} [{variant}] is not exactly symmetric"
        );
        assert_within(
            &format!("gram {n}x{k} [{variant}]"),
            g.view(),
            gemm_f64(&mmt, m.view(), m.view(), None).view(),
            gemm_bound(&mmt, m.view(), m.view(), None).view(),
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gram_is_exactly_symmetric_and_accurate_in_every_variant() {
    every_variant(&mut backend(), Family::Gram, |b, _| {
        gram_checks::<f32>(b);
        gram_checks::<f64>(b);
    });
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
        let da = b.upload(a.view()).unwrap();
        let twice = b.transpose_dev(&b.transpose_dev(&da).unwrap()).unwrap();
        assert_eq!(b.download(&twice).unwrap(), a, "transposed twice");
    }
    // GEAM's B operand is the output itself (β = 0) and must not be read. A NaN matrix
    // of the output's size freed just before leaves its memory to the stream-ordered
    // allocator, which is likely to hand it to the output: a read would show.
    let a = b.upload(random::<f32>((33, 47), 5).view()).unwrap();
    drop(
        b.upload(Array2::from_elem((47, 33), f32::NAN).view())
            .unwrap(),
    );
    let t = b.transpose_dev(&a).unwrap();
    assert_eq!(b.download(&t).unwrap(), b.download(&a).unwrap().t());
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
    let da = b.upload(a.view()).unwrap();
    for op in [ReduceOp::Sum, ReduceOp::SumSq] {
        let r = b.reduce_axis(op, a.view(), Axis(1)).unwrap();
        assert_eq!(r.to_vec(), vec![0.0; 3]);
        let r = b.reduce_axis(op, a.view(), Axis(0)).unwrap();
        assert!(r.is_empty());
        let r = b.reduce_axis_dev(op, &da, Axis(1)).unwrap();
        assert_eq!(b.download(&r).unwrap(), Array2::<f64>::zeros((3, 1)));
        assert_eq!(b.reduce_axis_dev(op, &da, Axis(0)).unwrap().dim(), (1, 0));
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

/// Both backends open device 0 on `Gpu::shared(0)`: arrays made by either are operands
/// of the other, in chains that never leave the device.
fn arrays_cross<T: BlasElement>(vendor: &CublasBackend, ours: &ndgpu_cuda::CudaBackend) {
    let a = random::<T>((65, 33), 1);
    let x = random::<T>((33, 17), 2);
    // Uploaded by cuda, computed on by cublas, read back by cuda.
    let (da, dx) = (
        ours.upload(a.view()).unwrap(),
        ours.upload(x.view()).unwrap(),
    );
    let p = vendor.matmul_dev(&da, &dx).unwrap();
    let g = Gemm::new();
    assert_within(
        "cublas product of cuda's arrays",
        ours.download(&p).unwrap().view(),
        gemm_f64(&g, a.view(), x.view(), None).view(),
        gemm_bound(&g, a.view(), x.view(), None).view(),
    );
    assert_eq!(
        ours.download(&vendor.transpose_dev(&da).unwrap()).unwrap(),
        a.t()
    );
    let rows = vendor
        .arg_reduce_axis_dev(ArgOp::ArgMax, &da, Axis(1))
        .unwrap();
    let want: Vec<usize> = a
        .rows()
        .into_iter()
        .map(|r| first_extreme(r.iter().copied(), ArgOp::ArgMax))
        .collect();
    assert_eq!(
        ours.download_indices(&rows).unwrap().to_vec(),
        want,
        "cublas' indices read by cuda"
    );
    // Uploaded by cublas, read and computed on by cuda.
    let dv = vendor.upload(a.view()).unwrap();
    assert_eq!(ours.download(&dv).unwrap(), a);
    assert_eq!(
        vendor.download(&ours.transpose_dev(&dv).unwrap()).unwrap(),
        a.t()
    );
    let max = a
        .iter()
        .copied()
        .fold(a[[0, 0]], |m, v| if v > m { v } else { m });
    assert_eq!(ours.reduce_dev(ReduceOp::Max, &dv).unwrap(), max);
    // A solve across both: cuda uploads A, cublas factors it, cuda solves with that
    // factor in place on a B that cublas uploaded.
    let n = 40;
    let s = spd::<T>(n, 3);
    let rhs = random::<T>((n, 5), 4);
    let f = vendor
        .cholesky_in_place_dev(ours.upload(s.view()).unwrap())
        .unwrap();
    let mut db = vendor.upload(rhs.view()).unwrap();
    ours.cholesky_solve_in_place_dev(&f, &mut db).unwrap();
    let sol = vendor.download(&db).unwrap();
    let r = solve_ratio(s.view(), sol.view(), rhs.view());
    assert!(r <= tolerance::SOLVE_RATIO, "solve ratio {r}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_cuda_and_cublas_backends_read_each_others_arrays() {
    let (vendor, ours) = (backend(), cuda());
    assert!(
        Arc::ptr_eq(vendor.gpu(), ours.gpu()),
        "one runtime per device"
    );
    assert_eq!(Device::place(&vendor), Device::place(&ours));
    arrays_cross::<f32>(&vendor, &ours);
    arrays_cross::<f64>(&vendor, &ours);
}

#[test]
#[ignore = "needs a CUDA device"]
fn an_array_of_another_runtime_is_in_another_place() {
    let vendor = backend();
    let own = CublasBackend::with_gpu(Gpu::new(0).unwrap()).unwrap();
    assert_ne!(Device::place(&own), Device::place(&vendor));
    let m = own.upload(random::<f32>((4, 6), 1).view()).unwrap();
    match vendor.transpose_dev(&m) {
        Err(Error::WrongPlace {
            backend: "cublas",
            expected,
            found,
            ..
        }) => assert_eq!((expected, found), (Device::place(&vendor), m.place())),
        other => panic!("expected WrongPlace, got {other:?}"),
    }
    let x = vendor.upload(random::<f32>((6, 4), 2).view()).unwrap();
    assert!(matches!(
        own.matmul_dev(&m, &x),
        Err(Error::WrongPlace { what: "B", .. })
    ));
    // Each backend still computes on its own arrays.
    assert_eq!(
        own.download(&own.transpose_dev(&m).unwrap()).unwrap().dim(),
        (6, 4)
    );
}

/// The host waits of each step of one resident chain gram → cholesky → solve of order
/// n on `b`, after a first run (kernels compiled, handles made). The factorization
/// reads its status once; the resident solve does not look at B (NaN in B stays in its
/// column of X), so it does not wait. Counted are the runtime's own waits
/// ([`Gpu::host_waits`]); neither backend calls a cuBLAS routine that returns a scalar
/// to the host in this chain.
fn chain_waits<B: Backend + ?Sized>(b: &B, gpu: &Gpu, n: usize) -> [u64; 3] {
    let m = Array2::<f64>::from_shape_fn((n, 2 * n), |(i, j)| match j < n {
        true => f64::from(u8::from(i == j)),
        false => ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.5,
    });
    let rhs = Array2::<f64>::ones((n, 4));
    let (dm, drhs) = (b.upload(m.view()).unwrap(), b.upload(rhs.view()).unwrap());
    let mut waits = [0; 3];
    let mut run = |count: bool| {
        let mut step = |k: usize, before: u64| {
            if count {
                waits[k] = gpu.host_waits() - before;
            }
        };
        let w = gpu.host_waits();
        let g = b.gram_dev(&dm).unwrap();
        step(0, w);
        let w = gpu.host_waits();
        let l = b.cholesky_dev(&g).unwrap();
        step(1, w);
        let w = gpu.host_waits();
        let x = b.cholesky_solve_dev(&l, &drhs).unwrap();
        step(2, w);
        x
    };
    drop(run(false));
    b.synchronize().unwrap();
    let x = run(true);
    assert!(b.download(&x).unwrap().iter().all(|v| v.is_finite()));
    waits
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_resident_chain_waits_for_the_device_once_on_either_backend() {
    // A runtime of its own, so that the count is this test's alone while others run.
    let gpu = Gpu::new(0).unwrap();
    let vendor = CublasBackend::with_gpu(Arc::clone(&gpu)).unwrap();
    let hand = ndgpu_cuda::CudaBackend::with_gpu(Arc::clone(&gpu));
    let mut report = Vec::new();
    for n in [256, 4096] {
        let (v, h) = (chain_waits(&vendor, &gpu, n), chain_waits(&hand, &gpu, n));
        println!("n = {n}: host waits (gram, cholesky, solve): cublas {v:?}, cuda {h:?}");
        report.push((n, v, h));
    }
    for (n, v, h) in report {
        assert_eq!(
            (v, h),
            ([0, 1, 0], [0, 1, 0]),
            "n = {n}: host waits per step"
        );
    }
}
