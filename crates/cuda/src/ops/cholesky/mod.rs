//! Cholesky ladder (report 004): `A = L·Lᵀ` in place on the device, and solves with L.
//!
//! | variant | what it launches |
//! |---|---|
//! | `blocked` | per 64 columns: the diagonal block factored by one thread block (in registers), the panel below it solved (TRSM), the trailing lower triangle updated by a register-blocked SYRK over lower tiles only (128- or 64-wide tiles) |
//! | `per_step` | per column k: a division kernel and an elimination kernel whose threads run along rows (report 004's coalesced version) |
//! | `single_block` | one kernel, one block, the whole factorization (report 004's first version) |
//! | `tensor_core` | `blocked` with the f64 trailing update on FP64 tensor cores (DMMA, sm_80 and later; `blocked`'s own update before, so that it runs on every device); f32 as `blocked` |
//! | `dataflow` (default) | f64: the whole factorization in one persistent kernel, left-looking over 64×64 tiles on DMMA, each tile taken as soon as the tiles it needs are final (a flag per tile), the diagonal chain (solve, update, factor) in one block; from 6145 rows up, in panels of 2048 columns, one launch each, the trailing matrix updated from each panel by the DMMA GEMM's 128×64 blocks between them; f32 the same in an f64 copy of its lower triangle, rounded back (more accurate than f32 arithmetic; `tensor_core` where the device cannot hold the copy); devices without DMMA as `tensor_core` |
//! | `dataflow_3x` (opt-in: precision 3xTF32) | f32: `dataflow`'s kernel with every product on TF32 tensor cores as three products (3xTF32), the rest in f32, in panels from 6145 rows up as `dataflow` (the updates between them on the GEMM's 3xTF32 kernel); f64 as `dataflow`; sm_80 and later only |
//!
//! A pivot that is not positive is recorded on the device by the kernel that meets it;
//! every later kernel sees the record and does nothing, and the host reads it once.

mod launch;
mod order;
mod solve;

pub(crate) use solve::lower_solve;

use cudarc::driver::CudaSlice;
use ndgpu_core::backend;
use ndgpu_core::Variant as Row;
use ndgpu_core::{
    Backend, CholeskyFactor, DType, Error, FactorizeKernels, Family, LuFactor, Matrix, Needs,
    Precision, QrFactor, Result, Trans, Triangular,
};
use ndgpu_cuda_runtime::triangle::zero_upper;
use ndgpu_cuda_runtime::{dim_i32, driver, CudaElement, DeviceMatrix, Gpu};

use launch::{Region, NB};
use order::{Order, ORDER};

use crate::CudaBackend;

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[Row] = &[
    Row::new(
        "dataflow",
        "f64 in one persistent kernel over 64x64 tiles on FP64 tensor cores, each tile \
         summed left-looking in a fixed order once the tiles it needs are final; from 6145 \
         rows up in panels of 2048 columns, the trailing matrix updated from each panel by \
         the DMMA GEMM; f32 the same in an f64 copy of its lower triangle, rounded back (as \
         tensor_core where the device cannot hold the copy); devices before sm_80 run \
         tensor_core",
    ),
    Row::new(
        "dataflow_3x",
        "opt-in: f32 in dataflow's kernel with every product as three TF32 tensor-core \
         products, in panels from 6145 rows up with the updates on the 3xTF32 GEMM, pivots, \
         divisions and sums in f32; f64 as dataflow",
    )
    .precision(Precision::Tf32x3)
    .needs(Needs::Sm80),
    Row::new(
        "tensor_core",
        "blocked with the f64 trailing update's products on FP64 tensor cores (IEEE; \
         blocked's own updates before sm_80); f32 exactly as blocked",
    ),
    Row::new(
        "blocked",
        "64-column blocks, diagonal block in registers, panel TRSM, register-blocked SYRK \
         on lower tiles",
    ),
    Row::new("per_step", "one kernel launch per column step"),
    Row::new(
        "single_block",
        "the whole factorization in one thread block",
    ),
];

/// Kernels the default variant launches (factorization and solve).
pub const DEFAULT_KERNELS: &[&str] = &[
    "cholesky_potrf_diag_f32",
    "cholesky_trsm_panel_f32",
    "cholesky_syrk_lower_f32",
    "cholesky_syrk_lower64_f32",
    "triangle_zero_upper_f32",
    "cholesky_invert_diag_f32",
    "cholesky_solve_leaf_fwd_f32",
    "cholesky_solve_leaf_bwd_f32",
    "gemm_strided_nn_f32",
    "gemm_strided_tn_f32",
    "cholesky_potrf_diag_f64",
    "cholesky_trsm_panel_f64",
    "cholesky_dataflow_f64",
    "cholesky_update_f64",
    "cholesky_widen_f32",
    "cholesky_narrow_f32",
    "cholesky_syrk_lower_tc_f64",
    "cholesky_syrk_lower_f64",
    "cholesky_syrk_lower64_f64",
    "triangle_zero_upper_f64",
    "cholesky_invert_diag_f64",
    "cholesky_solve_leaf_fwd_f64",
    "cholesky_solve_leaf_bwd_f64",
    "gemm_strided_nn_f64",
    "gemm_strided_tn_f64",
    "gemm_strided_tc_nn_f64",
];

