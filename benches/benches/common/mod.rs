//! What the criterion targets share: one function benchmarks an op on every backend.
//!
//! With a GPU: group `<op>` times every variant of the `cuda` and `cublas` backends and
//! (for bandwidth-bound ops) the copy ceiling on resident data, through `&dyn Backend`
//! with [`Device::time`](ndgpu_core::Device::time) around the iterations (CUDA events;
//! the device is synchronized inside the timed region); group `<op>/transfers` times
//! the ndarray-level calls (upload, kernels, download) with the wall clock (none for
//! PCA, whose resident group already fits from the host array). Without
//! one: group `<op>` times the host backends (`faer` and the `cpu` reference) at small
//! sizes, resident in host memory.
//! Besides a ladder's sizes, each op runs the other shapes of the shootout's shape suite
//! (`Suite::Shapes`: rectangular GEMMs and grams, reductions of matrices whole and along
//! each axis), and QR, least squares, the SVD and PCA a tall-skinny m×32 A, at full size on a GPU, at
//! the host's small shapes without one; their benchmark ids carry the shape
//! (`1048576x32x1024`, `16x16777216@1`, `1048576x32`).
//! Every implementation is checked at each size before it is benchmarked; a wrong one
//! is left out with a message.
//!
//! `cargo bench` runs the benchmarks; `cargo test --benches` (no `--bench` argument,
//! criterion's test mode) runs each once at the smallest size and the small shapes
//! (those of the quick run on a GPU, the host's without one), which is what CI does.
//! `NDGPU_BENCH_SIZES=1024,4096` sets the ladder's sizes (the other shapes stay); a size
//! may be a shape (`NDGPU_BENCH_SIZES=4096,1048576x32`), which the ops of its kind take
//! and the others leave out (`ndgpu_shootout::Size`).

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use ndgpu_core::{Backend, Ops, Precision};
use ndgpu_shootout::cases::{Op, Target};
use ndgpu_shootout::check::Reference;
use ndgpu_shootout::data::Inputs;
use ndgpu_shootout::gpu::{traffic, DeviceInfo};
use ndgpu_shootout::host::call;
use ndgpu_shootout::resident::Cases;
use ndgpu_shootout::selection::{case_key, copy_source, precision_of, select_variant, variants_of};
use ndgpu_shootout::{Shape, Size, Suite};
use ndgpu_shootout::{HOST_BACKENDS, SEED};

/// A run slower than this is left to the shootout: criterion needs at least ten.
const MAX_RUN_S: f64 = 1.0;

/// The bench target's `main`: criterion's, benchmarking each of `ops` in turn
/// ([`bench_op`]), after dropping the arguments that only libtest knows (so that
/// `cargo test --all-targets -- --include-ignored` works).
pub fn main(ops: &[Op]) {
    reexec_without_libtest_args();
    let mut c = Criterion::default().configure_from_args();
    for &op in ops {
        bench_op(&mut c, op);
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

/// The ladder's sizes (two on a GPU: criterion times each benchmark for seconds), then
/// the shape suite's other shapes.
fn shapes(op: Op, gpu: bool) -> Vec<Shape> {
    let target = match gpu {
        true if test_mode() => Target::GpuQuick,
        true => Target::Gpu,
        false => Target::Cpu,
    };
    let ladder = op.default_sizes(target);
    let ladder = match (test_mode(), gpu) {
        (true, _) => ladder[..1].to_vec(),
        (false, false) => ladder,
        (false, true) => vec![ladder[ladder.len() / 2], ladder[ladder.len() - 1]],
    };
    let mut sizes: Vec<Size> = ladder.into_iter().map(Size::N).collect();
    if let Ok(list) = std::env::var("NDGPU_BENCH_SIZES") {
        match list.split(',').map(|s| s.parse()).collect() {
            Ok(v) => sizes = v,
            Err(e) => eprintln!("NDGPU_BENCH_SIZES={list}: {e}; using the defaults"),
        }
    }
    let others = Suite::Shapes
        .shapes(op, target)
        .into_iter()
        .chain(tall(op, target))
        .filter(|s| s.size().is_none());
    let mut shapes: Vec<Shape> = sizes.iter().filter_map(|s| s.shape(op)).collect();
    for s in others {
        if !shapes.contains(&s) {
            shapes.push(s);
        }
    }
    shapes
}

/// The tall-skinny A (m×32) that QR, least squares, the SVD and PCA run at beside the ladder's
/// squares: 2²⁰ rows on a GPU, 2¹⁶ in its test mode, 2¹² on the host.
fn tall(op: Op, target: Target) -> Option<Shape> {
    let m = match target {
        Target::Gpu => 1 << 20,
        Target::GpuQuick => 1 << 16,
        Target::Cpu => 1 << 12,
    };
    matches!(op, Op::Qr | Op::Lstsq | Op::Svd | Op::Pca).then(|| Shape::rect(m, 32))
}

/// The benchmark's parameter: the ladder's size, or the shape's ASCII spec.
fn param(shape: Shape) -> String {
    shape.size().map_or_else(|| shape.spec(), |n| n.to_string())
}

/// Work per iteration: elements = FLOPs for compute-bound ops, bytes for the rest.
fn throughput(op: Op, shape: Shape) -> Throughput {
    let work = op.work(shape, std::mem::size_of::<f32>()).round() as u64;
    if op.bandwidth_bound() {
        Throughput::Bytes(work)
    } else {
        Throughput::Elements(work)
    }
}

fn crit_group<'c>(c: &'c mut Criterion, name: &str) -> BenchmarkGroup<'c, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sampling_mode(SamplingMode::Flat);
    g
}

