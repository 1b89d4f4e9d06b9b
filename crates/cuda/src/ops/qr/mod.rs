//! QR ladder: Householder `A = Q·R` in place on the row-major m×n matrix
//! (`kernels/qr.cu`), Q applied without forming it, and least squares.
//!
//! | variant | what it launches |
//! |---|---|
//! | `auto` (default) | `tsqr` for a tall matrix it takes (n ≤ 64, m ≥ 4·n), `householder` otherwise |
//! | `tsqr` | TSQR ([`tsqr`]): 256-row tiles factored in shared memory, their R's stacked and factored level by level, for any m where n ≤ 64; `householder` for wider matrices |
//! | `householder` | per column: the reflector (one block), `w = vᵀ·A` (a thread per column), the rank-1 update (LAPACK's geqr2) |
//!
//! The factor's `tau` says which: k×1 (LAPACK's τ, `householder`) or the TSQR tree's
//! buffer as a (len/2 rounded up)×2 matrix. R is on and above the diagonal of the packed
//! matrix (row-major) either way; least squares reads R's diagonal back once to refuse a
//! matrix without full column rank, then solves with R on the device.

mod tsqr;

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, LaunchConfig, PushKernelArg};
use ndgpu_core::backend::{self, full_rank};
use ndgpu_core::Variant as Row;
use ndgpu_core::{Backend, Error, FactorLayout, Family, Matrix, Memory, QrFactor, Result, Trans};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{go, linear};
use ndgpu_cuda_runtime::triangle::diag_scan;
use ndgpu_cuda_runtime::{blocks, dim_i32, kernel, push_args, CudaElement, DeviceMatrix, Gpu};

use super::find_row;
use crate::CudaBackend;
use tsqr::{Tree, MAX_COLS};

/// Variants, default first.
pub const VARIANTS: &[Row] = &[
    Row::new(
        "auto",
        "tsqr for tall matrices it takes (n <= 64, m >= 4n), householder otherwise",
    ),
    Row::new(
        "tsqr",
        "TSQR: 256-row tiles in shared memory, their R's stacked and factored level by \
         level, where n <= 64 (householder for wider matrices)",
    ),
    Row::new(
        "householder",
        "per column: reflector, w = v'A by a thread per column, rank-1 update (geqr2)",
    ),
];

/// Determinism and scope.
pub const NOTE: &str = "bitwise reproducible (every sum in a fixed order, no atomics); \
    NaN/Inf reaching the factor is found by one scan read back with the diagonal";

/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[
    "qr_house_f32",
    "qr_dots_f32",
    "qr_update_f32",
    "tsqr_tile_f32",
    "tsqr_apply_f32",
    "tsqr_tops_f32",
    "r_solve_f32",
    "qr_house_f64",
    "qr_dots_f64",
    "qr_update_f64",
    "tsqr_tile_f64",
    "tsqr_apply_f64",
    "tsqr_tops_f64",
    "r_solve_f64",
];

/// What applying Q leaves: with TSQR going up only, the top level's rows of B.
type Tops<T> = Result<Option<CudaSlice<T>>>;

/// Whether `variant` factors an m×n matrix by TSQR.
fn uses_tsqr(variant: &str, (m, n): (usize, usize)) -> Result<bool> {
    Ok(match find_row(VARIANTS, Family::Qr, variant)?.name {
        "tsqr" => n <= MAX_COLS,
        "auto" => n <= MAX_COLS && m >= 4 * n,
        _ => false,
    })
}

/// One Householder step's launches on the columns [c0, c1) of `b` (the reflectors of
/// `v`, or b's own when `v` is None).
struct Step<'a, T> {
    gpu: &'a Gpu,
    m: i32,
    w: CudaSlice<T>,
}

