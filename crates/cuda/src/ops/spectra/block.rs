//! `block_jacobi` on the device: Y is held transposed, Z = Yᵀ (k×big, row-major), so
//! that G = YᵀY is Z·Zᵀ (the gram ladder) and Y ← Y·W is Z ← Wᵀ·Z (the GEMM ladder),
//! neither with a transposed operand. Both run a named IEEE variant, never the
//! backend's selected one (which may be TF32): [`GRAM`] and [`GEMM`].

use ndarray::Array2;
use ndgpu_core::{Backend, Family, Gemm, Matrix, Memory, Result};
use ndgpu_cuda_runtime::{CudaElement, DeviceMatrix, Gpu};

use super::jacobi::{self, descending, permuted_vt, rank_deficient, scaled_permutation, Columns};
use super::Svd;
use crate::ops::gram::gram;
use crate::ops::matmul::gemm;
use crate::ops::transpose::transpose;
use crate::CudaBackend;

/// The gram variant of G = Z·Zᵀ: IEEE, sums in a fixed order (its row in the gram
/// table says so; a unit test holds it to that).
pub(crate) const GRAM: &str = "stream_k";

/// The GEMM variant of Z ← Wᵀ·Z and of U's scaling: IEEE, reproducible.
pub(crate) const GEMM: &str = "split_k";

/// Z = Yᵀ on the device, a second buffer for the products, and G's and W's buffers.
struct DeviceColumns<'a, T> {
    gpu: &'a Gpu,
    z: DeviceMatrix<T>,
    spare: DeviceMatrix<T>,
    g: DeviceMatrix<T>,
    w: DeviceMatrix<T>,
}

impl<'a, T: CudaElement> DeviceColumns<'a, T> {
    fn new(gpu: &'a Gpu, z: DeviceMatrix<T>) -> Result<Self> {
        let (k, big) = z.dim();
        Ok(DeviceColumns {
            gpu,
            spare: gpu.alloc_matrix("svd", k, big)?,
            g: gpu.alloc_matrix("svd", k, k)?,
            w: gpu.alloc_matrix("svd", k, k)?,
            z,
        })
    }

    /// `spare ← L·Z` for a k×k host `l` (rounded to T).
    fn left(&mut self, l: &Array2<f64>) -> Result<()> {
        self.gpu
            .upload_into(l.mapv(T::from_f64).view(), &mut self.w)?;
        gemm(
            self.gpu,
            GEMM,
            Gemm::new(),
            &self.w,
            &self.z,
            &mut self.spare,
        )
    }
}

impl<T: CudaElement> Columns for DeviceColumns<'_, T> {
    fn gram(&mut self) -> Result<Array2<f64>> {
        gram(self.gpu, GRAM, &self.z, &mut self.g)?;
        let mut host = Array2::<T>::zeros(self.g.dim());
        self.gpu.download_into(&self.g, host.view_mut())?;
        Ok(host.mapv(|x| x.as_f64()))
    }

    fn rotate(&mut self, w: &Array2<f64>) -> Result<()> {
        self.left(&w.t().to_owned())?;
        std::mem::swap(&mut self.z, &mut self.spare);
        Ok(())
    }
}

/// The SVD of a resident A by one-sided block Jacobi on its tall orientation B (A, or
/// Aᵀ when A is wide). `None` where the device's sweeps cannot give the answer: a G
/// with NaN or ±Inf, or B rank-deficient at working precision; the caller then takes
/// `hybrid`, which also names a non-finite entry.
///
/// # Errors
/// [`ndgpu_core::Error::NoConvergence`]; [`ndgpu_core::Error::WrongPlace`]; device
/// errors.
pub(crate) fn svd<T: CudaElement>(
    b: &CudaBackend,
    a: &Matrix<T>,
    vectors: bool,
) -> Result<Option<Svd<T>>> {
    let gpu = b.gpu();
    let da = gpu.dm(b.here(), "svd", "A", a)?;
    let (m, n) = da.dim();
    let (big, k, wide) = (m.max(n), m.min(n), m < n);
    let mut z = gpu.alloc_matrix::<T>("svd", k, big)?;
    match wide {
        true => gpu.copy_matrix(da, &mut z)?,
        false => transpose(gpu, b.variant(Family::Transpose), da, &mut z)?,
    }
    let mut cols = DeviceColumns::new(gpu, z)?;
    let tol = (big as f64).sqrt() * T::EPS;
    // The columns rank_deficient would find negligible stay out of the test.
    let negligible = (k as f64 * T::EPS).powi(2);
    let Some(sweeps) = jacobi::sweep(&mut cols, k, (tol, negligible), vectors)? else {
        return Ok(None);
    };
    let norms = sweeps.norms;
    if rank_deficient(&norms, T::EPS) {
        return Ok(None);
    }
    let order = descending(&norms);
    let s = Array2::from_shape_fn((k, 1), |(i, _)| T::from_f64(norms[order[i]]));
    let s = b.upload(s.view())?;
    let Some(v) = sweeps.v else {
        return Ok(Some((s, None)));
    };
    // Uᵀ of B: Z's rows over their norms, in order (one product with a permuted
    // diagonal: one rounding per entry).
    cols.left(&scaled_permutation(&norms, &order))?;
    let ut = cols.spare;
    let vt = permuted_vt(&v, &order);
    if wide {
        // A = Bᵀ = V·Σ·Uᵀ: A's U is B's V, A's Vt is B's Uᵀ.
        let u = b.upload(vt.t().mapv(T::from_f64).view())?;
        return Ok(Some((s, Some((u, gpu.matrix(ut))))));
    }
    let mut u = gpu.alloc_matrix::<T>("svd", big, k)?;
    transpose(gpu, b.variant(Family::Transpose), &ut, &mut u)?;
    let vt = b.upload(vt.mapv(T::from_f64).view())?;
    Ok(Some((s, Some((gpu.matrix(u), vt)))))
}
