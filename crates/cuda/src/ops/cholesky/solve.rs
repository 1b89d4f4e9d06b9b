//! Solves with the factor, `L·Lᵀ·X = B` in place: the forward solve `L·Y = B`, then the
//! backward solve `Lᵀ·X = Y`, each a recursive blocked triangular solve. The rows split
//! in two halves (at a multiple of 64): solve the first, subtract its contribution from
//! the second with one GEMM (`B₂ −= L₂₁·X₁`, or `B₁ −= L₂₁ᵀ·X₂` going back), solve the
//! second. Almost all the work (n²·nrhs per solve) is in those GEMMs, which run on the
//! blocks of L and B where they lie (`gemm_strided`: f64 on the FP64 tensor cores where
//! the shape suits them; going back they read L₂₁ as its transpose, or, for f64 on DMMA,
//! Lᵀ's block untransposed from a transposed copy of L made once, or the caller's upper
//! triangle), with the large ones at the top of the recursion. The recursion stops at
//! 256 rows (f64 on DMMA: 64), which one kernel solves: it applies the 64-row diagonal
//! blocks as products with their inverses (all computed by one launch before the solves)
//! and the blocks between them as small products in shared memory, so no kernel steps
//! through rows one barrier at a time, and no GEMM is too small to fill the device.

use cudarc::driver::{CudaSlice, PushKernelArg};
use ndgpu_core::{DType, Error, Result};
use ndgpu_cuda_runtime::launch::go;
use ndgpu_cuda_runtime::{blocks, dim_i32, push_args, CudaElement, DeviceMatrix, Gpu};

use super::launch::{cfg, kernel, NB};
use crate::ops::matmul::{gemm_strided, has_tensor_cores, strided_dmma, transposed, Strided};

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
    let s = Solve::new(gpu, l, Upper::Make, b.cols)?;
    s.trsm(b, 0, l.rows, false)?;
    s.trsm(b, 0, l.rows, true)
}

/// Solves `L·X = B` (or `Lᵀ·X = B`: `back`) in place with the lower triangle of the n×n
/// `l`: one of [`solve`]'s two passes, for the triangular solves of other families.
/// `upper`, where the caller has it, is an n×n matrix whose strict upper triangle is
/// `l`'s strict lower one transposed (the backward pass's updates read it untransposed).
///
/// # Errors
/// As [`solve`].
pub(crate) fn lower_solve<T: CudaElement>(
    gpu: &Gpu,
    l: &DeviceMatrix<T>,
    upper: Option<&DeviceMatrix<T>>,
    b: &mut DeviceMatrix<T>,
    back: bool,
) -> Result<()> {
    let upper = match (back, upper) {
        (false, _) => Upper::None,
        (true, Some(u)) => Upper::Given(u),
        (true, None) => Upper::Make,
    };
    Solve::new(gpu, l, upper, b.cols)?.trsm(b, 0, l.rows, back)
}

/// Lᵀ for the backward pass's updates (`B₁ −= L₂₁ᵀ·X₂` as an untransposed product, which
/// the f64 DMMA GEMM takes): none, the caller's, or made here (a transposed copy of L)
/// where those products would run on the FP64 tensor cores and memory allows.
enum Upper<'a, T> {
    None,
    Given(&'a DeviceMatrix<T>),
    Make,
    Made(DeviceMatrix<T>),
}

struct Solve<'a, T> {
    gpu: &'a Gpu,
    l: &'a DeviceMatrix<T>,
    upper: Upper<'a, T>,
    /// Rows at which the recursion stops ([`leaf_rows`]).
    leaf: usize,
    /// The inverses of L's 64×64 diagonal blocks.
    inv: CudaSlice<T>,
}

impl<'a, T: CudaElement> Solve<'a, T> {
    /// The inverses of `l`'s diagonal blocks, computed once for the solves that follow,
    /// and Lᵀ where `upper` asks for it and the backward updates of `nrhs` columns run on
    /// DMMA (out of memory for it: the updates read L₂₁ transposed instead).
    fn new(gpu: &'a Gpu, l: &'a DeviceMatrix<T>, upper: Upper<'a, T>, nrhs: usize) -> Result<Self> {
        let n = l.rows;
        let ni = dim_i32("cholesky_solve", n)?;
        let mut inv = gpu.alloc::<T>("cholesky_solve", n.div_ceil(NB) * NB * NB)?;
        invert_diag(gpu, l, ni, &mut inv)?;
        let half = n / 2;
        let upper = match upper {
            Upper::Make if n > LEAF && strided_dmma::<T>(gpu, false, (half, nrhs, half))? => {
                match transposed(gpu, l) {
                    Ok(t) => Upper::Made(t),
                    Err(Error::OutOfMemory { .. }) => Upper::None,
                    Err(e) => return Err(e),
                }
            }
            Upper::Make => Upper::None,
            u => u,
        };
        let leaf = leaf_rows::<T>(gpu);
        Ok(Solve {
            gpu,
            l,
            upper,
            leaf,
            inv,
        })
    }

    /// Lᵀ, where the backward updates read it.
    fn upper(&self) -> Option<&DeviceMatrix<T>> {
        match &self.upper {
            Upper::Given(u) => Some(u),
            Upper::Made(u) => Some(u),
            Upper::None | Upper::Make => None,
        }
    }

