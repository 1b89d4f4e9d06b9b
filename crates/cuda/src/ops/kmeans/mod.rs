//! k-means ladder (report 000): Lloyd's iteration on the device.
//!
//! | variant | assignment | update |
//! |---|---|---|
//! | `fused` (default) | ‖c‖² − 2·x·c over 128×128 tiles in shared memory, fused with the argmin; no N×K matrix | per-chunk sums in shared memory, chunks added in a fixed order: bitwise reproducible |
//! | `atomic` | report 000: one thread per point, direct differences | report 000: atomicAdd of each point into the sums, a division kernel |
//!
//! The iteration is the one written once on [`KMeans`]; this backend gives its two
//! steps. The host reads two numbers back per assignment (points changed, inertia).
//! Seeding (k-means++, k-means‖) runs on the device: the runtime's `seed`.

mod launch;

use cudarc::driver::CudaSlice;
use ndgpu_core::{
    Assignment, Backend, Error, Family, Indices, KMeans, KMeansConfig, Matrix, Result,
};
use ndgpu_cuda_runtime::kmeans::{read_stats, shift, stats_sum, update};
use ndgpu_cuda_runtime::seed::seed;
use ndgpu_cuda_runtime::{CudaElement, DeviceMatrix, Gpu, IndexStorage};

use crate::CudaBackend;
use launch::Workspace;

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["fused", "atomic"];

/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[
    "kmeans_centroid_norms_f32",
    "kmeans_assign_fused_f32",
    "kmeans_accumulate_partials_f32",
    "kmeans_finalize_f32",
    "kmeans_centroid_norms_f64",
    "kmeans_assign_fused_f64",
    "kmeans_accumulate_partials_f64",
    "kmeans_finalize_f64",
    "kmeans_stats_sum_f64",
];

/// Determinism and scope.
pub const NOTE: &str = "kmeans: fused (default) is bitwise reproducible run to run: distances \
     ‖c‖² − 2·x·c fused with the argmin, inertia by direct differences for the chosen \
     centroid, centroid sums and statistics combined in a fixed order (the order depends on \
     N, K, D only). atomic (report 000) adds with float atomics, so its centroids and \
     inertia may differ in the last bits from run to run.";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Fused,
    Atomic,
}

fn parse(variant: &str) -> Result<Variant> {
    match variant {
        "fused" => Ok(Variant::Fused),
        "atomic" => Ok(Variant::Atomic),
        _ => Err(Error::unknown_variant(
            "cuda",
            Family::KMeans,
            variant,
            VARIANTS,
        )),
    }
}

/// One assignment with variant `v` on resident data.
fn assign<T: CudaElement>(
    gpu: &Gpu,
    v: Variant,
    x: &DeviceMatrix<T>,
    c: &DeviceMatrix<T>,
    labels: &mut CudaSlice<i32>,
) -> Result<Assignment> {
    if x.rows == 0 {
        return Ok(Assignment::default());
    }
    let mut ws = Workspace::new(gpu, x.rows, c.rows)?;
    match v {
        Variant::Fused => {
            launch::centroid_norms(gpu, c, &mut ws.cnorm)?;
            let nb = launch::assign_fused(gpu, x, c, &ws.cnorm, labels, &mut ws.block_stats)?;
            stats_sum(gpu, &ws.block_stats, nb, &mut ws.stats)?;
        }
        Variant::Atomic => {
            launch::zero(gpu, &mut ws.stats)?;
            launch::assign_direct(gpu, x, c, labels, &mut ws.stats)?;
        }
    }
    read_stats(gpu, &ws.stats)
}

/// One centroid update with variant `v` on resident data (nothing moves when D = 0).
fn update_with<T: CudaElement>(
    gpu: &Gpu,
    v: Variant,
    x: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    if x.rows == 0 || x.cols == 0 {
        return Ok(());
    }
    match v {
        Variant::Fused => update(gpu, x, labels, c),
        Variant::Atomic => {
            let (k, d) = c.dim();
            let mut sums = gpu.alloc::<T>("kmeans", k * d)?;
            let mut counts = launch::alloc_i32(gpu, k)?;
            launch::zero(gpu, &mut sums)?;
            launch::accumulate_atomic(gpu, x, labels, &mut sums, &mut counts)?;
            launch::divide(gpu, &sums, &counts, c)
        }
    }
}

impl<T: CudaElement> KMeans<T> for CudaBackend {
    fn shift_dev(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<f64> {
        let gpu = self.gpu();
        let a = gpu.dm(self.here(), "kmeans", "centroids", a)?;
        let b = gpu.dm(self.here(), "kmeans", "centroids", b)?;
        shift(gpu, a, b)
    }

    fn seed_dev(&self, x: &Matrix<T>, config: &KMeansConfig) -> Result<Matrix<T>> {
        let gpu = self.gpu();
        let x = gpu.dm(self.here(), "kmeans", "X", x)?;
        Ok(gpu.matrix(seed(gpu, x, config)?))
    }

    fn assign(&self, x: &Matrix<T>, c: &Matrix<T>, labels: &mut Indices) -> Result<Assignment> {
        let v = parse(self.variant(Family::KMeans))?;
        let (gpu, here) = (self.gpu(), self.here());
        let x = gpu.dm(here, "kmeans", "X", x)?;
        let c = gpu.dm(here, "kmeans", "centroids", c)?;
        let labels = here
            .indices_mut::<IndexStorage>("kmeans", "labels", labels)?
            .labels_mut()?;
        assign(gpu, v, x, c, labels)
    }

    fn update(&self, x: &Matrix<T>, labels: &Indices, centroids: &mut Matrix<T>) -> Result<()> {
        let v = parse(self.variant(Family::KMeans))?;
        let (gpu, here) = (self.gpu(), self.here());
        let x = gpu.dm(here, "kmeans", "X", x)?;
        let labels = here
            .indices::<IndexStorage>("kmeans", "labels", labels)?
            .labels()?;
        let c = gpu.dm_mut(here, "kmeans", "centroids", centroids)?;
        update_with(gpu, v, x, labels, c)
    }
}
