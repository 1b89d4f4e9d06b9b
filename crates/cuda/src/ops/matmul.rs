//! The GEMM ladder (`kernels/matmul.cu`): `C ← α·op(A)·op(B) + β·C`, one kernel per
//! optimisation step, from one thread per output with uncoalesced loads to a
//! double-buffered, register-blocked kernel with 16-byte loads.
//!
//! Every kernel multiplies row-major, untransposed operands: a transposed operand is
//! materialised first with the transpose ladder's default kernel.

use cudarc::driver::{CudaFunction, CudaView, CudaViewMut, LaunchConfig, PushKernelArg};
use ndgpu_core::{
    Backend, DType, Error, Family, Gemm, MatMulKernels, Matrix, Needs, Precision, Result, Trans,
    Variant,
};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{check_buffer, dim_i32, grid_1d, launched, linear};
use ndgpu_cuda_runtime::{driver, CudaElement, DeviceMatrix, Gpu};
use ndgpu_cuda_runtime::{kernel, push_args, Kernel};

use crate::ops::dispatch::Dev;
use crate::ops::{transpose, wgmma};
use crate::CudaBackend;

/// Kernels the default variant launches: its own, double_buffered's where it does not
/// split K, small's for small outputs with a short K, and the FP64 tensor-core kernel
/// for f64 (`dmma`).
pub const DEFAULT_KERNELS: &[&str] = &[
    "gemm_split_k_f32",
    "gemm_split_k_f64",
    "gemm_split_k_sum_f32",
    "gemm_split_k_sum_f64",
    "gemm_double_buffered_f32",
    "gemm_double_buffered_f64",
    "gemm_small_f32",
    "gemm_small_f64",
    "gemm_small_32_f32",
    "gemm_small_32_f64",
    "gemm_tensor_core_f64",
    "gemm_stream_tc_f64",
    "gemm_stream_tc_fix_f64",
];

/// What every variant shares.
pub const NOTE: &str = "bitwise reproducible run to run (no atomics; each output summed by \
    one thread in a fixed order); transposed operands are materialised before the product; \
    K = 0 or alpha = 0 gives beta*C without reading A or B";

/// One rung of the ladder: its row in the variant table, its kernel, the tile of C a
/// block computes, the block's threads, whether it runs on tensor cores (their tile,
/// threads and dynamic shared memory depend on the element type: [`tc_shape`]), and for
/// the Hopper rungs their f32 kernel (`ops::wgmma`).
#[derive(Debug, Clone, Copy)]
struct Rung {
    v: Variant,
    kernel: Kernel,
    tile: (usize, usize),
    block: (u32, u32),
    tensor_cores: bool,
    hopper: Option<wgmma::Hopper>,
}

impl Rung {
    const fn new(v: Variant, kernel: Kernel, tile: (usize, usize), block: (u32, u32)) -> Rung {
        Rung {
            v,
            kernel,
            tile,
            block,
            tensor_cores: false,
            hopper: None,
        }
    }

    const fn tensor(v: Variant) -> Rung {
        Rung {
            tensor_cores: true,
            ..Rung::new(
                v.needs(Needs::Sm80),
                kernel!("gemm_tensor_core"),
                (128, 128),
                (256, 1),
            )
        }
    }

    const fn hopper(v: Variant, h: wgmma::Hopper) -> Rung {
        Rung {
            hopper: Some(h),
            ..Rung::tensor(v.needs(Needs::Sm90))
        }
    }
}

/// The double_buffered rung, which split_k runs on each slice of K and the blocked
/// solves on blocks of larger matrices.
const DOUBLE_BUFFERED: Rung = Rung::new(
    Variant::new(
        "double_buffered",
        "vectorized with BK 16 (f32) and two shared buffers, the next K-tile copied \
         asynchronously (cp.async) while the current one is computed",
    ),
    kernel!("gemm_double_buffered"),
    (128, 128),
    (256, 1),
);

/// The f64 kernel of every tensor-core rung (the wgmma ones too: Hopper has no f64
/// wgmma).
const TENSOR_CORE: Rung = Rung::tensor(
    Variant::new(
        "tensor_core",
        "warp-level mma.sync, 128x128 block tile (f64: 128x64, two blocks per SM), three \
         cp.async stages, sums in a fixed order; f32 on TF32 operands rounded to nearest, \
         f64 on FP64 tensor cores (DMMA, IEEE)",
    )
    .precision(Precision::Tf32),
);

