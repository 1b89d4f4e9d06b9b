//! What LU ([`crate::lu`]) and QR ([`crate::qr`]) share: the buffer cuSOLVER factors
//! (A transposed, with A's row sums in one more row), the 64-bit API's bufferSize query
//! and call with their workspaces, and the one scan that refuses NaN or ±Inf. The
//! spectra ([`crate::spectra`]) share the row sums and the naming of a non-finite entry.

use std::ffi::c_void;

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cusolver::sys::{
    cusolverDnXgeqrf, cusolverDnXgeqrf_bufferSize, cusolverDnXgetrf, cusolverDnXgetrf_bufferSize,
};
use cudarc::driver::CudaSlice;
use ndarray::ArrayView2;
use ndgpu_core::check;
use ndgpu_core::{Error, Matrix, Result};
use ndgpu_cuda_runtime::triangle::{diag_scan, DiagScan};
use ndgpu_cuda_runtime::DeviceMatrix;

use crate::error;
use crate::library::Params;
use crate::{i64_of, ptr, ptr_mut, BlasElement, CublasBackend};

/// The workspaces of a 64-bit API call, sized by its `bufferSize` query: the device one,
/// freed in stream order, and the host one, which must live until the stream has passed
/// the call (the caller keeps it until its one read).
pub(crate) struct Workspace {
    /// Device workspace.
    pub(crate) dev: CudaSlice<u8>,
    /// Its bytes.
    pub(crate) dev_bytes: usize,
    /// Host workspace (at least one byte, for a valid pointer).
    pub(crate) host: Vec<u8>,
    /// Its bytes.
    pub(crate) host_bytes: usize,
}

impl CublasBackend {
    /// The workspace of a legacy (32-bit) cuSOLVER call: `lwork` elements of T, at
    /// least one.
    pub(crate) fn lwork<T: BlasElement>(
        &self,
        op: &'static str,
        lwork: i32,
    ) -> Result<CudaSlice<T>> {
        self.gpu
            .alloc::<T>(op, usize::try_from(lwork).unwrap_or(0).max(1))
    }
}

impl Workspace {
    /// The device buffer's address and the host buffer's, as a 64-bit cuSOLVER call
    /// takes them (the byte counts are the fields).
    pub(crate) fn raw(&mut self, gpu: &ndgpu_cuda_runtime::Gpu) -> (*mut c_void, *mut c_void) {
        (
            crate::ptr_mut(gpu, &mut self.dev).cast(),
            self.host.as_mut_ptr().cast(),
        )
    }
}

/// What of A its check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// Every entry.
    Full,
    /// The lower triangle, diagonal included (the strict upper triangle may hold
    /// anything).
    Lower,
}

/// A 64-bit cuSOLVER factorization, with the output beside the factored matrix.
#[derive(Clone, Copy)]
pub(crate) enum XFactor {
    /// `cusolverDnXgetrf`, writing min(m, n) int64 pivots.
    Getrf(*mut i64),
    /// `cusolverDnXgeqrf`, writing min(m, n) scalars `tau` of the matrix's type.
    Geqrf(*mut c_void),
}

impl XFactor {
    /// The op, the size query and the call, for errors.
    fn names(self) -> (&'static str, &'static str, &'static str) {
        match self {
            XFactor::Getrf(_) => (
                "lu",
                "lu: workspace size (Xgetrf_bufferSize)",
                "lu (Xgetrf)",
            ),
            XFactor::Geqrf(_) => (
                "qr",
                "qr: workspace size (Xgeqrf_bufferSize)",
                "qr (Xgeqrf)",
            ),
        }
    }
}

/// The op of the row sums, in errors.
const OP_SUMS: &str = "lu, qr: A's row sums (gemv)";

