//! LAPACK's test ratios of LU, QR, triangular solves and least squares, in f64 from the
//! exact f64 values of the operands; each is to be compared with its threshold in
//! [`ndgpu_core::tolerance`]. Operands of shapes that do not fit give `f64::INFINITY`.

use ndarray::{Array2, ArrayView2};
use ndgpu_core::{Element, Trans, Triangular, Uplo};

use super::{norm1, ratio, to_f64};

/// LAPACK's LU ratio (xGET01) `‖A − P·L·U‖₁ / (n·ε·‖A‖₁)` of an m×n A and the
/// `(P, L, U)` of `A = P·L·U` (P m×m, L m×k, U k×n); n is A's number of columns, as
/// LAPACK divides by. To be compared with [`tolerance::lu_ratio`](ndgpu_core::tolerance::lu_ratio).
pub fn lu_ratio<T: Element>(
    a: ArrayView2<T>,
    p: ArrayView2<T>,
    l: ArrayView2<T>,
    u: ArrayView2<T>,
) -> f64 {
    let (m, n) = a.dim();
    let k = m.min(n);
    if p.dim() != (m, m) || l.dim() != (m, k) || u.dim() != (k, n) {
        return f64::INFINITY;
    }
    if m == 0 || n == 0 {
        return 0.0;
    }
    let a = to_f64(a);
    let r = &a - &to_f64(p).dot(&to_f64(l)).dot(&to_f64(u));
    ratio(norm1(r.view()), n as f64 * T::EPS * norm1(a.view()))
}

/// The backward-error ratio of a solve (LAPACK's xGET02, xTRT02), the worst over the
/// columns j: `‖bⱼ − M·xⱼ‖₁ / (n·ε·‖M‖₁·‖xⱼ‖₁)` for the n×n matrix `m` (given in
/// f64: A, Aᵀ, or op(T) of a triangular solve). To be compared with
/// [`tolerance::solve_ratio`](ndgpu_core::tolerance::solve_ratio) or
/// [`tolerance::trsm_ratio`](ndgpu_core::tolerance::trsm_ratio).
pub fn backward_ratio<T: Element>(m: ArrayView2<f64>, x: ArrayView2<T>, b: ArrayView2<T>) -> f64 {
    let n = m.nrows();
    if m.ncols() != n || x.dim() != b.dim() || b.nrows() != n {
        return f64::INFINITY;
    }
    if n == 0 {
        return 0.0;
    }
    let x = to_f64(x);
    let r = to_f64(b) - m.dot(&x);
    let mn = norm1(m);
    let col = |a: &Array2<f64>, j: usize| a.column(j).iter().map(|v| v.abs()).sum::<f64>();
    (0..x.ncols())
        .map(|j| ratio(col(&r, j), n as f64 * T::EPS * mn * col(&x, j)))
        .fold(0.0, f64::max)
}

/// op(T) in f64 for the triangle `tri` of the square `a`: only that triangle is read
/// (and not its diagonal, taken as ones, when `tri.unit`); the rest is zero.
pub fn triangle<T: Element>(a: ArrayView2<T>, tri: Triangular) -> Array2<f64> {
    let upper = tri.uplo == Uplo::Upper;
    let t = Array2::from_shape_fn(a.dim(), |(i, j)| {
        if i == j && tri.unit {
            1.0
        } else if (upper && j >= i) || (!upper && j <= i) {
            a[[i, j]].as_f64()
        } else {
            0.0
        }
    });
    match tri.trans {
        Trans::No => t,
        Trans::Yes => t.reversed_axes().as_standard_layout().into_owned(),
    }
}

/// LAPACK's QR ratio (xQRT01) `‖A − Q·R‖₁ / (m·ε·‖A‖₁)` for an m×n A; Q is m×j and R
/// j×n for either mode. To be compared with
/// [`tolerance::qr_ratio`](ndgpu_core::tolerance::qr_ratio).
pub fn qr_ratio<T: Element>(a: ArrayView2<T>, q: ArrayView2<T>, r: ArrayView2<T>) -> f64 {
    let (m, n) = a.dim();
    if q.nrows() != m || r.ncols() != n || q.ncols() != r.nrows() {
        return f64::INFINITY;
    }
    if m == 0 || n == 0 {
        return 0.0;
    }
    let a = to_f64(a);
    let res = &a - &to_f64(q).dot(&to_f64(r));
    ratio(norm1(res.view()), m as f64 * T::EPS * norm1(a.view()))
}