/// The small rung, which split_k runs for small outputs with a short K.
const SMALL: Rung = Rung::new(
    Variant::new(
        "small",
        "64x64 block tile, 256 threads of 4x4 outputs (32x32 tiles of 2x2 outputs where the \
         64x64 tiles would be fewer than the SMs), K through shared memory 64 at a time (f32; \
         32 for f64), the next stage's loads held in registers",
    ),
    kernel!("gemm_small"),
    (64, 64),
    (256, 1),
);
/// The small rung's kernel of 32×32 tiles, which it runs where its 64×64 tiles would be
/// fewer than the SMs ([`small_tiles`]); not a variant of its own.
const SMALL_32: Rung = Rung::new(
    Variant::new("small_32", ""),
    kernel!("gemm_small_32"),
    (32, 32),
    (256, 1),
);

/// The small rung's tiles for an m×n C on a device of `sms` SMs: 32×32 where 64×64
/// tiles would be fewer than the SMs, else 64×64.
fn small_tiles(sms: usize, m: usize, n: usize) -> Rung {
    match m.div_ceil(64) * n.div_ceil(64) < sms {
        true => SMALL_32,
        false => SMALL,
    }
}

/// The ladder, default (fastest measured) first: one row per variant.
const RUNGS: [Rung; 13] = [
    Rung::new(
        Variant::new(
            "split_k",
            "for few tiles of C, double_buffered on slices of K (as many as fill the SMs \
             twice, each at least 4 K-tiles) summed in slice order by a second kernel, or \
             small in one launch where K is at most 256; f64 on FP64 tensor cores (sm_80+) \
             runs tensor_core's DMMA kernel, with stream-K where its tiles would leave the \
             last wave mostly empty (docs/kernels.md, Shape rules); the choice depends on \
             the shape, the dtype and the device",
        ),
        kernel!("gemm_split_k"),
        (128, 128),
        (256, 1),
    ),
    DOUBLE_BUFFERED,
    SMALL,
    Rung::new(
        Variant::new(
            "vectorized",
            "reg_blocked with 16-byte global and shared loads, A transposed in shared \
             memory, warp-tiled 4x4 pieces",
        ),
        kernel!("gemm_vectorized"),
        (128, 128),
        (256, 1),
    ),
    Rung::new(
        Variant::new(
            "reg_blocked",
            "128x128 block tile, BK 8, 8x8 outputs per thread in registers",
        ),
        kernel!("gemm_reg_blocked"),
        (128, 128),
        (256, 1),
    ),
    Rung::new(
        Variant::new(
            "tiled_unrolled",
            "tiled, the inner product fully unrolled and the index arithmetic strength-reduced",
        ),
        kernel!("gemm_tiled_unrolled"),
        (32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new("tiled", "32x32 shared-memory tiles"),
        kernel!("gemm_tiled"),
        (32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new("coalesced", "one thread per output, a warp along a row"),
        kernel!("gemm_coalesced"),
        (8, 32),
        (32, 8),
    ),
    Rung::new(
        Variant::new(
            "naive",
            "one thread per output, a warp down a column (uncoalesced)",
        ),
        kernel!("gemm_naive"),
        (32, 8),
        (32, 8),
    ),
    TENSOR_CORE,
    Rung::tensor(
        Variant::new(
            "tensor_core_3x",
            "tensor_core with f32 as 3xTF32 (each operand split into two TF32 parts, three \
             products), close to f32's own error; f64 as tensor_core",
        )
        .precision(Precision::Tf32x3),
    ),
    Rung::hopper(
        Variant::new(
            "wgmma",
            "f32 on Hopper's warpgroup wgmma: operands rounded to TF32 planes first, loaded \
             by TMA with 128-byte swizzle, one producer and two consumer warpgroups, \
             128x256 tiles, a persistent grid; f64 runs tensor_core's DMMA kernel",
        )
        .precision(Precision::Tf32),
        wgmma::TF32,
    ),
    Rung::hopper(
        Variant::new(
            "wgmma_3x",
            "wgmma on 3xTF32 (128x128 tiles); f64 runs tensor_core's DMMA kernel",
        )
        .precision(Precision::Tf32x3),
        wgmma::TF32X3,
    ),
];

/// The variant table's rows, default first.
pub fn variants() -> impl Iterator<Item = Variant> {
    RUNGS.iter().map(|r| r.v)
}

fn rung(variant: &str) -> Result<Rung> {
    super::find_rung(&RUNGS, |r| r.v, Family::MatMul, variant)
}

/// `C ← alpha·op(A)·op(B) + beta·C` on resident data with the named variant. `c` must be
/// op(A)'s rows × op(B)'s columns; with `beta = 0` its contents are never read.
///
/// # Errors
/// [`Error::ShapeMismatch`] (inner dimensions, or `c` of the wrong shape),
/// [`Error::UnknownVariant`], [`Error::InvalidArgument`] for dimensions beyond the
/// kernels' 32-bit indices, device errors (out of memory when a transposed operand is
/// materialised).
pub(crate) fn gemm<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    g: Gemm<T>,
    a: &DeviceMatrix<T>,
    b: &DeviceMatrix<T>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let rung = rung(variant)?;
    // The Hopper rungs run tensor_core's DMMA kernel for f64, which needs sm_80 only.
    let needs = match T::DTYPE {
        DType::F64 if rung.hopper.is_some() => TENSOR_CORE.v,
        _ => rung.v,
    };
    super::require(gpu, Family::MatMul, &needs)?;
    let (m, n, k) = g.dims(a.dim(), b.dim());
    for (what, x) in [("A", a), ("B", b)] {
        check_buffer("gemm", what, x)?;
    }
    check_buffer("gemm", "C", c)?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 || g.alpha == T::zero() {
        return scale(gpu, g.beta, c);
    }
    let (mut a_t, mut b_t) = (None, None);
    let a = applied(gpu, g.ta, a, &mut a_t)?;
    let b = applied(gpu, g.tb, b, &mut b_t)?;
    let p = Product::new((m, n, k), g, a, b, c);
    match (rung.v.name, rung.hopper, T::DTYPE) {
        ("split_k", _, _) => split_k(gpu, p),
        ("small", _, _) => launch(gpu, small_tiles(Dev::of(gpu)?.sms, m, n), p),
        (_, Some(_), DType::F64) => launch(gpu, TENSOR_CORE, p),
        (_, Some(h), _) => wgmma::gemm(gpu, h, p),
        _ => launch(gpu, rung, p),
    }
}

/// The shape of `kernels/mma.cuh`'s tensor-core GEMM for one element type (`Tc<T>`
/// there): its block tile of C, its threads, and the dynamic shared memory of its three
/// stages (`TC_SMEM(T)`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TcShape {
    pub tile: (usize, usize),
    pub threads: u32,
    pub smem: u32,
}

