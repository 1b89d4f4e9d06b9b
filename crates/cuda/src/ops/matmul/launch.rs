//! The GEMM ladder's launches: a rung's kernel on a product, `split_k`'s slices and
//! sums, stream-K on the FP64 tensor cores, the strided form the solves use, and scaling
//! by β.

use cudarc::driver::{CudaView, CudaViewMut, LaunchConfig, PushKernelArg};
use ndgpu_core::{DType, Error, Gemm, Result, Trans};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{dim_i32, grid_1d, launched, linear};
use ndgpu_cuda_runtime::push_args;
use ndgpu_cuda_runtime::{driver, CudaElement, DeviceMatrix, Gpu};

use super::rules::{dmma, k_slices, small, stream_cut, StreamCut};
use super::table::{
    has_tensor_cores, small_tiles, tc_shape, tc_shared_memory, Rung, DOUBLE_BUFFERED, TENSOR_CORE,
};
use crate::ops::dispatch::Dev;
use crate::ops::transpose;

/// `C ← alpha·A·B + beta·C` by the `split_k` rung: the partial products of the slices
/// of K into a workspace, then their sums in slice order (see `kernels/matmul.cu`). One
/// slice is the double_buffered rung itself.
pub(crate) fn split_k<T: CudaElement>(gpu: &Gpu, p: Product<'_, T>) -> Result<()> {
    let dev = Dev::of(gpu)?;
    if T::DTYPE == DType::F64 && has_tensor_cores(gpu) && dmma(dev, p.mnk) {
        let (bm, bn) = tc_shape::<f64>().tile;
        let (m, n, k) = p.mnk;
        return match stream_cut(dev, m.div_ceil(bm) * n.div_ceil(bn), k.div_ceil(16)) {
            None => launch(gpu, TENSOR_CORE, p),
            Some(cut) => stream_tc(gpu, cut, p),
        };
    }
    let (slices, len) = k_slices(dev, p.mnk);
    if slices == 1 {
        let rung = match small(dev, p.mnk) {
            true => small_tiles(dev.sms, p.mnk.0, p.mnk.1),
            false => DOUBLE_BUFFERED,
        };
        return launch(gpu, rung, p);
    }
    let (m, n, k) = p.mnk;
    let [mi, ni, ki, li, si] = [m, n, k, len, slices].map(|d| dim_i32("gemm", d));
    let (mi, ni, ki, li, si) = (mi?, ni?, ki?, li?, si?);
    let mut w = gpu.alloc::<T>("gemm", slices * m * n)?;
    let tiles = tile_grid(DOUBLE_BUFFERED, m, n)?;
    let cfg = LaunchConfig {
        grid_dim: (tiles.grid_dim.0, slices as u32, 1),
        ..tiles
    };
    let name = ndgpu_cuda_runtime::kernel!("gemm_split_k").of::<T>();
    let f = gpu.function(KernelFile::MATMUL, name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &mi, &ni, &ki, &li, &p.a.data, &p.b.data, &mut w);
    // SAFETY: gemm_split_k_<dtype>(int M, int N, int K, int KS, const T* A, const T* B,
    // T* W): A m×k and B k×n row-major, checked to hold their elements; W holds
    // slices·m·n; block (tile, s) reads columns [s·KS, min((s+1)·KS, K)) of A and those
    // rows of B, nonempty for s < slices = ⌈K / KS⌉, and writes tile `tile` of partial s.
    launched(name, unsafe { l.launch(cfg) })?;
    let total = (m * n) as i64;
    let name = ndgpu_cuda_runtime::kernel!("gemm_split_k_sum").of::<T>();
    let f = gpu.function(KernelFile::MATMUL, name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &total, &si, &p.alpha, &w, &p.beta, &mut p.c.data);
    let cfg = linear((m * n).div_ceil(256).min(1 << 16) as u32, 256);
    // SAFETY: gemm_split_k_sum_<dtype>(i64 len, int S, T alpha, const T* W, T beta, T* C):
    // W holds S·len partials, C len = m·n elements (checked), a grid-stride loop over
    // [0, len).
    launched(name, unsafe { l.launch(cfg) })
}

