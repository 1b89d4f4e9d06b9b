//! One op on a group of backends (the GPU ones, or the CPU): every variant checked,
//! then timed on resident data through `&dyn Backend` ([`Device::time`]: CUDA events on
//! a GPU, the wall clock on the host), the copy ceiling beside the bandwidth-bound ops,
//! and optionally the ndarray-level calls with their transfers (wall clock).

use std::collections::HashMap;

use ndgpu_core::{Backend, BackendElement, Error, Ops, Precision, Result};

use super::{Context, Failure, Pace, Policy, HOST, SEED};
use crate::cases::Op;
use crate::check::Reference;
use crate::data::Inputs;
use crate::gpu::{traffic, DeviceInfo};
use crate::host::call;
use crate::resident::{Case, Cases};
use crate::row::{Row, COPY, VENDOR};
use crate::selection::{case_key, copy_source, precision_of, select_variant, variants_of};
use crate::shape::Shape;
use crate::timing::{batch_for, reps_for, wall, Stats};

/// A timed region shorter than this is filled with back-to-back runs, so that the
/// launch latency between the start event and the first kernel is amortised.
const MIN_REGION_S: f64 = 5e-4;

/// One implementation: a variant of a backend of the group, or the copy ceiling (run
/// by the group's first backend).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Which {
    backend: usize,
    variant: &'static str,
    default: bool,
    copy: bool,
}

impl Which {
    /// Its case in [`Cases`].
    fn case_key(&self, op: Op) -> (usize, bool, bool) {
        case_key(op, self.backend, self.variant, self.copy)
    }

    /// Its backend's name, from the group's `names`.
    fn name(&self, names: &[&'static str]) -> &'static str {
        match self.copy {
            true => COPY,
            false => names[self.backend],
        }
    }
}

/// Checks the implementation on the case, then times it: one run to estimate, then
/// samples of `batch` back-to-back runs (one when each run needs a reset), rotating
/// through the case's sets.
fn measure<T: BackendElement>(
    ops: &dyn Ops<T>,
    case: &mut Case<T>,
    reference: &Reference<T>,
    math: Precision,
    copy_src: Option<&[T]>,
    policy: Policy,
) -> Result<(Stats, usize), Failure> {
    // The first run also compiles the kernels and creates library handles.
    case.check(ops, reference, math, copy_src)?
        .map_err(Failure::Wrong)?;
    let mut k = 1;
    let mut timed = |case: &mut Case<T>, runs: usize| -> Result<f64> {
        let secs = case.time_runs(ops, k, runs)?;
        k += runs;
        Ok(secs / runs as f64)
    };
    let one = timed(case, 1)?;
    let batch = match case.needs_prepare() {
        true => 1,
        false => batch_for(one, MIN_REGION_S),
    };
    let reps = reps_for(
        one * batch as f64,
        policy.max_reps,
        policy.min_reps,
        policy.budget_s,
    );
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        samples.push(timed(case, batch)?);
    }
    let stats = Stats::of(&samples)
        .ok_or_else(|| Failure::Error(Error::invalid("shootout", "no valid time sample")))?;
    Ok((stats, batch))
}

/// Calls the ndarray-level trait method of the case once (the warm-up, whose result is
/// checked), then as many timed times as `policy` allows, with the wall clock.
fn measure_host<T: BackendElement>(
    ops: &dyn Ops<T>,
    inputs: &Inputs<T>,
    reference: &Reference<T>,
    math: Precision,
    policy: Policy,
) -> Result<Stats, Failure> {
    let (first, out) = wall(|| call(ops, inputs))?;
    reference.check_with(&out, math).map_err(Failure::Wrong)?;
    drop(out);
    let reps = reps_for(first, policy.max_reps, policy.min_reps, policy.budget_s);
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        samples.push(wall(|| call(ops, inputs))?.0);
    }
    Stats::of(&samples)
        .ok_or_else(|| Failure::Error(Error::invalid("shootout", "no valid time sample")))
}

