//! One line of the shootout's results, and the comparisons computed across lines:
//! the ratio to the vendor and the fraction of the ceiling.

use ndgpu_core::DType;

use crate::cases::{Op, Unit};
use crate::shape::Shape;
use crate::timing::Stats;

/// The vendor backend (its default variant is one of the references every row is
/// compared with).
pub const VENDOR: &str = "cublas";
/// The peer libraries, timed by their own script: the other references.
pub const PEERS: [&str; 2] = ["torch", "numpy"];
/// The pseudo-backend of the bandwidth ceiling: a device-to-device copy of the same
/// bytes, timed in the same run.
pub const COPY: &str = "copy";

/// Whether a row was measured.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Checked correct, then timed.
    Ok,
    /// Wrong result or an error: never timed. The reason says which.
    Failed(String),
    /// Not run (too slow at the previous size, out of device memory, ...).
    Skipped(String),
}

impl Status {
    /// `ok`, `failed` or `skipped`.
    pub fn name(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed(_) => "failed",
            Status::Skipped(_) => "skipped",
        }
    }
    /// The reason of a failed or skipped row.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Status::Ok => None,
            Status::Failed(r) | Status::Skipped(r) => Some(r),
        }
    }
}

/// One measurement: an op at a shape on one backend's variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The operation.
    pub op: Op,
    /// `cpu`, `cuda`, `cublas`, or `copy` for the bandwidth ceiling.
    pub backend: String,
    /// The variant that ran, by name, also when it is the default (`d2d` for the copy,
    /// the library's version for a peer).
    pub variant: String,
    /// Whether it is its backend's default variant for the family.
    pub default_variant: bool,
    /// Element type.
    pub dtype: DType,
    /// The shape (on a ladder, that of its size: see [`Op::shape`]).
    pub shape: Shape,
    /// Whether the time includes the host↔device transfers (the ndarray-level call),
    /// or only the work on resident data.
    pub transfers: bool,
    /// Whether it was measured, and if not why.
    pub status: Status,
    /// Median seconds per run (NaN when not timed).
    pub median_s: f64,
    /// Fastest run, seconds.
    pub min_s: f64,
    /// Slowest run, seconds.
    pub max_s: f64,
    /// Timed samples.
    pub reps: usize,
    /// Runs per sample: short kernels are launched back to back between one pair of
    /// events, and a sample is their mean.
    pub batch: usize,
    /// Work per second at the median, in `unit`.
    pub rate: f64,
    /// GFLOP/s or GB/s.
    pub unit: Unit,
    /// Rate divided by the best vendor figure of the same op, size, dtype and transfer
    /// mode: the faster of the vendor backend's default variant and the peers.
    pub vs_vendor: Option<f64>,
    /// Whether this row is that best vendor figure.
    pub is_best_vendor: bool,
    /// The ceiling in `unit`: the device's peak FLOP rate for compute-bound ops, the
    /// copy's rate for bandwidth-bound ones.
    pub ceiling: Option<f64>,
    /// What the ceiling is the peak of (`FP32 FMA, CUDA cores`, `copy/d2d`, ...).
    pub ceiling_of: String,
    /// `rate / ceiling`.
    pub of_ceiling: Option<f64>,
    /// What it ran on (device name, or `host CPU`).
    pub device: String,
    /// What the variant chose to run at this shape, where it chooses by shape
    /// (`Backend::plan`: `K in 264 slices of 3984, C in 1 tile`).
    pub plan: Option<String>,
}

