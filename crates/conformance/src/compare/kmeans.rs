//! Checks of a k-means result that hold for any correct backend, whatever trajectory
//! rounding sent it on: labels name a nearest centroid, the inertia is that of the
//! labels, it never increases (up to rounding), and `predict` agrees.
//!
//! Distances are recomputed here in f64 from the exact values. A backend may compute
//! them in its element type in either form; [`tolerance::distance`] bounds what that
//! can change.

use ndarray::{ArrayView1, ArrayView2};
use ndgpu_core::{tolerance, DType, Element, KMeansConfig, KMeansResult};

use super::ratio;
use super::sampled::within;

/// Squared Euclidean distance in f64 between two rows.
pub fn dist2<T: Element>(x: ArrayView1<T>, c: ArrayView1<T>) -> f64 {
    x.iter()
        .zip(c.iter())
        .map(|(a, b)| (a.as_f64() - b.as_f64()).powi(2))
        .sum()
}

/// Squared norm in f64.
pub fn norm2<T: Element>(x: ArrayView1<T>) -> f64 {
    x.iter().map(|a| a.as_f64().powi(2)).sum()
}

/// How far apart two squared distances from `x` (to centroids `a` and `b`) may be and
/// still be swapped by rounding: [`tolerance::distance`]`·(‖x‖² + max(‖a‖², ‖b‖²))`.
pub fn tie_slack<T: Element>(x: ArrayView1<T>, a: ArrayView1<T>, b: ArrayView1<T>) -> f64 {
    tolerance::distance::<T>(x.len()) * (norm2(x) + norm2(a).max(norm2(b)))
}

/// Checks that `labels[i]` names a nearest centroid of row `i` of `x`, accepting any
/// centroid whose distance exceeds the nearest one by less than [`tie_slack`].
/// Returns the first offending point, described.
pub fn check_nearest<T: Element>(
    x: ArrayView2<T>,
    centroids: ArrayView2<T>,
    labels: ArrayView1<usize>,
) -> Result<(), String> {
    let n = x.nrows();
    let k = centroids.nrows();
    if labels.len() != n {
        return Err(format!("{} labels for {n} points", labels.len()));
    }
    for (i, &label) in labels.iter().enumerate() {
        if label >= k {
            return Err(format!("point {i}: label {label} but only {k} centroids"));
        }
        let xi = x.row(i);
        let (best, best_d) = (0..k)
            .map(|j| (j, dist2(xi, centroids.row(j))))
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        let got_d = dist2(xi, centroids.row(label));
        let slack = tie_slack(xi, centroids.row(label), centroids.row(best));
        if got_d - best_d > slack {
            return Err(format!(
                "point {i}: label {label} at squared distance {got_d:e}, but centroid \
                 {best} is at {best_d:e} (allowed slack {slack:e})"
            ));
        }
    }
    Ok(())
}

/// Checks that `predicted` equals `labels` except where the two centroids are within
/// [`tie_slack`] of each other for that point.
pub fn check_predict_agrees<T: Element>(
    x: ArrayView2<T>,
    centroids: ArrayView2<T>,
    labels: ArrayView1<usize>,
    predicted: ArrayView1<usize>,
) -> Result<(), String> {
    if predicted.len() != labels.len() {
        return Err(format!(
            "predict gave {} labels for {} points",
            predicted.len(),
            labels.len()
        ));
    }
    check_nearest(x, centroids, predicted)?;
    for (i, (&p, &l)) in predicted.iter().zip(labels.iter()).enumerate() {
        if p != l {
            let (cp, cl) = (centroids.row(p), centroids.row(l));
            let gap = (dist2(x.row(i), cp) - dist2(x.row(i), cl)).abs();
            if gap > tie_slack(x.row(i), cp, cl) {
                return Err(format!(
                    "point {i}: predict says {p}, kmeans said {l} (distances differ by {gap:e})"
                ));
            }
        }
    }
    Ok(())
}

