//! Reliability of the CUDA runtime and backend on a real device: out-of-memory errors
//! (also in the middle of a resident chain), recovery after a failed launch, memory
//! released on drop, resident arrays outliving their backend, several threads and
//! several backends sharing one device, transfers of every layout, and the bitwise
//! run-to-run reproducibility that the default variants claim. Run on the GPU machine
//! with `--include-ignored`.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ndarray::{s, Array2, Axis, ShapeBuilder};
use ndgpu_core::{
    Backend, Cluster, Device, Error, Factorize, Family, HostArray, KMeansConfig, MatMul, Memory,
    Reduce, ReduceOp, Transpose,
};
use ndgpu_cpu::CpuBackend;
use ndgpu_cuda::{CudaBackend, Gpu};
use ndgpu_cuda_runtime::kernels::KernelFile;

fn random(rows: usize, cols: usize, seed: u64) -> Array2<f32> {
    common::random(&mut ndgpu_core::kmeans::SplitMix64::new(seed), rows, cols)
}

fn spd(n: usize, seed: u64) -> Array2<f64> {
    let b = random(n, n, seed).mapv(f64::from);
    b.dot(&b.t()) + Array2::<f64>::eye(n) * n as f64
}

/// Asserts that the device has `before` bytes free again, give or take `slack`.
fn assert_memory_back(gpu: &Gpu, before: usize, slack: usize) {
    let (now, _) = gpu.mem_info().unwrap();
    assert!(
        now + slack >= before,
        "free memory went from {before} to {now}"
    );
}

/// Largest |x − y| relative to the largest |y|.
fn rel_diff(x: &Array2<f32>, y: &Array2<f32>) -> f64 {
    let scale = y
        .iter()
        .fold(0f64, |m, v| m.max(v.abs() as f64))
        .max(f64::MIN_POSITIVE);
    x.iter()
        .zip(y)
        .fold(0f64, |m, (a, b)| m.max((a - b).abs() as f64))
        / scale
}

