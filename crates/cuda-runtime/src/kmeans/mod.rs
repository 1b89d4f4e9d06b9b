//! The k-means kernels both GPU backends launch (`kernels/kmeans.cu`): the assignment
//! from a score matrix (the `cublas` backend's distances come from a GEMM), the sum of
//! the per-block statistics, and the deterministic centroid update.
//!
//! The update sums the points of each centroid per chunk of points in shared memory,
//! then adds the chunks in chunk order; the chunking depends on N, K and D only, so the
//! summation order, hence the bits, are the same on every run.

mod launch;
mod plan;
mod update;

use crate::push_args;
use cudarc::driver::{CudaSlice, PushKernelArg};
use ndgpu_core::{Assignment, Error, Result};

use crate::device_matrix::DeviceMatrix;
use crate::element::CudaElement;
use crate::gpu::Gpu;
use crate::launch::{dim_i32, go};

pub use launch::{cfg, kernel, THREADS};
pub use plan::{ChunkSums, Plan};
pub use update::{accumulate_chunks, finalize, update, Masses, Rows};

/// Points per block of the score assignment (one warp each).
const SCORE_POINTS: usize = 8;

/// Reads back (inertia, changed) from a two-element statistics buffer.
///
/// # Errors
/// Driver errors, including those of the queued work.
pub fn read_stats(gpu: &Gpu, stats: &CudaSlice<f64>) -> Result<Assignment> {
    let s = gpu.download_slice(stats, 2)?;
    Ok(Assignment {
        inertia: s[0],
        changed: s[1] as usize,
    })
}

/// Sums the (inertia, changed) pairs of `nblocks` blocks into `stats`, in block order.
///
/// # Errors
/// Driver errors.
pub fn stats_sum(
    gpu: &Gpu,
    block_stats: &CudaSlice<f64>,
    nblocks: usize,
    stats: &mut CudaSlice<f64>,
) -> Result<()> {
    let nb = dim_i32("kmeans", nblocks)?;
    let (f, name) = kernel(gpu, "kmeans_stats_sum_f64")?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; block_stats, &nb, stats);
    // SAFETY: (const double* block_stats, int nblocks, double* stats): 2·nblocks
    // partials were written by the assignment just queued; stats holds 2; one block.
    unsafe { go(b, &name, cfg((1, 1, 1), 0)) }
}

/// Σ‖a_j − b_j‖² of two K×D centroid matrices in f64, in a fixed order: how far an
/// update moved them. One read-back.
///
/// # Errors
/// [`Error::ShapeMismatch`]; driver errors.
pub fn shift<T: CudaElement>(gpu: &Gpu, a: &DeviceMatrix<T>, b: &DeviceMatrix<T>) -> Result<f64> {
    if a.dim() != b.dim() {
        return Err(Error::shape(
            "kmeans",
            format!("centroids {:?} and {:?}", a.dim(), b.dim()),
        ));
    }
    let len = a.len();
    if len == 0 {
        return Ok(0.0);
    }
    let nb = (len.div_ceil(THREADS as usize)).min(256);
    let mut block_stats = gpu.alloc::<f64>("kmeans", 2 * nb)?;
    let mut stats = gpu.alloc::<f64>("kmeans", 2)?;
    let (f, name) = kernel(gpu, crate::kernel!("kmeans_shift").of::<T>())?;
    let l = len as i64;
    let mut bld = gpu.stream().launch_builder(&f);
    push_args!(bld; &a.data, &b.data, &l, &mut block_stats);
    // SAFETY: (const T* a, const T* b, i64 len, double* block_stats): a and b hold len
    // elements (same shape, checked), block_stats 2 per block; loops guarded by len.
    unsafe { go(bld, &name, cfg((nb as u32, 1, 1), 0))? };
    stats_sum(gpu, &block_stats, nb, &mut stats)?;
    Ok(read_stats(gpu, &stats)?.inertia)
}

/// Assignment from a score matrix (N×K, `scores[i][j] = ‖c_j‖² − 2·x_i·c_j`):
/// `labels[i] = argmin_j scores[i][j]` (ties → the lowest j), counted against the
/// labels on entry (−1 for none). `x_sq_norms[i] = ‖x_i‖²` completes the inertia, each
/// term clamped at 0. One warp per point; deterministic.
///
/// # Errors
/// [`Error::ShapeMismatch`] when `x_sq_norms` or `labels` is shorter than N; driver errors.
pub fn assign_from_scores<T: CudaElement>(
    gpu: &Gpu,
    scores: &DeviceMatrix<T>,
    x_sq_norms: &CudaSlice<T>,
    w: Option<&CudaSlice<T>>,
    labels: &mut CudaSlice<i32>,
) -> Result<Assignment> {
    let n = scores.rows;
    if x_sq_norms.len() < n || labels.len() < n || w.is_some_and(|w| w.len() < n) {
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
        return Ok(Assignment::default());
    }
    let nb = n.div_ceil(SCORE_POINTS);
    let mut block_stats = gpu.alloc::<f64>("kmeans", 2 * nb)?;
    let mut stats = gpu.alloc::<f64>("kmeans", 2)?;
    let (ni, ki) = (dim_i32("kmeans", n)?, dim_i32("kmeans", scores.cols)?);
    let which = if w.is_some() { "_weighted" } else { "" };
    let (f, name) = kernel(gpu, format!("kmeans_assign_scores{which}_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &scores.data, x_sq_norms);
    if let Some(w) = w {
        push_args!(b; w);
    }
    push_args!(b; &ni, &ki, &mut *labels, &mut block_stats);
    // SAFETY: (const T* s, const T* xsq, [const T* w,] int n, int k, int* labels, double*
    // block_stats): s n×k, xsq, w and labels at least n (checked above), block_stats 2
    // per block of 8 points.
    unsafe { go(b, &name, cfg((nb as u32, 1, 1), 0))? };
    stats_sum(gpu, &block_stats, nb, &mut stats)?;
    read_stats(gpu, &stats)
}