impl Row {
    /// A row not yet measured (status skipped with an empty reason).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        op: Op,
        backend: &str,
        variant: &str,
        default_variant: bool,
        dtype: DType,
        shape: Shape,
        transfers: bool,
        device: &str,
    ) -> Row {
        Row {
            op,
            backend: backend.to_string(),
            variant: variant.to_string(),
            default_variant,
            dtype,
            shape,
            transfers,
            status: Status::Skipped(String::new()),
            median_s: f64::NAN,
            min_s: f64::NAN,
            max_s: f64::NAN,
            reps: 0,
            batch: 0,
            rate: f64::NAN,
            unit: op.unit(),
            vs_vendor: None,
            is_best_vendor: false,
            ceiling: None,
            ceiling_of: String::new(),
            of_ceiling: None,
            device: device.to_string(),
            plan: None,
        }
    }

    /// Sets what the variant chose to run at this shape.
    pub fn planned(mut self, plan: Option<String>) -> Row {
        self.plan = plan;
        self
    }

    /// Marks it measured: `stats` of runs of `work` FLOPs or bytes each.
    pub fn timed(mut self, stats: Stats, batch: usize, work: f64) -> Row {
        self.status = Status::Ok;
        self.median_s = stats.median;
        self.min_s = stats.min;
        self.max_s = stats.max;
        self.reps = stats.reps;
        self.batch = batch;
        self.rate = if stats.median > 0.0 {
            work / stats.median * 1e-9
        } else {
            f64::NAN
        };
        self
    }

    /// Marks it failed.
    pub fn failed(mut self, reason: impl Into<String>) -> Row {
        self.status = Status::Failed(reason.into());
        self
    }

    /// Marks it skipped.
    pub fn skipped(mut self, reason: impl Into<String>) -> Row {
        self.status = Status::Skipped(reason.into());
        self
    }

    /// Sets a fixed ceiling: a peak FLOP rate and what it is the peak of.
    pub fn with_ceiling(mut self, ceiling: Option<(f64, &str)>) -> Row {
        self.ceiling = ceiling.map(|c| c.0);
        self.ceiling_of = ceiling.map_or(String::new(), |c| c.1.to_string());
        self
    }

    /// `backend/variant`, with ` +transfers` for the ndarray-level timing.
    pub fn label(&self) -> String {
        let t = if self.transfers { " +transfers" } else { "" };
        format!("{}/{}{t}", self.backend, self.variant)
    }

    /// The ladder size of its shape, if it is a ladder's ([`Shape::size`]).
    pub fn size(&self) -> Option<usize> {
        self.shape.size()
    }

    /// Whether it was measured.
    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }

    fn same_case(&self, other: &Row) -> bool {
        self.op == other.op && self.shape == other.shape && self.dtype == other.dtype
    }

    /// Whether this row is a vendor figure: the vendor's default variant or a peer.
    pub fn is_vendor(&self) -> bool {
        (self.backend == VENDOR && self.default_variant) || PEERS.contains(&self.backend.as_str())
    }
}

/// Fills in the comparisons: the ratio to the best vendor figure (the fastest of the
/// vendor's default variant and the peers, same case and transfer mode), the copy
/// ceiling of bandwidth-bound ops, and the fraction of the ceiling.
pub fn annotate(rows: &mut [Row]) {
    let snapshot: Vec<Row> = rows.to_vec();
    for (i, row) in rows.iter_mut().enumerate() {
        if !row.is_ok() {
            continue;
        }
        if row.backend != COPY {
            let best = snapshot
                .iter()
                .enumerate()
                .filter(|(_, v)| {
                    v.is_vendor() && v.is_ok() && v.transfers == row.transfers && v.same_case(row)
                })
                .max_by(|a, b| a.1.rate.total_cmp(&b.1.rate));
            row.vs_vendor = best.map(|(_, v)| row.rate / v.rate);
            row.is_best_vendor = best.is_some_and(|(j, _)| j == i);
        }
        if row.op.bandwidth_bound() && !crate::HOST_BACKENDS.contains(&row.backend.as_str()) {
            let copy = snapshot
                .iter()
                .find(|c| c.backend == COPY && c.is_ok() && !c.transfers && c.same_case(row));
            row.ceiling = copy.map(|c| c.rate);
            row.ceiling_of = copy.map_or(String::new(), |c| c.label());
        }
        row.of_ceiling = row.ceiling.map(|c| row.rate / c);
    }
}

/// A row of f32 on `device`, without transfers, not yet measured (for the tests).
#[cfg(test)]
pub(crate) fn test_row(
    op: Op,
    shape: Shape,
    backend: &str,
    variant: &str,
    default: bool,
    device: &str,
) -> Row {
    Row::new(
        op,
        backend,
        variant,
        default,
        DType::F32,
        shape,
        false,
        device,
    )
}

