//! k-means ladder (report 000): Lloyd's iteration on the device.
//!
//! | variant | assignment | update |
//! |---|---|---|
//! | `fused` (default) | ‖c‖² − 2·x·c over 128×128 tiles in shared memory, fused with the argmin; no N×K matrix | per-chunk sums in shared memory, chunks added in a fixed order: bitwise reproducible |
//! | `atomic` | report 000: one thread per point, direct differences | report 000: atomicAdd of each point into the sums, a division kernel |
//!
//! The iteration is the one documented on [`Cluster`]; the host reads two numbers back
//! per iteration (points changed, inertia). The building blocks [`assign_from_scores`]
//! and [`update_centroids`] serve the vendor backend, which computes the scores with a
//! GEMM; [`iterate`] is one assignment and one update on resident data, for timing.

mod launch;

use cudarc::driver::CudaSlice;
use ndarray::{Array1, ArrayView2};
use ndgpu_core::{
    check, kmeans, Backend, Cluster, Error, Family, KMeansConfig, KMeansResult, Result,
};

use crate::runtime::driver;
use crate::{CudaBackend, CudaElement, DeviceMatrix, Gpu};
use launch::Workspace;

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["fused", "atomic"];

/// Kernels the default variant launches (and the vendor backend's building blocks).
pub const DEFAULT_KERNELS: &[&str] = &[
    "kmeans_centroid_norms_f32",
    "kmeans_assign_fused_f32",
    "kmeans_assign_scores_f32",
    "kmeans_accumulate_partials_f32",
    "kmeans_finalize_f32",
    "kmeans_centroid_norms_f64",
    "kmeans_assign_fused_f64",
    "kmeans_assign_scores_f64",
    "kmeans_accumulate_partials_f64",
    "kmeans_finalize_f64",
    "kmeans_stats_sum_f64",
];

/// Determinism and scope.
pub const NOTE: &str = "kmeans: fused (default) is bitwise reproducible run to run: distances \
     ‖c‖² − 2·x·c fused with the argmin, inertia by direct differences for the chosen \
     centroid, centroid sums and statistics combined in a fixed order (the order depends on \
     N, K, D only). atomic (report 000) adds with float atomics, so its centroids and \
     inertia may differ in the last bits from run to run. assign_from_scores and \
     update_centroids (used by the vendor backend) are deterministic too.";

/// What one assignment step found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assignment {
    /// Points whose label changed.
    pub changed: usize,
    /// Σ‖xᵢ − c_labelᵢ‖².
    pub inertia: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Fused,
    Atomic,
}

fn parse(variant: &str) -> Result<Variant> {
    match variant {
        "fused" => Ok(Variant::Fused),
        "atomic" => Ok(Variant::Atomic),
        _ => Err(Error::UnknownVariant {
            backend: "cuda".into(),
            family: Family::KMeans,
            name: variant.into(),
            available: VARIANTS.join(", "),
        }),
    }
}

/// Checks that `x` (N×D), `c` (K×D) and `labels` (≥ N) fit together; returns (n, k, d).
fn shapes<T>(
    x: &DeviceMatrix<T>,
    c: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
) -> Result<(usize, usize, usize)> {
    if x.cols != c.cols {
        return Err(Error::shape(
            "kmeans",
            format!("points have {} dimensions, centroids {}", x.cols, c.cols),
        ));
    }
    if labels.len() < x.rows {
        return Err(Error::shape(
            "kmeans",
            format!("{} labels for {} points", labels.len(), x.rows),
        ));
    }
    if c.rows == 0 {
        return Err(Error::invalid("kmeans", "no centroids"));
    }
    Ok((x.rows, c.rows, x.cols))
}

/// Reads back (inertia, changed).
fn read_stats(gpu: &Gpu, stats: &CudaSlice<f64>) -> Result<Assignment> {
    let s = gpu.download_slice(stats, 2)?;
    Ok(Assignment {
        inertia: s[0],
        changed: s[1] as usize,
    })
}

