//! The M·Mᵀ ladder of report 003 (`kernels/gram.cu`): from one thread per output (v001)
//! through shared-memory tiles (v004), the symmetric upper half (v005), single-strip
//! diagonal tiles (v006), a fully unrolled inner product (v007) and column stripes summed
//! with atomics (v008, v009), to the GEMM ladder's register-blocked, vectorized kernel
//! run on upper-triangle tiles only, and the GEMM ladder's tensor-core kernel on those
//! tiles (`tensor_core`: 3xTF32 for f32, FP64 tensor cores for f64). The default,
//! `stream_k`, is `reg_blocked` where C's tiles fill whole waves of the device, and
//! reg_blocked's work dealt out evenly over a fixed number of blocks (stream-K) where
//! they do not: few tiles (a short, wide M: long K, a small C) or a last wave nearly
//! empty.
//!
//! The result is exactly symmetric on every variant: the symmetric ones compute the upper
//! triangle and mirror it; `naive` and `tiled` compute both halves, but C[i][j] and
//! C[j][i] then come from the same multiply-adds in the same order with the factors
//! swapped, which round identically. The stripe rungs sum the upper triangle with
//! atomics into a zeroed C, then copy it to the lower one in a second launch.

use cudarc::driver::{DevicePtr, LaunchConfig, PushKernelArg};
use ndgpu_core::{Backend, DType, Error, Family, Matrix, Needs, Precision, Result, Variant};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{check_buffer, dim_i32, go, grid_1d, launch_in_out};
use ndgpu_cuda_runtime::{driver, kernel, push_args, CudaElement, DeviceMatrix, Gpu, Kernel};

use crate::ops::dispatch::Dev;
use crate::ops::{matmul, wgmma};
use crate::CudaBackend;

/// Kernels the default variant launches: stream-K's pieces and their sums, reg_blocked's
/// where C's tiles fill whole waves, and the narrow kernels (W = 64 and 32) and their sums
/// for a short, wide M.
pub const DEFAULT_KERNELS: &[&str] = &[
    "gram_stream_k_f32",
    "gram_stream_k_f64",
    "gram_stream_k_sum_f32",
    "gram_stream_k_sum_f64",
    "gram_reg_blocked_f32",
    "gram_reg_blocked_f64",
    "gram_narrow_f32",
    "gram_narrow_f64",
    "gram_narrow32_f32",
    "gram_narrow32_f64",
    "gram_narrow_sum_f32",
    "gram_narrow_sum_f64",
    "gram_tensor_core_f64",
    "gram_stream_tc_f64",
    "gram_stream_tc_fix_f64",
];

/// What every variant shares.
pub const NOTE: &str = "exactly symmetric; every variant but stripes and stripes_transposed \
    is bitwise reproducible run to run (no atomics; each output summed by one thread in a \
    fixed order)";

/// Rows of M that the stripe rungs hold in shared memory (`STRIPE_ROWS` in
/// kernels/gram.cu, the report's 1024).
const STRIPE_ROWS: usize = 1024;
/// Bytes of a row's piece of one stripe (`32 / sizeof(T)` columns in kernels/gram.cu).
const STRIPE_BYTES: usize = 32;

/// How a variant covers C.
#[derive(Debug, Clone, Copy)]
enum Grid {
    /// Every tile of (rows, cols) of C.
    Full(usize, usize),
    /// Every square tile of this order on or above the diagonal, numbered column by column.
    Upper(usize),
    /// One block per column stripe of M ([`STRIPE_BYTES`] wide), adding into a zeroed C
    /// with atomics; `gram_mirror` completes C. At most [`STRIPE_ROWS`] rows.
    Stripes,
}

impl Grid {
    /// Blocks covering C (or M's stripes) for an n×k M of `T`.
    fn blocks<T>(self, n: usize, k: usize) -> usize {
        match self {
            Grid::Full(rows, cols) => n.div_ceil(rows) * n.div_ceil(cols),
            Grid::Upper(order) => {
                let t = n.div_ceil(order);
                t * (t + 1) / 2
            }
            Grid::Stripes => k.div_ceil(STRIPE_BYTES / size_of::<T>()),
        }
    }
}

