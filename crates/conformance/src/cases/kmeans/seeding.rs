//! Seeding: every backend's starting centroids equal the host reference's
//! ([`init_centroids`]) to the bit, since the reference fixes the random stream, the
//! distance arithmetic and the order of every sum a draw depends on. Also the options
//! around them (`n_init`, the stopping rules `tol` and `change_tol`) and their errors.

use ndarray::Array2;
use ndgpu_core::{init_centroids, Cluster, Element, Error, Init, KMeansConfig, Ops};

use super::Shapes;
use crate::data::{blobs, uniform_points, Rng};
use crate::report::{Recorder, Verdict};
use crate::Sizes;
use ndgpu_cpu::CpuBackend;

/// (N, d, k): k = N, d = 1, several blocks of the sample tree (2048 leaves each).
pub(super) const SMALL: Shapes<3> = &[
    [300, 4, 6],
    [97, 2, 7],
    [129, 31, 5],
    [33, 3, 33],
    [2049, 1, 4],
];
/// Past 2048² points the tree has four levels.
pub(super) const MEDIUM: Shapes<3> = &[[5000, 8, 10], [20000, 33, 64], [4_194_305, 1, 3]];

/// The starts a backend's `seed_dev` gives, downloaded.
fn seeded<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    x: &Array2<T>,
    config: &KMeansConfig,
) -> ndgpu_core::Result<Array2<T>> {
    let c = b.seed_dev(&b.upload(x.view())?, config)?;
    b.download(&c)
}

/// Requires the backend's start to be the reference's, bit for bit.
pub(super) fn same_start<T: Element, B: Ops<T> + ?Sized>(
    v: &mut Verdict,
    b: &B,
    x: &Array2<T>,
    config: &KMeansConfig,
) {
    let (Some(got), Some(want)) = (
        v.ok(seeded(b, x, config)),
        v.ok(init_centroids(x.view(), config)),
    ) else {
        return;
    };
    let first = got
        .iter()
        .zip(want.iter())
        .position(|(a, b)| a.as_f64().to_bits() != b.as_f64().to_bits());
    v.require(got.dim() == want.dim() && first.is_none(), || {
        format!(
            "start {:?} differs from the reference {:?} first at element {first:?}",
            got.dim(),
            want.dim()
        )
    });
}

/// The inits compared: k-means++, k-means‖ with many candidates, k-means‖ with at most
/// k (k-means++ draws the rest), random.
pub(super) fn inits() -> [Init; 4] {
    [
        Init::KMeansPlusPlus,
        Init::kmeans_parallel(),
        Init::KMeansParallel {
            oversampling: 0.05,
            rounds: 1,
        },
        Init::Random,
    ]
}

/// Every seeding case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    for (i, &[n, d, k]) in super::super::shapes(sizes, SMALL, MEDIUM)
        .iter()
        .enumerate()
    {
        let x = uniform_points::<T>(rng, n, d);
        for init in inits() {
            let config = KMeansConfig::new(k).init(init).seed(11 + i as u64);
            let name = format!(
                "kmeans seeding N={n} d={d} k={k} init={} equals the reference",
                config.init.name()
            );
            rec.case(name, |v| same_start(v, b, &x, &config));
        }
    }
    // Every point the same: every D² weight is 0 and draws fall back to ⌊u·N⌋.
    let same = Array2::from_elem((12, 3), T::from_f64(1.5));
    for init in inits() {
        let config = KMeansConfig::new(3).init(init).seed(4);
        let name = format!(
            "kmeans seeding: 12 equal points, init={} equals the reference",
            config.init.name()
        );
        rec.case(name, |v| same_start(v, b, &same, &config));
    }
    if sizes == Sizes::Medium {
        wide(b, rng, rec);
    }
    n_init(b, rng, rec);
    stopping(b, rng, rec);
    errors(b, rng, rec);
}

/// The stopping rules. `tol` (the centroid shift, relative to X's variance): with a
/// bound every update meets, the fit stops after the first update and one more
/// assignment; with a bound between two shifts of the iteration driven by hand, after
/// the update that first met it. `change_tol`: 1 stops after the first assignment;
/// 0 (with `tol` = 0) only when an assignment changed no label.
fn stopping<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let (x, _) = blobs::<T>(rng, 4, 200, 3);
    let cpu = CpuBackend::new();
    for (tol, want) in [(1e9, Some(2)), (0.0, None)] {
        let config = KMeansConfig::new(4).seed(2).tol(tol);
        rec.case(format!("kmeans tol={tol:e} on blobs"), |v| {
            let (Some(r), Some(c)) = (
                v.ok(b.kmeans(x.view(), &config)),
                v.ok(cpu.kmeans(x.view(), &config)),
            ) else {
                return;
            };
            super::check_properties(v, b, x.view(), &config, &r);
            super::check_same_as_cpu(v, x.view(), &config, &r, &c);
            if let Some(n) = want {
                v.require(r.iterations == n && r.converged, || {
                    format!(
                        "{} iterations (converged {}), expected {n}",
                        r.iterations, r.converged
                    )
                });
            }
        });
    }
    let u = uniform_points::<T>(rng, 400, 3);
    let labels_only = KMeansConfig::new(7).seed(5).tol(0.0);
    rec.case("kmeans change_tol=1 stops after one assignment", |v| {
        let config = labels_only.clone().change_tol(1.0);
        if let Some(r) = v.ok(b.kmeans(u.view(), &config)) {
            v.require(r.iterations == 1 && r.converged, || {
                format!("{} iterations, converged {}", r.iterations, r.converged)
            });
        }
    });
    rec.case("kmeans change_tol=0 stops when no label changed", |v| {
        let Some(r) = v.ok(b.kmeans(u.view(), &labels_only)) else {
            return;
        };
        super::check_properties(v, b, u.view(), &labels_only, &r);
        v.require(r.converged && r.iterations >= 2, || {
            format!("{} iterations, converged {}", r.iterations, r.converged)
        });
        // The last assignment changed nothing: one step fewer gives the same labels.
        let fewer = labels_only.clone().max_iter(r.iterations - 1);
        if let Some(p) = v.ok(b.kmeans(u.view(), &fewer)) {
            v.require(!p.converged && p.labels == r.labels, || {
                format!(
                    "{} assignments did not give the final labels",
                    r.iterations - 1
                )
            });
        }
    });
    rec.case(
        "kmeans tol stops at the update whose shift first meets it",
        |v| {
            let Some((shifts, variance)) = v.ok(shifts_by_hand(b, u.view(), &labels_only)) else {
                return;
            };
            // The first update whose shift is under half of every earlier one: a bound
            // between them (√2 from each) is not near a rounding of either.
            let found = (1..shifts.len()).find_map(|j| {
                let before = shifts[..j].iter().copied().fold(f64::INFINITY, f64::min);
                (shifts[j] < before / 2.0).then(|| (j + 1, (shifts[j] * before).sqrt()))
            });
            let Some((updates, bound)) = found else {
                v.require(false, || {
                    format!("no clear drop among the shifts {shifts:?}")
                });
                return;
            };
            let config = labels_only.clone().tol(bound / variance);
            if let Some(r) = v.ok(b.kmeans(u.view(), &config)) {
                v.require(r.converged && r.iterations == updates + 1, || {
                    format!(
                        "{} iterations, expected {updates} updates and one more assignment \
                     (shifts {shifts:?}, bound {bound:e})",
                        r.iterations
                    )
                });
            }
        },
    );
}

