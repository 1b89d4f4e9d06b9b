//! One launch function per kernel of `kernels/cholesky.cu`, with the grid arithmetic.
//!
//! Launches go through the stream's builder directly (`Gpu::function` +
//! `launch_builder`): the arguments are borrowed only until the launch is queued.

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use ndgpu_core::{DType, Error, Result};
use ndgpu_cuda_runtime::launch::go;
use ndgpu_cuda_runtime::push_args;

use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::{blocks, dim_i32, driver, CudaElement, DeviceMatrix, Gpu};

/// Threads of the single-block factorization (report 004 used 512).
const SINGLE_BLOCK_THREADS: u32 = 512;
/// Threads per block of the per-step kernels (report 004's best stride).
const STEP_THREADS: u32 = 256;
/// Threads of the diagonal-block kernel: 64 columns × 4 row groups (`R` in
/// `chol_potrf_diag` is CHOL_NB / 4).
const POTRF_THREADS: u32 = 256;
/// Rows of the panel per TRSM block (the kernel takes CHOL_NB, 4 threads per row).
const TRSM_ROWS: usize = NB;
/// The block size of the factorization and of the solves (`CHOL_NB` in
/// `kernels/cholesky.cu`).
pub(super) const NB: usize = 64;

pub(super) fn cfg(grid: (u32, u32), threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.0, grid.1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The kernel `cholesky_{op}_{dtype}` and its name.
pub(super) fn kernel<T: CudaElement>(gpu: &Gpu, op: &str) -> Result<(CudaFunction, String)> {
    let name = format!("cholesky_{op}_{}", T::SUFFIX);
    Ok((gpu.function(KernelFile::CHOLESKY, &name)?, name))
}

pub(super) fn single_block<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    n: i32,
    info: &mut CudaSlice<i32>,
) -> Result<()> {
    let (f, name) = kernel::<T>(gpu, "single_block")?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &mut a.data, &n, info);
    // SAFETY: (T* a, int n, int* info): a holds n·n elements, info 4 ints; one block.
    unsafe { go(b, &name, cfg((1, 1), SINGLE_BLOCK_THREADS)) }
}

pub(super) fn step_divide<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    n: i32,
    k: i32,
    col: &mut CudaSlice<T>,
    info: &mut CudaSlice<i32>,
) -> Result<()> {
    let (f, name) = kernel::<T>(gpu, "step_divide")?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &mut a.data, &n, &k, col, info);
    // SAFETY: (T* a, int n, int k, T* col, int* info): a is n×n, col holds n, k < n;
    // one block (the kernel relies on it for its barrier).
    unsafe { go(b, &name, cfg((1, 1), STEP_THREADS)) }
}

pub(super) fn step_eliminate<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    n: i32,
    k: i32,
    col: &CudaSlice<T>,
    info: &CudaSlice<i32>,
) -> Result<()> {
    let (f, name) = kernel::<T>(gpu, "step_eliminate")?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &mut a.data, &n, &k, col, info);
    // SAFETY: (T* a, int n, int k, const T* col, const int* info): one block per row
    // k+1..n-1 of the n×n matrix; col holds n.
    unsafe { go(b, &name, cfg(((n - k - 1) as u32, 1), STEP_THREADS)) }
}

pub(super) fn potrf_diag<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    n: i32,
    k0: i32,
    info: &mut CudaSlice<i32>,
) -> Result<()> {
    let (f, name) = kernel::<T>(gpu, "potrf_diag")?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &mut a.data, &n, &k0, info);
    // SAFETY: (T* a, int n, int k0, int* info): the block at k0 < n is clipped to n; one
    // block of POTRF_THREADS (4 row groups of the 64 columns, as the kernel splits them).
    unsafe { go(b, &name, cfg((1, 1), POTRF_THREADS)) }
}

