//! k-means initialisation on the host: the same seed gives the same starting centroids
//! on every backend.

use ndarray::{Array2, ArrayView2};

use crate::kmeans::{Init, KMeansConfig, SplitMix64};
use crate::{check, Element, Result};

/// The starting centroids for `config` on host data `x` (checked with
/// [`check::kmeans`]): the given ones, k distinct random points, or k-means++ (D²
/// sampling). Computed on the host in f64, then rounded to `T`.
///
/// # Errors
/// As [`check::kmeans`].
pub fn init_centroids<T: Element>(x: ArrayView2<T>, config: &KMeansConfig) -> Result<Array2<T>> {
    check::kmeans(x, config)?;
    let (n, d) = x.dim();
    let k = config.k;
    let mut rng = SplitMix64::new(config.seed);
    let rows: Vec<usize> = match &config.init {
        Init::Given(c) => return Ok(c.mapv(T::from_f64)),
        Init::Random => sample_distinct(&mut rng, n, k)?,
        Init::KMeansPlusPlus => {
            let dist2 = |i: usize, j: usize| -> f64 {
                (0..d)
                    .map(|c| (x[[i, c]].as_f64() - x[[j, c]].as_f64()).powi(2))
                    .sum()
            };
            let first = rng.below(n);
            let mut chosen = vec![first];
            // n is not bounded by the data's bytes when d = 0: allocate fallibly.
            let mut closest = crate::host::filled_vec("kmeans", n, 0.0f64)?;
            for (i, c) in closest.iter_mut().enumerate() {
                *c = dist2(i, first);
            }
            while chosen.len() < k {
                let total: f64 = closest.iter().sum();
                let next = if total > 0.0 {
                    let target = rng.next_f64() * total;
                    let mut acc = 0.0;
                    let mut pick = n - 1;
                    for (i, &w) in closest.iter().enumerate() {
                        acc += w;
                        if acc > target && w > 0.0 {
                            pick = i;
                            break;
                        }
                    }
                    pick
                } else {
                    // Every point sits on a chosen centroid: fall back to uniform picks.
                    rng.below(n)
                };
                chosen.push(next);
                for (i, c) in closest.iter_mut().enumerate() {
                    *c = c.min(dist2(i, next));
                }
            }
            chosen
        }
    };
    Ok(Array2::from_shape_fn((k, d), |(r, c)| x[[rows[r], c]]))
}

/// k distinct indices below n, in the order drawn (Floyd's algorithm, then shuffled).
fn sample_distinct(rng: &mut SplitMix64, n: usize, k: usize) -> Result<Vec<usize>> {
    let mut set = std::collections::BTreeSet::new();
    let mut out = crate::host::with_capacity("kmeans", k)?;
    for j in n - k..n {
        let t = rng.below(j + 1);
        let pick = if set.contains(&t) { j } else { t };
        set.insert(pick);
        out.push(pick);
    }
    for i in (1..out.len()).rev() {
        let j = rng.below(i + 1);
        out.swap(i, j);
    }
    Ok(out)
}
