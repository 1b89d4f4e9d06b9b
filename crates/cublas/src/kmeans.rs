//! k-means with the distances from cuBLAS and the rest from ndgpu-cuda's kernels.
//!
//! `‖x − c‖² = ‖x‖² − 2·x·c + ‖c‖²`, and the argmin over c does not need ‖x‖². So a
//! score matrix `S = ‖c‖² − 2·X·Cᵀ` (N×K) is built by two GEMMs: a rank-1 product
//! `1·(‖c‖²)ᵀ` (k = 1, exact) fills every row with the centroid norms, then
//! `S ← −2·X·Cᵀ + 1·S`. The norms are per-row dot products (strided-batched GEMM).
//! ndgpu-cuda's `assign_from_scores` then takes the argmin per row, counts label changes
//! and adds ‖x‖² back for the inertia; its `update_centroids` moves the centroids.

use cudarc::driver::CudaSlice;
use ndarray::{Array1, ArrayView2, Axis};
use ndgpu_core::{check, Cluster, Error, KMeansConfig, KMeansResult, Result, Trans};
use ndgpu_cuda::ops::kmeans::{assign_from_scores, update_centroids, Assignment};
use ndgpu_cuda::{dim_i32, DeviceMatrix, Gpu};

use crate::matmul::gemm_raw;
use crate::{error, ptr, ptr_mut, BlasElement, CublasBackend};

/// Variants, default first.
pub const VARIANTS: &[&str] = &["gemm"];

/// Determinism and scope.
pub const NOTE: &str = "kmeans: vendor part = the distances: cuBLAS GEMMs build \
    ‖c‖² − 2·X·Cᵀ (a rank-1 GEMM fills the norms, then GEMM with β = 1; norms by \
    strided-batched GEMM), never TF32; ours = argmin, label changes, inertia and the \
    centroid update (ndgpu-cuda's kmeans kernels, default variant), initialisation on \
    the host (ndgpu_core::kmeans::init_centroids). Iteration as documented on Cluster.";

/// The device state of a k-means run (or of one `predict`): data, centroids, labels
/// and the buffers one assignment needs.
#[derive(Debug)]
pub struct KMeansDevice<T> {
    /// The points, N×D.
    pub x: DeviceMatrix<T>,
    /// The centroids, K×D.
    pub centroids: DeviceMatrix<T>,
    /// The labels of the last assignment (−1 before the first), N of them.
    pub labels: CudaSlice<i32>,
    x_sq: CudaSlice<T>,
    c_sq: CudaSlice<T>,
    ones: CudaSlice<T>,
    scores: DeviceMatrix<T>,
}

impl CublasBackend {
    /// Prepares a k-means run on resident points and starting centroids: computes
    /// ‖xᵢ‖², sets every label to −1, allocates the N×K score matrix.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for no points or no centroids,
    /// [`Error::ShapeMismatch`] for different dimensions; out of memory.
    pub fn kmeans_device<T: BlasElement>(
        &self,
        x: DeviceMatrix<T>,
        centroids: DeviceMatrix<T>,
    ) -> Result<KMeansDevice<T>> {
        let ((n, d), k) = (x.dim(), centroids.rows);
        if n == 0 || k == 0 {
            return Err(Error::invalid(
                "kmeans",
                format!("{n} points, {k} centroids"),
            ));
        }
        if centroids.cols != d {
            return Err(Error::shape(
                "kmeans",
                format!("points have {d} dimensions, centroids {}", centroids.cols),
            ));
        }
        dim_i32("kmeans", k)?;
        let gpu = &self.gpu;
        let mut x_sq = gpu.alloc::<T>("kmeans", n)?;
        self.sum_sq_axis_device(&x, Axis(1), &mut x_sq)?;
        let labels = gpu
            .stream()
            .clone_htod(&ndgpu_core::host::filled_vec("kmeans", n, -1i32)?)
            .map_err(|e| error::driver("kmeans: uploading the labels", e))?;
        Ok(KMeansDevice {
            c_sq: gpu.alloc::<T>("kmeans", k)?,
            ones: self.ones::<T>(n)?,
            scores: gpu.alloc_matrix::<T>("kmeans", n, k)?,
            x,
            centroids,
            labels,
            x_sq,
        })
    }

