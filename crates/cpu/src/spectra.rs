//! The spectra by cyclic Jacobi in f64, one rounding at the end.
//!
//! **eigh**: two-sided Jacobi (Jacobi 1846; Rutishauser's formulas, Golub and Van Loan
//! §8.5) on the symmetric matrix made from the lower triangle, by rows: for each pair
//! p < q in turn, the rotation in the (p, q) plane that zeroes `a_pq`, accumulated into
//! V. **svd**: one-sided Jacobi (Hestenes 1958) on the columns of A, or of Aᵀ when A is
//! wide: each pair of columns is rotated until orthogonal, accumulated into V; then the
//! singular values are the column norms and U the normalised columns.
//!
//! **Convergence** (Demmel and Veselić 1992): a pair is left alone once
//! `|a_pq| ≤ ε·sqrt(|a_pp·a_qq|)` (eigh) or `|w_p·w_q| ≤ √m·ε·‖w_p‖·‖w_q‖` (svd, the
//! √m of LAPACK's `dgesvj` for the rounding of the m-term dot product), ε of f64; a
//! sweep that rotates no pair ends the iteration. Convergence is quadratic once
//! the off-diagonal part is small, and takes a handful of sweeps; [`SWEEPS`] sweeps
//! without it are [`Error::NoConvergence`]. The input is first scaled by a power of two
//! (exact) so its largest entry is near one, which keeps the squares from overflowing.

use ndarray::{Array2, ArrayView2};
use ndgpu_core::{check, Element, Error, Matrix, Result};

use crate::memory::rounded;
use crate::HERE;

/// The sweeps allowed before [`Error::NoConvergence`].
pub(crate) const SWEEPS: usize = 60;

/// The method, in [`Error::NoConvergence`].
const METHOD: &str = "cyclic Jacobi (60 sweeps)";

/// The power of two nearest above max |a|, or 1 for a zero matrix.
fn scale(a: &Array2<f64>) -> f64 {
    let big = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    match big > 0.0 {
        true => 2f64.powi(big.log2().ceil() as i32),
        false => 1.0,
    }
}

/// `(c, s)` of the rotation zeroing the off-diagonal `apq` of the 2×2 symmetric
/// `[[app, apq], [apq, aqq]]`: t = tan θ the smaller root of t² + 2τt − 1 = 0,
/// τ = (aqq − app)/(2·apq).
fn rotation(app: f64, aqq: f64, apq: f64) -> (f64, f64) {
    let tau = (aqq - app) / (2.0 * apq);
    let t = tau.signum() / (tau.abs() + tau.hypot(1.0));
    let c = 1.0 / t.hypot(1.0);
    (c, c * t)
}

/// Columns p and q of `x` ← `(c·x_p − s·x_q, s·x_p + c·x_q)`.
fn rotate_columns(x: &mut Array2<f64>, p: usize, q: usize, (c, s): (f64, f64)) {
    for i in 0..x.nrows() {
        let (xp, xq) = (x[[i, p]], x[[i, q]]);
        x[[i, p]] = c * xp - s * xq;
        x[[i, q]] = s * xp + c * xq;
    }
}

/// Rows p and q of `x` ← `(c·x_p − s·x_q, s·x_p + c·x_q)`.
fn rotate_rows(x: &mut Array2<f64>, p: usize, q: usize, (c, s): (f64, f64)) {
    for j in 0..x.ncols() {
        let (xp, xq) = (x[[p, j]], x[[q, j]]);
        x[[p, j]] = c * xp - s * xq;
        x[[q, j]] = s * xp + c * xq;
    }
}

