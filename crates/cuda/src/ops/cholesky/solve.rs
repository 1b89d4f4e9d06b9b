//! Solves with the factor, `L·Lᵀ·X = B` in place: the forward solve `L·Y = B`, then the
//! backward solve `Lᵀ·X = Y`, each a recursive blocked triangular solve. The rows split
//! in two halves (at a multiple of 64): solve the first, subtract its contribution from
//! the second with one GEMM (`B₂ −= L₂₁·X₁`, or `B₁ −= L₂₁ᵀ·X₂` going back), solve the
//! second. Almost all the work (n²·nrhs per solve) is in those GEMMs, which the GEMM
//! ladder's fastest rung runs on the row blocks of B in place, with the large ones at the
//! top of the recursion; the 64-row diagonal blocks are solved by the `solve_diag`
//! kernels, as in the blocked algorithm before this one. The block of L under the
//! diagonal is copied to a contiguous buffer first (transposed going back).

use ndgpu_core::Result;
use ndgpu_cuda_runtime::{dim_i32, CudaElement, DeviceMatrix, Gpu};

use super::{launch, NB};
use crate::ops::matmul::{gemm_views, transposed};

/// Solves `L·Lᵀ·X = B` in place (`b` becomes X, n×nrhs) with the lower triangle of the
/// n×n `l`.
///
/// # Errors
/// Out of memory (the copied blocks of L); device errors.
pub(super) fn solve<T: CudaElement>(
    gpu: &Gpu,
    l: &DeviceMatrix<T>,
    b: &mut DeviceMatrix<T>,
) -> Result<()> {
    let n = l.rows;
    let s = Solve {
        gpu,
        l,
        ni: dim_i32("cholesky_solve", n)?,
        nrhs: b.cols,
    };
    dim_i32("cholesky_solve", b.cols)?;
    s.trsm(b, 0, n, false)?;
    s.trsm(b, 0, n, true)
}

struct Solve<'a, T> {
    gpu: &'a Gpu,
    l: &'a DeviceMatrix<T>,
    ni: i32,
    nrhs: usize,
}

impl<T: CudaElement> Solve<'_, T> {
    /// Solves rows `[r0, r0 + len)` of B in place: with `L[r0.., r0..]` (forward) or its
    /// transpose (backward). `r0` is a multiple of 64; so is `len` unless the block ends
    /// at n.
    fn trsm(&self, b: &mut DeviceMatrix<T>, r0: usize, len: usize, back: bool) -> Result<()> {
        let (gpu, nrhs) = (self.gpu, self.nrhs);
        if len <= NB {
            return launch::solve_diag(gpu, back, self.l, self.ni, b, nrhs as i32, r0 as i32);
        }
        let h = (len / 2).next_multiple_of(NB);
        let m2 = len - h;
        // L₂₁ = L[r0 + h .. r0 + len, r0 .. r0 + h], m2 × h.
        let mut l21 = gpu.alloc_matrix::<T>("cholesky_solve", m2, h)?;
        gpu.copy_block(self.l, (r0 + h, r0), &mut l21)?;
        let minus_one = -T::one();
        if !back {
            self.trsm(b, r0, h, false)?;
            // B₂ −= L₂₁·X₁ (rows r0 + h .. r0 + len, from rows r0 .. r0 + h).
            let (top, mut bottom) = b.data.split_at_mut((r0 + h) * nrhs);
            let x1 = top.slice(r0 * nrhs..);
            let mut b2 = bottom.slice_mut(..m2 * nrhs);
            let a = l21.data.as_view();
            gemm_views(gpu, (m2, nrhs, h), minus_one, &a, &x1, T::one(), &mut b2)?;
            self.trsm(b, r0 + h, m2, false)
        } else {
            self.trsm(b, r0 + h, m2, true)?;
            // B₁ −= L₂₁ᵀ·X₂ (rows r0 .. r0 + h, from rows r0 + h .. r0 + len).
            let l21t = transposed(gpu, &l21)?;
            let (mut top, bottom) = b.data.split_at_mut((r0 + h) * nrhs);
            let mut b1 = top.slice_mut(r0 * nrhs..);
            let x2 = bottom.slice(..m2 * nrhs);
            let a = l21t.data.as_view();
            gemm_views(gpu, (h, nrhs, m2), minus_one, &a, &x2, T::one(), &mut b1)?;
            self.trsm(b, r0, h, true)
        }
    }
}
