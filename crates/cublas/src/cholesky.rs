//! Cholesky factorization and solves through cuSOLVER and cuBLAS.
//!
//! A row-major n×n buffer read column-major is the transpose. For the factorization
//! that leaves two ways in: call `potrf` with `uplo = UPPER` on the buffer itself (its
//! column-major upper triangle is our row-major lower one, and the `U` it computes,
//! read row-major, is `L = Uᵀ`), or transpose it first (GEAM) so that its column-major
//! *lower* triangle is ours, call `potrf` with `uplo = LOWER` (what PyTorch does), and
//! transpose the factor back. For the solve, `L·Lᵀ·X = B` with B row-major is, read
//! column-major, `Xᵀ·L·Lᵀ = Bᵀ` with `Lᵀ = U` upper: two TRSMs from the right on B's
//! buffer in place, or `potrs` on a column-major copy of B.
//!
//! | variant | factor | solve |
//! |---|---|---|
//! | `xlower_trsm` (default) | GEAM, `cusolverDnXpotrf` (64-bit API) with LOWER, GEAM back | two TRSMs |
//! | `lower_trsm` | GEAM, `{S,D}potrf` (32-bit API) with LOWER, GEAM back | two TRSMs |
//! | `upper_trsm` | `{S,D}potrf` with UPPER, in place | two TRSMs |
//! | `upper_potrs` | `{S,D}potrf` with UPPER, in place | `{S,D}potrs` on a GEAM-transposed copy of B, and back |
//!
//! Every variant zeroes the factor's strict upper triangle (the runtime's kernel).

use cudarc::cublas::sys::{self as blas, cublasDiagType_t, cublasOperation_t, cublasSideMode_t};
use cudarc::cusolver::sys::{self as solver, cublasFillMode_t};
use cudarc::driver::CudaSlice;
use ndgpu_core::backend;
use ndgpu_core::Variant;
use ndgpu_core::{Backend, CholeskyFactor, Error, FactorizeKernels, Family, Matrix, Result};
use ndgpu_core::{LuFactor, QrFactor, Trans, Triangular};
use ndgpu_cuda_runtime::triangle::{factor_status, zero_upper};
use ndgpu_cuda_runtime::{dim_i32, DeviceMatrix, Gpu};

use crate::error::{self, VendorError, BACKEND};
use crate::library::Params;
use crate::{i64_of, ptr, ptr_mut, BlasElement, CublasBackend};

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[Variant] = &[
    Variant::new(
        "xlower_trsm",
        "cusolverDnXpotrf (64-bit API) with uplo = LOWER, as PyTorch calls it: on a \
         transposed copy (GEAM into a new n×n buffer), transposed back; solves by two TRSMs",
    ),
    Variant::new(
        "xupper_trsm",
        "cusolverDnXpotrf with uplo = UPPER on the row-major buffer in place (its \
         column-major upper triangle is our lower one): no copy, no transpose, but cuSOLVER's \
         UPPER factorization measures slower than its LOWER one with the two transposes \
         (docs/performance.md), so it is not the default; solves by two TRSMs",
    ),
    Variant::new(
        "lower_trsm",
        "the same with the 32-bit SPOTRF/DPOTRF; solves by two TRSMs",
    ),
    Variant::new(
        "upper_trsm",
        "SPOTRF/DPOTRF with uplo = UPPER on the row-major buffer in place (its column-major \
         upper triangle is our lower one); solves by two TRSMs",
    ),
    Variant::new(
        "upper_potrs",
        "as upper_trsm; solves by SPOTRS/DPOTRS on a transposed copy of B",
    ),
];

/// What every variant shares.
pub const NOTE: &str = "the factor's strict upper triangle is zeroed, and cuSOLVER's info \
    and the first non-finite entry of the factor's diagonal (cuSOLVER takes a NaN pivot for a \
    positive one, so a non-finite diagonal entry p of L is the failed pivot p) are formed on \
    the device and read back at once: one synchronisation per factorization. A failed pivot p (info = p + 1) is \
    Error::NotPositiveDefinite { pivot: p, value }; cuSOLVER leaves NaN there, so value is \
    re-formed in f64 from the saved diagonal and the finished row p of L: \
    A[p][p] − Σ L[p][j]².";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Factor {
    /// UPPER in place, through the 64-bit API.
    XUpper,
    /// LOWER on a transposed copy, through the 64-bit API.
    XLower,
    /// LOWER on a transposed copy, through the 32-bit API.
    Lower,
    /// UPPER in place, through the 32-bit API.
    Upper,
}