/// Checks the bookkeeping of a result: shapes, labels below k, `iterations` between 1
/// and `max_iter` and equal to the history's length, not converged only at the cap,
/// and `inertia` equal to the last history entry (up to a sum's rounding).
pub fn check_kmeans_shape<T: Element>(
    x: ArrayView2<T>,
    config: &KMeansConfig,
    r: &KMeansResult<T>,
) -> Result<(), String> {
    let (n, d) = x.dim();
    let k = config.k;
    if r.centroids.dim() != (k, d) {
        return Err(format!(
            "centroids are {:?}, expected {k}x{d}",
            r.centroids.dim()
        ));
    }
    if r.labels.len() != n {
        return Err(format!("{} labels for {n} points", r.labels.len()));
    }
    if let Some(l) = r.labels.iter().find(|&&l| l >= k) {
        return Err(format!("label {l} with k = {k}"));
    }
    if r.iterations == 0 || r.iterations > config.max_iter {
        return Err(format!(
            "{} iterations with max_iter {}",
            r.iterations, config.max_iter
        ));
    }
    if r.inertia_history.len() != r.iterations {
        return Err(format!(
            "inertia_history has {} entries for {} iterations",
            r.inertia_history.len(),
            r.iterations
        ));
    }
    if !r.converged && r.iterations != config.max_iter {
        return Err(format!(
            "not converged after {} of {} iterations",
            r.iterations, config.max_iter
        ));
    }
    let last = r.inertia_history.last().copied().unwrap_or(f64::NAN);
    let slack = tolerance::sum::<T>(n) * r.inertia;
    if ratio((last - r.inertia).abs(), slack) > 1.0 {
        return Err(format!(
            "inertia {:e} but last history entry {last:e}",
            r.inertia
        ));
    }
    Ok(())
}

/// `|inertia − Σ‖xᵢ − c_labelᵢ‖²| / allowed`, the sum taken in f64 over the result's
/// own centroids and labels; allowed is [`tolerance::distance`] per term plus a sum of
/// N terms. Call after [`check_kmeans_shape`] passed.
pub fn inertia_ratio<T: Element>(x: ArrayView2<T>, r: &KMeansResult<T>) -> f64 {
    weighted_inertia_ratio(x, None, r)
}

/// The weight of point i: `w[i]`, or 1 without weights.
fn weight(w: Option<&[f64]>, i: usize) -> f64 {
    w.map_or(1.0, |w| w[i])
}

/// [`inertia_ratio`] of Σ wᵢ‖xᵢ − c_labelᵢ‖² with sample weights `w` (their values in
/// the element type): each distance's bound scaled by its weight (the product with the
/// weight adds one f64 rounding, inside the sum's bound).
pub fn weighted_inertia_ratio<T: Element>(
    x: ArrayView2<T>,
    w: Option<&[f64]>,
    r: &KMeansResult<T>,
) -> f64 {
    let (n, d) = x.dim();
    let mut exact = 0.0;
    let mut spread = 0.0;
    for (i, &l) in r.labels.iter().enumerate() {
        let c = r.centroids.row(l);
        let wi = weight(w, i);
        exact += wi * dist2(x.row(i), c);
        spread += wi * (norm2(x.row(i)) + norm2(c));
    }
    let allowed = tolerance::distance::<T>(d) * spread + tolerance::sum::<T>(n) * exact;
    ratio((r.inertia - exact).abs(), allowed)
}

/// The relative slack on each step of the inertia history for rounding the new
/// centroids to `T`: 1e-5 for f32, 1e-12 for f64.
pub fn inertia_step_slack<T: Element>() -> f64 {
    match T::DTYPE {
        DType::F32 => 1e-5,
        DType::F64 => 1e-12,
    }
}

/// The worst `increase / allowed` over consecutive history entries (≤ 1: the inertia
/// never increases up to rounding). Allowed per step: [`inertia_step_slack`] relative,
/// plus twice the distance rounding a backend may make on every point,
/// [`tolerance::distance`]`·(Σ‖xᵢ‖² + N·max‖xᵢ‖²)` (centroids are means of points, so
/// their norms are at most the largest point's).
pub fn history_ratio<T: Element>(x: ArrayView2<T>, history: &[f64]) -> f64 {
    weighted_history_ratio(x, None, history)
}