/// The implementations of `op` in `group`, filtered by the options; the vendor's
/// default always runs (it is the yardstick).
fn implementations(ctx: &Context<'_>, group: &[Box<dyn Backend>], op: Op, gpu: bool) -> Vec<Which> {
    let mut impls = Vec::new();
    // Every backend of a group moves data through the same runtime: one transfer row.
    let group = if op == Op::Transfer {
        &group[..1]
    } else {
        group
    };
    for (i, b) in group.iter().enumerate() {
        let all = variants_of(&**b, op);
        let keep_default = b.name() == VENDOR;
        for v in ctx.select(all.clone(), keep_default) {
            impls.push(Which {
                backend: i,
                variant: v,
                default: all.first() == Some(&v),
                copy: false,
            });
        }
    }
    if gpu && op.bandwidth_bound() && !impls.is_empty() {
        impls.push(Which {
            backend: 0,
            variant: if op == Op::Transfer { "pinned" } else { "d2d" },
            default: true,
            copy: true,
        });
    }
    impls
}

/// `row` and its label, to be measured; or `None` once it has been recorded as failed
/// (wrong at the check size, `wrong`) or skipped (predicted slower than `limit_s` from
/// the previous size, given its `work`).
fn admit(
    ctx: &mut Context<'_>,
    row: Row,
    wrong: Option<&String>,
    pace: &Pace,
    (work, limit_s): (f64, f64),
) -> Option<(Row, String)> {
    let label = row.label();
    if let Some(why) = wrong {
        ctx.push(row.failed(format!("wrong result {why}")));
        return None;
    }
    if let Some(why) = pace.too_slow(&label, work, limit_s) {
        ctx.push(row.skipped(why));
        return None;
    }
    Some((row, label))
}

