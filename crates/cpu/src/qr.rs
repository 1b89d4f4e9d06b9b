//! Householder QR, products with its Q, and least squares through it.
//!
//! As LAPACK's `geqr2`, on an f64 copy of A rounded once into the factor: for each
//! column j < min(m, n), the reflection `H_j = I − τ·v·vᵀ` (v[0] = 1, not stored; the
//! rest of v below the diagonal of column j) maps the column on and below the diagonal
//! to `β·e₀`, β = −sign(α)·‖(α, x)‖ for α the diagonal entry and x the entries below
//! it; τ = (β − α)/β; a column that is already zero below the diagonal has τ = 0
//! (H = I) and keeps its α. Q = H₀·H₁·…·H_{k−1}, R is on and above the diagonal.

use std::ops::Range;

use ndarray::{s, Array2, ArrayView2};
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{check, Element, Error, FactorLayout, Matrix, QrFactor, Result, Trans};

use crate::lu::{logical, store_factor};
use crate::memory::rounded;
use crate::trsm::{store, substitute, work};
use crate::{to_f64, HERE};

/// ‖x‖₂ of the entries of column `j` of `w` in rows `rows`, without overflow or
/// underflow on the way.
fn norm(w: &Array2<f64>, j: usize, rows: Range<usize>) -> f64 {
    rows.fold(0.0f64, |acc, i| acc.hypot(w[[i, j]]))
}

/// Makes the reflection of column `j` of `w` (LAPACK's `larfg`): stores β on the
/// diagonal and v below it, and returns τ.
fn householder(w: &mut Array2<f64>, j: usize) -> f64 {
    let m = w.nrows();
    let alpha = w[[j, j]];
    let below = norm(w, j, j + 1..m);
    if below == 0.0 {
        return 0.0;
    }
    let whole = alpha.hypot(below);
    let beta = if alpha >= 0.0 { -whole } else { whole };
    // α and β have opposite signs: α − β does not cancel.
    let scale = alpha - beta;
    for i in j + 1..m {
        w[[i, j]] /= scale;
    }
    w[[j, j]] = beta;
    (beta - alpha) / beta
}

/// `Y ← (I − τ·v·vᵀ)·Y` on rows `j..` of the columns `cols` of `y`, where `v` holds
/// the reflection's entries below its implicit leading one.
fn reflect(y: &mut Array2<f64>, j: usize, v: &[f64], tau: f64, cols: Range<usize>) {
    if tau == 0.0 {
        return; // H = I
    }
    for c in cols {
        let dot = y[[j, c]]
            + v.iter()
                .enumerate()
                .map(|(t, vt)| vt * y[[j + 1 + t, c]])
                .sum::<f64>();
        let f = tau * dot;
        y[[j, c]] -= f;
        for (t, vt) in v.iter().enumerate() {
            y[[j + 1 + t, c]] -= f * vt;
        }
    }
}

/// QR of a resident host matrix, which becomes the row-major packed factor; τ is a
/// min(m, n)×1 matrix.
pub(crate) fn factor<T: Element>(mut a: Matrix<T>) -> Result<QrFactor<T>> {
    let op = "qr";
    let (m, n) = a.dim();
    let view = HERE.host_view(op, "A", &a)?;
    check::finite(op, "A", &view)?;
    let mut w = to_f64(&view);
    let k = m.min(n);
    let mut tau = Array2::zeros((k, 1));
    for j in 0..k {
        let t = householder(&mut w, j);
        let v: Vec<f64> = w.slice(s![j + 1.., j]).to_vec();
        reflect(&mut w, j, &v, t, j + 1..n);
        tau[[j, 0]] = t;
    }
    let s: &mut HostStorage<T> = HERE.matrix_mut(op, "A", &mut a)?;
    store_factor(op, &mut s.data, &w)?;
    Ok(backend::qr_factor(
        a,
        rounded(&tau),
        FactorLayout::RowMajor,
        (m, n),
    ))
}