#[cfg(test)]
impl Row {
    /// Marks it measured at `samples` seconds, one run each, of the work of its op at
    /// its shape in f32 (for the tests).
    pub(crate) fn timed_at(self, samples: &[f64]) -> Row {
        let work = self.op.work(self.shape, 4);
        self.timed(Stats::of(samples).unwrap(), 1, work)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(op: Op, backend: &str, variant: &str, default: bool, size: usize, secs: f64) -> Row {
        test_row(op, op.shape(size), backend, variant, default, "GPU").timed_at(&[secs])
    }

    #[test]
    fn rate_is_work_over_the_median() {
        let r = ok(Op::Matmul, "cuda", "tiled", true, 1000, 0.5);
        assert_eq!(r.rate, 4.0); // 2e9 FLOPs in 0.5 s = 4 GFLOP/s
        assert_eq!(r.unit, Unit::GFlops);
        let r = ok(Op::Sum, "cuda", "tree", true, 1 << 20, 1e-3);
        assert!((r.rate - 4.194304).abs() < 1e-12); // 4 MiB in 1 ms
    }

    #[test]
    fn ratios_and_ceilings() {
        let mut rows = vec![
            ok(Op::Matmul, "cuda", "naive", false, 1000, 1.0)
                .with_ceiling(Some((20.0, "FP32 FMA, CUDA cores"))),
            ok(Op::Matmul, VENDOR, "sgemm", true, 1000, 0.25)
                .with_ceiling(Some((20.0, "FP32 FMA, CUDA cores"))),
            ok(Op::Matmul, VENDOR, "tf32", false, 1000, 0.1),
            ok(Op::Sum, "cuda", "tree", true, 1000, 2e-6),
            ok(Op::Sum, COPY, "d2d", true, 1000, 1e-6),
            test_row(Op::Sum, Op::Sum.shape(1000), VENDOR, "dot", true, "GPU").failed("wrong"),
        ];
        annotate(&mut rows);
        assert_eq!(rows[0].vs_vendor, Some(0.25));
        assert_eq!(rows[0].of_ceiling, Some(0.1));
        assert_eq!(rows[1].vs_vendor, Some(1.0));
        assert!(rows[1].is_best_vendor && !rows[0].is_best_vendor);
        assert_eq!(rows[2].vs_vendor, Some(2.5));
        // The vendor row failed: no ratio; the copy is the ceiling.
        assert_eq!(rows[3].vs_vendor, None);
        assert_eq!(rows[3].of_ceiling, Some(0.5));
        assert_eq!(rows[4].of_ceiling, Some(1.0));
        assert_eq!(rows[4].vs_vendor, None);
        assert_eq!(rows[5].of_ceiling, None);
    }

    #[test]
    fn the_best_vendor_figure_is_the_faster_of_the_vendor_and_the_peers() {
        let mut rows = vec![
            ok(Op::Matmul, "cuda", "tiled", true, 1000, 0.4),
            ok(Op::Matmul, VENDOR, "sgemm", true, 1000, 0.25),
            ok(Op::Matmul, "torch", "2.11", true, 1000, 0.2),
        ];
        annotate(&mut rows);
        assert_eq!(rows[0].vs_vendor, Some(0.5));
        assert_eq!(rows[1].vs_vendor, Some(0.8));
        assert_eq!(rows[2].vs_vendor, Some(1.0));
        assert!(rows[2].is_best_vendor && !rows[1].is_best_vendor);
    }

    #[test]
    fn transfer_rows_compare_with_transfer_rows() {
        let mut t = ok(Op::Gram, "cuda", "tiled", true, 100, 2.0);
        t.transfers = true;
        let mut v = ok(Op::Gram, VENDOR, "syrk", true, 100, 1.0);
        v.transfers = true;
        let resident = ok(Op::Gram, VENDOR, "syrk", true, 100, 0.001);
        let mut rows = vec![t, resident, v];
        annotate(&mut rows);
        assert_eq!(rows[0].vs_vendor, Some(0.5));
        assert_eq!(rows[0].label(), "cuda/tiled +transfers");
    }

    #[test]
    fn ratios_are_per_shape() {
        let at = |shape: Shape, backend: &str, secs: f64| {
            test_row(Op::Matmul, shape, backend, "v", true, "GPU").timed_at(&[secs])
        };
        let (tall, wide) = (Shape::gemm(1 << 20, 32, 128), Shape::gemm(64, 8192, 64));
        let mut rows = vec![
            at(tall, "cuda", 2.0),
            at(wide, "cuda", 1.0),
            at(tall, VENDOR, 1.0),
            at(wide, VENDOR, 4.0),
        ];
        annotate(&mut rows);
        assert_eq!(rows[0].vs_vendor, Some(0.5));
        assert_eq!(rows[1].vs_vendor, Some(4.0));
        assert_eq!(
            (rows[0].size(), rows[0].shape.label()),
            (None, "1048576×32×128".into())
        );
    }

    #[test]
    fn status_names_and_reasons() {
        let r = Row::new(
            Op::Dot,
            "cuda",
            "x",
            true,
            DType::F64,
            Shape::Vector(8),
            false,
            "GPU",
        );
        assert_eq!(r.clone().failed("bad").status.reason(), Some("bad"));
        assert_eq!(r.clone().skipped("slow").status.name(), "skipped");
        assert!(!r.is_ok());
        assert!(r.rate.is_nan());
    }
}
