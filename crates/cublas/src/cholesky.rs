//! Cholesky factorization and solve through cuSOLVER (`potrf`, `potrs`).
//!
//! A row-major buffer read column-major is the transpose. For the symmetric A that is
//! A itself, but the triangles swap: the row-major lower triangle (the one ndgpu reads
//! and returns) is the column-major *upper* one. So cuSOLVER is called with
//! `uplo = UPPER`: it computes `A = Uᵀ·U` in the column-major upper triangle, and
//! that memory read row-major is `L = Uᵀ`, lower, with `A = L·Lᵀ`. The same holds
//! for `potrs`, which only reads that triangle.

use cudarc::cusolver::sys::cublasFillMode_t;
use cudarc::driver::CudaSlice;
use ndarray::{Array2, ArrayView2};
use ndgpu_core::{check, Error, Factorize, Result};
use ndgpu_cuda::{dim_i32, DeviceMatrix, Gpu};

use crate::error::{self, VendorError, BACKEND};
use crate::{i64_of, ptr, ptr_mut, BlasElement, CublasBackend};

/// Variants, default first.
pub const VARIANTS: &[&str] = &["potrf"];

/// Determinism and scope.
pub const NOTE: &str = "cholesky: cuSOLVER SPOTRF/DPOTRF (uplo = UPPER on the row-major \
    buffer, which is its lower triangle) and SPOTRS/DPOTRS; the strict upper triangle of \
    the factor is zeroed on the host after the download. A failed pivot p (info = p + 1) \
    is Error::NotPositiveDefinite { pivot: p, value }; cuSOLVER leaves NaN (the square \
    root of the negative pivot) in A[p][p], so value is re-formed in f64 from the saved \
    diagonal and the finished row p of L: A[p][p] − Σ L[p][j]² (NaN if rounding makes \
    that positive).";

/// The row-major lower triangle is the column-major upper one.
const ROW_MAJOR_LOWER: cublasFillMode_t = cublasFillMode_t::CUBLAS_FILL_MODE_UPPER;

impl CublasBackend {
    /// Factors a resident symmetric positive-definite `a` in place: afterwards its
    /// row-major lower triangle (diagonal included) holds L with `A = L·Lᵀ`. Only that
    /// triangle is read; the strict upper triangle is left as it was (as LAPACK's
    /// potrf does): zero it, or read only the lower triangle. Besides the call to
    /// potrf it queues one strided COPY of the diagonal (n elements), kept to re-form a
    /// failed pivot.
    ///
    /// # Errors
    /// [`Error::NotSquare`]; [`Error::NotPositiveDefinite`] with the first failing
    /// pivot and its value (then `a` holds cuSOLVER's partial factorization, NaN from
    /// the failed pivot on); cuSOLVER errors.
    pub fn potrf_device<T: BlasElement>(&self, a: &mut DeviceMatrix<T>) -> Result<()> {
        let n = a.rows;
        if a.cols != n {
            return Err(Error::NotSquare {
                op: "cholesky",
                rows: a.rows,
                cols: a.cols,
            });
        }
        if n == 0 {
            return Ok(());
        }
        let n32 = dim_i32("cholesky", n)?;
        let gpu = &self.gpu;
        let pa = ptr_mut(gpu, &mut a.data);
        // cuSOLVER overwrites a failed pivot with NaN; keep the diagonal to re-form it.
        let mut diag = gpu.alloc::<T>("cholesky", n)?;
        {
            let h = self.blas()?;
            // SAFETY: a holds n×n elements (its diagonal is n apart by n + 1), diag n.
            let status = unsafe {
                T::copy(
                    h.raw,
                    i64_of(n),
                    pa,
                    i64_of(n + 1),
                    ptr_mut(gpu, &mut diag),
                    1,
                )
            };
            error::cublas(status, "cholesky: saving the diagonal (copy)")?;
        }
        let mut info = info_buffer(gpu)?;
        let h = self.solver()?;
        let mut lwork = 0;
        // SAFETY: a holds n×n elements; lwork is a valid out-pointer.
        error::cusolver(
            unsafe { T::potrf_buffer_size(h.raw, ROW_MAJOR_LOWER, n32, pa, n32, &mut lwork) },
            "cholesky: workspace size (potrf_bufferSize)",
        )?;
        let mut work = gpu.alloc::<T>("cholesky", usize::try_from(lwork).unwrap_or(0))?;
        let (pw, pi) = (ptr_mut(gpu, &mut work), ptr_mut(gpu, &mut info));
        // SAFETY: a is n×n with ld n; work holds at least lwork elements; info one.
        error::cusolver(
            unsafe { T::potrf(h.raw, ROW_MAJOR_LOWER, n32, pa, n32, pw, lwork.max(1), pi) },
            "cholesky (potrf)",
        )?;
        drop(h);
        match read_info(gpu, &info)? {
            0 => Ok(()),
            i if i < 0 => Err(illegal("potrf", i)),
            i => {
                let p = (i - 1) as usize;
                let value = failed_pivot(gpu, &a.data, &diag, n, p)?;
                Err(Error::NotPositiveDefinite {
                    pivot: p,
                    value: if value > 0.0 { f64::NAN } else { value },
                })
            }
        }
    }