/// [`history_ratio`] of a weighted inertia: every point's distance bound scaled by its
/// weight, `tolerance::distance·(Σwᵢ‖xᵢ‖² + Σwᵢ·max‖xᵢ‖²)` (weighted means are
/// convex combinations of points too).
pub fn weighted_history_ratio<T: Element>(
    x: ArrayView2<T>,
    w: Option<&[f64]>,
    history: &[f64],
) -> f64 {
    let norms: Vec<f64> = x.rows().into_iter().map(norm2).collect();
    let max = norms.iter().copied().fold(0.0, f64::max);
    let (total, mass) = norms.iter().enumerate().fold((0.0, 0.0), |(t, m), (i, v)| {
        (t + weight(w, i) * v, m + weight(w, i))
    });
    let dist_slack = tolerance::distance::<T>(x.ncols()) * (total + mass * max);
    history
        .windows(2)
        .map(|w| {
            let increase = (w[1] - w[0]).max(0.0);
            let r = ratio(
                increase,
                inertia_step_slack::<T>() * w[0] + 2.0 * dist_slack,
            );
            if w[1].is_nan() {
                f64::INFINITY
            } else {
                r
            }
        })
        .fold(0.0, f64::max)
}

/// The worst `|got − want|` over centroid coordinates divided by
/// `tolerance::sum::<T>(N)·max_i |x_i,c|`: two means of the same points, each a sum of
/// at most N terms of column c divided by a count.
pub fn centroid_ratio<T: Element>(
    x: ArrayView2<T>,
    got: ArrayView2<T>,
    want: ArrayView2<T>,
) -> f64 {
    centroid_ratio_within(x, got, want, tolerance::sum::<T>(x.nrows()))
}

/// [`centroid_ratio`] of weighted means Σwᵢxᵢ / Σwᵢ: the numerator's sum of N rounded
/// products and the denominator's sum of N weights each err by at most
/// `tolerance::sum(N)` relative to Σwᵢ|xᵢ| and Σwᵢ, and both Σwᵢ|xᵢ|/Σwᵢ and the mean
/// are at most max|x|; with the division's rounding, `(2·tolerance::sum(N) + ε)·max|x|`.
pub fn weighted_centroid_ratio<T: Element>(
    x: ArrayView2<T>,
    got: ArrayView2<T>,
    want: ArrayView2<T>,
) -> f64 {
    let tol = 2.0 * tolerance::sum::<T>(x.nrows()) + T::EPS;
    centroid_ratio_within(x, got, want, tol)
}

/// The worst `|got − want| / (tol·max_i |x_i,c|)` over centroid coordinates.
fn centroid_ratio_within<T: Element>(
    x: ArrayView2<T>,
    got: ArrayView2<T>,
    want: ArrayView2<T>,
    tol: f64,
) -> f64 {
    if got.dim() != want.dim() {
        return f64::INFINITY;
    }
    let col_max: Vec<f64> = x
        .columns()
        .into_iter()
        .map(|c| c.iter().map(|v| v.as_f64().abs()).fold(0.0, f64::max))
        .collect();
    got.indexed_iter()
        .map(|((j, c), g)| ratio((g.as_f64() - want[[j, c]].as_f64()).abs(), tol * col_max[c]))
        .fold(0.0, f64::max)
}

/// Points whose labels are compared with every centroid by [`check_step`] (a strided
/// sample beyond).
const LABEL_SAMPLE: usize = 4096;

/// Checks one k-means step a backend made from points `x` and starting centroids `c0`
/// (every point unlabelled): its `labels` name a nearest centroid of `c0` (sampled
/// beyond [`LABEL_SAMPLE`] points; rounding may swap centroids whose distances differ
/// by less than their error bounds), `changed` (if reported) counts every point, the
/// `inertia` is that of the labels, and `centroids` are the means of their points when
/// `updated` (a Lloyd iteration), else `c0` exactly; a centroid without points stays.
///
/// # Errors
/// Why the step is wrong, naming the first offending point or element.
pub fn check_step<T: Element>(
    x: ArrayView2<T>,
    c0: ArrayView2<T>,
    centroids: ArrayView2<T>,
    labels: &[i64],
    changed: Option<usize>,
    inertia: f64,
    updated: bool,
) -> Result<(), String> {
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
    if let Some(changed) = changed {
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
            if !updated || counts[j] == 0 {
                if got != c0[[j, c]] {
                    return Err(format!(
                        "centroid {j} moved ([{j}, {c}] = {got}, was {}) although {}",
                        c0[[j, c]],
                        if updated {
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