/// A factor's m×n packed matrix as a view, and its τ in f64 (one per reflection).
fn parts<'a, T: Element>(
    op: &'static str,
    f: &'a QrFactor<T>,
) -> Result<(ArrayView2<'a, T>, Vec<f64>)> {
    let qr = logical(HERE.host_view(op, "the factor", f.packed())?, f.layout());
    let tau = HERE.host_view(op, "the factor's tau", f.tau())?;
    let k = f.dim().0.min(f.dim().1);
    if tau.len() != k {
        return Err(Error::invalid(
            op,
            format!(
                "the factor holds {} scalars for {k} reflections: it is another backend's",
                tau.len()
            ),
        ));
    }
    Ok((qr, tau.iter().map(|t| t.as_f64()).collect()))
}

/// Applies `H_j` for j in `order` to the rows of `x`.
fn apply_all<T: Element>(
    x: &mut Array2<f64>,
    qr: &ArrayView2<T>,
    tau: &[f64],
    order: impl Iterator<Item = usize>,
) {
    let cols = x.ncols();
    for j in order {
        let v: Vec<f64> = qr
            .slice(s![j + 1.., j])
            .iter()
            .map(|v| v.as_f64())
            .collect();
        reflect(x, j, &v, tau[j], 0..cols);
    }
}

/// `B ← op(Q)·B` in place: Q·B = H₀·(H₁·(…·(H_{k−1}·B))) applies the last reflection
/// first, Qᵀ·B the first.
pub(crate) fn apply<T: Element>(f: &QrFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
    let op = "qr_apply";
    let (qr, tau) = parts(op, f)?;
    let dim = b.dim();
    let b: &mut HostStorage<T> = HERE.matrix_mut(op, "B", b)?;
    let mut x = work(dim, &b.data);
    let k = tau.len();
    match trans {
        Trans::No => apply_all(&mut x, &qr, &tau, (0..k).rev()),
        Trans::Yes => apply_all(&mut x, &qr, &tau, 0..k),
    }
    store(&mut b.data, &x);
    Ok(())
}

/// The least-squares solution from A's factor (m ≥ n): the rank test on R's
/// diagonal, then R·X = (Qᵀ·B)[..n] by back substitution.
pub(crate) fn solve<T: Element>(f: &QrFactor<T>, b: Matrix<T>) -> Result<Matrix<T>> {
    let op = "lstsq";
    let (m, n) = f.dim();
    let (qr, tau) = parts(op, f)?;
    let diag: Vec<T> = (0..n).map(|j| qr[[j, j]]).collect();
    backend::full_rank(op, &diag, (m, n))?;
    let mut x = work(
        b.dim(),
        &HERE.matrix::<HostStorage<T>, T>(op, "B", &b)?.data,
    );
    apply_all(&mut x, &qr, &tau, 0..tau.len());
    let mut top = x.slice(s![..n, ..]).to_owned();
    substitute(&mut top, false, false, |i, k| qr[[i, k]].as_f64());
    Ok(rounded(&top))
}

#[cfg(test)]
mod tests {
    use ndarray::{array, Array2};
    use ndgpu_core::prelude::*;
    use ndgpu_core::{Error, QrMode, Trans};

    use crate::{close, thin_and_rectangular, CpuBackend};

    #[test]
    fn known_factor_of_a_2x2() {
        let cpu = CpuBackend::new();
        // Column (3, 4): β = −5, v = (1, 4/8), τ = 8/5; the last column has nothing
        // below its diagonal, so no reflection (τ = 0) and R[1, 1] keeps its sign.
        let a = array![[3.0f64, 2.0], [4.0, 1.0]];
        let (q, r) = cpu.qr(a.view(), QrMode::Reduced).unwrap();
        assert!(close(&r, &array![[-5.0, -2.0], [0.0, -1.0]], 1e-15), "{r}");
        assert!(close(&q, &array![[-0.6, -0.8], [-0.8, 0.6]], 1e-15), "{q}");
        assert!(close(&q.dot(&r), &a, 1e-15));
    }

