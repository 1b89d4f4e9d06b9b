//! The shootout's driver: resolves the options into a plan, opens the backends through
//! the facade, runs every op on the GPU backends and on the CPU, and collects the rows.

mod group;

use std::collections::HashMap;

use ndgpu_core::{Backend, BackendElement, Error, Result};

use crate::cases::{Op, Target};
use crate::gpu::DeviceInfo;
use crate::peer::Peer;
use crate::row::{annotate, Row, Status};
use crate::shape::Shape;
use crate::suite::Suite;
use crate::ShootoutOptions;

/// Seed of every case's inputs.
pub const SEED: u64 = 0x5EED_0001;
/// The backends the shootout knows.
pub const BACKENDS: [&str; 4] = ["cpu", "faer", "cuda", "cublas"];
/// The backends that compute on the host, timed by the wall clock.
pub const HOST_BACKENDS: [&str; 2] = ["faer", "cpu"];

/// Timing policy of one kind of measurement.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    /// Most timed samples.
    pub max_reps: usize,
    /// Fewest timed samples, however slow the run.
    pub min_reps: usize,
    /// Seconds of timed runs per cell, beyond which the sample count shrinks.
    pub budget_s: f64,
    /// A size whose run is predicted (from the previous size) to take longer than
    /// this is skipped.
    pub max_run_s: f64,
}

/// A measurement that did not produce a time.
pub(crate) enum Failure {
    /// The result was checked and is wrong.
    Wrong(String),
    /// The call failed.
    Error(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Error(e)
    }
}

impl Failure {
    fn reason(&self) -> String {
        match self {
            Failure::Wrong(why) => format!("wrong result: {why}"),
            Failure::Error(e) => e.to_string(),
        }
    }
    /// Marks `row`: out of memory, and a shape the variant refuses by design (an
    /// invalid argument at a shape whose small check passed: the `stripes` grams hold
    /// at most 1024 rows), are skips; anything else a failure.
    fn apply(self, row: Row) -> Row {
        match self {
            Failure::Error(e @ (Error::OutOfMemory { .. } | Error::InvalidArgument { .. })) => {
                row.skipped(e.to_string())
            }
            other => row.failed(other.reason()),
        }
    }
}

/// Predicts a run's time from the same line's previous size.
#[derive(Default)]
pub(crate) struct Pace(HashMap<String, (f64, f64)>);

impl Pace {
    /// Records that `label` did `work` in `secs`.
    pub fn record(&mut self, label: &str, work: f64, secs: f64) {
        self.0.insert(label.to_string(), (work, secs));
    }
    /// Why `label` should not run `work`, if its predicted time exceeds `limit_s`.
    pub fn too_slow(&self, label: &str, work: f64, limit_s: f64) -> Option<String> {
        let &(w, t) = self.0.get(label)?;
        let predicted = t * work / w;
        (predicted > limit_s).then(|| {
            format!(
                "too slow: about {predicted:.1} s per run predicted from the previous size \
                 (limit {limit_s} s)"
            )
        })
    }
}

/// What the options resolve to.
pub(crate) struct Context<'o> {
    pub opts: &'o ShootoutOptions,
    pub rows: Vec<Row>,
    /// The ops whose sizes left out have been noted (once per op, not per group).
    pub noted: Vec<Op>,
}

impl Context<'_> {
    /// Keeps `names` that pass the variant filter; with `keep_default`, the first (the
    /// backend's default) is kept whatever the filter says (it is the yardstick).
    pub fn select(&self, names: Vec<&'static str>, keep_default: bool) -> Vec<&'static str> {
        match &self.opts.variants {
            None => names,
            Some(want) => names
                .iter()
                .enumerate()
                .filter(|&(i, n)| (keep_default && i == 0) || want.iter().any(|w| w == n))
                .map(|(_, &n)| n)
                .collect(),
        }
    }

    /// The shapes of `op` for `target`: those of the suite, or of the sizes asked for.
    /// Sizes asked for that the op cannot take (0, fewer points than centroids, a shape
    /// of another kind: see [`crate::Size::shape`]) are left out, with a note (once).
    pub fn shapes(&mut self, op: Op, target: Target) -> Vec<Shape> {
        let Some(sizes) = &self.opts.sizes else {
            return self.opts.suite.shapes(op, target);
        };
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        for size in sizes {
            match size.shape(op) {
                Some(shape) => ok.push(shape),
                None => bad.push(size.to_string()),
            }
        }
        if !bad.is_empty() && !self.noted.contains(&op) {
            self.noted.push(op);
            eprintln!(
                "shootout: {op}: leaving out sizes {} (it takes {})",
                bad.join(", "),
                op.size_syntax()
            );
        }
        ok
    }

    /// Adds a row, and reports it on stderr (always for failures and skips, with
    /// `progress` for the rest).
    pub fn push(&mut self, row: Row) {
        let at = match row.size() {
            Some(n) => format!("n={n}"),
            None => row.shape.label(),
        };
        let head = format!("shootout: {} {at} {}", row.op, row.label());
        match &row.status {
            Status::Ok if self.opts.progress => eprintln!(
                "{head}: {} {} (median {:.4} ms, {} samples of {} runs)",
                crate::format::format_rate(row.rate),
                row.unit,
                row.median_s * 1e3,
                row.reps,
                row.batch
            ),
            Status::Ok => {}
            Status::Failed(why) => eprintln!("{head}: FAILED, not timed: {why}"),
            Status::Skipped(why) => eprintln!("{head}: skipped: {why}"),
        }
        self.rows.push(row);
    }
}

