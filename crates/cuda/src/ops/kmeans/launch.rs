//! One launch function per kernel of `kernels/kmeans.cu`, the grid arithmetic, and the
//! scratch buffers of an iteration.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchArgs, LaunchConfig, PushKernelArg};
use ndgpu_core::{Error, Result};

use crate::kernels::KernelFile;
use crate::runtime::driver;
use crate::{blocks, dim_i32, CudaElement, DeviceMatrix, Gpu};

/// Threads of every k-means kernel.
const THREADS: u32 = 256;
/// Warps of the partial-sum kernel (`W` in `km_accumulate_partials`).
const WARPS: usize = 8;
/// Shared memory the partial-sum kernel may take (under the 48 KB static limit).
const PARTIAL_SMEM: usize = 40 * 1024;
/// Cap on the chunk partials, in elements (G·K·D): 8 Mi.
const PARTIAL_CAP: usize = 1 << 23;
/// Smallest chunk of points per partial.
const MIN_CHUNK: usize = 4096;

fn cfg(grid: (u32, u32, u32), shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: grid,
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: shared,
    }
}

fn kernel(gpu: &Gpu, name: String) -> Result<(CudaFunction, String)> {
    Ok((gpu.function(KernelFile::KMeans, &name)?, name))
}

/// Queues a built launch.
///
/// # Safety
/// The pushed arguments must match the kernel's parameters and cover every index the
/// kernel derives from them and `cfg`.
unsafe fn go(mut b: LaunchArgs<'_>, name: &str, cfg: LaunchConfig) -> Result<()> {
    b.launch(cfg)
        .map(|_| ())
        .map_err(|e| driver(format!("launching {name}"), e))
}

/// Points per block of the fused assignment: 16·TP, TP = 8 for f32, 4 for f64
/// (`KM_KERNELS` in kmeans.cu).
pub(super) fn fused_points<T: CudaElement>() -> usize {
    if std::mem::size_of::<T>() == 4 {
        128
    } else {
        64
    }
}

/// The chunking of the deterministic centroid sums; depends on the shape only, so the
/// summation order (hence the bits) is the same on every run and device.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    chunk: usize,
    /// Number of chunks (partials).
    pub g: usize,
    kb: usize,
    db: usize,
}

impl Plan {
    pub(super) fn new<T: CudaElement>(n: usize, k: usize, d: usize) -> Plan {
        let db = d.clamp(1, 128);
        let kb = (PARTIAL_SMEM / (WARPS * (db * std::mem::size_of::<T>() + 4))).clamp(1, k);
        let gmax = (PARTIAL_CAP / (k * d).max(1)).max(1);
        let chunk = n.div_ceil(gmax).max(MIN_CHUNK);
        Plan {
            chunk,
            g: n.div_ceil(chunk).max(1),
            kb,
            db,
        }
    }
    fn smem<T>(&self) -> u32 {
        (WARPS * self.kb * (self.db * std::mem::size_of::<T>() + 4)) as u32
    }
}

/// Scratch of the assignment and update steps for one shape, allocated once per run.
pub(super) struct Workspace<T> {
    /// Per-block (inertia, changed) pairs of the fused or scores assignment.
    pub block_stats: CudaSlice<f64>,
    /// (inertia, changed): the one read-back per iteration.
    pub stats: CudaSlice<f64>,
    /// ‖c_j‖².
    pub cnorm: CudaSlice<T>,
    /// G×K×D chunk partials (fused) or K×D sums (atomic).
    pub sums: CudaSlice<T>,
    /// G×K counts (fused) or K counts (atomic).
    pub counts: CudaSlice<i32>,
    /// The chunking of the deterministic update.
    pub plan: Plan,
}

impl<T: CudaElement> Workspace<T> {
    pub(super) fn new(gpu: &Gpu, n: usize, k: usize, d: usize, atomic: bool) -> Result<Self> {
        let plan = Plan::new::<T>(n, k, d);
        let groups = if atomic { 1 } else { plan.g };
        Ok(Workspace {
            block_stats: gpu.alloc("kmeans", 2 * n.div_ceil(fused_points::<T>()))?,
            stats: gpu.alloc("kmeans", 2)?,
            cnorm: gpu.alloc("kmeans", k)?,
            sums: gpu.alloc("kmeans", groups * k * d)?,
            counts: alloc_i32(gpu, groups * k)?,
            plan,
        })
    }
}

/// `len` zeroed ints (at least one).
pub(super) fn alloc_i32(gpu: &Gpu, len: usize) -> Result<CudaSlice<i32>> {
    gpu.stream()
        .alloc_zeros::<i32>(len.max(1))
        .map_err(|e| driver(format!("kmeans: allocating {len} ints"), e))
}

