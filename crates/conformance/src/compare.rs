//! Comparison helpers: error-analysis bounds, measured-over-allowed ratios, and the
//! LAPACK-style test ratios. Everything is computed in f64 from the exact f64 values
//! of the operands. A ratio ≤ 1 passes; NaN where a number was expected gives
//! `f64::INFINITY`.

use ndarray::{Array2, ArrayView2, Zip};
use ndgpu_core::{tolerance, DType, Element, Error, Gemm, Precision};

mod factors;
mod kmeans;
pub mod sampled;
mod spectra;

pub use factors::*;
pub use kmeans::*;
pub use spectra::*;

/// The exact f64 copy of a view of any layout, in C order.
pub fn to_f64<T: Element>(a: ArrayView2<T>) -> Array2<f64> {
    Array2::from_shape_fn(a.dim(), |ix| a[ix].as_f64())
}

/// Elementwise absolute value in f64.
pub fn abs_f64<T: Element>(a: ArrayView2<T>) -> Array2<f64> {
    Array2::from_shape_fn(a.dim(), |ix| a[ix].as_f64().abs())
}

/// `measured / allowed`, with `0/0 = 0`, `x/0 = ∞` for `x > 0`, and NaN → ∞.
pub fn ratio(measured: f64, allowed: f64) -> f64 {
    if measured.is_nan() || allowed.is_nan() {
        f64::INFINITY
    } else if measured == 0.0 {
        0.0
    } else if allowed == 0.0 {
        f64::INFINITY
    } else {
        measured / allowed
    }
}

/// The largest elementwise `|got − want| / bound` and where it is, as
/// `(ratio, Some((i, j)))`; `(∞, None)` when the shapes differ. A NaN in `got` counts
/// as ∞, except where `want` is NaN too.
pub fn max_ratio<T: Element>(
    got: ArrayView2<T>,
    want: ArrayView2<f64>,
    bound: ArrayView2<f64>,
) -> (f64, Option<(usize, usize)>) {
    if got.dim() != want.dim() || want.dim() != bound.dim() {
        return (f64::INFINITY, None);
    }
    let mut worst = (0.0, None);
    for ((ix, g), (w, b)) in got.indexed_iter().zip(want.iter().zip(bound.iter())) {
        let g = g.as_f64();
        let r = if g.is_nan() && w.is_nan() {
            0.0
        } else {
            ratio((g - w).abs(), *b)
        };
        if r > worst.0 || worst.1.is_none() {
            worst = (r, Some(ix));
        }
    }
    worst
}

/// Describes a [`max_ratio`] result for a report.
pub fn describe_ratio<T: Element>(
    what: &str,
    got: ArrayView2<T>,
    want: ArrayView2<f64>,
    worst: (f64, Option<(usize, usize)>),
) -> String {
    match worst.1 {
        None if got.dim() != want.dim() => {
            format!("{what}: shape {:?}, expected {:?}", got.dim(), want.dim())
        }
        None => format!("{what}: empty"),
        Some(ix) => format!(
            "{what}: worst at {ix:?}: got {:e}, expected {:e} (error/tolerance = {:.3e})",
            got[ix].as_f64(),
            want[ix],
            worst.0
        ),
    }
}

/// The elementwise error bound of `alpha·op(A)·op(B) + beta·C` (`c` ignored when
/// `beta = 0`): `tolerance::gemm::<T>(k) · (|α|·(|op(A)|·|op(B)|) + |β|·|C|)`, with
/// the product of absolute values formed in f64.
pub fn gemm_bound<T: Element>(
    g: &Gemm<T>,
    a: ArrayView2<T>,
    b: ArrayView2<T>,
    c: Option<ArrayView2<T>>,
) -> Array2<f64> {
    let k = g.ta.apply(a).ncols();
    gemm_mapped(g, a, b, c, f64::abs) * tolerance::gemm::<T>(k)
}

/// The relative bound of a product with inner dimension `k` computed in `precision`:
/// [`tolerance::gemm_tf32`] for f32 on TF32 tensor cores (operands rounded to 10
/// mantissa bits), else [`tolerance::gemm`].
pub fn product_tolerance<T: Element>(k: usize, precision: Precision) -> f64 {
    match (precision, T::DTYPE) {
        (Precision::Tf32, DType::F32) => tolerance::gemm_tf32(k),
        (Precision::Tf32x3, DType::F32) => tolerance::gemm_3xtf32(k),
        _ => tolerance::gemm::<T>(k),
    }
}

/// `alpha·op(A)·op(B) + beta·C` in f64 (`c` not read when `beta = 0`).
pub fn gemm_f64<T: Element>(
    g: &Gemm<T>,
    a: ArrayView2<T>,
    b: ArrayView2<T>,
    c: Option<ArrayView2<T>>,
) -> Array2<f64> {
    gemm_mapped(g, a, b, c, |v| v)
}

/// `f(α)·(f(op(A))·f(op(B))) + f(β)·f(C)` in f64, `f` applied to every value (`c` not
/// read when `beta = 0`).
fn gemm_mapped<T: Element>(
    g: &Gemm<T>,
    a: ArrayView2<T>,
    b: ArrayView2<T>,
    c: Option<ArrayView2<T>>,
    f: fn(f64) -> f64,
) -> Array2<f64> {
    let map = |m: ArrayView2<T>| m.mapv(|v| f(v.as_f64()));
    let mut out = map(g.ta.apply(a)).dot(&map(g.tb.apply(b))) * f(g.alpha.as_f64());
    if let (Some(c), true) = (c, g.beta != T::zero()) {
        let beta = f(g.beta.as_f64());
        Zip::from(&mut out)
            .and(&c)
            .for_each(|x, &c| *x += beta * f(c.as_f64()));
    }
    out
}