impl CublasBackend {
    /// A's transpose, the buffer cuSOLVER factors in place (n×m row-major: A read
    /// column-major, lda = m), with one more row of m entries: A's row sums (GEMV with
    /// ones). The one scan after the factorization covers that row too, so NaN or ±Inf
    /// in A shows even where the factorization loses it (cuSOLVER's `getrf` was seen to
    /// give a finite factor of a matrix holding a NaN). The matrix returned is n×m; its
    /// buffer holds (n + 1)·m elements.
    pub(crate) fn factor_buffer<T: BlasElement>(
        &self,
        op: &'static str,
        a: &DeviceMatrix<T>,
    ) -> Result<DeviceMatrix<T>> {
        let (m, n) = a.dim();
        let gpu = &self.gpu;
        let mut t = gpu.alloc_matrix::<T>(op, n + 1, m)?;
        t.rows = n;
        self.geam_transpose(a, &mut t)?;
        let py = ptr_mut(gpu, &mut t.data).wrapping_add(n * m);
        // SAFETY: t's buffer holds (n + 1)·m elements: py is its last m.
        unsafe { self.row_sums(OP_SUMS, a, py)? };
        Ok(t)
    }

    /// Refuses the NaN or ±Inf that the scan of a buffer from
    /// [`CublasBackend::factor_buffer`] found: in the factor (rows below n: buffer entry
    /// (r, c) is the factor's (c, r)), or else in A's row sums (row n), where row c of
    /// `a` is read back to name the entry. A sum of finite values that overflowed names
    /// none, and may hide a later row's NaN from the scan: then all of `a` is read back
    /// and checked (a path of huge entries only).
    pub(crate) fn refuse_nonfinite<T: BlasElement>(
        &self,
        op: &'static str,
        a: &DeviceMatrix<T>,
        scan: &DiagScan,
    ) -> Result<()> {
        let n = a.cols;
        match scan.nonfinite {
            None => Ok(()),
            Some((r, c)) if r < n => Err(Error::NonFinite {
                op,
                what: "A (found in its factor)",
                value: f64::NAN,
                index: (c, r),
            }),
            Some((_, c)) => self.refuse_nonfinite_row(op, a, c, Part::Full),
        }
    }

    /// A's row sums `y ← A·1` (GEMV with ones), queued: NaN or ±Inf in row i of A
    /// makes `y[i]` non-finite, so a scan of y finds it without reading A.
    ///
    /// # Safety
    /// `y` points to `a.rows` writable elements on the device.
    pub(crate) unsafe fn row_sums<T: BlasElement>(
        &self,
        doing: &'static str,
        a: &DeviceMatrix<T>,
        y: *mut T,
    ) -> Result<()> {
        let (m, n) = a.dim();
        let gpu = &self.gpu;
        let ones = self.ones::<T>(n)?;
        let (pa, po) = (ptr(gpu, &a.data), ptr(gpu, &ones));
        let h = self.blas()?;
        // Column-major, a's buffer is X = Aᵀ (n×m, lda n): A's row sums are Xᵀ·1.
        // SAFETY: a holds n·m elements, ones n, y m (the caller's promise).
        let status = unsafe {
            T::gemv(
                h.raw,
                cublasOperation_t::CUBLAS_OP_T,
                i64_of(n),
                i64_of(m),
                &T::one(),
                pa,
                i64_of(n.max(1)),
                po,
                1,
                &T::zero(),
                y,
                1,
            )
        };
        error::cublas(status, doing)
    }

    /// The entry of row `r` of `a` (of its lower triangle for [`Part::Lower`]) that
    /// is NaN or ±Inf, as [`Error::NonFinite`], once a row sum said row `r` holds one. A
    /// sum of finite values that overflowed names none, and may hide a later row's NaN
    /// from the scan: then all of `a` is read back and checked (a path of huge entries
    /// only), and `Ok` means A is finite.
    pub(crate) fn refuse_nonfinite_row<T: BlasElement>(
        &self,
        op: &'static str,
        a: &DeviceMatrix<T>,
        r: usize,
        part: Part,
    ) -> Result<()> {
        let n = a.cols;
        let width = match part {
            Part::Full => n,
            Part::Lower => (r + 1).min(n),
        };
        let row = self.gpu.download_range(&a.data, r * n..r * n + width)?;
        if let Some(j) = row.iter().position(|v| !v.as_f64().is_finite()) {
            return Err(Error::NonFinite {
                op,
                what: "A",
                value: row[j].as_f64(),
                index: (r, j),
            });
        }
        let all = self.gpu.download_range(&a.data, 0..a.len())?;
        let all = ArrayView2::from_shape(a.dim(), &all).expect("a holds rows × cols elements");
        match part {
            Part::Full => check::finite(op, "A", &all),
            Part::Lower => check::finite_lower(op, "A", &all),
        }
    }