/// One rung of the ladder: its row in the variant table, its kernel, how its grid
/// covers C, the block's threads, whether it runs the tensor-core GEMM
/// (`kernels/mma.cuh`; f32 on Mᵀ materialised first), and whether its f32 kernel is
/// Hopper's (`ops::wgmma`).
#[derive(Debug, Clone, Copy)]
struct Rung {
    v: Variant,
    kernel: Kernel,
    grid: Grid,
    block: (u32, u32),
    tensor_cores: bool,
    hopper: bool,
}

impl Rung {
    const fn new(v: Variant, kernel: Kernel, grid: Grid, block: (u32, u32)) -> Rung {
        Rung {
            v,
            kernel,
            grid,
            block,
            tensor_cores: false,
            hopper: false,
        }
    }
}

/// The f64 kernel of both tensor-core rungs.
const TENSOR_CORE: Rung = Rung {
    tensor_cores: true,
    ..Rung::new(
        Variant::new(
            "tensor_core",
            "the GEMM ladder's tensor_core kernel (mma.sync, three cp.async stages) on the \
             upper 128x128 tiles (f32 with M transposed first; f64 reads M's rows as both \
             operands, each upper tile as two 128x64 blocks), each result written with its \
             mirror; f32 on 3xTF32, f64 on FP64 tensor cores (IEEE)",
        )
        .precision(Precision::Tf32x3)
        .needs(Needs::Sm80),
        kernel!("gram_tensor_core"),
        Grid::Upper(128),
        (256, 1),
    )
};

/// The kernel `stream_k` runs where C's tiles fill whole waves.
const REG_BLOCKED: Rung = Rung::new(
    Variant::new(
        "reg_blocked",
        "the GEMM ladder's 128x128 register-blocked kernel with 16-byte loads on a 1-D grid \
         over the T(T+1)/2 upper tiles, results mirrored as 16-byte stores (f32: BK 16, one \
         shared buffer; f64: BK 8, double-buffered through registers)",
    ),
    kernel!("gram_reg_blocked"),
    Grid::Upper(128),
    (256, 1),
);

