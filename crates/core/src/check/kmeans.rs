//! The checks of k-means and `predict`: the configuration, the sample weights, the
//! operands of a step.

use ndarray::{Array1, ArrayView2, Axis};

use super::finite;
use crate::kmeans::{Init, KMeansConfig};
use crate::{Element, Error, Result};

/// Checks k-means sample weights for N points: N of them, each finite and ≥ 0, their
/// total positive and finite, and (for `Init::Random`) at least k positive.
///
/// # Errors
/// [`Error::InvalidArgument`] (a wrong length, a negative weight, naming the first, or
/// a total of 0 or past f64); [`Error::NonFinite`] naming the first NaN or ±Inf.
pub fn sample_weight(n: usize, w: &Array1<f64>, config: &KMeansConfig) -> Result<()> {
    if w.len() != n {
        return Err(Error::invalid(
            "kmeans",
            format!("{} sample weights for N = {n} points", w.len()),
        ));
    }
    finite("kmeans", "sample_weight", &w.view().insert_axis(Axis(1)))?;
    if let Some((i, v)) = w.iter().enumerate().find(|(_, &v)| v < 0.0) {
        return Err(Error::invalid(
            "kmeans",
            format!("sample weight {i} = {v} is negative"),
        ));
    }
    let total: f64 = w.sum();
    if !(total > 0.0 && total.is_finite()) {
        return Err(Error::invalid(
            "kmeans",
            format!("the sample weights sum to {total}: it must be positive and finite"),
        ));
    }
    positive_weights(w.iter().filter(|&&v| v > 0.0).count(), config)
}

/// Checks that `positive` weights are enough: one, and k for `Init::Random` (k distinct
/// points are drawn among those of positive weight).
///
/// # Errors
/// [`Error::InvalidArgument`].
pub fn positive_weights(positive: usize, config: &KMeansConfig) -> Result<()> {
    let need = match config.init {
        Init::Random => config.k,
        _ => 1,
    };
    if positive < need {
        return Err(Error::invalid(
            "kmeans",
            format!(
                "{positive} points of positive sample weight (in the element type), \
                 {need} needed{}",
                match config.init {
                    Init::Random => " for a random start of k distinct points",
                    _ => "",
                }
            ),
        ));
    }
    Ok(())
}

/// Checks resident sample weights against N points: an N×1 matrix.
///
/// # Errors
/// [`Error::ShapeMismatch`].
pub fn weights_dim(n: usize, w: (usize, usize)) -> Result<()> {
    if w != (n, 1) {
        return Err(Error::shape(
            "kmeans",
            format!("sample weights are {}x{}, expected N x 1 = {n}x1", w.0, w.1),
        ));
    }
    Ok(())
}

/// Checks a k-means configuration against data of N points × D dimensions.
///
/// # Errors
/// [`Error::InvalidArgument`] for k = 0, k > N, max_iter = 0, n_init = 0, tol negative
/// or not finite, change_tol outside [0, 1], k-means‖ parameters out of range, given
/// centroids of the wrong shape, sample weights that [`sample_weight`] refuses;
/// [`Error::NonFinite`] for NaN/Inf in given centroids or in the sample weights.
pub fn kmeans_config(n: usize, d: usize, config: &KMeansConfig) -> Result<()> {
    if config.k == 0 {
        return Err(Error::invalid("kmeans", "k must be at least 1"));
    }
    if config.k > n {
        return Err(Error::invalid(
            "kmeans",
            format!(
                "k = {} is larger than the number of points N = {n}",
                config.k
            ),
        ));
    }
    if config.max_iter == 0 {
        return Err(Error::invalid("kmeans", "max_iter must be at least 1"));
    }
    if !(config.tol.is_finite() && config.tol >= 0.0) {
        return Err(Error::invalid(
            "kmeans",
            format!(
                "tol = {}: it must be finite and at least 0 (0 turns the centroid-shift test off)",
                config.tol
            ),
        ));
    }
    if !(0.0..=1.0).contains(&config.change_tol) {
        return Err(Error::invalid(
            "kmeans",
            format!(
                "change_tol = {} is outside [0, 1] (a fraction of the points)",
                config.change_tol
            ),
        ));
    }
    if config.n_init == 0 {
        return Err(Error::invalid("kmeans", "n_init must be at least 1"));
    }
    if let Init::KMeansParallel {
        oversampling,
        rounds,
    } = config.init
    {
        if !(oversampling.is_finite() && oversampling > 0.0) {
            return Err(Error::invalid(
                "kmeans",
                format!("k-means|| oversampling = {oversampling}: it must be finite and positive"),
            ));
        }
        if !(1..=64).contains(&rounds) {
            return Err(Error::invalid(
                "kmeans",
                format!("k-means|| rounds = {rounds}: it must be 1 to 64"),
            ));
        }
    }
    if let Init::Given(c) = &config.init {
        if c.dim() != (config.k, d) {
            return Err(Error::invalid(
                "kmeans",
                format!(
                    "given centroids are {}x{}, expected k x D = {}x{d}",
                    c.nrows(),
                    c.ncols(),
                    config.k
                ),
            ));
        }
        finite("kmeans", "init centroids", &c.view())?;
    }
    if let Some(w) = &config.sample_weight {
        sample_weight(n, w, config)?;
    }
    Ok(())
}

