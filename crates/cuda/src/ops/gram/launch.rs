//! The M·Mᵀ ladder's launches: stream-K's pieces and sums, the narrow kernel, the
//! tensor-core GEMM on the upper tiles (with stream-K on the FP64 tensor cores), the
//! mirror and the zero fill.

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ndgpu_core::{DType, Result};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{dim_i32, go, grid_1d};
use ndgpu_cuda_runtime::{driver, push_args, CudaElement, DeviceMatrix, Gpu};

use super::rules::{tc_blocks, tc_items, Cut};
use super::table::{Grid, TENSOR_CORE};
use crate::ops::matmul;

/// `out ← m·mᵀ` by stream-K (see `kernels/gram.cu`): the tiles' K-steps over `blocks`
/// blocks, pieces of tiles into a workspace, then their sums and mirrors.
pub(crate) fn stream_k<T: CudaElement>(
    gpu: &Gpu,
    (n, k): (i32, i32),
    c: Cut,
    blocks: usize,
    m: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    const TILE: usize = 128 * 128;
    let most = dim_i32("gram", c.most)?;
    let b = dim_i32("gram", blocks)?;
    let mut w = gpu.alloc::<T>("gram", blocks * c.most * TILE)?;
    let name = ndgpu_cuda_runtime::kernel!("gram_stream_k").of::<T>();
    let f = gpu.function(KernelFile::GRAM, name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &n, &k, &most, &m.data, &mut out.data, &mut w);
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", blocks)?, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: gram_stream_k_<dtype>(int N, int K, int MAXSEG, const T* A, T* C, T* W):
    // A n×k and C n×n row-major (buffers checked by the caller); block b of B takes
    // units [bU/B, (b+1)U/B) of the U = tiles·steps (B ≤ U, so none is empty) and meets
    // at most `most` tiles (cut), each piece going to slot b·MAXSEG + (its tile − the
    // block's first), a 128×128 tile of W, which holds blocks·most of them; every access
    // to A and C is bounds-checked against N and K.
    unsafe { go(l, name, cfg) }?;
    let name = ndgpu_cuda_runtime::kernel!("gram_stream_k_sum").of::<T>();
    let f = gpu.function(KernelFile::GRAM, name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &n, &k, &b, &most, &w, &mut out.data);
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", c.tiles)?, 16, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: gram_stream_k_sum_<dtype>(int N, int K, int B, int MAXSEG, const T* W, T* C):
    // block (tile, q) reads the slots the first launch wrote for `tile` (derived from
    // the same B ≤ 1024 and units) and writes rows [8q, 8q+8) of the tile in C and their
    // mirror, bounds-checked against N.
    unsafe { go(l, name, cfg) }
}

/// `out ← m·mᵀ` for a short, wide m by the narrow kernel (see `kernels/gram.cu`): the
/// slices' n×n partial products into a workspace, then their sums.
pub(crate) fn narrow<T: CudaElement>(
    gpu: &Gpu,
    (n, k): (i32, i32),
    (w, slices, len): (usize, usize, usize),
    m: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    let nn = m.rows * m.rows;
    let (si, li) = (dim_i32("gram", slices)?, dim_i32("gram", len)?);
    let mut p = gpu.alloc::<T>("gram", slices * nn)?;
    let name = match w {
        64 => ndgpu_cuda_runtime::kernel!("gram_narrow").of::<T>(),
        _ => ndgpu_cuda_runtime::kernel!("gram_narrow32").of::<T>(),
    };
    let f = gpu.function(KernelFile::GRAM, name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &n, &k, &li, &m.data, &mut p);
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", slices)?, 1, 1),
        block_dim: (((w / 4) * (w / 4)) as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: gram_narrow{,32}_<dtype>(int N, int K, int KS, const T* A, T* P): A n×k
    // row-major (checked by the caller), n ≤ W (64 or 32, the kernel the name picks, run
    // with (W/4)² threads); block b reads columns [b·KS, min((b+1)·KS, K)), nonempty for
    // b < slices = ⌈K / KS⌉, every access checked against N and K, and writes piece b,
    // n·n elements of P, which holds slices of them.
    unsafe { go(l, name, cfg) }?;
    let name = ndgpu_cuda_runtime::kernel!("gram_narrow_sum").of::<T>();
    let f = gpu.function(KernelFile::GRAM, name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &n, &si, &p, &mut out.data);
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", nn.div_ceil(32))?, 1, 1),
        block_dim: (1024, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: gram_narrow_sum_<dtype>(int N, int S, const T* P, T* C): P holds S pieces of
    // n·n, C n·n elements (checked by the caller); block b writes elements [32b, 32b+32)
    // below n·n, reading the same element (or its mirror) of each piece.
    unsafe { go(l, name, cfg) }
}

/// Zeros the whole of `out`.
pub(crate) fn zero<T: CudaElement>(gpu: &Gpu, out: &mut DeviceMatrix<T>) -> Result<()> {
    let len = out.len();
    gpu.stream()
        .memset_zeros(&mut out.data.slice_mut(0..len))
        .map_err(|e| driver("gram: zeroing the output", e))
}

/// `out ← m·mᵀ` by the `tensor_core` rung (and `wgmma`'s f64): the tensor-core GEMM on the
/// upper tiles, each result written with its mirror; f32 on mᵀ materialised first, f64
/// reading B's stages from m's rows (no copy).
pub(crate) fn tensor_core<T: CudaElement>(
    gpu: &Gpu,
    (n, k): (i32, i32),
    m: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    let name = TENSOR_CORE.kernel.of::<T>();
    let f = gpu.function(KernelFile::GRAM, name)?;
    let mut cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", tc_blocks::<T>(m.rows, m.cols))?, 1, 1),
        block_dim: (matmul::tc_shape::<T>().threads, 1, 1),
        shared_mem_bytes: matmul::tc_shared_memory::<T>(gpu, name, &f)?,
    };
    if T::DTYPE == DType::F64 {
        // B's stages read from M's rows: no transposed copy.
        cfg.shared_mem_bytes = TC_SMEM_BT_F64;
        let mut b = gpu.stream().launch_builder(&f);
        push_args!(b; &n, &k, &m.data, &mut out.data);
        // SAFETY: gram_tensor_core_f64(int N, int K, const double* A, double* C): A n×k
        // and C n×n (buffers checked by the caller); 128 / BN blocks per upper 128×128
        // tile, decoded from blockIdx.x as the kernel does; every access is bounds-checked
        // against N and K, and the kernel gets the TC_SMEM_BT bytes its stages take (the
        // grant above covers the device's whole opt-in limit).
        return unsafe { go(b, name, cfg) };
    }
    let mt = matmul::transposed(gpu, m)?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &n, &k, &m.data, &mt.data, &mut out.data);
    // SAFETY: gram_tensor_core_f32(int N, int K, const float* A, const float* At, float*
    // C): A n×k and C n×n (buffers checked by the caller), At k×n (allocated by
    // `transposed`); 128 / BN blocks per upper 128×128 tile, decoded from blockIdx.x as
    // the kernel does; every access is bounds-checked against N and K, and the kernel gets
    // the TC_SMEM(float) bytes its stages take.
    unsafe { go(b, name, cfg) }
}

