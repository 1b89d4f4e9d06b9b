//! # ndgpu-conformance
//!
//! Conformance cases written once and run against any [`Backend`] given as a parameter:
//! the CPU reference in CI, the CUDA and vendor backends (every variant) on the GPU
//! machine, and `ndgpu verify`.
//!
//! [`run_family`] runs every case of one family, for `f32` and `f64`, on the backend's
//! currently selected variant, and compares it with the definitions and with the CPU
//! reference (`ndgpu-cpu`):
//!
//! | family | checked |
//! |---|---|
//! | matmul | every `Trans` pair, α/β incl. β = 0 over a NaN `C`; each element within `tolerance::gemm(k)·(|α|·|A|·|B| + |β|·|C|)` of the f64 product and of the CPU's (`tolerance::gemm_tf32` for f32 on a variant of `Precision::Tf32`); `matmul`; shape errors |
//! | gram | the same bound with `|M|·|M|ᵀ`; exactly symmetric |
//! | transpose | exact, NaN and ±Inf carried through; transposing twice gives A |
//! | reduce | every op whole and along both axes, dot: sums within `tolerance::sum(n)·Σ|x|`, min/max and indices exact; NaN, ±Inf and tie cases with known answers; empty inputs; errors |
//! | cholesky | LAPACK's ratios (factor and solve) on random SPD matrices, L exactly lower triangular, only the lower triangle read, the first failing pivot, errors |
//! | trsm | all eight triangle × transpose × unit combinations, LAPACK's xTRT02 ratio, only the triangle used read, a zero diagonal as `Singular`, errors |
//! | lu | LAPACK's xGET01/xGET02 ratios on square, tall, wide and empty shapes, \|Lᵢⱼ\| ≤ 1, exactly and nearly singular matrices, `solve`, `inv`, `det`/`slogdet` within their error bound, errors |
//! | qr | LAPACK's xQRT01 ratios (factorization and orthogonality) in both modes, least squares' normal-equation ratio, rank deficiency naming the column, errors |
//! | kmeans | on blobs, the CPU's trajectory (labels, iterations, convergence, centroids) when the CPU's first assignment already separates the blobs; on any data, nearest-centroid labels (near-ties within `tolerance::distance` either way), the inertia of the labels, a history that never increases beyond rounding, `predict` agreeing; exact ties, an empty cluster, d = 0; errors |
//!
//! Shapes include 0, 1, primes and non-multiples of 32 and 64 (plus a few of 256–1000
//! with [`Sizes::Medium`]); operands come in every [`data::Layout`] (C, Fortran,
//! transposed, strided with NaN in the gaps, reversed). Inputs are drawn from a seeded
//! generator, so a failure reruns exactly. [`strategies`] offers the same shapes,
//! layouts and values to proptest suites.
//!
//! ```
//! use ndgpu_conformance::{assert_family, run_family, Sizes};
//! use ndgpu_core::Family;
//! use ndgpu_cpu::CpuBackend;
//!
//! let cpu = CpuBackend::new();
//! assert_family(&cpu, Family::Transpose, Sizes::Small);
//! let reports = run_family(&cpu, Family::Cholesky, Sizes::Small, 42);
//! assert!(reports.iter().all(|r| r.passed && r.error_ratio <= 1.0));
//! ```
#![warn(missing_docs)]

mod cases;
mod chains;
pub mod compare;
pub mod data;
pub mod par;
pub mod report;
pub mod strategies;
mod wrap;

use ndgpu_core::{Backend, DType, Family};

pub use chains::{assert_chains, run_chains};

use crate::data::Rng;
use crate::report::Recorder;

/// How large the cases of a run are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizes {
    /// Small shapes (0, 1, primes, non-multiples of 32 up to ~100): fast anywhere.
    Small,
    /// Adds shapes of a few hundred to ~1000, for GPU runs.
    Medium,
}

impl Sizes {
    /// `default`, unless the environment variable `NDGPU_TEST_SIZES` says `small` or
    /// `medium` (scripts/gpu-sanitize runs the GPU suites at small sizes, since the
    /// sanitizer slows kernels down by orders of magnitude).
    pub fn from_env(default: Sizes) -> Sizes {
        match std::env::var("NDGPU_TEST_SIZES").as_deref() {
            Ok("small") => Sizes::Small,
            Ok("medium") => Sizes::Medium,
            _ => default,
        }
    }

    /// Whether a hand-written GPU case whose dimensions are `dims` belongs in a run at
    /// these sizes. `Medium` takes every case; `Small` leaves out the cases with a
    /// dimension over [`Sizes::SMALL_MAX_DIM`]. The shapes up to that bound still
    /// reach every kernel path (several full 128-wide tiles, an edge tile in each
    /// direction, more than one k-tile), while the instrumented runs of
    /// scripts/gpu-sanitize stay inside the device machine's time limits: their cost
    /// grows with the number of shared-memory accesses, so with m·n·k for a product.
    pub fn admits(self, dims: &[usize]) -> bool {
        self == Sizes::Medium || dims.iter().all(|&d| d <= Self::SMALL_MAX_DIM)
    }

    /// The largest dimension of a hand-written case at [`Sizes::Small`].
    pub const SMALL_MAX_DIM: usize = 300;

    /// How many runs a bitwise-reproducibility test compares: 10 at `Medium`, 3 at
    /// `Small` (the sanitizer needs two runs of each kernel at most; a third keeps the
    /// comparison a comparison of several).
    pub fn repeats(self) -> usize {
        match self {
            Sizes::Small => 3,
            Sizes::Medium => 10,
        }
    }
}

