//! Cholesky (cuSOLVER) and k-means (cuBLAS distances) against host references.

use ndarray::{Array2, Axis};
use ndgpu_core::{tolerance, Cluster, Element, Error, Factorize, KMeansConfig};
use ndgpu_cublas::{BlasElement, CublasBackend};

use crate::common::*;

fn cholesky_checks<T: BlasElement>(b: &CublasBackend) {
    for (i, &n) in [1usize, 2, 17, 64, 300, 513].iter().enumerate() {
        let a = spd::<T>(n, 80 + i as u64);
        // Only the lower triangle may be read: poison the rest.
        let mut poisoned = a.clone();
        for r in 0..n {
            for c in r + 1..n {
                poisoned[[r, c]] = T::nan();
            }
        }
        let l = b.cholesky(poisoned.view()).unwrap();
        for r in 0..n {
            for c in r + 1..n {
                assert_eq!(
                    l[[r, c]],
                    T::zero(),
                    "n = {n}: upper triangle at ({r}, {c})"
                );
            }
        }
        let (af, lf) = (a.mapv(|v| v.as_f64()), l.mapv(|v| v.as_f64()));
        let ratio = one_norm(&(&af - lf.dot(&lf.t()))) / (n as f64 * T::EPS * one_norm(&af));
        assert!(
            ratio <= tolerance::CHOLESKY_RATIO,
            "n = {n}: ‖A − LLᵀ‖ ratio {ratio}"
        );

        let rhs = random::<T>((n, 3), 90 + i as u64);
        let mut l_poisoned = l.clone();
        for r in 0..n {
            for c in r + 1..n {
                l_poisoned[[r, c]] = T::nan();
            }
        }
        let x = b.cholesky_solve(l_poisoned.view(), rhs.view()).unwrap();
        assert!(x.is_standard_layout());
        let xf = x.mapv(|v| v.as_f64());
        let res = rhs.mapv(|v| v.as_f64()) - af.dot(&xf);
        let ratio = one_norm(&res) / (n as f64 * T::EPS * one_norm(&af) * one_norm(&xf));
        assert!(
            ratio <= tolerance::SOLVE_RATIO,
            "n = {n}: solve ratio {ratio}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn cholesky_and_solve_meet_the_lapack_ratios() {
    let b = backend();
    cholesky_checks::<f32>(&b);
    cholesky_checks::<f64>(&b);
    let empty = Array2::<f64>::zeros((0, 0));
    assert_eq!(b.cholesky(empty.view()).unwrap().dim(), (0, 0));
    let l = Array2::<f64>::eye(4);
    let rhs = Array2::<f64>::zeros((4, 0));
    assert_eq!(
        b.cholesky_solve(l.view(), rhs.view()).unwrap().dim(),
        (4, 0)
    );
}

fn not_positive_definite<T: BlasElement>(b: &CublasBackend) {
    // SPD except A[p][p] = −1: every leading minor up to order p is positive
    // definite, the one of order p + 1 is not. n = 300 goes through blocked code.
    for &(n, p) in &[(5usize, 2usize), (64, 0), (300, 200)] {
        let mut a = spd::<T>(n, 7);
        a[[p, p]] = T::from_f64(-1.0);
        match b.cholesky(a.view()) {
            Err(Error::NotPositiveDefinite { pivot, value }) => {
                assert_eq!(pivot, p, "n = {n}");
                // −1 minus a sum of squares: clearly negative, never re-formed as NaN.
                assert!(value <= -1.0, "n = {n}: pivot value {value}");
            }
            other => panic!("n = {n}: expected NotPositiveDefinite at {p}, got {other:?}"),
        }
    }
    // Identity but for −1 at (3, 3) and 0.5 at (3, 1): the pivot is −1 − 0.5² exactly.
    let mut a = Array2::<T>::eye(6);
    a[[3, 3]] = T::from_f64(-1.0);
    a[[3, 1]] = T::from_f64(0.5);
    match b.cholesky(a.view()) {
        Err(Error::NotPositiveDefinite { pivot, value }) => {
            assert_eq!((pivot, value), (3, -1.25));
        }
        other => panic!("expected NotPositiveDefinite at 3, got {other:?}"),
    }
    // The first pivot: nothing to subtract.
    let mut a = Array2::<T>::eye(3);
    a[[0, 0]] = T::zero();
    assert!(matches!(
        b.cholesky(a.view()),
        Err(Error::NotPositiveDefinite { pivot: 0, value }) if value == 0.0
    ));
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_matrix_that_is_not_positive_definite_names_its_pivot() {
    let b = backend();
    not_positive_definite::<f32>(&b);
    not_positive_definite::<f64>(&b);
}

/// Four well-separated blobs in 3-D, `per` points each, interleaved.
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

/// ‖v‖².
fn sq(v: ndarray::ArrayView1<f64>) -> f64 {
    v.dot(&v)
}

fn kmeans_checks<T: BlasElement>(b: &CublasBackend) {
    let x = blobs::<T>(100, 3);
    let (n, d) = x.dim();
    let config = KMeansConfig::new(4).seed(11);
    let r = b.kmeans(x.view(), &config).unwrap();
    let cpu = ndgpu_cpu::CpuBackend::new()
        .kmeans(x.view(), &config)
        .unwrap();
    assert_eq!(r.labels, cpu.labels, "labels differ from the CPU reference");
    assert_eq!((r.iterations, r.converged), (cpu.iterations, cpu.converged));
    assert_eq!(r.inertia_history.len(), r.iterations);

    let xf = x.mapv(|v| v.as_f64());
    let cf = r.centroids.mapv(|v| v.as_f64());
    // Each label is the nearest returned centroid, up to the rounding of distances.
    for i in 0..n {
        let xi = xf.row(i);
        let dist: Vec<f64> = (0..4).map(|j| sq((&xi - &cf.row(j)).view())).collect();
        let best = dist.iter().cloned().fold(f64::INFINITY, f64::min);
        let slack = tolerance::distance::<T>(d) * (sq(xi) + cf.map_axis(Axis(1), sq).sum());
        assert!(
            dist[r.labels[i]] <= best + slack,
            "point {i} is not at its nearest centroid"
        );
    }
    // Centroids: the means of their points, as on the CPU, within a sum's rounding.
    for j in 0..4 {
        let members: Vec<usize> = (0..n).filter(|&i| r.labels[i] == j).collect();
        for c in 0..d {
            let abs: f64 = members.iter().map(|&i| xf[[i, c]].abs()).sum::<f64>();
            let bound = 2.0 * tolerance::sum::<T>(members.len()) * abs / members.len() as f64
                + 2.0 * T::EPS * cf[[j, c]].abs();
            let diff = (cf[[j, c]] - cpu.centroids[[j, c]].as_f64()).abs();
            assert!(diff <= bound, "centroid {j}[{c}]: {diff:e} > {bound:e}");
        }
    }
    // Lloyd's monotonicity, up to the rounding of the expanded distances.
    let max_sq = (0..n).map(|i| sq(xf.row(i))).fold(0.0, f64::max);
    let total_sq: f64 = (0..n).map(|i| sq(xf.row(i))).sum();
    let slack = tolerance::distance::<T>(d) * (total_sq + n as f64 * max_sq);
    for w in r.inertia_history.windows(2) {
        assert!(
            w[1] <= w[0] + slack,
            "inertia rose: {:?}",
            r.inertia_history
        );
    }
    assert_eq!(b.predict(x.view(), r.centroids.view()).unwrap(), r.labels);
    // Bad input is rejected by the shared checks.
    let too_many = KMeansConfig::new(n + 1);
    assert!(matches!(
        b.kmeans(x.view(), &too_many),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
#[ignore = "needs a CUDA device"]
fn kmeans_matches_the_cpu_reference_and_the_definition() {
    let b = backend();
    kmeans_checks::<f32>(&b);
    kmeans_checks::<f64>(&b);
}

#[test]
#[ignore = "needs a CUDA device"]
fn kmeans_device_steps_can_be_driven_by_hand() {
    let b = backend();
    let gpu = b.gpu();
    let x = blobs::<f32>(50, 5);
    let start = x.slice(ndarray::s![0..4, ..]).to_owned();
    let mut s = b
        .kmeans_device(
            gpu.upload(x.view()).unwrap(),
            gpu.upload(start.view()).unwrap(),
        )
        .unwrap();
    let first = b.kmeans_assign(&mut s).unwrap();
    assert_eq!(first.changed, x.nrows(), "every label changes from −1");
    b.kmeans_update(&mut s).unwrap();
    let second = b.kmeans_assign(&mut s).unwrap();
    let xf = x.mapv(f64::from);
    let slack = tolerance::distance::<f32>(3) * 2.0 * xf.mapv(|v| v * v).sum();
    assert!(
        second.inertia <= first.inertia + slack,
        "{second:?} after {first:?}"
    );
}
