//! The check of one k-means step: labels of nearest centroids (up to rounding ties),
//! the change count, the inertia, and the centroid update.

use ndarray::{ArrayView1, ArrayView2};
use ndgpu_core::{tolerance, Element};

use super::{within, Output};

/// Points whose labels are compared with every centroid (a strided sample beyond).
const LABEL_SAMPLE: usize = 4096;

fn dist2<T: Element>(x: ArrayView1<T>, c: ArrayView1<T>) -> f64 {
    x.iter()
        .zip(c)
        .map(|(a, b)| (a.as_f64() - b.as_f64()).powi(2))
        .sum()
}

fn norm2<T: Element>(x: ArrayView1<T>) -> f64 {
    x.iter().map(|a| a.as_f64().powi(2)).sum()
}

/// Checks `out` (an [`Output::KMeans`]) for points `x` and starting centroids `c0`.
pub fn check<T: Element>(
    x: ArrayView2<T>,
    c0: ArrayView2<T>,
    out: &Output<T>,
) -> Result<(), String> {
    let Output::KMeans {
        centroids,
        labels,
        changed,
        inertia,
        updated,
    } = out
    else {
        return Err("not a k-means result".into());
    };
    let (n, d) = x.dim();
    let k = c0.nrows();
    if labels.len() != n || centroids.dim() != c0.dim() {
        return Err(format!(
            "{} labels and {:?} centroids, expected {n} and {:?}",
            labels.len(),
            centroids.dim(),
            c0.dim()
        ));
    }
    let mut label = Vec::with_capacity(n);
    for (i, &l) in labels.iter().enumerate() {
        match usize::try_from(l) {
            Ok(l) if l < k => label.push(l),
            _ => return Err(format!("label of point {i} is {l}, outside 0..{k}")),
        }
    }
    if let Some(changed) = *changed {
        // Every point starts unlabelled, so every label changes.
        if changed != n {
            return Err(format!("{changed} labels changed, expected all {n}"));
        }
    }
    let tol = tolerance::distance::<T>(d);
    let c_norm: Vec<f64> = c0.rows().into_iter().map(norm2).collect();

    // Nearest centroid: rounding may swap two centroids whose distances differ by less
    // than the sum of their distances' error bounds.
    let step = n.div_ceil(LABEL_SAMPLE).max(1);
    for i in (0..n).step_by(step) {
        let xi = x.row(i);
        let x_norm = norm2(xi);
        let l = label[i];
        let dl = dist2(xi, c0.row(l));
        for j in 0..k {
            let dj = dist2(xi, c0.row(j));
            let slack = tol * (2.0 * x_norm + c_norm[l] + c_norm[j]);
            if !within(dl - dj, slack) {
                return Err(format!(
                    "point {i} is labelled {l} at squared distance {dl:e}, but centroid {j} \
                     is at {dj:e} (slack {slack:e})"
                ));
            }
        }
    }

    // Inertia: each distance within its bound, and the sum of n terms.
    let (exact, slack) = (0..n).fold((0.0, 0.0), |(s, b), i| {
        let xi = x.row(i);
        let l = label[i];
        (s + dist2(xi, c0.row(l)), b + tol * (norm2(xi) + c_norm[l]))
    });
    let bound = slack + tolerance::sum::<T>(n) * exact;
    if !within((inertia - exact).abs(), bound) {
        return Err(format!(
            "inertia {inertia:e}, reference {exact:e} (bound {bound:e})"
        ));
    }

    // Update: each centroid the mean of its points (a sum of `count` terms and one
    // division), or unchanged when it has none or no update was made.
    let mut sums = vec![0.0f64; k * d];
    let mut mags = vec![0.0f64; k * d];
    let mut counts = vec![0usize; k];
    for (i, &l) in label.iter().enumerate() {
        counts[l] += 1;
        for (c, v) in x.row(i).iter().enumerate() {
            sums[l * d + c] += v.as_f64();
            mags[l * d + c] += v.as_f64().abs();
        }
    }
    for j in 0..k {
        for c in 0..d {
            let got = centroids[[j, c]];
            if !*updated || counts[j] == 0 {
                if got != c0[[j, c]] {
                    return Err(format!(
                        "centroid {j} moved ([{j}, {c}] = {got}, was {}) although {}",
                        c0[[j, c]],
                        if *updated {
                            "it has no points"
                        } else {
                            "no update was made"
                        }
                    ));
                }
                continue;
            }
            let m = counts[j] as f64;
            let mean = sums[j * d + c] / m;
            let bound = tolerance::sum::<T>(counts[j] + 1) * mags[j * d + c] / m;
            let err = (got.as_f64() - mean).abs();
            if !within(err, bound) {
                return Err(format!(
                    "centroid [{j}, {c}] = {got}, mean of its {} points {mean:e}: error \
                     {err:e} above {bound:e}",
                    counts[j]
                ));
            }
        }
    }
    Ok(())
}