/// How the solve with the factor runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Solve {
    /// Two triangular solves (TRSM) on B's own buffer.
    Trsm,
    /// cuSOLVER's `potrs`.
    Potrs,
}

/// The factorization and the solve of `variant`.
fn parse(variant: &str) -> Result<(Factor, Solve)> {
    let table = [
        ("xupper_trsm", (Factor::XUpper, Solve::Trsm)),
        ("xlower_trsm", (Factor::XLower, Solve::Trsm)),
        ("lower_trsm", (Factor::Lower, Solve::Trsm)),
        ("upper_trsm", (Factor::Upper, Solve::Trsm)),
        ("upper_potrs", (Factor::Upper, Solve::Potrs)),
    ];
    crate::error::pick((Family::Cholesky, variant), VARIANTS, &table)
}

const UPPER: cublasFillMode_t = cublasFillMode_t::CUBLAS_FILL_MODE_UPPER;
const LOWER: cublasFillMode_t = cublasFillMode_t::CUBLAS_FILL_MODE_LOWER;
/// UPPER as cuBLAS spells it (the same value; another binding's type).
const BLAS_UPPER: blas::cublasFillMode_t = blas::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER;

impl CublasBackend {
    /// Factors the square `a` in place: afterwards it holds L row-major, strict upper
    /// triangle zero.
    fn potrf_device<T: BlasElement>(&self, how: Factor, a: &mut DeviceMatrix<T>) -> Result<()> {
        let n = a.rows;
        if n == 0 {
            return Ok(());
        }
        let gpu = &self.gpu;
        // cuSOLVER overwrites a failed pivot with NaN; keep the diagonal to re-form it.
        let mut diag = gpu.alloc::<T>("cholesky", n)?;
        self.copy_strided(
            &a.data,
            n + 1,
            &mut diag,
            n,
            "cholesky: saving the diagonal",
        )?;
        let info = match how {
            Factor::XUpper | Factor::Upper => self.potrf_raw(UPPER, a, how == Factor::XUpper)?,
            Factor::Lower | Factor::XLower => {
                let mut t = gpu.alloc_matrix::<T>("cholesky", n, n)?;
                self.geam_transpose(a, &mut t)?;
                let info = self.potrf_raw(LOWER, &mut t, how == Factor::XLower)?;
                // Back to row-major L (on failure too: `failed_pivot` reads row p).
                self.geam_transpose(&t, a)?;
                info
            }
        };
        // Queued before the one read: on failure the matrix is consumed, and
        // `failed_pivot` reads only the lower triangle.
        zero_upper(gpu, a)?;
        let status = factor_status(gpu, &info, a)?;
        let p = match (status.info, status.nonfinite) {
            (0, None) => return Ok(()),
            (0, Some(p)) => p,
            (i, _) if i < 0 => return Err(illegal("potrf", i)),
            (i, _) => (i - 1) as usize,
        };
        let value = failed_pivot(gpu, &a.data, &diag, n, p)?;
        Err(Error::NotPositiveDefinite {
            pivot: p,
            value: if value > 0.0 { f64::NAN } else { value },
        })
    }

