//! Cholesky ladder (report 004): `A = L·Lᵀ` in place on the device, and solves with L.
//!
//! | variant | what it launches |
//! |---|---|
//! | `blocked` | per 64 columns: the diagonal block factored by one thread block (in registers), the panel below it solved (TRSM), the trailing lower triangle updated by a register-blocked SYRK over lower tiles only (128- or 64-wide tiles) |
//! | `per_step` | per column k: a division kernel and an elimination kernel whose threads run along rows (report 004's coalesced version) |
//! | `single_block` | one kernel, one block, the whole factorization (report 004's first version) |
//! | `tensor_core` (default) | `blocked` with the f64 trailing update on FP64 tensor cores (DMMA, sm_80 and later; `blocked`'s own update before, so that the default runs on every device); f32 as `blocked` |
//!
//! A pivot that is not positive is recorded on the device by the kernel that meets it;
//! every later kernel sees the record and does nothing, and the host reads it once.

mod launch;
mod solve;

use cudarc::driver::CudaSlice;
use ndgpu_core::backend::{self, finite_dev};
use ndgpu_core::{check, Backend, Cholesky, CholeskyFactor, Error, Family, Matrix, Result};
use ndgpu_cuda_runtime::triangle::zero_upper;
use ndgpu_cuda_runtime::{dim_i32, driver, CudaElement, DeviceMatrix, Gpu};

use launch::Region;

use crate::CudaBackend;

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["tensor_core", "blocked", "per_step", "single_block"];

/// Kernels the default variant launches (factorization and solve).
pub const DEFAULT_KERNELS: &[&str] = &[
    "cholesky_potrf_diag_f32",
    "cholesky_trsm_panel_f32",
    "cholesky_syrk_lower_f32",
    "cholesky_syrk_lower64_f32",
    "cholesky_zero_upper_f32",
    "cholesky_invert_diag_f32",
    "cholesky_solve_leaf_fwd_f32",
    "cholesky_solve_leaf_bwd_f32",
    "gemm_strided_nn_f32",
    "gemm_strided_tn_f32",
    "cholesky_potrf_diag_f64",
    "cholesky_trsm_panel_f64",
    "cholesky_syrk_lower_tc_f64",
    "cholesky_zero_upper_f64",
    "cholesky_invert_diag_f64",
    "cholesky_solve_leaf_fwd_f64",
    "cholesky_solve_leaf_bwd_f64",
    "gemm_strided_nn_f64",
    "gemm_strided_tn_f64",
];

/// Determinism and scope.
pub const NOTE: &str = "cholesky: blocked (64-column blocks, diagonal block in \
     registers, panel TRSM, register-blocked SYRK on lower tiles), per_step and single_block \
     (report 004's two kernels) and tensor_core (default: blocked with the f64 trailing update's \
     products on FP64 tensor cores, IEEE double arithmetic, sm_80 and later, and blocked's \
     own updates on older devices; f32 exactly as blocked) are all bitwise reproducible (no atomics, fixed order); the \
     first failing pivot is recorded on the device and read back once. The solve is the \
     same for every variant: recursive blocked forward and backward solves, the updates by \
     the GEMM ladder's fastest rung on the blocks where they lie, the 64-row diagonal \
     blocks as products with their inverses (computed once per solve, in a fixed order).";

/// The block size of the blocked factorization and of the solves (`CHOL_NB` in
/// `kernels/cholesky.cu`).
const NB: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Blocked,
    PerStep,
    SingleBlock,
    TensorCore,
}

fn parse(variant: &str) -> Result<Variant> {
    match variant {
        "blocked" => Ok(Variant::Blocked),
        "per_step" => Ok(Variant::PerStep),
        "single_block" => Ok(Variant::SingleBlock),
        "tensor_core" => Ok(Variant::TensorCore),
        _ => Err(Error::unknown_variant(
            "cuda",
            Family::Cholesky,
            variant,
            VARIANTS,
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
            let dmma =
                crate::ops::matmul::tensor_cores_present(gpu, Family::Cholesky, "tensor_core");
            blocked(gpu, a, &mut info, dmma.is_ok())?
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
    let n = check::square_dim("cholesky_solve", l.dim())?;
    check::solve_dims(n, b.dim())?;
    if n == 0 || b.cols == 0 {
        return Ok(());
    }
    solve::solve(gpu, l, b)
}

impl<T: CudaElement> Cholesky<T> for CudaBackend {
    fn cholesky_in_place_dev(&self, mut a: Matrix<T>) -> Result<CholeskyFactor<T>> {
        let gpu = self.gpu();
        let da = gpu.dm_mut(self.here(), "cholesky", "A", &mut a)?;
        cholesky(gpu, self.variant(Family::Cholesky), da)?;
        Ok(backend::cholesky_factor(a))
    }

    fn cholesky_solve_in_place_dev(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()> {
        check::solve_dims(l.order(), b.dim())?;
        let gpu = self.gpu();
        let dl = gpu.dm(self.here(), "cholesky_solve", "L", l.l())?;
        finite_dev(self, "cholesky_solve", "B", b)?;
        let db = gpu.dm_mut(self.here(), "cholesky_solve", "B", b)?;
        cholesky_solve(gpu, dl, db)
    }
}
