//! The k-means kernels both GPU backends launch (`kernels/kmeans.cu`): the assignment
//! from a score matrix (the `cublas` backend's distances come from a GEMM), the sum of
//! the per-block statistics, and the deterministic centroid update.
//!
//! The update sums the points of each centroid per chunk of points in shared memory,
//! then adds the chunks in chunk order; the chunking depends on N, K and D only, so the
//! summation order, hence the bits, are the same on every run.

use crate::push_args;
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, LaunchConfig, PushKernelArg};
use ndgpu_core::{Assignment, Error, Result};

use crate::kernels::KernelFile;
use crate::launch::{blocks, dim_i32, go};
use crate::{CudaElement, DeviceMatrix, Gpu};

/// Threads of every k-means kernel.
pub const THREADS: u32 = 256;
/// Warps of the partial-sum kernel (`W` in `km_accumulate_partials`).
const WARPS: usize = 8;
/// Shared memory the partial-sum kernel may take (under the 48 KB static limit).
const PARTIAL_SMEM: usize = 40 * 1024;
/// Cap on the chunk partials, in elements (G·K·D): 8 Mi.
const PARTIAL_CAP: usize = 1 << 23;
/// Smallest chunk of points per partial.
const MIN_CHUNK: usize = 4096;
/// Points per block of the score assignment (one warp each).
const SCORE_POINTS: usize = 8;

/// A launch configuration of the k-means kernels.
pub fn cfg(grid: (u32, u32, u32), shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: grid,
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: shared,
    }
}

/// A k-means kernel and its name.
///
/// # Errors
/// NVRTC and driver errors.
pub fn kernel(gpu: &Gpu, name: impl Into<String>) -> Result<(CudaFunction, String)> {
    let name = name.into();
    Ok((gpu.function(KernelFile::KMEANS, &name)?, name))
}

/// The chunking of the deterministic centroid sums; depends on the shape only.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Points per chunk: chunk `c` sums points `c·chunk ..` of the whole of X, wherever
    /// they are stored (a backend over several devices sums the chunks of its shards).
    pub chunk: usize,
    /// Number of chunks (partials).
    pub g: usize,
    kb: usize,
    db: usize,
    /// Bytes of one count: an `i32`, or a `T` with sample weights.
    mass: usize,
}

impl Plan {
    /// The chunking for N points, K centroids, D dimensions in `T`; `weighted`: with
    /// sample weights (the counts are sums of weights in `T`). The points of a chunk
    /// do not depend on `weighted`.
    pub fn new<T: CudaElement>(n: usize, k: usize, d: usize, weighted: bool) -> Plan {
        let db = d.clamp(1, 128);
        let mass = if weighted {
            std::mem::size_of::<T>()
        } else {
            4
        };
        let kb = (PARTIAL_SMEM / (WARPS * (db * std::mem::size_of::<T>() + mass))).clamp(1, k);
        let gmax = (PARTIAL_CAP / (k * d).max(1)).max(1);
        let chunk = n.div_ceil(gmax).max(MIN_CHUNK);
        Plan {
            chunk,
            g: n.div_ceil(chunk).max(1),
            kb,
            db,
            mass,
        }
    }
    fn smem<T>(&self) -> u32 {
        (WARPS * self.kb * (self.db * std::mem::size_of::<T>() + self.mass)) as u32
    }
    /// The dynamic shared memory of the whole-row partial-sum kernel
    /// (`km_accumulate_rows`) for K centroids of D dimensions: every warp's K×D sum, K
    /// masses and 32 scratch elements (8·K masses keep them aligned).
    fn rows_smem<T>(&self, k: usize, d: usize) -> usize {
        WARPS * (k * (d * std::mem::size_of::<T>() + self.mass) + 32 * std::mem::size_of::<T>())
    }
    /// The kernel that sums `chunks` chunks of points for K centroids of D dimensions in
    /// `T` on a device of `sms` SMs whose blocks may be granted `optin` bytes of shared
    /// memory: the whole-row kernel where D ≤ 32, every warp's K×D sum fits and its one
    /// block per chunk fills the SMs (at least as many chunks as SMs); else cluster and
    /// dimension ranges, whose blocks are more and smaller. Both give the same bits.
    pub fn chunk_sums<T>(
        &self,
        k: usize,
        d: usize,
        chunks: usize,
        optin: usize,
        sms: usize,
    ) -> ChunkSums {
        let smem = self.rows_smem::<T>(k, d);
        if d <= 32 && smem <= optin && chunks >= sms {
            ChunkSums::WholeRows { smem }
        } else {
            ChunkSums::Ranges {
                clusters: k.div_ceil(self.kb),
                dims: d.div_ceil(self.db),
            }
        }
    }
}