    #[test]
    fn reduced_and_complete_shapes_and_orthogonality() {
        let cpu = CpuBackend::new();
        for a in thin_and_rectangular() {
            let (m, n) = a.dim();
            for (mode, cols) in [(QrMode::Reduced, m.min(n)), (QrMode::Complete, m)] {
                let (q, r) = cpu.qr(a.view(), mode).unwrap();
                assert_eq!((q.dim(), r.dim()), ((m, cols), (cols, n)));
                assert!(close(&q.dot(&r), &a, 1e-14), "{a}");
                assert!(close(&q.t().dot(&q), &Array2::eye(cols), 1e-15));
                assert!(r.indexed_iter().all(|((i, j), v)| j >= i || *v == 0.0));
            }
        }
    }

    #[test]
    fn a_column_already_reduced_has_no_reflection() {
        let cpu = CpuBackend::new();
        let a = array![[2.0f64, 1.0], [0.0, 3.0], [0.0, 4.0]];
        let f = cpu.qr_dev(&cpu.upload(a.view()).unwrap()).unwrap();
        let tau = cpu.download(f.tau()).unwrap();
        assert_eq!(tau[[0, 0]], 0.0);
        // R keeps α = 2 (not −2): H₀ = I.
        let (_, r) = cpu.qr(a.view(), QrMode::Reduced).unwrap();
        assert_eq!(r[[0, 0]], 2.0);
        assert!((r[[1, 1]] + 5.0).abs() < 1e-15);
    }

    #[test]
    fn apply_q_then_qt_gives_b_back() {
        let cpu = CpuBackend::new();
        let a = array![[1.0f64, 2.0], [3.0, -4.0], [5.0, 6.0]];
        let b = array![[1.0f64, 0.0], [2.0, 1.0], [-1.0, 3.0]];
        let f = cpu.qr_dev(&cpu.upload(a.view()).unwrap()).unwrap();
        let mut db = cpu.upload(b.view()).unwrap();
        cpu.qr_apply_in_place_dev(&f, Trans::Yes, &mut db).unwrap();
        cpu.qr_apply_in_place_dev(&f, Trans::No, &mut db).unwrap();
        assert!(close(&cpu.download(&db).unwrap(), &b, 1e-15));
    }

    #[test]
    fn least_squares_on_a_line() {
        let cpu = CpuBackend::new();
        // y = 1 + 2t at t = 0, 1, 2, 3, plus noise that is orthogonal to the columns.
        let a = array![[1.0f64, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0]];
        let y = array![[1.0f64 + 0.5], [3.0 - 0.5], [5.0 - 0.5], [7.0 + 0.5]];
        let x = cpu.lstsq(a.view(), y.view()).unwrap();
        assert!(close(&x, &array![[1.0], [2.0]], 1e-14), "{x}");
        // 1×1 and n×1.
        let x = cpu
            .lstsq(array![[4.0f64]].view(), array![[2.0]].view())
            .unwrap();
        assert_eq!(x, array![[0.5]]);
        let col = array![[1.0f64], [1.0], [1.0]];
        let x = cpu
            .lstsq(col.view(), array![[1.0], [2.0], [6.0]].view())
            .unwrap();
        assert!((x[[0, 0]] - 3.0).abs() < 1e-15);
    }

    #[test]
    fn dependent_columns_and_wide_problems_are_refused() {
        let cpu = CpuBackend::new();
        // Column 2 = column 0 + column 1.
        let a = array![
            [1.0f64, 2.0, 3.0],
            [0.5, -1.0, -0.5],
            [2.0, 0.25, 2.25],
            [1.0, 1.0, 2.0]
        ];
        let b = array![[1.0f64], [2.0], [3.0], [4.0]];
        assert!(matches!(
            cpu.lstsq(a.view(), b.view()),
            Err(Error::RankDeficient { column: 2, .. })
        ));
        let wide = array![[1.0f64, 2.0, 3.0]];
        assert!(matches!(
            cpu.lstsq(wide.view(), array![[1.0]].view()),
            Err(Error::InvalidArgument { .. })
        ));
        let nan = array![[1.0f64, f64::NAN], [1.0, 2.0]];
        assert!(matches!(
            cpu.qr(nan.view(), QrMode::Reduced),
            Err(Error::NonFinite { index: (0, 1), .. })
        ));
    }
}
