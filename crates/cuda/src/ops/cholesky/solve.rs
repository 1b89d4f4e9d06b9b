//! Solves with the factor, `L·Lᵀ·X = B` in place: the forward solve `L·Y = B`, then the
//! backward solve `Lᵀ·X = Y`, each a recursive blocked triangular solve. The rows split
//! in two halves (at a multiple of 64): solve the first, subtract its contribution from
//! the second with one GEMM (`B₂ −= L₂₁·X₁`, or `B₁ −= L₂₁ᵀ·X₂` going back), solve the
//! second. Almost all the work (n²·nrhs per solve) is in those GEMMs, which run on the
//! blocks of L and B where they lie (the GEMM ladder's fastest rung with leading
//! dimensions; going back it reads L₂₁ as its transpose), with the large ones at the
//! top of the recursion. The recursion stops at 256 rows, which one kernel solves: it
//! applies the 64-row diagonal blocks as products with their inverses (all computed by
//! one launch before the solves) and the blocks between them as small products in shared
//! memory, so no kernel steps through rows one barrier at a time, and no GEMM is too
//! small to fill the device.

use cudarc::driver::CudaSlice;
use ndgpu_core::Result;
use ndgpu_cuda_runtime::{dim_i32, CudaElement, DeviceMatrix, Gpu};

use super::{launch, NB};
use crate::ops::matmul::{gemm_strided, Strided};

/// Solves `L·Lᵀ·X = B` in place (`b` becomes X, n×nrhs) with the lower triangle of the
/// n×n `l`.
///
/// # Errors
/// Out of memory (the inverses of the diagonal blocks, n·64 elements); device errors.
pub(super) fn solve<T: CudaElement>(
    gpu: &Gpu,
    l: &DeviceMatrix<T>,
    b: &mut DeviceMatrix<T>,
) -> Result<()> {
    let n = l.rows;
    let ni = dim_i32("cholesky_solve", n)?;
    dim_i32("cholesky_solve", b.cols)?;
    let mut inv = gpu.alloc::<T>("cholesky_solve", n.div_ceil(NB) * NB * NB)?;
    launch::invert_diag(gpu, l, ni, &mut inv)?;
    let s = Solve { gpu, l, inv };
    s.trsm(b, 0, n, false)?;
    s.trsm(b, 0, n, true)
}

struct Solve<'a, T> {
    gpu: &'a Gpu,
    l: &'a DeviceMatrix<T>,
    /// The inverses of L's 64×64 diagonal blocks.
    inv: CudaSlice<T>,
}

impl<T: CudaElement> Solve<'_, T> {
    /// Solves rows `[r0, r0 + len)` of B in place: with `L[r0.., r0..]` (forward) or its
    /// transpose (backward). `r0` is a multiple of 64; so is `len` unless the block ends
    /// at n. Blocks of up to 256 rows are one leaf kernel.
    fn trsm(&self, b: &mut DeviceMatrix<T>, r0: usize, len: usize, back: bool) -> Result<()> {
        if len <= launch::LEAF {
            return launch::solve_leaf(self.gpu, back, self.l, &self.inv, b, (r0, len));
        }
        let (n, nrhs) = (self.l.rows, b.cols);
        let h = (len / 2).next_multiple_of(NB);
        let m2 = len - h;
        // L₂₁ = L[r0 + h .. r0 + len, r0 .. r0 + h], m2 × h, rows n apart.
        let l21 = self.l.data.slice((r0 + h) * n + r0..);
        let l21 = Strided { view: &l21, ld: n };
        let minus_one = -T::one();
        if !back {
            self.trsm(b, r0, h, false)?;
            // B₂ −= L₂₁·X₁ (rows r0 + h .. r0 + len, from rows r0 .. r0 + h).
            let (top, mut bottom) = b.data.split_at_mut((r0 + h) * nrhs);
            let x1 = top.slice(r0 * nrhs..);
            let mut b2 = bottom.slice_mut(..m2 * nrhs);
            gemm_strided(
                self.gpu,
                false,
                (m2, nrhs, h),
                minus_one,
                l21,
                Strided {
                    view: &x1,
                    ld: nrhs,
                },
                T::one(),
                Strided {
                    view: &mut b2,
                    ld: nrhs,
                },
            )?;
            self.trsm(b, r0 + h, m2, false)
        } else {
            self.trsm(b, r0 + h, m2, true)?;
            // B₁ −= L₂₁ᵀ·X₂ (rows r0 .. r0 + h, from rows r0 + h .. r0 + len).
            let (mut top, bottom) = b.data.split_at_mut((r0 + h) * nrhs);
            let mut b1 = top.slice_mut(r0 * nrhs..);
            let x2 = bottom.slice(..m2 * nrhs);
            gemm_strided(
                self.gpu,
                true,
                (h, nrhs, m2),
                minus_one,
                l21,
                Strided {
                    view: &x2,
                    ld: nrhs,
                },
                T::one(),
                Strided {
                    view: &mut b1,
                    ld: nrhs,
                },
            )?;
            self.trsm(b, r0, h, true)
        }
    }
}
