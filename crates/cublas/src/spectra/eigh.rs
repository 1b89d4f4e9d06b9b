//! `eigh` through cuSOLVER's 64-bit `syevd` (tridiagonalisation, then divide and
//! conquer), as `torch.linalg.eigh` calls it.
//!
//! ```text
//! f32 only:         A ← A in f64 (triangle_widen; exact)
//! Lower (default):  W ← Aᵀ (GEAM; W read column-major is A)   syevd uplo = LOWER
//! Upper:            W ← A  (copy; its column-major upper       syevd uplo = UPPER
//!                           triangle is A's row-major lower one)
//! read back:        info and w, in one copy (the call's second wait)
//! out of order:     w sorted on the host (stable); W's rows gathered by that order
//!                   (triangle_gather_rows) and the sorted w uploaded
//! then:             W read column-major holds V, so row-major it is Vᵀ:  V ← Wᵀ (GEAM)
//! f32 only:         w and V rounded to f32 (triangle_narrow)
//! ```
//!
//! Both read A's lower triangle alone, as the contract. Two behaviours of `syevd`
//! (docs/kernels.md, "The `cublas` spectra", has the measurements) set the extra
//! steps. Its w is not always ascending within a cluster of (nearly) equal eigenvalues,
//! in f32 and f64, while the contract asks for w ascending with V's column j belonging
//! to w[j]; so w is read back with `info`, at the same wait, and sorted where it is out
//! of order, V's columns with it (an already ascending w costs nothing more). And the
//! f32 `syevd` loses orthogonality where A's entries reach the subnormal range, while
//! the same matrix in f64 passes; so f32 input is factored in f64 and rounded to f32
//! once. With values alone (jobz = NOVECTOR) no rows are gathered and the final GEAM is
//! skipped.

use cudarc::cusolver::sys::{
    cublasFillMode_t, cusolverDnXsyevd, cusolverDnXsyevd_bufferSize, cusolverEigMode_t,
};
use ndgpu_core::{Matrix, Result};
use ndgpu_cuda_runtime::{triangle, DeviceMatrix};

use super::{info_of, refuse_info, Eigh};
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

/// `(w, V)`, resident, V when asked for.
type Eig<T> = Result<(Matrix<T>, Option<Matrix<T>>)>;

impl CublasBackend {
    /// [`FactorizeKernels::eigh_unchecked`](ndgpu_core::FactorizeKernels::eigh_unchecked)
    /// (see the module's doc).
    pub(crate) fn eigh_kernel<T: BlasElement>(&self, a: &Matrix<T>, vectors: bool) -> Eig<T> {
        let (how, _) = self.spectra_how()?;
        let gpu = &self.gpu;
        let da = gpu.dm(self.here(), OP, "A", a)?;
        let status = self.status(OP, da, Part::Lower)?;
        // A is checked before cuSOLVER sees it: its routines are not defined on NaN.
        self.read_status(OP, da, &status, Part::Lower)?;
        drop(status);
        let (w, v) = match T::widened(gpu, da)? {
            // f32 is factored in f64 (see the module's doc); the widened copy is the
            // upper variant's work buffer as it is.
            Some(wide) => {
                let work = match how {
                    Eigh::Lower => self.fresh(OP, &wide, true)?,
                    Eigh::Upper => wide,
                };
                let (w, v) = self.eigh_of(how, vectors, work)?;
                let v = v.map(|v| T::narrowed(gpu, v)).transpose()?;
                (T::narrowed(gpu, w)?, v)
            }
            None => {
                let work = match how {
                    Eigh::Lower => self.fresh(OP, da, true)?,
                    Eigh::Upper => self.fresh(OP, da, false)?,
                };
                self.eigh_of(how, vectors, work)?
            }
        };
        Ok((gpu.matrix(w), v.map(|v| gpu.matrix(v))))
    }

