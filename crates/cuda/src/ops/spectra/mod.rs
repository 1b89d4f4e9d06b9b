//! Spectra ladder: the symmetric eigendecomposition (`eigh`) and the reduced SVD.
//!
//! | variant | what it computes |
//! |---|---|
//! | `auto` (default) | `block_jacobi` for an SVD with k = min(m, n) ≤ 64 (a tall-skinny or short-wide data matrix), `hybrid` otherwise and for eigh |
//! | `block_jacobi` | SVD: one-sided block Jacobi ([`block`], [`jacobi`]) on the tall orientation B of A (A, or Aᵀ when wide), held transposed on the device: per sweep G = BᵀB by the gram ladder's IEEE `stream_k`, read back; stop once every pair of columns is orthogonal to √m·ε (xGESVJ's test); else G's eigenvectors W by cyclic Jacobi in f64 on the host, B ← B·W by the GEMM ladder's IEEE `split_k`, V ← V·W on the host; at most 30 sweeps. σ_j = sqrt(g_jj) of the last G, U = B·diag(1/σ) permuted by one GEMM. Falls back to `hybrid` for that call where G holds NaN or ±Inf, or some σ_j ≤ k·ε·σ_max. eigh runs `hybrid` |
//! | `hybrid` | A read back in f64, the faer backend's `self_adjoint_eigen` / `thin_svd` on the host (tridiagonal or bidiagonal reduction, then divide and conquer), the results rounded and uploaded |
//!
//! f32 input computes in f32 on the device (G and the products) and in f64 on the host
//! (Jacobi on G, V, and all of `hybrid`).

mod block;
mod hybrid;
mod jacobi;

use ndgpu_core::Variant as Row;
use ndgpu_core::{Backend, Family, Matrix, Result};
use ndgpu_cuda_runtime::CudaElement;

use super::find_row;
use crate::CudaBackend;

/// `(w, V)` of an eigendecomposition, V when asked for.
pub(crate) type Eigh<T> = (Matrix<T>, Option<Matrix<T>>);

/// `(s, (U, Vt))` of an SVD, U and Vt when asked for.
pub(crate) type Svd<T> = (Matrix<T>, Option<(Matrix<T>, Matrix<T>)>);

/// Variants, default first.
pub const VARIANTS: &[Row] = &[
    Row::new(
        "auto",
        "block_jacobi for an SVD with k = min(m, n) <= 64, hybrid otherwise and for eigh",
    ),
    Row::new(
        "block_jacobi",
        "SVD by one-sided block Jacobi: per sweep G = B'B on the device (gram stream_k, \
         IEEE), read back; stop when every |g_ij| <= sqrt(m)*eps*sqrt(g_ii*g_jj); else G's \
         eigenvectors W by cyclic Jacobi in f64 on the host and B <- B*W on the device \
         (GEMM split_k, IEEE); at most 30 sweeps (NoConvergence); wide A as A'; that call \
         runs hybrid where G has NaN/Inf or some sigma_j <= k*eps*sigma_max; eigh runs \
         hybrid",
    ),
    Row::new(
        "hybrid",
        "A read back in f64, faer's self_adjoint_eigen / thin_svd on the host (the faer \
         backend's kernels), the results rounded and uploaded",
    ),
];

/// Determinism and scope.
pub const NOTE: &str = "block_jacobi: bitwise reproducible on one device and dtype (the \
    gram and GEMM variants it calls sum in a fixed order, the host Jacobi is sequential); \
    the bits may differ between devices, whose kernel choice depends on the SM count and, \
    for f64, on FP64 tensor cores. hybrid gives the bits faer gives on this host, not \
    claimed reproducible across faer's thread counts. Both read A in full; eigh reads \
    only its lower triangle. NaN/Inf is NonFinite naming the entry (found on the host copy)";

/// Whether `variant` takes the SVD of an m×n matrix by block Jacobi.
fn uses_block_jacobi(variant: &str, (m, n): (usize, usize)) -> Result<bool> {
    Ok(match find_row(VARIANTS, Family::Spectra, variant)?.name {
        "block_jacobi" => true,
        "auto" => m.min(n) <= 64,
        _ => false,
    })
}

impl CudaBackend {
    /// `FactorizeKernels::eigh_unchecked`: `hybrid` on every variant.
    pub(crate) fn eigh_kernel<T: CudaElement>(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<Eigh<T>> {
        find_row(VARIANTS, Family::Spectra, self.variant(Family::Spectra))?;
        hybrid::eigh(self, a, vectors)
    }

    /// `FactorizeKernels::svd_unchecked`: `block_jacobi` where the variant picks it and
    /// it can answer, else `hybrid`.
    pub(crate) fn svd_kernel<T: CudaElement>(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<Svd<T>> {
        if uses_block_jacobi(self.variant(Family::Spectra), a.dim())? {
            if let Some(r) = block::svd(self, a, vectors)? {
                return Ok(r);
            }
        }
        hybrid::svd(self, a, vectors)
    }
}

#[cfg(test)]
mod tests {
    use ndgpu_core::Precision;

    use super::*;
    use crate::ops::{gram, matmul};

    #[test]
    fn auto_takes_block_jacobi_up_to_64_columns_either_way_round() {
        assert!(uses_block_jacobi("auto", (1 << 20, 32)).unwrap());
        assert!(uses_block_jacobi("auto", (64, 5000)).unwrap());
        assert!(!uses_block_jacobi("auto", (5000, 65)).unwrap());
        assert!(uses_block_jacobi("block_jacobi", (500, 500)).unwrap());
        assert!(!uses_block_jacobi("hybrid", (100, 3)).unwrap());
        assert!(uses_block_jacobi("qr", (3, 3)).is_err());
    }

    #[test]
    fn block_jacobi_calls_ieee_reproducible_gram_and_gemm_variants() {
        let g = gram::variants().find(|v| v.name == block::GRAM).unwrap();
        let p = matmul::variants().find(|v| v.name == block::GEMM).unwrap();
        for v in [g, p] {
            assert_eq!(v.precision, Precision::Ieee, "{}", v.name);
            assert!(v.reproducible, "{}", v.name);
        }
    }

    #[test]
    fn the_default_is_auto() {
        assert_eq!(VARIANTS[0].name, "auto");
    }
}
