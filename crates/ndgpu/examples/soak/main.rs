//! A soak: a randomized mix of operations (gemm, gram, transpose, reductions, Cholesky
//! and solve, LU solve, least squares, k-means, resident chains) at random sizes in
//! f32 and f64, on N threads sharing one backend, for a given time.
//!
//! ```text
//! cargo run --release -p ndgpu --example soak -- \
//!     [--backend auto] [--threads 4] [--seconds 60] [--seed N] [--check-every 4] \
//!     [--max-rss-growth-mb 64]
//! ```
//! A sample of the calls (one in `--check-every`, and every chain) is checked against
//! the reference with the project's tolerances. It prints the operations run, the
//! failures, host RSS at the start, after the first fifth and at the end, device memory
//! in use where the backend computes on one CUDA device, and per operation the median
//! and slowest call. Exits 1 on any failure, or when RSS grew by more than
//! `--max-rss-growth-mb` from the first fifth to the end (the first fifth is warm-up:
//! caches, thread pools, allocator arenas); 2 on bad arguments.

mod ops;
mod stats;

use std::time::{Duration, Instant};

use ndgpu::{Backend, CpuBackend, Place};
use ndgpu_conformance::data::Rng;

use stats::{Args, Tally};

fn main() {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("soak: {e}\n{}", stats::USAGE);
            std::process::exit(2);
        }
    };
    let backend = match ndgpu::backend(&args.backend) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("soak: cannot open backend '{}': {e}", args.backend);
            std::process::exit(2);
        }
    };
    println!(
        "soak: backend {} ({}), {} threads, {} s, seed {} (replay with --seed {}), \
         checking 1 call in {}",
        backend.name(),
        backend.place(),
        args.threads,
        args.seconds,
        args.seed,
        args.seed,
        args.check_every
    );
    let code = soak(backend.as_ref(), &args);
    std::process::exit(code);
}

/// Runs the soak on `backend`; the process's exit status.
fn soak(backend: &dyn Backend, args: &Args) -> i32 {
    let cpu = CpuBackend::new();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(args.seconds);
    let rss_start = stats::rss_kib();
    let dev_start = device_used(backend);
    let mut rss_fifth = None;
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..args.threads)
            .map(|t| {
                let cpu = &cpu;
                s.spawn(move || worker(backend, cpu, args, t as u64, deadline))
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(args.seconds / 5.0));
        rss_fifth = stats::rss_kib();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Tally::panicked()))
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let rss_end = stats::rss_kib();
    let dev_end = device_used(backend);
    let total = Tally::merge(tallies);
    total.print(elapsed);
    stats::print_memory("host RSS", rss_start, rss_fifth, rss_end);
    match (dev_start, dev_end) {
        (Some(a), Some(b)) => println!(
            "device memory in use: {} MiB at the start, {} MiB at the end",
            a >> 20,
            b >> 20
        ),
        _ => println!("device memory: not reported by this backend"),
    }
    let mut code = 0;
    if total.failures > 0 || total.calls() == 0 {
        println!(
            "FAIL: {} failure(s) in {} calls",
            total.failures,
            total.calls()
        );
        code = 1;
    }
    if let (Some(fifth), Some(end)) = (rss_fifth, rss_end) {
        let growth = end.saturating_sub(fifth) / 1024;
        if growth > args.max_rss_growth_mb {
            println!(
                "FAIL: RSS grew by {growth} MiB after the first fifth (bound {} MiB)",
                args.max_rss_growth_mb
            );
            code = 1;
        }
    }
    if code == 0 {
        println!("ok");
    }
    code
}

/// One thread's share: random operations until `deadline`.
fn worker(b: &dyn Backend, cpu: &CpuBackend, args: &Args, t: u64, deadline: Instant) -> Tally {
    let mut rng = Rng::new(args.seed ^ (t + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut tally = Tally::default();
    while Instant::now() < deadline {
        // Chains are rarer: each runs several operations, always checked.
        let op = if rng.below(20) == 0 {
            ops::OPS.len() - 1
        } else {
            rng.below(ops::OPS.len() - 1)
        };
        let check = rng.below(args.check_every) == 0;
        let case_seed = rng.below(usize::MAX) as u64;
        let mut case_rng = Rng::new(case_seed);
        let mut took = 0.0;
        let call = ops::Call {
            backend: b,
            cpu,
            op,
            check,
        };
        let (dtype, outcome) = ops::run_any(&call, &mut case_rng, &mut took);
        tally.record(op, took);
        if let Err(e) = outcome {
            tally.fail(format!(
                "thread {t}: {} {dtype} (case seed {case_seed}): {e}",
                ops::OPS[op]
            ));
        }
    }
    tally
}

/// Bytes of device memory in use, where the backend computes on one CUDA device.
fn device_used(b: &dyn Backend) -> Option<usize> {
    match b.place() {
        Place::Cuda { device, .. } => {
            let (free, total) = ndgpu_cuda_runtime::Gpu::shared(device)
                .and_then(|g| g.mem_info())
                .ok()?;
            Some(total - free)
        }
        _ => None,
    }
}
