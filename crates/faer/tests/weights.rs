//! Sample weights on the two CPU backends: all-ones weights are no weights (to the
//! bit), integer weights are duplicated points, weight 0 is a removed point, and no
//! start holds a point of weight 0.
//!
//! The data are small multiples of 1/8, so every weighted sum and every sum of copies is
//! exact in f64 (a few dozen bits at most): the means, hence the centroids and the
//! labels, are then equal to the bit, and only the inertias (sums of rounded squared
//! distances) differ, within the error bounds stated where they are compared.

use ndarray::{Array1, Array2, Axis};
use ndgpu_conformance::data::{uniform_points, Rng};
use ndgpu_core::{init_centroids, tolerance, Cluster, Element, Init, KMeansConfig, KMeansResult};
use ndgpu_cpu::CpuBackend;
use ndgpu_faer::FaerBackend;

/// Three separated groups of points on the 1/8 grid, N×2.
fn grid_blobs<T: Element>(rng: &mut Rng, n: usize) -> Array2<T> {
    Array2::from_shape_fn((n, 2), |(i, c)| {
        let centre = [0.0, 40.0, -40.0][i % 3] + if c == 1 { 20.0 } else { 0.0 };
        T::from_f64(centre + (rng.below(33) as f64 - 16.0) / 8.0)
    })
}

/// The first point of each of the three groups as given centroids.
fn firsts<T: Element>(x: &Array2<T>) -> Init {
    Init::Given(Array2::from_shape_fn((3, 2), |(j, c)| x[[j, c]].as_f64()))
}

/// How far two inertias of the same fit may differ: each is a sum of M rounded
/// nonnegative terms in f64 (`tolerance::sum::<f64>(M)` relative, for either), plus,
/// for a backend whose per-point distances depend on the point's place in a block
/// (faer's GEMM), twice [`tolerance::distance`] for `T` on every term.
fn inertia_slack<T: Element>(
    exact_distances: bool,
    m: usize,
    x: &Array2<T>,
    w: &[f64],
    r: &KMeansResult<T>,
) -> f64 {
    let sums = 2.0 * tolerance::sum::<f64>(m) * r.inertia;
    if exact_distances {
        return sums;
    }
    let norm2 = |v: ndarray::ArrayView1<T>| v.iter().map(|a| a.as_f64().powi(2)).sum::<f64>();
    let spread: f64 = x
        .rows()
        .into_iter()
        .zip(&r.labels)
        .zip(w)
        .map(|((p, &l), wi)| wi * (norm2(p) + norm2(r.centroids.row(l))))
        .sum();
    sums + 2.0 * tolerance::distance::<T>(x.ncols()) * spread
}

/// The fit of `x` with the weights `w`, and the unweighted fit of its rows `rows` (the
/// points repeated or left out), both from the first point of each group with tol 0;
/// asserts that they have the same centroids and each selected row the label of its
/// point.
fn weighted_and_selected<T: Element, B: Cluster<T> + ?Sized>(
    b: &B,
    x: &Array2<T>,
    w: &[f64],
    rows: &[usize],
) -> (KMeansResult<T>, KMeansResult<T>) {
    let config = KMeansConfig::new(3).init(firsts(x)).tol(0.0);
    let weighted = config.clone().sample_weight(Array1::from(w.to_vec()));
    let r = b.kmeans(x.view(), &weighted).unwrap();
    let s = b.kmeans(x.select(Axis(0), rows).view(), &config).unwrap();
    assert_eq!(r.centroids, s.centroids);
    let labels: Vec<usize> = rows.iter().map(|&i| r.labels[i]).collect();
    assert_eq!(labels, s.labels.to_vec());
    (r, s)
}

/// The test `$test`: runs `$check` on the reference (whose distances do not depend on
/// where a point is: `true`) and on faer, for f32 and f64, each from its own seed.
macro_rules! on_both {
    ($test:ident: $check:ident) => {
        #[test]
        fn $test() {
            let (cpu, faer) = (CpuBackend::new(), FaerBackend::new());
            $check::<f32, _>(&cpu, true, &mut Rng::new(1));
            $check::<f64, _>(&cpu, true, &mut Rng::new(2));
            $check::<f32, _>(&faer, false, &mut Rng::new(3));
            $check::<f64, _>(&faer, false, &mut Rng::new(4));
        }
    };
}