/// Determinism and scope.
pub const NOTE: &str = "bitwise reproducible (no atomics in any sum, fixed order); the \
    first failing pivot is recorded on the device and read back once. The solve is the same \
    for every variant: recursive blocked forward and backward solves, the updates by the GEMM \
    ladder's fastest rung on the blocks where they lie, the 64-row diagonal blocks as products \
    with their inverses (computed once per solve, in a fixed order)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Blocked,
    Dataflow,
    Dataflow3x,
    PerStep,
    SingleBlock,
    TensorCore,
}

fn parse(variant: &str) -> Result<Variant> {
    match variant {
        "blocked" => Ok(Variant::Blocked),
        "dataflow" => Ok(Variant::Dataflow),
        "dataflow_3x" => Ok(Variant::Dataflow3x),
        "per_step" => Ok(Variant::PerStep),
        "single_block" => Ok(Variant::SingleBlock),
        "tensor_core" => Ok(Variant::TensorCore),
        _ => Err(Error::unknown_variant(
            "cuda",
            Family::Cholesky,
            variant,
            &Row::names(VARIANTS),
        )),
    }
}

/// Factors the square matrix `a` in place with the named variant: its lower triangle
/// becomes L (`A = L·Lᵀ`), its strict upper triangle is zeroed. Only the lower triangle
/// is read. NaN or Inf in the lower triangle fails the pivot of its row (the kernels
/// accept only positive finite pivots): [`Error::NotPositiveDefinite`] with that value.
///
/// # Errors
/// [`Error::NotSquare`], [`Error::UnknownVariant`],
/// [`Error::NotPositiveDefinite`] with the first failing pivot (0-based) and its value
/// before the square root; device errors.
pub(crate) fn cholesky<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    a: &mut DeviceMatrix<T>,
) -> Result<()> {
    let v = parse(variant)?;
    if a.rows != a.cols {
        return Err(Error::NotSquare {
            op: "cholesky",
            rows: a.rows,
            cols: a.cols,
        });
    }
    let n = a.rows;
    if n == 0 {
        return Ok(());
    }
    let ni = dim_i32("cholesky", n)?;
    // info[0]: failing pivot (-1: none); info[2..4): its value as the bits of an f64.
    let mut info = gpu
        .stream()
        .clone_htod(&[-1i32, 0, 0, 0])
        .map_err(|e| driver("cholesky: uploading the pivot record", e))?;
    match v {
        Variant::SingleBlock => launch::single_block(gpu, a, ni, &mut info)?,
        Variant::PerStep => {
            let mut col = gpu.alloc::<T>("cholesky", n)?;
            for k in 0..ni {
                launch::step_divide(gpu, a, ni, k, &mut col, &mut info)?;
                if k + 1 < ni {
                    launch::step_eliminate(gpu, a, ni, k, &col, &info)?;
                }
            }
        }
        Variant::Blocked => blocked(gpu, a, &mut info, false)?,
        // The default runs on every device: without DMMA, the updates of `blocked`.
        Variant::TensorCore => {
            let dmma = crate::ops::matmul::has_tensor_cores(gpu);
            blocked(gpu, a, &mut info, dmma)?
        }
        // f64 on FP64 tensor cores in one persistent kernel; f32 in an f64 copy on the
        // same kernel (as tensor_core where the device cannot hold the copy); devices
        // without DMMA as tensor_core.
        Variant::Dataflow => {
            let dmma = crate::ops::matmul::has_tensor_cores(gpu);
            match (T::DTYPE, dmma) {
                (DType::F64, true) => dataflow(gpu, a, &mut info)?,
                (DType::F32, true) => {
                    let ld = n.next_multiple_of(launch::dataflow_row_multiple::<f64>());
                    let copy = gpu.alloc_matrix::<f64>("cholesky", n, ld);
                    #[cfg(test)]
                    let copy = tests::refused(copy, n * ld * 8);
                    match copy {
                        Ok(mut w) => {
                            launch::convert(gpu, a, &mut w, false)?;
                            dataflow(gpu, &mut w, &mut info)?;
                            launch::convert(gpu, a, &mut w, true)?;
                        }
                        Err(Error::OutOfMemory { .. }) => blocked(gpu, a, &mut info, true)?,
                        Err(e) => return Err(e),
                    }
                }
                _ => blocked(gpu, a, &mut info, dmma)?,
            }
        }
        // f32 on 3xTF32 (f64 on DMMA) in the same kernel; no fallback: the precision was
        // asked for.
        Variant::Dataflow3x => {
            let row = crate::ops::find_row(VARIANTS, Family::Cholesky, "dataflow_3x")?;
            crate::ops::require(gpu, Family::Cholesky, &row)?;
            dataflow(gpu, a, &mut info)?
        }
    }
    zero_upper(gpu, a)?;
    let info = gpu
        .stream()
        .clone_dtoh(&info)
        .map_err(|e| driver("cholesky: reading the pivot record", e))?;
    gpu.synchronize()?;
    if info[0] >= 0 {
        let bits = (info[2] as u32 as u64) | ((info[3] as u32 as u64) << 32);
        return Err(Error::NotPositiveDefinite {
            pivot: info[0] as usize,
            value: f64::from_bits(bits),
        });
    }
    Ok(())
}

