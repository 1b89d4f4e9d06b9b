//! # ndgpu-shootout
//!
//! The backend shootout behind `ndgpu shootout` (the criterion benches in `benches/` run
//! its cases too).
//!
//! [`run`] measures every op of [`ShootoutOptions::ops`] at a ladder of sizes on every
//! variant of the hand-written `cuda` backend, on the vendor (`cublas`, every variant),
//! on PyTorch where `python3` (or `NDGPU_PYTHON`) imports a CUDA torch (NumPy beside the
//! host backends; a peer that cannot run is named at the top of the report, with the
//! reason and how to get it), and,
//! for the bandwidth-bound ops, on a device-to-device copy of the same bytes (the `copy`
//! rows, their ceiling). The `vs_vendor` ratios are to the best vendor figure: the faster
//! of `cublas`'s default variant and the peer. Compute-bound ops are rated in GFLOP/s
//! against the peak of the unit a row can use (`gpu::DeviceInfo::peak`: FP32 FMA, TF32 or
//! FP64 tensor cores). Without a GPU the host backends run at small sizes instead.
//!
//! Every case is an op at a [`Shape`]. [`Suite::Ladders`] (the default) runs each op at
//! a ladder of sizes, squares for the matrix ops ([`Op::shape`]); [`Suite::Shapes`]
//! (`ndgpu shootout --suite shapes`) runs GEMM as m×k×n and M·Mᵀ of m×k matrices at
//! squares and at the rectangular shapes of real workloads, and the reductions whole and
//! along each axis of square, tall-thin and short-wide matrices ([`Suite::shapes`]).
//! Sizes asked for ([`ShootoutOptions::sizes`]) may name shapes too: `1048576x32` is
//! the tall-skinny A of QR, least squares and the SVD, or m samples of d features for
//! PCA ([`Size`]). `docs/shootout.md` lists the ops and their peers.
//!
//! How it measures:
//! - every implementation is first checked at a shape whose dimensions are no multiple
//!   of a tile ([`Op::check_shape`]), then again at each timed shape (element-wise bounds from `ndgpu_core::tolerance`,
//!   see [`check`]); a wrong one is reported as failed, with the reason, and never timed;
//! - on resident data through `&dyn Backend` (the backends opened by name through the
//!   facade, variants chosen with `set_variant`), timed with [`Device::time`]
//!   (CUDA events on a GPU, the wall clock on the host) after a warm-up (which also
//!   compiles the kernels and creates the library handles); short runs are batched
//!   between one pair of events; small cases rotate through enough copies of their
//!   buffers to span twice the L2; in-place ops (Cholesky, LU, QR, the triangular
//!   solve, k-means) are reset from a pristine resident copy before each run, outside
//!   the timed region;
//! - with [`ShootoutOptions::transfers`], also the ndarray-level call (upload, kernels,
//!   download), with the wall clock, as the CPU is;
//! - the median of the samples (at most [`ShootoutOptions::reps`], at least 3); fewer at
//!   large sizes, so that a cell takes about 2 s of timed runs on the GPU, and a size is
//!   skipped when the previous size predicts more than 5 s per run (2 s on the CPU).
//!
//! ```no_run
//! use ndgpu_shootout::{run, write_reports, Op, ShootoutOptions};
//! let opts = ShootoutOptions {
//!     ops: vec![Op::Matmul, Op::Transpose],
//!     quick: true,
//!     ..ShootoutOptions::default()
//! };
//! let rows = run(&opts)?;
//! write_reports(&rows, &opts.out_dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod cases;
pub mod check;
pub mod data;
pub mod format;
pub mod gpu;
pub mod host;
pub mod peer;
pub mod plot;
pub mod report;
pub mod resident;
pub mod row;
mod runner;
pub mod selection;
pub mod shape;
pub mod size;
pub mod suite;
pub mod timing;

use std::path::PathBuf;

#[cfg(doc)]
use ndgpu_core::Device;
use ndgpu_core::{DType, Result};

pub use cases::{Op, Target, Unit};
pub use report::write_reports;
pub use row::{Row, Status};
pub use runner::{BACKENDS, HOST, HOST_BACKENDS, SEED};
pub use shape::Shape;
pub use size::Size;
pub use suite::Suite;

/// What [`run`] measures, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ShootoutOptions {
    /// The ops to run; empty: those of the suite ([`Suite::ops`]).
    pub ops: Vec<Op>,
    /// The cases: the size ladders, or the shape suite.
    pub suite: Suite,
    /// Sizes for every op instead of the default ladders (see [`Op::default_sizes`]): a
    /// ladder's n, or the dimensions of a shape (`1048576x32`), which the ops of that
    /// kind of shape take and the others leave out ([`Size::shape`]); ladders only (the
    /// shape suite has its own shapes).
    pub sizes: Option<Vec<Size>>,
    /// Backends among `cpu`, `cuda`, `cublas`; empty: the GPU backends when there is a
    /// GPU, else `cpu`. The CPU runs at the small CPU sizes unless `sizes` is given.
    pub backends: Vec<String>,
    /// Only these variants (by name, for any backend); the vendor's default variant
    /// always runs, as the yardstick. `None`: every variant.
    pub variants: Option<Vec<String>>,
    /// Where the caller writes the reports (see [`write_reports`]); `run` writes nothing.
    pub out_dir: PathBuf,
    /// A few small sizes on the GPU (the CPU always runs small sizes).
    pub quick: bool,
    /// Most timed samples per cell (fewer for slow runs, and at most 5 on the CPU).
    pub reps: usize,
    /// Print a line per measurement on stderr (failures and skips are always printed).
    pub progress: bool,
    /// Also time the ndarray-level calls of the GPU backends, transfers included.
    pub transfers: bool,
    /// Time the same ops through PyTorch beside the GPU backends, where `python3` (or the
    /// Python `NDGPU_PYTHON` names) can import a CUDA-enabled torch, and through NumPy
    /// beside the host backends, where it can import numpy
    /// (`crates/shootout/peer/peer.py`). Where it cannot, the rows say so
    /// ([`peer::MISSING`]) and the report names the missing column.
    pub peer: bool,
}

impl Default for ShootoutOptions {
    fn default() -> Self {
        ShootoutOptions {
            ops: Vec::new(),
            suite: Suite::Ladders,
            sizes: None,
            backends: Vec::new(),
            variants: None,
            out_dir: PathBuf::from("shootout"),
            quick: false,
            reps: 20,
            progress: true,
            transfers: false,
            peer: true,
        }
    }
}

/// Runs the shootout in f32 and returns every row,
/// with the ratios to the vendor and the fractions of the ceiling filled in.
///
/// # Errors
/// [`ndgpu_core::Error::UnknownBackend`] for a backend name that is not `cpu`, `cuda`
/// or `cublas`; [`ndgpu_core::Error::Unavailable`] when a GPU backend was asked for by
/// name and there is no usable GPU; [`ndgpu_core::Error::InvalidArgument`] for sizes
/// given to the shape suite, or an op it has no shapes of; device errors that leave the
/// device unusable. A variant that fails or is wrong is a row marked failed, not an error.
pub fn run(opts: &ShootoutOptions) -> Result<Vec<Row>> {
    run_dtype(opts, DType::F32)
}

/// [`run`] in the given precision (f64 rows are rated against the FP64 peak).
///
/// # Errors
/// As [`run`].
pub fn run_dtype(opts: &ShootoutOptions, dtype: DType) -> Result<Vec<Row>> {
    match dtype {
        DType::F32 => runner::run::<f32>(opts),
        DType::F64 => runner::run::<f64>(opts),
    }
}

#[cfg(test)]
mod tests;