pub(super) fn trsm_panel<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    n: i32,
    k0: i32,
    info: &CudaSlice<i32>,
    rows: usize,
) -> Result<()> {
    // L11 and 64 panel rows, each 64 wide padded by 16 bytes, and 64 reciprocals.
    let size = std::mem::size_of::<T>();
    let smem = (2 * NB * (NB + 16 / size) + NB) * size;
    let (f, name) = kernel::<T>(gpu, "trsm_panel")?;
    gpu.grant_shared_memory(&f, &name)?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &mut a.data, &n, &k0, info);
    // SAFETY: (T* a, int n, int k0, const int* info): k0 + 64 < n; 64 panel rows per
    // block of 256 threads (4 per row, as the kernel splits them); rows past n are
    // zero-filled and not stored; `smem` bytes of dynamic shared memory as laid out.
    let mut c = cfg((blocks(rows, TRSM_ROWS), 1), 256);
    c.shared_mem_bytes = smem as u32;
    unsafe { go(b, &name, c) }
}

/// The part of the trailing matrix a [`syrk_lower`] updates.
#[derive(Clone, Copy)]
pub(super) enum Region {
    /// The columns of the next panel, `[k0 + 64, k0 + 128)`, every row below.
    NextPanel,
    /// Everything right of the next panel: rows and columns from `k0 + 128`.
    Rest,
}

/// How the trailing updates run: the SM count (for the tile size) and whether f64's run
/// on FP64 tensor cores (`cholesky_syrk_lower_tc_f64`).
#[derive(Clone, Copy)]
pub(super) struct Syrk {
    pub sms: usize,
    pub tensor_cores: bool,
}

/// The trailing update of the panel at `k0`, `C −= L21·L21ᵀ`, over `region`, queued on
/// `stream`.
#[allow(clippy::too_many_arguments)]
pub(super) fn syrk_lower<T: CudaElement>(
    gpu: &Gpu,
    stream: &CudaStream,
    a: &mut DeviceMatrix<T>,
    n: i32,
    k0: i32,
    info: &CudaSlice<i32>,
    region: Region,
    Syrk { sms, tensor_cores }: Syrk,
) -> Result<()> {
    // Tiles of 16·TM: `syrk_lower` has TM = 8 for f32 and 4 for f64, `syrk_lower64` TM = 4
    // (CHOL_KERNELS in cholesky.cu); the small ones when the large would not give every
    // SM two blocks, and always for the next panel (one column of tiles, 64 wide). The
    // kernel stages both 64-deep operands, padded by 16 bytes per row, in dynamic shared
    // memory.
    let nb = NB as i32;
    let (start, c_end, strip) = match region {
        Region::NextPanel => (k0 + nb, k0 + 2 * nb, 1i32),
        Region::Rest => (k0 + 2 * nb, n, 0i32),
    };
    let rows = (n - start).max(0) as usize;
    if rows == 0 {
        return Ok(());
    }
    let size = std::mem::size_of::<T>();
    let count = |tile: usize| {
        let t = rows.div_ceil(tile);
        if strip == 1 {
            t
        } else {
            t * (t + 1) / 2
        }
    };
    let big = if size == 4 { 128 } else { 64 };
    let (op, tile) = if tensor_cores && size == 8 {
        ("syrk_lower_tc", 64)
    } else if strip == 1 || (big > 64 && count(big) < 2 * sms) {
        ("syrk_lower64", 64)
    } else {
        ("syrk_lower", big)
    };
    let smem = 2 * NB * (tile + 16 / size) * size;
    let tiles = u32::try_from(count(tile))
        .map_err(|_| Error::invalid("cholesky", format!("{rows} trailing rows: too many tiles")))?;
    let (f, name) = kernel::<T>(gpu, op)?;
    gpu.grant_shared_memory(&f, &name)?;
    let mut b = stream.launch_builder(&f);
    push_args!(b; &mut a.data, &n, &k0, &start, &c_end, &strip, info);
    // SAFETY: (T* a, int n, int k0, int s, int c_end, int strip, const int* info): one
    // block per tile of the region from row and column `start` (lower tiles numbered as
    // the kernel decodes them, or one column of them with `strip`); accesses are clipped
    // to n, writes to columns below c_end; `smem` bytes of dynamic shared memory as the
    // kernel lays them out.
    let mut c = cfg((tiles, 1), 256);
    c.shared_mem_bytes = smem as u32;
    unsafe { go(b, &name, c) }
}

