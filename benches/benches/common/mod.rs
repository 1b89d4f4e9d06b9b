//! What the criterion targets share: one function benchmarks an op on every backend.
//!
//! With a GPU: group `<op>` times every CUDA variant, every vendor variant and (for
//! bandwidth-bound ops) the copy ceiling on resident data, with CUDA events around the
//! iterations (the device is synchronized inside the timed region); group
//! `<op>/transfers` times the ndarray-level calls (upload, kernels, download) with the
//! wall clock. Without one: group `<op>` times the CPU reference at small sizes.
//! Every implementation is checked at each size before it is benchmarked; a wrong one
//! is left out with a message.
//!
//! `cargo bench` runs the benchmarks; `cargo test --benches` (no `--bench` argument,
//! criterion's test mode) runs each once at the smallest size, which is what CI does.
//! `NDGPU_BENCH_SIZES=1024,4096` overrides the sizes.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use ndgpu_benches::cases::{Op, Target};
use ndgpu_benches::check::{Math, Reference};
use ndgpu_benches::data::Inputs;
use ndgpu_benches::gpu::{
    checked_run, copy_source, traffic, DeviceCase, EventTimer, Impl, Session,
};
use ndgpu_benches::host::{call, Ops};
use ndgpu_benches::SEED;
use ndgpu_core::{Backend, Result};
use ndgpu_cpu::CpuBackend;
use ndgpu_cuda::Gpu;

/// A run slower than this is left to the shootout: criterion needs at least ten.
const MAX_RUN_S: f64 = 1.0;

/// The bench target's `main`: criterion's, after dropping the arguments that only
/// libtest knows (so that `cargo test --all-targets -- --include-ignored` works).
pub fn main(targets: &[fn(&mut Criterion)]) {
    reexec_without_libtest_args();
    let mut c = Criterion::default().configure_from_args();
    for target in targets {
        target(&mut c);
    }
    c.final_summary();
}

/// libtest options criterion rejects, and whether each takes a separate value.
const LIBTEST_ONLY: [(&str, bool); 9] = [
    ("--include-ignored", false),
    ("--test-threads", true),
    ("--skip", true),
    ("--report-time", false),
    ("--ensure-time", false),
    ("--shuffle", false),
    ("--shuffle-seed", true),
    ("--logfile", true),
    ("-Z", true),
];

fn reexec_without_libtest_args() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut kept = Vec::new();
    let mut dropped = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let name = a.split('=').next().unwrap_or(a);
        match LIBTEST_ONLY.iter().find(|(o, _)| *o == name) {
            Some(&(_, takes_value)) => {
                dropped = true;
                if takes_value && !a.contains('=') {
                    it.next();
                }
            }
            None => kept.push(a.clone()),
        }
    }
    if dropped {
        let exe = std::env::current_exe().expect("the bench binary's path");
        let status = std::process::Command::new(exe)
            .args(kept)
            .status()
            .expect("re-running the bench binary");
        std::process::exit(status.code().unwrap_or(1));
    }
}

/// Criterion's test mode: no `--bench` (as under `cargo test`), or `--test`.
fn test_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench")
}

fn sizes(op: Op, gpu: bool) -> Vec<usize> {
    if let Ok(list) = std::env::var("NDGPU_BENCH_SIZES") {
        match list.split(',').map(|s| s.trim().parse()).collect() {
            Ok(v) => return v,
            Err(e) => eprintln!("NDGPU_BENCH_SIZES={list}: {e}; using the defaults"),
        }
    }
    let ladder = op.default_sizes(match gpu {
        true if test_mode() => Target::GpuQuick,
        true => Target::Gpu,
        false => Target::Cpu,
    });
    if test_mode() {
        return ladder[..1].to_vec();
    }
    if !gpu {
        return ladder;
    }
    // Criterion times each benchmark for seconds: two sizes per op, mid and top.
    vec![ladder[ladder.len() / 2], ladder[ladder.len() - 1]]
}

/// Work per iteration: elements = FLOPs for compute-bound ops, bytes for the rest.
fn throughput(op: Op, n: usize) -> Throughput {
    let work = op.work(n, std::mem::size_of::<f32>()).round() as u64;
    if op.bandwidth_bound() {
        Throughput::Bytes(work)
    } else {
        Throughput::Elements(work)
    }
}

fn group<'c>(c: &'c mut Criterion, name: &str) -> BenchmarkGroup<'c, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sampling_mode(SamplingMode::Flat);
    g
}

/// Benchmarks `op` on the GPU backends, or on the CPU without a GPU.
pub fn bench_op(c: &mut Criterion, op: Op) {
    match Session::open() {
        Ok(mut s) => {
            resident(c, &mut s, op);
            transfers(c, &mut s, op);
        }
        Err(e) => {
            eprintln!("{op}: no GPU ({e}); benchmarking the CPU reference");
            cpu(c, op);
        }
    }
}

/// `iters` runs of `imp`, in seconds: one event pair around all of them, or around
/// each when every run needs its input reset first (outside the timed region).
fn time_runs(gpu: &Gpu, case: &mut DeviceCase<f32>, imp: Impl<'_>, iters: u64) -> Result<f64> {
    let timer = EventTimer::new(gpu)?;
    if case.needs_prepare() {
        let mut total = 0.0;
        for i in 0..iters as usize {
            case.prepare(imp, i)?;
            timer.start()?;
            case.launch(imp, i)?;
            total += timer.stop()?;
        }
        return Ok(total);
    }
    timer.start()?;
    for i in 0..iters as usize {
        case.launch(imp, i)?;
    }
    timer.stop()
}