/// The ladder, default (fastest measured) first: one row per variant. The symmetric
/// rungs launch every tile; lower tiles return at once.
const RUNGS: [Rung; 11] = [
    Rung::new(
        Variant::new(
            "stream_k",
            "reg_blocked's kernel where its upper tiles fill whole waves; else the tiles' \
             K-steps dealt out evenly over one wave of blocks (stream-K), pieces summed in \
             the order of K; a narrow kernel for a short, wide M (at most 64 rows, K at \
             least 1024); f64 on FP64 tensor cores (sm_80+) runs tensor_core's DMMA kernel \
             (with stream-K over its blocks where the last wave would be mostly empty); the \
             choice depends on the shape, the dtype and the device",
        ),
        kernel!("gram_stream_k"),
        Grid::Upper(128),
        (256, 1),
    ),
    REG_BLOCKED,
    Rung::new(
        Variant::new(
            "symmetric",
            "only tiles on or above the diagonal computed, each result written to C[i][j] \
             and C[j][i]",
        ),
        kernel!("gram_symmetric"),
        Grid::Full(32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new(
            "symmetric_unrolled",
            "symmetric with the 32-term inner product of each K-step fully unrolled",
        ),
        kernel!("gram_symmetric_unrolled"),
        Grid::Full(32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new(
            "diagonal",
            "symmetric; diagonal tiles stage one strip of rows since both operands are the same",
        ),
        kernel!("gram_diagonal"),
        Grid::Full(32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new(
            "tiled",
            "32x32 shared-memory tiles, zero-filled at the edges",
        ),
        kernel!("gram_tiled"),
        Grid::Full(32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new(
            "stripes_transposed",
            "stripes with the stripe held transposed in shared memory (conflict-free reads)",
        )
        .not_reproducible(),
        kernel!("gram_stripes_transposed"),
        Grid::Stripes,
        (256, 1),
    ),
    Rung::new(
        Variant::new(
            "stripes",
            "one block per 32-byte-wide column stripe of M held in shared memory for all \
             rows, partial sums of the upper triangle added with floating-point atomics, \
             then mirrored; M of at most 1024 rows (larger is InvalidArgument)",
        )
        .not_reproducible(),
        kernel!("gram_stripes"),
        Grid::Stripes,
        (256, 1),
    ),
    Rung::new(
        Variant::new("naive", "one thread per output"),
        kernel!("gram_naive"),
        Grid::Full(8, 32),
        (32, 8),
    ),
    TENSOR_CORE,
    Rung {
        v: Variant::new(
            "wgmma",
            "f32 on the GEMM ladder's wgmma_3x kernel (3xTF32, TMA, warp-specialized, \
             persistent) on the upper 128x128 tiles, M's TF32 planes serving as both \
             operands, each result written with its mirror; f64 runs tensor_core's DMMA \
             kernel",
        )
        .precision(Precision::Tf32x3)
        .needs(Needs::Sm90),
        hopper: true,
        ..TENSOR_CORE
    },
];

/// The variant table's rows, default first.
pub fn variants() -> impl Iterator<Item = Variant> {
    RUNGS.iter().map(|r| r.v)
}

fn rung(variant: &str) -> Result<Rung> {
    super::find_rung(&RUNGS, |r| r.v, Family::Gram, variant)
}

/// The most rows of M that the gram variant `variant` takes, where it has a limit:
/// `stripes` and `stripes_transposed` hold a whole column stripe of M in shared memory,
/// at most 1024 rows; beyond that they return [`Error::InvalidArgument`]. `None` for the
/// other variants and for unknown names.
pub fn gram_row_limit(variant: &str) -> Option<usize> {
    match rung(variant).ok()?.grid {
        Grid::Stripes => Some(STRIPE_ROWS),
        Grid::Full(..) | Grid::Upper(_) => None,
    }
}

/// How `stream_k` covers an n×k M's upper 128×128 tiles on a device: one block per
/// tile (reg_blocked), or the tiles' K-steps dealt out over `blocks` blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cut {
    /// Upper tiles of C.
    tiles: usize,
    /// K-steps (of reg_blocked's BK) per tile.
    steps: usize,
    /// Blocks of the stream-K launch; `None`: one block per tile.
    blocks: Option<usize>,
    /// The most tiles one block's range meets (its slots in the workspace).
    most: usize,
}

/// The stream-K cut of an n×k M of `T` on device `dev`. A wave is as many
/// blocks as the device holds at once (reg_blocked's f32 kernel fits two per SM, its f64
/// one one). One block per tile costs ⌈tiles / wave⌉ waves of every K-step; stream-K
/// costs ⌈tiles·steps / wave⌉ K-steps in one wave, plus the table's K-steps for the
/// pieces and their sums (Hopper: two; a wave's K-step takes about as long as the sums'
/// launch: the measured sweep is in docs/kernels.md). Stream-K runs where it costs at
/// most the table's fraction of one block per tile (Hopper: it saves a tenth or more),
/// with every block at least the table's K-steps (Hopper: four), and writes every tile
/// through the workspace.
fn cut<T: CudaElement>(dev: Dev, (n, k): (usize, usize)) -> Cut {
    let (per_sm, bk) = match T::DTYPE {
        DType::F32 => (2, 16),
        DType::F64 => (1, 8),
    };
    let tiles = REG_BLOCKED.grid.blocks::<T>(n, k);
    let steps = k.div_ceil(bk);
    // The sums' kernel keeps a tile's pieces' offsets in 1024 slots of shared memory.
    let wave = (dev.sms * per_sm).clamp(1, 1024);
    let units = tiles * steps;
    let blocks = wave.min(units / dev.t.stream_k_min_steps).max(1);
    let each = units.div_ceil(blocks);
    let whole = tiles.div_ceil(wave) * steps;
    let (keep, of) = dev.t.stream_k_keep;
    // The kernel counts units in 32 bits.
    let stream =
        of * (each + dev.t.stream_k_extra_steps) <= keep * whole && i32::try_from(units).is_ok();
    Cut {
        tiles,
        steps,
        blocks: stream.then_some(blocks),
        most: if stream {
            tiles.min(each.div_ceil(steps) + 1)
        } else {
            1
        },
    }
}

/// Whether `stream_k` runs f64 on the FP64 tensor cores (the `tensor_core` rung, where
/// the device has them and the narrow kernel does not apply): where that kernel's blocks
/// that do work (two of 128×64 per upper 128×128 tile, less the paired ones:
/// [`tc_items`]) are as many as matmul's rule asks (`Table::dmma`: half the SMs; or K at
/// most 256; or K at most 1024 with a twelfth of the SMs); elsewhere stream-K's CUDA-core
/// forms, which spread a long K over the SMs.
fn dmma(dev: Dev, (n, k): (usize, usize)) -> bool {
    dev.t.dmma(tc_items(n, pairs(k, 0)), dev.sms, k)
}

/// The tensor-core kernel's blocks for an n×k M of `T`: each upper 128×128 tile as
/// 128 / BN blocks of the element type's tile (f64: two).
fn tc_blocks<T: CudaElement>(n: usize, k: usize) -> usize {
    TENSOR_CORE.grid.blocks::<T>(n, k) * (128 / matmul::tc_shape::<T>().tile.1)
}

/// Whether the f64 DMMA gram pairs the left blocks of two diagonal tiles (gemm_tc's PAIR):
/// where M's rows (k elements from address `ptr`) are whole 16-byte chunks.
fn pairs(k: usize, ptr: u64) -> bool {
    k.is_multiple_of(2) && ptr.is_multiple_of(16)
}

/// The blocks of the f64 DMMA gram for an n×k M that do work: two of 128×64 per upper
/// 128×128 tile, less, where `paired`, the left blocks of the odd diagonal tiles (their
/// pair's block takes them).
fn tc_items(n: usize, paired: bool) -> usize {
    let diagonal = n.div_ceil(128);
    tc_blocks::<f64>(n, 0) - if paired { diagonal / 2 } else { 0 }
}

/// The narrow kernel's cut of an n×k M on device `dev`, where `stream_k` runs it (n at
/// most the table's rows and k at least its K; Hopper: 64 and 1024, where shorter
/// products gain nothing from a second launch): the order W of the padded output (32 or
/// 64, the kernel's two forms), and the slices of K and their length (a multiple of the
/// 32-column stage, at least two stages), as many as make about the table's threads per
/// SM (Hopper: 1024).
fn narrow_cut(dev: Dev, (n, k): (usize, usize)) -> Option<(usize, usize, usize)> {
    if !(1..=dev.t.narrow_max_n.min(64)).contains(&n) || k < dev.t.narrow_min_k {
        return None;
    }
    let w = if n > 32 { 64 } else { 32 };
    let threads = (w / 4) * (w / 4);
    let wanted = (dev.sms.max(1) * dev.t.narrow_threads_per_sm / threads).max(1);
    let len = k.div_ceil(wanted).div_ceil(32).max(2) * 32;
    Some((w, k.div_ceil(len), len))
}

/// What `variant` runs for an n×k M of `dtype` on device `dev` (see `Backend::plan`):
/// for `stream_k`, one block per tile or the stream-K cut.
pub(crate) fn plan(
    variant: &str,
    dtype: DType,
    fp64_tc: bool,
    dev: Dev,
    nk: (usize, usize),
) -> Option<String> {
    if variant != "stream_k" {
        return None;
    }
    if let Some((w, slices, len)) = narrow_cut(dev, nk) {
        return Some(format!(
            "narrow: C padded to {w}x{w}, K in {slices} slices of {len}"
        ));
    }
    if fp64_tc && dmma(dev, nk) {
        let tiles = REG_BLOCKED.grid.blocks::<f64>(nk.0, nk.1);
        let (bm, bn) = matmul::tc_shape::<f64>().tile;
        // Resident matrices start 16-byte aligned.
        let items = tc_items(nk.0, pairs(nk.1, 0));
        let what = format!(
            "tensor_core (FP64 tensor cores): {tiles} upper tiles of 128x128, {items} blocks of {bm}x{bn}"
        );
        return Some(match matmul::stream_cut(dev, items, nk.1.div_ceil(16)) {
            None => what,
            Some(c) => format!(
                "{what}; stream-K: {} of {} K-tiles of 16 dealt out over {} blocks, the other {} one to a block",
                c.tiles,
                nk.1.div_ceil(16),
                c.blocks,
                items - c.tiles
            ),
        });
    }
    let c = match dtype {
        DType::F32 => cut::<f32>(dev, nk),
        DType::F64 => cut::<f64>(dev, nk),
    };
    let tiles = match c.tiles {
        1 => "1 upper tile".to_string(),
        t => format!("{t} upper tiles"),
    };
    Some(match c.blocks {
        None => format!("reg_blocked: {tiles}, one block each, for {} SMs", dev.sms),
        Some(b) => format!(
            "stream-K: {tiles} of {} K-steps over {b} blocks, {} each",
            c.steps,
            (c.tiles * c.steps).div_ceil(b)
        ),
    })
}

/// `out ← m·mᵀ` (n×n for an n×k `m`) on resident data with the named variant. Every
/// element of `out` is written and the result is exactly symmetric.
///
/// # Errors
/// [`Error::ShapeMismatch`] when `out` is not n×n, [`Error::UnknownVariant`],
/// [`Error::InvalidArgument`] for dimensions beyond the kernels' 32-bit indices or beyond
/// the variant's row limit ([`gram_row_limit`]), device errors.
pub(crate) fn gram<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    m: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    let rung = rung(variant)?;
    let hopper = rung.hopper && T::DTYPE == DType::F32;
    // The Hopper rung runs tensor_core's DMMA kernel for f64, which needs sm_80 only.
    let needs = if rung.hopper && !hopper {
        TENSOR_CORE.v
    } else {
        rung.v
    };
    super::require(gpu, Family::Gram, &needs)?;
    let (n, k) = m.dim();
    if out.dim() != (n, n) {
        return Err(Error::shape(
            "gram",
            format!(
                "the output is {}x{}, expected {n}x{n} for a {n}x{k} input",
                out.rows, out.cols
            ),
        ));
    }
    if let Some(limit) = gram_row_limit(variant).filter(|&l| n > l) {
        return Err(Error::invalid(
            "gram",
            format!(
                "variant {variant} holds a whole column stripe of M in shared memory, at \
                 most {limit} rows; M is {n}x{k}"
            ),
        ));
    }
    check_buffer("gram", "M", m)?;
    check_buffer("gram", "the output", out)?;
    if n == 0 {
        return Ok(());
    }
    if k == 0 {
        return zero(gpu, out);
    }
    let (ni, ki) = (dim_i32("gram", n)?, dim_i32("gram", k)?);
    let rung = if rung.v.name == "stream_k" {
        let dev = Dev::of(gpu)?;
        if let Some(cut) = narrow_cut(dev, (n, k)) {
            return narrow(gpu, (ni, ki), cut, m, out);
        }
        if T::DTYPE == DType::F64 && matmul::has_tensor_cores(gpu) && dmma(dev, (n, k)) {
            let paired = pairs(k, m.data.device_ptr(gpu.stream()).0);
            return match matmul::stream_cut(dev, tc_items(n, paired), k.div_ceil(16)) {
                Some(cut) => stream_tc(gpu, (ni, ki), paired, cut, m, out),
                None => tensor_core(gpu, (ni, ki), m, out),
            };
        }
        let c = cut::<T>(dev, (n, k));
        if let Some(blocks) = c.blocks {
            return stream_k(gpu, (ni, ki), c, blocks, m, out);
        }
        REG_BLOCKED
    } else {
        rung
    };
    if hopper {
        return wgmma::gram(gpu, (ni, ki), m, out);
    }
    if rung.tensor_cores {
        return tensor_core(gpu, (ni, ki), m, out);
    }
    let stripes = matches!(rung.grid, Grid::Stripes);
    if stripes {
        zero(gpu, out)?;
    }
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", rung.grid.blocks::<T>(n, k))?, 1, 1),
        block_dim: (rung.block.0, rung.block.1, 1),
        shared_mem_bytes: 0,
    };
    let kernel = (KernelFile::GRAM, rung.kernel.of::<T>());
    // SAFETY: gram_<variant>_<dtype>(int N, int K, const T* A, T* C) with A n×k and C n×n
    // row-major, both buffers checked to hold rows·cols elements; the grid has one block
    // per tile the kernel decodes from blockIdx.x (all tiles, or the upper ones), or per
    // stripe of A's columns (n checked against the stripe's rows above), and every access
    // is bounds-checked against N and K.
    unsafe { launch_in_out(gpu, kernel, cfg, (ni, ki), &m.data, &mut out.data) }?;
    if stripes {
        mirror(gpu, ni, out)?;
    }
    Ok(())
}

/// `out ← m·mᵀ` by stream-K (see `kernels/gram.cu`): the tiles' K-steps over `blocks`
/// blocks, pieces of tiles into a workspace, then their sums and mirrors.
fn stream_k<T: CudaElement>(
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
fn narrow<T: CudaElement>(
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
fn zero<T: CudaElement>(gpu: &Gpu, out: &mut DeviceMatrix<T>) -> Result<()> {
    let len = out.len();
    gpu.stream()
        .memset_zeros(&mut out.data.slice_mut(0..len))
        .map_err(|e| driver("gram: zeroing the output", e))
}

/// `out ← m·mᵀ` by the `tensor_core` rung (and `wgmma`'s f64): the tensor-core GEMM on the
/// upper tiles, each result written with its mirror; f32 on mᵀ materialised first, f64
/// reading B's stages from m's rows (no copy).
fn tensor_core<T: CudaElement>(
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
fn stream_tc<T: CudaElement>(
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
fn mirror<T: CudaElement>(gpu: &Gpu, n: i32, out: &mut DeviceMatrix<T>) -> Result<()> {
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

/// M·Mᵀ of a resident `m` into a new matrix, by the selected variant: the backend's
/// `gram` kernel.
pub(crate) fn gram_of<T: CudaElement>(b: &CudaBackend, m: &Matrix<T>) -> Result<Matrix<T>> {
    let gpu = b.gpu();
    let dm = gpu.dm(b.here(), "gram", "M", m)?;
    let n = dm.rows;
    let mut out = gpu.alloc_matrix("gram", n, n)?;
    gram(gpu, b.variant(Family::Gram), dm, &mut out)?;
    Ok(gpu.matrix(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_rung_and_only_the_stripe_rungs_have_a_row_limit() {
        for v in variants().map(|v| v.name) {
            let r = rung(v).unwrap();
            assert!(
                r.block.0 * r.block.1 <= 1024 && r.block.0.is_multiple_of(32),
                "{v}"
            );
            let limit = gram_row_limit(v);
            assert_eq!(limit.is_some(), v.starts_with("stripes"), "{v}");
        }
        assert_eq!(gram_row_limit("stripes"), Some(1024));
        assert_eq!(gram_row_limit("nope"), None);
        assert_eq!(RUNGS[0].v.name, "stream_k");
        let launched = [
            "gram_stream_k_",
            "gram_reg_blocked_",
            "gram_narrow",
            "gram_tensor_core_f64",
            "gram_stream_tc_",
        ];
        assert!(DEFAULT_KERNELS
            .iter()
            .all(|k| launched.iter().any(|p| k.starts_with(p))));
        // 8 floats or 4 doubles per stripe, as the kernels' W = 32 / sizeof(T).
        assert_eq!(Grid::Stripes.blocks::<f32>(1024, 17), 3);
        assert_eq!(Grid::Stripes.blocks::<f64>(1024, 17), 5);
    }

    #[test]
    fn stream_k_runs_where_whole_tiles_leave_a_wave_part_empty() {
        let p = |dtype, nk| plan("stream_k", dtype, false, Dev::hopper(132), nk).unwrap();
        assert_eq!(
            plan(
                "reg_blocked",
                DType::F32,
                false,
                Dev::hopper(132),
                (32, 1 << 20)
            ),
            None
        );
        // Whole waves: 528 tiles are two waves of 264 blocks; 2080 are 7.9.
        assert_eq!(
            p(DType::F32, (4096, 4096)),
            "reg_blocked: 528 upper tiles, one block each, for 132 SMs"
        );
        assert!(p(DType::F32, (8192, 8192)).starts_with("reg_blocked: 2080 upper tiles"));
        // 136 tiles leave 128 of 264 blocks idle: 17,408 K-steps over 264 blocks.
        assert_eq!(
            p(DType::F32, (2048, 2048)),
            "stream-K: 136 upper tiles of 128 K-steps over 264 blocks, 66 each"
        );
        // One tile over a long K: as many blocks as the device holds at once.
        assert_eq!(
            p(DType::F32, (100, 1 << 20)),
            "stream-K: 1 upper tile of 65536 K-steps over 264 blocks, 249 each"
        );
        // f64: one block per SM, K-steps of 8.
        assert_eq!(
            p(DType::F64, (2048, 2048)),
            "stream-K: 136 upper tiles of 256 K-steps over 132 blocks, 264 each"
        );
        // Too little work to cut: one tile of four K-steps.
        assert!(p(DType::F32, (64, 64)).starts_with("reg_blocked: 1 upper tile,"));
        // f64 on FP64 tensor cores where their blocks fill half the SMs or K is short.
        let q = |nk| plan("stream_k", DType::F64, true, Dev::hopper(132), nk).unwrap();
        // Two blocks a tile, less the left blocks of the odd diagonal tiles (paired).
        assert_eq!(
            q((1024, 1024)),
            "tensor_core (FP64 tensor cores): 36 upper tiles of 128x128, 68 blocks of 128x64"
        );
        // 410 blocks, 1.55 waves: stream-K over all of them (matmul's rule).
        assert_eq!(
            q((2560, 2560)),
            "tensor_core (FP64 tensor cores): 210 upper tiles of 128x128, 410 blocks of \
             128x64; stream-K: 410 of 160 K-tiles of 16 dealt out over 264 blocks, the \
             other 0 one to a block"
        );
        assert_eq!(tc_items(3072, false), 600);
        assert!(q((65536, 64)).starts_with("tensor_core"));
        assert!(q((256, 256)).starts_with("tensor_core"));
        // A K of at most 1024 with at least 11 blocks (512²: 18); longer, or fewer
        // blocks: stream-K on the CUDA cores.
        assert!(q((512, 512)).starts_with("tensor_core"));
        assert!(q((320, 320)).starts_with("tensor_core"));
        assert!(q((768, 768)).starts_with("tensor_core"));
        assert!(q((512, 2048)).starts_with("stream-K"));
        assert!(q((256, 640)).starts_with("stream-K"));
        assert!(q((130, 262_147)).starts_with("stream-K"));
        assert!(q((32, 1 << 20)).starts_with("narrow"));
        // Short and wide: the narrow kernel, at about 1024 threads per SM.
        assert_eq!(
            p(DType::F32, (32, 1 << 20)),
            "narrow: C padded to 32x32, K in 2048 slices of 512"
        );
        assert_eq!(
            p(DType::F64, (64, 65536)),
            "narrow: C padded to 64x64, K in 512 slices of 128"
        );
        assert_eq!(
            p(DType::F32, (33, 1024)),
            "narrow: C padded to 64x64, K in 16 slices of 64"
        );
        assert!(p(DType::F32, (65, 1 << 20)).starts_with("stream-K: 1 upper tile"));
        // Tall, skinny M: 131,328 tiles of four K-steps fill 497.5 waves.
        assert!(p(DType::F32, (65536, 64)).starts_with("reg_blocked: 131328 upper tiles"));
    }

    #[test]
    fn stream_k_slots_cover_every_tile_a_range_meets() {
        for (n, k) in [
            (2048, 2048),
            (3072, 3072),
            (2560, 333),
            (300, 100_000),
            (1, 17),
        ] {
            let c = cut::<f32>(Dev::hopper(132), (n, k));
            let Some(b) = c.blocks else { continue };
            let u = c.tiles * c.steps;
            assert!(b <= u, "{n}x{k}");
            for i in 0..b {
                let (u0, u1) = (i * u / b, (i + 1) * u / b);
                let met = (u1 - 1) / c.steps - u0 / c.steps + 1;
                assert!(met <= c.most, "{n}x{k}: block {i} meets {met} > {}", c.most);
            }
        }
    }
}
