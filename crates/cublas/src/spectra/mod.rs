//! The spectra through cuSOLVER: the symmetric eigendecomposition (`eigh`) and the
//! reduced SVD, as PyTorch calls them.
//!
//! **Layout.** A row-major buffer read column-major is the transpose. For `eigh` the
//! row-major lower triangle of A is the column-major upper triangle of its buffer:
//! `syevd` may read it with uplo = UPPER on a plain copy, or with uplo = LOWER on a
//! transposed copy (GEAM), which is what PyTorch does (a column-major clone, UPLO =
//! 'L'). Either way the eigenvectors come back column-major, so the buffer holds Vᵀ
//! row-major, and one GEAM makes V. For the SVD of the m×n A the buffer read
//! column-major is Aᵀ (n×m) = U'·S·V'ᵀ, so `A = V'·S·U'ᵀ`: U = V' and Vt = U'ᵀ, and a
//! column-major U' (n×k) is already Vt row-major ([`svd`] has the details).
//!
//! **Checks, two reads.** The row sums of A, of the lower triangle for `eigh` (TRMV
//! with the buffer's upper triangle, which reads nothing else) or of all of A for the
//! SVD (GEMV), are formed into a status buffer and read back before cuSOLVER runs: its
//! routines are not defined on NaN, and a kernel that faults leaves the context
//! unusable for every backend that shares it. A non-finite sum names the row, which is
//! read back to name the entry ([`CublasBackend::refuse_nonfinite_row`]). A copy of A
//! is factored; cuSOLVER's `info` goes into a last slot, read back after it: `info >
//! 0` is [`Error::NoConvergence`]. For `eigh` that slot follows w, so that w comes back
//! in the same copy.
//!
//! **`eigh` beyond `syevd`.** cuSOLVER's `syevd`, measured on an H200 with CUDA 13,
//! returned eigenvalues out of order within clusters of (nearly) equal ones, in f32 and
//! f64, and lost orthogonality in f32 on a graded matrix whose entries reach the
//! subnormal range (the same matrix in f64 passes). So w is read back with `info` and,
//! where it is not ascending, sorted on the host (stably), V's columns gathered into
//! the same order; and f32 input is factored in f64, the results rounded to f32 once
//! ([`eigh`] has the details).

mod eigh;
mod svd;

pub(crate) use svd::SingularVectors;

use cudarc::driver::CudaSlice;
use ndgpu_core::{Backend, Error, Family, Result, Variant};
use ndgpu_cuda_runtime::DeviceMatrix;

use crate::error::{VendorError, BACKEND};
use crate::factor::Part;
use crate::{ptr_mut, BlasElement, CublasBackend};

/// Variants, default first.
pub const VARIANTS: &[Variant] = &[
    Variant::new(
        "syevd_gesvdj",
        "eigh: cusolverDnXsyevd (64-bit API, divide and conquer) with uplo = LOWER on a \
         transposed copy (GEAM), as torch.linalg.eigh calls it, in f64 for f32 input \
         too, w sorted where syevd leaves it out of order (see the note); svd: SGESVDJ/DGESVDJ \
         (one-sided Jacobi, econ = 1, tolerance ε, 100 sweeps) on a plain copy, as \
         torch.linalg.svd's default CUDA driver, falling back to cusolverDnXgesvd where \
         Jacobi does not converge (as PyTorch does); U by one GEAM, Vt written in place",
    ),
    Variant::new(
        "syevd_gesvd",
        "eigh as syevd_gesvdj; svd: cusolverDnXgesvd (64-bit API, QR iteration, jobu = \
         jobvt = 'S'): for m ≤ n on a plain copy, where U and Vt come out row-major (no \
         transpose); for m > n on a transposed copy (GEAM), U and Vt transposed back",
    ),
    Variant::new(
        "syevd_upper_gesvdj",
        "eigh: cusolverDnXsyevd with uplo = UPPER on a plain copy (the buffer's \
         column-major upper triangle is A's row-major lower one: no input transpose; \
         for f32 the f64 copy is that copy), w sorted as syevd_gesvdj's; svd as \
         syevd_gesvdj",
    ),
];

