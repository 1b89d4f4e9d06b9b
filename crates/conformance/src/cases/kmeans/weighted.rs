//! Sample weights: a weighted fit follows the reference's on separated blobs and has
//! the properties of a weighted fit elsewhere; a weighted start equals the reference's
//! to the bit (the weights enter the f64 arithmetic of every draw at the same places);
//! no start holds a point of weight 0; bad weights are refused alike.

use ndarray::{Array1, Array2};
use ndgpu_core::{init_centroids, Element, Error, Init, KMeansConfig, Ops};

use super::seeding::{inits, same_start, MEDIUM, SMALL};
use super::{run_blobs_case, run_case, Shapes};
use crate::data::{blobs, uniform_points, Rng};
use crate::report::{Recorder, Verdict};
use crate::Sizes;

/// (k, points per blob, d).
const BLOBS: Shapes<3> = &[[3, 40, 2], [5, 20, 7], [2, 50, 33]];

/// N weights: every seventh 0, the others uniform in [0.1, 3] (not exact in f32, so
/// the conversion to the element type matters).
fn weights(rng: &mut Rng, n: usize) -> Array1<f64> {
    Array1::from_shape_fn(n, |i| match i % 7 {
        3 => 0.0,
        _ => rng.uniform(0.1, 3.0),
    })
}

/// Requires every row of a start to be a point of positive weight (k-means++ and
/// random starts are points of X).
fn no_zero_weight_pick<T: Element>(v: &mut Verdict, x: &Array2<T>, w: &Array1<f64>, c: &Array2<T>) {
    for (j, row) in c.rows().into_iter().enumerate() {
        let of_weight = x
            .rows()
            .into_iter()
            .zip(w.iter())
            .any(|(p, &wi)| wi > 0.0 && p == row);
        v.require(of_weight, || {
            format!("start {j} is no point of positive weight")
        });
    }
}

/// k clusters from `init` and `seed`, with the sample weights `w`.
fn weighted(k: usize, init: Init, seed: u64, w: &Array1<f64>) -> KMeansConfig {
    KMeansConfig::new(k)
        .init(init)
        .seed(seed)
        .sample_weight(w.clone())
}

/// Requires the start of `config` to equal the reference's and to hold no point of
/// weight 0 (`w`: the weights of `config`).
fn start_of_positive_weight<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    x: &Array2<T>,
    w: &Array1<f64>,
    config: &KMeansConfig,
) {
    same_start(v, b, x, config);
    if let Some(c) = v.ok(init_centroids(x.view(), config)) {
        no_zero_weight_pick(v, x, w, &c);
    }
}

/// Every weighted case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    for (i, &[k, per, d]) in BLOBS.iter().enumerate() {
        let (x, blob) = blobs::<T>(rng, k, per, d);
        let w = weights(rng, k * per);
        let firsts = Array2::from_shape_fn((k, d), |(j, c)| x[[j * per, c]].as_f64());
        for init in [
            Init::Given(firsts),
            Init::KMeansPlusPlus,
            Init::kmeans_parallel(),
            Init::Random,
        ] {
            let config = weighted(k, init, 30 + i as u64, &w);
            let name = format!(
                "kmeans weighted blobs k={k} N={} d={d} init={}",
                k * per,
                config.init.name()
            );
            rec.case(name, |v| {
                run_blobs_case(v, b, x.view(), &config, (&blob, k))
            });
        }
    }
    let x = uniform_points::<T>(rng, 300, 4);
    let config = KMeansConfig::new(6)
        .tol(0.0)
        .seed(9)
        .sample_weight(weights(rng, 300));
    rec.case(
        "kmeans weighted uniform N=300 d=4 k=6 (properties only)",
        |v| run_case(v, b, x.view(), &config, false),
    );
    seeding(b, sizes, rng, rec);
    errors(b, rng, rec);
}

/// Weighted starts equal the reference's and hold no point of weight 0.
fn seeding<T: Element, B: Ops<T> + ?Sized>(b: &B, sizes: Sizes, rng: &mut Rng, rec: &mut Recorder) {
    for (i, &[n, d, k]) in super::super::shapes(sizes, SMALL, MEDIUM)
        .iter()
        .enumerate()
    {
        let x = uniform_points::<T>(rng, n, d);
        let w = weights(rng, n);
        // A random start needs k points of positive weight (k = N has not).
        let positive = w.iter().filter(|&&v| v > 0.0).count();
        let fits = |init: &Init| !matches!(init, Init::Random) || positive >= k;
        for init in inits().into_iter().filter(fits) {
            let config = weighted(k, init, 41 + i as u64, &w);
            let name = format!(
                "kmeans weighted seeding N={n} d={d} k={k} init={} equals the reference",
                config.init.name()
            );
            rec.case(name, |v| same_start(v, b, &x, &config));
        }
    }
    // Every D²·w is 0 from the first centre on (12 equal points; 2 distinct points of
    // positive weight for k = 3): the draws fall back to the weights, never to a point
    // of weight 0.
    let same = Array2::from_elem((12, 3), T::from_f64(1.5));
    let few = uniform_points::<T>(rng, 12, 3);
    let only = |pos: &[usize]| Array1::from_shape_fn(12, |i| f64::from(u8::from(pos.contains(&i))));
    for (what, x, w) in [
        ("12 equal points, 9 of weight 0", &same, only(&[2, 5, 11])),
        ("12 points, 10 of weight 0", &few, only(&[4, 9])),
    ] {
        for init in [Init::KMeansPlusPlus, Init::kmeans_parallel()] {
            let config = weighted(3, init, 4, &w);
            let name = format!(
                "kmeans weighted seeding: {what}, k=3, init={}",
                config.init.name()
            );
            rec.case(name, |v| start_of_positive_weight(v, b, x, &w, &config));
        }
    }
    let x = uniform_points::<T>(rng, 40, 2);
    let w = Array1::from_shape_fn(40, |i| f64::from(u8::from(i % 4 == 1)));
    let config = weighted(8, Init::Random, 5, &w);
    rec.case(
        "kmeans weighted seeding: random among 10 of 40 points",
        |v| start_of_positive_weight(v, b, &x, &w, &config),
    );
}

/// Bad sample weights.
fn errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument { .. });
    let non_finite = |e: &Error| matches!(e, Error::NonFinite { .. });
    let x = uniform_points::<T>(rng, 6, 2);
    let with = |w: Vec<f64>| KMeansConfig::new(2).sample_weight(Array1::from(w));
    let ones = vec![1.0; 6];
    let mut negative = ones.clone();
    negative[4] = -0.5;
    let bad = [
        ("5 weights for 6 points", with(vec![1.0; 5])),
        ("a negative weight", with(negative)),
        ("every weight 0", with(vec![0.0; 6])),
        (
            "random start, 1 point of positive weight for k=2",
            with(vec![0.0, 0.0, 3.0, 0.0, 0.0, 0.0]).init(Init::Random),
        ),
    ];
    for (what, config) in bad {
        rec.case(format!("kmeans error: {what}"), |v| {
            v.err(b.kmeans(x.view(), &config), "InvalidArgument", invalid);
        });
    }
    for bad in [f64::NAN, f64::INFINITY] {
        let mut w = ones.clone();
        w[2] = bad;
        rec.case(format!("kmeans error: a weight of {bad}"), |v| {
            v.err(
                b.kmeans(x.view(), &with(w.clone())),
                "NonFinite",
                non_finite,
            );
        });
    }
}