/// Checks the shapes of `predict`: points N×D, centroids K×D with K ≥ 1.
///
/// # Errors
/// [`Error::InvalidArgument`] for no centroids, [`Error::ShapeMismatch`] for a
/// dimension mismatch.
pub fn predict_dims(x: (usize, usize), c: (usize, usize)) -> Result<()> {
    centroids_dims("predict", x, c)
}

/// Checks that `op` has centroids (K×D, K ≥ 1) of the points' D (N×D).
fn centroids_dims(op: &'static str, x: (usize, usize), c: (usize, usize)) -> Result<()> {
    if c.0 == 0 {
        return Err(Error::invalid(op, "no centroids"));
    }
    if x.1 != c.1 {
        return Err(Error::shape(
            op,
            format!("points have {} dimensions, centroids {}", x.1, c.1),
        ));
    }
    Ok(())
}

/// Checks the operands of a k-means step: points N×D, centroids K×D (K ≥ 1), N labels,
/// and N×1 weights where there are weights.
///
/// # Errors
/// [`Error::InvalidArgument`] for no centroids, [`Error::ShapeMismatch`].
pub fn kmeans_step(
    x: (usize, usize),
    c: (usize, usize),
    labels: usize,
    w: Option<(usize, usize)>,
) -> Result<()> {
    if let Some(w) = w {
        weights_dim(x.0, w)?;
    }
    centroids_dims("kmeans", x, c)?;
    if labels != x.0 {
        return Err(Error::shape(
            "kmeans",
            format!("{labels} labels for {} points", x.0),
        ));
    }
    Ok(())
}

/// Checks `predict`'s host operands. Returns `(n, k, d)`.
///
/// # Errors
/// As [`predict_dims`]; [`Error::NonFinite`].
pub fn predict<T: Element>(x: &ArrayView2<T>, c: &ArrayView2<T>) -> Result<(usize, usize, usize)> {
    predict_dims(x.dim(), c.dim())?;
    finite("predict", "X", x)?;
    finite("predict", "centroids", c)?;
    Ok((x.nrows(), c.nrows(), x.ncols()))
}

#[cfg(test)]
mod tests {
    use ndarray::array;

    use crate::kmeans::{sample_weights, Init, KMeansConfig};
    use crate::Error;

    /// The error `kmeans_config` gives 4 points with weights `w`.
    fn refused(config: KMeansConfig) -> Error {
        super::kmeans_config(4, 2, &config).expect_err("refused")
    }

    fn invalid_naming(e: Error, needle: &str) {
        match e {
            Error::InvalidArgument { detail, .. } => assert!(detail.contains(needle), "{detail}"),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn bad_sample_weights_are_refused() {
        let with = |w| KMeansConfig::new(2).sample_weight(w);
        invalid_naming(refused(with(array![1.0, 1.0, 1.0])), "3 sample weights");
        invalid_naming(
            refused(with(array![1.0, 2.0, -0.5, -1.0])),
            "weight 2 = -0.5",
        );
        invalid_naming(refused(with(array![0.0, 0.0, 0.0, 0.0])), "sum to 0");
        invalid_naming(refused(with(array![1e308, 1e308, 0.0, 0.0])), "sum to inf");
        let random = with(array![0.0, 3.0, 0.0, 0.0]).init(Init::Random);
        invalid_naming(refused(random), "1 points of positive");
        for (bad, at) in [(f64::NAN, 1), (f64::INFINITY, 3)] {
            let mut w = array![1.0, 1.0, 1.0, 1.0];
            w[at] = bad;
            match refused(with(w)) {
                Error::NonFinite { index, what, .. } => {
                    assert_eq!((index, what), ((at, 0), "sample_weight"));
                }
                e => panic!("{e:?}"),
            }
        }
        assert!(super::kmeans_config(4, 2, &with(array![0.0, 0.0, 2.0, 0.5])).is_ok());
    }

    #[test]
    fn bad_tolerances_are_refused_by_name() {
        let tol = |t| KMeansConfig::new(2).tol(t);
        for t in [-1e-9, f64::NAN, f64::INFINITY] {
            invalid_naming(refused(tol(t)), "tol = ");
        }
        let change = |t| KMeansConfig::new(2).change_tol(t);
        for t in [-0.1, 1.5, f64::NAN] {
            invalid_naming(refused(change(t)), "change_tol = ");
        }
        for ok in [tol(0.0), tol(2.0), change(0.0), change(1.0)] {
            assert!(super::kmeans_config(4, 2, &ok).is_ok(), "{ok:?}");
        }
    }

    #[test]
    fn weights_are_checked_again_in_the_element_type() {
        // Finite in f64, past f32; positive in f64, 0 in f32.
        let big = KMeansConfig::new(1).sample_weight(array![1.0, 1e300]);
        invalid_naming(sample_weights::<f32>(&big).unwrap_err(), "overflows f32");
        assert!(sample_weights::<f64>(&big).unwrap().is_some());
        let tiny = KMeansConfig::new(1).sample_weight(array![1e-50, 0.0]);
        invalid_naming(
            sample_weights::<f32>(&tiny).unwrap_err(),
            "0 points of positive",
        );
        assert_eq!(
            sample_weights::<f64>(&tiny).unwrap(),
            Some(array![1e-50, 0.0])
        );
        assert_eq!(sample_weights::<f32>(&KMeansConfig::new(1)).unwrap(), None);
    }
}
