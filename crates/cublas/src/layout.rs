//! The one place where row-major meets column-major.
//!
//! ndgpu keeps matrices row-major; cuBLAS reads them column-major. A row-major r×c
//! buffer read column-major (leading dimension c) is the c×r matrix Xᵀ, so no data has
//! to move: a row-major `C = op(A)·op(B)` is the column-major `Cᵀ = op(B)ᵀ·op(A)ᵀ`.
//! cuBLAS therefore gets the operands swapped (its A is our B's buffer, its B our A's),
//! m and n swapped, the same transpose flags (op(B)ᵀ of the buffer-matrix Bᵀ is op
//! applied to it with the same flag), and leading dimensions equal to the row-major
//! row lengths.

use cudarc::cublas::sys::cublasOperation_t;
use ndgpu_core::Trans;

/// The arguments of a column-major GEMM computing a row-major
/// `C (m×n) = op(A)·op(B)`. cuBLAS' operand A is **our B's buffer** and its operand B
/// is **our A's buffer**; C is C's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColMajorGemm {
    /// cuBLAS `transa` (applies to our B's buffer).
    pub transa: Trans,
    /// cuBLAS `transb` (applies to our A's buffer).
    pub transb: Trans,
    /// cuBLAS `m`: columns of the row-major C.
    pub m: usize,
    /// cuBLAS `n`: rows of the row-major C.
    pub n: usize,
    /// cuBLAS `k`: the inner dimension.
    pub k: usize,
    /// Leading dimension of cuBLAS' A: the row length of our B (at least 1).
    pub lda: usize,
    /// Leading dimension of cuBLAS' B: the row length of our A (at least 1).
    pub ldb: usize,
    /// Leading dimension of C: the row length of our C (at least 1).
    pub ldc: usize,
}

/// Translates a row-major `op(A)·op(B)` (A is `a_dim`, B is `b_dim`, both stored
/// row-major and contiguous) into column-major GEMM arguments. The inner dimensions
/// must agree (checked by the caller); leading dimensions are clamped to 1, as cuBLAS
/// requires even when a dimension is 0.
pub fn col_major_gemm(
    a_dim: (usize, usize),
    ta: Trans,
    b_dim: (usize, usize),
    tb: Trans,
) -> ColMajorGemm {
    let (m, k) = ta.dim(a_dim);
    let (_, n) = tb.dim(b_dim);
    ColMajorGemm {
        transa: tb,
        transb: ta,
        m: n,
        n: m,
        k,
        lda: b_dim.1.max(1),
        ldb: a_dim.1.max(1),
        ldc: n.max(1),
    }
}