/// f32: 128×128 tiles of 256 threads, K-tiles of 32; f64: 128×64 tiles of 128 threads,
/// K-tiles of 16, two blocks per SM, the stage tiles' rows padded by 4 elements.
pub(crate) fn tc_shape<T: CudaElement>() -> TcShape {
    // (BN, BK, the rows' padding, stages, threads)
    let (bn, bk, pad, stages, threads) = match T::DTYPE {
        DType::F32 => (128, 32, 0, 3, 256),
        DType::F64 => (64, 16, 4, 3, 128),
    };
    let stage = 128 * (bk + pad) + bk * (bn + pad);
    TcShape {
        tile: (128, bn),
        threads,
        smem: (stages * stage * size_of::<T>()) as u32,
    }
}

/// Grants `f` (kernel `name`), a kernel on `kernels/mma.cuh`'s tensor-core GEMM for
/// `T`, the dynamic shared memory its stages take (past the 48 KB every kernel may use
/// without asking); returns it.
pub(crate) fn tc_shared_memory<T: CudaElement>(
    gpu: &Gpu,
    name: &str,
    f: &CudaFunction,
) -> Result<u32> {
    gpu.grant_shared_memory(f, name)?;
    Ok(tc_shape::<T>().smem)
}

/// Whether the device has the warp-level tensor-core instructions the `tensor_core`
/// rungs use (mma.sync on TF32 and f64: sm_80 and later).
pub(crate) fn has_tensor_cores(gpu: &Gpu) -> bool {
    Needs::Sm80.met_by(Some(gpu.arch()))
}

