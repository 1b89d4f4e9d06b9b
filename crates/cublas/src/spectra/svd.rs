//! The reduced SVD through cuSOLVER: `gesvdj` (one-sided Jacobi), PyTorch's default
//! CUDA driver, falling back to the 64-bit `gesvd` (bidiagonalisation, then QR
//! iteration) where Jacobi does not converge, as PyTorch does; or `gesvd` alone.
//!
//! The row-major m×n buffer read column-major is Aᵀ (n×m). With k = min(m, n):
//!
//! ```text
//! gesvdj on a copy, Aᵀ = U'·S·V'ᵀ (any shape):
//!     U' column-major n×k (ldu n)  is  Vt row-major k×n      written in place
//!     V' column-major m×k (ldv m)  is  Uᵀ row-major k×m      U ← its transpose (GEAM)
//! gesvd needs rows ≥ cols of what it factors:
//!   m ≤ n: on a copy, Aᵀ = U'·S·V'ᵀ (n×m, tall)
//!     U'  column-major n×k (ldu n)   is  Vt row-major k×n    written in place
//!     V'ᵀ column-major k×m (ldvt k)  is  U  row-major m×k    written in place
//!   m > n: on Aᵀ's transpose (GEAM; read column-major it is A, m×n), A = U·S·Vᵀ
//!     U   column-major m×k (ldu m)   is  Uᵀ row-major k×m    U  ← its transpose (GEAM)
//!     Vᵀ  column-major k×n (ldvt k)  is  V  row-major n×k    Vt ← its transpose (GEAM)
//! ```
//!
//! Both give the singular values descending. With values alone (jobz = NOVECTOR,
//! jobu = jobvt = 'N') no vector is formed and nothing is transposed back.

use std::ffi::c_void;

use cudarc::cusolver::sys::{cusolverDnXgesvd, cusolverDnXgesvd_bufferSize};
use cudarc::driver::CudaSlice;
use ndgpu_core::{Matrix, Result};
use ndgpu_cuda_runtime::{dim_i32, DeviceMatrix};

use super::eigh::eig_mode;
use super::{refuse_info, Status, Svd};
use crate::error;
use crate::factor::{Part, Workspace};
use crate::library::{GesvdjParams, Params};
use crate::{i64_of, ptr_mut, BlasElement, CublasBackend};

/// The op, in errors.
const OP: &str = "svd";
/// The method of the QR driver, in [`ndgpu_core::Error::NoConvergence`].
const METHOD: &str = "cuSOLVER's Xgesvd (QR iteration; its info > 0), after gesvdj's \
    Jacobi sweeps where they ran";

/// `(U, Vt)` when asked for.
type Vectors<M> = Option<(M, M)>;

/// `(U, Vt)` of an SVD, resident, when asked for.
pub(crate) type SingularVectors<T> = Vectors<Matrix<T>>;

/// What a driver made: s (k×1), and U (m×k) and Vt (k×n) when asked for.
struct Parts<T> {
    s: DeviceMatrix<T>,
    uv: Vectors<DeviceMatrix<T>>,
}

/// What must live until gesvdj's status is read: its workspace and parameters.
type JacobiKeep<T> = (CudaSlice<T>, GesvdjParams);

/// The device address of an optional output, null when it is not formed.
fn out_ptr<T>(b: &CublasBackend, m: &mut Option<DeviceMatrix<T>>) -> *mut T {
    m.as_mut()
        .map_or(std::ptr::null_mut(), |m| ptr_mut(&b.gpu, &mut m.data))
}