/// What every variant shares.
pub const NOTE: &str = "two synchronisations per call: the row sums of what A's check reads \
    (its lower triangle for eigh, by TRMV; all of it for svd, by GEMV) are read back before \
    cuSOLVER runs (a non-finite sum names the row, read back to name the entry), and \
    cuSOLVER's info after it (for eigh with w, in the same copy). Values only: jobz = \
    NOVECTOR / jobu = jobvt = 'N', and nothing transposed back. eigh: f32 input is factored \
    in f64 (widened on the device, the results rounded to f32 once), since cuSOLVER's f32 \
    syevd lost orthogonality on a graded matrix whose entries reach the subnormal range \
    (H200, CUDA 13); and where syevd's w is not ascending (it returned values out of order \
    within clusters of nearly equal eigenvalues, in f32 and f64) it is sorted on the host, \
    stably, and V's columns gathered into that order on the device. gesvdj has 32-bit \
    dimensions (m, n below 2³¹).";

/// An op's name, in errors.
type Op = &'static str;

/// A new device matrix.
type Fresh<T> = Result<DeviceMatrix<T>>;

/// How `eigh` hands A to `syevd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eigh {
    /// uplo = LOWER on a transposed copy (GEAM).
    Lower,
    /// uplo = UPPER on a plain copy.
    Upper,
}

/// The SVD's driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Svd {
    /// `gesvdj`, then `Xgesvd` where it does not converge.
    Jacobi,
    /// `Xgesvd`.
    Qr,
}

fn parse(variant: &str) -> Result<(Eigh, Svd)> {
    let table = [
        ("syevd_gesvdj", (Eigh::Lower, Svd::Jacobi)),
        ("syevd_gesvd", (Eigh::Lower, Svd::Qr)),
        ("syevd_upper_gesvdj", (Eigh::Upper, Svd::Jacobi)),
    ];
    crate::error::pick((Family::Spectra, variant), VARIANTS, &table)
}

/// The status buffer: `len` row sums of A, then one slot that the SVD's cuSOLVER
/// routine writes its `info` into (an `int` fits in the first four bytes of an f32 or
/// f64; `eigh` puts its `info` after w instead).
struct Status<T> {
    buf: CudaSlice<T>,
    len: usize,
}

impl<T: BlasElement> Status<T> {
    /// The device address cuSOLVER writes `info` to.
    fn info_ptr(&mut self, b: &CublasBackend) -> *mut i32 {
        ptr_mut(&b.gpu, &mut self.buf).wrapping_add(self.len).cast()
    }
}

/// `info` as cuSOLVER wrote it into the status buffer's last slot.
fn info_of<T: BlasElement>(slot: &T) -> i32 {
    // SAFETY: T is f32 or f64, at least four bytes and aligned for an i32, and any
    // four bytes are a valid i32; cuSOLVER wrote its int at the slot's address.
    unsafe { std::ptr::read((slot as *const T).cast::<i32>()) }
}

/// cuSOLVER's `info` as the contract's errors: negative, an argument it rejected
/// (a bug of this crate); positive, no convergence.
fn refuse_info(
    op: &'static str,
    routine: &'static str,
    method: &'static str,
    info: i32,
) -> Result<()> {
    match info {
        0 => Ok(()),
        i if i > 0 => Err(Error::NoConvergence { op, method }),
        i => Err(Error::backend(
            BACKEND,
            format!("{op} ({routine})"),
            VendorError::IllegalArgument { routine, arg: -i },
        )),
    }
}

impl CublasBackend {
    /// The selected variant's ways.
    fn spectra_how(&self) -> Result<(Eigh, Svd)> {
        parse(self.variant(Family::Spectra))
    }

    /// The status buffer of `a` with its row sums queued: of the lower triangle
    /// ([`Part::Lower`], a square `a`) or of every entry.
    fn status<T: BlasElement>(
        &self,
        op: &'static str,
        a: &DeviceMatrix<T>,
        part: Part,
    ) -> Result<Status<T>> {
        let len = a.rows;
        match part {
            Part::Full => {
                let mut buf = self.gpu.alloc::<T>(op, len + 1)?;
                let py = ptr_mut(&self.gpu, &mut buf);
                // SAFETY: buf holds len + 1 elements: the first len are the sums.
                unsafe { self.row_sums("svd: A's row sums (gemv)", a, py)? };
                Ok(Status { buf, len })
            }
            Part::Lower => {
                let mut buf = self.ones::<T>(len + 1)?;
                self.lower_row_sums(a, &mut buf)?;
                Ok(Status { buf, len })
            }
        }
    }

