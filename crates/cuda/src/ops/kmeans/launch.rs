//! One launch function per kernel of `kernels/kmeans.cu` that only this backend
//! launches (the fused and report 000's assignments, the atomic update), and the
//! scratch buffers of an assignment. The score assignment, the statistics sum and the
//! deterministic update are the runtime's (`ndgpu_cuda_runtime::kmeans`).

use cudarc::driver::{CudaSlice, PushKernelArg};
use ndgpu_core::{DType, Result};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::kmeans::{cfg, kernel, Masses};
use ndgpu_cuda_runtime::launch::go;
use ndgpu_cuda_runtime::push_args;
use ndgpu_cuda_runtime::{blocks, dim_i32, driver, CudaElement, DeviceMatrix, Gpu};

/// Points per block of the fused assignment: 16·TP, TP = 8 for f32, 4 for f64
/// (`KM_KERNELS` in kmeans.cu).
pub(super) fn fused_points<T: CudaElement>() -> usize {
    if std::mem::size_of::<T>() == 4 {
        128
    } else {
        64
    }
}

/// Scratch of one assignment.
pub(super) struct Workspace<T> {
    /// Each point's distance to its centroid (for the inertia).
    pub pdist: CudaSlice<T>,
    /// Whether each point's label changed.
    pub pchg: CudaSlice<u8>,
    /// Per-block (inertia, changed) pairs of the point statistics.
    pub block_stats: CudaSlice<f64>,
    /// (inertia, changed): the one read-back per assignment.
    pub stats: CudaSlice<f64>,
    /// ‖c_j‖².
    pub cnorm: CudaSlice<T>,
    /// Blocks of the point statistics done: zero between assignments (the last block
    /// zeroes it).
    pub done: CudaSlice<u32>,
}

/// Blocks of the point statistics' sum for n points (a function of n only).
fn stats_blocks(n: usize) -> usize {
    n.div_ceil(256).clamp(1, 512)
}

impl<T: CudaElement> Workspace<T> {
    pub(super) fn new(gpu: &Gpu, n: usize, k: usize) -> Result<Self> {
        Ok(Workspace {
            pdist: gpu.alloc("kmeans", n)?,
            pchg: gpu.alloc("kmeans", n)?,
            block_stats: gpu.alloc("kmeans", 2 * stats_blocks(n))?,
            stats: gpu.alloc("kmeans", 2)?,
            cnorm: gpu.alloc("kmeans", k)?,
            done: gpu.alloc_zeroed("kmeans", 1)?,
        })
    }
}

/// The points the tensor-core assignment leaves to the fused one: a list of rows and its
/// length on the device.
pub(super) struct Ties {
    pub list: CudaSlice<i32>,
    pub count: CudaSlice<i32>,
}

impl Ties {
    /// The list, uninitialised, and its count, zero: the count is zero between
    /// assignments (the point statistics zero it after the list kernel read it).
    pub(super) fn new(gpu: &Gpu, n: usize) -> Result<Self> {
        Ok(Ties {
            list: gpu.alloc("kmeans", n)?,
            count: gpu.alloc_zeroed("kmeans", 1)?,
        })
    }
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
    w: Option<&CudaSlice<T>>,
    labels: &mut CudaSlice<i32>,
    stats: &mut CudaSlice<f64>,
) -> Result<()> {
    let (n, k, d) = dims(x, c)?;
    let which = if w.is_some() { "_weighted" } else { "" };
    let (f, name) = kernel(gpu, format!("kmeans_assign_direct{which}_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &x.data, &c.data);
    if let Some(w) = w {
        push_args!(b; w);
    }
    push_args!(b; &n, &k, &d, labels, stats);
    // SAFETY: (const T* x, const T* c, [const T* w,] int n, int k, int d, int* labels,
    // double* stats): x is n×d, c k×d, w and labels n, stats 2; one thread per point,
    // guarded by n.
    unsafe { go(b, &name, cfg((blocks(x.rows, 256), 1, 1), 0)) }
}

/// Report 000's update sums: with sample weights `w`, of w·x into `sums` and of w into
/// `masses` (its `Weights`), else of x and counts (`Counts`).
pub(super) fn accumulate_atomic<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
    w: Option<&CudaSlice<T>>,
    sums: &mut CudaSlice<T>,
    masses: &mut Masses<T>,
) -> Result<()> {
    let (n, d) = (dim_i32("kmeans", x.rows)?, dim_i32("kmeans", x.cols)?);
    let which = if w.is_some() { "_weighted" } else { "" };
    let (f, name) = kernel(
        gpu,
        format!("kmeans_accumulate_atomic{which}_{}", T::SUFFIX),
    )?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &x.data, labels);
    match (w, masses) {
        (None, Masses::Counts(m)) => push_args!(b; &n, &d, sums, m),
        (Some(w), Masses::Weights(m)) => push_args!(b; w, &n, &d, sums, m),
        _ => {
            return Err(ndgpu_core::Error::invalid(
                "kmeans",
                "masses of the other kind",
            ))
        }
    }
    // SAFETY: (const T* x, const int* labels, [const T* w,] int n, int d, T* sums, int*
    // counts / T* wsum): labels hold n values in [0, k) (written by an assignment), w n,
    // sums k×d, the masses k, of the entry point's type (matched above).
    unsafe { go(b, &name, cfg((blocks(x.rows, 256), 1, 1), 0)) }
}

