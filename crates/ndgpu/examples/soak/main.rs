//! A soak: a randomized mix of operations (gemm, gram, transpose, reductions, Cholesky
//! and solve, LU solve, least squares, k-means, resident chains) at random sizes in
//! f32 and f64, on N threads sharing one backend, for a given time, with faults
//! injected on one thread when asked.
//!
//! ```text
//! cargo run --release -p ndgpu --example soak -- \
//!     [--backend auto] [--threads 4] [--seconds 60] [--seed N] [--check-every 4] \
//!     [--warmup 0] [--max-growth-pct 5] [--max-slowest-ratio none] [--faults 0]
//! ```
//! First every thread runs the mix for `--warmup` seconds (kernels compile into the
//! disk cache, memory pools and allocator arenas grow), then for `--seconds` more: the
//! timed run. A sample of the calls (one in `--check-every`, and every chain), in the
//! warm-up as in the timed run, is checked against the reference with the project's
//! tolerances; only the timed run's calls are timed.
//!
//! Memory: host RSS and device memory in use (on the one CUDA device the backend
//! computes on, after its pool gave back what it caches; host backends and groups of
//! devices: not reported) are read at the start, at the baseline and at the end. The
//! baseline is the end of the warm-up; with `--warmup 0`, a fifth into the run (that
//! fifth is then the memory's warm-up: thread pools, caches, allocator arenas, memory
//! pools; its calls are still timed). The run fails when host or device memory grew
//! from the baseline to the end by more than `--max-growth-pct` percent of the
//! baseline and more than [`memory::SLACK_MIB`] MiB.
//!
//! Time: per operation it prints the median and slowest call over all its sizes, and,
//! since sizes are drawn over ranges where the work differs by up to 10⁶×, the size
//! class where the slowest call is furthest above its median. A size class is one
//! element type and work (multiply-adds or elements, see [`ops::Measure`]) within a
//! factor of two. With `--max-slowest-ratio R`, the run fails when in some size class
//! of some operation the slowest call took more than R times the class's median
//! (`none`, the default: reported only).
//!
//! Faults: with `--faults N`, thread 0 makes every N-th call (warm-up included) two
//! faults instead of an operation (see [`faults`]): an allocation far beyond memory,
//! which must be refused as out of memory, and a panic in a `time` closure, which must
//! reach the caller and leave the backend computing correctly. The other threads go on
//! with their checked mix meanwhile: their failures count as any others.
//!
//! Exits 1 on any failure (a wrong result, an error, a fault not handled), memory
//! growth or slow call beyond the bounds; 2 on bad arguments.

mod faults;
mod memory;
mod ops;
mod stats;

use std::time::{Duration, Instant};

use ndgpu::{Backend, CpuBackend};
use ndgpu_conformance::data::Rng;

use memory::Reading;
use stats::{Args, SizeClass, Tally};

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
        "soak: backend {} ({}), {} threads, {} s warm-up then {} s, seed {} (replay with \
         --seed {}), checking 1 call in {}",
        backend.name(),
        backend.place(),
        args.threads,
        args.warmup,
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
    if args.faults > 0 {
        faults::silence_injected_panics();
    }
    let start = Reading::now(backend);
    let warm_until = Instant::now() + Duration::from_secs_f64(args.warmup);
    let deadline = warm_until + Duration::from_secs_f64(args.seconds);
    // The memory baseline: the end of the warm-up, or with none, a fifth into the run.
    let base_at = if args.warmup > 0.0 {
        warm_until
    } else {
        warm_until + Duration::from_secs_f64(args.seconds / 5.0)
    };
    let (tallies, base): (Vec<Tally>, Reading) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..args.threads)
            .map(|t| {
                let cpu = &cpu;
                s.spawn(move || worker(backend, cpu, args, t, (warm_until, deadline)))
            })
            .collect();
        std::thread::sleep(base_at.saturating_duration_since(Instant::now()));
        let base = Reading::now(backend);
        let tallies = workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Tally::panicked()))
            .collect();
        (tallies, base)
    });
    let elapsed = warm_until.elapsed().as_secs_f64();
    let end = Reading::now(backend);
    let total = Tally::merge(tallies);
    total.print(args.warmup, elapsed);
    let mut failures = memory::check(start, base, end, args.max_growth_pct);
    if let Some(bound) = args.max_slowest_ratio {
        failures.extend(total.slower_than(bound));
    }
    if total.failures > 0 || total.calls() == 0 {
        failures.push(format!(
            "{} failure(s) in {} calls",
            total.failures,
            total.warmup_calls + total.calls()
        ));
    }
    for f in &failures {
        println!("FAIL: {f}");
    }
    if failures.is_empty() {
        println!("ok");
        0
    } else {
        1
    }
}

/// One thread's share: random operations (and on thread 0, faults every `--faults`
/// calls) until the deadline; those started before the end of the warm-up are not
/// timed.
fn worker(
    b: &dyn Backend,
    cpu: &CpuBackend,
    args: &Args,
    t: usize,
    (warm_until, deadline): (Instant, Instant),
) -> Tally {
    let mut rng = Rng::new(args.seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut tally = Tally::default();
    for n in 1.. {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        if t == 0 && args.faults > 0 && n % args.faults == 0 {
            faults::inject(b, cpu, &mut rng, &mut tally);
            continue;
        }
        // Chains are rarer: each runs several operations, always checked.
        let op = if rng.below(20) == 0 {
            ops::OPS.len() - 1
        } else {
            rng.below(ops::OPS.len() - 1)
        };
        let check = rng.below(args.check_every) == 0;
        let case_seed = rng.below(usize::MAX) as u64;
        let mut case_rng = Rng::new(case_seed);
        let mut took = ops::Measure::default();
        let call = ops::Call {
            backend: b,
            cpu,
            op,
            check,
        };
        let (dtype, outcome) = ops::run_any(&call, &mut case_rng, &mut took);
        if now < warm_until {
            tally.warmup_calls += 1;
        } else {
            tally.record(op, SizeClass::of(dtype, &took), took.secs);
        }
        if let Err(e) = outcome {
            tally.fail(format!(
                "thread {t}: {} {dtype} (case seed {case_seed}): {e}",
                ops::OPS[op]
            ));
        }
    }
    tally
}