/// Queues one assignment (labels and the two statistics), without reading back.
fn queue_assign<T: CudaElement>(
    gpu: &Gpu,
    v: Variant,
    x: &DeviceMatrix<T>,
    c: &DeviceMatrix<T>,
    labels: &mut CudaSlice<i32>,
    ws: &mut Workspace<T>,
) -> Result<()> {
    match v {
        Variant::Fused => {
            launch::centroid_norms(gpu, c, &mut ws.cnorm)?;
            let nb = launch::assign_fused(gpu, x, c, &ws.cnorm, labels, &mut ws.block_stats)?;
            launch::stats_sum(gpu, &ws.block_stats, nb, &mut ws.stats)
        }
        Variant::Atomic => {
            launch::zero(gpu, &mut ws.stats)?;
            launch::assign_direct(gpu, x, c, labels, &mut ws.stats)
        }
    }
}

/// Queues one centroid update from the current labels (nothing to move when D = 0).
fn queue_update<T: CudaElement>(
    gpu: &Gpu,
    v: Variant,
    x: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
    c: &mut DeviceMatrix<T>,
    ws: &mut Workspace<T>,
) -> Result<()> {
    if x.cols == 0 {
        return Ok(());
    }
    match v {
        Variant::Fused => {
            let plan = ws.plan;
            launch::accumulate_partials(
                gpu,
                &plan,
                x,
                labels,
                c.rows,
                &mut ws.sums,
                &mut ws.counts,
            )?;
            launch::finalize(gpu, &plan, &ws.sums, &ws.counts, c)
        }
        Variant::Atomic => {
            launch::zero(gpu, &mut ws.sums)?;
            launch::zero(gpu, &mut ws.counts)?;
            launch::accumulate_atomic(gpu, x, labels, &mut ws.sums, &mut ws.counts)?;
            launch::divide(gpu, &ws.sums, &ws.counts, c)
        }
    }
}

/// One assignment on resident data with the named variant: `labels[i]` becomes the
/// index of the centroid nearest to row i of `x` (ties → lowest index); on entry
/// `labels` holds the previous labels (−1 for none), against which changes are counted.
///
/// # Errors
/// [`Error::UnknownVariant`], [`Error::ShapeMismatch`] when the dimensions differ or
/// `labels` is shorter than N; device errors.
pub fn assign<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    x: &DeviceMatrix<T>,
    centroids: &DeviceMatrix<T>,
    labels: &mut CudaSlice<i32>,
) -> Result<Assignment> {
    let v = parse(variant)?;
    let (n, k, d) = shapes(x, centroids, labels)?;
    if n == 0 {
        return Ok(Assignment {
            changed: 0,
            inertia: 0.0,
        });
    }
    let mut ws = Workspace::new(gpu, n, k, d, v == Variant::Atomic)?;
    queue_assign(gpu, v, x, centroids, labels, &mut ws)?;
    read_stats(gpu, &ws.stats)
}

/// One Lloyd iteration on resident data: an assignment (as [`assign`]) followed by a
/// centroid update (as [`update_centroids`] for `fused`, with atomics for `atomic`),
/// whatever the number of changes. Returns what the assignment found.
///
/// # Errors
/// As [`assign`].
pub fn iterate<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    x: &DeviceMatrix<T>,
    centroids: &mut DeviceMatrix<T>,
    labels: &mut CudaSlice<i32>,
) -> Result<Assignment> {
    let v = parse(variant)?;
    let (n, k, d) = shapes(x, centroids, labels)?;
    if n == 0 {
        return Ok(Assignment {
            changed: 0,
            inertia: 0.0,
        });
    }
    let mut ws = Workspace::new(gpu, n, k, d, v == Variant::Atomic)?;
    queue_assign(gpu, v, x, centroids, labels, &mut ws)?;
    queue_update(gpu, v, x, labels, centroids, &mut ws)?;
    read_stats(gpu, &ws.stats)
}