/// LAPACK's orthogonality ratio (xQRT01) `‖Qᵀ·Q − I‖₁ / (m·ε)` of an m×j Q. To be
/// compared with
/// [`tolerance::orthogonality_ratio`](ndgpu_core::tolerance::orthogonality_ratio).
pub fn orthogonality_ratio<T: Element>(q: ArrayView2<T>) -> f64 {
    let (m, j) = q.dim();
    if m == 0 || j == 0 {
        return 0.0;
    }
    let q = to_f64(q);
    let res = q.t().dot(&q) - Array2::<f64>::eye(j);
    ratio(norm1(res.view()), m as f64 * T::EPS)
}

/// The least-squares ratio after LAPACK's xQRT17:
/// `‖Aᵀ·R‖₁ / (max(m, n, nrhs)·ε·‖A‖₁·max(‖B‖₁, ‖A‖₁·‖X‖₁))` with R = B − A·X, for an
/// m×n A, an n×nrhs X and an m×nrhs B (see
/// [`tolerance::LSTSQ_RATIO`](ndgpu_core::tolerance::LSTSQ_RATIO) for the bound).
pub fn lstsq_ratio<T: Element>(a: ArrayView2<T>, x: ArrayView2<T>, b: ArrayView2<T>) -> f64 {
    let (m, n) = a.dim();
    let nrhs = b.ncols();
    if x.dim() != (n, nrhs) || b.nrows() != m {
        return f64::INFINITY;
    }
    if m == 0 || n == 0 || nrhs == 0 {
        return 0.0;
    }
    let (a, x, b) = (to_f64(a), to_f64(x), to_f64(b));
    let r = &b - &a.dot(&x);
    let an = norm1(a.view());
    let scale = norm1(b.view()).max(an * norm1(x.view()));
    let k = m.max(n).max(nrhs) as f64;
    ratio(norm1(a.t().dot(&r).view()), k * T::EPS * an * scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn exact_factors_have_zero_ratios() {
        // A = P·L·U with the rows swapped: L·U = [[2, 2], [1, 2]].
        let a = array![[1.0f64, 2.0], [2.0, 2.0]];
        let p = array![[0.0f64, 1.0], [1.0, 0.0]];
        let l = array![[1.0f64, 0.0], [0.5, 1.0]];
        let u = array![[2.0f64, 2.0], [0.0, 1.0]];
        assert_eq!(lu_ratio(a.view(), p.view(), l.view(), u.view()), 0.0);
        let other = array![[1.0f64, 2.0], [2.0, 2.5]];
        assert!(lu_ratio(other.view(), p.view(), l.view(), u.view()) > 1e10);
        assert_eq!(
            lu_ratio(
                a.view(),
                l.view(),
                l.view(),
                u.view().slice(ndarray::s![.., ..1])
            ),
            f64::INFINITY
        );
        let q = array![[0.6f64, -0.8], [0.8, 0.6]];
        assert!(orthogonality_ratio(q.view()) < 10.0);
        let r = array![[5.0f64, 1.0], [0.0, 2.0]];
        let qr = q.dot(&r);
        assert!(qr_ratio(qr.view(), q.view(), r.view()) < 1.0);
    }

    #[test]
    fn a_triangle_reads_only_its_side() {
        let a = array![[1.0f64, f64::NAN], [2.0, 3.0]];
        let t = triangle(a.view(), Triangular::lower().trans(Trans::Yes).unit(true));
        assert_eq!(t, array![[1.0, 2.0], [0.0, 1.0]]);
        let x = array![[1.0f64], [1.0]];
        let b = t.dot(&x);
        assert_eq!(backward_ratio(t.view(), x.view(), b.view()), 0.0);
        // The least-squares solution of a consistent system has a zero ratio.
        let a = array![[1.0f64, 0.0], [0.0, 1.0], [1.0, 1.0]];
        let x = array![[2.0f64], [3.0]];
        let b = a.dot(&x);
        assert_eq!(lstsq_ratio(a.view(), x.view(), b.view()), 0.0);
    }
}
