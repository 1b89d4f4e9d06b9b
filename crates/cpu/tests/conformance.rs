//! The conformance suite on the reference backend itself: every family, small sizes.
//! (The reference is compared with the definitions here; other backends are compared
//! with it as well.)

use ndgpu_conformance::{assert_chains, assert_family, run_family, Sizes};
use ndgpu_core::Family;
use ndgpu_cpu::CpuBackend;

/// Each family's cases (a failure lists every failing case of its family).
#[test]
fn every_family_at_small_sizes() {
    let cpu = CpuBackend::new();
    for family in Family::ALL {
        assert_family(&cpu, family, Sizes::Small);
    }
}

/// Every family has cases for both dtypes, each with a finite ratio, and a different
/// seed gives the same verdicts.
#[test]
fn reports_cover_both_dtypes_and_any_seed() {
    let cpu = CpuBackend::new();
    for family in Family::ALL {
        let reports = run_family(&cpu, family, Sizes::Small, 12345);
        assert!(reports.len() > 10, "{family}: only {} cases", reports.len());
        for dtype in [ndgpu_core::DType::F32, ndgpu_core::DType::F64] {
            assert!(
                reports.iter().any(|r| r.dtype == dtype),
                "{family}: no {dtype} case"
            );
        }
        let failed: Vec<_> = reports.iter().filter(|r| !r.passed).collect();
        assert!(failed.is_empty(), "{family}, seed 12345: {failed:#?}");
        assert!(reports
            .iter()
            .all(|r| r.error_ratio.is_finite() && r.error_ratio <= 1.0));
        assert!(reports.iter().all(|r| r.variant == "reference"));
    }
}

#[test]
fn results_no_machine_holds_are_refused() {
    ndgpu_conformance::assert_refuses_results_no_machine_holds(&CpuBackend::new());
}

#[test]
fn resident_chains() {
    assert_chains(&CpuBackend::new(), Sizes::Small);
}
