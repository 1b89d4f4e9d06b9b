//! Cholesky ladder (report 004): `A = L·Lᵀ` in place on the device, and solves with L.
//!
//! | variant | what it launches |
//! |---|---|
//! | `blocked` (default) | per 64 columns: the diagonal block factored by one thread block (in registers), the panel below it solved (TRSM), the trailing lower triangle updated by a register-blocked SYRK over lower tiles only (128- or 64-wide tiles) |
//! | `per_step` | per column k: a division kernel and an elimination kernel whose threads run along rows (report 004's coalesced version) |
//! | `single_block` | one kernel, one block, the whole factorization (report 004's first version) |
//!
//! A pivot that is not positive is recorded on the device by the kernel that meets it;
//! every later kernel sees the record and does nothing, and the host reads it once.

mod launch;

use ndarray::{Array2, ArrayView2};
use ndgpu_core::{check, Backend, Error, Factorize, Family, Result};

use crate::runtime::driver;
use crate::{dim_i32, CudaBackend, CudaElement, DeviceMatrix, Gpu};

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["blocked", "per_step", "single_block"];

/// Kernels the default variant launches (factorization and solve).
pub const DEFAULT_KERNELS: &[&str] = &[
    "cholesky_potrf_diag_f32",
    "cholesky_trsm_panel_f32",
    "cholesky_syrk_lower_f32",
    "cholesky_syrk_lower64_f32",
    "cholesky_zero_upper_f32",
    "cholesky_solve_diag_fwd_f32",
    "cholesky_solve_diag_bwd_f32",
    "cholesky_solve_update_fwd_f32",
    "cholesky_solve_update_bwd_f32",
    "cholesky_potrf_diag_f64",
    "cholesky_trsm_panel_f64",
    "cholesky_syrk_lower_f64",
    "cholesky_zero_upper_f64",
    "cholesky_solve_diag_fwd_f64",
    "cholesky_solve_diag_bwd_f64",
    "cholesky_solve_update_fwd_f64",
    "cholesky_solve_update_bwd_f64",
];

/// Determinism and scope.
pub const NOTE: &str = "cholesky: blocked (default: 64-column blocks, diagonal block in \
     registers, panel TRSM, register-blocked SYRK on lower tiles), per_step and single_block \
     (report 004's two kernels) are all bitwise reproducible (no atomics, fixed order); the \
     first failing pivot is recorded on the device and read back once. cholesky_solve is \
     one blocked forward/back substitution for every variant.";

/// The block size of the blocked factorization and of the solves (`CHOL_NB` in
/// `kernels/cholesky.cu`).
const NB: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Blocked,
    PerStep,
    SingleBlock,
}

fn parse(variant: &str) -> Result<Variant> {
    match variant {
        "blocked" => Ok(Variant::Blocked),
        "per_step" => Ok(Variant::PerStep),
        "single_block" => Ok(Variant::SingleBlock),
        _ => Err(Error::UnknownVariant {
            backend: "cuda".into(),
            family: Family::Cholesky,
            name: variant.into(),
            available: VARIANTS.join(", "),
        }),
    }
}

/// Factors the square matrix `a` in place with the named variant: its lower triangle
/// becomes L (`A = L·Lᵀ`), its strict upper triangle is zeroed. Only the lower triangle
/// is read. NaN or Inf in the lower triangle propagates to a later pivot and is reported
/// as [`Error::NotPositiveDefinite`] (the ndarray-level call checks for it first).
///
/// # Errors
/// [`Error::NotSquare`], [`Error::UnknownVariant`],
/// [`Error::NotPositiveDefinite`] with the first failing pivot (0-based) and its value
/// before the square root; device errors.
pub fn cholesky<T: CudaElement>(gpu: &Gpu, variant: &str, a: &mut DeviceMatrix<T>) -> Result<()> {
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
        Variant::Blocked => {
            let sms = gpu.sm_count()?;
            for k0 in (0..n).step_by(NB) {
                let k0i = k0 as i32;
                launch::potrf_diag(gpu, a, ni, k0i, &mut info)?;
                if k0 + NB < n {
                    launch::trsm_panel(gpu, a, ni, k0i, &info, n - k0 - NB)?;
                    launch::syrk_lower(gpu, a, ni, k0i, &info, n - k0 - NB, sms)?;
                }
            }
        }
    }
    launch::zero_upper(gpu, a, ni)?;
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

/// Solves `L·Lᵀ·X = B` in place (`b` becomes X) given the factor `l` (only its lower
/// triangle is read): forward substitution `L·Y = B`, then back substitution `Lᵀ·X = Y`,
/// both blocked by 64 rows. `b` is n×nrhs.
///
/// # Errors
/// [`Error::NotSquare`] for `l`, [`Error::ShapeMismatch`] when `b` has other than n
/// rows; device errors. A zero diagonal is not checked here (the ndarray-level call does).
pub fn cholesky_solve<T: CudaElement>(
    gpu: &Gpu,
    l: &DeviceMatrix<T>,
    b: &mut DeviceMatrix<T>,
) -> Result<()> {
    if l.rows != l.cols {
        return Err(Error::NotSquare {
            op: "cholesky_solve",
            rows: l.rows,
            cols: l.cols,
        });
    }
    let n = l.rows;
    if b.rows != n {
        return Err(Error::shape(
            "cholesky_solve",
            format!("L is {n}x{n} but B has {} rows", b.rows),
        ));
    }
    if n == 0 || b.cols == 0 {
        return Ok(());
    }
    let (ni, nrhs) = (
        dim_i32("cholesky_solve", n)?,
        dim_i32("cholesky_solve", b.cols)?,
    );
    let starts: Vec<usize> = (0..n).step_by(NB).collect();
    for &r0 in &starts {
        launch::solve_diag(gpu, false, l, ni, b, nrhs, r0 as i32)?;
        if r0 + NB < n {
            launch::solve_update(gpu, false, l, ni, b, nrhs, r0 as i32, r0 + NB, n)?;
        }
    }
    for &r0 in starts.iter().rev() {
        launch::solve_diag(gpu, true, l, ni, b, nrhs, r0 as i32)?;
        if r0 > 0 {
            launch::solve_update(gpu, true, l, ni, b, nrhs, r0 as i32, 0, r0)?;
        }
    }
    Ok(())
}

impl<T: CudaElement> Factorize<T> for CudaBackend {
    fn cholesky(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        let n = check::cholesky(&a)?;
        if n == 0 {
            return Ok(Array2::zeros((0, 0)));
        }
        let mut d = self.gpu().upload(a)?;
        cholesky(self.gpu(), self.variant(Family::Cholesky), &mut d)?;
        self.gpu().download(&d)
    }

    fn cholesky_solve(&self, l: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        let (n, nrhs) = check::cholesky_solve(&l, &b)?;
        if n == 0 || nrhs == 0 {
            return Ok(Array2::zeros((n, nrhs)));
        }
        let dl = self.gpu().upload(l)?;
        let mut db = self.gpu().upload(b)?;
        cholesky_solve(self.gpu(), &dl, &mut db)?;
        self.gpu().download(&db)
    }
}