/// Assignment from a score matrix `scores` (N×K, `scores[i][j] = ‖c_j‖² − 2·x_i·c_j`,
/// as a vendor GEMM produces it): `labels[i] = argmin_j scores[i][j]` (ties → lowest
/// j). On entry `labels` holds the previous labels (−1 for none); the changes are
/// counted against them. `x_sq_norms[i] = ‖x_i‖²` completes the inertia, each term
/// clamped at 0. Deterministic.
///
/// # Errors
/// [`Error::ShapeMismatch`] when `x_sq_norms` or `labels` is shorter than N; device errors.
pub fn assign_from_scores<T: CudaElement>(
    gpu: &Gpu,
    scores: &DeviceMatrix<T>,
    x_sq_norms: &CudaSlice<T>,
    labels: &mut CudaSlice<i32>,
) -> Result<Assignment> {
    let n = scores.rows;
    if x_sq_norms.len() < n || labels.len() < n {
        return Err(Error::shape(
            "kmeans",
            format!(
                "{n} score rows but {} norms and {} labels",
                x_sq_norms.len(),
                labels.len()
            ),
        ));
    }
    if n == 0 || scores.cols == 0 {
        return Ok(Assignment {
            changed: 0,
            inertia: 0.0,
        });
    }
    let mut block_stats = gpu.alloc::<f64>("kmeans", 2 * n.div_ceil(8))?;
    let mut stats = gpu.alloc::<f64>("kmeans", 2)?;
    let nb = launch::assign_scores(gpu, scores, x_sq_norms, labels, &mut block_stats)?;
    launch::stats_sum(gpu, &block_stats, nb, &mut stats)?;
    read_stats(gpu, &stats)
}

/// Moves each centroid to the mean of its points (`labels` of the N rows of `x`);
/// a centroid with no points stays where it is. The sums are formed in an order fixed
/// by N, K and D, so the result is bitwise reproducible.
///
/// # Errors
/// [`Error::ShapeMismatch`] when the dimensions differ or `labels` is shorter than N;
/// device errors.
pub fn update_centroids<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
    centroids: &mut DeviceMatrix<T>,
) -> Result<()> {
    let (n, k, d) = shapes(x, centroids, labels)?;
    if n == 0 {
        return Ok(());
    }
    let mut ws = Workspace::new(gpu, n, k, d, false)?;
    queue_update(gpu, Variant::Fused, x, labels, centroids, &mut ws)
}

impl<T: CudaElement> Cluster<T> for CudaBackend {
    fn kmeans(&self, x: ArrayView2<T>, config: &KMeansConfig) -> Result<KMeansResult<T>> {
        let v = parse(self.variant(Family::KMeans))?;
        // init_centroids runs check::kmeans first.
        let start = kmeans::init_centroids(x, config)?;
        let gpu = self.gpu();
        let (n, d) = x.dim();
        let k = config.k;
        let dx = gpu.upload(x)?;
        let mut dc = gpu.upload(start.view())?;
        let mut labels = gpu
            .stream()
            .clone_htod(&ndgpu_core::host::filled_vec("kmeans", n, -1i32)?)
            .map_err(|e| driver("kmeans: uploading labels", e))?;
        let mut ws = Workspace::new(gpu, n, k, d, v == Variant::Atomic)?;
        let mut history = Vec::new();
        let converged = loop {
            queue_assign(gpu, v, &dx, &dc, &mut labels, &mut ws)?;
            let a = read_stats(gpu, &ws.stats)?;
            history.push(a.inertia);
            if a.changed as f64 <= config.tol * n as f64 {
                break true;
            }
            if history.len() >= config.max_iter {
                break false;
            }
            queue_update(gpu, v, &dx, &labels, &mut dc, &mut ws)?;
        };
        let labels = download_labels(gpu, &labels, n)?;
        Ok(KMeansResult {
            centroids: gpu.download(&dc)?,
            labels,
            inertia: *history.last().expect("at least one assignment"),
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
        let gpu = self.gpu();
        let dx = gpu.upload(x)?;
        let dc = gpu.upload(centroids)?;
        let mut labels = launch::alloc_i32(gpu, n)?;
        let v = parse(self.variant(Family::KMeans))?;
        let mut ws = Workspace::new(gpu, n, dc.rows, dx.cols, v == Variant::Atomic)?;
        queue_assign(gpu, v, &dx, &dc, &mut labels, &mut ws)?;
        download_labels(gpu, &labels, n)
    }
}

/// Copies n labels back as indices.
fn download_labels(gpu: &Gpu, labels: &CudaSlice<i32>, n: usize) -> Result<Array1<usize>> {
    let host = gpu
        .stream()
        .clone_dtoh(&labels.slice(0..n))
        .map_err(|e| driver("kmeans: reading labels", e))?;
    gpu.synchronize()?;
    Ok(host.into_iter().map(|l| l as usize).collect())
}
