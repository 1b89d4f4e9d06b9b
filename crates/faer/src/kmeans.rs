//! The two steps of Lloyd's iteration (the iteration itself is written once, on
//! [`Cluster`](ndgpu_core::Cluster)).
//!
//! Assignment: for a block of points, the products x·c with every centroid come from
//! one GEMM; the squared distance is ‖x‖² − 2·x·c + ‖c‖², in the element type as on a
//! GPU (the tolerance of the k-means comparisons is that of this form), clamped at 0
//! (rounding can take it below), and the nearest centroid wins, ties to the lowest
//! index. Blocks run in parallel; their counts and inertias are added in block order.
//! Update: each block of points sums its points per centroid in f64; the blocks' sums
//! are added in block order, and each centroid becomes the mean of its points, rounded
//! once (a centroid with no points stays). With sample weights, the sums are of wᵢ·xᵢ
//! and wᵢ (as the reference forms them), and each distance of the inertia is multiplied
//! by its weight in f64.

use faer::linalg::matmul::matmul;
use faer::{Accum, Par};
use ndgpu_core::backend::HostStorage;
use ndgpu_core::{Assignment, ClusterKernels, Element, Error, Indices, Matrix, Points, Result};
use rayon::prelude::*;

use crate::{mat, mat_mut, FaerBackend, FaerElement, HERE};

/// Points per block.
const BLOCK: usize = 4096;

/// ‖row‖² of each row of the row-major rows×d `data` (d > 0), each summed by four
/// accumulators (elements j ≡ 0, 1, 2, 3 mod 4, then (a₀ + a₁) + (a₂ + a₃), then the
/// last d mod 4): four independent chains of adds instead of one, in a fixed order.
fn norms<T: Element>(data: &[T], d: usize) -> Vec<T> {
    data.chunks(d)
        .map(|r| {
            let mut acc = [T::zero(); 4];
            let mut quads = r.chunks_exact(4);
            for q in &mut quads {
                for (a, &v) in acc.iter_mut().zip(q) {
                    *a += v * v;
                }
            }
            let s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
            quads.remainder().iter().fold(s, |s, &v| s + v * v)
        })
        .collect()
}

/// The nearest centroid of a point and its squared distance ‖x‖² − 2·x·c + ‖c‖², clamped
/// at 0 (rounding can push an exact zero below it; NaN stays NaN), from `row` (−2·x·c for
/// each centroid), the centroids' `c_norms` and the point's `xn`. The first centroid is
/// taken whatever its distance (NaN included); strict `<`: an equal distance later never
/// replaces an earlier one. Selects, not branches: which centroid wins is data, not a
/// pattern the branch predictor could learn.
fn nearest<T: Element>(row: &[T], c_norms: &[T], xn: T) -> (usize, T) {
    let dist = |m2xc: T, cn: T| {
        let v = xn + m2xc + cn;
        if v < T::zero() {
            T::zero()
        } else {
            v
        }
    };
    let mut best = (0usize, dist(row[0], c_norms[0]));
    for (j, (&m2xc, &cn)) in row.iter().zip(c_norms).enumerate().skip(1) {
        let v = dist(m2xc, cn);
        let closer = v < best.1;
        best.0 = if closer { j } else { best.0 };
        best.1 = if closer { v } else { best.1 };
    }
    best
}

/// The sample weights (the N×1 matrix's values), if any.
fn weights<T: Element>(w: Option<&Matrix<T>>) -> Result<Option<&[T]>> {
    w.map(|w| {
        let s: &HostStorage<T> = HERE.matrix("kmeans", "sample weights", w)?;
        Ok(&s.data[..])
    })
    .transpose()
}

