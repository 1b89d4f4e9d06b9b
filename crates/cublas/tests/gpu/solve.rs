//! Cholesky (cuSOLVER, every variant) and k-means (cuBLAS distances, the runtime's
//! argmin and update) on resident data, against host references, the CPU backend and
//! the `cuda` backend's own k-means steps.

use ndarray::{s, Array2};
use ndgpu_conformance::compare::{
    centroid_ratio, check_kmeans_shape, check_nearest, cholesky_ratio, history_ratio,
    inertia_ratio, norm2, solve_ratio,
};
use ndgpu_core::{
    tolerance, Backend, Cluster, Device, Element, Error, Factorize, Family, Init, KMeansConfig,
    Matrix, Memory, Ops,
};
use ndgpu_cpu::CpuBackend;
use ndgpu_cublas::{BlasElement, CublasBackend};
use ndgpu_cuda::CudaBackend;

use crate::common::*;

/// Factors with the selected variant (only the lower triangle read), then solves with
/// one, a few, and more right-hand sides than rows, B n×nrhs row-major in place.
fn cholesky_checks<T: BlasElement>(b: &CublasBackend) {
    let v = b.variant(Family::Cholesky);
    for (i, &n) in [1usize, 2, 17, 64, 300, 513].iter().enumerate() {
        let a = spd::<T>(n, 80 + i as u64);
        let f = b
            .cholesky_in_place_dev(b.upload(poison_upper(&a).view()).unwrap())
            .unwrap();
        assert_eq!(f.order(), n);
        let l = b.download(f.l()).unwrap();
        for ((r, c), x) in l.indexed_iter() {
            assert!(
                c <= r || *x == T::zero(),
                "[{v}] n = {n}: upper triangle at ({r}, {c}) is {x}"
            );
        }
        let ratio = cholesky_ratio(a.view(), l.view());
        assert!(
            ratio <= tolerance::CHOLESKY_RATIO,
            "[{v}] n = {n}: ‖A − LLᵀ‖ ratio {ratio}"
        );
        for (j, nrhs) in [1, 3, 2 * n + 1].into_iter().enumerate() {
            let rhs = random::<T>((n, nrhs), 90 + 10 * i as u64 + j as u64);
            let mut x = b.upload(rhs.view()).unwrap();
            b.cholesky_solve_in_place_dev(&f, &mut x).unwrap();
            assert_eq!(x.dim(), (n, nrhs));
            let x = b.download(&x).unwrap();
            let ratio = solve_ratio(a.view(), x.view(), rhs.view());
            assert!(
                ratio <= tolerance::SOLVE_RATIO,
                "[{v}] n = {n}, {nrhs} right-hand sides: solve ratio {ratio}"
            );
        }
        // The host form, with a factor from the host: only its lower triangle is read.
        let rhs = random::<T>((n, 3), 70 + i as u64);
        let x = b
            .cholesky_solve(poison_upper(&l).view(), rhs.view())
            .unwrap();
        let ratio = solve_ratio(a.view(), x.view(), rhs.view());
        assert!(
            ratio <= tolerance::SOLVE_RATIO,
            "[{v}] n = {n}, host solve: ratio {ratio}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn cholesky_and_solve_meet_the_lapack_ratios_in_every_variant() {
    let mut b = backend();
    assert_eq!(
        b.variants(Family::Cholesky),
        [
            "xlower_trsm",
            "xupper_trsm",
            "lower_trsm",
            "upper_trsm",
            "upper_potrs"
        ]
    );
    every_variant(&mut b, Family::Cholesky, |b, v| {
        cholesky_checks::<f32>(b);
        cholesky_checks::<f64>(b);
        let empty: Matrix<f64> = b.zeros(0, 0).unwrap();
        let f = b.cholesky_dev(&empty).unwrap();
        assert_eq!(f.order(), 0, "[{v}]");
        let f = b.factor_from_lower(Array2::<f64>::eye(4).view()).unwrap();
        let mut none: Matrix<f64> = b.zeros(4, 0).unwrap();
        b.cholesky_solve_in_place_dev(&f, &mut none).unwrap();
        assert_eq!(none.dim(), (4, 0), "[{v}]");
    });
}

/// Records a failure unless `got` is an error that `expected` accepts.
fn expect_err<T: BlasElement>(
    b: &CublasBackend,
    what: &str,
    got: ndgpu_core::Result<()>,
    expected: impl Fn(&Error) -> bool,
    failures: &mut Vec<String>,
) {
    if !matches!(&got, Err(e) if expected(e)) {
        let v = b.variant(Family::Cholesky);
        failures.push(format!("{} [{v}] {what}: got {got:?}", T::DTYPE));
    }
}

/// Factors `a` on resident data.
fn factor<T: BlasElement>(b: &CublasBackend, a: &Array2<T>) -> ndgpu_core::Result<()> {
    b.cholesky_in_place_dev(b.upload(a.view())?).map(drop)
}

/// Every failing pivot case with the selected variant; what went wrong, if anything.
fn not_positive_definite<T: BlasElement>(b: &CublasBackend, failures: &mut Vec<String>) {
    // SPD except A[p][p] = −1: every leading minor up to order p is positive
    // definite, the one of order p + 1 is not. n = 300 goes through blocked code.
    // The value is −1 minus a sum of squares: clearly negative, so re-formed from the
    // saved diagonal and row p of L, never cuSOLVER's NaN.
    for &(n, p) in &[(5usize, 2usize), (64, 0), (300, 200)] {
        let mut a = spd::<T>(n, 7);
        a[[p, p]] = T::from_f64(-1.0);
        expect_err::<T>(
            b,
            &format!("n = {n}, A[{p}][{p}] = -1: NotPositiveDefinite at {p}, value <= -1"),
            factor(b, &a),
            |e| matches!(e, Error::NotPositiveDefinite { pivot, value } if *pivot == p && *value <= -1.0),
            failures,
        );
    }
    // Identity but for −1 at (3, 3) and 0.5 at (3, 1): the pivot is −1 − 0.5² exactly,
    // through the host form as through the resident one.
    let mut a = Array2::<T>::eye(6);
    a[[3, 3]] = T::from_f64(-1.0);
    a[[3, 1]] = T::from_f64(0.5);
    let exact =
        |e: &Error| matches!(e, Error::NotPositiveDefinite { pivot: 3, value } if *value == -1.25);
    let what = "pivot 3 of -1 - 0.5²: NotPositiveDefinite at 3, value -1.25";
    expect_err::<T>(b, what, factor(b, &a), exact, failures);
    let host = b.cholesky(a.view()).map(drop);
    expect_err::<T>(b, &format!("host form, {what}"), host, exact, failures);
    // The first pivot: nothing to subtract.
    let mut a = Array2::<T>::eye(3);
    a[[0, 0]] = T::zero();
    expect_err::<T>(
        b,
        "A[0][0] = 0: NotPositiveDefinite at 0, value 0",
        factor(b, &a),
        |e| matches!(e, Error::NotPositiveDefinite { pivot: 0, value } if *value == 0.0),
        failures,
    );
    // NaN in row p of the lower triangle: the resident form does not look at the data
    // on the host, so it fails at pivot p with a value that is not finite; the host
    // form checks first and names the entry.
    for &(n, p) in &[(5usize, 2usize), (300, 200)] {
        let mut a = spd::<T>(n, 9);
        a[[p, 1]] = T::nan();
        expect_err::<T>(
            b,
            &format!("n = {n}, NaN at ({p}, 1): NotPositiveDefinite at {p}, not finite"),
            factor(b, &a),
            |e| matches!(e, Error::NotPositiveDefinite { pivot, value } if *pivot == p && !value.is_finite()),
            failures,
        );
        expect_err::<T>(
            b,
            &format!("host form, n = {n}, NaN at ({p}, 1): NonFinite at ({p}, 1)"),
            b.cholesky(a.view()).map(drop),
            |e| matches!(e, Error::NonFinite { index, .. } if *index == (p, 1)),
            failures,
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_matrix_that_is_not_positive_definite_names_its_pivot_in_every_variant() {
    let mut failures = Vec::new();
    every_variant(&mut backend(), Family::Cholesky, |b, _| {
        not_positive_definite::<f32>(b, &mut failures);
        not_positive_definite::<f64>(b, &mut failures);
    });
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Four well-separated blobs in 3-D, `per` points each, interleaved: point i belongs
/// to blob i mod 4, so rows 0..4 hold one point of each.
fn blobs<T: Element>(per: usize, seed: u64) -> Array2<T> {
    let centers = [
        [10.0, 10.0, 0.0],
        [-10.0, 10.0, 5.0],
        [10.0, -10.0, -5.0],
        [-10.0, -10.0, 0.0],
    ];
    let noise = random::<f64>((4 * per, 3), seed);
    Array2::from_shape_fn((4 * per, 3), |(i, j)| {
        T::from_f64(centers[i % 4][j] + noise[[i, j]])
    })
}

fn kmeans_checks<T: BlasElement>(b: &CublasBackend) {
    let x = blobs::<T>(100, 3);
    let n = x.nrows();
    let config = KMeansConfig::new(4).seed(11);
    let r = b.kmeans(x.view(), &config).unwrap();
    let cpu = CpuBackend::new().kmeans(x.view(), &config).unwrap();
    assert_eq!(r.labels, cpu.labels, "labels differ from the CPU reference");
    assert_eq!((r.iterations, r.converged), (cpu.iterations, cpu.converged));
    check_kmeans_shape(x.view(), &config, &r).unwrap_or_else(|e| panic!("{e}"));
    check_nearest(x.view(), r.centroids.view(), r.labels.view()).unwrap_or_else(|e| panic!("{e}"));
    let ratios = [
        (
            "centroids against the CPU's",
            centroid_ratio(x.view(), r.centroids.view(), cpu.centroids.view()),
        ),
        ("inertia", inertia_ratio(x.view(), &r)),
        (
            "inertia history",
            history_ratio(x.view(), &r.inertia_history),
        ),
    ];
    for (what, ratio) in ratios {
        assert!(ratio <= 1.0, "{what}: error/tolerance = {ratio:.3e}");
    }
    assert_eq!(b.predict(x.view(), r.centroids.view()).unwrap(), r.labels);
    // Bad input is rejected by the shared checks.
    let too_many = KMeansConfig::new(n + 1);
    assert!(matches!(
        b.kmeans(x.view(), &too_many),
        Err(Error::InvalidArgument { .. })
    ));
}

crate::common::both_dtypes_test!(
    kmeans_matches_the_cpu_reference_and_the_definition,
    kmeans_checks
);

#[test]
#[ignore = "needs a CUDA device"]
fn kmeans_steps_can_be_driven_by_hand() {
    let b = backend();
    let x = blobs::<f32>(50, 5);
    let n = x.nrows();
    let dx = b.upload(x.view()).unwrap();
    let mut c = b.upload(x.slice(s![0..4, ..])).unwrap();
    let mut labels = b.unlabeled(n).unwrap();
    assert!(
        matches!(
            b.download_indices(&labels),
            Err(Error::InvalidArgument { .. })
        ),
        "labels no assignment wrote cannot be read back"
    );
    let first = b.assign_dev(&dx, &c, &mut labels).unwrap();
    assert_eq!(first.changed, n, "every label changes from none");
    let l1 = b.download_indices(&labels).unwrap();
    assert!(l1.iter().enumerate().all(|(i, &l)| l == i % 4), "{l1}");
    b.update_dev(&dx, &labels, &mut c).unwrap();
    // The update moves each centroid to the mean of its points.
    let mut means = Array2::<f32>::zeros((4, 3));
    for j in 0..4 {
        let members = x.select(ndarray::Axis(0), &(j..n).step_by(4).collect::<Vec<_>>());
        means
            .row_mut(j)
            .assign(&members.mean_axis(ndarray::Axis(0)).unwrap());
    }
    let ratio = centroid_ratio(x.view(), b.download(&c).unwrap().view(), means.view());
    assert!(ratio <= 1.0, "centroids: error/tolerance = {ratio:.3e}");
    let second = b.assign_dev(&dx, &c, &mut labels).unwrap();
    let l2 = b.download_indices(&labels).unwrap();
    let moved = l1.iter().zip(&l2).filter(|(p, q)| p != q).count();
    assert_eq!(second.changed, moved);
    let ratio = history_ratio(x.view(), &[first.inertia, second.inertia]);
    assert!(ratio <= 1.0, "{second:?} after {first:?}");
}

/// The vendor's steps (GEMM distances, the runtime's argmin) and the `cuda` backend's
/// fused ones label well-separated points alike, and both update centroids with the
/// runtime's deterministic kernel: the same labels give the same bits. 12,000 points
/// make the update sum several chunks of points.
fn kmeans_agrees_with_cuda<T: BlasElement>(vendor: &CublasBackend, ours: &CudaBackend)
where
    CudaBackend: Ops<T>,
{
    let x = blobs::<T>(3000, 9);
    let (n, d) = x.dim();
    let start = x.slice(s![0..4, ..]).to_owned();
    // One upload, read by both backends.
    let dx = vendor.upload(x.view()).unwrap();
    let (mut cv, mut co) = (
        vendor.upload(start.view()).unwrap(),
        ours.upload(start.view()).unwrap(),
    );
    let (mut lv, mut lo) = (vendor.unlabeled(n).unwrap(), ours.unlabeled(n).unwrap());
    for step in 0..3 {
        let av = vendor.assign_dev(&dx, &cv, &mut lv).unwrap();
        let ao = ours.assign_dev(&dx, &co, &mut lo).unwrap();
        let labels = vendor.download_indices(&lv).unwrap();
        assert_eq!(
            labels,
            ours.download_indices(&lo).unwrap(),
            "step {step}: labels"
        );
        assert_eq!(av.changed, ao.changed, "step {step}");
        // The inertias differ by the rounding of two ways of forming the distances.
        let c = vendor.download(&cv).unwrap();
        let spread: f64 = labels
            .iter()
            .enumerate()
            .map(|(i, &l)| norm2(x.row(i)) + norm2(c.row(l)))
            .sum();
        let allowed = 2.0 * tolerance::distance::<T>(d) * spread;
        assert!(
            (av.inertia - ao.inertia).abs() <= allowed,
            "step {step}: inertia {} against {}",
            av.inertia,
            ao.inertia
        );
        vendor.update_dev(&dx, &lv, &mut cv).unwrap();
        ours.update_dev(&dx, &lo, &mut co).unwrap();
        let (gv, go) = (vendor.download(&cv).unwrap(), ours.download(&co).unwrap());
        assert!(same_bits(&gv, &go), "step {step}: centroids\n{gv}\n{go}");
        // The vendor's labels are operands of the cuda backend's update too.
        let mut cross = ours.upload(c.view()).unwrap();
        ours.update_dev(&dx, &lv, &mut cross).unwrap();
        assert!(
            same_bits(&ours.download(&cross).unwrap(), &gv),
            "step {step}"
        );
    }
    // Whole runs from the same start take the same path.
    let config = KMeansConfig::new(4).init(Init::Given(start.mapv(|v| v.as_f64())));
    let (fv, fo) = (
        vendor.kmeans_dev(&dx, &config).unwrap(),
        ours.kmeans_dev(&dx, &config).unwrap(),
    );
    assert_eq!((fv.iterations, fv.converged), (fo.iterations, fo.converged));
    assert_eq!(
        vendor.download_indices(&fv.labels).unwrap(),
        ours.download_indices(&fo.labels).unwrap()
    );
    assert!(same_bits(
        &vendor.download(&fv.centroids).unwrap(),
        &ours.download(&fo.centroids).unwrap()
    ));
}

#[test]
#[ignore = "needs a CUDA device"]
fn kmeans_steps_agree_with_the_cuda_backend_and_update_to_the_same_bits() {
    let vendor = backend();
    let mut ours = cuda();
    // The fused variant updates with the runtime's kernel; `atomic` does not.
    ours.set_variant(Family::KMeans, "fused").unwrap();
    assert_eq!(Device::place(&vendor), Device::place(&ours));
    kmeans_agrees_with_cuda::<f32>(&vendor, &ours);
    kmeans_agrees_with_cuda::<f64>(&vendor, &ours);
}
