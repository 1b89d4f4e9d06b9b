//! LU with partial pivoting through cuSOLVER's 64-bit `getrf`, and its solves by row
//! swaps and two right-side TRSMs on B's own buffer.
//!
//! **Factor.** A row-major m×n buffer read column-major is Aᵀ, and `getrf` on it would
//! pivot A's columns. So A is transposed first (GEAM) into a new n×m row-major buffer,
//! which read column-major (lda = m) is A itself, and `cusolverDnXgetrf` (64-bit API,
//! `int64_t` pivots) factors it in place, as PyTorch calls it. The factor stays
//! column-major ([`FactorLayout::ColMajor`]: the resident matrix is n×m) and is never
//! transposed back. Then, all queued: LAPACK's 1-based pivots made 0-based, and one
//! `diag_scan` of the factor, the one synchronisation: the first exactly zero `U[p][p]`
//! is the factor's zero pivot, and NaN or ±Inf in it is [`Error::NonFinite`].
//! cuSOLVER's `info` is not read: a zero pivot is what the diagonal shows, and the
//! arguments are valid by construction.
//!
//! **NaN in A.** cuSOLVER's `getrf` was seen (CUDA 13, H200) to return a finite factor
//! of a matrix holding a NaN. So the factored buffer has one more row, A's row sums
//! (GEMV with ones, queued before `getrf`), which the same scan covers: a non-finite sum
//! names a row of A, which is then read back to name the entry (only on that path; a sum
//! of finite values that overflowed is no error). A is kept until the scan, so the peak
//! memory is A, its transpose and cuSOLVER's workspace. QR shares this ([`crate::qr`]).
//!
//! **Solve.** `P·A = L·U`, P the product of the swaps in order. B is row-major n×nrhs:
//! its buffer read column-major is Bᵀ (nrhs×n, ldb = nrhs), so every TRSM is from the
//! right on that buffer in place ([`crate::trsm`]); the factor's buffer read
//! column-major is M = the packed factor (L unit lower, U upper), lda = n.
//!
//! ```text
//! A·X = B:   L·U·X = P·B
//!            1. B ← P·B                          laswp forward (row swaps of B)
//!            2. Xᵀ·Uᵀ·Lᵀ = Bᵀ  →  Y·Lᵀ = Bᵀ       trsm RIGHT, LOWER, op T, UNIT
//!            3.                   Xᵀ·Uᵀ = Y      trsm RIGHT, UPPER, op T, NON_UNIT
//! Aᵀ·X = B:  A = Pᵀ·L·U, so Uᵀ·Lᵀ·P·X = B, i.e. Xᵀ·Pᵀ·L·U = Bᵀ; with Z = Xᵀ·Pᵀ:
//!            1. W·U = Bᵀ        (W = Z·L)        trsm RIGHT, UPPER, op N, NON_UNIT
//!            2. Z·L = W                          trsm RIGHT, LOWER, op N, UNIT
//!            3. X = (Z·P)ᵀ = Pᵀ·Zᵀ               laswp backward (Zᵀ is the row-major buffer)
//! ```
//!
//! A row-major factor (another backend's) is read the same way with each triangle's
//! uplo and op flipped (its buffer read column-major is the packed factor's transpose).
//! The plan is checked on the host against a dense solve in this module's tests.
//!
//! **Why not `getrs`.** cuSOLVER's `getrs` solves with side = left only, so it wants B
//! column-major (n×nrhs, ldb = n): B would be transposed into a copy (GEAM), solved,
//! and transposed back, two extra passes over B and n·nrhs more memory, for the same
//! swaps and two TRSMs `getrs` runs inside.

use cudarc::driver::CudaSlice;
use ndgpu_core::backend::{self, Here};
use ndgpu_core::{Error, FactorLayout, LuFactor, Matrix, Result, Trans, Triangular, Uplo, Variant};
use ndgpu_cuda_runtime::triangle::{laswp, pivots_from_lapack};
use ndgpu_cuda_runtime::{DeviceIndices, IndexStorage};

