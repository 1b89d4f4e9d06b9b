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
//! | LU `P·A = L·U`, partial pivoting | `‖PA − L̂Û‖ ≤ γₙ ‖|L̂|·|Û|‖` | [`LU_RATIO`]: LAPACK's xGET01 `‖P·A − L̂·Û‖₁ / (n·ε·‖A‖₁)` ≤ 30 ([`lu_ratio`]) |
//! | solve with an LU factor, `inv` | `(A + ΔA)·x̂ = b`, `|ΔA| ≤ γ₃ₙ |L̂|·|Û|` | [`SOLVE_RATIO`] as xGET02, column by column ([`solve_ratio`]) |
//! | triangular solve | `(T + ΔT)·x̂ = b`, `|ΔT| ≤ γₙ |T|` | [`TRSM_RATIO`]: xTRT02 `‖B − op(T)·X̂‖₁ / (n·ε·‖op(T)‖₁·‖X̂‖₁)` ≤ 30 ([`trsm_ratio`]) |
//! | Householder QR `A = Q·R` | `‖A − Q̂R̂‖ ≤ γ_{cmn} ‖A‖`, `‖Q̂ᵀQ̂ − I‖ ≤ γ_{cmn}` | [`QR_RATIO`], [`ORTHOGONALITY_RATIO`]: xQRT01 `‖A − Q̂·R̂‖₁ / (m·ε·‖A‖₁)` and `‖Q̂ᵀQ̂ − I‖₁ / (m·ε)` ≤ 30 |
//! | least squares through QR | solves a problem with `‖ΔA‖ ≤ γ_{cmn}‖A‖`, `‖Δb‖ ≤ γ_{cmn}‖b‖` | [`LSTSQ_RATIO`]: xQRT17 `‖Aᵀ·(B − A·X̂)‖₁ / (max(m, n, nrhs)·ε·‖A‖₁·max(‖B‖₁, ‖A‖₁‖X̂‖₁))` ≤ 30 |
//! | symmetric eigendecomposition `A = V·Λ·Vᵀ` | backward stable: the exact decomposition of `A + ΔA`, `‖ΔA‖ ≤ γ_{cn²}‖A‖`, V orthogonal to `γ_{cn²}` | [`EIGH_RATIO`]: xSYT21's `‖A·V̂ − V̂·Λ̂‖₁ / (n·ε·‖A‖₁)` ≤ 30, and [`ORTHOGONALITY_RATIO`] for V̂ |
//! | SVD `A = U·Σ·Vᵀ` | backward stable as above | [`SVD_RATIO`]: xBDT01's `‖A − Û·Σ̂·V̂ᵀ‖₁ / (max(m, n)·ε·‖A‖₁)` ≤ 30, [`ORTHOGONALITY_RATIO`] for Û and V̂ |
//! | eigenvalues, singular values | Weyl: `|λ̂ᵢ − λᵢ| ≤ ‖ΔA‖₂` (and so for σ) | [`SPECTRUM_RATIO`]: `maxᵢ |λ̂ᵢ − λᵢ| / (n·ε·‖A‖_F)` ≤ 30 against the reference |
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

/// Defines `name::<T>(precision)`: the threshold `BASE` for an algorithm whose products
/// are computed in `precision`, scaled by [`on_precision`] as [`cholesky_ratio`] is.
macro_rules! scaled {
    ($($(#[$doc:meta])* $name:ident => $base:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name<T: Element>(precision: Precision) -> f64 {
            on_precision::<T>($base, precision)
        }
    )*};
}