/// Threads of `cholesky_dataflow_{f32,f64}` (`DF_THREADS`).
const DATAFLOW_THREADS: u32 = 128;

/// Dynamic shared memory of the dataflow kernel for T (`DF_SMEM(T)`: three stages of two
/// 64×32 chunks, rows padded to 36 elements).
fn dataflow_smem<T>() -> u32 {
    (3 * 2 * NB * 36 * std::mem::size_of::<T>()) as u32
}

/// Blocks of the dataflow kernel for T: as many as can be resident (f64: two per SM, by
/// shared memory; f32: as its registers allow), asked of the driver.
pub(super) fn dataflow_blocks<T: CudaElement>(gpu: &Gpu) -> Result<usize> {
    let (f, name) = kernel::<T>(gpu, "dataflow")?;
    gpu.grant_shared_memory(&f, &name)?;
    let per_sm = f
        .occupancy_max_active_blocks_per_multiprocessor(
            DATAFLOW_THREADS,
            dataflow_smem::<T>() as usize,
            None,
        )
        .map_err(|e| driver(format!("{name}: reading its occupancy"), e))?;
    Ok(per_sm.max(1) as usize * gpu.sm_count()?)
}

/// The elements of a 16-byte vector of T: the dataflow kernel's rows are whole vectors.
pub(super) fn dataflow_row_multiple<T>() -> usize {
    16 / std::mem::size_of::<T>()
}

/// One panel of the dataflow factorization of the n×n matrix held in `a` (leading
/// dimension `a.cols`, a multiple of [`dataflow_row_multiple`]): the first `panel.nc`
/// tile columns of the trailing matrix from row and column `panel.c0`, in one launch of
/// `cholesky_dataflow_{f32,f64}` (f32 on 3xTF32); the whole factorization where c0 = 0
/// and nc is every tile column. `work` holds 1 + `panel.tiles` zeroed ints, `order` the
/// tile of each of the panel's tickets (row | column << 16) and the blocks to launch at
/// most ([`dataflow_blocks`]).
pub(super) fn dataflow<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    n: i32,
    panel: DataflowPanel,
    work: &mut CudaSlice<i32>,
    (order, blocks): (&CudaSlice<u32>, usize),
    info: &mut CudaSlice<i32>,
) -> Result<()> {
    let DataflowPanel { c0, nc, tiles } = panel;
    let nt = if (0..n).contains(&c0) {
        (n - c0) as usize
    } else {
        0
    }
    .div_ceil(NB);
    let lda = a.cols;
    let fits = lda.is_multiple_of(dataflow_row_multiple::<T>())
        && lda >= n as usize
        && a.rows >= n as usize
        && nt > 0
        && (c0 as usize).is_multiple_of(NB)
        && nc >= 1
        && nc as usize <= nt
        && tiles == (0..nc as usize).map(|j| nt - j).sum::<usize>()
        && work.len() > nt * (nt + 1) / 2
        && order.len() >= tiles;
    if !fits {
        return Err(Error::invalid(
            "cholesky",
            "the dataflow kernel takes rows of whole 16-byte vectors, a panel of whole tiles \
             and a flag per tile",
        ));
    }
    let lda = i32::try_from(lda)
        .map_err(|_| Error::invalid("cholesky", format!("leading dimension {lda} too large")))?;
    let tiles_i = tiles as i32;
    let (f, name) = kernel::<T>(gpu, "dataflow")?;
    gpu.grant_shared_memory(&f, &name)?;
    let grid = tiles.min(blocks.max(1)) as u32;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &mut a.data, &n, &lda, &c0, &nc, &tiles_i, work, order, info);
    // SAFETY: (T* a, int n, int lda, int c0, int nc, int tiles, int* work, const unsigned*
    // order, int* info): a holds n rows of lda ≥ n elements, lda a whole number of 16-byte
    // vectors; the panel is nc ≤ nt tile columns of the trailing matrix from c0 (a whole
    // tile, below n), `tiles` its tiles' count; work a zeroed counter and a flag per lower
    // tile of the trailing matrix, order a tile per ticket (checked above); any number of
    // blocks of DATAFLOW_THREADS with the dynamic shared memory DF_SMEM(T).
    let mut c = cfg((grid, 1), DATAFLOW_THREADS);
    c.shared_mem_bytes = dataflow_smem::<T>();
    unsafe { go(b, &name, c) }
}