pub(super) fn divide<T: CudaElement>(
    gpu: &Gpu,
    sums: &CudaSlice<T>,
    masses: &Masses<T>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let (k, d) = (dim_i32("kmeans", c.rows)?, dim_i32("kmeans", c.cols)?);
    let grid = (blocks(c.len(), 256), 1, 1);
    let which = match masses {
        Masses::Counts(_) => "",
        Masses::Weights(_) => "_weighted",
    };
    let (f, name) = kernel(gpu, format!("kmeans_divide{which}_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; sums);
    match masses {
        Masses::Counts(m) => push_args!(b; m),
        Masses::Weights(m) => push_args!(b; m),
    }
    push_args!(b; &k, &d, &mut c.data);
    // SAFETY: (const T* sums, const int* counts / const T* wsum, int k, int d, T* c):
    // one thread per element of the k×d centroids, guarded by k·d; the masses hold k,
    // of the entry point's type.
    unsafe { go(b, &name, cfg(grid, 0)) }
}

pub(super) fn centroid_norms<T: CudaElement>(
    gpu: &Gpu,
    c: &DeviceMatrix<T>,
    cnorm: &mut CudaSlice<T>,
) -> Result<()> {
    let (k, d) = (dim_i32("kmeans", c.rows)?, dim_i32("kmeans", c.cols)?);
    let (f, name) = kernel(
        gpu,
        ndgpu_cuda_runtime::kernel!("kmeans_centroid_norms").of::<T>(),
    )?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &c.data, &k, &d, cnorm);
    // SAFETY: (const T* c, int k, int d, T* cnorm): one thread per centroid, cnorm holds k.
    unsafe { go(b, &name, cfg((blocks(c.rows, 256), 1, 1), 0)) }
}

/// Launches the fused assignment over every point, or, with `ties`, over the rows of the
/// list (whose length only the device knows: the grid strides over the most it can hold).
pub(super) fn assign_fused<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    c: &DeviceMatrix<T>,
    labels: &mut CudaSlice<i32>,
    ws: &mut Workspace<T>,
    ties: Option<&Ties>,
) -> Result<()> {
    let (n, k, d) = dims(x, c)?;
    let tiles = x.rows.div_ceil(fused_points::<T>());
    let grid = match ties {
        None => tiles,
        Some(_) => tiles.min(2 * gpu.sm_count()?),
    };
    // The list where the centroids fit the persistent list kernel (f32: only the
    // tensor-core assignment makes a list).
    let small = ties.is_some() && T::DTYPE == DType::F32 && tf32_persistent(c.rows, x.cols);
    let which = match (ties, small) {
        (None, _) => "",
        (Some(_), false) => "_list",
        (Some(_), true) => "_list_small",
    };
    let (f, name) = kernel(gpu, format!("kmeans_assign_fused{which}_{}", T::SUFFIX))?;
    let smem = if small { LIST_SMALL_SMEM } else { 0 };
    if small {
        gpu.grant_shared_memory(&f, &name)?;
    }
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &x.data, &c.data, &ws.cnorm, &n, &k, &d);
    if let Some(t) = ties {
        push_args!(b; &t.list, &t.count);
    }
    push_args!(b; labels, &mut ws.pdist, &mut ws.pchg);
    // SAFETY: (const T* x, const T* c, const T* cnorm, int n, int k, int d, [const int*
    // list, const int* count,] int* labels, T* pdist, unsigned char* pchg): x n×d, c k×d,
    // cnorm k, labels, pdist and pchg n; for the _list kernel, n rows in [0, n) and their
    // number ≤ n, written by the tensor-core assignment; loads guarded by n (or the
    // count), k, d; blocks stride over the tiles; the _list_small kernel only where
    // k ≤ 128 and 1 ≤ d ≤ 32 in f32, with its shared memory granted.
    unsafe { go(b, &name, cfg((grid as u32, 1, 1), smem)) }
}

/// Bytes of dynamic shared memory of `kmeans_assign_fused_list_small_f32`
/// (`KM_LIST_SMEM` in kmeans.cu): the transposed centroid tile and two point tiles
/// (32 × 132 words each), two raw point tiles and the raw centroids (128 × 33 words
/// each), the norms, three tiles' list entries and two tiles' previous labels.
const LIST_SMALL_SMEM: u32 = (3 * 32 * 132 + 3 * 128 * 33 + 128) * 4 + 5 * 128 * 4;

