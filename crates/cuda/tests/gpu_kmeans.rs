//! GPU tests of the k-means ladder: conformance for every variant, step-for-step
//! agreement with the CPU backend on seeded blobs, bitwise reproducibility of `fused`,
//! wide shapes (K and D over several tiles), the building blocks of the vendor backend,
//! edge shapes and errors.
//! Run on a GPU machine with `cargo test -p ndgpu-cuda --test gpu_kmeans -- --ignored`.

use ndarray::{Array1, Array2, ArrayView2, Axis};
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{tolerance, Backend, Cluster, Element, Error, Family, Init, KMeansConfig};
use ndgpu_cpu::CpuBackend;
use ndgpu_cuda::ops::kmeans::{self, VARIANTS};
use ndgpu_cuda::{CudaBackend, CudaElement};

fn backend() -> CudaBackend {
    CudaBackend::new(0).expect("a CUDA device")
}

fn with_variant(variant: &str) -> CudaBackend {
    let mut b = backend();
    b.set_variant(Family::KMeans, variant).unwrap();
    b
}

fn uniform(rng: &mut SplitMix64) -> f64 {
    2.0 * rng.next_f64() - 1.0
}

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

fn random<T: Element>(rng: &mut SplitMix64, rows: usize, cols: usize) -> Array2<T> {
    Array2::from_shape_simple_fn((rows, cols), || T::from_f64(uniform(rng)))
}

fn dist2<T: Element>(x: ArrayView2<T>, i: usize, c: ArrayView2<T>, j: usize) -> f64 {
    x.row(i)
        .iter()
        .zip(c.row(j))
        .map(|(a, b)| (a.as_f64() - b.as_f64()).powi(2))
        .sum()
}

fn sq_norm<T: Element>(a: ArrayView2<T>, i: usize) -> f64 {
    a.row(i).iter().map(|v| v.as_f64().powi(2)).sum()
}