/// A panel of the dataflow factorization: its first row and column `c0` (a whole tile),
/// its tile columns `nc`, and its tiles' count (the tickets).
#[derive(Clone, Copy, Debug)]
pub(super) struct DataflowPanel {
    pub c0: i32,
    pub nc: i32,
    pub tiles: usize,
}

/// The update between two panels of the dataflow factorization: the trailing matrix from
/// row and column c1 less L·Lᵀ, L its rows' part of the panel's columns [c0, c1). f64: one
/// launch of `cholesky_update_f64` (the GEMM ladder's DMMA kernel on the lower 128×128
/// tiles, two blocks of 128×64 each). f32 (3xTF32): Lᵀ into `lt` first
/// (`cholesky_panel_t_f32`, [`panel_transpose_len`] elements), then `cholesky_update_f32`
/// (the GEMM ladder's 3xTF32 kernel, a 128×128 block per lower tile).
pub(super) fn update<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    n: i32,
    (c0, c1): (i32, i32),
    lt: &mut CudaSlice<T>,
) -> Result<()> {
    let lda = a.cols;
    let fits = lda.is_multiple_of(dataflow_row_multiple::<T>())
        && lda >= n as usize
        && a.rows >= n as usize
        && 0 <= c0
        && c0 < c1
        && c1 < n
        && (c0 as usize).is_multiple_of(NB)
        && (c1 as usize).is_multiple_of(NB)
        && (T::DTYPE == DType::F64 || lt.len() >= panel_transpose_len(n as usize, (c0, c1)));
    if !fits {
        return Err(Error::invalid(
            "cholesky",
            "the panel update takes rows of whole 16-byte vectors, a panel inside the matrix \
             and (f32) room for the panel's transpose",
        ));
    }
    let lda = i32::try_from(lda)
        .map_err(|_| Error::invalid("cholesky", format!("leading dimension {lda} too large")))?;
    let m = (n - c1) as usize;
    let tt = m.div_ceil(128);
    let tiles = u32::try_from(tt * (tt + 1) / 2)
        .map_err(|_| Error::invalid("cholesky", "too many tiles for the panel update"))?;
    let (f, name) = kernel::<T>(gpu, "update")?;
    gpu.grant_shared_memory(&f, &name)?;
    if T::DTYPE == DType::F64 {
        let mut b = gpu.stream().launch_builder(&f);
        push_args!(b; &mut a.data, &n, &lda, &c0, &c1);
        // SAFETY: (double* a, int n, int lda, int c0, int c1): a holds n rows of lda ≥ n
        // elements, lda even, 0 ≤ c0 < c1 < n whole tiles (checked above: L's rows are
        // whole 16-byte chunks, as the kernel's fast path takes them); two blocks per lower
        // 128×128 tile of the trailing (n − c1)² matrix, decoded from blockIdx.x as the
        // kernel does, every access bounds-checked against n − c1 and c1 − c0; 128 threads
        // with gemm_tc's TC_SMEM_BT bytes of dynamic shared memory.
        let mut c = cfg((2 * tiles, 1), 128);
        c.shared_mem_bytes = crate::ops::gram::TC_SMEM_BT_F64;
        return unsafe { go(b, &name, c) };
    }
    let ldt = m.next_multiple_of(4);
    let ldt_i = ldt as i32;
    let (ft, tname) = kernel::<T>(gpu, "panel_t")?;
    let mut b = gpu.stream().launch_builder(&ft);
    push_args!(b; &a.data, &n, &lda, &c0, &c1, &mut *lt, &ldt_i);
    // SAFETY: (const float* a, int n, int lda, int c0, int c1, float* lt, int ldt): a as
    // above, c1 − c0 a multiple of 32, lt holds (c1 − c0)·ldt elements (checked above);
    // block (x, y) reads rows c1 + 32x.. (below n) and columns c0 + 32y.. of a and writes
    // rows 32y.. and columns 32x.. (below ldt) of lt; 32×8 threads.
    unsafe {
        go(
            b,
            &tname,
            LaunchConfig {
                grid_dim: (ldt.div_ceil(32) as u32, ((c1 - c0) / 32) as u32, 1),
                block_dim: (32, 8, 1),
                shared_mem_bytes: 0,
            },
        )?
    };
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &mut a.data, &n, &lda, &c0, &c1, &*lt, &ldt_i);
    // SAFETY: (float* a, int n, int lda, int c0, int c1, const float* lt, int ldt): a as
    // above with lda a multiple of 4, so that c1 + ldt ≤ lda; lt the K × ldt transpose
    // just written (whole 16-byte rows); a block per lower 128×128 tile of the trailing
    // matrix, decoded from blockIdx.x as the kernel does, rows bounds-checked against
    // n − c1 and columns against ldt; 256 threads with gemm_tc's TC_SMEM(float) bytes.
    let mut c = cfg((tiles, 1), 256);
    c.shared_mem_bytes = crate::ops::matmul::tc_shape::<f32>().smem;
    unsafe { go(b, &name, c) }
}

