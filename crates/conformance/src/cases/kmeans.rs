//! k-means and predict.
//!
//! On well-separated blobs no point is near a tie, so every correct backend follows
//! the CPU reference step for step: same labels, iterations and convergence, centroids
//! within a mean's rounding. On uniform data near-ties are common and trajectories may
//! legitimately part, so only the properties of each result are checked there.

use ndarray::{array, Array2, ArrayView2};
use ndgpu_core::kmeans::sample_weights;
use ndgpu_core::{Cluster, Element, Error, Init, KMeansConfig, KMeansResult, Ops};
use ndgpu_cpu::CpuBackend;

use super::Shapes;
use crate::compare::{
    centroid_ratio, check_kmeans_shape, check_nearest, check_predict_agrees,
    weighted_centroid_ratio, weighted_history_ratio, weighted_inertia_ratio,
};
use crate::data::{blobs, uniform_points, Laid, Layout, Rng};
use crate::report::{Recorder, Verdict};
use crate::Sizes;

mod seeding;
mod special;
mod weighted;

/// (k, points per blob, d).
const BLOBS_SMALL: Shapes<3> = &[[3, 40, 2], [5, 20, 7], [1, 30, 3], [4, 33, 1], [2, 50, 33]];
const BLOBS_MEDIUM: Shapes<3> = &[[8, 625, 16], [10, 500, 33]];
/// (N, d, k), including k = N.
const UNIFORM_SMALL: Shapes<3> = &[[300, 4, 6], [97, 2, 7], [129, 31, 5], [33, 3, 33]];
const UNIFORM_MEDIUM: Shapes<3> = &[[5000, 8, 10], [2000, 33, 31]];

/// The sample weights of `config` as every backend computes with them (their values in
/// `T`), in f64; `None` without weights (or when the config refuses them).
pub(crate) fn weights_of<T: Element>(config: &KMeansConfig) -> Option<Vec<f64>> {
    let w = sample_weights::<T>(config).ok().flatten()?;
    Some(w.iter().map(|v| v.as_f64()).collect())
}

/// Checks everything a single result must satisfy, including `predict` on it.
pub(crate) fn check_properties<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    x: ArrayView2<T>,
    config: &KMeansConfig,
    r: &KMeansResult<T>,
) {
    if let Err(e) = check_kmeans_shape(x, config, r) {
        v.require(false, || e);
        return;
    }
    if let Err(e) = check_nearest(x, r.centroids.view(), r.labels.view()) {
        v.require(false, || format!("labels: {e}"));
    }
    let w = weights_of::<T>(config);
    let ir = weighted_inertia_ratio(x, w.as_deref(), r);
    v.ratio(ir, || {
        format!(
            "inertia {:e} is not that of the labels (error/tolerance {ir:.3e})",
            r.inertia
        )
    });
    let hr = weighted_history_ratio(x, w.as_deref(), &r.inertia_history);
    v.ratio(hr, || {
        format!(
            "inertia increased: {:?} (error/tolerance {hr:.3e})",
            r.inertia_history
        )
    });
    if let Some(p) = v.ok(b.predict(x, r.centroids.view())) {
        if let Err(e) = check_predict_agrees(x, r.centroids.view(), r.labels.view(), p.view()) {
            v.require(false, || e);
        }
    } // The empty clusters: those no point of positive weight is labelled with.
    let mut held = vec![false; config.k];
    for (i, &l) in r.labels.iter().enumerate() {
        if let Some(h) = held.get_mut(l) {
            *h |= w.as_ref().is_none_or(|w| w[i] > 0.0);
        }
    }
    let empty: Vec<usize> = (0..config.k).filter(|&j| !held[j]).collect();
    v.require(r.empty_clusters == empty, || {
        format!(
            "empty_clusters {:?}, but the labels leave {empty:?} empty",
            r.empty_clusters
        )
    });
}