impl CublasBackend {
    /// [`FactorizeKernels::svd_unchecked`](ndgpu_core::FactorizeKernels::svd_unchecked)
    /// (see the module's doc).
    pub(crate) fn svd_kernel<T: BlasElement>(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, SingularVectors<T>)> {
        let (_, how) = self.spectra_how()?;
        let da = self.gpu.dm(self.here(), OP, "A", a)?;
        let mut status = self.status(OP, da, Part::Full)?;
        // A is checked before cuSOLVER sees it: its routines are not defined on NaN.
        self.read_status(OP, da, &status, Part::Full)?;
        if how == Svd::Jacobi {
            let (parts, keep) = self.gesvdj(da, vectors, &mut status)?;
            let info = self.read_status(OP, da, &status, Part::Full)?;
            drop(keep); // the stream has passed gesvdj
            if info <= 0 {
                refuse_info(OP, "gesvdj", METHOD, info)?;
                return Ok(self.resident(parts));
            }
        }
        let (parts, keep) = self.gesvd(da, vectors, &mut status)?;
        let info = self.read_status(OP, da, &status, Part::Full)?;
        drop(keep); // the stream has passed gesvd: the host workspace may go
        refuse_info(OP, "Xgesvd", METHOD, info)?;
        Ok(self.resident(parts))
    }

    fn resident<T: BlasElement>(&self, p: Parts<T>) -> (Matrix<T>, SingularVectors<T>) {
        let g = &self.gpu;
        (
            g.matrix(p.s),
            p.uv.map(|(u, vt)| (g.matrix(u), g.matrix(vt))),
        )
    }

    /// `gesvdj` (econ) on a copy of `a` read column-major, `info` into the status
    /// buffer, all queued; returns what it made and what must live until the status is
    /// read (its workspace and parameters).
    fn gesvdj<T: BlasElement>(
        &self,
        a: &DeviceMatrix<T>,
        vectors: bool,
        status: &mut Status<T>,
    ) -> Result<(Parts<T>, JacobiKeep<T>)> {
        let gpu = &self.gpu;
        let (m, n) = a.dim();
        let k = m.min(n);
        let mut work = self.fresh(OP, a, false)?;
        let mut s = gpu.alloc_matrix::<T>(OP, k, 1)?;
        // U' column-major n×k is Vt; V' column-major m×k is Uᵀ row-major. Both are
        // given to gesvdj even for the values alone, which it does not write.
        let (mut left, mut right) = (
            Some(gpu.alloc_matrix::<T>(OP, k, n)?),
            Some(gpu.alloc_matrix::<T>(OP, k, m)?),
        );
        let (rows, cols) = (dim_i32(OP, n)?, dim_i32(OP, m)?);
        let (lda, ldv) = (rows.max(1), cols.max(1));
        let pa = ptr_mut(gpu, &mut work.data);
        let ps = ptr_mut(gpu, &mut s.data);
        let (pu, pv) = (out_ptr(self, &mut left), out_ptr(self, &mut right));
        let pi = status.info_ptr(self);
        let jobz = eig_mode(vectors);
        let h = self.solver()?;
        let params = GesvdjParams::new()?;
        let mut lwork = 0;
        // SAFETY: work holds n×m elements column-major (lda n), s k, U' n×k (ldu n) and
        // V' m×k (ldv m); a valid out-pointer.
        error::cusolver(
            unsafe {
                T::gesvdj_buffer_size(
                    h.raw, jobz, 1, rows, cols, pa, lda, ps, pu, lda, pv, ldv, &mut lwork, params.0,
                )
            },
            "svd: workspace size (gesvdj_bufferSize)",
        )?;
        let mut w = self.lwork::<T>(OP, lwork)?;
        let pw = ptr_mut(gpu, &mut w);
        // SAFETY: as above; w holds at least lwork elements; pi points to the status
        // buffer's info slot.
        error::cusolver(
            unsafe {
                T::gesvdj(
                    h.raw,
                    jobz,
                    1,
                    rows,
                    cols,
                    pa,
                    lda,
                    ps,
                    pu,
                    lda,
                    pv,
                    ldv,
                    pw,
                    lwork.max(1),
                    pi,
                    params.0,
                )
            },
            "svd (gesvdj)",
        )?;
        drop(h);
        let uv = match (left, right, vectors) {
            (Some(vt), Some(ut), true) => Some((self.fresh(OP, &ut, true)?, vt)),
            _ => None,
        };
        Ok((Parts { s, uv }, (w, params)))
    }