/// Labels equal to the exact nearest centroid, except on near-ties: a different label
/// must be as near as rounding of the distance allows (tolerance::distance).
fn assert_nearest<T: Element>(what: &str, x: ArrayView2<T>, c: ArrayView2<T>, got: &Array1<usize>) {
    let d = x.ncols();
    let cpu = CpuBackend::new().predict(x, c).unwrap();
    for i in 0..x.nrows() {
        if got[i] == cpu[i] {
            continue;
        }
        let (dg, dc) = (dist2(x, i, c, got[i]), dist2(x, i, c, cpu[i]));
        let slack = tolerance::distance::<T>(d)
            * (sq_norm(x, i) + sq_norm(c, got[i]).max(sq_norm(c, cpu[i])));
        assert!(
            dg - dc <= slack,
            "{what}: point {i} labelled {} (d² {dg}) but {} is nearer (d² {dc}), slack {slack}",
            got[i],
            cpu[i]
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn conformance_every_variant() {
    let mut b = backend();
    for v in b.variants(Family::KMeans) {
        b.set_variant(Family::KMeans, v).unwrap();
        assert_family(&b, Family::KMeans, Sizes::from_env(Sizes::Medium));
    }
}

/// Same labels, iterations and convergence as the CPU backend; centroids and inertia
/// within rounding.
fn matches_cpu<T: CudaElement>(variant: &str, x: &Array2<T>, config: &KMeansConfig) {
    let what = format!("{variant} {} n={} k={}", T::SUFFIX, x.nrows(), config.k);
    let got = with_variant(variant).kmeans(x.view(), config).unwrap();
    let want = CpuBackend::new().kmeans(x.view(), config).unwrap();
    assert_eq!(got.iterations, want.iterations, "{what}: iterations");
    assert_eq!(got.converged, want.converged, "{what}: converged");
    assert!(got.labels == want.labels, "{what}: labels differ");
    assert_eq!(
        got.inertia_history.len(),
        got.iterations,
        "{what}: history length"
    );
    assert_eq!(got.inertia, *got.inertia_history.last().unwrap(), "{what}");
    let n = x.nrows();
    let max_abs = x.iter().fold(0.0f64, |m, v| m.max(v.as_f64().abs()));
    let centroid_tol = tolerance::sum::<T>(n) * max_abs;
    for ((j, t), c) in got.centroids.indexed_iter() {
        let w = want.centroids[[j, t]].as_f64();
        assert!(
            (c.as_f64() - w).abs() <= centroid_tol + T::EPS * w.abs(),
            "{what}: centroid [{j},{t}] = {c}, cpu {w}"
        );
    }
    let scale: f64 = (0..n)
        .map(|i| sq_norm(x.view(), i) + sq_norm(got.centroids.view(), got.labels[i]))
        .sum();
    let slack = tolerance::distance::<T>(x.ncols()) * scale;
    for (g, w) in got.inertia_history.iter().zip(&want.inertia_history) {
        assert!(
            (g - w).abs() <= slack,
            "{what}: inertia {g}, cpu {w} (slack {slack})"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn separated_blobs_match_cpu() {
    for v in VARIANTS {
        let config = KMeansConfig::new(8).seed(11);
        matches_cpu(v, &blobs::<f32>(1, 20_000, 8, 5, 40.0), &config);
        matches_cpu(v, &blobs::<f64>(1, 20_000, 8, 5, 40.0), &config);
        // init by random points: several centroids may start in one blob
        let random = config.clone().init(Init::Random).seed(3);
        matches_cpu(v, &blobs::<f64>(2, 5_000, 8, 5, 40.0), &random);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn overlapping_blobs_f64_match_cpu_step_for_step() {
    for v in VARIANTS {
        let x = blobs::<f64>(3, 5_000, 6, 3, 3.0);
        let config = KMeansConfig::new(6).seed(5).tol(0.0).max_iter(60);
        matches_cpu(v, &x, &config);
        matches_cpu(v, &x, &KMeansConfig::new(6).seed(8));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn fused_is_bitwise_reproducible() {
    let b = with_variant("fused");
    let x = blobs::<f32>(4, 50_000, 16, 7, 3.0);
    let config = KMeansConfig::new(16).seed(9).tol(0.0).max_iter(30);
    let first = b.kmeans(x.view(), &config).unwrap();
    assert!(
        first.iterations > 2,
        "too easy a case: {} iterations",
        first.iterations
    );
    let bits = |a: &Array2<f32>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let hist = |h: &[f64]| h.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for run in 1..Sizes::from_env(Sizes::Medium).repeats() {
        let again = b.kmeans(x.view(), &config).unwrap();
        assert!(again.labels == first.labels, "run {run}: labels differ");
        assert_eq!(
            bits(&again.centroids),
            bits(&first.centroids),
            "run {run}: centroids"
        );
        assert_eq!(
            hist(&again.inertia_history),
            hist(&first.inertia_history),
            "run {run}"
        );
        assert_eq!(again.iterations, first.iterations, "run {run}");
    }
}

/// K and D spanning several tiles (K = 300 over 128-centroid tiles, D = 200 over
/// 8-dimension chunks and two 128-dimension update ranges).
fn wide<T: CudaElement>(variant: &str) {
    let b = with_variant(variant);
    let mut rng = SplitMix64::new(12);
    let (n, k, d) = (3_001, 300, 200);
    let x = random::<T>(&mut rng, n, d);
    let c = random::<T>(&mut rng, k, d);
    let what = format!("{variant} {} wide predict", T::SUFFIX);
    assert_nearest(
        &what,
        x.view(),
        c.view(),
        &b.predict(x.view(), c.view()).unwrap(),
    );

    // One iteration on the device: labels as predicted, centroids the means of their
    // points (an empty cluster keeps its centroid).
    let gpu = b.gpu();
    let dx = gpu.upload(x.view()).unwrap();
    let mut dc = gpu.upload(c.view()).unwrap();
    let mut labels = gpu.stream().clone_htod(&vec![-1i32; n]).unwrap();
    let a = kmeans::iterate(gpu, variant, &dx, &mut dc, &mut labels).unwrap();
    assert_eq!(
        a.changed, n,
        "{what}: every label changes in the first step"
    );
    let got_labels: Vec<i32> = gpu.stream().clone_dtoh(&labels).unwrap();
    gpu.synchronize().unwrap();
    let got_labels: Array1<usize> = got_labels.iter().map(|&l| l as usize).collect();
    assert_nearest(&what, x.view(), c.view(), &got_labels);
    let inertia: f64 = (0..n)
        .map(|i| dist2(x.view(), i, c.view(), got_labels[i]))
        .sum();
    let scale: f64 = (0..n)
        .map(|i| sq_norm(x.view(), i) + sq_norm(c.view(), got_labels[i]))
        .sum();
    assert!(
        (a.inertia - inertia).abs() <= tolerance::distance::<T>(d) * scale,
        "{what}: inertia"
    );
    check_means(&what, &x, &got_labels, &c, &gpu.download(&dc).unwrap());
}

/// Each centroid the mean of its points within the sum tolerance; empty ones unchanged.
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
    let max_abs = x.iter().fold(0.0f64, |m, v| m.max(v.as_f64().abs()));
    for j in 0..k {
        for t in 0..d {
            let got = after[[j, t]];
            if counts[j] == 0 {
                assert_eq!(got, before[[j, t]], "{what}: empty cluster {j} moved");
                continue;
            }
            let want = sums[[j, t]] / counts[j] as f64;
            let tol = tolerance::sum::<T>(counts[j]) * max_abs + T::EPS * want.abs();
            assert!(
                (got.as_f64() - want).abs() <= tol,
                "{what}: centroid [{j},{t}] = {got}, mean {want}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn wide_shapes_every_variant() {
    for v in VARIANTS {
        wide::<f32>(v);
        wide::<f64>(v);
    }
}

fn building_blocks<T: CudaElement>() {
    let b = backend();
    let gpu = b.gpu();
    let mut rng = SplitMix64::new(13);
    let (n, k, d) = (1_000, 37, 20);
    let x = random::<T>(&mut rng, n, d);
    let c = random::<T>(&mut rng, k, d);
    // Scores as a vendor GEMM would give them, rounded to T.
    let xc = x.mapv(|v| v.as_f64()).dot(&c.mapv(|v| v.as_f64()).t());
    let scores = Array2::from_shape_fn((n, k), |(i, j)| {
        T::from_f64(sq_norm(c.view(), j) - 2.0 * xc[[i, j]])
    });
    let xsq: Vec<T> = (0..n).map(|i| T::from_f64(sq_norm(x.view(), i))).collect();
    let ds = gpu.upload(scores.view()).unwrap();
    let dxsq = gpu.upload_slice("test", &xsq).unwrap();
    let start: Vec<i32> = (0..n as i32).map(|i| i % 3).collect();
    let mut labels = gpu.stream().clone_htod(&start).unwrap();
    let a = kmeans::assign_from_scores(gpu, &ds, &dxsq, &mut labels).unwrap();
    let got: Vec<i32> = gpu.stream().clone_dtoh(&labels).unwrap();
    gpu.synchronize().unwrap();
    let (mut changed, mut inertia) = (0, 0.0);
    for i in 0..n {
        // first minimum of the T values: the kernel compares exactly these
        let row = scores.row(i);
        let best = (0..k).fold(0, |b, j| if row[j] < row[b] { j } else { b });
        assert_eq!(got[i] as usize, best, "{} point {i}", T::SUFFIX);
        changed += usize::from(start[i] != best as i32);
        inertia += (xsq[i] + row[best]).as_f64().max(0.0);
    }
    assert_eq!(a.changed, changed);
    assert!(
        (a.inertia - inertia).abs() <= 1e-12 * inertia.abs(),
        "{} {a:?} vs {inertia}",
        T::SUFFIX
    );

    // update_centroids with the last cluster left empty.
    let labels_host: Array1<usize> = (0..n).map(|i| i % (k - 1)).collect();
    let l32: Vec<i32> = labels_host.iter().map(|&l| l as i32).collect();
    let dl = gpu.stream().clone_htod(&l32).unwrap();
    let dx = gpu.upload(x.view()).unwrap();
    let mut dc = gpu.upload(c.view()).unwrap();
    kmeans::update_centroids(gpu, &dx, &dl, &mut dc).unwrap();
    let what = format!("update_centroids {}", T::SUFFIX);
    check_means(&what, &x, &labels_host, &c, &gpu.download(&dc).unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn vendor_building_blocks() {
    building_blocks::<f32>();
    building_blocks::<f64>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn edge_shapes_match_cpu() {
    for v in VARIANTS {
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
        let b = with_variant(v);
        assert_nearest(
            v,
            few.view(),
            c.view(),
            &b.predict(few.view(), c.view()).unwrap(),
        );
        let none = Array2::<f32>::zeros((0, 4));
        let c32 = Array2::<f32>::ones((2, 4));
        assert_eq!(b.predict(none.view(), c32.view()).unwrap().len(), 0);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn errors() {
    let b = backend();
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
    let gpu = b.gpu();
    let dx = gpu.upload(x.view()).unwrap();
    let mut dc = gpu.upload(x.view()).unwrap();
    let mut labels = gpu.stream().clone_htod(&[0i32; 10]).unwrap();
    assert!(matches!(
        kmeans::iterate(gpu, "nope", &dx, &mut dc, &mut labels),
        Err(Error::UnknownVariant { .. })
    ));
}
