//! The shape rules of `stream_k`: one block per tile, stream-K over a wave of blocks,
//! the narrow kernel for a short, wide M, or the FP64 tensor cores; fixed functions of
//! the shape and the device (`ops::dispatch`), never timed at run time.

use ndgpu_core::DType;
use ndgpu_cuda_runtime::CudaElement;

use super::table::{REG_BLOCKED, TENSOR_CORE};
use crate::ops::dispatch::Dev;
use crate::ops::matmul;

/// How `stream_k` covers an n×k M's upper 128×128 tiles on a device: one block per
/// tile (reg_blocked), or the tiles' K-steps dealt out over `blocks` blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cut {
    /// Upper tiles of C.
    pub(crate) tiles: usize,
    /// K-steps (of reg_blocked's BK) per tile.
    pub(crate) steps: usize,
    /// Blocks of the stream-K launch; `None`: one block per tile.
    pub(crate) blocks: Option<usize>,
    /// The most tiles one block's range meets (its slots in the workspace).
    pub(crate) most: usize,
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
pub(crate) fn cut<T: CudaElement>(dev: Dev, (n, k): (usize, usize)) -> Cut {
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
pub(crate) fn dmma(dev: Dev, (n, k): (usize, usize)) -> bool {
    dev.t.dmma(tc_items(n, pairs(k, 0)), dev.sms, k)
}

/// The tensor-core kernel's blocks for an n×k M of `T`: each upper 128×128 tile as
/// 128 / BN blocks of the element type's tile (f64: two).
pub(crate) fn tc_blocks<T: CudaElement>(n: usize, k: usize) -> usize {
    TENSOR_CORE.grid.blocks::<T>(n, k) * (128 / matmul::tc_shape::<T>().tile.1)
}

/// Whether the f64 DMMA gram pairs the left blocks of two diagonal tiles (gemm_tc's PAIR):
/// where M's rows (k elements from address `ptr`) are whole 16-byte chunks.
pub(crate) fn pairs(k: usize, ptr: u64) -> bool {
    k.is_multiple_of(2) && ptr.is_multiple_of(16)
}

/// The blocks of the f64 DMMA gram for an n×k M that do work: two of 128×64 per upper
/// 128×128 tile, less, where `paired`, the left blocks of the odd diagonal tiles (their
/// pair's block takes them).
pub(crate) fn tc_items(n: usize, paired: bool) -> usize {
    let diagonal = n.div_ceil(128);
    tc_blocks::<f64>(n, 0) - if paired { diagonal / 2 } else { 0 }
}

/// The narrow kernel's cut of an n×k M on device `dev`, where `stream_k` runs it (n at
/// most the table's rows and k at least its K; Hopper: 64 and 1024, where shorter
/// products gain nothing from a second launch): the order W of the padded output (32 or
/// 64, the kernel's two forms), and the slices of K and their length (a multiple of the
/// 32-column stage, at least two stages), as many as make about the table's threads per
/// SM (Hopper: 1024).
pub(crate) fn narrow_cut(dev: Dev, (n, k): (usize, usize)) -> Option<(usize, usize, usize)> {
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