/// The blocked factorization with a look-ahead of one panel. After panel p is factored
/// and solved, the main stream updates only the next panel's columns and goes on to
/// factor that panel, while a second stream updates the rest of the trailing matrix from
/// panel p: the latency-bound diagonal factorization and panel solve of one step run
/// under the bandwidth-heavy trailing update of the step before. The streams meet before
/// each next-panel update (it writes the columns the previous trailing update wrote) and
/// at the end. With `tensor_cores`, the f64 trailing updates run on DMMA.
fn blocked<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    info: &mut CudaSlice<i32>,
    tensor_cores: bool,
) -> Result<()> {
    let n = a.rows;
    let ni = dim_i32("cholesky", n)?;
    let sms = gpu.sm_count()?;
    let main = gpu.stream();
    let side = gpu.side_stream();
    for k0 in (0..n).step_by(NB) {
        let k0i = k0 as i32;
        launch::potrf_diag(gpu, a, ni, k0i, info)?;
        if k0 + NB >= n {
            break;
        }
        launch::trsm_panel(gpu, a, ni, k0i, info, n - k0 - NB)?;
        // The next panel's columns were last written by the previous step's trailing
        // update, on the side stream.
        main.join(side)
            .map_err(|e| driver("cholesky: ordering the look-ahead", e))?;
        let syrk = launch::Syrk { sms, tensor_cores };
        launch::syrk_lower(gpu, main, a, ni, k0i, info, Region::NextPanel, syrk)?;
        side.join(main)
            .map_err(|e| driver("cholesky: ordering the trailing update", e))?;
        launch::syrk_lower(gpu, side, a, ni, k0i, info, Region::Rest, syrk)?;
    }
    main.join(side)
        .map_err(|e| driver("cholesky: joining the trailing updates", e))
}

/// The dataflow factorization (f64 on DMMA, f32 on 3xTF32): one launch over the lower
/// 64×64 tiles with a flag each, or, for a large matrix, panels of [`panel_columns`] tile
/// columns, each one launch, with the trailing matrix's update from that panel between
/// them (the tensor-core GEMM's blocks: `cholesky_update_f64` on DMMA,
/// `cholesky_update_f32` on 3xTF32).
/// Its rows are read as 16-byte vectors, so where `a`'s rows (n elements of `a.cols`) are
/// not a whole number of them the matrix is factored in a copy whose rows are padded to
/// one, and copied back.
fn dataflow<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    info: &mut CudaSlice<i32>,
) -> Result<()> {
    let n = a.rows;
    let ni = dim_i32("cholesky", n)?;
    let nt = n.div_ceil(NB);
    let width = panel_columns(n);
    let order = match gpu.take_scratch::<Order>(ORDER) {
        Some(o) if o.nt == nt && o.dtype == T::DTYPE && o.width == width => o,
        _ => Order::new::<T>(gpu, nt, width)?,
    };
    let mut work = gpu.alloc_zeroed::<i32>("cholesky", 1 + nt * (nt + 1) / 2)?;
    // f32: room for the first (largest) panel update's transpose of the panel.
    let first = (0, (width * NB).min(n) as i32);
    let lt_len = match T::DTYPE {
        DType::F32 if order.panels.len() > 1 => launch::panel_transpose_len(n, first),
        _ => 0,
    };
    let mut lt = gpu.alloc::<T>("cholesky", lt_len.max(1))?;
    let row = launch::dataflow_row_multiple::<T>();
    let mut run =
        |m: &mut DeviceMatrix<T>, work: &mut CudaSlice<i32>, info: &mut CudaSlice<i32>| {
            for (k, (panel, table)) in order.panels.iter().enumerate() {
                if k > 0 {
                    gpu.stream()
                        .memset_zeros(work)
                        .map_err(|e| driver("cholesky: zeroing the tile flags", e))?;
                }
                launch::dataflow(gpu, m, ni, *panel, work, (table, order.blocks), info)?;
                let c1 = panel.c0 + panel.nc * NB as i32;
                if c1 < ni {
                    launch::update(gpu, m, ni, (panel.c0, c1), &mut lt)?;
                }
            }
            Ok(())
        };
    let result = if a.cols.is_multiple_of(row) {
        run(a, &mut work, info)
    } else {
        let mut padded = gpu.alloc_matrix::<T>("cholesky", n, n.next_multiple_of(row))?;
        gpu.copy_region((&*a, (0, 0)), (&mut padded, (0, 0)), (n, n))?;
        run(&mut padded, &mut work, info)
            .and_then(|()| gpu.copy_region((&padded, (0, 0)), (a, (0, 0)), (n, n)))
    };
    gpu.keep_scratch(ORDER, order);
    result
}