fn ones_are_no_weights<T: Element, B: Cluster<T> + ?Sized>(b: &B, _exact: bool, rng: &mut Rng) {
    let x = uniform_points::<T>(rng, 500, 3);
    let inits = [
        Init::KMeansPlusPlus,
        Init::kmeans_parallel(),
        Init::Random,
        Init::Given(Array2::from_shape_fn((7, 3), |(j, c)| x[[j, c]].as_f64())),
    ];
    for init in inits {
        for seed in 0..4 {
            let config = KMeansConfig::new(7).init(init.clone()).seed(seed).tol(0.0);
            let plain = b.kmeans(x.view(), &config).unwrap();
            let ones = config.clone().sample_weight(Array1::ones(500));
            let weighted = b.kmeans(x.view(), &ones).unwrap();
            assert_eq!(plain, weighted, "init {} seed {seed}", init.name());
        }
    }
}

on_both!(all_ones_weights_are_no_weights_to_the_bit: ones_are_no_weights);

fn duplicates<T: Element, B: Cluster<T> + ?Sized>(b: &B, exact: bool, rng: &mut Rng) {
    let n = 120;
    let x = grid_blobs::<T>(rng, n);
    let counts: Vec<usize> = (0..n).map(|_| 1 + rng.below(4)).collect();
    let w: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
    let copies: Vec<usize> = (0..n)
        .flat_map(|i| std::iter::repeat_n(i, counts[i]))
        .collect();
    let (r, d) = weighted_and_selected(b, &x, &w, &copies);
    assert_eq!(r.iterations, d.iterations);
    let slack = inertia_slack(exact, copies.len(), &x, &w, &r);
    for (a, b) in r.inertia_history.iter().zip(&d.inertia_history) {
        assert!(
            (a - b).abs() <= slack,
            "inertia {a} vs duplicated {b} (slack {slack:e})"
        );
    }
}

on_both!(integer_weights_are_duplicated_points: duplicates);

fn removals<T: Element, B: Cluster<T> + ?Sized>(b: &B, exact: bool, rng: &mut Rng) {
    let n = 150;
    let x = grid_blobs::<T>(rng, n);
    // Every fifth point (none of the three given centroids) weighs 0.
    let w: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i % 5 != 4))).collect();
    let kept: Vec<usize> = (0..n).filter(|&i| w[i] > 0.0).collect();
    let (r, k) = weighted_and_selected(b, &x, &w, &kept);
    // The same terms, and zeros: within the sums' bound (the distances of faer's
    // blocks aside).
    let slack = inertia_slack(exact, n, &x, &w, &r);
    assert!(
        (r.inertia - k.inertia).abs() <= slack,
        "{} vs {}",
        r.inertia,
        k.inertia
    );
}

on_both!(weight_zero_is_a_removed_point: removals);

fn starts<T: Element, B: Cluster<T> + ?Sized>(b: &B, _exact: bool, rng: &mut Rng) {
    let n = 200;
    let x = uniform_points::<T>(rng, n, 2);
    // One point in four of positive weight; and only two, for k = 3 (the draws past
    // them fall back to the weights).
    let quarter = Array1::from_shape_fn(n, |i| if i % 4 == 2 { 0.5 + i as f64 } else { 0.0 });
    let two = Array1::from_shape_fn(n, |i| f64::from(u8::from(i == 17 || i == 150)));
    let sparse_parallel = Init::KMeansParallel {
        oversampling: 0.05,
        rounds: 1,
    };
    for (w, k) in [(quarter, 8), (two, 3)] {
        for init in [Init::KMeansPlusPlus, sparse_parallel.clone(), Init::Random] {
            if matches!(init, Init::Random) && w.iter().filter(|&&v| v > 0.0).count() < k {
                continue;
            }
            for seed in 0..20 {
                let config = KMeansConfig::new(k)
                    .init(init.clone())
                    .seed(seed)
                    .sample_weight(w.clone());
                let c = init_centroids(x.view(), &config).unwrap();
                let on_b = b.seed_dev(&b.upload(x.view()).unwrap(), &config).unwrap();
                assert_eq!(b.download(&on_b).unwrap(), c);
                for row in c.rows() {
                    let i = x.rows().into_iter().position(|p| p == row).unwrap();
                    assert!(
                        w[i] > 0.0,
                        "init {} seed {seed}: point {i} of weight 0",
                        init.name()
                    );
                }
            }
        }
    }
}

on_both!(no_start_holds_a_point_of_weight_zero: starts);
