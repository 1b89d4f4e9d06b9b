//! The shape rules of `split_k`: whether K is cut and how, whether f64 runs on the FP64
//! tensor cores, and stream-K's cut; fixed functions of the shape and the device
//! (`ops::dispatch`), never timed at run time.

use super::table::{small_tiles, tc_shape};
use crate::ops::dispatch::Dev;

/// The slices of K that `split_k` cuts a product into, and the length of each (a
/// multiple of 16; the last may be shorter). None (one slice) when the m×n output's
/// 128×128 tiles are at least as many as the SMs; else as many as give the table's
/// blocks per SM (Hopper: two), each at least its K-tiles of 16 (Hopper: four). (On the
/// H200, splitting 2048² into two slices was slower than not splitting: docs/kernels.md.)
pub(crate) fn k_slices(dev: Dev, (m, n, k): (usize, usize, usize)) -> (usize, usize) {
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
pub(crate) fn small(dev: Dev, (m, n, k): (usize, usize, usize)) -> bool {
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
        for (mnk, want) in [
            ((64, 64, 8192), "K in 128 slices of 64 (C in 1 tile)"),
            (
                (4096, 4096, 4096),
                "double_buffered: C in 1024 tiles for 132 SMs",
            ),
            // Small outputs with a short K: one launch of 64×64 tiles, or of 32×32 ones
            // where the 64×64 would be fewer than the SMs.
            (
                (5, 7, 63),
                "small: 1 tile of 32x32 (C in 1 tile of 128x128)",
            ),
            (
                (256, 256, 256),
                "small: 64 tiles of 32x32 (C in 4 tiles of 128x128)",
            ),
            (
                (704, 768, 256),
                "small: 132 tiles of 64x64 (C in 36 tiles of 128x128)",
            ),
            (
                (1024, 1024, 64),
                "small: 256 tiles of 64x64 (C in 64 tiles of 128x128)",
            ),
            ((128, 128, 257), "K in 4 slices of 80 (C in 1 tile)"),
            (
                (2048, 2048, 64),
                "double_buffered: C in 256 tiles for 132 SMs",
            ),
        ] {
            assert_eq!(p(mnk), want, "{mnk:?}");
        }
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
