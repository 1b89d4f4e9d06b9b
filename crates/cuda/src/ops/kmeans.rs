//! k-means ladder. (Stub: being written.)
use cudarc::driver::CudaSlice;
use ndarray::{Array1, ArrayView2};
use ndgpu_core::{Cluster, Error, KMeansConfig, KMeansResult, Result};

use crate::{CudaBackend, CudaElement, DeviceMatrix, Gpu};

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["atomic"];
/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[];
/// Determinism and scope.
pub const NOTE: &str = "kmeans: (being written)";

/// What one assignment step found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assignment {
    /// Points whose label changed.
    pub changed: usize,
    /// Σ‖xᵢ − c_labelᵢ‖².
    pub inertia: f64,
}

/// Assignment from a score matrix `scores` (N×K, `scores[i][j] = ‖c_j‖² − 2·x_i·c_j`,
/// as a vendor GEMM produces it): `labels[i] = argmin_j scores[i][j]` (ties → lowest
/// j). On entry `labels` holds the previous labels (−1 for none); the changes are
/// counted against them. `x_sq_norms[i] = ‖x_i‖²` completes the inertia.
///
/// # Errors
/// Device errors.
pub fn assign_from_scores<T: CudaElement>(
    _gpu: &Gpu,
    _scores: &DeviceMatrix<T>,
    _x_sq_norms: &CudaSlice<T>,
    _labels: &mut CudaSlice<i32>,
) -> Result<Assignment> {
    Err(Error::invalid("kmeans", "not yet written"))
}

/// Moves each centroid to the mean of its points (`labels` of the N rows of `x`);
/// a centroid with no points stays where it is.
///
/// # Errors
/// Device errors.
pub fn update_centroids<T: CudaElement>(
    _gpu: &Gpu,
    _x: &DeviceMatrix<T>,
    _labels: &CudaSlice<i32>,
    _centroids: &mut DeviceMatrix<T>,
) -> Result<()> {
    Err(Error::invalid("kmeans", "not yet written"))
}

impl<T: CudaElement> Cluster<T> for CudaBackend {
    fn kmeans(&self, _x: ArrayView2<T>, _config: &KMeansConfig) -> Result<KMeansResult<T>> {
        Err(Error::invalid("kmeans", "not yet written"))
    }
    fn predict(&self, _x: ArrayView2<T>, _c: ArrayView2<T>) -> Result<Array1<usize>> {
        Err(Error::invalid("predict", "not yet written"))
    }
}