/// `C ← alpha·A·B + beta·C` by the f64 DMMA kernel with stream-K (`cut`): one launch
/// for the stream tiles' blocks and, after them, one block for each other tile, the
/// parts into a workspace of two 128×64 slots per stream block; then their sums.
pub(crate) fn stream_tc<T: CudaElement>(
    gpu: &Gpu,
    cut: StreamCut,
    p: Product<'_, T>,
) -> Result<()> {
    let (m, n, k) = p.mnk;
    let tc = tc_shape::<T>();
    let (bm, bn) = tc.tile;
    let tiles = m.div_ceil(bm) * n.div_ceil(bn);
    let [mi, ni, ki, ti, bi] = [m, n, k, cut.tiles, cut.blocks].map(|d| dim_i32("gemm", d));
    let (mi, ni, ki, ti, bi) = (mi?, ni?, ki?, ti?, bi?);
    let mut w = gpu.alloc::<T>("gemm", 2 * cut.blocks * bm * bn)?;
    let name = ndgpu_cuda_runtime::kernel!("gemm_stream_tc").of::<T>();
    let f = gpu.function(KernelFile::MATMUL, name)?;
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gemm", cut.blocks + tiles - cut.tiles)?, 1, 1),
        block_dim: (tc.threads, 1, 1),
        shared_mem_bytes: tc_shared_memory::<T>(gpu, name, &f)?,
    };
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &mi, &ni, &ki, &p.alpha, &p.a.data, &p.b.data, &p.beta, &mut p.c.data, &mut w, &ti, &bi);
    // SAFETY: gemm_stream_tc_f64(int M, int N, int K, double alpha, const double* A,
    // const double* B, double beta, double* C, double* W, int skt, int P) with A m×k,
    // B k×n and C m×n row-major (checked by gemm); blocks 0..P−1 take nonempty ranges of
    // the skt·⌈K/16⌉ units (P ≤ units / 4, stream_cut) and write parts to slots 2b and
    // 2b + 1 of W, which holds 2·P slots of 128×64; blocks P.. take tiles skt.., one
    // each, up to C's last tile; every access to A, B and C is bounds-checked; the
    // dynamic shared memory is the stages'.
    launched(name, unsafe { l.launch(cfg) })?;
    let name = ndgpu_cuda_runtime::kernel!("gemm_stream_tc_fix").of::<T>();
    let f = gpu.function(KernelFile::MATMUL, name)?;
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gemm", cut.tiles)?, 1, 1),
        block_dim: (tc.threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &mi, &ni, &ki, &p.alpha, &w, &p.beta, &mut p.c.data, &ti, &bi);
    // SAFETY: gemm_stream_tc_fix_f64(int M, int N, int K, double alpha, const double* W,
    // double beta, double* C, int skt, int P): block t < skt reads the slots the first
    // launch wrote for stream tile t (from the same skt, P and K) and writes that tile's
    // elements inside C.
    launched(name, unsafe { l.launch(cfg) })
}

/// `op(x)`: `x` itself, or its transpose materialised in `held`.
pub(crate) fn applied<'a, T: CudaElement>(
    gpu: &Gpu,
    t: Trans,
    x: &'a DeviceMatrix<T>,
    held: &'a mut Option<DeviceMatrix<T>>,
) -> Result<&'a DeviceMatrix<T>> {
    Ok(match t {
        Trans::No => x,
        Trans::Yes => held.insert(transposed(gpu, x)?),
    })
}

/// `xᵀ` in a new device matrix.
pub(crate) fn transposed<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
) -> Result<DeviceMatrix<T>> {
    let mut t = gpu.alloc_matrix("gemm", x.cols, x.rows)?;
    transpose::transpose(gpu, transpose::DEFAULT, x, &mut t)?;
    Ok(t)
}

/// One operand of [`gemm_strided`]: a view whose element 0 is the block's first, and the
/// distance between the starts of its rows (at least the row length).
pub(crate) struct Strided<V> {
    pub view: V,
    pub ld: usize,
}