    /// `potrf` on the column-major reading of `a`'s buffer with `uplo`, queued; returns the
    /// device `info` it will write (read with the factor's status).
    fn potrf_raw<T: BlasElement>(
        &self,
        uplo: cublasFillMode_t,
        a: &mut DeviceMatrix<T>,
        x_api: bool,
    ) -> Result<CudaSlice<i32>> {
        let gpu = &self.gpu;
        let n = a.rows;
        let n32 = dim_i32("cholesky", n)?;
        let pa = ptr_mut(gpu, &mut a.data);
        let mut info = info_buffer(gpu)?;
        let pi = ptr_mut(gpu, &mut info);
        let h = self.solver()?;
        if x_api {
            let params = Params::new()?;
            let (mut dev_bytes, mut host_bytes) = (0usize, 0usize);
            // The arguments both calls share: the handle, the parameters, and A (n×n of
            // T::DATA_TYPE, ld n), computed in T::DATA_TYPE.
            macro_rules! xpotrf {
                ($f:ident, $($rest:expr),+) => {
                    solver::$f(
                        h.raw, params.0, uplo, i64_of(n), T::DATA_TYPE, pa.cast(), i64_of(n),
                        T::DATA_TYPE, $($rest),+
                    )
                };
            }
            // SAFETY: a holds n×n elements of T::DATA_TYPE with ld n; valid out-pointers.
            error::cusolver(
                unsafe { xpotrf!(cusolverDnXpotrf_bufferSize, &mut dev_bytes, &mut host_bytes) },
                "cholesky: workspace size (Xpotrf_bufferSize)",
            )?;
            let mut work = gpu.alloc::<u8>("cholesky", dev_bytes)?;
            let mut host_work = vec![0u8; host_bytes.max(1)];
            let pw = ptr_mut(gpu, &mut work);
            // SAFETY: as above; work holds dev_bytes device bytes, host_work host_bytes.
            error::cusolver(
                unsafe {
                    xpotrf!(
                        cusolverDnXpotrf,
                        pw.cast(),
                        dev_bytes,
                        host_work.as_mut_ptr().cast(),
                        host_bytes,
                        pi
                    )
                },
                "cholesky (Xpotrf)",
            )?;
            drop(h);
            // The host workspace (none on the GPUs measured) must outlive the call.
            if host_bytes > 0 {
                gpu.synchronize()?;
            }
            return Ok(info);
        }
        let mut lwork = 0;
        // SAFETY: a holds n×n elements; lwork is a valid out-pointer.
        error::cusolver(
            unsafe { T::potrf_buffer_size(h.raw, uplo, n32, pa, n32, &mut lwork) },
            "cholesky: workspace size (potrf_bufferSize)",
        )?;
        let mut work = gpu.alloc::<T>("cholesky", usize::try_from(lwork).unwrap_or(0))?;
        let pw = ptr_mut(gpu, &mut work);
        // SAFETY: a is n×n with ld n; work holds at least lwork elements; info one.
        error::cusolver(
            unsafe { T::potrf(h.raw, uplo, n32, pa, n32, pw, lwork.max(1), pi) },
            "cholesky (potrf)",
        )?;
        drop(h);
        Ok(info)
    }

    /// `L·Lᵀ·X = B` in place on B's row-major buffer, the way `how` says:
    /// - [`Solve::Trsm`]: two TRSMs from the right. Read column-major, B is Bᵀ (nrhs×n)
    ///   and L's buffer is U = Lᵀ (upper), so `Xᵀ·U ᵀ·U = Bᵀ`: first `Z·U = Bᵀ`, then
    ///   `Xᵀ·Uᵀ = Z`.
    /// - [`Solve::Potrs`]: `potrs`, which wants B column-major: B is transposed into a
    ///   copy (GEAM), solved, and transposed back.
    fn solve_raw<T: BlasElement>(
        &self,
        how: Solve,
        l: &DeviceMatrix<T>,
        b: &mut DeviceMatrix<T>,
    ) -> Result<()> {
        let (n, nrhs) = (l.rows, b.cols);
        let gpu = &self.gpu;
        match how {
            Solve::Trsm => {
                let (pl, pb) = (ptr(gpu, &l.data), ptr_mut(gpu, &mut b.data));
                let h = self.blas()?;
                for (trans, what) in [
                    (
                        cublasOperation_t::CUBLAS_OP_N,
                        "cholesky_solve (trsm with Lᵀ)",
                    ),
                    (
                        cublasOperation_t::CUBLAS_OP_T,
                        "cholesky_solve (trsm with L)",
                    ),
                ] {
                    // SAFETY: l's buffer is n×n (ld n), b's nrhs×n column-major (ld
                    // nrhs): the shapes of a right-side solve with an n×n triangle; in
                    // place on b.
                    error::cublas(
                        unsafe {
                            T::trsm(
                                h.raw,
                                cublasSideMode_t::CUBLAS_SIDE_RIGHT,
                                BLAS_UPPER,
                                trans,
                                cublasDiagType_t::CUBLAS_DIAG_NON_UNIT,
                                i64_of(nrhs),
                                i64_of(n),
                                &T::one(),
                                pl,
                                i64_of(n),
                                pb,
                                i64_of(nrhs.max(1)),
                            )
                        },
                        what,
                    )?;
                }
                Ok(())
            }
            Solve::Potrs => {
                let mut bt = gpu.alloc_matrix::<T>("cholesky_solve", nrhs, n)?;
                self.geam_transpose(b, &mut bt)?;
                let (n32, nrhs32) = (
                    dim_i32("cholesky_solve", n)?,
                    dim_i32("cholesky_solve", nrhs)?,
                );
                let (pl, pb) = (ptr(gpu, &l.data), ptr_mut(gpu, &mut bt.data));
                let mut info = info_buffer(gpu)?;
                let pi = ptr_mut(gpu, &mut info);
                let h = self.solver()?;
                // SAFETY: l is n×n (ld n), the factor in its column-major upper
                // triangle; bt is B column-major, n×nrhs with ld n; info one.
                error::cusolver(
                    unsafe { T::potrs(h.raw, UPPER, n32, nrhs32, pl, n32, pb, n32, pi) },
                    "cholesky_solve (potrs)",
                )?;
                drop(h);
                match read_info(gpu, &info)? {
                    0 => self.geam_transpose(&bt, b),
                    i => Err(illegal("potrs", i)),
                }
            }
        }
    }

