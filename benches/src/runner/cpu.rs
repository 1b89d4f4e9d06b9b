//! Wall-clock measurement of ndarray-level calls: the CPU backend, and the GPU
//! backends with their transfers.

use ndgpu_core::{Backend, Element, Error};
use ndgpu_cpu::CpuBackend;

use super::{Context, Failure, Pace, Policy, SEED};
use crate::cases::{Op, Target};
use crate::check::{Math, Reference};
use crate::data::Inputs;
use crate::host::{call, Ops};
use crate::row::Row;
use crate::timing::{reps_for, wall, Stats};

/// What the CPU rows ran on.
pub const HOST: &str = "host CPU, 1 thread";

/// Calls `backend` on `inputs` once (the warm-up, whose result is checked), then as
/// many timed times as `policy` allows.
pub(super) fn measure_host<T: Element, B: Ops<T> + ?Sized>(
    backend: &B,
    inputs: &Inputs<T>,
    reference: &Reference<T>,
    math: Math,
    policy: Policy,
) -> Result<Stats, Failure> {
    let (first, out) = wall(|| call(backend, inputs))?;
    reference.check_with(&out, math).map_err(Failure::Wrong)?;
    drop(out);
    let reps = reps_for(first, policy.max_reps, policy.min_reps, policy.budget_s);
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        samples.push(wall(|| call(backend, inputs))?.0);
    }
    Stats::of(&samples)
        .ok_or_else(|| Failure::Error(Error::invalid("shootout", "no valid time sample")))
}

/// The CPU backend on `op` at the CPU sizes (or the sizes asked for).
pub(super) fn run_op<T: Element>(ctx: &mut Context<'_>, op: Op) {
    let cpu = CpuBackend::new();
    let variant = cpu.variant(op.family());
    let policy = Policy {
        // The reference is slow: a few samples are enough to see its rate.
        max_reps: ctx.opts.reps.clamp(1, 5),
        min_reps: 2,
        budget_s: if ctx.opts.quick { 0.3 } else { 1.0 },
        max_run_s: 2.0,
    };
    let mut pace = Pace::default();
    for n in ctx.sizes(op, Target::Cpu) {
        let work = op.work(n, std::mem::size_of::<T>());
        let row = Row::new(op, cpu.name(), variant, true, T::DTYPE, n, false, HOST);
        let label = row.label();
        if let Some(why) = pace.too_slow(&label, work, policy.max_run_s) {
            ctx.push(row.skipped(why));
            continue;
        }
        let inputs = Inputs::<T>::generate(op, n, SEED);
        let reference = Reference::new(&inputs);
        let row = match measure_host(&cpu, &inputs, &reference, Math::Ieee, policy) {
            Ok(stats) => {
                pace.record(&label, work, stats.median);
                row.timed(stats, 1, work)
            }
            Err(f) => f.apply(row),
        };
        ctx.push(row);
    }
}