    /// `cusolverDnXgesvd` (jobu = jobvt = 'S', or 'N') on a copy of `a` read
    /// column-major when m ≤ n, on its transpose when m > n (gesvd needs rows ≥ cols),
    /// `info` into the status buffer, all queued; returns what it made and its
    /// workspace, to be kept until the status is read.
    fn gesvd<T: BlasElement>(
        &self,
        a: &DeviceMatrix<T>,
        vectors: bool,
        status: &mut Status<T>,
    ) -> Result<(Parts<T>, Workspace)> {
        let gpu = &self.gpu;
        let (m, n) = a.dim();
        let tall = m > n;
        // What gesvd factors, column-major rows×cols, rows ≥ cols = k.
        let (mut work, (rows, cols)) = match tall {
            true => (self.fresh(OP, a, true)?, (m, n)),
            false => (self.fresh(OP, a, false)?, (n, m)),
        };
        let k = cols;
        let mut s = gpu.alloc_matrix::<T>(OP, k, 1)?;
        // The left vectors, column-major rows×k; the right ones' transpose,
        // column-major k×cols (row-major cols×k).
        let (mut left, mut right) = match vectors {
            true => (
                Some(gpu.alloc_matrix::<T>(OP, k, rows)?),
                Some(gpu.alloc_matrix::<T>(OP, cols, k)?),
            ),
            false => (None, None),
        };
        let job = if vectors { b'S' } else { b'N' } as i8;
        let (r, c, kk) = (i64_of(rows), i64_of(cols), i64_of(k).max(1));
        let dt = T::DATA_TYPE;
        let pa: *mut c_void = ptr_mut(gpu, &mut work.data).cast();
        let ps: *mut c_void = ptr_mut(gpu, &mut s.data).cast();
        let pu: *mut c_void = out_ptr(self, &mut left).cast();
        let pvt: *mut c_void = out_ptr(self, &mut right).cast();
        let pi = status.info_ptr(self);
        let h = self.solver()?;
        let params = Params::new()?;
        let (hs, p) = (h.raw, params.0);
        let (mut db, mut hb) = (0usize, 0usize);
        // SAFETY: work holds rows×cols elements column-major (lda rows), s k, U rows×k
        // (ldu rows) and Vᵀ k×cols (ldvt k) when formed, else null and not referenced
        // (job 'N'); valid out-pointers.
        let st = unsafe {
            cusolverDnXgesvd_bufferSize(
                hs, p, job, job, r, c, dt, pa, r, dt, ps, dt, pu, r, dt, pvt, kk, dt, &mut db,
                &mut hb,
            )
        };
        error::cusolver(st, "svd: workspace size (Xgesvd_bufferSize)")?;
        let mut ws = self.workspace(OP, db, hb)?;
        let ((pd, hw), hb) = (ws.raw(gpu), ws.host_bytes);
        // SAFETY: as above; the workspaces hold the bytes the query asked for; pi points
        // to the status buffer's info slot.
        let st = unsafe {
            cusolverDnXgesvd(
                hs, p, job, job, r, c, dt, pa, r, dt, ps, dt, pu, r, dt, pvt, kk, dt, pd, db, hw,
                hb, pi,
            )
        };
        error::cusolver(st, "svd (Xgesvd)")?;
        drop(h);
        let uv = match (left, right, tall) {
            (Some(l), Some(r), false) => Some((r, l)),
            (Some(l), Some(r), true) => {
                Some((self.fresh(OP, &l, true)?, self.fresh(OP, &r, true)?))
            }
            _ => None,
        };
        Ok((Parts { s, uv }, ws))
    }
}