/// Eigenvalues (ascending) and eigenvectors (columns) of the symmetric matrix whose
/// lower triangle is `a`'s, by cyclic two-sided Jacobi in f64 (the backend's `eigh`
/// before rounding). Relatively accurate on graded, nearly diagonal matrices.
///
/// # Errors
/// [`Error::NoConvergence`] naming `op` after 60 sweeps.
pub fn jacobi_eigh(op: &'static str, a: &Array2<f64>) -> Result<(Vec<f64>, Array2<f64>)> {
    let n = a.nrows();
    let mut w = Array2::from_shape_fn((n, n), |(i, j)| a[[i.max(j), i.min(j)]]);
    let k = scale(&w);
    w.mapv_inplace(|v| v / k);
    let mut v = Array2::eye(n);
    let mut sweep = 0;
    loop {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (app, aqq, apq) = (w[[p, p]], w[[q, q]], w[[p, q]]);
                let tiny = apq.abs() <= f64::EPSILON * (app * aqq).abs().sqrt();
                if tiny || apq.abs() < f64::MIN_POSITIVE {
                    continue;
                }
                rotated = true;
                let cs = rotation(app, aqq, apq);
                rotate_columns(&mut w, p, q, cs);
                rotate_rows(&mut w, p, q, cs);
                rotate_columns(&mut v, p, q, cs);
                w[[p, q]] = 0.0;
                w[[q, p]] = 0.0;
            }
        }
        if !rotated {
            break;
        }
        sweep += 1;
        if sweep == SWEEPS {
            return Err(Error::NoConvergence { op, method: METHOD });
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| w[[i, i]].total_cmp(&w[[j, j]]));
    let values = order.iter().map(|&i| w[[i, i]] * k).collect();
    let vectors = Array2::from_shape_fn((n, n), |(i, j)| v[[i, order[j]]]);
    Ok((values, vectors))
}

/// The reduced SVD of an m×n `a` with m ≥ n, in f64: `(s descending, U m×n, V n×n)`.
pub(crate) fn jacobi_svd(
    op: &'static str,
    a: ArrayView2<f64>,
) -> Result<(Vec<f64>, Array2<f64>, Array2<f64>)> {
    let (m, n) = a.dim();
    let mut w = a.to_owned();
    let k = scale(&w);
    w.mapv_inplace(|v| v / k);
    let mut v = Array2::eye(n);
    let tol = (m as f64).sqrt() * f64::EPSILON;
    let mut sweep = 0;
    loop {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (cp, cq) = (w.column(p), w.column(q));
                let (alpha, beta, gamma) = (cp.dot(&cp), cq.dot(&cq), cp.dot(&cq));
                if gamma == 0.0 || gamma.abs() <= tol * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let cs = rotation(alpha, beta, gamma);
                rotate_columns(&mut w, p, q, cs);
                rotate_columns(&mut v, p, q, cs);
            }
        }
        if !rotated {
            break;
        }
        sweep += 1;
        if sweep == SWEEPS {
            return Err(Error::NoConvergence { op, method: METHOD });
        }
    }
    let norms: Vec<f64> = (0..n)
        .map(|j| w.column(j).iter().fold(0.0f64, |acc, x| acc.hypot(*x)))
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| norms[j].total_cmp(&norms[i]));
    let s = order.iter().map(|&j| norms[j] * k).collect();
    let mut u = Array2::from_shape_fn((m, n), |(i, j)| {
        let nj = norms[order[j]];
        if nj > 0.0 {
            w[[i, order[j]]] / nj
        } else {
            0.0
        }
    });
    let zero: Vec<usize> = (0..n).filter(|&j| norms[order[j]] == 0.0).collect();
    complete(&mut u, &zero);
    let v = Array2::from_shape_fn((n, n), |(i, j)| v[[i, order[j]]]);
    Ok((s, u, v))
}

/// Fills the columns `zero` of `u` (zero, the others orthonormal) with unit vectors
/// orthogonal to every other column: the standard basis vector that keeps most of
/// itself after two passes of Gram–Schmidt against the columns already there.
fn complete(u: &mut Array2<f64>, zero: &[usize]) {
    let m = u.nrows();
    for &j in zero {
        let mut best = (0.0, Array2::zeros((m, 1)));
        for e in 0..m {
            let mut x = Array2::zeros((m, 1));
            x[[e, 0]] = 1.0;
            for _ in 0..2 {
                for c in (0..u.ncols()).filter(|&c| c != j) {
                    let d = (0..m).map(|i| u[[i, c]] * x[[i, 0]]).sum::<f64>();
                    for i in 0..m {
                        x[[i, 0]] -= d * u[[i, c]];
                    }
                }
            }
            let norm = x.iter().fold(0.0f64, |acc, v| acc.hypot(*v));
            if norm > best.0 {
                best = (norm, x.mapv(|v| v / norm));
            }
        }
        u.column_mut(j).assign(&best.1.column(0));
    }
}

