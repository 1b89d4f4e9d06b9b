//! Tolerances from error analysis, the same for every test and for `ndgpu verify`.
//!
//! With unit roundoff `u = ε/2` (ε = [`Element::EPS`]), the classical bounds
//! (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 3, 4, 10) are:
//!
//! | quantity | bound | here |
//! |---|---|---|
//! | a sum of n terms, any order | `|ŝ − s| ≤ γₙ₋₁ Σ|xᵢ|`, γₙ = nu/(1−nu) | [`sum`]: `n·ε·Σ|x|` |
//! | each element of a product with inner dimension k | `|Ĉ − C| ≤ γₖ |A|·|B|` | [`gemm`]: `(k+2)·ε` times `|α|·|A|·|B| + |β|·|C|` |
//! | Cholesky `A = L·Lᵀ` | `‖A − L̂L̂ᵀ‖ ≤ γₙ₊₁ ‖L̂‖‖L̂ᵀ‖` | [`CHOLESKY_RATIO`]: LAPACK's test ratio `‖A − L̂L̂ᵀ‖₁ / (n·ε·‖A‖₁)` ≤ 30 (f32 on 3xTF32: 90, [`cholesky_ratio`]) |
//! | solve with the factor | backward stable | [`SOLVE_RATIO`]: `‖B − A·X̂‖₁ / (n·ε·‖A‖₁·‖X̂‖₁)` ≤ 30 |
//!
//! Using ε = 2u in place of u, and `+2` terms, leaves a factor of about two for the
//! reference's own rounding (it runs in f64) and for fused multiply-adds.

use crate::{DType, Element, Precision};

/// Relative bound for each element of a product with inner dimension `k`: multiply it
/// by `(|α|·|op(A)|·|op(B)| + |β|·|C|)ᵢⱼ`.
pub fn gemm<T: Element>(k: usize) -> f64 {
    (k as f64 + 2.0) * T::EPS
}

/// As [`gemm`] for TF32 tensor-core math: operands rounded to 10 explicit mantissa bits
/// (u = 2⁻¹¹) before an f32 accumulation.
pub fn gemm_tf32(k: usize) -> f64 {
    2.0 * 2f64.powi(-11) + (k as f64 + 2.0) * f32::EPSILON as f64
}

/// As [`gemm`] for 3xTF32 tensor-core math. Each f32 operand x is split into
/// `big = tf32(x)` and `small = tf32(x − big)`, so `x = big + small + δ` with
/// `|δ| ≤ 2⁻²²|x|`; the products `small·big + big·small + big·big` miss `a·b` by at most
/// `(2·2⁻²² + 2⁻²²)·|a|·|b|` = 3·2⁻²² (the two δ terms and small·small), which is 6ε; and
/// the f32 accumulation sums 3k terms. So `(3k + 8)·ε`: within a factor of three of the
/// f32 bound, where 1×TF32's is near 2⁻¹⁰ whatever k.
pub fn gemm_3xtf32(k: usize) -> f64 {
    (3.0 * k as f64 + 8.0) * f32::EPSILON as f64
}

/// Relative bound for a sum (or dot, or sum of squares) of `n` terms: multiply it by
/// `Σ|xᵢ|` (or `Σ|xᵢyᵢ|`, `Σxᵢ²`).
pub fn sum<T: Element>(n: usize) -> f64 {
    (n.max(1) as f64 + 1.0) * T::EPS
}

/// Threshold on LAPACK's Cholesky test ratio `‖A − L·Lᵀ‖₁ / (n·ε·‖A‖₁)` (xPOT01 uses 30).
pub const CHOLESKY_RATIO: f64 = 30.0;

/// Threshold on LAPACK's Cholesky ratio for a factorization whose products are computed
/// in `precision`: [`CHOLESKY_RATIO`] in the element type's own arithmetic. f32 on
/// 3xTF32: three times it, as the bound of every product and sum the factorization forms,
/// [`gemm_3xtf32`]'s `(3k + 8)·ε`, is within three times the f32 one, `(k + 2)·ε`. f32 on
/// TF32: every product may be off by 2⁻¹⁰ relative whatever n, so that error over n·ε
/// (at most 2⁻¹⁰/ε) on top.
pub fn cholesky_ratio<T: Element>(precision: Precision) -> f64 {
    match (precision, T::DTYPE) {
        (Precision::Tf32x3, DType::F32) => 3.0 * CHOLESKY_RATIO,
        (Precision::Tf32, DType::F32) => CHOLESKY_RATIO + 2f64.powi(-10) / f32::EPSILON as f64,
        _ => CHOLESKY_RATIO,
    }
}

/// Threshold on `‖B − A·X‖₁ / (n·ε·‖A‖₁·‖X‖₁)` (LAPACK's xPOT02 uses 30).
pub const SOLVE_RATIO: f64 = 30.0;

/// Relative slack on a squared distance `‖x − c‖²` computed in `T` with `d` dimensions,
/// in either form (direct differences, or `‖x‖² − 2x·c + ‖c‖²`): the expanded form loses
/// up to `(d+2)·ε·(‖x‖² + ‖c‖²)` absolutely. Two centroids whose distances differ by
/// less than this may be swapped by rounding, so tests accept either label.
pub fn distance<T: Element>(d: usize) -> f64 {
    4.0 * (d as f64 + 2.0) * T::EPS
}