/// The kernel that forms a set of chunk sums ([`Plan::chunk_sums`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkSums {
    /// `km_accumulate_rows`: one block per chunk, taking every row, granted `smem` bytes
    /// of shared memory.
    WholeRows {
        /// Bytes of dynamic shared memory a block.
        smem: usize,
    },
    /// `km_accumulate_partials`: per chunk, a block for each of `clusters` ranges of
    /// centroids and `dims` ranges of dimensions.
    Ranges {
        /// Ranges of centroids.
        clusters: usize,
        /// Ranges of dimensions.
        dims: usize,
    },
}

impl std::fmt::Display for ChunkSums {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkSums::WholeRows { .. } => write!(f, "whole-row chunk sums"),
            ChunkSums::Ranges { clusters, dims } => write!(
                f,
                "chunk sums over {clusters} centroid and {dims} dimension ranges"
            ),
        }
    }
}

/// The per-chunk masses of the update (G×K): point counts, or with sample weights the
/// sums of the weights in `T`.
#[derive(Debug)]
pub enum Masses<T> {
    /// Point counts.
    Counts(CudaSlice<i32>),
    /// Sums of sample weights.
    Weights(CudaSlice<T>),
}

impl<T: CudaElement> Masses<T> {
    /// `len` masses of the kind of `weighted`.
    ///
    /// # Errors
    /// Out of memory.
    pub fn alloc(gpu: &Gpu, len: usize, weighted: bool) -> Result<Self> {
        Ok(if weighted {
            Masses::Weights(gpu.alloc("kmeans", len)?)
        } else {
            Masses::Counts(gpu.alloc("kmeans", len)?)
        })
    }
}

/// Pushes `masses` from element `from` on as the next argument of launch builder `b`
/// (the view lives to the end of the caller's block, as the launch needs).
macro_rules! push_masses {
    ($b:ident; $masses:expr, $from:expr) => {
        let (mut counts, mut weights);
        match $masses {
            Masses::Counts(m) => {
                counts = m.slice_mut($from..);
                push_args!($b; &mut counts);
            }
            Masses::Weights(m) => {
                weights = m.slice_mut($from..);
                push_args!($b; &mut weights);
            }
        }
    };
}

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