    /// `x ← L·x` for L the row-major lower triangle of the square `a`: with x all ones,
    /// L's row sums. The buffer read column-major is Aᵀ, whose upper triangle is Lᵀ, so
    /// this is TRMV with uplo = UPPER, op = T, which reads that triangle alone.
    fn lower_row_sums<T: BlasElement>(
        &self,
        a: &DeviceMatrix<T>,
        x: &mut CudaSlice<T>,
    ) -> Result<()> {
        use cudarc::cublas::sys::{cublasDiagType_t, cublasFillMode_t, cublasOperation_t};
        let n = crate::i64_of(a.rows);
        let gpu = &self.gpu;
        let (pa, px) = (crate::ptr(gpu, &a.data), ptr_mut(gpu, x));
        let h = self.blas()?;
        // SAFETY: a holds n×n elements (lda n), x at least n.
        let status = unsafe {
            T::trmv(
                h.raw,
                cublasFillMode_t::CUBLAS_FILL_MODE_UPPER,
                cublasOperation_t::CUBLAS_OP_T,
                cublasDiagType_t::CUBLAS_DIAG_NON_UNIT,
                n,
                pa,
                n.max(1),
                px,
                1,
            )
        };
        crate::error::cublas(status, "eigh: the lower triangle's row sums (trmv)")
    }

    /// Reads the status buffer back (one synchronisation) and refuses NaN or ±Inf
    /// in `a` (what `part` covers); returns cuSOLVER's `info`.
    fn read_status<T: BlasElement>(
        &self,
        op: &'static str,
        a: &DeviceMatrix<T>,
        status: &Status<T>,
        part: Part,
    ) -> Result<i32> {
        let v = self.gpu.download_slice(&status.buf, status.len + 1)?;
        let (sums, info) = v.split_at(status.len);
        if let Some(r) = sums.iter().position(|s| !s.as_f64().is_finite()) {
            self.refuse_nonfinite_row(op, a, r, part)?;
        }
        Ok(info_of(&info[0]))
    }

    /// A new matrix holding `a`, or its transpose (GEAM) when `transpose`.
    fn fresh<T: BlasElement>(&self, op: Op, a: &DeviceMatrix<T>, transpose: bool) -> Fresh<T> {
        let (r, c) = if transpose {
            (a.cols, a.rows)
        } else {
            (a.rows, a.cols)
        };
        let mut t = self.gpu.alloc_matrix::<T>(op, r, c)?;
        match transpose {
            true => self.geam_transpose(a, &mut t)?,
            false => self.gpu.copy_matrix(a, &mut t)?,
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_parses_and_the_default_is_torchs() {
        for v in VARIANTS {
            parse(v.name).unwrap();
        }
        assert_eq!(parse(VARIANTS[0].name).unwrap(), (Eigh::Lower, Svd::Jacobi));
        assert!(matches!(parse("gesvda"), Err(Error::UnknownVariant { .. })));
    }

    #[test]
    fn info_is_read_from_the_first_four_bytes_of_its_slot() {
        for info in [0, 1, 7, -3, i32::MAX] {
            let mut f = 1.0f32;
            let mut d = 1.0f64;
            // As cuSOLVER writes it: an int at the slot's address.
            unsafe {
                std::ptr::write((&mut f as *mut f32).cast::<i32>(), info);
                std::ptr::write((&mut d as *mut f64).cast::<i32>(), info);
            }
            assert_eq!((info_of(&f), info_of(&d)), (info, info));
        }
    }

    #[test]
    fn info_maps_to_the_contract() {
        assert!(refuse_info("eigh", "Xsyevd", "m", 0).is_ok());
        assert!(matches!(
            refuse_info("eigh", "Xsyevd", "m", 2),
            Err(Error::NoConvergence {
                op: "eigh",
                method: "m"
            })
        ));
        assert!(matches!(
            refuse_info("svd", "Xgesvd", "m", -4),
            Err(Error::Backend { .. })
        ));
    }
}
