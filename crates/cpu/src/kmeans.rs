//! k-means (Lloyd) and nearest-centroid prediction.
//!
//! The iteration is exactly the one documented on [`Cluster`](ndgpu_core::Cluster),
//! so every backend can be compared with this one step for step. Centroids live in
//! the element type between steps (as they do on a device); each is recomputed as the
//! f64 mean of its points and rounded once. Distances are direct squared differences
//! in f64, which are exact up to one rounding per term and never go negative.

use ndarray::{Array1, Array2, ArrayView2};
use ndgpu_core::{check, kmeans, Cluster, Element, KMeansConfig, KMeansResult, Result};

use crate::{to_f64, CpuBackend};

/// Index and squared distance of the centroid (rows of `c`, k × d, row-major) nearest
/// to `x`; ties go to the lowest index.
fn nearest(x: &[f64], c: &[f64], k: usize) -> (usize, f64) {
    let d = x.len();
    let mut best = (0, f64::INFINITY);
    for j in 0..k {
        let cj = &c[j * d..(j + 1) * d];
        let dist: f64 = x.iter().zip(cj).map(|(a, b)| (a - b) * (a - b)).sum();
        // Strict `<`: an equal distance later never replaces an earlier centroid.
        if dist < best.1 || j == 0 {
            best = (j, dist);
        }
    }
    best
}

/// The centroids of a `T` array as f64 values (exact), row-major.
fn centroids_f64<T: Element>(c: &Array2<T>) -> Vec<f64> {
    c.iter().map(|v| v.as_f64()).collect()
}

impl<T: Element> Cluster<T> for CpuBackend {
    fn kmeans(&self, x: ArrayView2<T>, config: &KMeansConfig) -> Result<KMeansResult<T>> {
        check::kmeans(x, config)?;
        let mut centroids = kmeans::init_centroids(x, config)?;
        let (n, d) = x.dim();
        let k = config.k;
        let xs = to_f64(&x);
        let xs = xs.as_slice().expect("to_f64 gives a C-ordered array");

        // `usize::MAX` is no label, so every point counts as changed in step one.
        let mut labels = ndgpu_core::host::filled_vec("kmeans", n, usize::MAX)?;
        let mut history = Vec::new();
        let mut converged = false;
        loop {
            // (1) Assign and count changes.
            let c = centroids_f64(&centroids);
            let mut changed = 0usize;
            let mut inertia = 0.0f64;
            for (i, label) in labels.iter_mut().enumerate() {
                let (j, dist) = nearest(&xs[i * d..(i + 1) * d], &c, k);
                changed += usize::from(*label != j);
                *label = j;
                inertia += dist;
            }
            history.push(inertia);
            // (2) Stop on the tolerance or the iteration cap.
            if changed as f64 <= config.tol * n as f64 {
                converged = true;
                break;
            }
            if history.len() >= config.max_iter {
                break;
            }
            // (3) Move each centroid to the mean of its points; an empty one stays.
            let mut sums = vec![0.0f64; k * d];
            let mut counts = vec![0usize; k];
            for (i, &j) in labels.iter().enumerate() {
                counts[j] += 1;
                for (s, v) in sums[j * d..(j + 1) * d].iter_mut().zip(&xs[i * d..]) {
                    *s += v;
                }
            }
            for (j, &count) in counts.iter().enumerate() {
                if count > 0 {
                    for c in 0..d {
                        centroids[[j, c]] = T::from_f64(sums[j * d + c] / count as f64);
                    }
                }
            }
        }
        Ok(KMeansResult {
            centroids,
            labels: Array1::from(labels),
            inertia: *history.last().expect("at least one assignment"),
            iterations: history.len(),
            converged,
            inertia_history: history,
        })
    }

    fn predict(&self, x: ArrayView2<T>, centroids: ArrayView2<T>) -> Result<Array1<usize>> {
        let (n, k, d) = check::predict(&x, &centroids)?;
        let c = to_f64(&centroids);
        let c = c.as_slice().expect("to_f64 gives a C-ordered array");
        let xs = to_f64(&x);
        let xs = xs.as_slice().expect("to_f64 gives a C-ordered array");
        // n is not bounded by the data's bytes when d = 0: allocate fallibly.
        let mut labels = ndgpu_core::host::filled1("predict", n, 0usize)?;
        for (i, label) in labels.iter_mut().enumerate() {
            *label = nearest(&xs[i * d..(i + 1) * d], c, k).0;
        }
        Ok(labels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;
    use ndgpu_core::Init;

    #[test]
    fn two_clusters_on_a_line() {
        let cpu = CpuBackend::new();
        let x = array![[0.0f64], [1.0], [10.0], [11.0], [12.0]];
        let config = KMeansConfig::new(2).init(Init::Given(array![[0.0], [1.0]]));
        let r = cpu.kmeans(x.view(), &config).unwrap();
        assert_eq!(r.labels, array![0, 0, 1, 1, 1]);
        assert_eq!(r.centroids, array![[0.5], [11.0]]);
        assert!(r.converged);
        assert_eq!(r.iterations, r.inertia_history.len());
        assert_eq!(r.inertia, 0.5 + 2.0);
        assert!(r.inertia_history.windows(2).all(|w| w[1] <= w[0]));
    }

    #[test]
    fn ties_go_to_the_lowest_index() {
        let cpu = CpuBackend::new();
        let x = array![[1.0f32], [3.0]];
        let c = array![[0.0f32], [2.0], [4.0]];
        assert_eq!(cpu.predict(x.view(), c.view()).unwrap(), array![0, 1]);
    }

    #[test]
    fn empty_cluster_keeps_its_centroid() {
        let cpu = CpuBackend::new();
        let x = array![[0.0f64], [1.0]];
        let config = KMeansConfig::new(2).init(Init::Given(array![[0.0], [100.0]]));
        let r = cpu.kmeans(x.view(), &config).unwrap();
        assert_eq!(r.centroids, array![[0.5], [100.0]]);
        assert_eq!(r.labels, array![0, 0]);
    }
}