/// Benchmarks `op` on the GPU backends, or on the CPU without a GPU.
fn bench_op(c: &mut Criterion, op: Op) {
    let mut gpu: Vec<Box<dyn Backend>> = ["cuda", "cublas"]
        .into_iter()
        .filter_map(|name| ndgpu::backend(name).ok())
        .collect();
    match (gpu.is_empty(), DeviceInfo::query()) {
        (false, Ok(info)) => {
            resident(c, &mut gpu, op, Some(&info));
            // PCA has no resident form: its resident group already calls `Pca::fit`.
            if op != Op::Pca {
                transfers(c, &mut gpu, op);
            }
        }
        _ => {
            let mut host: Vec<Box<dyn Backend>> = HOST_BACKENDS
                .into_iter()
                .filter_map(|name| ndgpu::backend(name).ok())
                .collect();
            let names: Vec<&str> = host.iter().map(|b| b.name()).collect();
            eprintln!(
                "{op}: no GPU; benchmarking the host backends ({})",
                names.join(", ")
            );
            resident(c, &mut host, op, None);
        }
    }
}

/// Every implementation of `op` in `group`: (backend index, variant, copy ceiling).
fn implementations(
    group: &[Box<dyn Backend>],
    op: Op,
    gpu: bool,
) -> Vec<(usize, &'static str, bool)> {
    let mut v: Vec<_> = group
        .iter()
        .enumerate()
        .flat_map(|(i, b)| {
            variants_of(&**b, op)
                .into_iter()
                .map(move |n| (i, n, false))
        })
        .collect();
    if gpu && op.bandwidth_bound() {
        v.push((0, "d2d", true));
    }
    v
}

fn resident(c: &mut Criterion, group: &mut [Box<dyn Backend>], op: Op, info: Option<&DeviceInfo>) {
    let mut g = crit_group(c, op.name());
    for shape in shapes(op, info.is_some()) {
        let n = param(shape);
        let inputs = Inputs::<f32>::generate(op, shape, SEED);
        let reference = Reference::new(&inputs);
        let copies = info.map_or(1, |i| i.rotation(traffic(op, shape, 4)));
        let mut cases = Cases::new(op, shape, copies);
        g.throughput(throughput(op, shape));
        for (bi, variant, ceiling) in implementations(group, op, info.is_some()) {
            let name = match ceiling {
                true => format!("copy/{variant}"),
                false => format!("{}/{variant}", group[bi].name()),
            };
            if !ceiling {
                select_variant(&mut *group[bi], op, variant).expect("a listed variant");
            }
            let ops: &dyn Ops<f32> = &*group[bi];
            let case = match cases.get(ops, case_key(op, bi, variant, ceiling), &inputs) {
                Ok(case) => case,
                Err(why) => {
                    eprintln!("{op} {n} {name}: skipped: {why}");
                    continue;
                }
            };
            let src = copy_source(op, shape, &inputs).filter(|_| ceiling);
            let math = match ceiling {
                true => Precision::Ieee,
                false => precision_of(&*group[bi], op, variant),
            };
            let verdict = case.check(ops, &reference, math, src);
            if let Some(why) = match verdict {
                Ok(Ok(())) => None,
                Ok(Err(wrong)) => Some(format!("wrong result: {wrong}")),
                Err(e) => Some(e.to_string()),
            } {
                eprintln!("{op} {n} {name}: left out: {why}");
                continue;
            }
            match case.time_runs(ops, 1, 1) {
                Ok(t) if t <= MAX_RUN_S || test_mode() => {}
                Ok(t) => {
                    eprintln!("{op} {n} {name}: left out: {t:.1} s per run");
                    continue;
                }
                Err(e) => {
                    eprintln!("{op} {n} {name}: left out: {e}");
                    continue;
                }
            }
            g.bench_with_input(BenchmarkId::new(&name, &n), &n, |b, _| {
                b.iter_custom(|iters| {
                    let secs = case
                        .time_runs(ops, 0, iters as usize)
                        .expect("a checked run");
                    Duration::from_secs_f64(secs)
                })
            });
        }
    }
    g.finish();
}

fn transfers(c: &mut Criterion, group: &mut [Box<dyn Backend>], op: Op) {
    let mut g = crit_group(c, &format!("{}/transfers", op.name()));
    for shape in shapes(op, true) {
        let n = param(shape);
        let inputs = Inputs::<f32>::generate(op, shape, SEED);
        g.throughput(throughput(op, shape));
        for (bi, variant, _) in implementations(group, op, false) {
            let name = format!("{}/{variant}", group[bi].name());
            select_variant(&mut *group[bi], op, variant).expect("a listed variant");
            let math = precision_of(&*group[bi], op, variant);
            let ops: &dyn Ops<f32> = &*group[bi];
            let verdict = call(ops, &inputs)
                .map_err(|e| e.to_string())
                .and_then(|out| Reference::new(&inputs).check_with(&out, math));
            match verdict {
                Ok(()) => {
                    g.bench_with_input(BenchmarkId::new(&name, &n), &inputs, |b, inputs| {
                        b.iter(|| call(ops, inputs).expect("a checked call"))
                    });
                }
                Err(why) => eprintln!("{name} {n}: left out: {why}"),
            }
        }
    }
    g.finish();
}