/// The kernel of [`FactorizeKernels::eigh_unchecked`](ndgpu_core::FactorizeKernels::eigh_unchecked).
pub(crate) fn eigh<T: Element>(
    a: &Matrix<T>,
    vectors: bool,
) -> Result<(Matrix<T>, Option<Matrix<T>>)> {
    let op = "eigh";
    let view = HERE.host_view(op, "A", a)?;
    check::finite_lower(op, "A", &view)?;
    let (w, v) = jacobi_eigh(op, &crate::to_f64(&view))?;
    let w = Array2::from_shape_vec((w.len(), 1), w).expect("n values");
    Ok((rounded(&w), vectors.then(|| rounded(&v))))
}

/// The kernel of [`FactorizeKernels::svd_unchecked`](ndgpu_core::FactorizeKernels::svd_unchecked):
/// a wide A is transposed, and `U` and `V` swap.
#[allow(clippy::type_complexity)]
pub(crate) fn svd<T: Element>(
    a: &Matrix<T>,
    vectors: bool,
) -> Result<(Matrix<T>, Option<(Matrix<T>, Matrix<T>)>)> {
    let op = "svd";
    let view = HERE.host_view(op, "A", a)?;
    check::finite(op, "A", &view)?;
    let a = crate::to_f64(&view);
    let wide = a.nrows() < a.ncols();
    let (s, u, v) = match wide {
        true => {
            let (s, v, u) = jacobi_svd(op, a.t())?;
            (s, u, v)
        }
        false => jacobi_svd(op, a.view())?,
    };
    let s = Array2::from_shape_vec((s.len(), 1), s).expect("k values");
    let uv = vectors.then(|| {
        (
            rounded(&u),
            rounded(&v.t().as_standard_layout().into_owned()),
        )
    });
    Ok((rounded(&s), uv))
}

#[cfg(test)]
mod tests {
    use ndarray::array;

    use super::*;

    #[test]
    fn known_eigenpairs_of_a_2x2_reading_the_lower_triangle() {
        // The upper entry 99 is not read: A = [[2, 1], [1, 2]], eigenvalues 1 and 3.
        let (w, v) = jacobi_eigh("eigh", &array![[2.0, 99.0], [1.0, 2.0]]).unwrap();
        assert!(
            (w[0] - 1.0).abs() < 1e-15 && (w[1] - 3.0).abs() < 1e-15,
            "{w:?}"
        );
        let r = std::f64::consts::FRAC_1_SQRT_2;
        assert!((v[[0, 1]].abs() - r).abs() < 1e-15 && (v[[0, 1]] - v[[1, 1]]).abs() < 1e-15);
        assert!((v[[0, 0]] + v[[1, 0]]).abs() < 1e-15);
    }

    #[test]
    fn svd_of_a_rank_one_matrix_completes_u() {
        // [[3, 0], [4, 0], [0, 0]]: σ = (5, 0); U's second column is any unit vector
        // orthogonal to (0.6, 0.8, 0).
        let (s, u, v) =
            jacobi_svd("svd", array![[3.0, 0.0], [4.0, 0.0], [0.0, 0.0]].view()).unwrap();
        assert_eq!(s, vec![5.0, 0.0]);
        let utu = u.t().dot(&u);
        assert!(crate::close(&utu, &Array2::eye(2), 1e-15), "{utu}");
        assert!((u[[0, 0]].abs() - 0.6).abs() < 1e-15 && (v[[0, 0]].abs() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn zero_and_diagonal_matrices_need_no_rotation() {
        let (w, v) = jacobi_eigh("eigh", &Array2::zeros((3, 3))).unwrap();
        assert_eq!((w, v), (vec![0.0; 3], Array2::eye(3)));
        let (w, _) = jacobi_eigh("eigh", &array![[3.0, 0.0], [0.0, -1.0]]).unwrap();
        assert_eq!(w, vec![-1.0, 3.0]);
    }
}
