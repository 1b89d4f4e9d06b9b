//! The two steps of Lloyd's iteration; the iteration itself is the one written once on
//! [`Cluster`](ndgpu_core::Cluster), so every backend can be compared with this one step
//! for step. Centroids live in the element type between steps (as they do on a
//! device); each is recomputed as the f64 mean of its points and rounded once.
//! Distances are direct squared differences in f64, which are exact up to one rounding
//! per term and never go negative. With sample weights (their element-type values in
//! f64), a centroid is Σ wᵢ·xᵢ / Σ wᵢ (each product rounded once, sums in point order)
//! and the inertia Σ ‖xᵢ − c‖²·wᵢ.

use ndgpu_core::backend::HostStorage;
use ndgpu_core::{Assignment, ClusterKernels, Element, Error, Indices, Matrix, Points, Result};

use crate::{to_f64, CpuBackend, HERE};

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

impl<T: Element> ClusterKernels<T> for CpuBackend {
    fn assign_unchecked(&self, p: Points<T>, c: &Matrix<T>, l: &mut Indices) -> Result<Assignment> {
        let (x, w, labels) = (p.x, p.weights, l);
        let (xs, c) = (
            HERE.host_view("kmeans", "X", x)?,
            HERE.host_view("kmeans", "centroids", c)?,
        );
        let w = w
            .map(|w| HERE.host_view("kmeans", "sample weights", w))
            .transpose()?;
        let (k, d) = c.dim();
        let c = to_f64(&c);
        let c = c.as_slice().expect("to_f64 gives a C-ordered array");
        let labels: &mut HostStorage<usize> = HERE.indices_mut("kmeans", "labels", labels)?;
        let mut point = vec![0.0f64; d];
        let (mut changed, mut inertia) = (0usize, 0.0f64);
        for (i, (row, label)) in xs
            .rows()
            .into_iter()
            .zip(labels.data.iter_mut())
            .enumerate()
        {
            point.iter_mut().zip(row).for_each(|(p, v)| *p = v.as_f64());
            let (j, dist) = nearest(&point, c, k);
            // UNLABELED is never a centroid's index: every point counts in step one.
            changed += usize::from(*label != j);
            *label = j;
            inertia += match w {
                None => dist,
                Some(w) => dist * w[[i, 0]].as_f64(),
            };
        }
        Ok(Assignment { changed, inertia })
    }

    fn update_unchecked(&self, p: Points<T>, labels: &Indices, c: &mut Matrix<T>) -> Result<()> {
        let (x, w, centroids) = (p.x, p.weights, c);
        let (k, d) = centroids.dim();
        let xs = HERE.host_view("kmeans", "X", x)?;
        let labels: &HostStorage<usize> = HERE.indices("kmeans", "labels", labels)?;
        let w = w
            .map(|w| HERE.host_view("kmeans", "sample weights", w))
            .transpose()?;
        let mut sums = vec![0.0f64; k * d];
        let mut mass = vec![0.0f64; k];
        for (i, (row, &j)) in xs.rows().into_iter().zip(&labels.data).enumerate() {
            if j >= k {
                return Err(Error::invalid(
                    "kmeans",
                    format!("label {j} names no centroid (k = {k}): assign the points first"),
                ));
            }
            let sums = &mut sums[j * d..(j + 1) * d];
            match w {
                // Exactly the unweighted sums: a count, and the coordinates.
                None => {
                    mass[j] += 1.0;
                    sums.iter_mut().zip(row).for_each(|(s, v)| *s += v.as_f64());
                }
                // wᵢ and wᵢ·xᵢ, the product rounded once in f64.
                Some(w) => {
                    let wi = w[[i, 0]].as_f64();
                    mass[j] += wi;
                    sums.iter_mut()
                        .zip(row)
                        .for_each(|(s, v)| *s += wi * v.as_f64());
                }
            }
        }
        let c: &mut HostStorage<T> = HERE.matrix_mut("kmeans", "centroids", centroids)?;
        ndgpu_core::kmeans::write_means(&sums, &mass, &mut c.data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;
    use ndgpu_core::prelude::*;
    use ndgpu_core::{Init, KMeansConfig};

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
