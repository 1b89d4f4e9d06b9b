//! `eigh` through cuSOLVER's 64-bit `syevd` (tridiagonalisation, then divide and
//! conquer), as `torch.linalg.eigh` calls it.
//!
//! ```text
//! Lower (default):  W ← Aᵀ (GEAM; W read column-major is A)   syevd uplo = LOWER
//! Upper:            W ← A  (copy; its column-major upper       syevd uplo = UPPER
//!                           triangle is A's row-major lower one)
//! then:             W read column-major holds V, so row-major it is Vᵀ:  V ← Wᵀ (GEAM)
//! ```
//!
//! Both read A's lower triangle alone, as the contract. `w` comes back ascending, as
//! LAPACK's. With values alone (jobz = NOVECTOR) the final GEAM is skipped.

use cudarc::cusolver::sys::{
    cublasFillMode_t, cusolverDnXsyevd, cusolverDnXsyevd_bufferSize, cusolverEigMode_t,
};
use ndgpu_core::{Matrix, Result};
use ndgpu_cuda_runtime::DeviceMatrix;

use super::{refuse_info, Eigh, Status};
use crate::error;
use crate::factor::{Part, Workspace};
use crate::library::Params;
use crate::{i64_of, ptr_mut, BlasElement, CublasBackend};

/// The op, in errors.
const OP: &str = "eigh";
/// The method, in [`ndgpu_core::Error::NoConvergence`].
const METHOD: &str = "cuSOLVER's Xsyevd (divide and conquer; its info > 0)";

/// cuSOLVER's eigenvector mode.
pub(super) fn eig_mode(vectors: bool) -> cusolverEigMode_t {
    match vectors {
        true => cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR,
        false => cusolverEigMode_t::CUSOLVER_EIG_MODE_NOVECTOR,
    }
}

impl CublasBackend {
    /// [`FactorizeKernels::eigh_unchecked`](ndgpu_core::FactorizeKernels::eigh_unchecked)
    /// (see the module's doc).
    pub(crate) fn eigh_kernel<T: BlasElement>(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, Option<Matrix<T>>)> {
        let (how, _) = self.spectra_how()?;
        let gpu = &self.gpu;
        let da = gpu.dm(self.here(), OP, "A", a)?;
        let n = da.rows;
        let mut status = self.status(OP, da, Part::Lower)?;
        let mut work = match how {
            Eigh::Lower => self.transposed(OP, da)?,
            Eigh::Upper => self.copied(OP, da)?,
        };
        let mut w = gpu.alloc_matrix::<T>(OP, n, 1)?;
        let ws = self.syevd(how, vectors, &mut work, &mut w, &mut status)?;
        let v = match vectors {
            true => Some(self.transposed(OP, &work)?),
            false => None,
        };
        let info = self.read_status(OP, da, &status, Part::Lower)?;
        drop(ws); // the stream has passed syevd: the host workspace may go
        refuse_info(OP, "Xsyevd", METHOD, info)?;
        Ok((gpu.matrix(w), v.map(|v| gpu.matrix(v))))
    }

    /// `cusolverDnXsyevd` on the n×n `work` read column-major, `info` into the status
    /// buffer, queued after its `bufferSize` query; returns the workspace, to be kept
    /// until the status is read.
    fn syevd<T: BlasElement>(
        &self,
        how: Eigh,
        vectors: bool,
        work: &mut DeviceMatrix<T>,
        w: &mut DeviceMatrix<T>,
        status: &mut Status<T>,
    ) -> Result<Workspace> {
        let gpu = &self.gpu;
        let n = i64_of(work.rows);
        let (dt, jobz) = (T::DATA_TYPE, eig_mode(vectors));
        let uplo = match how {
            Eigh::Lower => cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
            Eigh::Upper => cublasFillMode_t::CUBLAS_FILL_MODE_UPPER,
        };
        let (pa, pw) = (
            ptr_mut(gpu, &mut work.data).cast(),
            ptr_mut(gpu, &mut w.data).cast(),
        );
        let pi = status.info_ptr(self);
        // The handle first: it makes the device's context current.
        let h = self.solver()?;
        let params = Params::new()?;
        let (hs, p, lda) = (h.raw, params.0, n.max(1));
        let (mut db, mut hb) = (0usize, 0usize);
        // SAFETY: work holds n×n elements of T::DATA_TYPE (lda n), w n; valid
        // out-pointers.
        let status = unsafe {
            cusolverDnXsyevd_bufferSize(
                hs, p, jobz, uplo, n, dt, pa, lda, dt, pw, dt, &mut db, &mut hb,
            )
        };
        error::cusolver(status, "eigh: workspace size (Xsyevd_bufferSize)")?;
        let mut ws = self.workspace(OP, db, hb)?;
        let pd = ptr_mut(gpu, &mut ws.dev).cast();
        let (hw, hb) = (ws.host.as_mut_ptr().cast(), ws.host_bytes);
        // SAFETY: as above; the workspaces hold the bytes the query asked for; pi points
        // to the status buffer's info slot.
        let status = unsafe {
            cusolverDnXsyevd(
                hs, p, jobz, uplo, n, dt, pa, lda, dt, pw, dt, pd, db, hw, hb, pi,
            )
        };
        error::cusolver(status, "eigh (Xsyevd)")?;
        Ok(ws)
    }
}
