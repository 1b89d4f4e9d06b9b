//! Collecting case outcomes into [`CaseReport`]s.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ndgpu_core::{DType, Error, Family, Precision, Result};

use crate::compare::error_kind;
use crate::CaseReport;

/// The outcome of one case while it is being checked: the worst ratio so far and what
/// failed. Several checks of one case (values, symmetry, layout) fold into one verdict.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    ratio: f64,
    failures: Vec<String>,
}

impl Verdict {
    /// A verdict with nothing checked yet (passes).
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds in a measured/allowed ratio; above 1 (or NaN) fails with `detail`.
    pub fn ratio(&mut self, r: f64, detail: impl FnOnce() -> String) -> &mut Self {
        let r = if r.is_nan() { f64::INFINITY } else { r };
        self.ratio = self.ratio.max(r);
        if r > 1.0 {
            self.failures.push(detail());
        }
        self
    }

    /// Folds in the ratio `r` over `limit`: above it (or NaN) fails with
    /// `what = r > limit` (`what`: the quantity measured).
    pub fn within(&mut self, r: f64, limit: f64, what: &str) -> &mut Self {
        self.ratio(r / limit, || format!("{what} = {r:.3e} > {limit}"))
    }

    /// Folds in an exact check; false fails with `detail` (ratio ∞).
    pub fn require(&mut self, ok: bool, detail: impl FnOnce() -> String) -> &mut Self {
        if !ok {
            self.ratio = f64::INFINITY;
            self.failures.push(detail());
        }
        self
    }

    /// Unwraps a result that should be `Ok`; an error fails the verdict.
    pub fn ok<V>(&mut self, r: Result<V>) -> Option<V> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.require(false, || format!("unexpected error: {e}"));
                None
            }
        }
    }

    /// [`Verdict::ok`] of two results: both values, or `None` if either is an error
    /// (each error fails the verdict).
    pub fn both<A, B>(&mut self, a: Result<A>, b: Result<B>) -> Option<(A, B)> {
        let a = self.ok(a);
        let b = self.ok(b);
        a.zip(b)
    }

    /// Requires `r` to be an error accepted by `is_expected`; `expected` names it.
    pub fn err<V: std::fmt::Debug>(
        &mut self,
        r: Result<V>,
        expected: &str,
        is_expected: impl FnOnce(&Error) -> bool,
    ) -> &mut Self {
        match r {
            Ok(v) => {
                let shown = format!("{v:?}");
                let shown: String = shown.chars().take(120).collect();
                self.require(false, || format!("expected {expected}, got Ok({shown})"))
            }
            Err(e) => {
                let ok = is_expected(&e);
                self.require(ok, || {
                    format!("expected {expected}, got {}: {e}", error_kind(&e))
                })
            }
        }
    }

    /// Whether it passes so far.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Collects the reports of one family and dtype.
#[derive(Debug)]
pub struct Recorder {
    family: Family,
    variant: String,
    precision: Precision,
    dtype: DType,
    /// The reports so far.
    pub reports: Vec<CaseReport>,
}

impl Recorder {
    /// A recorder for `family` run on `variant`, which computes in `precision`, in
    /// `dtype`.
    pub fn new(family: Family, variant: &str, precision: Precision, dtype: DType) -> Self {
        Recorder {
            family,
            variant: variant.to_string(),
            precision,
            dtype,
            reports: Vec::new(),
        }
    }

    /// The variant the cases run on.
    pub fn variant(&self) -> &str {
        &self.variant
    }

    /// The precision of that variant, which sets the tolerance of its products.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Runs one case. A panic inside it (in the backend or in the case) is caught and
    /// reported as a failure of that case, so one bad case does not hide the others.
    pub fn case(&mut self, case: impl Into<String>, run: impl FnOnce(&mut Verdict)) {
        let mut verdict = Verdict::new();
        let outcome = catch_unwind(AssertUnwindSafe(|| run(&mut verdict)));
        if let Err(payload) = outcome {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic".into());
            verdict.require(false, || format!("panicked: {msg}"));
        }
        self.reports.push(CaseReport {
            family: self.family,
            variant: self.variant.clone(),
            dtype: self.dtype,
            case: case.into(),
            error_ratio: verdict.ratio,
            passed: verdict.passed(),
            detail: verdict.failures.join("; "),
        });
    }
}