/// The sizes and the timing policy of a group of backends: on the GPU, or on the host.
pub(crate) fn target_policy(ctx: &Context<'_>, gpu: bool) -> (Target, Policy) {
    if gpu {
        (
            if ctx.opts.quick {
                Target::GpuQuick
            } else {
                Target::Gpu
            },
            Policy {
                max_reps: ctx.opts.reps.max(1),
                min_reps: 3,
                budget_s: if ctx.opts.quick { 0.25 } else { 2.0 },
                max_run_s: 5.0,
            },
        )
    } else {
        (
            Target::Cpu,
            Policy {
                // The reference is slow: a few samples are enough to see its rate.
                max_reps: ctx.opts.reps.clamp(1, 5),
                min_reps: 2,
                budget_s: if ctx.opts.quick { 0.3 } else { 1.0 },
                max_run_s: 2.0,
            },
        )
    }
}

/// A peer on `op`, at the sizes and under the timing policy of the group it stands
/// beside (PyTorch by the GPU backends, NumPy by the host ones).
fn peer_op<T: BackendElement>(ctx: &mut Context<'_>, op: Op, peer: Peer, version: &str) {
    let (target, policy) = target_policy(ctx, peer == Peer::Torch);
    let shapes = ctx.shapes(op, target);
    if shapes.is_empty() {
        return;
    }
    if peer == Peer::Torch {
        // PyTorch runs in another process on the same device: give it the memory our
        // pool keeps from the cases just run (a 65536² gram leaves gigabytes there).
        if let Err(e) = ndgpu_cuda_runtime::Gpu::shared(0).and_then(|g| g.release_cached()) {
            eprintln!("shootout: could not release the device's pooled memory: {e}");
        }
    }
    let ask = crate::peer::Ask {
        peer,
        op,
        shapes: &shapes,
        dtype: T::DTYPE,
        reps: policy.max_reps,
        budget_s: policy.budget_s,
        max_run_s: policy.max_run_s,
    };
    match crate::peer::run(&ask, version) {
        Ok(rows) => rows.into_iter().for_each(|r| ctx.push(r)),
        Err(why) => {
            let why = format!("the {} peer gave no rows: {why}", peer.title());
            eprintln!("shootout: {op}: {why}");
            missing_peer::<T>(ctx, op, peer, &why);
        }
    }
}

/// The row that says, in `op`'s table, that `peer`'s column is missing and why.
fn missing_peer<T: BackendElement>(ctx: &mut Context<'_>, op: Op, peer: Peer, why: &str) {
    let (target, _) = target_policy(ctx, peer == Peer::Torch);
    if let Some(&first) = ctx.shapes(op, target).first() {
        let device = match peer {
            Peer::Numpy => HOST,
            Peer::Torch => "GPU",
        };
        ctx.rows
            .push(peer.missing(op, first, T::DTYPE, device, why));
    }
}

/// A peer's version when the shootout should run it (`None`: it should not), or why it
/// cannot run here and how to get it (said on stderr too).
fn peer_version(peer: Peer, wanted: bool) -> Option<std::result::Result<String, String>> {
    if !wanted {
        return None;
    }
    Some(peer.probe().map_err(|why| {
        let why = format!("{why}; {}", peer.hint());
        eprintln!("shootout: no {} column: {why}", peer.title());
        why
    }))
}

/// What the CPU rows ran on.
pub const HOST: &str = "host CPU";

/// The GPU backends the default run compares.
const GPU_BACKENDS: [&str; 2] = ["cuda", "cublas"];

