//! GPU tests of the k-means ladder on resident data: conformance for every variant,
//! agreement with the CPU backend on seeded blobs (whole runs, and the two steps of
//! each iteration side by side), bitwise reproducibility of `fused`, wide shapes (K and
//! D over several tiles), an empty cluster and the count of changed labels, edge shapes
//! and errors.
//! Run on a GPU machine with `cargo test -p ndgpu-cuda --test gpu_kmeans -- --ignored`.

mod common;

use common::{random, uniform, variants, with_variant};
use ndarray::{Array1, Array2, ArrayView2, Axis};
use ndgpu_conformance::compare::{
    centroid_ratio, check_kmeans_shape, check_nearest, dist2, inertia_ratio, norm2,
};
use ndgpu_conformance::Sizes;
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{
    init_centroids, tolerance, ArgOp, Cluster, Device, Element, Error, Family, Init, KMeansConfig,
    KMeansResult, Memory, Reduce,
};
use ndgpu_cpu::CpuBackend;
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::CudaElement;

/// n points around k centres `sep` apart along the first axis (random elsewhere), with
/// noise of standard deviation 1 bounded by 3 per coordinate, in random order.
fn blobs<T: Element>(seed: u64, n: usize, k: usize, d: usize, sep: f64) -> Array2<T> {
    let mut rng = SplitMix64::new(seed);
    let centres = Array2::from_shape_fn((k, d), |(j, t)| {
        if t == 0 {
            sep * j as f64
        } else {
            sep * uniform(&mut rng)
        }
    });
    let mut x = Array2::zeros((n, d));
    for i in 0..n {
        let j = rng.below(k);
        for t in 0..d {
            let noise: f64 = (0..3).map(|_| uniform(&mut rng)).sum();
            x[[i, t]] = T::from_f64(centres[[j, t]] + noise);
        }
    }
    x
}

/// Labels name a nearest centroid (near-ties within `tolerance::distance` either way).
fn assert_nearest<T: Element>(what: &str, x: ArrayView2<T>, c: ArrayView2<T>, got: &Array1<usize>) {
    if let Err(e) = check_nearest(x, c, got.view()) {
        panic!("{what}: {e}");
    }
}

/// Σ‖xᵢ − c_labelᵢ‖² in f64, and the rounding a backend may make in it:
/// `tolerance::distance`·Σ(‖xᵢ‖² + ‖c_labelᵢ‖²).
fn inertia_and_slack<T: Element>(
    x: ArrayView2<T>,
    c: ArrayView2<T>,
    labels: &Array1<usize>,
) -> (f64, f64) {
    let (exact, scale) = labels
        .iter()
        .enumerate()
        .fold((0.0, 0.0), |(e, s), (i, &l)| {
            (
                e + dist2(x.row(i), c.row(l)),
                s + norm2(x.row(i)) + norm2(c.row(l)),
            )
        });
    (exact, tolerance::distance::<T>(x.ncols()) * scale)
}

/// k-means on a resident copy of `x`, read back as a host result.
fn fit_on<T: CudaElement>(
    b: &CudaBackend,
    x: &Array2<T>,
    config: &KMeansConfig,
) -> KMeansResult<T> {
    let fit = b.kmeans_dev(&b.upload(x.view()).unwrap(), config).unwrap();
    KMeansResult {
        empty_clusters: fit.empty_clusters(b, config).unwrap(),
        centroids: b.download(&fit.centroids).unwrap(),
        labels: b.download_indices(&fit.labels).unwrap(),
        inertia: fit.inertia,
        iterations: fit.iterations,
        converged: fit.converged,
        inertia_history: fit.inertia_history,
    }
}

common::conformance_test!(conformance_every_variant, Family::KMeans);