/// The slices of K that `split_k` cuts a product into, and the length of each (a
/// multiple of 16; the last may be shorter). None (one slice) when the m×n output's
/// 128×128 tiles are at least as many as the SMs; else as many as give the table's
/// blocks per SM (Hopper: two), each at least its K-tiles of 16 (Hopper: four). (On the
/// H200, splitting 2048² into two slices was slower than not splitting: docs/kernels.md.)
fn k_slices(dev: Dev, (m, n, k): (usize, usize, usize)) -> (usize, usize) {
    const KT: usize = 16;
    let tiles = m.div_ceil(128) * n.div_ceil(128);
    if small(dev, (m, n, k)) {
        return (1, k.div_ceil(KT) * KT);
    }
    if tiles >= dev.sms {
        return (1, k);
    }
    let most = (k / (dev.t.split_min_k_tiles * KT)).max(1);
    let wanted = (dev.t.split_blocks_per_sm * dev.sms)
        .div_ceil(tiles)
        .clamp(1, most);
    let len = k.div_ceil(wanted).div_ceil(KT) * KT;
    (k.div_ceil(len), len)
}

/// Whether `split_k` runs the small rung: C's 128×128 tiles fewer than the SMs and K at
/// most the table's bound (Hopper: 256), where a cut of K would cost a second launch for
/// a few K-tiles.
fn small(dev: Dev, (m, n, k): (usize, usize, usize)) -> bool {
    m.div_ceil(128) * n.div_ceil(128) < dev.sms && k <= dev.t.small_max_k
}

/// What `variant` runs on an m×n×k product on device `dev` (see `Backend::plan`): for
/// `split_k`, whether and how K is cut.
pub(crate) fn plan(
    variant: &str,
    fp64_tc: bool,
    dev: Dev,
    (m, n, k): (usize, usize, usize),
) -> Option<String> {
    if variant != "split_k" {
        return None;
    }
    // "1 tile", "16 tiles": C's tiles of bm×bn.
    let tiles_of = |bm: usize, bn: usize| match m.div_ceil(bm) * n.div_ceil(bn) {
        1 => "1 tile".to_string(),
        t => format!("{t} tiles"),
    };
    if fp64_tc && dmma(dev, (m, n, k)) {
        let (bm, bn) = tc_shape::<f64>().tile;
        let tiles = m.div_ceil(bm) * n.div_ceil(bn);
        return Some(match stream_cut(dev, tiles, k.div_ceil(16)) {
            None => format!(
                "tensor_core (FP64 tensor cores): C in {} of {bm}x{bn}",
                tiles_of(bm, bn)
            ),
            Some(c) => format!(
                "tensor_core (FP64 tensor cores): C in {} of {bm}x{bn}; stream-K: {} of \
                 {} K-tiles of 16 dealt out over {} blocks, the other {} one to a block",
                tiles_of(bm, bn),
                c.tiles,
                k.div_ceil(16),
                c.blocks,
                tiles - c.tiles
            ),
        });
    }
    let tiles = tiles_of(128, 128);
    if small(dev, (m, n, k)) {
        let (bm, bn) = small_tiles(dev.sms, m, n).tile;
        return Some(format!(
            "small: {} of {bm}x{bn} (C in {tiles} of 128x128)",
            tiles_of(bm, bn)
        ));
    }
    Some(match k_slices(dev, (m, n, k)) {
        // Fewer tiles than SMs and K over the small bound always cut.
        (1, _) => format!("double_buffered: C in {tiles} for {} SMs", dev.sms),
        (s, len) => format!("K in {s} slices of {len} (C in {tiles})"),
    })
}

/// Whether `split_k` runs f64 on the FP64 tensor cores (where the device has them): where
/// that kernel's 128×64 blocks are at least the table's fraction of the SMs (Hopper:
/// half), or K is at most its bound (Hopper: 256, nothing worth cutting), or K is short
/// (Hopper: at most 1024) and the blocks at least the table's smaller fraction (Hopper:
/// a twelfth; docs/kernels.md, "Short K on the tensor cores", has what set both), or
/// stream-K spreads the tiles' K over at least the first fraction ([`stream_cut`]);
/// elsewhere its CUDA-core forms, which cut K for few tiles of C. (The FP64 tensor cores
/// outrun the CUDA cores, but without stream-K one block walks all of K.)
pub(crate) fn dmma(dev: Dev, (m, n, k): (usize, usize, usize)) -> bool {
    let (bm, bn) = tc_shape::<f64>().tile;
    let tiles = m.div_ceil(bm) * n.div_ceil(bn);
    dev.t.dmma(tiles, dev.sms, k)
        || stream_cut(dev, tiles, k.div_ceil(16)).is_some_and(|c| dev.t.filled(c.blocks, dev.sms))
}