/// Lloyd's iteration driven by hand with `b`'s steps and `config`'s start, until an
/// assignment changes no label (or 100 of them): the shift Σ‖Δc‖² of each update, and
/// the mean per-dimension variance of X (in f64 on the host).
fn shifts_by_hand<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    x: ndarray::ArrayView2<T>,
    config: &KMeansConfig,
) -> ndgpu_core::Result<(Vec<f64>, f64)> {
    let dx = b.upload(x)?;
    let mut c = b.seed_dev(&dx, config)?;
    let mut labels = b.unlabeled(x.nrows())?;
    let mut shifts = Vec::new();
    while b.assign_dev(&dx, &c, &mut labels)?.changed > 0 && shifts.len() < 100 {
        let old = b.copy(&c)?;
        b.update_dev(&dx, &labels, &mut c)?;
        shifts.push(b.shift_dev(&old, &c)?);
    }
    let x64 = x.mapv(|v| v.as_f64());
    let variance = x64.var_axis(ndarray::Axis(0), 0.0).mean().unwrap_or(0.0);
    Ok((shifts, variance))
}

/// The ends of the shapes users have, D = 1024 and K = 4096: the start equals the
/// reference's and three Lloyd steps give a valid fit.
fn wide<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    for (n, d, k) in [(2000, 1024, 64), (5000, 8, 4096)] {
        let x = uniform_points::<T>(rng, n, d);
        let config = KMeansConfig::new(k).seed(3).max_iter(3);
        rec.case(
            format!("kmeans N={n} d={d} k={k}: start and three steps"),
            |v| {
                same_start(v, b, &x, &config);
                if let Some(r) = v.ok(b.kmeans(x.view(), &config)) {
                    super::check_properties(v, b, x.view(), &config, &r);
                }
            },
        );
    }
}

/// Several starts keep the fit of least inertia.
fn n_init<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let (n, d, k) = (400, 3, 7);
    let x = uniform_points::<T>(rng, n, d);
    rec.case("kmeans n_init=3 keeps the start of least inertia", |v| {
        let config = KMeansConfig::new(k).seed(21);
        let Some(best) = v.ok(b.kmeans(x.view(), &config.clone().n_init(3))) else {
            return;
        };
        let mut singles = Vec::new();
        for s in 21..24 {
            let Some(r) = v.ok(b.kmeans(x.view(), &config.clone().seed(s))) else {
                return;
            };
            singles.push(r.inertia);
        }
        let least = singles.iter().copied().fold(f64::INFINITY, f64::min);
        // Each inertia is a sum of N squared distances: runs of one start may differ by
        // its rounding (N·ε relative) where a backend adds in an order of its own.
        let slack = 4.0 * n as f64 * T::EPS * least.abs();
        v.require(best.inertia <= least + slack, || {
            format!(
                "n_init=3 gave inertia {:e}; the three starts alone {singles:?}",
                best.inertia
            )
        });
    });
}

/// Bad seeding parameters.
fn errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument { .. });
    let x = uniform_points::<T>(rng, 20, 2);
    let parallel = |oversampling, rounds| {
        KMeansConfig::new(3).init(Init::KMeansParallel {
            oversampling,
            rounds,
        })
    };
    let bad = [
        ("n_init=0", KMeansConfig::new(2).n_init(0)),
        ("k-means|| oversampling=0", parallel(0.0, 5)),
        ("k-means|| oversampling=-1", parallel(-1.0, 5)),
        ("k-means|| oversampling=NaN", parallel(f64::NAN, 5)),
        ("k-means|| oversampling=Inf", parallel(f64::INFINITY, 5)),
        ("k-means|| rounds=0", parallel(2.0, 0)),
        ("k-means|| rounds=65", parallel(2.0, 65)),
    ];
    for (what, config) in bad {
        rec.case(format!("kmeans error: {what}"), |v| {
            v.err(b.kmeans(x.view(), &config), "InvalidArgument", invalid);
        });
    }
}