/// Row-major `C (m×n) ← alpha·op(A)·B (k×n) + beta·C` on blocks of larger matrices, with
/// leading dimensions: f64 with A untransposed on the FP64 tensor cores where the
/// `split_k` rule picks them ([`strided_dmma`]), otherwise the double_buffered rung's tiles
/// and pipeline. op(A) is A (m×k) or, with `trans_a`, Aᵀ for an A held k×m. With
/// `beta = 0`, C is not read.
///
/// # Errors
/// [`Error::InvalidArgument`] when a view is shorter than its block, a leading dimension
/// shorter than its rows, or a dimension exceeds the kernels' 32-bit indices; device
/// errors.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_strided<T: CudaElement>(
    gpu: &Gpu,
    trans_a: bool,
    (m, n, k): (usize, usize, usize),
    alpha: T,
    a: Strided<&CudaView<T>>,
    b: Strided<&CudaView<T>>,
    beta: T,
    c: Strided<&mut CudaViewMut<T>>,
) -> Result<()> {
    if m == 0 || n == 0 || k == 0 {
        return Err(Error::invalid("gemm", "an empty block"));
    }
    let (a_rows, a_cols) = if trans_a { (k, m) } else { (m, k) };
    for (what, len, ld, rows, cols) in [
        ("A", a.view.len(), a.ld, a_rows, a_cols),
        ("B", b.view.len(), b.ld, k, n),
        ("C", c.view.len(), c.ld, m, n),
    ] {
        if ld < cols || len < (rows - 1) * ld + cols {
            return Err(Error::invalid(
                "gemm",
                format!("{what}: a {rows}x{cols} block with rows {ld} apart in {len} elements"),
            ));
        }
        dim_i32("gemm", ld)?;
    }
    let [mi, ni, ki] = [m, n, k].map(|d| d as i32);
    let [lda, ldb, ldc] = [a.ld, b.ld, c.ld].map(|d| d as i32);
    let form = if trans_a { "tn" } else { "nn" };
    let (name, cfg) = if strided_dmma::<T>(gpu, trans_a, (m, n, k))? {
        let name = "gemm_strided_tc_nn_f64".to_string();
        let f = gpu.function(KernelFile::MATMUL, &name)?;
        let tc = tc_shape::<T>();
        let cfg = LaunchConfig {
            grid_dim: (
                grid_1d("gemm", m.div_ceil(tc.tile.0) * n.div_ceil(tc.tile.1))?,
                1,
                1,
            ),
            block_dim: (tc.threads, 1, 1),
            shared_mem_bytes: tc_shared_memory::<T>(gpu, &name, &f)?,
        };
        (name, cfg)
    } else {
        let name = format!("gemm_strided_{form}_{}", T::SUFFIX);
        (name, tile_grid(DOUBLE_BUFFERED, m, n)?)
    };
    let f = gpu.function(KernelFile::MATMUL, &name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &mi, &ni, &ki, &alpha, a.view, &lda, b.view, &ldb, &beta, c.view, &ldc);
    // SAFETY: gemm_strided_<form>_<dtype>(int M, int N, int K, T alpha, const T* A, int
    // lda, const T* B, int ldb, T beta, T* C, int ldc): each view holds its block (last
    // row start + row length, checked above), the kernel reads and writes only inside the
    // blocks (every access bounds-checked against M, N, K, vectors only where the extent
    // and the leading dimension are whole vectors); the grid has one block per 128×128
    // tile of C, as for the double_buffered rung whose tiles it shares;
    // gemm_strided_tc_nn_f64 has the same parameters and checks, one block of 128 threads
    // per 128×64 tile of C and the dynamic shared memory of tensor_core's stages.
    launched(&name, unsafe { l.launch(cfg) })
}

/// Whether [`gemm_strided`] runs on the FP64 tensor cores: f64, A untransposed, a device
/// with DMMA, and a shape where the `split_k` rule picks DMMA (enough tiles of C, or a
/// short K).
pub(crate) fn strided_dmma<T: CudaElement>(
    gpu: &Gpu,
    trans_a: bool,
    mnk: (usize, usize, usize),
) -> Result<bool> {
    Ok(T::DTYPE == DType::F64 && !trans_a && has_tensor_cores(gpu) && dmma(Dev::of(gpu)?, mnk))
}