/// The stream-K cut of the f64 DMMA GEMM (`gemm_stream_tc_f64`, `kernels/matmul.cu`):
/// the first `tiles` of C's tiles (in the kernel's order) dealt out as K-tiles over
/// `blocks` blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamCut {
    pub tiles: usize,
    pub blocks: usize,
}

/// Whether and how the f64 DMMA GEMM runs stream-K for `tiles` tiles of C of `steps`
/// K-tiles each: where the tiles are not a whole number of waves (two blocks per SM),
/// the tiles of the last two waves (all of them where there are fewer) go to one wave of
/// blocks as equal ranges of K-tiles, the others one to a block. Two blocks share an SM's
/// tensor cores, and one alone runs its tile in the table's fraction of their time
/// (Hopper: 0.53), so a last wave of at most one block per SM costs that fraction of a
/// wave. Stream-K runs where it costs at most the table's fraction of one block per tile
/// (Hopper: 88%; docs/kernels.md, "Stream-K on the FP64 tensor cores", has what set it
/// and the other constants), counting the K-tiles of the longest range and the table's K-tiles for
/// the parts and their sums (Hopper: 8), with every block at least the table's K-tiles
/// (Hopper: 4) and at most its stream blocks per stream tile (Hopper: 2; the sums read
/// a tile's parts one after another).
pub(crate) fn stream_cut(dev: Dev, tiles: usize, steps: usize) -> Option<StreamCut> {
    const PER_SM: usize = 2; // gemm_stream_tc_f64's blocks an SM holds (launch bounds)
    let wave = dev.sms * PER_SM;
    if wave == 0 || steps == 0 || tiles.is_multiple_of(wave) {
        return None;
    }
    let (whole, rest) = (tiles / wave, tiles % wave);
    let stream = tiles - wave * whole.saturating_sub(1);
    let units = stream.checked_mul(steps)?;
    let blocks = wave
        .min(units / dev.t.stream_k_min_steps)
        .min(stream * dev.t.stream_tc_max_parts);
    // The kernel counts all the tiles' units in 32 bits.
    if blocks < 2
        || tiles
            .checked_mul(steps)
            .and_then(|u| i32::try_from(u).ok())
            .is_none()
    {
        return None;
    }
    // In K-tiles of two blocks sharing an SM, times the lone block's denominator.
    let (alone, per) = dev.t.stream_tc_alone;
    let last = steps * if rest <= dev.sms { alone } else { per };
    let one_each = whole * steps * per + last;
    let cost =
        (whole.saturating_sub(1) * steps + units.div_ceil(blocks) + dev.t.stream_tc_extra_steps)
            * per;
    let (keep, of) = dev.t.stream_tc_keep;
    (of * cost <= keep * one_each).then_some(StreamCut {
        tiles: stream,
        blocks,
    })
}