/// See [`crate::run_dtype`].
pub(crate) fn run<T: BackendElement>(opts: &ShootoutOptions) -> Result<Vec<Row>> {
    for b in &opts.backends {
        if !BACKENDS.contains(&b.as_str()) {
            return Err(Error::UnknownBackend {
                name: b.clone(),
                known: BACKENDS.join(", "),
            });
        }
    }
    let asked = |name: &str| opts.backends.iter().any(|b| b == name);
    let default = opts.backends.is_empty();
    let ops = if opts.ops.is_empty() {
        opts.suite.ops()
    } else {
        opts.ops.clone()
    };
    if opts.suite == Suite::Shapes {
        if opts.sizes.is_some() {
            return Err(Error::invalid(
                "shootout",
                "the shape suite has its own shapes: sizes are for the ladders",
            ));
        }
        let suite_ops = opts.suite.ops();
        if let Some(op) = ops.iter().find(|op| !suite_ops.contains(op)) {
            let names: Vec<&str> = suite_ops.iter().map(|o| o.name()).collect();
            return Err(Error::invalid(
                "shootout",
                format!(
                    "the shape suite has no {op} cases (its ops: {})",
                    names.join(", ")
                ),
            ));
        }
    }
    let mut gpu: Vec<Box<dyn Backend>> = Vec::new();
    for name in GPU_BACKENDS.into_iter().filter(|n| default || asked(n)) {
        match ndgpu::backend(name) {
            Ok(b) => gpu.push(b),
            // Without a GPU the default run is the CPU's.
            Err(e) if default => {
                if opts.progress {
                    eprintln!("shootout: no {name} ({e})");
                }
            }
            Err(e) => return Err(e),
        }
    }
    let info = match gpu.is_empty() {
        true => None,
        false => Some(DeviceInfo::query()?),
    };
    // Without a GPU the default run is the host backends'.
    let host_names: Vec<&str> = HOST_BACKENDS
        .into_iter()
        .filter(|n| asked(n) || (default && gpu.is_empty()))
        .collect();
    if !host_names.is_empty() && gpu.is_empty() && default && opts.progress {
        eprintln!("shootout: no GPU; running the host backends");
    }
    let run_cpu = !host_names.is_empty();
    let mut cpu: Vec<Box<dyn Backend>> = host_names
        .into_iter()
        .map(ndgpu::backend)
        .collect::<Result<_>>()?;
    let torch = peer_version(Peer::Torch, opts.peer && info.is_some());
    let numpy = peer_version(Peer::Numpy, opts.peer && run_cpu);
    let mut ctx = Context {
        opts,
        rows: Vec::new(),
        noted: Vec::new(),
    };
    for op in ops {
        if let Some(info) = &info {
            group::run_op::<T>(&mut ctx, &mut gpu, op, Some(info))?;
            match &torch {
                Some(Ok(version)) => peer_op::<T>(&mut ctx, op, Peer::Torch, version),
                Some(Err(why)) => missing_peer::<T>(&mut ctx, op, Peer::Torch, why),
                None => {}
            }
        }
        // The host has no device to transfer to.
        if run_cpu {
            group::run_op::<T>(&mut ctx, &mut cpu, op, None)?;
            match &numpy {
                _ if op == Op::Transfer => {}
                Some(Ok(version)) => peer_op::<T>(&mut ctx, op, Peer::Numpy, version),
                Some(Err(why)) => missing_peer::<T>(&mut ctx, op, Peer::Numpy, why),
                None => {}
            }
        }
    }
    let mut rows = ctx.rows;
    annotate(&mut rows);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pace_predicts_from_the_previous_size() {
        let mut p = Pace::default();
        assert_eq!(p.too_slow("a", 8.0, 1.0), None);
        p.record("a", 1.0, 0.2);
        assert_eq!(p.too_slow("a", 4.0, 1.0), None);
        let why = p.too_slow("a", 8.0, 1.0).unwrap();
        assert!(why.contains("1.6 s"), "{why}");
        assert_eq!(p.too_slow("b", 8.0, 1.0), None);
    }

    #[test]
    fn out_of_memory_is_a_skip() {
        let row = || {
            Row::new(
                Op::Sum,
                "cuda",
                "x",
                true,
                ndgpu_core::DType::F32,
                Op::Sum.shape(1),
                false,
                "GPU",
            )
        };
        let oom = Error::OutOfMemory {
            op: "sum",
            requested: 10,
            free: 1,
            total: 2,
        };
        assert_eq!(Failure::Error(oom).apply(row()).status.name(), "skipped");
        let refused = Error::invalid("gram", "variant stripes holds at most 1024 rows");
        let skipped = Failure::Error(refused).apply(row());
        assert_eq!(skipped.status.name(), "skipped");
        assert!(skipped
            .status
            .reason()
            .unwrap()
            .contains("at most 1024 rows"));
        let fault = Error::backend("cuda", "launching", "illegal address");
        assert_eq!(Failure::Error(fault).apply(row()).status.name(), "failed");
        let wrong = Failure::Wrong("C[0, 0] = 1".into()).apply(row());
        assert_eq!(wrong.status.reason(), Some("wrong result: C[0, 0] = 1"));
    }
}