impl<T: CudaElement> Step<'_, T> {
    fn reflect(
        &mut self,
        v: Option<(&CudaSlice<T>, i64)>,
        tau: &CudaSlice<T>,
        j: i32,
        b: &mut DeviceMatrix<T>,
        (c0, c1): (i32, i32),
    ) -> Result<()> {
        if c1 <= c0 {
            return Ok(());
        }
        let ldb = b.cols as i64;
        let null = 0u64;
        let ldv = v.map_or(ldb, |x| x.1);
        let name = kernel!("qr_dots").of::<T>();
        let f = self.gpu.function(KernelFile::QR, name)?;
        let mut k = self.gpu.stream().launch_builder(&f);
        match v {
            Some((v, _)) => {
                push_args!(k; v, &ldv, &j, &self.m, &b.data, &ldb, &c0, &c1, &mut self.w)
            }
            None => push_args!(k; &null, &ldb, &j, &self.m, &b.data, &ldb, &c0, &c1, &mut self.w),
        }
        let cols = (c1 - c0) as usize;
        // SAFETY: (const T* v, i64 ldv, int j, int m, const T* b, i64 ldb, int c0, int c1,
        // T* w): v (or b) holds m rows of ldv, b m rows of ldb ≥ c1, w ≥ c1 − c0; thread
        // c reads column c0 + c from row j down.
        unsafe { go(k, name, linear(blocks(cols, 128), 128))? };
        let name = kernel!("qr_update").of::<T>();
        let f = self.gpu.function(KernelFile::QR, name)?;
        let mut k = self.gpu.stream().launch_builder(&f);
        match v {
            Some((v, _)) => {
                push_args!(k; v, &ldv, &j, &self.m, &mut b.data, &ldb, &c0, &c1, &self.w, tau)
            }
            None => {
                push_args!(k; &null, &ldb, &j, &self.m, &mut b.data, &ldb, &c0, &c1, &self.w, tau)
            }
        }
        let cfg = LaunchConfig {
            grid_dim: (
                blocks(cols, 32),
                blocks((self.m - j) as usize, 8).min(1024),
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: (const T* v, i64 ldv, int j, int m, T* b, i64 ldb, int c0, int c1,
        // const T* w, const T* tau): as above, tau holds j + 1 or more; threads take
        // columns below c1 and rows from j below m.
        unsafe { go(k, name, cfg) }
    }
}

/// Householder QR in place; τ into `tau` (k entries).
fn householder<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    tau: &mut CudaSlice<T>,
) -> Result<()> {
    let (m, n) = (dim_i32("qr", a.rows)?, dim_i32("qr", a.cols)?);
    let mut s = Step {
        gpu,
        m,
        w: gpu.alloc::<T>("qr", a.cols)?,
    };
    let lda = n as i64;
    for j in 0..m.min(n) {
        let name = kernel!("qr_house").of::<T>();
        let f = gpu.function(KernelFile::QR, name)?;
        let mut k = gpu.stream().launch_builder(&f);
        push_args!(k; &mut a.data, &m, &lda, &j, &mut *tau);
        // SAFETY: (T* a, int m, i64 lda, int j, T* tau): a is m×n, j < min(m, n), tau
        // holds min(m, n); one block reads and scales column j from row j down.
        unsafe { go(k, name, linear(1, 1024))? };
        s.reflect(None, tau, j, a, (j + 1, n))?;
    }
    Ok(())
}

impl CudaBackend {
    /// `FactorizeKernels::qr_unchecked`.
    pub(crate) fn qr_factor<T: CudaElement>(&self, mut a: Matrix<T>) -> Result<QrFactor<T>> {
        let gpu = self.gpu();
        let dim = a.dim();
        let tall = uses_tsqr(self.variant(Family::Qr), dim)?;
        let da = gpu.dm_mut(self.here(), "qr", "A", &mut a)?;
        let tau = if tall {
            let tree = Tree::new(dim.0, dim.1);
            let mut buf = gpu.alloc_matrix::<T>("qr", tree.len.div_ceil(2), 2)?;
            // Every element defined (an odd length leaves one past the tree's).
            gpu.stream()
                .memset_zeros(&mut buf.data)
                .map_err(|e| ndgpu_cuda_runtime::driver("qr: zeroing the TSQR tree", e))?;
            tsqr::factor(gpu, &mut da.data, &tree, &mut buf.data)?;
            buf
        } else {
            let mut tau = gpu.alloc_matrix::<T>("qr", dim.0.min(dim.1), 1)?;
            householder(gpu, da, &mut tau.data)?;
            tau
        };
        diag_scan(gpu, "qr", &da.data, dim)?.finite("qr", "A (found in its factor)")?;
        Ok(backend::qr_factor(
            a,
            gpu.matrix(tau),
            FactorLayout::RowMajor,
            dim,
        ))
    }

    /// `FactorizeKernels::qr_apply_unchecked`; with `up_only` (TSQR, Qᵀ), the top
    /// level's rows of B (its first n rows are those of Qᵀ·B).
    fn apply_q<T>(&self, f: &QrFactor<T>, t: Trans, b: &mut DeviceMatrix<T>, up: bool) -> Tops<T>
    where
        T: CudaElement,
    {
        let (trans, up_only) = (t, up);
        let gpu = self.gpu();
        let (m, n) = f.dim();
        let da = gpu.dm(self.here(), "qr_apply", "QR", f.packed())?;
        let dt = gpu.dm(self.here(), "qr_apply", "tau", f.tau())?;
        let t = trans == Trans::Yes;
        if dt.cols == 2 {
            let nrhs = b.cols;
            return tsqr::apply(
                gpu,
                (&da.data, &dt.data),
                &Tree::new(m, n),
                &mut b.data,
                nrhs,
                t,
                up_only,
            );
        }
        let mut s = Step {
            gpu,
            m: dim_i32("qr_apply", m)?,
            w: gpu.alloc::<T>("qr_apply", b.cols)?,
        };
        let k = m.min(n) as i32;
        let cols = dim_i32("qr_apply", b.cols)?;
        for i in 0..k {
            let j = if t { i } else { k - 1 - i };
            s.reflect(Some((&da.data, n as i64)), &dt.data, j, b, (0, cols))?;
        }
        Ok(None)
    }

    /// `FactorizeKernels::qr_apply_unchecked`.
    pub(crate) fn qr_apply<T: CudaElement>(
        &self,
        f: &QrFactor<T>,
        trans: Trans,
        b: &mut Matrix<T>,
    ) -> Result<()> {
        let db = self.gpu().dm_mut(self.here(), "qr_apply", "B", b)?;
        self.apply_q(f, trans, db, false).map(|_| ())
    }

    /// `FactorizeKernels::qr_solve_unchecked`: one read of R's diagonal, Qᵀ·B, R⁻¹.
    pub(crate) fn qr_solve<T: CudaElement>(
        &self,
        f: &QrFactor<T>,
        mut b: Matrix<T>,
    ) -> Result<Matrix<T>> {
        let gpu = self.gpu();
        let (m, n) = f.dim();
        let da = gpu.dm(self.here(), "lstsq", "QR", f.packed())?;
        rank(gpu, &da.data, (m, n), n)?;
        let db = gpu.dm_mut(self.here(), "lstsq", "B", &mut b)?;
        let nrhs = db.cols;
        let top = self.apply_q(f, Trans::Yes, db, true)?;
        let y = top.as_ref().unwrap_or(&db.data).slice(..);
        Ok(gpu.matrix(r_solve(gpu, n, (&da.data.slice(..), n), (&y, nrhs), nrhs)?))
    }

    /// `FactorizeKernels::lstsq_unchecked`: where TSQR takes `[A | B]` (n + nrhs ≤ 64
    /// columns, and tall enough for `auto`), that matrix is factored at once: `Qᵀ·[A | B]
    /// = [R, Qᵀ·B]`, so R and the first n rows of Qᵀ·B come out of one factorization
    /// and no Q is applied. Otherwise the factor of A and [`Self::qr_solve`].
    pub(crate) fn lstsq<T: CudaElement>(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T>> {
        let gpu = self.gpu();
        let ((m, n), k) = (a.dim(), b.cols());
        let w = n + k;
        if !uses_tsqr(self.variant(Family::Qr), (m, w))? || w > MAX_COLS {
            let f = self.qr_factor(self.copy(a)?)?;
            return self.qr_solve(&f, self.copy(b)?);
        }
        let (da, db) = (
            gpu.dm(self.here(), "lstsq", "A", a)?,
            gpu.dm(self.here(), "lstsq", "B", b)?,
        );
        let mut aug = gpu.alloc::<T>("lstsq", m * w)?;
        copy_block(gpu, (&da.data, n), (m, n), &mut aug.slice_mut(..), w)?;
        copy_block(gpu, (&db.data, k), (m, k), &mut aug.slice_mut(n..), w)?;
        let tree = Tree::new(m, w);
        let mut buf = gpu.alloc::<T>("lstsq", tree.len)?;
        tsqr::factor(gpu, &mut aug, &tree, &mut buf)?;
        rank(gpu, &aug, (m, w), n)?;
        let x = r_solve(gpu, n, (&aug.slice(..), w), (&aug.slice(n..), w), k)?;
        Ok(gpu.matrix(x))
    }
}

/// Refuses a factor whose R (the top n×n of the packed rows, `w` wide) is not of full
/// column rank, and one holding NaN or ±Inf there: one read.
fn rank<T: CudaElement>(
    gpu: &Gpu,
    packed: &CudaSlice<T>,
    (m, w): (usize, usize),
    n: usize,
) -> Result<()> {
    let scan = diag_scan(gpu, "lstsq", packed, (n, w))?;
    let diag = scan.finite("lstsq", "A or B (found in the factor)")?;
    let diag: Vec<T> = diag.into_iter().map(T::from_f64).collect();
    full_rank("lstsq", &diag, (m, n))
}

/// X (n×nrhs) = R⁻¹·Y, R the upper n×n at the start of `r` (rows `ldr` apart), Y the
/// first n rows at the start of `y` (rows `ldy` apart) (`r_solve`).
fn r_solve<T: CudaElement>(
    gpu: &Gpu,
    n: usize,
    (r, ldr): (&CudaView<T>, usize),
    (y, ldy): (&CudaView<T>, usize),
    nrhs: usize,
) -> Result<DeviceMatrix<T>> {
    let inside = ldr >= n
        && ldy >= nrhs
        && r.len() >= n * ldr - (ldr - n)
        && y.len() >= (n - 1) * ldy + nrhs;
    if !inside {
        return Err(Error::invalid("lstsq", "R or Y outside its buffer"));
    }
    let mut x = gpu.alloc_matrix::<T>("lstsq", n, nrhs)?;
    let name = kernel!("r_solve").of::<T>();
    let func = gpu.function(KernelFile::QR, name)?;
    let (ldr, ldy) = (ldr as i64, ldy as i64);
    let (ni, nr) = (dim_i32("lstsq", n)?, dim_i32("lstsq", nrhs)?);
    let mut k = gpu.stream().launch_builder(&func);
    push_args!(k; r, &ldr, &ni, y, &ldy, &nr, &mut x.data);
    // SAFETY: (const T* r, i64 ldr, int n, const T* y, i64 ldy, int nrhs, T* x): R's n
    // rows of ldr ≥ n and Y's n rows of ldy ≥ nrhs lie inside their views (checked
    // above), x is n×nrhs; thread c walks column c.
    unsafe { go(k, name, linear(blocks(nrhs, 128), 128))? };
    Ok(x)
}

/// Copies a rows×cols row-major block (rows `lds` apart) into `dst` (rows `ldd` apart)
/// (`lu_copy_block`, kernels/lu.cu).
fn copy_block<T: CudaElement>(
    gpu: &Gpu,
    (src, lds): (&CudaSlice<T>, usize),
    (rows, cols): (usize, usize),
    dst: &mut CudaViewMut<T>,
    ldd: usize,
) -> Result<()> {
    let fits =
        rows == 0 || (src.len() >= (rows - 1) * lds + cols && dst.len() >= (rows - 1) * ldd + cols);
    if !fits || cols > lds || cols > ldd {
        return Err(Error::invalid("lstsq", "a block outside its buffer"));
    }
    let name = kernel!("lu_copy_block").of::<T>();
    let f = gpu.function(KernelFile::LU, name)?;
    let (lds, ldd) = (lds as i64, ldd as i64);
    let (ri, ci) = (dim_i32("lstsq", rows)?, dim_i32("lstsq", cols)?);
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; src, &lds, &ri, &ci, dst, &ldd);
    // SAFETY: (const T* src, i64 lds, int rows, int cols, T* dst, i64 ldd): both blocks
    // lie inside their buffers (checked above); the grid-stride loop stays below rows·cols.
    unsafe { go(b, name, linear(blocks(rows * cols, 256).min(4096), 256)) }
}