/// `C ← alpha·A·B + beta·C` by the `split_k` rung: the partial products of the slices
/// of K into a workspace, then their sums in slice order (see `kernels/matmul.cu`). One
/// slice is the double_buffered rung itself.
fn split_k<T: CudaElement>(gpu: &Gpu, p: Product<'_, T>) -> Result<()> {
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
fn stream_tc<T: CudaElement>(gpu: &Gpu, cut: StreamCut, p: Product<'_, T>) -> Result<()> {
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
fn applied<'a, T: CudaElement>(
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
/// the ladder's fastest rung (its tiles and pipeline, with leading dimensions): op(A) is
/// A (m×k) or, with `trans_a`, Aᵀ for an A held k×m. With `beta = 0`, C is not read.
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
    let cfg = tile_grid(DOUBLE_BUFFERED, m, n)?;
    let form = if trans_a { "tn" } else { "nn" };
    let name = format!("gemm_strided_{form}_{}", T::SUFFIX);
    let f = gpu.function(KernelFile::MATMUL, &name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &mi, &ni, &ki, &alpha, a.view, &lda, b.view, &ldb, &beta, c.view, &ldc);
    // SAFETY: gemm_strided_<form>_<dtype>(int M, int N, int K, T alpha, const T* A, int
    // lda, const T* B, int ldb, T beta, T* C, int ldc): each view holds its block (last
    // row start + row length, checked above), the kernel reads and writes only inside the
    // blocks (every access bounds-checked against M, N, K, vectors only where the extent
    // and the leading dimension are whole vectors); the grid has one block per 128×128
    // tile of C, as for the double_buffered rung whose tiles it shares.
    launched(&name, unsafe { l.launch(cfg) })
}

/// One block of `rung.block` threads per `rung.tile` of the m×n C (the kernels decode
/// the tile from blockIdx.x).
fn tile_grid(rung: Rung, m: usize, n: usize) -> Result<LaunchConfig> {
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
    fn new(
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

fn launch<T: CudaElement>(gpu: &Gpu, rung: Rung, p: Product<'_, T>) -> Result<()> {
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
fn scale<T: CudaElement>(gpu: &Gpu, beta: T, c: &mut DeviceMatrix<T>) -> Result<()> {
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

impl<T: CudaElement> MatMulKernels<T> for CudaBackend {
    fn gemm_unchecked(
        &self,
        g: Gemm<T>,
        a: &Matrix<T>,
        b: &Matrix<T>,
        c: &mut Matrix<T>,
    ) -> Result<()> {
        let (gpu, here) = (self.gpu(), self.here());
        let a = gpu.dm(here, "gemm", "A", a)?;
        let b = gpu.dm(here, "gemm", "B", b)?;
        let c = gpu.dm_mut(here, "gemm", "C", c)?;
        gemm(gpu, self.variant(Family::MatMul), g, a, b, c)
    }

    fn gram_unchecked(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        super::gram::gram_of(self, m)
    }
}

#[cfg(test)]
mod tests {
    use super::{k_slices, plan, stream_cut, StreamCut};
    use crate::ops::dispatch::Dev;

    #[test]
    fn the_plan_says_whether_and_how_split_k_cuts_k() {
        assert_eq!(
            plan("double_buffered", false, Dev::hopper(132), (64, 64, 8192)),
            None
        );
        let p = |mnk| plan("split_k", false, Dev::hopper(132), mnk).unwrap();
        assert_eq!(p((64, 64, 8192)), "K in 128 slices of 64 (C in 1 tile)");
        assert_eq!(
            p((4096, 4096, 4096)),
            "double_buffered: C in 1024 tiles for 132 SMs"
        );
        // Small outputs with a short K: one launch of 64×64 tiles, or of 32×32 ones
        // where the 64×64 would be fewer than the SMs.
        assert_eq!(
            p((5, 7, 63)),
            "small: 1 tile of 32x32 (C in 1 tile of 128x128)"
        );
        assert_eq!(
            p((256, 256, 256)),
            "small: 64 tiles of 32x32 (C in 4 tiles of 128x128)"
        );
        assert_eq!(
            p((704, 768, 256)),
            "small: 132 tiles of 64x64 (C in 36 tiles of 128x128)"
        );
        assert_eq!(
            p((1024, 1024, 64)),
            "small: 256 tiles of 64x64 (C in 64 tiles of 128x128)"
        );
        assert_eq!(p((128, 128, 257)), "K in 4 slices of 80 (C in 1 tile)");
        assert_eq!(
            p((2048, 2048, 64)),
            "double_buffered: C in 256 tiles for 132 SMs"
        );
    }

    #[test]
    fn f64_runs_on_the_fp64_tensor_cores_unless_few_tiles_would_walk_a_long_k() {
        let p = |mnk| plan("split_k", true, Dev::hopper(132), mnk).unwrap();
        assert_eq!(
            p((8192, 8192, 256)),
            "tensor_core (FP64 tensor cores): C in 8192 tiles of 128x64"
        );
        // 128 blocks for 132 SMs: DMMA. A K of at most 1024 with at least 11 blocks: DMMA
        // (512² has 32); longer, or fewer blocks: the split of K.
        assert!(p((1024, 1024, 1024)).starts_with("tensor_core"));
        assert_eq!(
            p((512, 512, 512)),
            "tensor_core (FP64 tensor cores): C in 32 tiles of 128x64"
        );
        assert!(p((320, 320, 320)).starts_with("tensor_core"));
        assert_eq!(p((512, 512, 2048)), "K in 16 slices of 128 (C in 16 tiles)");
        assert_eq!(p((128, 320, 640)), "K in 10 slices of 64 (C in 3 tiles)");
        assert_eq!(p((64, 64, 8192)), "K in 128 slices of 64 (C in 1 tile)");
        // A short K leaves nothing to cut.
        assert_eq!(
            p((64, 64, 64)),
            "tensor_core (FP64 tensor cores): C in 1 tile of 128x64"
        );
        assert_eq!(p((64, 64, 257)), "K in 4 slices of 80 (C in 1 tile)");
    }

    #[test]
    fn f64_stream_k_where_the_last_wave_would_be_part_empty() {
        let d = Dev::hopper(132);
        let p = |mnk| plan("split_k", true, d, mnk).unwrap();
        // 1536²: 288 tiles of 96 K-tiles, 1.09 waves of 264 blocks, the last 24 blocks
        // alone on their SMs (0.53 of a wave): all 288 dealt out, 105 K-tiles a block
        // instead of 147.
        assert_eq!(
            p((1536, 1536, 1536)),
            "tensor_core (FP64 tensor cores): C in 288 tiles of 128x64; stream-K: 288 of \
             96 K-tiles of 16 dealt out over 264 blocks, the other 0 one to a block"
        );
        // 2560²: 800 tiles, 3.03 waves: the first two waves' 528 one to a block.
        assert_eq!(
            stream_cut(d, 800, 160),
            Some(StreamCut {
                tiles: 272,
                blocks: 264
            })
        );
        // Whole waves; 1.94 waves (2048²); a last wave of more than one block per SM
        // (4096²: 200 of 264) or of fewer whose time is half a wave's (1024², 128
        // tiles): the parts and their sums cost more than the empty places.
        assert_eq!(stream_cut(d, 8 * 264, 512), None);
        assert_eq!(stream_cut(d, 512, 128), None);
        assert_eq!(stream_cut(d, 2048, 256), None);
        assert_eq!(stream_cut(d, 128, 64), None);
        // A short K (8192² × 64 has 8 tiles past 31 waves).
        assert_eq!(stream_cut(d, 8192, 4), None);
        // Few tiles: at most two blocks a tile, so one block per tile is as fast.
        assert_eq!(stream_cut(d, 1, 512), None);
        assert_eq!(stream_cut(d, 15, 33), None);
        // Every block at least 4 K-tiles and two blocks, the one-to-a-block tiles whole
        // waves.
        for (tiles, steps) in [(280, 63), (288, 96), (544, 40), (549, 19), (800, 160)] {
            if let Some(c) = stream_cut(d, tiles, steps) {
                assert!(c.tiles <= tiles && c.blocks >= 2 && c.blocks <= 2 * c.tiles);
                assert!(c.tiles * steps >= 4 * c.blocks, "{tiles} {steps} {c:?}");
                assert!((tiles - c.tiles) % 264 == 0, "{tiles} {steps} {c:?}");
            }
        }
    }

    #[test]
    fn k_is_sliced_only_where_tiles_are_few_and_every_slice_is_nonempty() {
        // (SMs, m, n, k) → (slices, slice length).
        for (sms, mnk, want) in [
            (132, (4096, 4096, 4096), (1, 4096)),
            (132, (2048, 2048, 2048), (1, 2048)),
            (132, (1024, 1024, 1024), (5, 208)),
            (132, (512, 512, 512), (8, 64)),
            (132, (64, 64, 8192), (128, 64)),
            (132, (1000, 65, 513), (7, 80)),
            (132, (5, 7, 63), (1, 64)),
            (1, (512, 512, 512), (1, 512)),
        ] {
            let (slices, len) = k_slices(Dev::hopper(sms), mnk);
            assert_eq!((slices, len), want, "{sms} SMs, {mnk:?}");
            let k = mnk.2;
            assert!(len % 16 == 0 && (slices - 1) * len < k && slices * len >= k);
        }
    }
}