/// Runs `op` on `group`: the GPU backends (with `info`) or the CPU (without).
pub(super) fn run_op<T: BackendElement>(
    ctx: &mut Context<'_>,
    group: &mut [Box<dyn Backend>],
    op: Op,
    info: Option<&DeviceInfo>,
) -> Result<()> {
    let impls = implementations(ctx, group, op, info.is_some());
    let names: Vec<&'static str> = group.iter().map(|b| b.name()).collect();
    let (target, policy) = super::target_policy(ctx, info.is_some());
    let device = info.map_or(HOST.to_string(), |i| i.name.clone());
    // What each implementation computes with (the copy ceiling: plain copies).
    let math = |group: &[Box<dyn Backend>], w: Which| match w.copy {
        true => Precision::Ieee,
        false => precision_of(&*group[w.backend], op, w.variant),
    };
    let precisions: HashMap<(usize, &str, bool), Precision> = impls
        .iter()
        .map(|&w| ((w.backend, w.variant, w.copy), math(group, w)))
        .collect();
    let peak = |w: Which| {
        let math = precisions[&(w.backend, w.variant, w.copy)];
        info.filter(|_| !op.bandwidth_bound())
            .and_then(|i| i.peak(T::DTYPE, math))
    };
    let elem = std::mem::size_of::<T>();

    // Every implementation is checked at a small shape of each timed shape's kind and
    // aspect whose dimensions are no multiple of a tile (once per distinct check shape:
    // 131 for every square of the ladders), then at the timed shape itself.
    let mut wrong: HashMap<(&str, &str, Shape), String> = HashMap::new();
    let mut checked: Vec<Shape> = Vec::new();
    let mut pace = Pace::default();
    for shape in ctx.shapes(op, target) {
        let small = op.check_shape(shape);
        if !checked.contains(&small) {
            checked.push(small);
            check_small::<T>(group, op, small, &impls, &precisions)
                .into_iter()
                .for_each(|(w, why)| {
                    wrong.insert((w.name(&names), w.variant, small), why);
                });
        }
        let work = op.work(shape, elem);
        let row_for = |w: Which, transfers: bool| {
            Row::new(
                op,
                w.name(&names),
                w.variant,
                w.default,
                T::DTYPE,
                shape,
                transfers,
                &device,
            )
            .with_ceiling(peak(w).as_ref().map(|p| (p.gflops, p.of.as_str())))
        };
        let inputs = Inputs::<T>::generate(op, shape, SEED);
        let reference = Reference::new(&inputs);
        let copies = info.map_or(1, |i| i.rotation(traffic(op, shape, elem)));
        let mut cases = Cases::new(op, shape, copies);
        for &w in &impls {
            let wrong_here = wrong.get(&(w.name(&names), w.variant, small));
            let limit = policy.max_run_s;
            let Some((row, label)) =
                admit(ctx, row_for(w, false), wrong_here, &pace, (work, limit))
            else {
                continue;
            };
            select(group, op, w)?;
            let plan = op.family().zip(shape.plan_dims()).filter(|_| !w.copy);
            let row =
                row.planned(plan.and_then(|(f, dims)| group[w.backend].plan(f, T::DTYPE, &dims)));
            let ops = T::ops(&*group[w.backend]);
            let math = precisions[&(w.backend, w.variant, w.copy)];
            let case = match cases.get(ops, w.case_key(op), &inputs) {
                Ok(case) => case,
                Err(why) => {
                    ctx.push(row.skipped(why));
                    continue;
                }
            };
            let src = copy_source(op, shape, &inputs).filter(|_| w.copy);
            let row = match measure(ops, case, &reference, math, src, policy) {
                Ok((stats, batch)) => {
                    pace.record(&label, work, stats.median);
                    row.timed(stats, batch, work)
                }
                Err(f) => f.apply(row),
            };
            ctx.push(row);
        }
        drop(cases);
        if !ctx.opts.transfers || info.is_none() {
            continue;
        }
        // The chain's ndarray-level form is its calls in a row; the transfer's, `upload`
        // and `download` of new ordinary arrays (one row: its pinned form has none).
        let host_form = |w: &&Which| !w.copy && !w.case_key(op).2;
        for &w in impls.iter().filter(host_form) {
            let wrong_here = wrong.get(&(w.name(&names), w.variant, small));
            let limit = policy.max_run_s;
            let Some((row, label)) = admit(ctx, row_for(w, true), wrong_here, &pace, (work, limit))
            else {
                continue;
            };
            select(group, op, w)?;
            let ops = T::ops(&*group[w.backend]);
            let math = precisions[&(w.backend, w.variant, w.copy)];
            let row = match measure_host(ops, &inputs, &reference, math, policy) {
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

/// Checks every implementation of `op` at the small shape `small`; returns those that
/// failed, with why.
fn check_small<T: BackendElement>(
    group: &mut [Box<dyn Backend>],
    op: Op,
    small: Shape,
    impls: &[Which],
    precisions: &HashMap<(usize, &str, bool), Precision>,
) -> Vec<(Which, String)> {
    let inputs = Inputs::<T>::generate(op, small, SEED ^ 1);
    let reference = Reference::new(&inputs);
    let mut cases = Cases::new(op, small, 1);
    let mut failed = Vec::new();
    for &w in impls {
        let verdict = select(group, op, w).map_err(Failure::from).and_then(|()| {
            let ops = T::ops(&*group[w.backend]);
            let case = cases
                .get(ops, w.case_key(op), &inputs)
                .map_err(|why| Failure::Error(Error::invalid("shootout", why)))?;
            let src = copy_source(op, small, &inputs).filter(|_| w.copy);
            case.check(
                ops,
                &reference,
                precisions[&(w.backend, w.variant, w.copy)],
                src,
            )?
            .map_err(Failure::Wrong)
        });
        if let Err(f) = verdict {
            failed.push((w, format!("at {}: {}", small.at(), f.reason())));
        }
    }
    failed
}

/// Selects `w`'s variant on its backend (the copy ceiling has none).
fn select(group: &mut [Box<dyn Backend>], op: Op, w: Which) -> Result<()> {
    match w.copy {
        true => Ok(()),
        false => select_variant(&mut *group[w.backend], op, w.variant),
    }
}