/// `out ← m·mᵀ` (f64) by the DMMA kernel with stream-K over its blocks (`cut`, as
/// matmul's `stream_cut`): one launch for the stream blocks' ranges and, after them, one
/// block for each other item, the parts into a workspace of two 128×64 slots per stream
/// block; then their sums.
pub(crate) fn stream_tc<T: CudaElement>(
    gpu: &Gpu,
    (n, k): (i32, i32),
    paired: bool,
    cut: matmul::StreamCut,
    m: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    let items = tc_items(m.rows, paired);
    let (ti, bi) = (dim_i32("gram", cut.tiles)?, dim_i32("gram", cut.blocks)?);
    let pi = i32::from(paired);
    let (bm, bn) = matmul::tc_shape::<T>().tile;
    let mut w = gpu.alloc::<T>("gram", 2 * cut.blocks * bm * bn)?;
    let name = ndgpu_cuda_runtime::kernel!("gram_stream_tc").of::<T>();
    let f = gpu.function(KernelFile::GRAM, name)?;
    matmul::tc_shared_memory::<T>(gpu, name, &f)?;
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", cut.blocks + items - cut.tiles)?, 1, 1),
        block_dim: (matmul::tc_shape::<T>().threads, 1, 1),
        shared_mem_bytes: TC_SMEM_BT_F64,
    };
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &n, &k, &m.data, &mut out.data, &mut w, &ti, &bi);
    // SAFETY: gram_stream_tc_f64(int N, int K, const double* A, double* C, double* W,
    // int skt, int P): A n×k and C n×n (buffers checked by the caller); its items are
    // gram_tensor_core_f64's blocks, less the paired ones where A's rows are whole 16-byte
    // chunks (as `paired`, found here from the same pointer); blocks 0..P−1 take
    // nonempty ranges of the skt·⌈K/16⌉ units (P ≤ units / 4, stream_cut) and write parts
    // to slots 2b and 2b + 1 of W, which holds 2·P slots of 128×64; blocks P.. take items
    // skt.., one each, up to the last; every access to A and C is bounds-checked; the
    // kernel gets the TC_SMEM_BT bytes its stages take (granted above).
    unsafe { go(l, name, cfg) }?;
    let name = ndgpu_cuda_runtime::kernel!("gram_stream_tc_fix").of::<T>();
    let f = gpu.function(KernelFile::GRAM, name)?;
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", cut.tiles)?, 1, 1),
        block_dim: (matmul::tc_shape::<T>().threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &n, &k, &pi, &w, &mut out.data, &ti, &bi);
    // SAFETY: gram_stream_tc_fix_f64(int N, int K, int paired, const double* W, double* C,
    // int skt, int P): block t < skt reads the slots the first launch wrote for item t
    // (from the same paired, skt, P and K) and writes that block's results and their
    // mirrors inside C.
    unsafe { go(l, name, cfg) }
}

/// Dynamic shared memory of `gram_tensor_core_f64` (mma.cuh's TC_SMEM_BT): three stages of
/// A's 128×16 and B's 64×16 (M's rows), rows padded to 20 doubles.
pub(crate) const TC_SMEM_BT_F64: u32 = 3 * (128 + 64) * 20 * 8;

/// Copies the upper triangle of the n×n `out` to its lower one (the stripe rungs' second
/// launch).
pub(crate) fn mirror<T: CudaElement>(gpu: &Gpu, n: i32, out: &mut DeviceMatrix<T>) -> Result<()> {
    let name = ndgpu_cuda_runtime::kernel!("gram_mirror").of::<T>();
    let cfg = LaunchConfig {
        grid_dim: (
            grid_1d("gram", Grid::Upper(32).blocks::<T>(out.rows, 0))?,
            1,
            1,
        ),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let f = gpu.function(KernelFile::GRAM, name)?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &n, &mut out.data);
    // SAFETY: (int N, T* C) with C n×n row-major, its buffer checked to hold n·n elements;
    // one block per upper 32×32 tile, decoded from blockIdx.x, every access checked
    // against N.
    unsafe { go(b, name, cfg) }
}
