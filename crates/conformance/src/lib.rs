//! # ndgpu-conformance
//!
//! Conformance cases written once and run against any [`Backend`] given as a parameter:
//! the CPU reference in CI, the CUDA and vendor backends (every variant) on the GPU
//! machine, and `ndgpu verify`. (Stub: being written.)
#![warn(missing_docs)]

use ndgpu_core::{Backend, DType, Family};

/// How large the cases of a run are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizes {
    /// Small shapes (0, 1, primes, non-multiples of 32 up to ~100): fast anywhere.
    Small,
    /// Adds shapes of a few hundred to ~1000, for GPU runs.
    Medium,
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

/// Runs every case of `family` for f32 and f64 against `backend` (its current variant),
/// comparing with the CPU reference and the definitions.
pub fn run_family(
    _backend: &dyn Backend,
    _family: Family,
    _sizes: Sizes,
    _seed: u64,
) -> Vec<CaseReport> {
    Vec::new()
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
