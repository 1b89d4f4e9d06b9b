//! The concurrency contract (docs/concurrency.md): a backend, its resident arrays and
//! factors are `Send + Sync`; threads sharing one backend (behind an `Arc`) each run
//! resident chains on their own arrays, each result checked; and a panic, in a user's
//! closure that the backend runs or on a thread holding a clone of the backend, leaves
//! the backend usable. The GPU versions run on a GPU machine with `--include-ignored`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use ndgpu::ndarray::Array2;
use ndgpu::prelude::*;
use ndgpu::{backend, CholeskyFactor, HostArray, Indices, LuFactor, Matrix, QrFactor, ReduceOp};
use ndgpu_conformance::{failed_cases, run_chains, Sizes};

/// Compiles only for types that may cross and be shared between threads.
fn send_sync<T: Send + Sync>() {}

#[test]
fn backends_arrays_and_factors_are_send_and_sync() {
    send_sync::<Box<dyn Backend>>();
    send_sync::<Arc<Box<dyn Backend>>>();
    send_sync::<Matrix<f32>>();
    send_sync::<Matrix<f64>>();
    send_sync::<Indices>();
    send_sync::<CholeskyFactor<f64>>();
    send_sync::<LuFactor<f32>>();
    send_sync::<QrFactor<f64>>();
    send_sync::<HostArray<f32>>();
}

/// `threads` threads share `name`'s backend; each runs the resident chains (products
/// to a solve, k-means to predict, f32 and f64) on arrays of its own, with a seed of
/// its own, and every step is checked against the reference.
fn threads_share_one_backend(name: &str, threads: u64) {
    let b: Arc<Box<dyn Backend>> = Arc::new(backend(name).expect("the backend opens"));
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let b = Arc::clone(&b);
            std::thread::spawn(move || {
                let reports = run_chains(b.as_ref().as_ref(), Sizes::Small, 0x7EAD + t);
                failed_cases(&reports)
            })
        })
        .collect();
    let failed: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("no worker panics"))
        .collect();
    assert!(failed.is_empty(), "{name}: {}", failed.join("\n"));
}

#[test]
fn eight_threads_share_one_faer_and_one_cpu_backend() {
    std::thread::scope(|s| {
        s.spawn(|| threads_share_one_backend("faer", 8));
        s.spawn(|| threads_share_one_backend("cpu", 8));
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn sixteen_threads_share_one_cuda_and_one_cublas_backend() {
    for name in ["cuda", "cublas"] {
        threads_share_one_backend(name, 16);
    }
}

/// A 3×3 product on `b`, checked exactly (small integers).
fn still_works(b: &dyn Backend) {
    let a = Array2::from_shape_fn((3, 3), |(i, j)| (i + 2 * j) as f64);
    let got = b
        .matmul(a.view(), a.view())
        .expect("the backend still computes");
    assert_eq!(got, a.dot(&a));
    let d = b.upload(a.view()).unwrap();
    let total: f64 = b.reduce_dev(ReduceOp::Sum, &d).unwrap();
    assert_eq!(total, a.sum());
    b.synchronize().unwrap();
}

/// The one API that runs a user's closure is `Device::time`; no backend holds a lock
/// while it runs (and every lock a backend takes recovers from poisoning). A panic in
/// that closure, caught, then a panic on a thread holding a clone of the backend with
/// a resident array of its own: the backend works afterwards, on this thread and others.
fn panics_leave_the_backend_usable(name: &str) {
    let b: Arc<Box<dyn Backend>> = Arc::new(backend(name).expect("the backend opens"));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        b.time(&mut || {
            let a = Array2::<f32>::ones((4, 4));
            b.matmul(a.view(), a.view())?;
            panic!("a user's closure panics");
        })
    }));
    assert!(caught.is_err());
    still_works(b.as_ref().as_ref());
    // The timing helper itself still times.
    let secs = b.time(&mut || {
        b.matmul(Array2::<f64>::eye(2).view(), Array2::<f64>::eye(2).view())
            .map(drop)
    });
    assert!(secs.expect("timing works") >= 0.0);

    let held = Arc::clone(&b);
    let panicked = std::thread::spawn(move || {
        let mine = held.upload(Array2::<f64>::ones((5, 5)).view()).unwrap();
        let _square = held.matmul_dev(&mine, &mine).unwrap();
        panic!("a thread holding the backend panics");
    })
    .join();
    assert!(panicked.is_err());
    let others: Vec<_> = (0..4)
        .map(|_| {
            let b = Arc::clone(&b);
            std::thread::spawn(move || still_works(b.as_ref().as_ref()))
        })
        .collect();
    for o in others {
        o.join().expect("the backend works on other threads");
    }
    still_works(b.as_ref().as_ref());
}

#[test]
fn a_panic_leaves_the_cpu_backends_usable() {
    for name in ["cpu", "faer"] {
        panics_leave_the_backend_usable(name);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_panic_leaves_the_gpu_backends_usable() {
    for name in ["cuda", "cublas"] {
        panics_leave_the_backend_usable(name);
    }
}