    /// Solves rows `[r0, r0 + len)` of B in place: with `L[r0.., r0..]` (forward) or its
    /// transpose (backward). `r0` is a multiple of 64; so is `len` unless the block ends
    /// at n. Blocks of up to 256 rows are one leaf kernel.
    fn trsm(&self, b: &mut DeviceMatrix<T>, r0: usize, len: usize, back: bool) -> Result<()> {
        if len <= self.leaf {
            return solve_leaf(self.gpu, back, self.l, &self.inv, b, (r0, len));
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
            // B₁ −= L₂₁ᵀ·X₂ (rows r0 .. r0 + h, from rows r0 + h .. r0 + len): L₂₁ᵀ is
            // (Lᵀ)₁₂ = Lᵀ[r0 .. r0 + h, r0 + h .. r0 + len] where Lᵀ is held.
            let (mut top, bottom) = b.data.split_at_mut((r0 + h) * nrhs);
            let mut b1 = top.slice_mut(r0 * nrhs..);
            let x2 = bottom.slice(..m2 * nrhs);
            let u12 = self.upper().map(|u| u.data.slice(r0 * n + r0 + h..));
            let (trans, a) = match &u12 {
                Some(v) => (false, Strided { view: v, ld: n }),
                None => (true, l21),
            };
            gemm_strided(
                self.gpu,
                trans,
                (h, nrhs, m2),
                minus_one,
                a,
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

/// Inverts every 64×64 diagonal block of the n×n factor `l` into `inv` (n/64 rounded up
/// blocks of 64² elements, row-major, identity past n): one block of threads each.
fn invert_diag<T: CudaElement>(
    gpu: &Gpu,
    l: &DeviceMatrix<T>,
    n: i32,
    inv: &mut CudaSlice<T>,
) -> Result<()> {
    let (f, name) = kernel::<T>(gpu, "invert_diag")?;
    let nblocks = (n as usize).div_ceil(NB);
    if inv.len() < nblocks * NB * NB {
        return Err(Error::invalid(
            "cholesky_solve",
            "the inverse buffer is too small",
        ));
    }
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &l.data, &n, inv);
    // SAFETY: (const T* l, int n, T* inv): l is n×n, inv holds ceil(n/64)·64² elements
    // (checked above); block b reads rows and columns [64b, min(64b + 64, n)) of l and
    // writes inv[b·64², (b + 1)·64²).
    unsafe { go(b, &name, cfg((nblocks as u32, 1), 256)) }
}

/// Solves rows `[r0, r0 + len)` of the n×nrhs `rhs` in place with the diagonal block of
/// `l` there (forward, or with its transpose: `back`): r0 a multiple of 64, len ≤
/// [`LEAF`], `inv` the inverses of the 64×64 diagonal blocks from [`invert_diag`].
fn solve_leaf<T: CudaElement>(
    gpu: &Gpu,
    back: bool,
    l: &DeviceMatrix<T>,
    inv: &CudaSlice<T>,
    rhs: &mut DeviceMatrix<T>,
    (r0, len): (usize, usize),
) -> Result<()> {
    let op = if back {
        "solve_leaf_bwd"
    } else {
        "solve_leaf_fwd"
    };
    let (f, name) = kernel::<T>(gpu, op)?;
    let (n, nrhs) = (l.rows, rhs.cols);
    let inside = r0.is_multiple_of(NB)
        && len <= LEAF
        && r0 + len <= n.min(rhs.rows)
        && inv.len() >= (r0 + len).div_ceil(NB) * NB * NB;
    if !inside {
        return Err(Error::invalid(
            "cholesky_solve",
            "a leaf outside the matrix",
        ));
    }
    let [n_i, nrhs_i, r0_i, len_i] = [n, nrhs, r0, len].map(|d| d as i32);
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &l.data, &n_i, inv, &mut rhs.data, &nrhs_i, &r0_i, &len_i);
    // SAFETY: (const T* l, int n, const T* inv, T* b, int nrhs, int r0, int len): l is
    // n×n, b n×nrhs, r0 + len ≤ n, inv holds the blocks up to row r0 + len (checked
    // above); the kernel reads rows and columns [r0, r0 + len) of l, and rows
    // [r0, r0 + len) of b in one column slab per block, clipped to nrhs.
    unsafe { go(b, &name, cfg((blocks(nrhs, leaf_cb::<T>()), 1), 256)) }
}

/// Rows of B that one [`solve_leaf`] solves at most (`LEAF_BLOCKS` diagonal blocks).
const LEAF: usize = 4 * NB;

/// Rows at which the recursion stops: one diagonal block for f64 where the GEMMs run on
/// the FP64 tensor cores (the leaf kernel's products run on the CUDA cores, slower than
/// the GEMMs), [`LEAF`] otherwise.
fn leaf_rows<T: CudaElement>(gpu: &Gpu) -> usize {
    if T::DTYPE == DType::F64 && has_tensor_cores(gpu) {
        NB
    } else {
        LEAF
    }
}

/// Columns of B per leaf block (`LeafCfg<T>::CB`: 16 f32, 4 f64, to keep the slab and one
/// 64×64 operand within 48 KB of shared memory).
fn leaf_cb<T>() -> usize {
    if std::mem::size_of::<T>() == 4 {
        16
    } else {
        4
    }
}