/// Same labels, iterations and convergence as the CPU backend; centroids and inertia
/// within rounding.
fn matches_cpu<T: CudaElement>(variant: &str, x: &Array2<T>, config: &KMeansConfig) {
    let what = format!("{variant} {} n={} k={}", T::SUFFIX, x.nrows(), config.k);
    let got = fit_on(&with_variant(Family::KMeans, variant), x, config);
    let want = CpuBackend::new().kmeans(x.view(), config).unwrap();
    if let Err(e) = check_kmeans_shape(x.view(), config, &got) {
        panic!("{what}: {e}");
    }
    assert_eq!(got.iterations, want.iterations, "{what}: iterations");
    assert_eq!(got.converged, want.converged, "{what}: converged");
    assert!(got.labels == want.labels, "{what}: labels differ");
    assert_eq!(got.inertia, *got.inertia_history.last().unwrap(), "{what}");
    let cr = centroid_ratio(x.view(), got.centroids.view(), want.centroids.view());
    assert!(cr <= 1.0, "{what}: centroids (error/tolerance {cr:.3e})");
    let ir = inertia_ratio(x.view(), &got);
    assert!(ir <= 1.0, "{what}: inertia (error/tolerance {ir:.3e})");
    let (_, slack) = inertia_and_slack(x.view(), got.centroids.view(), &got.labels);
    for (g, w) in got.inertia_history.iter().zip(&want.inertia_history) {
        assert!(
            (g - w).abs() <= slack,
            "{what}: inertia {g}, cpu {w} (slack {slack})"
        );
    }
}

