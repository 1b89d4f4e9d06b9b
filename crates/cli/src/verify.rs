//! `ndgpu verify`: every family of every available backend (each variant with
//! `--all-variants`) through the conformance cases, one table row per
//! (backend, variant, family, dtype). Unavailable backends are listed with the
//! reason; any failing case makes the exit code non-zero.

use ndgpu::{Backend, DType, Family};
use ndgpu_conformance::{run_family, CaseReport, Sizes};
use serde_json::{json, Value};

use crate::args::{SizesArg, VerifyArgs};
use crate::error::{emit, Failure, Result};

struct Row {
    backend: &'static str,
    variant: String,
    family: Family,
    dtype: String,
    cases: usize,
    passed: usize,
    worst: f64,
}

impl Row {
    fn json(&self) -> Value {
        json!({
            "backend": self.backend, "variant": self.variant, "family": self.family.name(),
            "dtype": self.dtype, "cases": self.cases, "passed": self.passed,
            // JSON has no infinity: a NaN or a wrong error is reported as null.
            "worst_ratio": if self.worst.is_finite() { json!(self.worst) } else { Value::Null },
        })
    }

    fn text(&self) -> String {
        format!(
            "{:<8} {:<24} {:<10} {:<5} {:>6} {:>6}  {}\n",
            self.backend,
            self.variant,
            self.family.name(),
            self.dtype,
            self.cases,
            self.passed,
            ratio(self.worst)
        )
    }
}

fn ratio(r: f64) -> String {
    if r == 0.0 {
        "0".into()
    } else if !r.is_finite() {
        "inf".into()
    } else if r >= 0.01 {
        format!("{r:.3}")
    } else {
        format!("{r:.1e}")
    }
}

pub fn verify(args: &VerifyArgs) -> Result<()> {
    let names: Vec<String> = if args.backends.is_empty() {
        ndgpu::compiled_in().into_iter().map(String::from).collect()
    } else {
        args.backends.clone()
    };
    let sizes = match args.sizes {
        SizesArg::Small => Sizes::Small,
        SizesArg::Medium => Sizes::Medium,
    };
    // Open everything first, so that a misspelt name fails before any work.
    let mut backends: Vec<Box<dyn Backend>> = Vec::new();
    let mut unavailable: Vec<(String, String)> = Vec::new();
    for name in &names {
        match ndgpu::backend(name) {
            Ok(b) if backends.iter().any(|o| o.name() == b.name()) => {}
            Ok(b) => backends.push(b),
            Err(ndgpu::Error::Unavailable { backend, reason }) => {
                unavailable.push((backend, reason))
            }
            Err(e) => return Err(e.into()),
        }
    }

    // Nothing can run: the error alone, no empty table before it.
    if backends.is_empty() {
        let reasons: Vec<String> = unavailable
            .iter()
            .map(|(name, reason)| format!("{name}: {reason}"))
            .collect();
        let asked = if args.backends.is_empty() {
            "no backend can run here"
        } else {
            "none of the backends asked for can run here"
        };
        return Err(Failure::failed(format!("{asked} ({})", reasons.join("; "))));
    }

    let mut out = String::new();
    for (name, reason) in &unavailable {
        out.push_str(&format!("{name}: unavailable, skipped: {reason}\n"));
    }
    if !args.json {
        out.push_str(&format!(
            "{:<8} {:<24} {:<10} {:<5} {:>6} {:>6}  worst error/tolerance\n",
            "backend", "variant", "family", "dtype", "cases", "passed"
        ));
        emit(&out)?;
    }

    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for backend in &mut backends {
        for family in Family::ALL {
            let variants = if args.all_variants {
                backend.variants(family)
            } else {
                vec![backend.variant(family)]
            };
            for variant in variants {
                backend.set_variant(family, variant)?;
                let reports = run_family(&**backend, family, sizes, args.seed);
                for row in summarize(backend.name(), variant, family, &reports) {
                    if !args.json {
                        emit(&row.text())?;
                    }
                    rows.push(row);
                }
                failures.extend(reports.iter().filter(|r| !r.passed).map(|r| {
                    format!(
                        "{} {} {} {} {}: {}",
                        backend.name(),
                        r.variant,
                        r.family,
                        r.dtype,
                        r.case,
                        r.detail
                    )
                }));
            }
        }
    }

    let cases: usize = rows.iter().map(|r| r.cases).sum();
    let empty: Vec<String> = rows
        .iter()
        .filter(|r| r.cases == 0)
        .map(|r| format!("{} {} {}", r.backend, r.variant, r.family))
        .collect();
    if args.json {
        let doc = json!({
            "seed": args.seed,
            "sizes": match sizes { Sizes::Small => "small", Sizes::Medium => "medium" },
            "rows": rows.iter().map(Row::json).collect::<Vec<_>>(),
            "unavailable": unavailable.iter().map(|(n, r)| json!({"backend": n, "reason": r})).collect::<Vec<_>>(),
            "failures": failures,
            "passed": failures.is_empty() && empty.is_empty() && !rows.is_empty(),
        });
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        ))?;
    } else if !failures.is_empty() {
        let mut text = format!("\n{} failing case(s):\n", failures.len());
        for f in &failures {
            text.push_str(&format!("  {f}\n"));
        }
        emit(&text)?;
    } else if !rows.is_empty() && empty.is_empty() {
        emit(&format!("\nall {cases} cases passed\n"))?;
    }

    if !failures.is_empty() {
        return Err(Failure::failed(format!(
            "verification failed: {} of {cases} case(s) failed",
            failures.len()
        )));
    }
    if !empty.is_empty() {
        return Err(Failure::failed(format!(
            "no conformance cases ran for: {}",
            empty.join(", ")
        )));
    }
    if backends.is_empty() {
        return Err(Failure::failed("no backend could run here"));
    }
    if !args.backends.is_empty() {
        if let Some((name, reason)) = unavailable.first() {
            return Err(Failure::failed(format!(
                "backend '{name}' was asked for but is unavailable: {reason}"
            )));
        }
    }
    Ok(())
}

/// One row per dtype (f32 first) of one (backend, variant, family) run; a run that
/// produced no cases at all gets a row of zero cases, which counts as a failure.
fn summarize(
    backend: &'static str,
    variant: &str,
    family: Family,
    reports: &[CaseReport],
) -> Vec<Row> {
    let row = |dtype: String, of: Vec<&CaseReport>| Row {
        backend,
        variant: variant.to_string(),
        family,
        dtype,
        cases: of.len(),
        passed: of.iter().filter(|r| r.passed).count(),
        // f64::max skips NaN; a NaN ratio is a failure and must show as one.
        worst: of
            .iter()
            .map(|r| {
                if r.error_ratio.is_nan() {
                    f64::INFINITY
                } else {
                    r.error_ratio
                }
            })
            .fold(0.0, f64::max),
    };
    if reports.is_empty() {
        return vec![row("-".into(), Vec::new())];
    }
    [DType::F32, DType::F64]
        .into_iter()
        .map(|d| {
            (
                d,
                reports.iter().filter(|r| r.dtype == d).collect::<Vec<_>>(),
            )
        })
        .filter(|(_, of)| !of.is_empty())
        .map(|(d, of)| row(d.name().into(), of))
        .collect()
}