/// One block of `rung.block` threads per `rung.tile` of the m×n C (the kernels decode
/// the tile from blockIdx.x).
pub(crate) fn tile_grid(rung: Rung, m: usize, n: usize) -> Result<LaunchConfig> {
    let tiles = m.div_ceil(rung.tile.0) * n.div_ceil(rung.tile.1);
    Ok(LaunchConfig {
        grid_dim: (grid_1d("gemm", tiles)?, 1, 1),
        block_dim: (rung.block.0, rung.block.1, 1),
        shared_mem_bytes: 0,
    })
}

/// The operands of `C ← alpha·A·B + beta·C` with A m×k and B k×n untransposed.
pub(crate) struct Product<'a, T> {
    pub mnk: (usize, usize, usize),
    pub alpha: T,
    pub a: &'a DeviceMatrix<T>,
    pub b: &'a DeviceMatrix<T>,
    pub beta: T,
    pub c: &'a mut DeviceMatrix<T>,
}

impl<'a, T: CudaElement> Product<'a, T> {
    pub(crate) fn new(
        mnk: (usize, usize, usize),
        g: Gemm<T>,
        a: &'a DeviceMatrix<T>,
        b: &'a DeviceMatrix<T>,
        c: &'a mut DeviceMatrix<T>,
    ) -> Self {
        let (alpha, beta) = (g.alpha, g.beta);
        Product {
            mnk,
            alpha,
            a,
            b,
            beta,
            c,
        }
    }
}

pub(crate) fn launch<T: CudaElement>(gpu: &Gpu, rung: Rung, p: Product<'_, T>) -> Result<()> {
    let (m, n, k) = p.mnk;
    let (mi, ni, ki) = (
        dim_i32("gemm", m)?,
        dim_i32("gemm", n)?,
        dim_i32("gemm", k)?,
    );
    let name = rung.kernel.of::<T>();
    let f = gpu.function(KernelFile::MATMUL, name)?;
    let cfg = if rung.tensor_cores {
        let tc = tc_shape::<T>();
        let tiled = Rung {
            tile: tc.tile,
            block: (tc.threads, 1),
            ..rung
        };
        LaunchConfig {
            shared_mem_bytes: tc_shared_memory::<T>(gpu, name, &f)?,
            ..tile_grid(tiled, m, n)?
        }
    } else {
        tile_grid(rung, m, n)?
    };
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &mi, &ni, &ki, &p.alpha, &p.a.data, &p.b.data, &p.beta, &mut p.c.data);
    // SAFETY: gemm_<variant>_<dtype>(int M, int N, int K, T alpha, const T* A, const T* B,
    // T beta, T* C) with A m×k, B k×n and C m×n row-major, each buffer checked to hold
    // rows·cols elements (by gemm, with check_buffer); the grid has one block per
    // rung.tile of C, which is what the kernel decodes from blockIdx.x; every access is
    // bounds-checked against M, N, K, and the 16-byte loads are used only where the
    // kernel finds the pointers aligned; the tensor-core rungs get the dynamic shared
    // memory their stages take.
    launched(name, unsafe { l.launch(cfg) })
}

/// `C ← beta·C` (zeros when `beta = 0`, without reading C): the product is empty or
/// multiplied by zero.
pub(crate) fn scale<T: CudaElement>(gpu: &Gpu, beta: T, c: &mut DeviceMatrix<T>) -> Result<()> {
    let len = c.len();
    if beta == T::one() {
        return Ok(());
    }
    if beta == T::zero() {
        return gpu
            .stream()
            .memset_zeros(&mut c.data.slice_mut(0..len))
            .map_err(|e| driver("gemm: zeroing C", e));
    }
    let (mi, ni) = (dim_i32("gemm", c.rows)?, dim_i32("gemm", c.cols)?);
    let cfg = linear(len.div_ceil(256).min(1 << 16) as u32, 256);
    let name = ndgpu_cuda_runtime::kernel!("gemm_scale").of::<T>();
    let f = gpu.function(KernelFile::MATMUL, name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &mi, &ni, &beta, &mut c.data);
    // SAFETY: gemm_scale_<dtype>(int M, int N, T beta, T* C) touches C[0..M·N) with a
    // grid-stride loop; C's buffer was checked to hold rows·cols elements.
    launched(name, unsafe { l.launch(cfg) })
}
