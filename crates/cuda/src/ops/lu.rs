//! LU ladder: `P·A = L·U` with partial pivoting in place on the row-major m×n matrix
//! (`kernels/lu.cu`), and solves with the factor.
//!
//! | variant | what it launches |
//! |---|---|
//! | `recursive` (default) | as `blocked`, each panel factored by recursive halves (LAPACK's getrf2, Toledo's recursive LU): the left half, `U12` and the right half's update by the GEMM, the right half; halves of at most 16 columns (as many as fit) are leaves, factored by one block in shared memory (`lu_leaf`), their swaps then applied to every other column at once (`lu_swap_rows`) |
//! | `blocked` | per 64-column panel: for each column the pivot kernel (first largest \|a\| down the column, the swap of whole rows, the column scaled) and a rank-1 update inside the panel; `U12 = L11⁻¹·A12` by one panel-solve kernel; the trailing matrix `A22 −= L21·U12` by the GEMM ladder's fastest rung (right-looking blocked getrf, LAPACK Working Note 41's order) |
//! | `unblocked` | per column the pivot kernel and a rank-1 update of the whole trailing matrix (getf2) |
//!
//! The factor stays row-major ([`FactorLayout::RowMajor`]) with 0-based LAPACK swaps as 64-bit
//! device indices. One scan of the diagonal and of the factor for NaN and ±Inf is read
//! back once: the factorization's only synchronisation. Solves: the swaps applied to B
//! (`triangle_laswp`), then two triangular solves of the `Trsm` ladder's current variant.

use cudarc::driver::{CudaSlice, PushKernelArg};
use ndgpu_core::backend;
use ndgpu_core::Variant as Row;
use ndgpu_core::{
    Backend, Error, FactorLayout, Family, LuFactor, Matrix, Result, Trans, Triangular,
};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{go, linear};
use ndgpu_cuda_runtime::triangle::{diag_scan, laswp};
use ndgpu_cuda_runtime::{
    blocks, dim_i32, kernel, push_args, CudaElement, DeviceIndices, DeviceMatrix, Gpu, IndexStorage,
};

use super::find_row;
use super::matmul::{gemm_strided, Strided};
use super::trsm::trsm;
use crate::CudaBackend;

/// Variants, default first.
pub const VARIANTS: &[Row] = &[
    Row::new(
        "recursive",
        "64-column panels, each by recursive halves (getrf2) down to leaves of up to 16 \
         columns factored in shared memory by one block, their swaps applied to the \
         other columns by one launch; U12 by the panel solve, the \
         updates by the GEMM ladder's fastest rung",
    ),
    Row::new(
        "blocked",
        "64-column panels (pivot kernel and in-panel rank-1 update per column), the U12 \
         panel solve, the trailing update by the GEMM ladder's fastest rung",
    ),
    Row::new(
        "unblocked",
        "per column: the pivot kernel and a rank-1 update of the whole trailing matrix",
    ),
];

/// Determinism and scope.
pub const NOTE: &str = "bitwise reproducible (pivot search and every sum in a fixed \
    order); ties in the pivot search go to the first row, as LAPACK's; the diagonal and \
    a scan for NaN/Inf are read back once per factorization";

/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[
    "lu_leaf_f32",
    "lu_leaf_f64",
    "lu_swap_rows_f32",
    "lu_swap_rows_f64",
    "lu_pivot_f32",
    "lu_rank1_f32",
    "lu_trsm_panel_f32",
    "lu_copy_block_f32",
    "lu_pivot_f64",
    "lu_rank1_f64",
    "lu_trsm_panel_f64",
    "lu_copy_block_f64",
];

/// A device matrix, short.
type Dm<T> = DeviceMatrix<T>;
/// Row swaps on the device.
type Piv = CudaSlice<i64>;

/// Columns per panel.
const NB: usize = 64;

struct Lu<'a, T> {
    gpu: &'a Gpu,
    m: i32,
    n: i32,
    lda: i64,
    _t: std::marker::PhantomData<T>,
}