/// Requires `r` to follow the reference's trajectory.
pub(crate) fn check_same_as_cpu<T: Element>(
    v: &mut Verdict,
    x: ArrayView2<T>,
    config: &KMeansConfig,
    r: &KMeansResult<T>,
    cpu: &KMeansResult<T>,
) {
    let diff = r
        .labels
        .iter()
        .zip(cpu.labels.iter())
        .position(|(a, b)| a != b);
    v.require(r.labels.len() == cpu.labels.len() && diff.is_none(), || {
        let i = diff.unwrap_or(0);
        format!(
            "labels differ from the cpu reference first at point {i}: {:?} vs {:?}",
            r.labels.get(i),
            cpu.labels.get(i)
        )
    });
    v.require(
        r.iterations == cpu.iterations && r.converged == cpu.converged,
        || {
            format!(
                "{} iterations (converged: {}), cpu reference {} ({})",
                r.iterations, r.converged, cpu.iterations, cpu.converged
            )
        },
    );
    let cr = match config.sample_weight {
        None => centroid_ratio(x, r.centroids.view(), cpu.centroids.view()),
        Some(_) => weighted_centroid_ratio(x, r.centroids.view(), cpu.centroids.view()),
    };
    v.ratio(cr, || {
        format!("centroids differ from the cpu reference (error/tolerance {cr:.3e})")
    });
}

/// Whether `labels` put every blob in its own cluster.
pub(crate) fn recovers(labels: &[usize], blob: &[usize], k: usize) -> bool {
    let mut label_of = vec![None; k];
    let mut used = vec![false; k];
    for (&l, &b) in labels.iter().zip(blob) {
        match label_of[b] {
            None if !used[l] => {
                label_of[b] = Some(l);
                used[l] = true;
            }
            Some(m) if m == l => {}
            _ => return false,
        }
    }
    true
}

/// The fits of `x` on `b` and on the CPU reference (a failure of either recorded), if
/// both succeed.
pub(crate) fn fits<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    x: ArrayView2<T>,
    config: &KMeansConfig,
) -> Option<(KMeansResult<T>, KMeansResult<T>)> {
    v.both(b.kmeans(x, config), CpuBackend::new().kmeans(x, config))
}

/// One run on `b` and on the CPU, both checked; with `compare` the two trajectories
/// must also agree.
pub(crate) fn run_case<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    x: ArrayView2<T>,
    config: &KMeansConfig,
    compare: bool,
) {
    let Some((r, c)) = fits(v, b, x, config) else {
        return;
    };
    check_properties(v, b, x, config, &r);
    if v.passed() && compare {
        check_same_as_cpu(v, x, config, &r, &c);
    }
}

/// [`run_case`] on blobs (`blob`: the blob of each point, of `k`), compared with the
/// reference only when its first assignment already puts each blob in its own cluster:
/// then no step has a point near a tie. (A start with two centroids in one blob splits
/// it through dense data, where rounding may legitimately send points either way.)
pub(crate) fn run_blobs_case<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    x: ArrayView2<T>,
    config: &KMeansConfig,
    (blob, k): (&[usize], usize),
) {
    let first = CpuBackend::new().kmeans(x, &config.clone().max_iter(1));
    let compare = first.is_ok_and(|f| recovers(&f.labels.to_vec(), blob, k));
    run_case(v, b, x, config, compare);
}

/// Every k-means case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    for (i, &[k, per, d]) in super::shapes(sizes, BLOBS_SMALL, BLOBS_MEDIUM)
        .iter()
        .enumerate()
    {
        let (x, blob) = blobs::<T>(rng, k, per, d);
        let firsts = Array2::from_shape_fn((k, d), |(j, c)| x[[j * per, c]].as_f64());
        let layout = Layout::nth(i);
        let laid = Laid::new(&x, layout);
        for (j, init) in [Init::Given(firsts), Init::KMeansPlusPlus, Init::Random]
            .into_iter()
            .enumerate()
        {
            // A one-step cap on one of them: the result is the first assignment.
            let max_iter = if (i + j) % 4 == 3 { 1 } else { 500 };
            let config = KMeansConfig::new(k)
                .init(init)
                .seed(i as u64)
                .max_iter(max_iter);
            let name = format!(
                "kmeans blobs k={k} N={} d={d} init={} max_iter={max_iter} X:{}",
                k * per,
                config.init.name(),
                layout.name()
            );
            rec.case(name, |v| {
                run_blobs_case(v, b, laid.view(), &config, (&blob, k))
            });
        }
    }
    for (i, &[n, d, k]) in super::shapes(sizes, UNIFORM_SMALL, UNIFORM_MEDIUM)
        .iter()
        .enumerate()
    {
        let x = uniform_points::<T>(rng, n, d);
        let layout = Layout::nth(i + 1);
        let laid = Laid::new(&x, layout);
        for (init, change_tol) in [(Init::KMeansPlusPlus, 1e-3), (Init::Random, 0.0)] {
            let config = KMeansConfig::new(k)
                .init(init)
                .tol(0.0)
                .change_tol(change_tol)
                .seed(7 + i as u64);
            let name = format!(
                "kmeans uniform N={n} d={d} k={k} init={} change_tol={change_tol} X:{} (properties only)",
                config.init.name(),
                layout.name()
            );
            rec.case(name, |v| run_case(v, b, laid.view(), &config, false));
        }
    }
    special::run(b, rng, rec);
    seeding::run(b, sizes, rng, rec);
    weighted::run(b, sizes, rng, rec);
    errors(b, rng, rec);
}