/// Every GPU implementation of `op`: (backend, variant).
fn implementations(s: &Session, op: Op) -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<_> = s
        .cuda
        .variants(op.family())
        .into_iter()
        .map(|n| ("cuda", n))
        .collect();
    if let Ok(vendor) = &s.vendor {
        v.extend(
            vendor
                .variants(op.family())
                .into_iter()
                .map(|n| ("cublas", n)),
        );
    }
    v
}

/// Selects the variant and returns the device implementation.
fn select<'s>(s: &'s mut Session, op: Op, backend: &str, variant: &'static str) -> Impl<'s> {
    match (backend, s.vendor.as_mut()) {
        ("cublas", Ok(vendor)) => {
            vendor
                .set_variant(op.family(), variant)
                .expect("a listed variant");
            Impl::Vendor(vendor)
        }
        ("copy", _) => Impl::Copy,
        _ => Impl::Cuda(variant),
    }
}

fn resident(c: &mut Criterion, s: &mut Session, op: Op) {
    let mut g = group(c, op.name());
    let mut list = implementations(s, op);
    if op.bandwidth_bound() {
        list.push(("copy", "d2d"));
    }
    for n in sizes(op, true) {
        let inputs = Inputs::<f32>::generate(op, n, SEED);
        let reference = Reference::new(&inputs);
        let copies = s.info.rotation(traffic(op, n, 4));
        let mut case = match DeviceCase::new(&s.gpu, op, &inputs, copies) {
            Ok(case) => case,
            Err(e) => {
                eprintln!("{op} n={n}: skipped: {e}");
                continue;
            }
        };
        g.throughput(throughput(op, n));
        for &(backend, variant) in &list {
            let gpu = s.gpu.clone();
            let imp = select(s, op, backend, variant);
            let math = Math::of_variant(variant);
            let verdict = checked_run(&mut case, imp, &reference, math, copy_source(&inputs));
            if let Some(why) = match verdict {
                Ok(Ok(())) => None,
                Ok(Err(wrong)) => Some(format!("wrong result: {wrong}")),
                Err(e) => Some(e.to_string()),
            } {
                eprintln!("{op} n={n} {backend}/{variant}: left out: {why}");
                continue;
            }
            match time_runs(&gpu, &mut case, imp, 1) {
                Ok(t) if t <= MAX_RUN_S || test_mode() => {}
                Ok(t) => {
                    eprintln!("{op} n={n} {backend}/{variant}: left out: {t:.1} s per run");
                    continue;
                }
                Err(e) => {
                    eprintln!("{op} n={n} {backend}/{variant}: left out: {e}");
                    continue;
                }
            }
            let id = BenchmarkId::new(format!("{backend}/{variant}"), n);
            g.bench_with_input(id, &n, |b, _| {
                b.iter_custom(|iters| {
                    let secs = time_runs(&gpu, &mut case, imp, iters).expect("a checked run");
                    Duration::from_secs_f64(secs)
                })
            });
        }
    }
    g.finish();
}

/// Checks one ndarray-level call and benchmarks it with the wall clock.
fn host_bench<B: Ops<f32>>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    (backend_name, variant): (&str, &str),
    n: usize,
    backend: &B,
    inputs: &Inputs<f32>,
) {
    let name = format!("{backend_name}/{variant}");
    let math = Math::of_variant(variant);
    let verdict = call(backend, inputs)
        .map_err(|e| e.to_string())
        .and_then(|out| Reference::new(inputs).check_with(&out, math));
    match verdict {
        Ok(()) => {
            g.bench_with_input(BenchmarkId::new(&name, n), inputs, |b, inputs| {
                b.iter(|| call(backend, inputs).expect("a checked call"))
            });
        }
        Err(why) => eprintln!("{name} n={n}: left out: {why}"),
    }
}

fn transfers(c: &mut Criterion, s: &mut Session, op: Op) {
    let mut g = group(c, &format!("{}/transfers", op.name()));
    for n in sizes(op, true) {
        let inputs = Inputs::<f32>::generate(op, n, SEED);
        g.throughput(throughput(op, n));
        for (backend, variant) in implementations(s, op) {
            match select(s, op, backend, variant) {
                Impl::Vendor(vendor) => host_bench(&mut g, (backend, variant), n, vendor, &inputs),
                _ => {
                    s.cuda
                        .set_variant(op.family(), variant)
                        .expect("a listed variant");
                    host_bench(&mut g, (backend, variant), n, &s.cuda, &inputs);
                }
            }
        }
    }
    g.finish();
}

fn cpu(c: &mut Criterion, op: Op) {
    let cpu = CpuBackend::new();
    let mut g = group(c, op.name());
    for n in sizes(op, false) {
        let inputs = Inputs::<f32>::generate(op, n, SEED);
        g.throughput(throughput(op, n));
        host_bench(&mut g, ("cpu", cpu.variant(op.family())), n, &cpu, &inputs);
    }
    g.finish();
}
