//! k-means with the distances from cuBLAS and the rest from the runtime's kernels.
//!
//! `‖x − c‖² = ‖x‖² − 2·x·c + ‖c‖²`, and the argmin over c does not need ‖x‖². So a
//! score matrix `S = ‖c‖² − 2·X·Cᵀ` (N×K) is built by two GEMMs: a rank-1 product
//! `1·(‖c‖²)ᵀ` (k = 1, exact) fills every row with the centroid norms, then
//! `S ← −2·X·Cᵀ + 1·S`. The norms are per-row dot products (strided-batched GEMM).
//! The runtime's `assign_from_scores` then takes the argmin per row, counts label changes
//! and adds ‖x‖² back for the inertia (times the sample weights, when there are); its
//! `update` moves the centroids (to weighted means with weights).

use ndarray::Axis;
use ndgpu_core::Variant;
use ndgpu_core::{
    Assignment, ClusterKernels, Indices, KMeansConfig, Matrix, Points, Result, Trans,
};
use ndgpu_cuda_runtime::kmeans::{assign_from_scores, shift, update};
use ndgpu_cuda_runtime::seed::seed;
use ndgpu_cuda_runtime::{dim_i32, DeviceMatrix, IndexStorage};

use crate::matmul::gemm_raw;
use crate::{ptr, ptr_mut, BlasElement, CublasBackend};

/// Variants, default first.
pub const VARIANTS: &[Variant] = &[Variant::new(
    "gemm",
    "vendor part = the distances: cuBLAS GEMMs build ‖c‖² − 2·X·Cᵀ (a rank-1 GEMM fills the \
     norms, then GEMM with β = 1; norms by strided-batched GEMM), never TF32; ours = argmin, \
     label changes, inertia, the centroid update and the seeding on the device (the \
     runtime's kernels, those of the cuda backend)",
)];

/// What every variant shares.
pub const NOTE: &str = "";

impl CublasBackend {
    /// The points of a k-means step and their weights, as device matrices.
    fn points<'a, T: BlasElement>(
        &'a self,
        p: Points<'a, T>,
    ) -> Result<(&'a DeviceMatrix<T>, Option<&'a DeviceMatrix<T>>)> {
        let here = self.here();
        let w = p
            .weights
            .map(|w| self.gpu.dm(here, "kmeans", "sample weights", w));
        Ok((self.gpu.dm(here, "kmeans", "X", p.x)?, w.transpose()?))
    }
}

impl<T: BlasElement> ClusterKernels<T> for CublasBackend {
    fn shift_unchecked(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<f64> {
        let gpu = &self.gpu;
        let a = gpu.dm(self.here(), "kmeans", "centroids", a)?;
        let b = gpu.dm(self.here(), "kmeans", "centroids", b)?;
        shift(gpu, a, b)
    }

    fn seed_unchecked(&self, p: Points<T>, config: &KMeansConfig) -> Result<Matrix<T>> {
        let (x, w) = (p.x, p.weights);
        let x = self.gpu.dm(self.here(), "kmeans", "X", x)?;
        let w = w
            .map(|w| self.gpu.dm(self.here(), "kmeans", "sample weights", w))
            .transpose()?;
        Ok(self.gpu.matrix(seed(&self.gpu, x, w, config)?))
    }

    fn assign_unchecked(&self, p: Points<T>, c: &Matrix<T>, l: &mut Indices) -> Result<Assignment> {
        let labels = l;
        let (gpu, here) = (&self.gpu, self.here());
        let (x, w) = self.points(p)?;
        let c = gpu.dm(here, "kmeans", "centroids", c)?;
        let labels = here
            .indices_mut::<IndexStorage>("kmeans", "labels", labels)?
            .labels_mut()?;
        let ((n, d), k) = (x.dim(), c.rows);
        if n == 0 {
            return Ok(Assignment::default());
        }
        dim_i32("kmeans", k)?;
        let mut x_sq = gpu.alloc::<T>("kmeans", n)?;
        self.sum_sq_axis_device(x, (Axis(1), &mut x_sq))?;
        let mut c_sq = gpu.alloc::<T>("kmeans", k)?;
        self.sum_sq_axis_device(c, (Axis(1), &mut c_sq))?;
        let ones = self.ones::<T>(n)?;
        let mut scores = gpu.alloc_matrix::<T>("kmeans", n, k)?;
        let (px, pc) = (ptr(gpu, &x.data), ptr(gpu, &c.data));
        let (pones, pcsq) = (ptr(gpu, &ones), ptr(gpu, &c_sq));
        let pscores = ptr_mut(gpu, &mut scores.data);
        {
            let h = self.blas()?;
            let (one, zero) = (T::one(), T::zero());
            // SAFETY: ones is N×1 and c_sq 1×K, so their product is N×K like scores;
            // x is N×D and the centroids K×D, so X·Cᵀ is N×K too.
            unsafe {
                gemm_raw(
                    h.raw,
                    one,
                    pones,
                    (n, 1),
                    Trans::No,
                    pcsq,
                    (1, k),
                    Trans::No,
                    zero,
                    pscores,
                )?;
                let minus_two = -(one + one);
                gemm_raw(
                    h.raw,
                    minus_two,
                    px,
                    (n, d),
                    Trans::No,
                    pc,
                    (k, d),
                    Trans::Yes,
                    one,
                    pscores,
                )?;
            }
        }
        assign_from_scores(gpu, &scores, &x_sq, w.map(|w| &w.data), labels)
    }

    fn update_unchecked(&self, p: Points<T>, labels: &Indices, c: &mut Matrix<T>) -> Result<()> {
        let centroids = c;
        let (gpu, here) = (&self.gpu, self.here());
        let (x, w) = self.points(p)?;
        let labels = here
            .indices::<IndexStorage>("kmeans", "labels", labels)?
            .labels()?;
        let c = gpu.dm_mut(here, "kmeans", "centroids", centroids)?;
        update(gpu, x, labels, w.map(|w| &w.data), c)
    }
}