use crate::error::BACKEND;
use crate::factor::XFactor;
use crate::trsm::{flip, flip_trans};
use crate::{ptr_mut, BlasElement, CublasBackend};

/// The op of the factorization, in errors.
const OP: &str = "lu";
/// The op of the solves.
const SOLVE_OP: &str = "lu_solve";

/// Variants, default first.
pub const VARIANTS: &[Variant] = &[Variant::new(
    "getrf",
    "cusolverDnXgetrf (64-bit API, int64 pivots), as PyTorch calls it, on a column-major \
     copy (GEAM); the factor stays column-major, never transposed back; solves: B's rows \
     swapped, then two TRSMs from the right on B's row-major buffer in place (no copy of B)",
)];

/// What every variant shares.
pub const NOTE: &str = "one synchronisation per factorization: the factor's diagonal (an \
    exactly zero pivot is recorded in the factor) and the first non-finite entry of the \
    factor or of A's row sums (formed beside it: cuSOLVER's getrf can lose a NaN of A) are \
    read back together; solves are queued and never wait.";

/// One step of a solve with the factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The factor's row swaps applied to B's rows: in order (B ← P·B) or in reverse
    /// (B ← Pᵀ·B).
    Swap {
        /// In order.
        forward: bool,
    },
    /// A right-side TRSM on B's buffer with this triangle of the factor's buffer as
    /// cuBLAS reads it (column-major).
    Trsm(Triangular),
}

/// A triangle of the packed factor, as cuBLAS reads the factor's buffer: itself for a
/// column-major factor; for a row-major one the buffer read column-major is the
/// transpose, so the triangle is the other one, under the other op.
fn as_stored(layout: FactorLayout, t: Triangular) -> Triangular {
    match layout {
        FactorLayout::ColMajor => t,
        FactorLayout::RowMajor => Triangular {
            uplo: flip(t.uplo),
            trans: flip_trans(t.trans),
            unit: t.unit,
        },
    }
}

/// The steps of `op(A)·X = B` (see the module's derivation).
fn plan(layout: FactorLayout, trans: Trans) -> [Step; 3] {
    let l = |trans| {
        Step::Trsm(as_stored(
            layout,
            Triangular {
                uplo: Uplo::Lower,
                trans,
                unit: true,
            },
        ))
    };
    let u = |trans| {
        Step::Trsm(as_stored(
            layout,
            Triangular {
                uplo: Uplo::Upper,
                trans,
                unit: false,
            },
        ))
    };
    match trans {
        Trans::No => [Step::Swap { forward: true }, l(Trans::Yes), u(Trans::Yes)],
        Trans::Yes => [u(Trans::No), l(Trans::No), Step::Swap { forward: false }],
    }
}

impl CublasBackend {
    /// LU of the non-empty m×n `a` (see the module's doc).
    pub(crate) fn lu_kernel<T: BlasElement>(&self, a: Matrix<T>) -> Result<LuFactor<T>> {
        let gpu = &self.gpu;
        let (m, n) = a.dim();
        let k = m.min(n);
        let (t, scan, ipiv) = self.factor_scanned(OP, &a, |t, info| {
            let mut ipiv = gpu.alloc::<i64>(OP, k)?;
            let work = self.xfactor(t, info, XFactor::Getrf(ptr_mut(gpu, &mut ipiv)))?;
            pivots_from_lapack(gpu, &mut ipiv, k)?;
            Ok((work, ipiv))
        })?;
        let zero = scan.diag[..k].iter().position(|&d| d == 0.0);
        let pivots = gpu.index_array(k, gpu.indices(DeviceIndices::I64(ipiv)));
        let layout = FactorLayout::ColMajor;
        Ok(backend::lu_factor(
            gpu.matrix(t),
            pivots,
            layout,
            (m, n),
            zero,
        ))
    }