scaled! {
    /// [`LU_RATIO`] for a factorization whose trailing updates are products computed in
    /// `precision` (a blocked LU's GEMMs), scaled as [`cholesky_ratio`].
    lu_ratio => LU_RATIO;
    /// [`SOLVE_RATIO`] (LAPACK's xGET02 `‖bⱼ − A·xⱼ‖₁ / (n·ε·‖A‖₁·‖xⱼ‖₁)`, the worst column)
    /// for solves with an LU factor, and for `inv` with B = I (each column of A⁻¹ is such
    /// a solve). The solution of the two triangular systems satisfies
    /// `(A + ΔA)·x̂ = b` with `|ΔA| ≤ γ₃ₙ |L̂|·|Û|` (Higham, Thm. 9.4), whatever the
    /// condition of A: the same growth factor as [`LU_RATIO`] bounds it. Products in
    /// `precision` scale it as [`cholesky_ratio`].
    solve_ratio => SOLVE_RATIO;
    /// [`TRSM_RATIO`] for a solve whose block updates are products in `precision`.
    trsm_ratio => TRSM_RATIO;
    /// [`QR_RATIO`] for a factorization whose blocked updates are products in `precision`.
    qr_ratio => QR_RATIO;
    /// [`ORTHOGONALITY_RATIO`] for a Q formed or applied with products in `precision`.
    orthogonality_ratio => ORTHOGONALITY_RATIO;
    /// [`LSTSQ_RATIO`] for a QR and solve whose products are computed in `precision`.
    lstsq_ratio => LSTSQ_RATIO;
    /// [`EIGH_RATIO`] for an eigendecomposition whose products are in `precision`.
    eigh_ratio => EIGH_RATIO;
    /// [`SVD_RATIO`] for an SVD whose products are in `precision`.
    svd_ratio => SVD_RATIO;
    /// [`SPECTRUM_RATIO`] for eigenvalues or singular values computed with products in
    /// `precision`.
    spectrum_ratio => SPECTRUM_RATIO;
}

/// Relative slack on a squared distance `‖x − c‖²` computed in `T` with `d` dimensions,
/// in either form (direct differences, or `‖x‖² − 2x·c + ‖c‖²`): the expanded form loses
/// up to `(d+2)·ε·(‖x‖² + ‖c‖²)` absolutely. Two centroids whose distances differ by
/// less than this may be swapped by rounding, so tests accept either label.
pub fn distance<T: Element>(d: usize) -> f64 {
    4.0 * (d as f64 + 2.0) * T::EPS
}

/// The threshold `base` of a LAPACK-style ratio for an algorithm whose products may be
/// computed in `precision`, scaled as [`cholesky_ratio`] scales [`CHOLESKY_RATIO`]:
/// three times it for f32 on 3xTF32, plus 2⁻¹⁰/ε for f32 on TF32.
fn on_precision<T: Element>(base: f64, precision: Precision) -> f64 {
    match (precision, T::DTYPE) {
        (Precision::Tf32x3, DType::F32) => 3.0 * base,
        (Precision::Tf32, DType::F32) => base + 2f64.powi(-10) / f32::EPSILON as f64,
        _ => base,
    }
}

/// Threshold on LAPACK's LU test ratio (xGET01) `‖P·A − L·U‖₁ / (n·ε·‖A‖₁)` for an m×n A
/// (n its columns, as LAPACK divides by).
///
/// Gaussian elimination with partial pivoting computes `L̂·Û = P·A + ΔA` with
/// `|ΔA| ≤ γₖ |L̂|·|Û|` (Higham, Thm. 9.3; k = min(m, n) terms in each entry). Pivoting
/// keeps `|L̂ᵢⱼ| ≤ 1`, so `‖|L̂|·|Û|‖₁` is ‖A‖₁ times a growth factor, which is at most
/// 2ⁿ⁻¹ but in practice a small multiple of one (Trefethen and Schreiber: about n^⅔
/// for random matrices, and the rounding errors are not all of one sign). LAPACK's
/// tests accept 30 on every matrix type they generate.
pub const LU_RATIO: f64 = 30.0;

/// Threshold on LAPACK's triangular-solve ratio (xTRT02)
/// `‖bⱼ − op(T)·xⱼ‖₁ / (n·ε·‖op(T)‖₁·‖xⱼ‖₁)`, the worst column. Substitution is
/// backward stable row by row: `(T + ΔT)·x̂ = b` with `|ΔT| ≤ γₙ |T|` (Higham,
/// Thm. 8.5), in any order of the sums, so the ratio is at most about one; a blocked
/// solve's off-diagonal blocks are products, which keep the bound.
pub const TRSM_RATIO: f64 = 30.0;

/// Threshold on LAPACK's QR ratio (xQRT01) `‖A − Q·R‖₁ / (m·ε·‖A‖₁)` for an m×n A.
///
/// Householder QR is normwise backward stable: `A + ΔA = Q·R̂` for an exactly
/// orthogonal Q with `‖ΔAⱼ‖₂ ≤ γ_{cm}‖Aⱼ‖₂` column by column (Higham, Thm. 19.4); the
/// computed Q̂ is within `γ_{cmn}` of that Q. The constants c are small and the
/// errors add up like a random walk, so LAPACK divides by m·ε only and accepts 30.
pub const QR_RATIO: f64 = 30.0;