impl<T: CudaElement> Lu<'_, T> {
    /// Column j's pivot: search, swap of whole rows, scaling (`lu_pivot`).
    fn pivot(&self, a: &mut DeviceMatrix<T>, j: i32, ipiv: &mut CudaSlice<i64>) -> Result<()> {
        let name = kernel!("lu_pivot").of::<T>();
        let f = self.gpu.function(KernelFile::LU, name)?;
        let mut b = self.gpu.stream().launch_builder(&f);
        push_args!(b; &mut a.data, &self.m, &self.n, &self.lda, &j, ipiv);
        // SAFETY: (T* a, int m, int n, i64 lda, int j, i64* ipiv): a is m×n with rows lda
        // = n apart, j < min(m, n), ipiv holds min(m, n) entries; one block of 1024
        // threads reads column j below row j and swaps rows j and p < m.
        unsafe { go(b, name, linear(1, 1024)) }
    }

    /// `a[i][c] −= a[i][j]·a[j][c]` for rows below j and columns (j, c_end).
    fn rank1(&self, a: &mut DeviceMatrix<T>, j: i32, c_end: i32) -> Result<()> {
        let (cols, rows) = ((c_end - j - 1) as usize, (self.m - j - 1) as usize);
        if cols == 0 || rows == 0 {
            return Ok(());
        }
        let name = kernel!("lu_rank1").of::<T>();
        let f = self.gpu.function(KernelFile::LU, name)?;
        let mut b = self.gpu.stream().launch_builder(&f);
        push_args!(b; &mut a.data, &self.m, &self.lda, &j, &c_end);
        let cfg = cudarc::driver::LaunchConfig {
            grid_dim: (blocks(cols, 32), blocks(rows, 8).min(1024), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: (T* a, int m, i64 lda, int j, int c_end): c_end ≤ n; threads take
        // columns below c_end and rows below m (grid-stride), inside the m×n matrix.
        unsafe { go(b, name, cfg) }
    }

    /// `U12 = L11⁻¹·A12` for the panel at `j0` of `nb` columns, columns `[c0, c_end)`.
    fn panel_solve(&self, a: &mut Dm<T>, j0: i32, nb: i32, (c0, c_end): (i32, i32)) -> Result<()> {
        let name = kernel!("lu_trsm_panel").of::<T>();
        let f = self.gpu.function(KernelFile::LU, name)?;
        let mut b = self.gpu.stream().launch_builder(&f);
        push_args!(b; &mut a.data, &c_end, &self.lda, &j0, &nb, &c0);
        // SAFETY: (T* a, int n, i64 lda, int j0, int nb, int c0): nb ≤ 64 rows from j0
        // (< m) of columns [c0, c_end), c_end ≤ n; L11 is nb×nb at (j0, j0); thread c <
        // c_end only.
        unsafe { go(b, name, linear(blocks((c_end - c0) as usize, 128), 128)) }
    }

    /// Columns per leaf of the recursive panel for `rows` rows: as many (up to 16) as
    /// fit in shared memory with rows one element apart, 0 when not even one does.
    fn leaf_width(&self, rows: usize) -> Result<usize> {
        let room = self.gpu.shared_memory_optin()? - 2048;
        Ok((room / (rows * std::mem::size_of::<T>()))
            .saturating_sub(1)
            .min(16))
    }

    /// The sub-panel of `w` columns at `c0` factored in shared memory (`lu_leaf`).
    fn leaf(&self, a: &mut Dm<T>, c0: usize, w: usize, ipiv: &mut Piv) -> Result<()> {
        let name = kernel!("lu_leaf").of::<T>();
        let f = self.gpu.function(KernelFile::LU, name)?;
        self.gpu.grant_shared_memory(&f, name)?;
        let rows = self.m as usize - c0;
        let (c0i, wi) = (c0 as i32, w as i32);
        let mut b = self.gpu.stream().launch_builder(&f);
        push_args!(b; &mut a.data, &self.m, &self.n, &self.lda, &c0i, &wi, &mut *ipiv);
        let mut cfg = linear(1, 512);
        cfg.shared_mem_bytes = (rows * (w + 1) * std::mem::size_of::<T>()) as u32;
        // SAFETY: (T* a, int m, int n, i64 lda, int c0, int w, i64* ipiv): rows [c0, m)
        // of columns [c0, c0 + w) (c0 + w ≤ min(m, n)) in (m − c0)·(w + 1) elements of
        // shared memory (leaf_width keeps that within the granted opt-in); ipiv[c0 ..
        // c0 + w) written, each a row below m.
        unsafe { go(b, name, cfg)? };
        let outside = self.n as usize - w;
        if outside == 0 {
            return Ok(());
        }
        let name = kernel!("lu_swap_rows").of::<T>();
        let f = self.gpu.function(KernelFile::LU, name)?;
        let mut b = self.gpu.stream().launch_builder(&f);
        push_args!(b; &mut a.data, &self.n, &self.lda, &*ipiv, &c0i, &wi);
        // SAFETY: (T* a, int n, i64 lda, const i64* ipiv, int c0, int w): the swaps the
        // leaf wrote name rows below m; thread t < n − w takes one column outside the
        // leaf's.
        unsafe { go(b, name, linear(blocks(outside, 256), 256)) }
    }

    /// Columns `[c0, c0 + w)` factored by recursive halves (LAPACK's getrf2 order): the
    /// left half, its `U12` and the update of the right half by the GEMM, the right
    /// half; halves narrow enough are [`Self::leaf`]s.
    fn recursive(&self, a: &mut Dm<T>, c0: usize, w: usize, ipiv: &mut Piv) -> Result<()> {
        let m = self.m as usize;
        let wl = self.leaf_width(m - c0)?;
        if wl == 0 {
            let end = (c0 + w) as i32;
            for j in c0 as i32..end {
                self.pivot(a, j, ipiv)?;
                self.rank1(a, j, end)?;
            }
            return Ok(());
        }
        if w <= wl {
            return self.leaf(a, c0, w, ipiv);
        }
        let h = w / 2;
        self.recursive(a, c0, h, ipiv)?;
        let (c, e) = ((c0 + h) as i32, (c0 + w) as i32);
        self.panel_solve(a, c0 as i32, h as i32, (c, e))?;
        if c0 + h < m {
            self.update(a, c0, h, (c0 + h, w - h))?;
        }
        self.recursive(a, c0 + h, w - h, ipiv)
    }

    /// `A22 −= L21·U12` below the panel at `j0` of `nb` columns, for the columns
    /// `[c, c + cols)`, L21 copied out first.
    fn update(&self, a: &mut Dm<T>, j0: usize, nb: usize, (c, cols): (usize, usize)) -> Result<()> {
        let (m, n) = (self.m as usize, self.n as usize);
        let r = j0 + nb;
        let rows = m - r;
        let mut l21 = self.gpu.alloc::<T>("lu", rows * nb)?;
        let name = kernel!("lu_copy_block").of::<T>();
        let f = self.gpu.function(KernelFile::LU, name)?;
        let (src, rows_i, nb_i, ldd) = (
            a.data.slice(r * n + j0..),
            rows as i32,
            nb as i32,
            nb as i64,
        );
        let mut b = self.gpu.stream().launch_builder(&f);
        push_args!(b; &src, &self.lda, &rows_i, &nb_i, &mut l21, &ldd);
        // SAFETY: (const T* src, i64 lds, int rows, int cols, T* dst, i64 ldd): src is
        // the block at (r, j0), rows·n apart, inside the matrix; dst holds rows·nb.
        unsafe { go(b, name, linear(blocks(rows * nb, 256).min(4096), 256))? };
        let (top, mut bottom) = a.data.split_at_mut(r * n);
        let u12 = top.slice(j0 * n + c..);
        let mut a22 = bottom.slice_mut(c..);
        let l21 = l21.slice(..);
        gemm_strided(
            self.gpu,
            false,
            (rows, cols, nb),
            -T::one(),
            Strided { view: &l21, ld: nb },
            Strided { view: &u12, ld: n },
            T::one(),
            Strided {
                view: &mut a22,
                ld: n,
            },
        )
    }
}

/// Factors `a` in place with the named variant; `ipiv` receives min(m, n) 0-based swaps.
///
/// # Errors
/// [`Error::UnknownVariant`]; dimensions beyond 32-bit indices; out of memory; device
/// errors.
pub(crate) fn lu<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    a: &mut DeviceMatrix<T>,
    ipiv: &mut CudaSlice<i64>,
) -> Result<()> {
    let row = find_row(VARIANTS, Family::Lu, variant)?;
    let (m, n) = a.dim();
    let k = m.min(n);
    let s = Lu::<T> {
        gpu,
        m: dim_i32("lu", m)?,
        n: dim_i32("lu", n)?,
        lda: n as i64,
        _t: std::marker::PhantomData,
    };
    if row.name == "unblocked" {
        for j in 0..k as i32 {
            s.pivot(a, j, ipiv)?;
            s.rank1(a, j, s.n)?;
        }
        return Ok(());
    }
    for j0 in (0..k).step_by(NB) {
        let nb = NB.min(k - j0);
        let end = (j0 + nb) as i32;
        if row.name == "recursive" {
            s.recursive(a, j0, nb, ipiv)?;
        } else {
            for j in j0 as i32..end {
                s.pivot(a, j, ipiv)?;
                s.rank1(a, j, end)?;
            }
        }
        if j0 + nb < n {
            s.panel_solve(a, j0 as i32, nb as i32, (end, s.n))?;
            if j0 + nb < m {
                s.update(a, j0, nb, (j0 + nb, n - j0 - nb))?;
            }
        }
    }
    Ok(())
}