/// Bad input of `kmeans` and `predict`.
fn errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument { .. });
    let non_finite = |e: &Error| matches!(e, Error::NonFinite { .. });
    let shape = |e: &Error| matches!(e, Error::ShapeMismatch { .. });
    let x = uniform_points::<T>(rng, 5, 2);
    let bad_configs = [
        ("k=0", KMeansConfig::new(0)),
        ("k=6 > N=5", KMeansConfig::new(6)),
        ("max_iter=0", KMeansConfig::new(2).max_iter(0)),
        ("change_tol=1.5", KMeansConfig::new(2).change_tol(1.5)),
        ("change_tol=-0.1", KMeansConfig::new(2).change_tol(-0.1)),
        ("tol=-0.1", KMeansConfig::new(2).tol(-0.1)),
        ("tol=NaN", KMeansConfig::new(2).tol(f64::NAN)),
        ("tol=Inf", KMeansConfig::new(2).tol(f64::INFINITY)),
        (
            "given centroids 2x3 for d=2",
            KMeansConfig::new(2).init(Init::Given(Array2::zeros((2, 3)))),
        ),
        (
            "given centroids 3x2 for k=2",
            KMeansConfig::new(2).init(Init::Given(Array2::zeros((3, 2)))),
        ),
    ];
    for (what, config) in bad_configs {
        rec.case(format!("kmeans error: {what}"), |v| {
            v.err(b.kmeans(x.view(), &config), "InvalidArgument", invalid);
        });
    }
    let nan_init = KMeansConfig::new(2).init(Init::Given(array![[0.0, 0.0], [f64::NAN, 1.0]]));
    rec.case("kmeans error: NaN in given centroids", |v| {
        v.err(b.kmeans(x.view(), &nan_init), "NonFinite", non_finite);
    });
    let empty = Array2::<T>::zeros((0, 2));
    rec.case("kmeans error: no points (k=1 > N=0)", |v| {
        v.err(
            b.kmeans(empty.view(), &KMeansConfig::new(1)),
            "InvalidArgument",
            invalid,
        );
    });
    for (what, bad) in [("NaN", T::nan()), ("Inf", T::neg_infinity())] {
        let mut xb = x.clone();
        xb[[3, 1]] = bad;
        rec.case(format!("kmeans error: {what} in X"), |v| {
            v.err(
                b.kmeans(xb.view(), &KMeansConfig::new(2)),
                "NonFinite",
                non_finite,
            );
        });
        rec.case(format!("predict error: {what} in X"), |v| {
            v.err(b.predict(xb.view(), x.view()), "NonFinite", non_finite);
        });
        rec.case(format!("predict error: {what} in the centroids"), |v| {
            v.err(b.predict(x.view(), xb.view()), "NonFinite", non_finite);
        });
    }
    let c3 = uniform_points::<T>(rng, 2, 3);
    rec.case("predict error: d=2 points, d=3 centroids", |v| {
        v.err(b.predict(x.view(), c3.view()), "ShapeMismatch", shape);
    });
    rec.case("predict error: no centroids", |v| {
        v.err(
            b.predict(x.view(), empty.view()),
            "InvalidArgument",
            invalid,
        );
    });
    rec.case("predict of no points is empty", |v| {
        let p = v.ok(b.predict(empty.view(), x.view()));
        v.require(p.as_ref().is_some_and(|p| p.is_empty()), || {
            format!("got {p:?}")
        });
    });
}