impl<T: FaerElement> ClusterKernels<T> for FaerBackend {
    fn assign_unchecked(&self, p: Points<T>, c: &Matrix<T>, l: &mut Indices) -> Result<Assignment> {
        let (x, w, labels) = (p.x, p.weights, l);
        let (n, d) = x.dim();
        let w = weights(w)?;
        let k = c.rows();
        let xs: &HostStorage<T> = HERE.matrix("kmeans", "X", x)?;
        let cs: &HostStorage<T> = HERE.matrix("kmeans", "centroids", c)?;
        let labels: &mut HostStorage<usize> = HERE.indices_mut("kmeans", "labels", labels)?;
        let c_norms: Vec<T> = if d == 0 {
            vec![T::zero(); k]
        } else {
            norms(&cs.data, d)
        };
        let c = mat(&cs.data, k, d);
        let parts: Vec<(usize, f64)> = labels.data[..n]
            .par_chunks_mut(BLOCK)
            .enumerate()
            .map(|(block, out)| {
                let (start, rows) = (block * BLOCK, out.len());
                let xb = &xs.data[start * d..(start + rows) * d];
                let x_norms: Vec<T> = if d == 0 {
                    vec![T::zero(); rows]
                } else {
                    norms(xb, d)
                };
                let mut dots = vec![T::zero(); rows * k];
                // −2·x·c straight from the GEMM; one thread per block: the blocks are
                // the parallelism.
                matmul(
                    mat_mut(&mut dots, rows, k),
                    Accum::Replace,
                    mat(xb, rows, d),
                    c.transpose(),
                    -(T::one() + T::one()),
                    Par::Seq,
                );
                let (mut changed, mut inertia) = (0usize, 0.0f64);
                let rows_w = w.map(|w| &w[start..start + rows]);
                for (i, ((label, row), &xn)) in
                    out.iter_mut().zip(dots.chunks(k)).zip(&x_norms).enumerate()
                {
                    let best = nearest(row, &c_norms, xn);
                    changed += usize::from(*label != best.0);
                    *label = best.0;
                    inertia += match rows_w {
                        None => best.1.as_f64(),
                        Some(w) => best.1.as_f64() * w[i].as_f64(),
                    };
                }
                (changed, inertia)
            })
            .collect();
        let (changed, inertia) = parts
            .into_iter()
            .fold((0, 0.0), |(c, s), (dc, ds)| (c + dc, s + ds));
        Ok(Assignment { changed, inertia })
    }

    fn update_unchecked(&self, p: Points<T>, labels: &Indices, c: &mut Matrix<T>) -> Result<()> {
        let (x, w, centroids) = (p.x, p.weights, c);
        let (k, d) = centroids.dim();
        let w = weights(w)?;
        let xs: &HostStorage<T> = HERE.matrix("kmeans", "X", x)?;
        let labels: &HostStorage<usize> = HERE.indices("kmeans", "labels", labels)?;
        if let Some(&j) = labels.data.iter().find(|&&j| j >= k) {
            return Err(Error::invalid(
                "kmeans",
                format!("label {j} names no centroid (k = {k}): assign the points first"),
            ));
        }
        let parts: Vec<(Vec<f64>, Vec<f64>)> = labels
            .data
            .par_chunks(BLOCK)
            .enumerate()
            .map(|(block, ls)| {
                let mut sums = vec![0.0f64; k * d];
                let mut mass = vec![0.0f64; k];
                for (i, &j) in ls.iter().enumerate() {
                    let i = block * BLOCK + i;
                    let (p, sums) = (i * d, &mut sums[j * d..(j + 1) * d]);
                    let points = sums.iter_mut().zip(&xs.data[p..p + d]);
                    match w {
                        None => {
                            mass[j] += 1.0;
                            points.for_each(|(s, v)| *s += v.as_f64());
                        }
                        // wᵢ·xᵢ rounded once in f64, as the reference forms it.
                        Some(w) => {
                            let wi = w[i].as_f64();
                            mass[j] += wi;
                            points.for_each(|(s, v)| *s += wi * v.as_f64());
                        }
                    }
                }
                (sums, mass)
            })
            .collect();
        let mut sums = vec![0.0f64; k * d];
        let mut mass = vec![0.0f64; k];
        for (s, m) in parts {
            sums.iter_mut().zip(s).for_each(|(a, b)| *a += b);
            mass.iter_mut().zip(m).for_each(|(a, b)| *a += b);
        }
        let c: &mut HostStorage<T> = HERE.matrix_mut("kmeans", "centroids", centroids)?;
        ndgpu_core::kmeans::write_means(&sums, &mass, &mut c.data);
        Ok(())
    }
}