    /// Device and host workspaces of the sizes a `bufferSize` query gave.
    pub(crate) fn workspace(
        &self,
        op: &'static str,
        dev_bytes: usize,
        host_bytes: usize,
    ) -> Result<Workspace> {
        Ok(Workspace {
            dev: self.gpu.alloc::<u8>(op, dev_bytes)?,
            dev_bytes,
            host: vec![0u8; host_bytes.max(1)],
            host_bytes,
        })
    }

    /// The factorization `f` of `t` read column-major (m×n with m = t.cols, lda = m),
    /// queued after its `bufferSize` query; returns the workspace, to be kept until the
    /// next read.
    pub(crate) fn xfactor<T: BlasElement>(
        &self,
        t: &mut DeviceMatrix<T>,
        info: &mut CudaSlice<i32>,
        f: XFactor,
    ) -> Result<Workspace> {
        let gpu = &self.gpu;
        let (op, sizing, doing) = f.names();
        let (m, n) = (i64_of(t.cols), i64_of(t.rows));
        let (lda, dt) = (m.max(1), T::DATA_TYPE);
        let (pa, pi) = (ptr_mut(gpu, &mut t.data).cast(), ptr_mut(gpu, info));
        // The handle first: it makes the device's context current.
        let h = self.solver()?;
        let params = Params::new()?;
        let (hs, p) = (h.raw, params.0);
        let (mut db, mut hb) = (0usize, 0usize);
        // SAFETY: t holds m×n elements of T::DATA_TYPE with lda m, the pivots or tau
        // min(m, n); valid out-pointers.
        let status = unsafe {
            match f {
                XFactor::Getrf(_) => {
                    cusolverDnXgetrf_bufferSize(hs, p, m, n, dt, pa, lda, dt, &mut db, &mut hb)
                }
                XFactor::Geqrf(tau) => cusolverDnXgeqrf_bufferSize(
                    hs, p, m, n, dt, pa, lda, dt, tau, dt, &mut db, &mut hb,
                ),
            }
        };
        error::cusolver(status, sizing)?;
        let mut w = self.workspace(op, db, hb)?;
        let pw = ptr_mut(gpu, &mut w.dev).cast();
        let (db, hw, hb) = (w.dev_bytes, w.host.as_mut_ptr().cast(), w.host_bytes);
        // SAFETY: as above; info holds one int; the workspaces hold the bytes the query
        // asked for.
        let status = unsafe {
            match f {
                XFactor::Getrf(ipiv) => {
                    cusolverDnXgetrf(hs, p, m, n, dt, pa, lda, ipiv, dt, pw, db, hw, hb, pi)
                }
                XFactor::Geqrf(tau) => {
                    cusolverDnXgeqrf(hs, p, m, n, dt, pa, lda, dt, tau, dt, pw, db, hw, hb, pi)
                }
            }
        };
        error::cusolver(status, doing)?;
        Ok(w)
    }

    /// Factors the non-empty `a`: A on the device (kept until the scan: a NaN it holds
    /// is named from it), its [`CublasBackend::factor_buffer`], `factor` on that
    /// (queued, with cuSOLVER's `info`; it returns its workspace and what else it
    /// made), then one `diag_scan` of the buffer, the one synchronisation, and NaN or
    /// ±Inf refused. Returns the buffer, the scan and what `factor` made.
    pub(crate) fn factor_scanned<T: BlasElement, R>(
        &self,
        op: &'static str,
        a: &Matrix<T>,
        factor: impl FnOnce(&mut DeviceMatrix<T>, &mut CudaSlice<i32>) -> Result<(Workspace, R)>,
    ) -> Result<(DeviceMatrix<T>, DiagScan, R)> {
        let gpu = &self.gpu;
        let (m, n) = a.dim();
        let da = gpu.dm(self.here(), op, "A", a)?;
        let mut t = self.factor_buffer(op, da)?;
        let mut info = gpu.alloc::<i32>(op, 1)?;
        let (work, made) = factor(&mut t, &mut info)?;
        let scan = diag_scan(gpu, op, &t.data, (n + 1, m))?;
        drop(work); // the stream has passed the factorization: the host workspace may go
        self.refuse_nonfinite(op, da, &scan)?;
        Ok((t, scan, made))
    }
}
