//! The host side of `block_jacobi`: the sweep driver, its stopping test, and the order
//! of the singular values, apart from the device (the device's two steps are the
//! [`Columns`] trait, so the driver is tested here on host matrices).
//!
//! One sweep: G = YᵀY is read back; if every pair of columns of Y is orthogonal to
//! `tol` it stops, else G = W·Λ·Wᵀ by the reference backend's cyclic Jacobi in f64 and
//! Y ← Y·W, V ← V·W. The columns of Y·W are orthogonal up to the rounding of G and of
//! the product, so the next G is nearly diagonal, and Jacobi on a nearly diagonal,
//! graded G is relatively accurate (Demmel and Veselić 1992): a handful of sweeps.

use ndarray::Array2;
use ndgpu_core::{Error, Result};

/// The sweeps allowed before [`Error::NoConvergence`].
pub(crate) const SWEEPS: usize = 30;

/// The method, in [`Error::NoConvergence`].
const METHOD: &str = "one-sided block Jacobi (30 sweeps)";

/// The device's part of a sweep on the columns of an m×n matrix Y.
pub(crate) trait Columns {
    /// G = YᵀY (n×n), read back in f64.
    ///
    /// # Errors
    /// Device errors.
    fn gram(&mut self) -> Result<Array2<f64>>;

    /// Y ← Y·W for an orthogonal n×n `w` (rounded to the working type).
    ///
    /// # Errors
    /// Device errors.
    fn rotate(&mut self, w: &Array2<f64>) -> Result<()>;
}

/// What the sweeps leave: the column norms of Y (unsorted, from the last G) and, when
/// asked, V (n×n, the product of the rotations in f64) with A·V = Y.
#[derive(Debug)]
pub(crate) struct Sweeps {
    /// ‖y_j‖ = sqrt(g_jj).
    pub norms: Vec<f64>,
    /// V.
    pub v: Option<Array2<f64>>,
}

/// Whether every pair of columns is orthogonal to `tol`: `|g_ij| ≤ tol·sqrt(g_ii·g_jj)`
/// (LAPACK's xGESVJ test). A pair with a negligible column, one whose squared norm is
/// at most `negligible` times the largest (zero included), counts as converged: such a
/// column is rounding noise of the others, which no rotation makes orthogonal to them
/// relatively ([`rank_deficient`] then hands the call to another method).
pub(crate) fn converged(g: &Array2<f64>, tol: f64, negligible: f64) -> bool {
    let n = g.nrows();
    let big = (0..n).fold(0.0f64, |m, i| m.max(g[[i, i]]));
    let floor = negligible * big;
    (0..n).all(|i| {
        (0..i).all(|j| {
            let (gi, gj) = (g[[i, i]], g[[j, j]]);
            gi <= floor || gj <= floor || g[[i, j]].abs() <= tol * (gi * gj).sqrt()
        })
    })
}

/// Runs sweeps on `y` (n columns) until [`converged`] to `tol` (columns of squared norm
/// at most `negligible` times the largest left out); `None` when a G holds
/// NaN or ±Inf (NaN or ±Inf in the input, or squares beyond the type's range): the
/// caller computes another way.
///
/// # Errors
/// [`Error::NoConvergence`] after [`SWEEPS`] sweeps; those of `y` and of the host
/// Jacobi.
pub(crate) fn sweep(
    y: &mut impl Columns,
    n: usize,
    (tol, negligible): (f64, f64),
    vectors: bool,
) -> Result<Option<Sweeps>> {
    let mut v = vectors.then(|| Array2::<f64>::eye(n));
    for done in 0..=SWEEPS {
        let g = y.gram()?;
        if !g.iter().all(|x| x.is_finite()) {
            return Ok(None);
        }
        if converged(&g, tol, negligible) {
            let norms = (0..n).map(|j| g[[j, j]].max(0.0).sqrt()).collect();
            return Ok(Some(Sweeps { norms, v }));
        }
        if done == SWEEPS {
            break;
        }
        let (_, w) = ndgpu_cpu::jacobi_eigh("svd", &g)?;
        if let Some(v) = &mut v {
            *v = v.dot(&w);
        }
        y.rotate(&w)?;
    }
    Err(Error::NoConvergence {
        op: "svd",
        method: METHOD,
    })
}

/// The indices of `norms` in descending order (stable: ties keep column order).
pub(crate) fn descending(norms: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..norms.len()).collect();
    order.sort_by(|&i, &j| norms[j].total_cmp(&norms[i]));
    order
}

/// Whether some norm is at most `k·eps·max` (k = the number of norms): the matrix is
/// rank-deficient at working precision, and that column of U would be rounding noise.
/// A zero matrix is.
pub(crate) fn rank_deficient(norms: &[f64], eps: f64) -> bool {
    let big = norms.iter().fold(0.0f64, |m, &x| m.max(x));
    let floor = norms.len() as f64 * eps * big;
    big == 0.0 || norms.iter().any(|&x| x <= floor)
}

/// The n×n S whose row i holds `1/norms[order[i]]` in column `order[i]`: S·Yᵀ is Yᵀ
/// with its rows scaled to unit length and put in `order` (every norm > 0).
pub(crate) fn scaled_permutation(norms: &[f64], order: &[usize]) -> Array2<f64> {
    let n = norms.len();
    let mut s = Array2::zeros((n, n));
    for (i, &j) in order.iter().enumerate() {
        s[[i, j]] = 1.0 / norms[j];
    }
    s
}

/// Vᵀ with its rows in `order`: row i is column `order[i]` of V.
pub(crate) fn permuted_vt(v: &Array2<f64>, order: &[usize]) -> Array2<f64> {
    Array2::from_shape_fn((order.len(), v.nrows()), |(i, j)| v[[j, order[i]]])
}

#[cfg(test)]
mod tests;