    /// `count` elements of `src` `stride` apart into `dst` (cuBLAS COPY).
    fn copy_strided<T: BlasElement>(
        &self,
        src: &CudaSlice<T>,
        stride: usize,
        dst: &mut CudaSlice<T>,
        count: usize,
        doing: &str,
    ) -> Result<()> {
        let gpu = &self.gpu;
        let (ps, pd) = (ptr(gpu, src), ptr_mut(gpu, dst));
        let h = self.blas()?;
        // SAFETY: callers pass a src holding (count − 1)·stride + 1 elements and a dst
        // holding count.
        let status = unsafe { T::copy(h.raw, i64_of(count), ps, i64_of(stride), pd, 1) };
        error::cublas(status, doing)
    }
}

/// A device `int` for cuSOLVER's `info` output.
fn info_buffer(gpu: &Gpu) -> Result<CudaSlice<i32>> {
    gpu.alloc_zeroed("cholesky", 1)
}

/// Waits for the queued work and reads `info`.
fn read_info(gpu: &Gpu, info: &CudaSlice<i32>) -> Result<i32> {
    Ok(gpu.download_slice(info, 1)?[0])
}

/// The pivot that failed at p, `A[p][p] − Σ_{j<p} L[p][j]²`, in f64, from `a` holding
/// the (partial) factor row-major in its lower triangle. When pivot p fails, row p of L
/// left of the diagonal is finished (every Cholesky order computes it before it can
/// form the pivot), and `diag` holds A's diagonal from before.
fn failed_pivot<T: BlasElement>(
    gpu: &Gpu,
    a: &CudaSlice<T>,
    diag: &CudaSlice<T>,
    n: usize,
    p: usize,
) -> Result<f64> {
    let app = gpu.download_range(diag, p..p + 1)?[0].as_f64();
    let row = gpu.download_range(a, p * n..p * n + p)?;
    Ok(app - row.iter().map(|l| l.as_f64() * l.as_f64()).sum::<f64>())
}

fn illegal(routine: &'static str, info: i32) -> Error {
    Error::backend(
        BACKEND,
        format!("cholesky ({routine})"),
        VendorError::IllegalArgument {
            routine,
            arg: -info,
        },
    )
}

impl<T: BlasElement> FactorizeKernels<T> for CublasBackend {
    fn cholesky_unchecked(&self, mut a: Matrix<T>) -> Result<CholeskyFactor<T>> {
        let (how, _) = parse(self.variant(Family::Cholesky))?;
        let da = self.gpu.dm_mut(self.here(), "cholesky", "A", &mut a)?;
        self.potrf_device(how, da)?;
        Ok(backend::cholesky_factor(a))
    }

    fn cholesky_solve_unchecked(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()> {
        let (_, how) = parse(self.variant(Family::Cholesky))?;
        let gpu = &self.gpu;
        let dl = gpu.dm(self.here(), "cholesky_solve", "L", l.l())?;
        let db = gpu.dm_mut(self.here(), "cholesky_solve", "B", b)?;
        if db.is_empty() {
            return Ok(());
        }
        self.solve_raw(how, dl, db)
    }

    fn trsm_unchecked(&self, a: &Matrix<T>, tri: Triangular, b: &mut Matrix<T>) -> Result<()> {
        self.solve_triangular_kernel((a, tri, b))
    }

    fn lu_unchecked(&self, a: Matrix<T>) -> Result<LuFactor<T>> {
        self.lu_kernel(a)
    }

    fn lu_solve_unchecked(&self, f: &LuFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        self.lu_solve_kernel((f, trans), b)
    }

    fn qr_unchecked(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        self.qr_kernel(a)
    }

    fn qr_apply_unchecked(&self, f: &QrFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        self.qr_apply_kernel(f, (trans, b))
    }

    fn qr_solve_unchecked(&self, f: &QrFactor<T>, b: Matrix<T>) -> Result<Matrix<T>> {
        self.qr_solve_kernel(f, b)
    }

    fn eigh_unchecked(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, Option<Matrix<T>>)> {
        self.eigh_kernel(a, vectors)
    }

    fn svd_unchecked(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, crate::spectra::SingularVectors<T>)> {
        self.svd_kernel(a, vectors)
    }
}