/// The tile columns of each panel of the dataflow factorization of an n×n matrix: panels
/// of [`PANEL_TILES`] tile columns once there would be more than three of them, every
/// column in one launch otherwise. In one launch the 64×64 tiles' updates bound a large
/// factorization; in panels most of the updates run on the GEMM's larger blocks, at the
/// price of a wait for each update (docs/kernels.md has what set both numbers).
fn panel_columns(n: usize) -> usize {
    let nt = n.div_ceil(NB);
    #[cfg(test)]
    if let Some(w) = tests::PANEL_TILES_HERE.with(std::cell::Cell::get) {
        return w.clamp(1, nt.max(1));
    }
    if nt > 3 * PANEL_TILES {
        PANEL_TILES
    } else {
        nt
    }
}

/// The width of the dataflow factorization's panels, in tiles (2048 columns).
const PANEL_TILES: usize = 32;

/// Solves `L·Lᵀ·X = B` in place (`b` becomes X) given the factor `l` (only its lower
/// triangle is read): the recursive blocked solves of [`solve`]. `b` is n×nrhs.
///
/// # Errors
/// [`Error::NotSquare`] for `l`, [`Error::ShapeMismatch`] when `b` has other than n
/// rows; device errors. A zero diagonal is not checked here (a factor has none).
pub(crate) fn cholesky_solve<T: CudaElement>(
    gpu: &Gpu,
    l: &DeviceMatrix<T>,
    b: &mut DeviceMatrix<T>,
) -> Result<()> {
    let n = l.rows;
    if n == 0 || b.cols == 0 {
        return Ok(());
    }
    solve::solve(gpu, l, b)
}

impl<T: CudaElement> FactorizeKernels<T> for CudaBackend {
    fn cholesky_unchecked(&self, mut a: Matrix<T>) -> Result<CholeskyFactor<T>> {
        let gpu = self.gpu();
        let da = gpu.dm_mut(self.here(), "cholesky", "A", &mut a)?;
        cholesky(gpu, self.variant(Family::Cholesky), da)?;
        Ok(backend::cholesky_factor(a))
    }

    fn cholesky_solve_unchecked(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()> {
        let gpu = self.gpu();
        let dl = gpu.dm(self.here(), "cholesky_solve", "L", l.l())?;
        let db = gpu.dm_mut(self.here(), "cholesky_solve", "B", b)?;
        cholesky_solve(gpu, dl, db)
    }

    fn trsm_unchecked(&self, a: &Matrix<T>, tri: Triangular, b: &mut Matrix<T>) -> Result<()> {
        self.triangular_solve(a, tri, b)
    }
    fn lu_unchecked(&self, a: Matrix<T>) -> Result<LuFactor<T>> {
        self.lu_factor(a)
    }
    fn lu_solve_unchecked(&self, f: &LuFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        self.lu_solve(f, trans, b)
    }
    fn qr_unchecked(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        self.qr_factor(a)
    }
    fn qr_apply_unchecked(&self, f: &QrFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        self.qr_apply(f, trans, b)
    }
    fn qr_solve_unchecked(&self, f: &QrFactor<T>, b: Matrix<T>) -> Result<Matrix<T>> {
        self.qr_solve(f, b)
    }
    fn lstsq_unchecked(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.lstsq(a, b)
    }
    fn eigh_unchecked(&self, a: &Matrix<T>, v: bool) -> Result<crate::ops::spectra::Eigh<T>> {
        self.eigh_kernel(a, v)
    }
    fn svd_unchecked(&self, a: &Matrix<T>, v: bool) -> Result<crate::ops::spectra::Svd<T>> {
        self.svd_kernel(a, v)
    }
}

#[cfg(test)]
mod tests;
