//! k-means cases with known answers: exact ties, an empty cluster, no dimensions, all
//! points equal, points that repeat, and fewer distinct points than k.

use ndarray::{array, Array2};
use ndgpu_core::{Element, Init, KMeansConfig, Ops};

use super::{check_properties, check_same_as_cpu, fits};
use crate::data::{blobs, Rng};
use crate::report::Recorder;

/// A matrix from rows of f64 values.
fn rows<T: Element>(a: Array2<f64>) -> Array2<T> {
    a.mapv(T::from_f64)
}

/// Every special case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    // Squared distances 1 and 1 are exact in any form (direct or expanded), so the
    // tie is real and the lowest index must win.
    let x = rows::<T>(array![[1.0], [3.0], [0.0], [4.0]]);
    let c = rows::<T>(array![[0.0], [2.0], [4.0]]);
    rec.case("predict: exact ties go to the lowest index", |v| {
        let p = v.ok(b.predict(x.view(), c.view()));
        let want = array![0usize, 1, 0, 2];
        v.require(p.as_ref() == Some(&want), || {
            format!("got {p:?}, expected {want}")
        });
    });
    let x3 = rows::<T>(array![[1.0], [0.0], [2.0]]);
    let config = KMeansConfig::new(2)
        .init(Init::Given(array![[0.0], [2.0]]))
        .max_iter(1);
    rec.case("kmeans: one step with an exact tie", |v| {
        let Some(r) = v.ok(b.kmeans(x3.view(), &config)) else {
            return;
        };
        v.require(r.labels == array![0, 0, 1], || {
            format!("labels {}, expected [0, 0, 1]", r.labels)
        });
        v.require(r.iterations == 1 && !r.converged, || {
            format!(
                "{} iterations, converged {}: expected 1, false",
                r.iterations, r.converged
            )
        });
        v.require(r.centroids == rows::<T>(array![[0.0], [2.0]]), || {
            format!("centroids {} moved after the last assignment", r.centroids)
        });
        v.require(r.inertia == 1.0, || {
            format!("inertia {}, expected 1", r.inertia)
        });
    });

    // Two blobs and a third centroid far away: it never gets a point, so it stays.
    let (x, _) = blobs::<T>(rng, 2, 30, 3);
    let far = [1e4, -1e4, 1e4];
    let given = Array2::from_shape_fn((3, 3), |(j, c)| match j {
        0 => x[[0, c]].as_f64(),
        1 => x[[30, c]].as_f64(),
        _ => far[c],
    });
    let config = KMeansConfig::new(3).init(Init::Given(given));
    rec.case("kmeans: an empty cluster keeps its centroid", |v| {
        let Some((r, c)) = fits(v, b, x.view(), &config) else {
            return;
        };
        check_properties(v, b, x.view(), &config, &r);
        if !v.passed() {
            return;
        }
        check_same_as_cpu(v, x.view(), &config, &r, &c);
        let kept = (0..3).all(|col| r.centroids[[2, col]].as_f64() == far[col]);
        v.require(kept, || {
            format!("empty cluster's centroid moved to {}", r.centroids.row(2))
        });
        v.require(!r.labels.iter().any(|&l| l == 2), || {
            "a point joined the far centroid".into()
        });
    });

    // All points equal, and each point twice or more. The coordinates are exact in f32
    // with few mantissa bits, so every sum of copies (in any order) and every mean is
    // exact: the answers are known to the bit.
    let point = [1.5, -2.25, 3.0];
    let same = Array2::from_shape_fn((12, 3), |(_, c)| T::from_f64(point[c]));
    let pair = [[1.5, -2.25, 3.0], [-40.0, 8.5, 0.75]];
    // Six copies of each, interleaved.
    let twice = Array2::from_shape_fn((12, 3), |(i, c)| T::from_f64(pair[i % 2][c]));
    for (init, seed) in [(Init::KMeansPlusPlus, 5), (Init::Random, 6)] {
        let name = match init {
            Init::Random => "random",
            _ => "k-means++",
        };
        // Every starting centroid is the point, every distance 0: every label is 0
        // (ties go to the lowest index), the other clusters stay empty and keep the
        // point as centroid, the inertia is 0 and the second assignment changes nothing.
        let config = KMeansConfig::new(3).init(init.clone()).seed(seed);
        rec.case(format!("kmeans: 12 equal points, k=3, init={name}"), |v| {
            let Some(r) = v.ok(b.kmeans(same.view(), &config)) else {
                return;
            };
            check_properties(v, b, same.view(), &config, &r);
            v.require(r.labels.iter().all(|&l| l == 0), || {
                format!("labels {}", r.labels)
            });
            let at_point = r
                .centroids
                .rows()
                .into_iter()
                .all(|c| c.iter().zip(point).all(|(x, p)| x.as_f64() == p));
            v.require(at_point, || format!("centroids {}", r.centroids));
            v.require(r.iterations == 2 && r.converged && r.inertia == 0.0, || {
                format!(
                    "{} iterations, converged {}, inertia {}",
                    r.iterations, r.converged, r.inertia
                )
            });
        });
        // Two distinct points, six copies each. With k = 2 each becomes a centroid
        // (k-means++ never picks a point at distance 0 while another has weight; a
        // random start may pick two copies of one point, and then one cluster takes
        // everything first); with k = 3 a third centroid repeats one of them. The
        // reference settles which; the answer must match it to the bit.
        for k in [2, 3] {
            let config = KMeansConfig::new(k).init(init.clone()).seed(seed);
            rec.case(
                format!("kmeans: 2 points 6 times each, k={k}, init={name}"),
                |v| {
                    let Some((r, c)) = fits(v, b, twice.view(), &config) else {
                        return;
                    };
                    check_properties(v, b, twice.view(), &config, &r);
                    check_same_as_cpu(v, twice.view(), &config, &r, &c);
                    v.require(r.centroids == c.centroids && r.inertia == c.inertia, || {
                        format!(
                            "centroids {} inertia {}, cpu reference {} inertia {}",
                            r.centroids, r.inertia, c.centroids, c.inertia
                        )
                    });
                },
            );
        }
    }

    // No dimensions: every distance is 0, every label 0 (the lowest index); the second
    // assignment changes nothing.
    let x0 = Array2::<T>::zeros((5, 0));
    let config = KMeansConfig::new(2);
    rec.case("kmeans: 5 points with d=0", |v| {
        let Some(r) = v.ok(b.kmeans(x0.view(), &config)) else {
            return;
        };
        v.require(r.labels.iter().all(|&l| l == 0), || {
            format!("labels {}", r.labels)
        });
        v.require(r.centroids.dim() == (2, 0), || {
            format!("centroids {:?}", r.centroids.dim())
        });
        v.require(r.iterations == 2 && r.converged && r.inertia == 0.0, || {
            format!(
                "{} iterations, converged {}, inertia {}",
                r.iterations, r.converged, r.inertia
            )
        });
    });

    // Four points of two distinct values and k = 3: two clusters hold the points, the
    // third is empty (its centroid repeats one of the others, and ties go to the lower
    // index) and the result says which.
    let x4 = rows::<T>(array![[0.0, 1.0], [2.0, 3.0], [0.0, 1.0], [2.0, 3.0]]);
    for (init, seed) in [(Init::KMeansPlusPlus, 0), (Init::Random, 1)] {
        let config = KMeansConfig::new(3).init(init).seed(seed);
        let name = config.init.name();
        rec.case(
            format!("kmeans: 2 distinct points, k=3, init={name}"),
            |v| {
                let Some(r) = v.ok(b.kmeans(x4.view(), &config)) else {
                    return;
                };
                check_properties(v, b, x4.view(), &config, &r);
                let used: Vec<usize> = (0..3).filter(|j| r.labels.iter().any(|l| l == j)).collect();
                v.require(used.len() == 2 && r.empty_clusters.len() == 1, || {
                    format!(
                        "labels {} (clusters used {used:?}), empty_clusters {:?}",
                        r.labels, r.empty_clusters
                    )
                });
                if let Some(&e) = r.empty_clusters.first() {
                    let repeats = used
                        .iter()
                        .any(|&j| r.centroids.row(j) == r.centroids.row(e));
                    v.require(repeats && r.converged && r.inertia == 0.0, || {
                        format!(
                            "centroids {}, converged {}, inertia {}",
                            r.centroids, r.converged, r.inertia
                        )
                    });
                }
            },
        );
    }
}