    /// `op(A)·X = B` in place on the row-major n×nrhs `b` with A's factor (square, no
    /// zero pivot, b non-empty: checked by the caller).
    pub(crate) fn lu_solve_kernel<T: BlasElement>(
        &self,
        (f, trans): (&LuFactor<T>, Trans),
        b: &mut Matrix<T>,
    ) -> Result<()> {
        let (gpu, here) = (&self.gpu, self.here());
        let packed = gpu.dm(here, SOLVE_OP, "the factor", f.packed())?;
        let ipiv = pivots(here, SOLVE_OP, f)?;
        let k = f.pivots().len();
        let db = gpu.dm_mut(here, SOLVE_OP, "B", b)?;
        let (n, nrhs) = db.dim();
        if db.is_empty() {
            return Ok(());
        }
        for step in plan(f.layout(), trans) {
            match step {
                Step::Swap { forward } => laswp(gpu, db, ipiv, k, forward)?,
                Step::Trsm(t) => self.trsm_right(
                    (&packed.data, n),
                    t,
                    &mut db.data,
                    (nrhs, n),
                    "lu_solve (trsm)",
                )?,
            }
        }
        Ok(())
    }
}

/// The factor's 0-based swaps as the 64-bit device indices `laswp` reads.
fn pivots<'a, T: BlasElement>(
    here: Here,
    op: &'static str,
    f: &'a LuFactor<T>,
) -> Result<&'a CudaSlice<i64>> {
    let s: &IndexStorage = here.indices(op, "the factor's pivots", f.pivots())?;
    match &s.data {
        DeviceIndices::I64(p) => Ok(p),
        DeviceIndices::I32(_) => Err(Error::invalid(
            op,
            format!(
                "the factor's pivots are 32-bit indices: backend '{BACKEND}' solves with \
                 the 64-bit pivots its own lu writes"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trsm::reference::*;
    use ndarray::Array2;

    /// Applies the swaps to b's rows, in order or in reverse (the runtime's laswp).
    fn swap_rows(b: &mut Array2<f64>, ipiv: &[usize], forward: bool) {
        let order: Vec<usize> = if forward {
            (0..ipiv.len()).collect()
        } else {
            (0..ipiv.len()).rev().collect()
        };
        for i in order {
            for j in 0..b.ncols() {
                b.swap([i, j], [ipiv[i], j]);
            }
        }
    }

    #[test]
    fn the_solve_plan_solves_with_either_op_and_either_layout() {
        for n in 1..7 {
            // P·A = L·U from chosen factors and swaps (pivots[i] ≥ i).
            let raw = values(n, n, 3 + n as u64);
            let l = triangle(&raw.mapv(|v| v / 4.0), Uplo::Lower, true);
            let u = triangle(&raw, Uplo::Upper, false);
            // Swaps that overlap (row n − 1 moves again and again), so that their order
            // matters.
            let ipiv: Vec<usize> = (0..n)
                .map(|i| {
                    if i % 3 == 2 {
                        i
                    } else {
                        n - 1 - (i % 2) * (n - 1 - i) / 2
                    }
                })
                .collect();
            let mut p = Array2::<f64>::eye(n);
            swap_rows(&mut p, &ipiv, true);
            let a = p.t().dot(&l).dot(&u);
            let packed =
                Array2::from_shape_fn((n, n), |(i, j)| if i > j { l[[i, j]] } else { u[[i, j]] });
            let b0 = values(n, 4, 50 + n as u64);
            for layout in [FactorLayout::ColMajor, FactorLayout::RowMajor] {
                // The factor's buffer read column-major.
                let m = match layout {
                    FactorLayout::ColMajor => packed.clone(),
                    FactorLayout::RowMajor => packed.t().to_owned(),
                };
                for trans in [Trans::No, Trans::Yes] {
                    let mut b = b0.clone();
                    for step in plan(layout, trans) {
                        match step {
                            Step::Swap { forward } => swap_rows(&mut b, &ipiv, forward),
                            Step::Trsm(t) => b = right_trsm_on_buffer(&m, t, &b),
                        }
                    }
                    let want = dense_solve(&apply(trans, a.clone()), &b0);
                    let d = max_diff(&b, &want);
                    assert!(d < 1e-8, "n = {n}, {layout:?}, {trans:?}: off by {d}");
                }
            }
        }
    }
}