    /// Solves `L·Lᵀ·X = B` on resident data: `l` holds the factor in its row-major
    /// lower triangle (as [`CublasBackend::potrf_device`] leaves it), `bt` holds **Bᵀ**
    /// row-major (nrhs×n, which is B column-major) and is overwritten by Xᵀ.
    ///
    /// # Errors
    /// [`Error::NotSquare`], [`Error::ShapeMismatch`]; cuSOLVER errors.
    pub fn potrs_device<T: BlasElement>(
        &self,
        l: &DeviceMatrix<T>,
        bt: &mut DeviceMatrix<T>,
    ) -> Result<()> {
        let n = l.rows;
        if l.cols != n {
            return Err(Error::NotSquare {
                op: "cholesky_solve",
                rows: l.rows,
                cols: l.cols,
            });
        }
        if bt.cols != n {
            return Err(Error::shape(
                "cholesky_solve",
                format!("L is {n}x{n} but Bᵀ is {}x{}", bt.rows, bt.cols),
            ));
        }
        if n == 0 || bt.rows == 0 {
            return Ok(());
        }
        let (n32, nrhs) = (
            dim_i32("cholesky_solve", n)?,
            dim_i32("cholesky_solve", bt.rows)?,
        );
        let gpu = &self.gpu;
        let (pl, pb) = (ptr(gpu, &l.data), ptr_mut(gpu, &mut bt.data));
        let mut info = info_buffer(gpu)?;
        let pi = ptr_mut(gpu, &mut info);
        let h = self.solver()?;
        // SAFETY: l is n×n (ld n); bt is B column-major, n×nrhs with ld n; info one.
        error::cusolver(
            unsafe { T::potrs(h.raw, ROW_MAJOR_LOWER, n32, nrhs, pl, n32, pb, n32, pi) },
            "cholesky_solve (potrs)",
        )?;
        drop(h);
        match read_info(gpu, &info)? {
            0 => Ok(()),
            i => Err(illegal("potrs", i)),
        }
    }
}

/// A device `int` for cuSOLVER's `info` output.
fn info_buffer(gpu: &Gpu) -> Result<CudaSlice<i32>> {
    gpu.stream()
        .alloc_zeros::<i32>(1)
        .map_err(|e| error::driver("allocating cuSOLVER's info", e))
}

/// Waits for the queued work and reads `info`.
fn read_info(gpu: &Gpu, info: &CudaSlice<i32>) -> Result<i32> {
    let mut host = [0i32];
    gpu.stream()
        .memcpy_dtoh(info, &mut host)
        .map_err(|e| error::driver("reading cuSOLVER's info", e))?;
    gpu.synchronize()?;
    Ok(host[0])
}

/// The pivot that failed at p, `A[p][p] − Σ_{j<p} L[p][j]²`, in f64. When pivot p
/// fails, row p of L left of the diagonal is finished (every Cholesky order computes
/// it before it can form the pivot), and `diag` holds A's diagonal from before.
fn failed_pivot<T: BlasElement>(
    gpu: &Gpu,
    a: &CudaSlice<T>,
    diag: &CudaSlice<T>,
    n: usize,
    p: usize,
) -> Result<f64> {
    let read = |s: &CudaSlice<T>, from: usize, len: usize| -> Result<Vec<T>> {
        let mut host = vec![T::zero(); len];
        gpu.stream()
            .memcpy_dtoh(&s.slice(from..from + len), host.as_mut_slice())
            .map_err(|e| error::driver("reading the failed pivot", e))?;
        gpu.synchronize()?;
        Ok(host)
    };
    let app = read(diag, p, 1)?[0].as_f64();
    let row = if p > 0 {
        read(a, p * n, p)?
    } else {
        Vec::new()
    };
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

impl<T: BlasElement> Factorize<T> for CublasBackend {
    fn cholesky(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        let n = check::cholesky(&a)?;
        if n == 0 {
            return Ok(Array2::zeros((0, 0)));
        }
        let gpu = &self.gpu;
        let mut d = gpu.upload(a)?;
        self.potrf_device(&mut d)?;
        let mut l = gpu.download(&d)?;
        for i in 0..n {
            for j in i + 1..n {
                l[[i, j]] = T::zero();
            }
        }
        Ok(l)
    }

    fn cholesky_solve(&self, l: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        let (n, nrhs) = check::cholesky_solve(&l, &b)?;
        if n == 0 || nrhs == 0 {
            return Ok(Array2::zeros((n, nrhs)));
        }
        let gpu = &self.gpu;
        let dl = gpu.upload(l)?;
        // Bᵀ row-major is B column-major, which potrs wants; the host makes the copy
        // the upload needs anyway.
        let mut bt = gpu.upload(b.t())?;
        self.potrs_device(&dl, &mut bt)?;
        let xt = gpu.download(&bt)?;
        Ok(xt.t().as_standard_layout().into_owned())
    }
}