/// The cuBLAS flag for a [`Trans`].
pub fn op(t: Trans) -> cublasOperation_t {
    match t {
        Trans::No => cublasOperation_t::CUBLAS_OP_N,
        Trans::Yes => cublasOperation_t::CUBLAS_OP_T,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference BLAS GEMM on column-major slices: `C ← α·op(A)·op(B) + β·C`.
    #[allow(clippy::too_many_arguments)]
    fn host_gemm_col_major(
        transa: Trans,
        transb: Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: f64,
        a: &[f64],
        lda: usize,
        b: &[f64],
        ldb: usize,
        beta: f64,
        c: &mut [f64],
        ldc: usize,
    ) {
        let at = |i: usize, l: usize| match transa {
            Trans::No => a[i + l * lda],
            Trans::Yes => a[l + i * lda],
        };
        let bt = |l: usize, j: usize| match transb {
            Trans::No => b[l + j * ldb],
            Trans::Yes => b[j + l * ldb],
        };
        for j in 0..n {
            for i in 0..m {
                let s: f64 = (0..k).map(|l| at(i, l) * bt(l, j)).sum();
                let old = if beta == 0.0 { 0.0 } else { c[i + j * ldc] };
                c[i + j * ldc] = alpha * s + beta * old;
            }
        }
    }

    /// Row-major `op(A)·op(B)` two ways: through the translation and the column-major
    /// reference, and by the definition.
    fn translated_and_naive(
        a: &[f64],
        a_dim: (usize, usize),
        ta: Trans,
        b: &[f64],
        b_dim: (usize, usize),
        tb: Trans,
    ) -> (Vec<f64>, Vec<f64>) {
        let g = col_major_gemm(a_dim, ta, b_dim, tb);
        let mut translated = vec![f64::NAN; g.m * g.n];
        host_gemm_col_major(
            g.transa,
            g.transb,
            g.m,
            g.n,
            g.k,
            1.0,
            b,
            g.lda,
            a,
            g.ldb,
            0.0,
            &mut translated,
            g.ldc,
        );
        let (m, k) = ta.dim(a_dim);
        let (_, n) = tb.dim(b_dim);
        let ae = |i: usize, l: usize| match ta {
            Trans::No => a[i * a_dim.1 + l],
            Trans::Yes => a[l * a_dim.1 + i],
        };
        let be = |l: usize, j: usize| match tb {
            Trans::No => b[l * b_dim.1 + j],
            Trans::Yes => b[j * b_dim.1 + l],
        };
        let mut naive = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                naive[i * n + j] = (0..k).map(|l| ae(i, l) * be(l, j)).sum();
            }
        }
        (translated, naive)
    }

    /// Small integers: every product and sum is exact, so results compare with `==`.
    fn ints(len: usize, seed: usize) -> Vec<f64> {
        (0..len)
            .map(|i| ((i * 7 + seed * 13) % 11) as f64 - 5.0)
            .collect()
    }

    #[test]
    fn worked_examples() {
        use Trans::{No, Yes};
        // (A's shape, ta, B's shape, tb) → (transa, transb, m, n, k, lda, ldb, ldc).
        let cases = [
            // A 2×3, B 3×4 → C 2×4 = column-major C' (4×2) = B'(4×3)·A'(3×2).
            ((2, 3), No, (3, 4), No, (No, No, 4, 2, 3, 4, 3, 4)),
            // A 3×2 used as Aᵀ (2×3), B 3×4 → C 2×4.
            ((3, 2), Yes, (3, 4), No, (No, Yes, 4, 2, 3, 4, 2, 4)),
            // M 5×3: M·Mᵀ is 5×5 with k = 3; cuBLAS' A is Mᵀ-flagged M.
            ((5, 3), No, (5, 3), Yes, (Yes, No, 5, 5, 3, 3, 3, 5)),
            // A 4×2 (Aᵀ 2×4), B 3×4 (Bᵀ 4×3) → C 2×3.
            ((4, 2), Yes, (3, 4), Yes, (Yes, Yes, 3, 2, 4, 4, 2, 3)),
        ];
        for (a_dim, ta, b_dim, tb, want) in cases {
            let g = col_major_gemm(a_dim, ta, b_dim, tb);
            assert_eq!(
                (g.transa, g.transb, g.m, g.n, g.k, g.lda, g.ldb, g.ldc),
                want,
                "A {a_dim:?} {ta:?}, B {b_dim:?} {tb:?}"
            );
        }
    }

    #[test]
    fn zero_dimensions_keep_leading_dimensions_valid() {
        // k = 0 with B transposed would give lda = 0, which cuBLAS rejects.
        let g = col_major_gemm((3, 0), Trans::No, (4, 0), Trans::Yes);
        assert_eq!((g.m, g.n, g.k), (4, 3, 0));
        assert!(g.lda >= 1 && g.ldb >= 1 && g.ldc >= 1);
    }

    #[test]
    fn every_flag_combination_matches_the_definition() {
        let all = [Trans::No, Trans::Yes];
        for ta in all {
            for tb in all {
                // op(A) 3×5, op(B) 5×7: rectangular everywhere so a swap would show.
                let a_dim = if ta == Trans::No { (3, 5) } else { (5, 3) };
                let b_dim = if tb == Trans::No { (5, 7) } else { (7, 5) };
                let a = ints(15, 1);
                let b = ints(35, 2);
                let (translated, naive) = translated_and_naive(&a, a_dim, ta, &b, b_dim, tb);
                assert_eq!(translated, naive, "ta = {ta:?}, tb = {tb:?}");
            }
        }
    }

    fn trans() -> impl Strategy<Value = Trans> {
        prop_oneof![Just(Trans::No), Just(Trans::Yes)]
    }

    proptest! {
        #![proptest_config(ndgpu_conformance::strategies::seeded(ProptestConfig::default()))]

        #[test]
        fn translation_matches_definition(
            m in 0usize..9, n in 0usize..9, k in 0usize..9,
            ta in trans(), tb in trans(), seed in 0usize..100,
        ) {
            let a_dim = if ta == Trans::No { (m, k) } else { (k, m) };
            let b_dim = if tb == Trans::No { (k, n) } else { (n, k) };
            let a = ints(m * k, seed);
            let b = ints(k * n, seed + 1);
            let (translated, naive) = translated_and_naive(&a, a_dim, ta, &b, b_dim, tb);
            prop_assert_eq!(translated, naive);
        }
    }
}