    /// One assignment step: labels ← nearest centroid, with the number of changed
    /// labels and the inertia.
    ///
    /// # Errors
    /// cuBLAS and device errors.
    pub fn kmeans_assign<T: BlasElement>(&self, s: &mut KMeansDevice<T>) -> Result<Assignment> {
        let gpu = &self.gpu;
        let ((n, d), k) = (s.x.dim(), s.centroids.rows);
        self.sum_sq_axis_device(&s.centroids, Axis(1), &mut s.c_sq)?;
        let (px, pc) = (ptr(gpu, &s.x.data), ptr(gpu, &s.centroids.data));
        let (pones, pcsq) = (ptr(gpu, &s.ones), ptr(gpu, &s.c_sq));
        let pscores = ptr_mut(gpu, &mut s.scores.data);
        {
            let h = self.blas()?;
            // SAFETY: ones is N×1 and c_sq 1×K, so their product is N×K like scores;
            // x is N×D and the centroids K×D, so X·Cᵀ is N×K too.
            unsafe {
                let (one, zero) = (T::one(), T::zero());
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
        assign_from_scores(gpu, &s.scores, &s.x_sq, &mut s.labels)
    }

    /// One update step: each centroid moves to the mean of its points (one with no
    /// points stays).
    ///
    /// # Errors
    /// Device errors.
    pub fn kmeans_update<T: BlasElement>(&self, s: &mut KMeansDevice<T>) -> Result<()> {
        update_centroids(&self.gpu, &s.x, &s.labels, &mut s.centroids)
    }
}

/// The labels, as indices.
fn download_labels(gpu: &Gpu, labels: &CudaSlice<i32>, n: usize) -> Result<Array1<usize>> {
    let mut host = ndgpu_core::host::filled_vec("kmeans", n, 0i32)?;
    gpu.stream()
        .memcpy_dtoh(&labels.slice(0..n), host.as_mut_slice())
        .map_err(|e| error::driver("kmeans: downloading the labels", e))?;
    gpu.synchronize()?;
    host.into_iter()
        .map(|l| {
            usize::try_from(l).map_err(|_| {
                Error::backend(
                    error::BACKEND,
                    "kmeans",
                    format!("the assignment left label {l}"),
                )
            })
        })
        .collect()
}

impl<T: BlasElement> Cluster<T> for CublasBackend {
    fn kmeans(&self, x: ArrayView2<T>, config: &KMeansConfig) -> Result<KMeansResult<T>> {
        let start = ndgpu_core::kmeans::init_centroids(x, config)?;
        let n = x.nrows();
        let gpu = &self.gpu;
        let mut s = self.kmeans_device(gpu.upload(x)?, gpu.upload(start.view())?)?;
        let mut history = Vec::new();
        let converged = loop {
            let a = self.kmeans_assign(&mut s)?;
            history.push(a.inertia);
            let met = a.changed as f64 <= config.tol * n as f64;
            if met || history.len() >= config.max_iter {
                break met;
            }
            self.kmeans_update(&mut s)?;
        };
        Ok(KMeansResult {
            centroids: gpu.download(&s.centroids)?,
            labels: download_labels(gpu, &s.labels, n)?,
            inertia: history.last().copied().unwrap_or(0.0),
            iterations: history.len(),
            converged,
            inertia_history: history,
        })
    }

    fn predict(&self, x: ArrayView2<T>, centroids: ArrayView2<T>) -> Result<Array1<usize>> {
        let (n, _, _) = check::predict(&x, &centroids)?;
        if n == 0 {
            return Ok(Array1::zeros(0));
        }
        let gpu = &self.gpu;
        let mut s = self.kmeans_device(gpu.upload(x)?, gpu.upload(centroids)?)?;
        self.kmeans_assign(&mut s)?;
        download_labels(gpu, &s.labels, n)
    }
}
