//! One launch function per kernel of `kernels/kmeans.cu` that only this backend
//! launches (the fused and report 000's assignments, the atomic update), and the
//! scratch buffers of an assignment. The score assignment, the statistics sum and the
//! deterministic update are the runtime's (`ndgpu_cuda_runtime::kmeans`).

use cudarc::driver::{CudaSlice, PushKernelArg};
use ndgpu_core::Result;
use ndgpu_cuda_runtime::kmeans::{cfg, kernel};
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
    /// Per-block (inertia, changed) pairs of the fused assignment.
    pub block_stats: CudaSlice<f64>,
    /// (inertia, changed): the one read-back per assignment.
    pub stats: CudaSlice<f64>,
    /// ‖c_j‖².
    pub cnorm: CudaSlice<T>,
}

impl<T: CudaElement> Workspace<T> {
    pub(super) fn new(gpu: &Gpu, n: usize, k: usize) -> Result<Self> {
        Ok(Workspace {
            block_stats: gpu.alloc("kmeans", 2 * n.div_ceil(fused_points::<T>()))?,
            stats: gpu.alloc("kmeans", 2)?,
            cnorm: gpu.alloc("kmeans", k)?,
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
    push_args!(b; &x.data, &c.data, &n, &k, &d, labels, stats);
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
    push_args!(b; &x.data, labels, &n, &d, sums, counts);
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
    push_args!(b; sums, counts, &k, &d, &mut c.data);
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
    push_args!(b; &c.data, &k, &d, cnorm);
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
    push_args!(b; &x.data, &c.data, cnorm, &n, &k, &d, labels, block_stats);
    // SAFETY: (const T* x, const T* c, const T* cnorm, int n, int k, int d, int* labels,
    // double* block_stats): x n×d, c k×d, cnorm k, labels n, block_stats 2 per block (the
    // workspace holds 2·ceil(n / points per block)); loads guarded by n, k, d.
    unsafe { go(b, &name, cfg((nb as u32, 1, 1), 0))? };
    Ok(nb)
}
