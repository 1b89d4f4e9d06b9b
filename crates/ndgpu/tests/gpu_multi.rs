//! The backends over several devices (`cuda:all`, `cublas:all`): the conformance suite
//! and the resident chains on every family, k-means bitwise equal to one device, the
//! layouts, and the errors. On a machine with one GPU the groups have one rank (NCCL
//! with a communicator of one); run there and on two GPUs with `--include-ignored`.

use ndgpu::ndarray::{Array2, Axis};
use ndgpu::{backend, Error, Family, Init, KMeansConfig, Layout, Memory, MultiBackend};
use ndgpu_conformance::data::Rng;
use ndgpu_conformance::{assert_chains, assert_family, Sizes};

fn group(kind: &str) -> Box<dyn ndgpu::Backend> {
    backend(&format!("{kind}:all")).expect("CUDA devices and NCCL")
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_family_and_the_chains_on_both_groups() {
    for kind in ["cuda", "cublas"] {
        let b = group(kind);
        for family in Family::ALL {
            if matches!(family, Family::Trsm | Family::Lu | Family::Qr) {
                continue; // not on groups yet: see the test below
            }
            assert_family(&*b, family, Sizes::from_env(Sizes::Medium));
        }
        assert_chains(&*b, Sizes::from_env(Sizes::Small));
    }
    // A variant of another precision, selected on every rank, is checked with its own
    // bound (the group's table carries the ranks' precisions).
    let mut b = group("cublas");
    b.set_variant(Family::MatMul, "gemm_tf32").unwrap();
    assert_eq!(b.precision(Family::MatMul), ndgpu::Precision::Tf32);
    assert_family(&*b, Family::MatMul, Sizes::Small);
}

/// The groups have no LU, QR or triangular solve yet: each answers `Unsupported`
/// naming the operation, never a wrong result.
#[test]
#[ignore = "needs a CUDA device"]
fn the_groups_refuse_lu_qr_and_triangular_solves_by_name() {
    use ndgpu::{QrMode, Triangular};
    for kind in ["cuda", "cublas"] {
        let b = group(kind);
        let a = Array2::<f64>::eye(3);
        let unsupported = |r: ndgpu::Result<()>, name: &str| match r {
            Err(Error::Unsupported { op, .. }) => assert_eq!(op, name, "{kind}"),
            other => panic!("{kind} {name}: {other:?}"),
        };
        unsupported(b.lu(a.view()).map(|_| ()), "lu");
        unsupported(b.qr(a.view(), QrMode::Reduced).map(|_| ()), "qr");
        unsupported(b.solve(a.view(), a.view()).map(|_| ()), "lu");
        let tri = Triangular::lower();
        unsupported(
            b.solve_triangular(a.view(), a.view(), tri).map(|_| ()),
            "solve_triangular",
        );
        unsupported(b.lstsq(a.view(), a.view()).map(|_| ()), "qr");
    }
}

/// Blobs of `n` points, the first k of them as the start.
fn blobs(n: usize, d: usize, k: usize, seed: u64) -> (Array2<f32>, Array2<f64>) {
    let mut rng = Rng::new(seed);
    let centres = Array2::from_shape_fn((k, d), |_| rng.uniform(-20.0, 20.0));
    let x = Array2::from_shape_fn((n, d), |(i, j)| {
        (centres[[i % k, j]] + rng.uniform(-1.0, 1.0)) as f32
    });
    let start = x.slice(ndgpu::ndarray::s![..k, ..]).mapv(f64::from);
    (x, start)
}

/// N = 100,003 splits inside a chunk of the update (a chunk assembled from two ranks);
/// N = 2¹⁸ splits on a chunk boundary. Unweighted and with sample weights.
#[test]
#[ignore = "needs a CUDA device"]
fn kmeans_on_the_group_is_bitwise_that_of_one_device() {
    let one = backend("cuda").expect("a CUDA device");
    let all = group("cuda");
    for (n, d, k) in [(100_003, 32, 128), (1 << 18, 16, 64), (5_000, 3, 7)] {
        let (x, start) = blobs(n, d, k, n as u64);
        let plain = KMeansConfig::new(k)
            .max_iter(6)
            .tol(0.0)
            .init(Init::Given(start));
        // And with sample weights, split as X is (every eleventh 0).
        let w = ndgpu::ndarray::Array1::from_shape_fn(n, |i| match i % 11 {
            5 => 0.0,
            r => 0.25 + 0.5 * r as f64,
        });
        for config in [plain.clone(), plain.sample_weight(w)] {
            let a = one.kmeans(x.view(), &config).unwrap();
            let b = all.kmeans(x.view(), &config).unwrap();
            assert_eq!(a.labels, b.labels, "labels, n = {n}");
            assert_eq!(a.iterations, b.iterations);
            let same = a
                .centroids
                .iter()
                .zip(&b.centroids)
                .all(|(p, q)| p.to_bits() == q.to_bits());
            assert!(same, "centroids differ in their bits, n = {n}");
            // The inertia is summed per rank and then over ranks: f64 rounding of the order.
            let rel = (a.inertia - b.inertia).abs() / a.inertia;
            assert!(rel <= 1e-12, "inertia {} vs {}", a.inertia, b.inertia);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn layouts_are_split_by_rows_or_replicated() {
    let devices = ndgpu_multi_count();
    let opened = MultiBackend::open("cuda", &(0..devices).collect::<Vec<_>>(), |d| {
        let b = ndgpu::CudaBackend::new(d)?;
        let gpu = b.gpu().clone();
        Ok(ndgpu_multi::Rank::new(Box::new(b), gpu))
    })
    .unwrap();
    let a = Array2::from_shape_fn((11, 5), |(i, j)| (i * 5 + j) as f64);
    let m = opened.upload(a.view()).unwrap();
    let offsets = ndgpu_multi::split(11, devices);
    assert_eq!(opened.layout(&m).unwrap(), Layout::Rows(offsets));
    let r = opened.replicate(&m).unwrap();
    assert_eq!(opened.layout(&r).unwrap(), Layout::Replicated);
    assert_eq!(opened.download(&r).unwrap(), a);
    let mut back = opened.alloc(11, 5).unwrap();
    opened.copy_into(&r, &mut back).unwrap();
    assert_eq!(opened.download(&back).unwrap(), a);
    // Products with a replicated operand and a split one.
    let g = ndgpu::MatMul::gram_dev(&opened, &r).unwrap();
    let want = a.dot(&a.t());
    assert_eq!(opened.download(&g).unwrap(), want);
    let s = ndgpu::Reduce::reduce_axis_dev(&opened, ndgpu::ReduceOp::Sum, &r, Axis(0)).unwrap();
    assert_eq!(opened.download(&s).unwrap().row(0), a.sum_axis(Axis(0)));
}

fn ndgpu_multi_count() -> usize {
    ndgpu_multi::device_count("cuda").expect("a CUDA device")
}

#[test]
#[ignore = "needs a CUDA device"]
fn missing_devices_and_foreign_arrays_are_clear_errors() {
    let n = ndgpu_multi_count();
    match backend(&format!("cuda:0,{n}")) {
        Err(Error::Unavailable { backend, reason }) => {
            assert_eq!(backend, format!("cuda:0,{n}"));
            assert!(reason.contains(&format!("no device {n}")), "{reason}");
        }
        other => panic!("expected Unavailable, got {:?}", other.map(|b| b.name())),
    }
    let (one, all) = (backend("cuda").unwrap(), group("cuda"));
    let a = Array2::from_shape_fn((4, 4), |(i, j)| (i + j) as f32);
    let on_one = one.upload(a.view()).unwrap();
    match all.reduce_dev(ndgpu::ReduceOp::Sum, &on_one) {
        Err(e @ Error::WrongPlace { .. }) => {
            let text = e.to_string();
            assert!(text.contains("CUDA devices"), "{text}");
        }
        other => panic!("expected WrongPlace, got {other:?}"),
    }
    let on_all = all.upload(a.view()).unwrap();
    assert!(matches!(
        one.reduce_dev(ndgpu::ReduceOp::Sum, &on_all),
        Err(Error::WrongPlace { .. })
    ));
    // The two groups over the same devices share their arrays.
    let cublas = group("cublas");
    assert_eq!(cublas.download(&on_all).unwrap(), a);
}

/// A matrix whose share is larger than one device is out of memory, named as such; the
/// group goes on working.
#[test]
#[ignore = "needs a CUDA device"]
fn out_of_memory_on_a_rank_is_an_error_and_the_group_goes_on() {
    let all = group("cuda");
    let cols = 1 << 20;
    let rows = 64 * 1024 * ndgpu_multi_count(); // 256 GiB of f32 on each device
    match Memory::<f32>::alloc(&*all, rows, cols) {
        Err(Error::OutOfMemory { requested, .. }) => assert!(requested >= 1 << 38),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    let a = Array2::from_shape_fn((9, 3), |(i, j)| (i * 3 + j) as f32);
    let m = all.upload(a.view()).unwrap();
    assert_eq!(all.download(&m).unwrap(), a);
}
