//! The ratios of the spectra: eigendecomposition and SVD residuals, and eigenvalues or
//! singular values against the reference's (see [`ndgpu_core::tolerance`]).

use ndarray::{Array2, ArrayView1, ArrayView2};
use ndgpu_core::Element;

use super::{norm1, ratio, to_f64};

/// The symmetric matrix whose lower triangle is `a`'s, in f64.
pub fn symmetric_f64<T: Element>(a: ArrayView2<T>) -> Array2<f64> {
    Array2::from_shape_fn(a.dim(), |(i, j)| a[[i.max(j), i.min(j)]].as_f64())
}

/// xSYT21's `‖A·V − V·diag(w)‖₁ / (n·ε·‖A‖₁)` of the symmetric A given by the lower
/// triangle of `a`. To be compared with
/// [`tolerance::eigh_ratio`](ndgpu_core::tolerance::eigh_ratio).
pub fn eigh_ratio<T: Element>(a: ArrayView2<T>, w: ArrayView1<T>, v: ArrayView2<T>) -> f64 {
    let n = a.nrows();
    if v.dim() != (n, n) || w.len() != n {
        return f64::INFINITY;
    }
    if n == 0 {
        return 0.0;
    }
    let (a, v) = (symmetric_f64(a), to_f64(v));
    let vw = Array2::from_shape_fn((n, n), |(i, j)| v[[i, j]] * w[j].as_f64());
    let res = a.dot(&v) - vw;
    ratio(norm1(res.view()), n as f64 * T::EPS * norm1(a.view()))
}

/// xBDT01's `‖A − U·diag(s)·Vt‖₁ / (max(m, n)·ε·‖A‖₁)`. To be compared with
/// [`tolerance::svd_ratio`](ndgpu_core::tolerance::svd_ratio).
pub fn svd_ratio<T: Element>(
    a: ArrayView2<T>,
    u: ArrayView2<T>,
    s: ArrayView1<T>,
    vt: ArrayView2<T>,
) -> f64 {
    let (m, n) = a.dim();
    let k = s.len();
    if u.nrows() != m || vt.ncols() != n || u.ncols() < k || vt.nrows() < k {
        return f64::INFINITY;
    }
    if m.min(n) == 0 {
        return 0.0;
    }
    let a = to_f64(a);
    let us = Array2::from_shape_fn((m, k), |(i, j)| u[[i, j]].as_f64() * s[j].as_f64());
    let res = &a - &us.dot(&to_f64(vt.slice(ndarray::s![..k, ..])));
    ratio(
        norm1(res.view()),
        m.max(n) as f64 * T::EPS * norm1(a.view()),
    )
}

/// `maxᵢ |gotᵢ − wantᵢ| / (n·ε·‖A‖_F)`, with `size` the n and `frobenius` ‖A‖_F. To be
/// compared with [`tolerance::spectrum_ratio`](ndgpu_core::tolerance::spectrum_ratio).
pub fn spectrum_ratio<T: Element>(
    got: ArrayView1<T>,
    want: ArrayView1<T>,
    size: usize,
    frobenius: f64,
) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    let worst = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g.as_f64() - w.as_f64()).abs())
        .fold(0.0f64, |m, d| if d.is_nan() { f64::NAN } else { m.max(d) });
    ratio(worst, size.max(1) as f64 * T::EPS * frobenius)
}

/// ‖A‖_F in f64.
pub fn frobenius<T: Element>(a: ArrayView2<T>) -> f64 {
    a.iter().fold(0.0f64, |acc, v| acc.hypot(v.as_f64()))
}