/// Bytes of dynamic shared memory of `kmeans_assign_tf32_small_f32` (`KT_SMALL_SMEM` in
/// kmeans_tc.cu): two raw point tiles, the raw centroids, the TF32 point and centroid
/// tiles, the norms, two tiles' previous labels and the two halves' best pairs.
const TF32_SMALL_SMEM: u32 =
    (2 * 128 * 36 + 128 * 33 + 2 * 128 * 36 + 128 + 2 * 128) * 4 + 2 * 128 * 12;

/// Whether the TF32 assignment of k centroids of d dimensions runs the persistent kernel
/// (`kmeans_assign_tf32_small_f32`), whose shared memory holds k ≤ 128 centroids of
/// 1 ≤ d ≤ 32.
pub(super) fn tf32_persistent(k: usize, d: usize) -> bool {
    k <= 128 && (1..=32).contains(&d)
}

/// The persistent kernel's blocks for `tiles` tiles of 128 points: two per SM at most.
pub(super) fn tf32_persistent_blocks(tiles: usize, sms: usize) -> usize {
    tiles.min(2 * sms)
}

/// The tensor-core assignment (f32): settles the points whose best TF32 score is clear
/// of the second by the error bound, lists the others in `ties` (whose count is zero).
/// With k ≤ 128 and 1 ≤ d ≤ 32, the kernel that stages the centroids once, forms their
/// norms into `ws.cnorm` and strides over the point tiles (two blocks per SM); else one
/// block per 128 points, reading the norms `centroid_norms` left in `ws.cnorm`.
pub(super) fn assign_tf32<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    c: &DeviceMatrix<T>,
    labels: &mut CudaSlice<i32>,
    ws: &mut Workspace<T>,
    ties: &mut Ties,
) -> Result<()> {
    let (n, k, d) = dims(x, c)?;
    let tiles = x.rows.div_ceil(128);
    let small = tf32_persistent(c.rows, x.cols);
    let (name, grid, smem) = if small {
        let name = "kmeans_assign_tf32_small_f32";
        (
            name,
            tf32_persistent_blocks(tiles, gpu.sm_count()?),
            TF32_SMALL_SMEM,
        )
    } else {
        ("kmeans_assign_tf32_f32", tiles, 0)
    };
    let f = gpu.function(KernelFile::KMEANS_TC, name)?;
    if small {
        gpu.grant_shared_memory(&f, name)?;
    }
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &x.data, &c.data, &mut ws.cnorm, &n, &k, &d, labels, &mut ws.pdist,
        &mut ws.pchg, &mut ties.list, &mut ties.count);
    // SAFETY: (const float* x, const float* c, [const] float* cnorm, int n, int k, int d,
    // int* labels, float* pdist, unsigned char* pchg, int* list, int* count): T is f32
    // (the caller's check); x n×d, c k×d, cnorm k (read by the general kernel, which
    // `centroid_norms` filled; written by block 0 of the small one), labels, pdist, pchg
    // and list n, count 1 (zero: see `Ties`); loads guarded by n, k, d; blocks stride over the
    // 128-point tiles; the small kernel only where k ≤ 128 and 1 ≤ d ≤ 32, with its
    // shared memory granted.
    unsafe { go(b, name, cfg((grid as u32, 1, 1), smem)) }
}

/// The (inertia, changed) pair of the per-point arrays, summed in a fixed order into
/// `ws.stats` by the same kernel's last block, which also zeroes the list's `count`.
pub(super) fn point_stats<T: CudaElement>(
    gpu: &Gpu,
    n: usize,
    w: Option<&CudaSlice<T>>,
    ws: &mut Workspace<T>,
    count: Option<&mut CudaSlice<i32>>,
) -> Result<()> {
    let nb = stats_blocks(n);
    let ni = dim_i32("kmeans", n)?;
    let which = if w.is_some() { "_weighted" } else { "" };
    let (f, name) = kernel(gpu, format!("kmeans_point_stats{which}_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &ws.pdist, &ws.pchg);
    if let Some(w) = w {
        push_args!(b; w);
    }
    push_args!(b; &ni, &mut ws.block_stats, &mut ws.stats, &mut ws.done);
    let none = 0u64;
    match count {
        Some(c) => push_args!(b; c),
        None => push_args!(b; &none),
    }
    // SAFETY: (const T* pdist, const unsigned char* pchg, [const T* w,] int n, double*
    // block_stats, double* stats, unsigned* done, int* count): pdist, pchg and w hold n
    // (every point settled by the assignment just queued), block_stats 2·nb, stats 2,
    // done 1 (zero, as the last block leaves it), count 1 or null; grid-stride loop
    // guarded by n.
    unsafe { go(b, &name, cfg((nb as u32, 1, 1), 0)) }
}