/// Moves each centroid (rows of `c`, K×D) to the mean of the points of `x` (N×D) that
/// `labels` gives it (with sample weights `w`, N of them: Σ wᵢxᵢ / Σ wᵢ); a centroid
/// with no points (of no weight) stays where it is. The sums are formed in an order
/// fixed by N, K and D, so the result is bitwise reproducible.
///
/// # Errors
/// [`Error::InvalidArgument`] for more clusters than the kernel's grid takes; out of
/// memory; driver errors.
pub fn update<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
    w: Option<&CudaSlice<T>>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let (n, d, k) = (x.rows, x.cols, c.rows);
    if n == 0 || d == 0 {
        return Ok(());
    }
    let plan = Plan::new::<T>(n, k, d, w.is_some());
    // The last call's sums where the shape is the same (a fit's every iteration).
    let shape = (plan.g, k, d, w.is_some());
    let mut sums = match gpu.take_scratch::<UpdateScratch<T>>(UPDATE_SCRATCH) {
        Some(s) if s.shape == shape => s,
        _ => UpdateScratch {
            shape,
            partial: gpu.alloc::<T>("kmeans", plan.g * k * d)?,
            masses: Masses::alloc(gpu, plan.g * k, w.is_some())?,
        },
    };
    let (xv, lv) = (x.data.slice(0..n * d), labels.slice(0..n));
    let wv = w.map(|w| w.slice(0..n));
    let rows = Rows::new(&xv, &lv, wv.as_ref(), d);
    accumulate_chunks(gpu, &plan, rows, k, &mut sums.partial, &mut sums.masses, 0)?;
    finalize(gpu, &plan, &sums.partial, &sums.masses, c)?;
    gpu.keep_scratch(UPDATE_SCRATCH, sums);
    Ok(())
}

/// The key of the update's scratch on the runtime ([`Gpu::keep_scratch`]).
const UPDATE_SCRATCH: &str = "kmeans update";

/// The chunk sums and masses of an update of shape (chunks, K, D, weighted).
struct UpdateScratch<T> {
    shape: (usize, usize, usize, bool),
    partial: CudaSlice<T>,
    masses: Masses<T>,
}

/// Consecutive points of X (row-major, `n`×`d`), their labels and sample weights,
/// starting at the first point of a chunk.
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a, 'b, T> {
    /// The points.
    pub x: &'a CudaView<'b, T>,
    /// Their labels.
    pub labels: &'a CudaView<'b, i32>,
    /// Their sample weights, if any.
    pub w: Option<&'a CudaView<'b, T>>,
    /// How many.
    pub n: usize,
    /// Dimensions.
    pub d: usize,
}

impl<'a, 'b, T> Rows<'a, 'b, T> {
    /// The points of `x` (`labels.len()` rows of `d`) with their labels and weights.
    pub fn new(
        x: &'a CudaView<'b, T>,
        labels: &'a CudaView<'b, i32>,
        w: Option<&'a CudaView<'b, T>>,
        d: usize,
    ) -> Self {
        let n = labels.len();
        Rows { x, labels, w, n, d }
    }
}