pub(super) fn zero<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    gpu: &Gpu,
    s: &mut CudaSlice<T>,
) -> Result<()> {
    gpu.stream()
        .memset_zeros(s)
        .map_err(|e| driver("kmeans: zeroing scratch", e))
}

/// The (n, k, d) of x against centroids as kernel ints.
fn dims<T>(x: &DeviceMatrix<T>, c: &DeviceMatrix<T>) -> Result<(i32, i32, i32)> {
    Ok((
        dim_i32("kmeans", x.rows)?,
        dim_i32("kmeans", c.rows)?,
        dim_i32("kmeans", x.cols)?,
    ))
}

pub(super) fn assign_direct<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    c: &DeviceMatrix<T>,
    labels: &mut CudaSlice<i32>,
    stats: &mut CudaSlice<f64>,
) -> Result<()> {
    let (n, k, d) = dims(x, c)?;
    let (f, name) = kernel(gpu, format!("kmeans_assign_direct_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(&x.data)
        .arg(&c.data)
        .arg(&n)
        .arg(&k)
        .arg(&d)
        .arg(labels)
        .arg(stats);
    // SAFETY: (const T* x, const T* c, int n, int k, int d, int* labels, double* stats):
    // x is n×d, c k×d, labels n, stats 2; one thread per point, guarded by n.
    unsafe { go(b, &name, cfg((blocks(x.rows, 256), 1, 1), 0)) }
}

pub(super) fn accumulate_atomic<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
    sums: &mut CudaSlice<T>,
    counts: &mut CudaSlice<i32>,
) -> Result<()> {
    let (n, d) = (dim_i32("kmeans", x.rows)?, dim_i32("kmeans", x.cols)?);
    let (f, name) = kernel(gpu, format!("kmeans_accumulate_atomic_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(&x.data)
        .arg(labels)
        .arg(&n)
        .arg(&d)
        .arg(sums)
        .arg(counts);
    // SAFETY: (const T* x, const int* labels, int n, int d, T* sums, int* counts): labels
    // hold n values in [0, k) (written by an assignment), sums k×d, counts k.
    unsafe { go(b, &name, cfg((blocks(x.rows, 256), 1, 1), 0)) }
}

pub(super) fn divide<T: CudaElement>(
    gpu: &Gpu,
    sums: &CudaSlice<T>,
    counts: &CudaSlice<i32>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let (k, d) = (dim_i32("kmeans", c.rows)?, dim_i32("kmeans", c.cols)?);
    let grid = (blocks(c.len(), 256), 1, 1);
    let (f, name) = kernel(gpu, format!("kmeans_divide_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(sums).arg(counts).arg(&k).arg(&d).arg(&mut c.data);
    // SAFETY: (const T* sums, const int* counts, int k, int d, T* c): one thread per
    // element of the k×d centroids, guarded by k·d.
    unsafe { go(b, &name, cfg(grid, 0)) }
}

pub(super) fn centroid_norms<T: CudaElement>(
    gpu: &Gpu,
    c: &DeviceMatrix<T>,
    cnorm: &mut CudaSlice<T>,
) -> Result<()> {
    let (k, d) = (dim_i32("kmeans", c.rows)?, dim_i32("kmeans", c.cols)?);
    let (f, name) = kernel(gpu, format!("kmeans_centroid_norms_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(&c.data).arg(&k).arg(&d).arg(cnorm);
    // SAFETY: (const T* c, int k, int d, T* cnorm): one thread per centroid, cnorm holds k.
    unsafe { go(b, &name, cfg((blocks(c.rows, 256), 1, 1), 0)) }
}

/// Launches the fused assignment; returns the number of blocks (of `block_stats` pairs).
pub(super) fn assign_fused<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    c: &DeviceMatrix<T>,
    cnorm: &CudaSlice<T>,
    labels: &mut CudaSlice<i32>,
    block_stats: &mut CudaSlice<f64>,
) -> Result<usize> {
    let (n, k, d) = dims(x, c)?;
    let nb = x.rows.div_ceil(fused_points::<T>());
    let (f, name) = kernel(gpu, format!("kmeans_assign_fused_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(&x.data)
        .arg(&c.data)
        .arg(cnorm)
        .arg(&n)
        .arg(&k)
        .arg(&d)
        .arg(labels)
        .arg(block_stats);
    // SAFETY: (const T* x, const T* c, const T* cnorm, int n, int k, int d, int* labels,
    // double* block_stats): x n×d, c k×d, cnorm k, labels n, block_stats 2 per block (the
    // workspace holds 2·ceil(n / points per block)); loads guarded by n, k, d.
    unsafe { go(b, &name, cfg((nb as u32, 1, 1), 0))? };
    Ok(nb)
}

/// Launches the score-matrix assignment (one warp per point); returns the block count.
pub(super) fn assign_scores<T: CudaElement>(
    gpu: &Gpu,
    scores: &DeviceMatrix<T>,
    xsq: &CudaSlice<T>,
    labels: &mut CudaSlice<i32>,
    block_stats: &mut CudaSlice<f64>,
) -> Result<usize> {
    let (n, k) = (
        dim_i32("kmeans", scores.rows)?,
        dim_i32("kmeans", scores.cols)?,
    );
    let nb = scores.rows.div_ceil(8);
    let (f, name) = kernel(gpu, format!("kmeans_assign_scores_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(&scores.data)
        .arg(xsq)
        .arg(&n)
        .arg(&k)
        .arg(labels)
        .arg(block_stats);
    // SAFETY: (const T* s, const T* xsq, int n, int k, int* labels, double* block_stats):
    // s n×k, xsq and labels n (checked by the caller), block_stats 2 per block.
    unsafe { go(b, &name, cfg((nb as u32, 1, 1), 0))? };
    Ok(nb)
}

pub(super) fn stats_sum(
    gpu: &Gpu,
    block_stats: &CudaSlice<f64>,
    nblocks: usize,
    stats: &mut CudaSlice<f64>,
) -> Result<()> {
    let nb = dim_i32("kmeans", nblocks)?;
    let (f, name) = kernel(gpu, "kmeans_stats_sum_f64".into())?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(block_stats).arg(&nb).arg(stats);
    // SAFETY: (const double* block_stats, int nblocks, double* stats): 2·nblocks
    // partials were written by the assignment just queued; stats holds 2; one block.
    unsafe { go(b, &name, cfg((1, 1, 1), 0)) }
}

pub(super) fn accumulate_partials<T: CudaElement>(
    gpu: &Gpu,
    plan: &Plan,
    x: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
    k: usize,
    partial: &mut CudaSlice<T>,
    pcount: &mut CudaSlice<i32>,
) -> Result<()> {
    let gy = k.div_ceil(plan.kb);
    let gz = x.cols.div_ceil(plan.db);
    if gy > 65535 || gz > 65535 {
        return Err(Error::invalid(
            "kmeans",
            format!(
                "k = {k}, D = {}: too many clusters for the update kernel",
                x.cols
            ),
        ));
    }
    let (n, d, ki) = (
        dim_i32("kmeans", x.rows)?,
        dim_i32("kmeans", x.cols)?,
        dim_i32("kmeans", k)?,
    );
    let (chunk, kb, db) = (plan.chunk as i32, plan.kb as i32, plan.db as i32);
    let (f, name) = kernel(gpu, format!("kmeans_accumulate_partials_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(&x.data)
        .arg(labels)
        .arg(&n)
        .arg(&d)
        .arg(&ki)
        .arg(&chunk)
        .arg(&kb)
        .arg(&db)
        .arg(partial)
        .arg(pcount);
    // SAFETY: (x, labels, n, d, k, chunk, kb, db, partial, pcount): grid (g, ⌈k/kb⌉,
    // ⌈d/db⌉) with g·chunk ≥ n; partial holds g×k×d, pcount g×k; the dynamic shared
    // memory is 8·kb·(db·size_of T + 4) bytes ≤ 40 KB, as the kernel lays it out.
    let grid = (plan.g as u32, gy as u32, gz as u32);
    unsafe { go(b, &name, cfg(grid, plan.smem::<T>())) }
}

pub(super) fn finalize<T: CudaElement>(
    gpu: &Gpu,
    plan: &Plan,
    partial: &CudaSlice<T>,
    pcount: &CudaSlice<i32>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let (g, k, d) = (
        dim_i32("kmeans", plan.g)?,
        dim_i32("kmeans", c.rows)?,
        dim_i32("kmeans", c.cols)?,
    );
    let grid = (blocks(c.len(), 32), 1, 1);
    let (f, name) = kernel(gpu, format!("kmeans_finalize_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(partial)
        .arg(pcount)
        .arg(&g)
        .arg(&k)
        .arg(&d)
        .arg(&mut c.data);
    // SAFETY: (const T* partial, const int* pcount, int g, int k, int d, T* c): one block
    // per 32 of the k×d centroid coordinates, guarded by k·d; partial holds g×k×d,
    // pcount g×k.
    unsafe { go(b, &name, cfg(grid, 0)) }
}
