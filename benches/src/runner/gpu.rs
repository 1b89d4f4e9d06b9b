//! The GPU backends on one op: every CUDA variant, the vendor's variants and the copy
//! ceiling on resident data (CUDA events), then optionally the ndarray-level calls
//! with transfers (wall clock).

use std::collections::HashMap;

use ndgpu_core::{Backend, Error, Result};
use ndgpu_cublas::BlasElement;
use ndgpu_cuda::Gpu;

use super::cpu::measure_host;
use super::{Context, Failure, Pace, Policy, SEED};
use crate::cases::{Op, Target};
use crate::check::{Math, Reference};
use crate::data::Inputs;
use crate::gpu::{checked_run, copy_source, traffic, DeviceCase, EventTimer, Impl, Ran, Session};
use crate::row::{Row, COPY, VENDOR};
use crate::timing::{batch_for, reps_for, Stats};

/// A timed region shorter than this is filled with back-to-back runs, so that the
/// launch latency between the start event and the first kernel is amortised.
const MIN_REGION_S: f64 = 5e-4;

/// Which implementation, by name (resolved into an [`Impl`] when it runs).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Which {
    Cuda(&'static str),
    Vendor(&'static str, bool),
    Copy,
}

impl Which {
    fn backend(self) -> &'static str {
        match self {
            Which::Cuda(_) => "cuda",
            Which::Vendor(..) => VENDOR,
            Which::Copy => COPY,
        }
    }
    fn variant(self) -> &'static str {
        match self {
            Which::Cuda(v) | Which::Vendor(v, _) => v,
            Which::Copy => "d2d",
        }
    }
    fn is_default(self, cuda_default: &str) -> bool {
        match self {
            Which::Cuda(v) => v == cuda_default,
            Which::Vendor(_, d) => d,
            Which::Copy => true,
        }
    }
}

/// Selects `w`'s variant on its backend.
fn select(s: &mut Session, op: Op, w: Which) -> Result<()> {
    match (w, s.vendor.as_mut()) {
        (Which::Cuda(v), _) => s.cuda.set_variant(op.family(), v),
        (Which::Vendor(v, _), Ok(vendor)) => vendor.set_variant(op.family(), v),
        _ => Ok(()),
    }
}

/// The device implementation of `w` (after [`select`]).
fn imp(s: &Session, w: Which) -> Impl<'_> {
    match (w, s.vendor.as_ref()) {
        (Which::Cuda(v), _) => Impl::Cuda(v),
        (Which::Vendor(..), Ok(vendor)) => Impl::Vendor(vendor),
        _ => Impl::Copy,
    }
}

/// One checked run of `imp` on set 0 (see [`checked_run`]).
fn run_checked<T: BlasElement>(
    case: &mut DeviceCase<T>,
    imp: Impl<'_>,
    reference: &Reference<T>,
    math: Math,
    copy_src: Option<&[T]>,
) -> Result<(), Failure> {
    checked_run(case, imp, reference, math, copy_src)?.map_err(Failure::Wrong)
}

/// Checks `imp` on the case, then times it with events: one run to estimate, then
/// samples of `batch` back-to-back runs (one when each run needs a reset), rotating
/// through the case's buffer sets.
fn measure<T: BlasElement>(
    gpu: &Gpu,
    case: &mut DeviceCase<T>,
    imp: Impl<'_>,
    reference: &Reference<T>,
    math: Math,
    copy_src: Option<&[T]>,
    policy: Policy,
) -> Result<(Stats, usize), Failure> {
    // The first run also compiles the kernels and creates library handles.
    run_checked(case, imp, reference, math, copy_src)?;
    let timer = EventTimer::new(gpu)?;
    let mut k = 1;
    let timed = |case: &mut DeviceCase<T>, runs: usize, k: &mut usize| -> Result<f64> {
        if runs == 1 {
            case.prepare(imp, *k)?;
        }
        timer.start()?;
        for _ in 0..runs {
            let _: Ran<T> = case.launch(imp, *k)?;
            *k += 1;
        }
        Ok(timer.stop()? / runs as f64)
    };
    let one = timed(case, 1, &mut k)?;
    let batch = if case.needs_prepare() {
        1
    } else {
        batch_for(one, MIN_REGION_S)
    };
    let reps = reps_for(
        one * batch as f64,
        policy.max_reps,
        policy.min_reps,
        policy.budget_s,
    );
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        samples.push(timed(case, batch, &mut k)?);
    }
    let stats = Stats::of(&samples)
        .ok_or_else(|| Failure::Error(Error::invalid("shootout", "no valid time sample")))?;
    Ok((stats, batch))
}