/// Matrices with no elements but a dimension of 2⁶² (or 2³¹, where the result is the
/// square of it): every result sized by that dimension is beyond any machine, and the
/// backend must refuse it with an error value (`HostOutOfMemory`, `OutOfMemory` or
/// `InvalidArgument`) instead of aborting, panicking or wrapping a byte count, then go
/// on computing correctly. Panics with what went wrong.
pub fn assert_refuses_results_no_machine_holds(backend: &dyn Backend) {
    use ndarray::{array, ArrayView2, Axis};
    use ndgpu_core::{Error, KMeansConfig, MatMul, ReduceOp};
    let name = backend.name();
    let refused = |what: &str, r: ndgpu_core::Result<()>| match r {
        Err(Error::HostOutOfMemory { .. } | Error::OutOfMemory { .. })
        | Err(Error::InvalidArgument { .. }) => {}
        other => panic!("{name}: {what}: expected an out-of-memory error, got {other:?}"),
    };
    for huge in [1usize << 31, 1 << 62] {
        let tall = ArrayView2::<f32>::from_shape((huge, 0), &[]).expect("an empty view");
        let wide = ArrayView2::<f32>::from_shape((0, huge), &[]).expect("an empty view");
        refused(
            &format!("gram of {huge}×0"),
            MatMul::<f32>::gram(backend, tall).map(drop),
        );
        refused(
            &format!("{huge}×0 times 0×{huge}"),
            backend.matmul(tall, wide).map(drop),
        );
    }
    let huge = 1usize << 62;
    let tall = ArrayView2::<f32>::from_shape((huge, 0), &[]).expect("an empty view");
    refused(
        "row sums of 2⁶²×0",
        backend.reduce_axis(ReduceOp::Sum, tall, Axis(1)).map(drop),
    );
    refused(
        "k-means of 2⁶² points without coordinates",
        backend.kmeans(tall, &KMeansConfig::new(1)).map(drop),
    );
    let c = ArrayView2::<f32>::from_shape((1, 0), &[]).expect("an empty view");
    refused(
        "predict of 2⁶² points without coordinates",
        backend.predict(tall, c).map(drop),
    );
    // And the backend still computes.
    let a = array![[1.0f32, 2.0], [3.0, 4.0]];
    let p = backend
        .matmul(a.view(), a.view())
        .expect("a 2×2 product after the refusals");
    assert_eq!(
        p,
        array![[7.0f32, 10.0], [15.0, 22.0]],
        "{name}: product after the refusals"
    );
}

/// The outcome of one case.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// The family.
    pub family: Family,
    /// The backend's variant for the family when the case ran.
    pub variant: String,
    /// The dtype.
    pub dtype: DType,
    /// What was run: op, shape, layout.
    pub case: String,
    /// Measured error divided by the error-analysis tolerance (≤ 1 passes); 0 for exact
    /// checks (indices, errors), `f64::INFINITY` for a wrong error or a NaN.
    pub error_ratio: f64,
    /// Whether it passed.
    pub passed: bool,
    /// On failure, what differed.
    pub detail: String,
}

/// The failing cases among `reports`, a line each: `dtype case: detail`.
pub fn failed_cases<'a>(reports: impl IntoIterator<Item = &'a CaseReport>) -> Vec<String> {
    reports
        .into_iter()
        .filter(|r| !r.passed)
        .map(|r| format!("{} {}: {}", r.dtype, r.case, r.detail))
        .collect()
}

/// A seed for one family and dtype, so that each gets its own inputs.
fn sub_seed(seed: u64, family: Family, dtype: DType) -> u64 {
    let f = Family::ALL.iter().position(|&x| x == family).unwrap_or(0) as u64;
    let d: u64 = match dtype {
        DType::F32 => 0,
        DType::F64 => 1,
    };
    seed ^ (f + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (d + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// Runs every case of `family` for f32 and f64 against `backend` (its current variant),
/// comparing with the CPU reference and the definitions.
pub fn run_family(
    backend: &dyn Backend,
    family: Family,
    sizes: Sizes,
    seed: u64,
) -> Vec<CaseReport> {
    let (variant, precision) = (backend.variant(family), backend.precision(family));
    let mut rec = Recorder::new(family, variant, precision, DType::F32);
    let mut rng = Rng::new(sub_seed(seed, family, DType::F32));
    cases::run::<f32, _>(backend, family, sizes, &mut rng, &mut rec);
    let mut out = rec.reports;
    let mut rec = Recorder::new(family, variant, precision, DType::F64);
    let mut rng = Rng::new(sub_seed(seed, family, DType::F64));
    cases::run::<f64, _>(backend, family, sizes, &mut rng, &mut rec);
    out.extend(rec.reports);
    out
}

/// [`run_family`] for every family in [`Family::ALL`].
pub fn run_all(backend: &dyn Backend, sizes: Sizes, seed: u64) -> Vec<CaseReport> {
    Family::ALL
        .iter()
        .flat_map(|&f| run_family(backend, f, sizes, seed))
        .collect()
}

/// [`run_family`], panicking with every failing case listed.
pub fn assert_family(backend: &dyn Backend, family: Family, sizes: Sizes) {
    let failed: Vec<String> = run_family(backend, family, sizes, 0x5eed)
        .into_iter()
        .filter(|r| !r.passed)
        .map(|r| {
            format!(
                "{} {} [{}] {}: {}",
                r.family, r.dtype, r.variant, r.case, r.detail
            )
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} failing case(s):\n{}",
        failed.len(),
        failed.join("\n")
    );
}