/// Σ|xᵢ| (or whatever non-negative terms are given) in f64.
pub fn abs_sum(values: impl Iterator<Item = f64>) -> f64 {
    values.map(f64::abs).sum()
}

/// `|got − want| / (tolerance::sum::<T>(n) · Σ|terms|)` for a sum of `n` terms whose
/// absolute values add up to `abs_total`; NaN is compared as NaN (NaN = NaN passes).
pub fn sum_ratio<T: Element>(got: T, want: f64, n: usize, abs_total: f64) -> f64 {
    let g = got.as_f64();
    if g.is_nan() && want.is_nan() {
        return 0.0;
    }
    if g == want {
        // Also covers matching infinities, whose difference is NaN.
        return 0.0;
    }
    ratio((g - want).abs(), tolerance::sum::<T>(n) * abs_total)
}

/// The 1-norm (largest column sum of absolute values).
pub fn norm1(a: ArrayView2<f64>) -> f64 {
    a.columns()
        .into_iter()
        .map(|c| c.iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// LAPACK's Cholesky test ratio (xPOT01) `‖A − L·Lᵀ‖₁ / (n·ε·‖A‖₁)` in f64, reading
/// the lower triangle of `a` (mirrored) and of `l`; to be compared with
/// [`tolerance::CHOLESKY_RATIO`].
pub fn cholesky_ratio<T: Element>(a: ArrayView2<T>, l: ArrayView2<T>) -> f64 {
    let n = a.nrows();
    if n == 0 {
        return 0.0;
    }
    let a = Array2::from_shape_fn((n, n), |(i, j)| a[[i.max(j), i.min(j)]].as_f64());
    let l = Array2::from_shape_fn(
        (n, n),
        |(i, j)| {
            if j <= i {
                l[[i, j]].as_f64()
            } else {
                0.0
            }
        },
    );
    let r = &a - &l.dot(&l.t());
    ratio(norm1(r.view()), n as f64 * T::EPS * norm1(a.view()))
}

/// LAPACK's solve test ratio (xPOT02), the worst over the columns `j`:
/// `‖bⱼ − A·xⱼ‖₁ / (n·ε·‖A‖₁·‖xⱼ‖₁)`, with `A` the symmetric matrix of the lower
/// triangle of `a`; to be compared with [`tolerance::SOLVE_RATIO`].
pub fn solve_ratio<T: Element>(a: ArrayView2<T>, x: ArrayView2<T>, b: ArrayView2<T>) -> f64 {
    let n = a.nrows();
    if x.dim() != b.dim() {
        return f64::INFINITY;
    }
    if n == 0 {
        return 0.0;
    }
    let a = Array2::from_shape_fn((n, n), |(i, j)| a[[i.max(j), i.min(j)]].as_f64());
    let x = to_f64(x);
    let r = to_f64(b) - a.dot(&x);
    let an = norm1(a.view());
    (0..x.ncols())
        .map(|j| {
            let rn: f64 = r.column(j).iter().map(|v| v.abs()).sum();
            let xn: f64 = x.column(j).iter().map(|v| v.abs()).sum();
            ratio(rn, n as f64 * T::EPS * an * xn)
        })
        .fold(0.0, f64::max)
}

/// The kind of an error, for reports (`ShapeMismatch`, `Empty`, ...), with the
/// pivot for `NotPositiveDefinite` and `Singular` and the column for `RankDeficient`.
pub fn error_kind(e: &Error) -> String {
    match e {
        Error::ShapeMismatch { .. } => "ShapeMismatch".into(),
        Error::Empty { .. } => "Empty".into(),
        Error::NotSquare { .. } => "NotSquare".into(),
        Error::NonFinite { .. } => "NonFinite".into(),
        Error::NotPositiveDefinite { pivot, .. } => format!("NotPositiveDefinite(pivot {pivot})"),
        Error::Singular { pivot, .. } => format!("Singular(pivot {pivot})"),
        Error::RankDeficient { column, .. } => format!("RankDeficient(column {column})"),
        Error::InvalidArgument { .. } => "InvalidArgument".into(),
        other => format!("{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn ratios_handle_zero_and_nan() {
        assert_eq!(ratio(0.0, 0.0), 0.0);
        assert_eq!(ratio(1.0, 0.0), f64::INFINITY);
        assert_eq!(ratio(f64::NAN, 1.0), f64::INFINITY);
        assert_eq!(
            sum_ratio(f32::INFINITY, f64::INFINITY, 3, f64::INFINITY),
            0.0
        );
        assert_eq!(sum_ratio(f32::NAN, 1.0, 3, 3.0), f64::INFINITY);
    }

    #[test]
    fn exact_factor_has_zero_ratio() {
        let a = array![[4.0f64, 2.0], [2.0, 5.0]];
        let l = array![[2.0f64, 0.0], [1.0, 2.0]];
        assert_eq!(cholesky_ratio(a.view(), l.view()), 0.0);
        let wrong = array![[2.0f64, 0.0], [1.0, 2.1]];
        assert!(cholesky_ratio(a.view(), wrong.view()) > 1e10);
    }
}