/// The per-chunk sums and masses of the chunks that `rows` covers (⌈n / chunk⌉ of them,
/// the last possibly short), written to `partial` (G × K × D) and `masses` (G × K) from
/// chunk `first` on. A chunk's sum is formed in the same order wherever its points are
/// stored, so shards that start at chunk boundaries give the partials of the whole.
/// With weights in `rows`, the masses are [`Masses::Weights`] and the sums of w·x.
///
/// # Errors
/// [`Error::InvalidArgument`] for more clusters than the kernel's grid takes, or masses
/// of the other kind; [`Error::ShapeMismatch`] for views too short; driver errors.
pub fn accumulate_chunks<T: CudaElement>(
    gpu: &Gpu,
    plan: &Plan,
    rows: Rows<'_, '_, T>,
    k: usize,
    partial: &mut CudaSlice<T>,
    masses: &mut Masses<T>,
    first: usize,
) -> Result<()> {
    let Rows { x, labels, w, n, d } = rows;
    let chunks = n.div_ceil(plan.chunk);
    if n == 0 || d == 0 {
        return Ok(());
    }
    let masses_len = match &*masses {
        Masses::Counts(m) => m.len(),
        Masses::Weights(m) => m.len(),
    };
    if w.is_some() != matches!(masses, Masses::Weights(_)) {
        return Err(Error::invalid(
            "kmeans",
            "sample weights and the kind of masses of the update differ",
        ));
    }
    if x.len() < n * d
        || labels.len() < n
        || w.is_some_and(|w| w.len() < n)
        || partial.len() < (first + chunks) * k * d
        || masses_len < (first + chunks) * k
    {
        return Err(Error::shape(
            "kmeans",
            format!("{n} points of {d} dimensions in {chunks} chunks: views too short"),
        ));
    }
    let (gy, gz) =
        match plan.chunk_sums::<T>(k, d, chunks, gpu.shared_memory_optin()?, gpu.sm_count()?) {
            ChunkSums::WholeRows { smem } => {
                return accumulate_rows(gpu, plan, rows, k, partial, masses, first, smem)
            }
            ChunkSums::Ranges { clusters, dims } => (clusters, dims),
        };
    if gy > 65535 || gz > 65535 {
        return Err(Error::invalid(
            "kmeans",
            format!("k = {k}, D = {d}: too many clusters for the update kernel"),
        ));
    }
    let (ni, di, ki) = (
        dim_i32("kmeans", n)?,
        dim_i32("kmeans", d)?,
        dim_i32("kmeans", k)?,
    );
    let (chunk, kb, db) = (plan.chunk as i32, plan.kb as i32, plan.db as i32);
    let which = if w.is_some() { "_weighted" } else { "" };
    let (f, name) = kernel(
        gpu,
        format!("kmeans_accumulate_partials{which}_{}", T::SUFFIX),
    )?;
    let mut partial = partial.slice_mut(first * k * d..);
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; x, labels);
    if let Some(w) = w {
        push_args!(b; w);
    }
    push_args!(b; &ni, &di, &ki, &chunk, &kb, &db, &mut partial);
    push_masses!(b; masses, first * k);
    // SAFETY: (x, labels, [w,] n, d, k, chunk, kb, db, partial, masses): grid (chunks,
    // ⌈k/kb⌉, ⌈d/db⌉) with chunks·chunk ≥ n; x holds n×d, labels n values in [0, k)
    // (written by an assignment), w n; partial holds chunks×k×d and the masses chunks×k
    // from chunk `first` on (checked above), ints, or T with weights (checked above);
    // the dynamic shared memory is 8·kb·(db·size_of T + size of a mass) bytes ≤ 40 KB,
    // as the kernel lays it out.
    let grid = (chunks as u32, gy as u32, gz as u32);
    unsafe { go(b, &name, cfg(grid, plan.smem::<T>())) }
}

/// `accumulate_chunks` by `km_accumulate_rows` (D ≤ 32, `smem` ≤ the device's opt-in
/// limit bytes of shared memory for its one block per chunk), the views checked by the
/// caller.
#[allow(clippy::too_many_arguments)]
fn accumulate_rows<T: CudaElement>(
    gpu: &Gpu,
    plan: &Plan,
    rows: Rows<'_, '_, T>,
    k: usize,
    partial: &mut CudaSlice<T>,
    masses: &mut Masses<T>,
    first: usize,
    smem: usize,
) -> Result<()> {
    let Rows { x, labels, w, n, d } = rows;
    let chunks = n.div_ceil(plan.chunk);
    let (ni, di, ki) = (
        dim_i32("kmeans", n)?,
        dim_i32("kmeans", d)?,
        dim_i32("kmeans", k)?,
    );
    let chunk = plan.chunk as i32;
    let which = if w.is_some() { "_weighted" } else { "" };
    let (f, name) = kernel(gpu, format!("kmeans_accumulate_rows{which}_{}", T::SUFFIX))?;
    gpu.grant_shared_memory(&f, &name)?;
    let mut partial = partial.slice_mut(first * k * d..);
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; x, labels);
    if let Some(w) = w {
        push_args!(b; w);
    }
    push_args!(b; &ni, &di, &ki, &chunk, &mut partial);
    push_masses!(b; masses, first * k);
    // SAFETY: (x, labels, [w,] n, d, k, chunk, partial, masses): one block per chunk,
    // chunks·chunk ≥ n; x holds n×d (d ≤ 32), labels n (values outside [0, k) are
    // skipped), w n; partial holds chunks×k×d and the masses chunks×k from chunk `first`
    // on (checked by accumulate_chunks), ints, or T with weights (checked there); the
    // dynamic shared memory, 8·(k·(d·size_of T + size of a mass) + 32·size_of T) bytes
    // as the kernel lays it out, is granted above.
    unsafe { go(b, &name, cfg((chunks as u32, 1, 1), smem as u32)) }
}