    /// `syevd` on `work` (A's lower triangle as `how` lays it out), then the second
    /// read: `info` and w in one copy. w is put in ascending order where `syevd` left it
    /// out of order, V's columns with it; returns w (n×1) and V.
    fn eigh_of<U: BlasElement>(
        &self,
        how: Eigh,
        vectors: bool,
        mut work: DeviceMatrix<U>,
    ) -> Result<(DeviceMatrix<U>, Option<DeviceMatrix<U>>)> {
        let gpu = &self.gpu;
        let n = work.rows;
        // w, then one slot for info (an int in the first four bytes of a U).
        let mut w = gpu.alloc_matrix::<U>(OP, n + 1, 1)?;
        w.rows = n;
        let ws = self.syevd(how, vectors, &mut work, &mut w)?;
        let back = gpu.download_slice(&w.data, n + 1)?;
        drop(ws); // the stream has passed syevd: the host workspace may go
        refuse_info(OP, "Xsyevd", METHOD, info_of(&back[n]))?;
        let values: Vec<f64> = back[..n].iter().map(|x| x.as_f64()).collect();
        let Some(order) = ascending_order(&values) else {
            let v = match vectors {
                true => Some(self.fresh(OP, &work, true)?),
                false => None,
            };
            return Ok((w, v));
        };
        let sorted: Vec<U> = order.iter().map(|&i| back[i]).collect();
        w.data = gpu.upload_slice(OP, &sorted)?;
        let v = match vectors {
            // work read row-major is Vᵀ: row j is the eigenvector of w[j].
            true => Some(self.fresh(OP, &triangle::gather_rows(gpu, &work, &order)?, true)?),
            false => None,
        };
        Ok((w, v))
    }

    /// `cusolverDnXsyevd` on the n×n `work` read column-major, the values into `w`'s
    /// first n elements and `info` into the one after, queued after its `bufferSize`
    /// query; returns the workspace, to be kept until `info` is read.
    fn syevd<T: BlasElement>(
        &self,
        how: Eigh,
        vectors: bool,
        work: &mut DeviceMatrix<T>,
        w: &mut DeviceMatrix<T>,
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
        // w's buffer holds n + 1 elements of T (at least four bytes, aligned for an int).
        let pi = ptr_mut(gpu, &mut w.data)
            .wrapping_add(work.rows)
            .cast::<i32>();
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
        let ((pd, hw), hb) = (ws.raw(gpu), ws.host_bytes);
        // SAFETY: as above; the workspaces hold the bytes the query asked for; pi points
        // to w's last slot, past the n values.
        let status = unsafe {
            cusolverDnXsyevd(
                hs, p, jobz, uplo, n, dt, pa, lda, dt, pw, dt, pd, db, hw, hb, pi,
            )
        };
        error::cusolver(status, "eigh (Xsyevd)")?;
        Ok(ws)
    }
}

/// The stable order that sorts `w` ascending (NaN last), or `None` where it is
/// ascending already.
fn ascending_order(w: &[f64]) -> Option<Vec<usize>> {
    if w.windows(2).all(|p| p[0] <= p[1]) {
        return None;
    }
    let mut order: Vec<usize> = (0..w.len()).collect();
    order.sort_by(|&i, &j| w[i].total_cmp(&w[j]));
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::ascending_order;

    #[test]
    fn ascending_values_need_no_order() {
        assert_eq!(ascending_order(&[]), None);
        assert_eq!(ascending_order(&[3.0]), None);
        assert_eq!(ascending_order(&[-1.0, -1.0, 0.5, 2.0, 2.0]), None);
    }

    #[test]
    fn a_cluster_out_of_order_is_sorted_stably() {
        // As syevd returned them on an H200: a cluster at -1 out of order by an ulp.
        let w = [
            -1.0000000000000009,
            -1.0000000000000007,
            -1.0000000000000009,
            0.5,
            0.5,
        ];
        let order = ascending_order(&w).unwrap();
        assert_eq!(order, [0, 2, 1, 3, 4]);
        let sorted: Vec<f64> = order.iter().map(|&i| w[i]).collect();
        assert!(sorted.windows(2).all(|p| p[0] <= p[1]));
    }

    #[test]
    fn equal_values_keep_their_order() {
        assert_eq!(
            ascending_order(&[2.0, 1.0, 2.0, 1.0]).unwrap(),
            [1, 3, 0, 2]
        );
    }
}