/// The pivots of a factor made here.
fn pivots<'a>(b: &CudaBackend, f: &'a LuFactor<impl CudaElement>) -> Result<&'a CudaSlice<i64>> {
    let s: &IndexStorage = b.here().indices("lu_solve", "pivots", f.pivots())?;
    match &s.data {
        DeviceIndices::I64(p) => Ok(p),
        DeviceIndices::I32(_) => Err(Error::invalid("lu_solve", "pivots are 64-bit indices")),
    }
}

impl CudaBackend {
    /// `FactorizeKernels::lu_unchecked`.
    pub(crate) fn lu_factor<T: CudaElement>(&self, mut a: Matrix<T>) -> Result<LuFactor<T>> {
        let gpu = self.gpu();
        let dim = a.dim();
        let k = dim.0.min(dim.1);
        let mut ipiv = gpu.alloc_zeroed::<i64>("lu", k)?;
        let da = gpu.dm_mut(self.here(), "lu", "A", &mut a)?;
        lu(gpu, self.variant(Family::Lu), da, &mut ipiv)?;
        let diag = diag_scan(gpu, "lu", &da.data, dim)?.finite("lu", "A (found in its factor)")?;
        let zero = diag.iter().position(|&d| d == 0.0);
        let pivots = backend::indices(k, gpu.indices(DeviceIndices::I64(ipiv)));
        Ok(backend::lu_factor(
            a,
            pivots,
            FactorLayout::RowMajor,
            dim,
            zero,
        ))
    }

    /// `FactorizeKernels::lu_solve_unchecked`.
    pub(crate) fn lu_solve<T>(&self, f: &LuFactor<T>, t: Trans, b: &mut Matrix<T>) -> Result<()>
    where
        T: CudaElement,
    {
        let (gpu, op, trans) = (self.gpu(), "lu_solve", t);
        let da = gpu.dm(self.here(), op, "LU", f.packed())?;
        let ipiv = pivots(self, f)?;
        let db = gpu.dm_mut(self.here(), op, "B", b)?;
        let n = da.rows;
        let v = self.variant(Family::Trsm);
        let (lower, upper) = (Triangular::lower().unit(true), Triangular::upper());
        if trans == Trans::No {
            laswp(gpu, db, ipiv, n, true)?;
            trsm(gpu, v, da, lower, db)?;
            trsm(gpu, v, da, upper, db)
        } else {
            // Aᵀ = Uᵀ·Lᵀ·P: solve with Uᵀ, then Lᵀ, then undo the swaps.
            trsm(gpu, v, da, upper.trans(Trans::Yes), db)?;
            trsm(gpu, v, da, lower.trans(Trans::Yes), db)?;
            laswp(gpu, db, ipiv, n, false)
        }
    }
}