#[test]
#[ignore = "needs a CUDA device"]
fn an_allocation_larger_than_the_device_is_an_error_naming_the_sizes_and_the_device_stays_usable() {
    let gpu = Gpu::new(0).expect("device");
    let backend = CudaBackend::with_gpu(gpu.clone());
    let a = random(65, 33, 1);
    // Warm up first: loading the kernel module takes device memory once, which is not
    // what this test is about.
    let before = backend.matmul(a.view(), a.t()).unwrap();
    let (free, total) = gpu.mem_info().unwrap();
    let asked = total + (1 << 30);
    match gpu.alloc::<f32>("test", asked / 4) {
        Err(Error::OutOfMemory {
            op,
            requested,
            free: f,
            total: t,
        }) => {
            assert_eq!(op, "test");
            assert!(requested >= total, "requested {requested} of {total}");
            assert!(f <= t && t == total, "free {f} total {t}");
            let msg = Error::OutOfMemory {
                op,
                requested,
                free: f,
                total: t,
            }
            .to_string();
            assert!(
                msg.contains(&requested.to_string()) && msg.contains(&f.to_string()),
                "{msg}"
            );
        }
        other => panic!("expected OutOfMemory, got {:?}", other.map(|s| s.len())),
    }
    // Still usable: a product afterwards is right.
    let c = backend.matmul(a.view(), a.t()).unwrap();
    assert_eq!(c, before, "the product after the failed allocation differs");
    assert!(rel_diff(&c, &a.dot(&a.t())) < 1e-5);
    assert_memory_back(&gpu, free, 16 << 20);
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_failed_launch_is_an_error_on_that_call_and_does_not_poison_later_calls() {
    let gpu = Gpu::new(0).expect("device");
    let backend = CudaBackend::with_gpu(gpu.clone());
    let name = ndgpu_cuda::default_kernels()
        .into_iter()
        .find(|k| k.starts_with("transpose_"))
        .expect("a default transpose kernel");
    // 4096 threads per block is beyond every CUDA device's limit of 1024.
    let bad = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (4096, 1, 1),
        shared_mem_bytes: 0,
    };
    let x = gpu.alloc::<f32>("test", 16).unwrap();
    let mut y = gpu.alloc::<f32>("test", 16).unwrap();
    let (r, c) = (4i32, 4i32);
    // SAFETY: the launch is meant to be rejected by the driver before it runs; the
    // buffers hold 16 elements, enough for a 4×4 transpose in any case.
    let f = gpu.function(KernelFile::TRANSPOSE, name).unwrap();
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(&r).arg(&c).arg(&x).arg(&mut y);
    let err = unsafe { launch.launch(bad) };
    assert!(err.is_err(), "an invalid launch configuration must fail");
    let a = random(100, 37, 2);
    assert_eq!(backend.transpose(a.view()).unwrap(), a.t());
    assert!(gpu.synchronize().is_ok());
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_buffers_and_backends_releases_their_memory() {
    let gpu = Gpu::new(0).expect("device");
    let (free0, _) = gpu.mem_info().unwrap();
    // 40 × 8 GiB = 320 GiB, more than twice the device: only works if each is freed.
    for _ in 0..40 {
        let buf = gpu
            .alloc::<f32>("test", 2 << 30)
            .expect("8 GiB while the others were freed");
        drop(buf);
    }
    for i in 0..20 {
        let backend = common::backend();
        let a = random(512, 512, i);
        let _ = backend.gram(a.view()).unwrap();
    }
    // Freed memory stays in the device's pool for the next allocation until it is
    // given back.
    gpu.release_cached().unwrap();
    assert_memory_back(&gpu, free0, 256 << 20);
}

#[test]
#[ignore = "needs a CUDA device"]
fn threads_sharing_one_backend_get_correct_results() {
    let backend = Arc::new(common::backend());
    let cpu = CpuBackend::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let backend = backend.clone();
            let cpu = &cpu;
            s.spawn(move || {
                let mut i = 0;
                while Instant::now() < deadline && i < 40 {
                    let seed = t * 1000 + i;
                    let a = random(97 + (seed % 64) as usize, 61, seed);
                    let c = backend.matmul(a.view(), a.t()).unwrap();
                    let r = cpu.matmul(a.view(), a.t()).unwrap();
                    assert!(rel_diff(&c, &r) < 1e-5, "thread {t} iteration {i}");
                    let s_gpu = backend.reduce(ReduceOp::Sum, a.view()).unwrap() as f64;
                    let s_cpu = cpu.reduce(ReduceOp::Sum, a.view()).unwrap() as f64;
                    let bound = ndgpu_core::tolerance::sum::<f32>(a.len())
                        * a.iter().map(|v| v.abs() as f64).sum::<f64>();
                    assert!(
                        (s_gpu - s_cpu).abs() <= bound,
                        "thread {t}: {s_gpu} vs {s_cpu}"
                    );
                    let m = spd(40 + (seed % 30) as usize, seed);
                    let l = backend.cholesky(m.view()).unwrap();
                    let resid = (&l.dot(&l.t()) - &m)
                        .iter()
                        .fold(0f64, |x, v| x.max(v.abs()));
                    assert!(
                        resid < 1e-9 * m.len() as f64,
                        "thread {t}: residual {resid}"
                    );
                    i += 1;
                }
            });
        }
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn several_backends_on_one_device_from_several_threads() {
    let gpu = Gpu::new(0).expect("device");
    let a = random(300, 200, 7);
    let reference = a.dot(&a.t());
    let variants = CudaBackend::with_gpu(gpu.clone()).variants(Family::Gram);
    std::thread::scope(|s| {
        for v in variants {
            let gpu = gpu.clone();
            let (a, reference) = (&a, &reference);
            s.spawn(move || {
                let mut backend = CudaBackend::with_gpu(gpu);
                backend.set_variant(Family::Gram, v).unwrap();
                for _ in 0..10 {
                    let g = backend.gram(a.view()).unwrap();
                    assert!(rel_diff(&g, reference) < 1e-5, "variant {v}");
                }
            });
        }
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn default_variants_are_bitwise_reproducible_run_to_run() {
    let backend = common::backend();
    let a = random(777, 555, 11);
    let x = random(1 << 20, 1, 12);
    let blobs = random(20_000, 16, 13);
    let m = spd(300, 14).mapv(|v| v as f32);
    let first = (
        backend.matmul(a.view(), a.t()).unwrap(),
        backend.gram(a.view()).unwrap(),
        backend.reduce(ReduceOp::Sum, x.view()).unwrap().to_bits(),
        backend
            .reduce_axis(ReduceOp::Sum, a.view(), Axis(0))
            .unwrap(),
        backend.cholesky(m.view()).unwrap(),
        backend
            .kmeans(blobs.view(), &KMeansConfig::new(16).seed(3).max_iter(20))
            .unwrap(),
    );
    for _ in 0..10 {
        assert_eq!(backend.matmul(a.view(), a.t()).unwrap(), first.0);
        assert_eq!(backend.gram(a.view()).unwrap(), first.1);
        assert_eq!(
            backend.reduce(ReduceOp::Sum, x.view()).unwrap().to_bits(),
            first.2
        );
        assert_eq!(
            backend
                .reduce_axis(ReduceOp::Sum, a.view(), Axis(0))
                .unwrap(),
            first.3
        );
        assert_eq!(backend.cholesky(m.view()).unwrap(), first.4);
        let km = backend
            .kmeans(blobs.view(), &KMeansConfig::new(16).seed(3).max_iter(20))
            .unwrap();
        assert_eq!(km.labels, first.5.labels);
        assert_eq!(
            km.centroids, first.5.centroids,
            "k-means centroids must be bitwise equal"
        );
        assert_eq!(km.inertia.to_bits(), first.5.inertia.to_bits());
    }
}

/// k-means keeps its scratch on the runtime between calls (`Gpu::keep_scratch`): threads
/// fitting on one backend at once, some at the same shape and some not, each get the
/// result they get alone, bit for bit (a set shared by two calls, or kept for the wrong
/// shape, would mix their points); and `release_cached` gives the kept sets back.
#[test]
#[ignore = "needs a CUDA device"]
fn kmeans_scratch_is_never_shared_between_threads_and_is_given_back() {
    let gpu = Gpu::new(0).expect("device");
    let backend = Arc::new(CudaBackend::with_gpu(gpu.clone()));
    let config = KMeansConfig::new(24).seed(5).max_iter(8);
    // Loading the kernels takes device memory once: before the baseline.
    let warm = random(4_000, 16, 20);
    backend.kmeans(warm.view(), &config).unwrap();
    gpu.release_cached().unwrap();
    let (free0, _) = gpu.mem_info().unwrap();
    // Three shapes, each in two threads.
    let data: Vec<Array2<f32>> = (0..6)
        .map(|t| random(20_000 + 3_000 * (t % 3), 16, 21 + t as u64))
        .collect();
    let alone: Vec<_> = data
        .iter()
        .map(|x| backend.kmeans(x.view(), &config).unwrap())
        .collect();
    std::thread::scope(|s| {
        for (x, want) in data.iter().zip(&alone) {
            let (backend, config) = (backend.clone(), &config);
            s.spawn(move || {
                for _ in 0..8 {
                    let got = backend.kmeans(x.view(), config).unwrap();
                    assert_eq!(got.labels, want.labels);
                    assert_eq!(got.centroids, want.centroids);
                    assert_eq!(got.inertia.to_bits(), want.inertia.to_bits());
                }
            });
        }
    });
    // A fit whose kept scratch (9 bytes a point in f32: 36 MiB) is far above the slack.
    let big = random(1 << 22, 2, 30);
    backend.kmeans(big.view(), &config).unwrap();
    gpu.release_cached().unwrap();
    assert_memory_back(&gpu, free0, 8 << 20);
}

/// Empty matrices with a dimension of 2³¹ or 2⁶²: results sized by it are refused with
/// an error (never a wrapped byte count handed to the driver), and the backend goes on.
#[test]
#[ignore = "needs a CUDA device"]
fn results_no_device_holds_are_refused_and_the_backend_goes_on() {
    let backend = common::backend();
    ndgpu_conformance::assert_refuses_results_no_machine_holds(&backend);
}

/// Out of memory in the middle of a resident chain: the step that cannot allocate is an
/// error, the arrays made before it still hold their values, and once memory is given
/// back the chain goes on.
#[test]
#[ignore = "needs a CUDA device"]
fn out_of_memory_in_a_chain_leaves_the_earlier_arrays_valid() {
    let backend = common::backend();
    // More columns than rows: M·Mᵀ has full rank, so it is positive definite.
    let m = random(512, 1024, 21);
    let dm = backend.upload(m.view()).unwrap();
    let g = backend.gram_dev(&dm).unwrap();
    let g_host = backend.download(&g).unwrap();
    // Take all the memory the driver will give, in pieces from 1 GiB down to 64 KiB
    // (halving whenever a piece is refused: the allocator's granularity, not the free
    // figure, decides what fits), leaving less than one 512×512 f32.
    let mut hog = Vec::new();
    let mut take = 1usize << 30;
    while take >= 64 << 10 {
        match backend.gpu().alloc::<u8>("hog", take) {
            Ok(b) => hog.push(b),
            Err(_) => take /= 2,
        }
    }
    let err = backend.gram_dev(&dm);
    let err2 = backend.cholesky_dev(&g);
    assert!(
        matches!(err, Err(Error::OutOfMemory { .. }))
            || matches!(err2, Err(Error::OutOfMemory { .. })),
        "expected OutOfMemory once the device is full, got {:?} / {:?}",
        err.map(|m| m.dim()),
        err2.map(|f| f.order())
    );
    drop(hog);
    assert_eq!(
        backend.download(&g).unwrap(),
        g_host,
        "the earlier array changed"
    );
    let l = backend
        .cholesky_dev(&g)
        .expect("the chain goes on once memory is back");
    let llt = backend.download(l.l()).unwrap();
    let back = llt.dot(&llt.t());
    assert!(rel_diff(&back, &g_host) < 1e-4);
}

/// A resident array keeps its runtime alive: dropping the backend first is safe, and a
/// backend opened afterwards on the same device reads (and frees) the array.
#[test]
#[ignore = "needs a CUDA device"]
fn arrays_outlive_their_backend() {
    let a = random(300, 200, 22);
    let (dm, place) = {
        let backend = common::backend();
        let dm = backend.upload(a.view()).unwrap();
        let place = backend.place();
        (dm, place)
    };
    assert_eq!(dm.place(), place);
    let again = common::backend();
    assert_eq!(
        again.place(),
        place,
        "the runtime was not kept alive by the array"
    );
    assert_eq!(again.download(&dm).unwrap(), a);
    drop(again);
    drop(dm);
    // And an array dropped after every backend is gone frees cleanly.
    let orphan = common::backend().upload(a.view()).unwrap();
    drop(orphan);
}

/// Uploads and downloads of every layout, small (one plain copy) and large (the
/// pinned, chunked, multi-threaded path), come back bit for bit.
#[test]
#[ignore = "needs a CUDA device"]
fn transfers_of_every_layout_round_trip() {
    let backend = common::backend();
    for (rows, cols) in [(3, 5), (513, 1025), (4096, 1537), (1 << 22, 7)] {
        let c = random(rows, cols, 23);
        let f = Array2::from_shape_vec((rows, cols).f(), c.iter().copied().collect()).unwrap();
        let wide = random(rows, 2 * cols + 1, 24);
        let strided = wide.slice(s![.., 1..;2]);
        for (what, view) in [
            ("C order", c.view()),
            ("Fortran order", f.view()),
            ("strided", strided),
            ("transposed", c.t()),
        ] {
            let m = backend.upload(view).unwrap();
            assert_eq!(m.dim(), view.dim(), "{what} {rows}x{cols}");
            let back = backend.download(&m).unwrap();
            assert!(back.is_standard_layout());
            assert!(
                back == view,
                "{what} {rows}x{cols}: the round trip changed values"
            );
        }
    }
    // f64 through the large path too.
    let d = random(2048, 2049, 25).mapv(f64::from);
    let m = backend.upload(d.view()).unwrap();
    assert_eq!(backend.download(&m).unwrap(), d);
}

/// Pinned host arrays (`host_array`): uploads from them and downloads into them go
/// straight over the bus, small and large, from a part of one (its first rows: still
/// pinned and contiguous) too; a download into a transposed view of one goes through a
/// C-ordered copy; a pinned array outlives its backend.
#[test]
#[ignore = "needs a CUDA device"]
fn pinned_host_arrays_round_trip() {
    let backend = common::backend();
    for (rows, cols) in [(3, 5), (2048, 1031), (1 << 20, 9)] {
        let a = random(rows, cols, 26);
        let mut pinned: HostArray<f32> = backend.host_array(rows, cols).unwrap();
        assert_eq!(pinned.dim(), (rows, cols));
        assert!(pinned.view().iter().all(|&x| x == 0.0), "not zeroed");
        pinned.view_mut().assign(&a);
        let mut m = backend.alloc(rows, cols).unwrap();
        backend.upload_into(pinned.view(), &mut m).unwrap();
        let mut back: HostArray<f32> = backend.host_array(rows, cols).unwrap();
        backend.download_into(&m, back.view_mut()).unwrap();
        assert!(back.view() == a.view(), "{rows}x{cols}: pinned round trip");
        // Half of the rows: a prefix of the pinned buffer.
        let half = rows / 2;
        let mut top = backend.alloc(half, cols).unwrap();
        backend
            .upload_into(pinned.view().slice(s![..half, ..]), &mut top)
            .unwrap();
        let mut col: HostArray<f32> = backend.host_array(cols, half).unwrap();
        backend
            .download_into(&top, col.view_mut().reversed_axes())
            .unwrap();
        assert!(
            col.view().t() == a.slice(s![..half, ..]),
            "{rows}x{cols}: a part"
        );
    }
    let kept = {
        let b = common::backend();
        let mut h: HostArray<f64> = b.host_array(4, 4).unwrap();
        h.view_mut().fill(2.5);
        h
    };
    assert!(kept.view().iter().all(|&x| x == 2.5));
}