/// Lloyd's iteration driven by hand on both backends from the same initial centroids:
/// after every assignment the same labels and changes and the inertia within rounding;
/// after every update the centroids within rounding.
fn steps_match_cpu<T: CudaElement>(variant: &str, x: &Array2<T>, config: &KMeansConfig) {
    let (b, cpu) = (with_variant(Family::KMeans, variant), CpuBackend::new());
    let n = x.nrows();
    let start = init_centroids(x.view(), config).unwrap();
    let (gx, mut gc, mut gl) = (
        b.upload(x.view()).unwrap(),
        b.upload(start.view()).unwrap(),
        b.unlabeled(n).unwrap(),
    );
    let (hx, mut hc, mut hl) = (
        cpu.upload(x.view()).unwrap(),
        cpu.upload(start.view()).unwrap(),
        cpu.unlabeled(n).unwrap(),
    );
    for step in 1..=config.max_iter {
        let what = format!("{variant} {} n={n} k={} step {step}", T::SUFFIX, config.k);
        let ga = b.assign_dev(&gx, &gc, &mut gl).unwrap();
        let ha = cpu.assign_dev(&hx, &hc, &mut hl).unwrap();
        let labels = b.download_indices(&gl).unwrap();
        assert!(
            labels == cpu.download_indices(&hl).unwrap(),
            "{what}: labels differ"
        );
        assert_eq!(ga.changed, ha.changed, "{what}: changed");
        let c = b.download(&gc).unwrap();
        let (exact, slack) = inertia_and_slack(x.view(), c.view(), &labels);
        assert!(
            (ga.inertia - exact).abs() <= slack && (ga.inertia - ha.inertia).abs() <= slack,
            "{what}: inertia {}, cpu {}, exact {exact} (slack {slack})",
            ga.inertia,
            ha.inertia
        );
        if ha.changed as f64 <= config.change_tol * n as f64 {
            return;
        }
        b.update_dev(&gx, &gl, &mut gc).unwrap();
        cpu.update_dev(&hx, &hl, &mut hc).unwrap();
        let (g, h) = (b.download(&gc).unwrap(), cpu.download(&hc).unwrap());
        let cr = centroid_ratio(x.view(), g.view(), h.view());
        assert!(cr <= 1.0, "{what}: centroids (error/tolerance {cr:.3e})");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn separated_blobs_match_cpu() {
    for v in variants(Family::KMeans) {
        // Strict convergence, and seeds whose starts put one centroid in each of the 8
        // blobs (2 iterations on the CPU; the random start 3): a start with two
        // centroids in one blob drifts for tens of iterations, and over such a drift
        // an f32 point within rounding of two centroids can go either way.
        let config = KMeansConfig::new(8).seed(1).tol(0.0);
        matches_cpu(v, &blobs::<f32>(1, 20_000, 8, 5, 40.0), &config);
        matches_cpu(v, &blobs::<f64>(1, 20_000, 8, 5, 40.0), &config);
        // init by random points: several centroids may start in one blob
        let random = config.clone().init(Init::Random).seed(20);
        matches_cpu(v, &blobs::<f64>(2, 5_000, 8, 5, 40.0), &random);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn overlapping_blobs_f64_match_cpu_step_for_step() {
    for v in variants(Family::KMeans) {
        let x = blobs::<f64>(3, 5_000, 6, 3, 3.0);
        let config = KMeansConfig::new(6).seed(5).tol(0.0).max_iter(60);
        matches_cpu(v, &x, &config);
        steps_match_cpu(v, &x, &config);
        matches_cpu(v, &x, &KMeansConfig::new(6).seed(8));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_is_bitwise_reproducible() {
    let b = with_variant(Family::KMeans, "fused");
    let x = blobs::<f32>(4, 50_000, 16, 7, 3.0);
    let dx = b.upload(x.view()).unwrap();
    let config = KMeansConfig::new(16).seed(9).tol(0.0).max_iter(30);
    let run = || {
        let fit = b.kmeans_dev(&dx, &config).unwrap();
        let centroids = b.download(&fit.centroids).unwrap();
        let labels = b.download_indices(&fit.labels).unwrap();
        let history: Vec<u64> = fit.inertia_history.iter().map(|v| v.to_bits()).collect();
        let bits: Vec<u32> = centroids.iter().map(|v| v.to_bits()).collect();
        (labels, bits, history, fit.iterations)
    };
    let first = run();
    assert!(first.3 > 2, "too easy a case: {} iterations", first.3);
    for r in 1..Sizes::from_env(Sizes::Medium).repeats() {
        let again = run();
        assert!(again.0 == first.0, "run {r}: labels differ");
        assert_eq!(again.1, first.1, "run {r}: centroids");
        assert_eq!(again.2, first.2, "run {r}: inertia history");
        assert_eq!(again.3, first.3, "run {r}: iterations");
    }
}

/// The tensor-core rung settles a point only where its TF32 scores prove the fused
/// rung's winner and hands the rest to the fused kernel, so labels, changes, inertia and
/// centroids equal the fused rung's bit for bit, step after step. Lattice points against
/// centroids drawn from them (some equal) make exact ties, which take the second path.
#[test]
#[ignore = "needs a CUDA device"]
fn tensor_core_is_bitwise_fused() {
    let (tc, fused) = (
        with_variant(Family::KMeans, "tensor_core"),
        with_variant(Family::KMeans, "fused"),
    );
    let mut rng = SplitMix64::new(21);
    let mut lattice = |n, d| Array2::from_shape_simple_fn((n, d), || rng.below(5) as f32 - 2.0);
    let mut cases = vec![
        ("lattice 20000×3", lattice(20_000, 3), 7),
        ("lattice 5000×33", lattice(5_000, 33), 129),
        ("blobs 50000×16", blobs::<f32>(4, 50_000, 16, 16, 3.0), 16),
    ];
    let mut rng = SplitMix64::new(22);
    for (what, n, d, k) in [
        ("uniform", 70_001, 32, 128),
        ("uniform", 3_001, 200, 300),
        ("uniform", 999, 1, 1),
    ] {
        cases.push((what, random::<f32>(&mut rng, n, d), k));
    }
    for (what, x, k) in cases {
        let what = format!("{what} {:?} k={k}", x.dim());
        let start = x.slice(ndarray::s![..k, ..]).to_owned();
        let run = |b: &CudaBackend| {
            let dx = b.upload(x.view()).unwrap();
            let mut dc = b.upload(start.view()).unwrap();
            let mut labels = b.unlabeled(x.nrows()).unwrap();
            let mut steps = Vec::new();
            for _ in 0..4 {
                let a = b.assign_dev(&dx, &dc, &mut labels).unwrap();
                b.update_dev(&dx, &labels, &mut dc).unwrap();
                let c = b.download(&dc).unwrap();
                let bits: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
                let l = b.download_indices(&labels).unwrap();
                steps.push((l, a.changed, a.inertia.to_bits(), bits));
            }
            steps
        };
        for (step, (g, w)) in run(&tc).iter().zip(&run(&fused)).enumerate() {
            assert!(g.0 == w.0, "{what}, step {step}: labels");
            assert_eq!(
                (g.1, g.2),
                (w.1, w.2),
                "{what}, step {step}: changed, inertia"
            );
            assert!(g.3 == w.3, "{what}, step {step}: centroids");
        }
    }
}

/// Each centroid the mean of its points within rounding; empty ones unchanged.
fn check_means<T: CudaElement>(
    what: &str,
    x: &Array2<T>,
    labels: &Array1<usize>,
    before: &Array2<T>,
    after: &Array2<T>,
) {
    let (k, d) = before.dim();
    let mut sums = Array2::<f64>::zeros((k, d));
    let mut counts = vec![0usize; k];
    for (i, &l) in labels.iter().enumerate() {
        counts[l] += 1;
        let mut row = sums.row_mut(l);
        row += &x.row(i).mapv(|v| v.as_f64());
    }
    let means = Array2::from_shape_fn((k, d), |(j, t)| match counts[j] {
        0 => before[[j, t]],
        c => T::from_f64(sums[[j, t]] / c as f64),
    });
    for j in (0..k).filter(|&j| counts[j] == 0) {
        assert!(
            after.row(j) == before.row(j),
            "{what}: empty cluster {j} moved"
        );
    }
    let r = centroid_ratio(x.view(), after.view(), means.view());
    assert!(r <= 1.0, "{what}: centroids (error/tolerance {r:.3e})");
}

/// K and D spanning several tiles (K = 300 over 128-centroid tiles, D = 200 over
/// 8-dimension chunks and two 128-dimension update ranges).
fn wide<T: CudaElement>(variant: &str) {
    let b = with_variant(Family::KMeans, variant);
    let mut rng = SplitMix64::new(12);
    let (n, k, d) = (3_001, 300, 200);
    let x = random::<T>(&mut rng, n, d);
    let c = random::<T>(&mut rng, k, d);
    let what = format!("{variant} {} wide", T::SUFFIX);
    let predicted = b.predict(x.view(), c.view()).unwrap();
    assert_nearest(&what, x.view(), c.view(), &predicted);

    // One iteration on resident data: labels as predicted, centroids the means of their
    // points (an empty cluster keeps its centroid).
    let dx = b.upload(x.view()).unwrap();
    let mut dc = b.upload(c.view()).unwrap();
    let p = b.predict_dev(&dx, &dc).unwrap();
    assert!(
        b.download_indices(&p).unwrap() == predicted,
        "{what}: predict_dev"
    );
    let mut labels = b.unlabeled(n).unwrap();
    let a = b.assign_dev(&dx, &dc, &mut labels).unwrap();
    assert_eq!(
        a.changed, n,
        "{what}: every label changes in the first step"
    );
    let got = b.download_indices(&labels).unwrap();
    assert!(got == predicted, "{what}: assign_dev and predict differ");
    let (exact, slack) = inertia_and_slack(x.view(), c.view(), &got);
    assert!((a.inertia - exact).abs() <= slack, "{what}: inertia");
    b.update_dev(&dx, &labels, &mut dc).unwrap();
    check_means(&what, &x, &got, &c, &b.download(&dc).unwrap());
}

common::every_variant_test!(wide_shapes_every_variant, Family::KMeans, wide);

/// An update of more chunks of points than the device has SMs, at D = 32 (the shape whose
/// chunk sums take every row in one block per chunk, `km_accumulate_rows`): each
/// centroid the mean of its points, within the update's bound.
fn many_chunks<T: CudaElement>(k: usize) {
    let b = with_variant(Family::KMeans, "tensor_core");
    let mut rng = SplitMix64::new(14);
    let (n, d) = (1 << 20, 32);
    let x = random::<T>(&mut rng, n, d);
    let c = x.slice(ndarray::s![..k, ..]).to_owned();
    let what = format!("{} many chunks, k = {k}", T::SUFFIX);
    let dx = b.upload(x.view()).unwrap();
    let mut dc = b.upload(c.view()).unwrap();
    let mut labels = b.unlabeled(n).unwrap();
    b.assign_dev(&dx, &dc, &mut labels).unwrap();
    let got = b.download_indices(&labels).unwrap();
    b.update_dev(&dx, &labels, &mut dc).unwrap();
    check_means(&what, &x, &got, &c, &b.download(&dc).unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn many_chunks_update_to_the_means() {
    many_chunks::<f32>(128);
    many_chunks::<f64>(64);
}

/// A centroid far from every point: its cluster is empty, and the update leaves it
/// where it is. A second assignment counts the changes against the labels it was given.
fn empty_cluster<T: CudaElement>(variant: &str) {
    let b = with_variant(Family::KMeans, variant);
    let mut rng = SplitMix64::new(13);
    let (n, k, d) = (1_000, 37, 20);
    let x = random::<T>(&mut rng, n, d);
    let mut c = random::<T>(&mut rng, k, d);
    c.row_mut(k - 1).fill(T::from_f64(100.0));
    let what = format!("{variant} {} empty cluster", T::SUFFIX);
    let dx = b.upload(x.view()).unwrap();
    let mut dc = b.upload(c.view()).unwrap();
    let mut labels = b.unlabeled(n).unwrap();
    let a = b.assign_dev(&dx, &dc, &mut labels).unwrap();
    assert_eq!(a.changed, n, "{what}");
    let first = b.download_indices(&labels).unwrap();
    assert_nearest(&what, x.view(), c.view(), &first);
    assert!(
        !first.iter().any(|&l| l == k - 1),
        "{what}: far centroid used"
    );
    b.update_dev(&dx, &labels, &mut dc).unwrap();
    let moved = b.download(&dc).unwrap();
    check_means(&what, &x, &first, &c, &moved);

    let a = b.assign_dev(&dx, &dc, &mut labels).unwrap();
    let second = b.download_indices(&labels).unwrap();
    assert_nearest(&what, x.view(), moved.view(), &second);
    let changed = first.iter().zip(&second).filter(|(p, q)| p != q).count();
    assert_eq!(a.changed, changed, "{what}: second step");
    let (exact, slack) = inertia_and_slack(x.view(), moved.view(), &second);
    assert!((a.inertia - exact).abs() <= slack, "{what}: inertia");
}

common::every_variant_test!(
    empty_cluster_and_changes_every_variant,
    Family::KMeans,
    empty_cluster
);

#[test]
#[ignore = "needs a CUDA device"]
fn edge_shapes_match_cpu() {
    for v in variants(Family::KMeans) {
        let x = blobs::<f64>(6, 129, 3, 1, 5.0);
        matches_cpu(v, &x, &KMeansConfig::new(1));
        matches_cpu(v, &x, &KMeansConfig::new(3).seed(2));
        let few = blobs::<f64>(7, 50, 5, 4, 2.0);
        matches_cpu(v, &few, &KMeansConfig::new(50).seed(1));
        matches_cpu(v, &few, &KMeansConfig::new(5).max_iter(1));
        // no dimensions: every distance is 0, every label 0
        matches_cpu(v, &Array2::<f64>::zeros((10, 0)), &KMeansConfig::new(2));
        // predict with fewer points than a tile, and none
        let c = few.select(Axis(0), &[0, 10, 20]);
        let b = with_variant(Family::KMeans, v);
        let p = b.predict(few.view(), c.view()).unwrap();
        assert_nearest(v, few.view(), c.view(), &p);
        let dp = b
            .predict_dev(&b.upload(few.view()).unwrap(), &b.upload(c.view()).unwrap())
            .unwrap();
        assert!(b.download_indices(&dp).unwrap() == p, "{v}: predict_dev");
        let none = Array2::<f32>::zeros((0, 4));
        let c32 = Array2::<f32>::ones((2, 4));
        assert_eq!(b.predict(none.view(), c32.view()).unwrap().len(), 0);
        let dnone = b
            .predict_dev(
                &b.upload(none.view()).unwrap(),
                &b.upload(c32.view()).unwrap(),
            )
            .unwrap();
        assert_eq!(dnone.len(), 0);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn errors() {
    let mut b = common::backend();
    let x = Array2::<f32>::zeros((10, 2));
    assert!(matches!(
        b.kmeans(x.view(), &KMeansConfig::new(0)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        b.kmeans(x.view(), &KMeansConfig::new(11)),
        Err(Error::InvalidArgument { .. })
    ));
    let mut nan = x.clone();
    nan[[3, 1]] = f32::NAN;
    assert!(matches!(
        b.kmeans(nan.view(), &KMeansConfig::new(2)),
        Err(Error::NonFinite { .. })
    ));
    let c = Array2::<f32>::zeros((2, 3));
    assert!(matches!(
        b.predict(x.view(), c.view()),
        Err(Error::ShapeMismatch { .. })
    ));

    // Resident forms.
    let dx = b.upload(x.view()).unwrap();
    let mut dc = b.upload(x.view()).unwrap();
    assert!(matches!(
        b.kmeans_dev(&dx, &KMeansConfig::new(0)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        b.kmeans_dev(&b.upload(nan.view()).unwrap(), &KMeansConfig::new(2)),
        Err(Error::NonFinite { .. })
    ));
    let mut short = b.unlabeled(9).unwrap();
    assert!(matches!(
        b.assign_dev(&dx, &dc, &mut short),
        Err(Error::ShapeMismatch { .. })
    ));
    let mut labels = b.unlabeled(10).unwrap();
    let dc3 = b.upload(c.view()).unwrap();
    assert!(matches!(
        b.assign_dev(&dx, &dc3, &mut labels),
        Err(Error::ShapeMismatch { .. })
    ));
    let no_centroids = b.upload(Array2::<f32>::zeros((0, 2)).view()).unwrap();
    assert!(matches!(
        b.assign_dev(&dx, &no_centroids, &mut labels),
        Err(Error::InvalidArgument { .. })
    ));
    // Labels that no assignment wrote cannot be read back.
    assert!(matches!(
        b.download_indices(&labels),
        Err(Error::InvalidArgument { .. })
    ));
    // Indices of an arg reduction are not k-means labels.
    let mut argmins = b.arg_reduce_axis_dev(ArgOp::ArgMin, &dx, Axis(1)).unwrap();
    assert!(matches!(
        b.assign_dev(&dx, &dc, &mut argmins),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        b.update_dev(&dx, &argmins, &mut dc),
        Err(Error::InvalidArgument { .. })
    ));
    // Points resident elsewhere are refused, not read.
    let on_host = CpuBackend::new().upload(x.view()).unwrap();
    assert!(matches!(
        b.assign_dev(&on_host, &dc, &mut labels),
        Err(Error::WrongPlace { .. })
    ));
    b.assign_dev(&dx, &dc, &mut labels).unwrap();
    assert_eq!(b.download_indices(&labels).unwrap().len(), 10);

    common::assert_unknown_variant_refused(&mut b, Family::KMeans, "nope");
}