/// Threshold on LAPACK's orthogonality ratio (xQRT01) `‖Q̂ᵀ·Q̂ − I‖₁ / (m·ε)` of the Q of
/// an m×n QR (m×min(m, n) or m×m). Q̂ is a product of min(m, n) reflections, each
/// orthogonal to within a few ε once rounded (Higham, Lemma 19.3), so Q̂ is orthogonal
/// to within `γ_{cmn}`, as for [`QR_RATIO`].
pub const ORTHOGONALITY_RATIO: f64 = 30.0;

/// Threshold on the least-squares ratio, after LAPACK's xQRT17:
/// `‖Aᵀ·R‖₁ / (max(m, n, nrhs)·ε·‖A‖₁·α)` with `R = B − A·X̂` and
/// `α = max(‖B‖₁, ‖A‖₁·‖X̂‖₁)`.
///
/// The exact solution has `Aᵀ·R = 0` (the normal equations). Least squares through
/// Householder QR solves a nearby problem exactly (Higham, Thm. 20.3):
/// `(A + ΔA)ᵀ·(B + ΔB − (A + ΔA)·X̂) = 0` with `‖ΔA‖ ≤ γ_{cmn}‖A‖` and
/// `‖ΔB‖ ≤ γ_{cmn}‖B‖`. Expanding, `Aᵀ·R = −ΔAᵀ·R̃ − Aᵀ·(ΔB − ΔA·X̂)`, where the
/// residual `R̃` of the nearby problem is at most ‖B + ΔB‖; so
/// `‖Aᵀ·R‖ ≲ γ_{cmn}·‖A‖·(2‖B‖ + ‖A‖·‖X̂‖)`. xQRT17 divides by ‖A‖·‖B‖ only, which
/// holds while ‖A‖·‖X̂‖ ≲ ‖B‖ (a well conditioned A); α keeps the bound true for any
/// condition (‖A‖·‖X̂‖ ≤ κ(A)·‖B‖). As for [`QR_RATIO`], the `cmn` of the bound is
/// replaced by LAPACK's max(m, n, nrhs) and the threshold 30.
pub const LSTSQ_RATIO: f64 = 30.0;

/// Threshold on LAPACK's eigendecomposition ratio (xSYT21's first test, column form)
/// `‖A·V̂ − V̂·Λ̂‖₁ / (n·ε·‖A‖₁)` for a symmetric n×n A.
///
/// Jacobi, and reduction to tridiagonal form followed by a tridiagonal eigensolver, are
/// backward stable: `Λ̂` and a V̂ orthogonal to within `γ_{cn²}` are an exact
/// decomposition of `A + ΔA` with `‖ΔA‖ ≤ γ_{cn²}‖A‖` (Demmel, *Applied
/// Numerical Linear Algebra*, §5.3–5.4). The residual is then `ΔA·V̂` plus the
/// departure of V̂ from orthogonality times ‖A‖. As for [`QR_RATIO`], the errors add
/// like a random walk: LAPACK divides by n·ε and accepts 30.
pub const EIGH_RATIO: f64 = 30.0;

/// Threshold on LAPACK's SVD ratio (xBDT01, as xDRVBD uses it)
/// `‖A − Û·Σ̂·V̂ᵀ‖₁ / (max(m, n)·ε·‖A‖₁)` for an m×n A. The SVD by bidiagonalisation or
/// by one-sided Jacobi is backward stable in the sense of [`EIGH_RATIO`].
pub const SVD_RATIO: f64 = 30.0;

/// Threshold on `maxᵢ |λ̂ᵢ − λᵢ| / (n·ε·‖A‖_F)` for the eigenvalues of a symmetric n×n A
/// (or the singular values of an m×n A, n = max(m, n)) against the reference's.
///
/// By Weyl's theorem each eigenvalue of `A + ΔA` is within `‖ΔA‖₂` of the one of the
/// same rank in A (and each singular value likewise, Mirsky), whatever the clustering
/// or multiplicity; a backward-stable method has `‖ΔA‖₂ ≤ ‖ΔA‖_F ≲ γ_{cn}·‖A‖_F`. Both
/// the backend and the reference (f64, rounded once to `T`, at most ε/2 relative more)
/// are that close, so their difference is within twice the bound.
pub const SPECTRUM_RATIO: f64 = 30.0;