/// The elements of the f32 panel update's transpose for the panel [c0, c1) of an n×n
/// matrix: (c1 − c0) rows of n − c1 rounded up to whole 16-byte vectors.
pub(super) fn panel_transpose_len(n: usize, (c0, c1): (i32, i32)) -> usize {
    (c1 - c0) as usize * (n - c1 as usize).next_multiple_of(4)
}

/// The lower triangle of the n×n f32 matrix `a` into the f64 `w` (`cholesky_widen_f32`,
/// `narrow` false) or back, rounded (`cholesky_narrow_f32`, `narrow` true): the IEEE f32
/// factorization in f64 on the dataflow kernel.
pub(super) fn convert<T: CudaElement>(
    gpu: &Gpu,
    a: &mut DeviceMatrix<T>,
    w: &mut DeviceMatrix<f64>,
    narrow: bool,
) -> Result<()> {
    let n = a.rows;
    let fits = T::DTYPE == DType::F32 && a.cols >= n && w.rows >= n && w.cols >= n;
    if !fits {
        return Err(Error::invalid(
            "cholesky",
            "the f64 copy of an f32 matrix takes an f32 matrix and room for its n rows",
        ));
    }
    let (ni, lda, ldw) = (
        dim_i32("cholesky", n)?,
        dim_i32("cholesky", a.cols)?,
        dim_i32("cholesky", w.cols)?,
    );
    let (f, name) = kernel::<T>(gpu, if narrow { "narrow" } else { "widen" })?;
    let mut b = gpu.stream().launch_builder(&f);
    if narrow {
        push_args!(b; &w.data, &ni, &ldw, &mut a.data, &lda);
    } else {
        push_args!(b; &a.data, &ni, &lda, &mut w.data, &ldw);
    }
    // SAFETY: (const S* s, int n, int lds, D* d, int ldd): both hold n rows of at least n
    // elements at their leading dimensions (checked above); the kernel walks rows i < n
    // and columns j ≤ i in grid-stride loops, whatever the grid.
    unsafe {
        go(
            b,
            &name,
            LaunchConfig {
                grid_dim: (blocks(n, 256), (n as u32).min(65535), 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            },
        )
    }
}