/// Runs `op` on the GPU backends.
pub(super) fn run_op<T: BlasElement>(
    ctx: &mut Context<'_>,
    s: &mut Session,
    op: Op,
    cuda: bool,
    vendor: bool,
) -> Result<()> {
    let family = op.family();
    let cuda_all = s.cuda.variants(family);
    let cuda_default = cuda_all.first().copied().unwrap_or("");
    let mut impls: Vec<Which> = Vec::new();
    if cuda {
        impls.extend(
            ctx.select(cuda_all.clone(), false)
                .into_iter()
                .map(Which::Cuda),
        );
    }
    match (&s.vendor, vendor) {
        (Ok(v), true) => {
            let names = ctx.select(v.variants(family), true);
            impls.extend(
                names
                    .into_iter()
                    .enumerate()
                    .map(|(i, n)| Which::Vendor(n, i == 0)),
            );
        }
        (Err(why), true) if ctx.opts.progress => eprintln!("shootout: no {VENDOR}: {why}"),
        _ => {}
    }
    if op.bandwidth_bound() && !impls.is_empty() {
        impls.push(Which::Copy);
    }
    let target = if ctx.opts.quick {
        Target::GpuQuick
    } else {
        Target::Gpu
    };
    let policy = Policy {
        max_reps: ctx.opts.reps.max(1),
        min_reps: 3,
        // With these, the default ladder of every op took about 2 minutes on an H200
        // (1.5 with a 1 s budget): well within the 8 minutes it may take.
        budget_s: if ctx.opts.quick { 0.25 } else { 2.0 },
        max_run_s: 5.0,
    };
    let device = s.info.name.clone();
    let peak = (!op.bandwidth_bound()).then(|| s.info.peak_gflops(T::DTYPE));
    let elem = std::mem::size_of::<T>();

    // Every implementation is checked once at a size that is no multiple of a tile.
    let mut wrong: HashMap<(&str, &str), String> = HashMap::new();
    {
        let n = op.check_size();
        let inputs = Inputs::<T>::generate(op, n, SEED ^ 1);
        let reference = Reference::new(&inputs);
        let mut case = DeviceCase::new(&s.gpu, op, &inputs, 1)?;
        for &w in &impls {
            select(s, op, w)?;
            let math = Math::of_variant(w.variant());
            let src = copy_source(&inputs);
            if let Err(f) = run_checked(&mut case, imp(s, w), &reference, math, src) {
                wrong.insert(
                    (w.backend(), w.variant()),
                    format!("at n = {n}: {}", f.reason()),
                );
            }
        }
    }

    let mut pace = Pace::default();
    for n in ctx.sizes(op, target) {
        let work = op.work(n, elem);
        let row_for = |w: Which, transfers: bool| {
            let d = w.is_default(cuda_default);
            Row::new(
                op,
                w.backend(),
                w.variant(),
                d,
                T::DTYPE,
                n,
                transfers,
                &device,
            )
            .with_ceiling(peak)
        };
        let inputs = Inputs::<T>::generate(op, n, SEED);
        let reference = Reference::new(&inputs);
        let copies = s.info.rotation(traffic(op, n, elem));
        let mut case = match DeviceCase::new(&s.gpu, op, &inputs, copies) {
            Ok(c) => Some(c),
            Err(e) => {
                let why = format!("the inputs do not fit: {e}");
                impls
                    .iter()
                    .for_each(|&w| ctx.push(row_for(w, false).skipped(why.clone())));
                None
            }
        };
        if let Some(c) = case.as_mut() {
            for &w in &impls {
                let row = row_for(w, false);
                let label = row.label();
                if let Some(why) = wrong.get(&(w.backend(), w.variant())) {
                    ctx.push(row.failed(format!("wrong result {why}")));
                    continue;
                }
                if let Some(why) = pace.too_slow(&label, work, policy.max_run_s) {
                    ctx.push(row.skipped(why));
                    continue;
                }
                select(s, op, w)?;
                let (src, math) = (copy_source(&inputs), Math::of_variant(w.variant()));
                let row = match measure(&s.gpu, c, imp(s, w), &reference, math, src, policy) {
                    Ok((stats, batch)) => {
                        pace.record(&label, work, stats.median);
                        row.timed(stats, batch, work)
                    }
                    Err(f) => f.apply(row),
                };
                ctx.push(row);
            }
        }
        drop(case);
        if !ctx.opts.transfers {
            continue;
        }
        for &w in impls.iter().filter(|w| !matches!(w, Which::Copy)) {
            let row = row_for(w, true);
            let label = row.label();
            if let Some(why) = wrong.get(&(w.backend(), w.variant())) {
                ctx.push(row.failed(format!("wrong result {why}")));
                continue;
            }
            if let Some(why) = pace.too_slow(&label, work, policy.max_run_s) {
                ctx.push(row.skipped(why));
                continue;
            }
            select(s, op, w)?;
            let math = Math::of_variant(w.variant());
            let measured = match imp(s, w) {
                Impl::Vendor(vb) => measure_host(vb, &inputs, &reference, math, policy),
                _ => measure_host(&s.cuda, &inputs, &reference, math, policy),
            };
            let row = match measured {
                Ok(stats) => {
                    pace.record(&label, work, stats.median);
                    row.timed(stats, 1, work)
                }
                Err(f) => f.apply(row),
            };
            ctx.push(row);
        }
    }
    Ok(())
}