/// Moves each centroid to the sum of the `plan.g` chunk partials divided by the sum of
/// the masses, adding them in chunk order; a centroid with no points (of no weight)
/// stays.
///
/// # Errors
/// Driver errors.
pub fn finalize<T: CudaElement>(
    gpu: &Gpu,
    plan: &Plan,
    partial: &CudaSlice<T>,
    masses: &Masses<T>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let (g, k, d) = (
        dim_i32("kmeans", plan.g)?,
        dim_i32("kmeans", c.rows)?,
        dim_i32("kmeans", c.cols)?,
    );
    let grid = (blocks(c.len(), 32), 1, 1);
    let which = match masses {
        Masses::Counts(_) => "",
        Masses::Weights(_) => "_weighted",
    };
    let (f, name) = kernel(gpu, format!("kmeans_finalize{which}_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; partial);
    match masses {
        Masses::Counts(m) => push_args!(b; m),
        Masses::Weights(m) => push_args!(b; m),
    }
    push_args!(b; &g, &k, &d, &mut c.data);
    // SAFETY: (const T* partial, const int*/const T* masses, int g, int k, int d, T* c):
    // one block per 32 of the k×d centroid coordinates, guarded by k·d; partial holds
    // g×k×d, the masses g×k (of the kernel's type: the entry point follows the kind).
    unsafe { go(b, &name, cfg(grid, 0)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The H100's and H200's opt-in shared memory a block, and SM counts.
    const OPTIN: usize = 232_448;

    #[test]
    fn whole_rows_where_d_is_at_most_32_the_sums_fit_and_the_chunks_fill_the_sms() {
        // 2^20 points, D = 32, K = 128: 256 chunks of 4096, 8 warps of 128×32 f32 sums,
        // 128 counts and 32 scratch words each.
        let p = Plan::new::<f32>(1 << 20, 128, 32, false);
        assert_eq!((p.chunk, p.g), (4096, 256));
        let smem = 8 * (128 * (32 * 4 + 4) + 32 * 4);
        assert_eq!(
            p.chunk_sums::<f32>(128, 32, p.g, OPTIN, 132),
            ChunkSums::WholeRows { smem }
        );
        // Fewer chunks than SMs (a shard, or a small N): the ranges' more blocks.
        let ranges = ChunkSums::Ranges {
            clusters: 128usize.div_ceil(p.kb),
            dims: 1,
        };
        assert_eq!(p.chunk_sums::<f32>(128, 32, 131, OPTIN, 132), ranges);
        // Shared memory short of the sums.
        assert_eq!(p.chunk_sums::<f32>(128, 32, p.g, smem - 1, 132), ranges);
        // D over 32.
        let wide = Plan::new::<f32>(1 << 20, 16, 33, false);
        assert!(matches!(
            wide.chunk_sums::<f32>(16, 33, wide.g, OPTIN, 132),
            ChunkSums::Ranges { .. }
        ));
        // f64 with weights: masses of 8 bytes.
        let w = Plan::new::<f64>(1 << 20, 64, 32, true);
        assert_eq!(
            w.chunk_sums::<f64>(64, 32, w.g, OPTIN, 132),
            ChunkSums::WholeRows {
                smem: 8 * (64 * (32 * 8 + 8) + 32 * 8)
            }
        );
        // K = 1024 at D = 32 does not fit (8 warps × 128 KB).
        let big = Plan::new::<f32>(1 << 20, 1024, 32, false);
        assert!(matches!(
            big.chunk_sums::<f32>(1024, 32, big.g, OPTIN, 132),
            ChunkSums::Ranges { .. }
        ));
    }
}
