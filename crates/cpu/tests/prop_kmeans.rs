//! Properties of k-means on random data (uniform and blobs, any layout): every label
//! names the nearest returned centroid, the inertia is that of the labels and never
//! increases, and `predict` with the returned centroids gives the same labels.

use ndgpu_conformance::compare::{
    check_kmeans_shape, check_nearest, check_predict_agrees, history_ratio, inertia_ratio,
};
use ndgpu_conformance::strategies::{config, kmeans_case, KMeansCase};
use ndgpu_core::{Cluster, Element};
use ndgpu_cpu::CpuBackend;
use proptest::prelude::*;

fn lloyd_properties<T: Element>(case: KMeansCase<T>) -> Result<(), TestCaseError> {
    let cpu = CpuBackend::new();
    let x = case.x.view();
    let r = cpu.kmeans(x, &case.config).unwrap();
    check_kmeans_shape(x, &case.config, &r).map_err(TestCaseError::fail)?;
    check_nearest(x, r.centroids.view(), r.labels.view()).map_err(TestCaseError::fail)?;
    let ir = inertia_ratio(x, &r);
    prop_assert!(ir <= 1.0, "inertia {} off by {} tolerances", r.inertia, ir);
    // The reference's distances are exact up to one rounding per term, so its history
    // must be monotone up to the centroid rounding alone.
    for w in r.inertia_history.windows(2) {
        let slack = ndgpu_conformance::compare::inertia_step_slack::<T>() * w[0];
        prop_assert!(w[1] <= w[0] + slack, "history {:?}", r.inertia_history);
    }
    prop_assert!(history_ratio(x, &r.inertia_history) <= 1.0);
    let p = cpu.predict(x, r.centroids.view()).unwrap();
    check_predict_agrees(x, r.centroids.view(), r.labels.view(), p.view())
        .map_err(TestCaseError::fail)?;
    // The reference computes labels and predictions the same way: exactly equal.
    prop_assert_eq!(p, r.labels);
    Ok(())
}

proptest! {
    #![proptest_config(config(48, "proptest-regressions/prop_kmeans.txt"))]

    #[test]
    fn kmeans_f32(case in kmeans_case::<f32>(300)) {
        lloyd_properties(case)?;
    }

    #[test]
    fn kmeans_f64(case in kmeans_case::<f64>(300)) {
        lloyd_properties(case)?;
    }
}
