//! The constants of the shape rules (matmul's `split_k`, gram's `stream_k`), one table per
//! GPU architecture, each derived from measurements on that architecture and never from
//! timing at run time: given the device (its architecture and SM count) and the shape,
//! the choice is fixed. What a kernel is (its tile, its stages, how many of its blocks an
//! SM holds) stays with the kernel; a table holds the thresholds that were measured.
//!
//! Only Hopper (sm_90) has been measured. Another architecture runs Hopper's table, and
//! the backend's description says so, until its own row is measured and added here.

use ndgpu_core::Result;
use ndgpu_cuda_runtime::Gpu;

/// The measured thresholds of one architecture's shape rules.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Table {
    /// The architecture measured, as NVRTC names it (`sm_90`).
    pub arch: &'static str,
    /// Where the measurements are.
    pub source: &'static str,
    /// matmul `split_k`: the `small` rung (64×64 tiles, one launch) where C's 128×128
    /// tiles are fewer than the SMs and K is at most this.
    pub small_max_k: usize,
    /// matmul `split_k`: where C's tiles are fewer than the SMs, K is cut into as many
    /// slices as give this many blocks per SM...
    pub split_blocks_per_sm: usize,
    /// ...each slice at least this many K-tiles of 16.
    pub split_min_k_tiles: usize,
    /// f64 runs on the FP64 tensor cores (both families) where their blocks are at least
    /// this fraction (numerator, denominator) of the SMs...
    pub dmma_min_fill: (usize, usize),
    /// ...or K is at most this (nothing worth cutting)...
    pub dmma_whole_k: usize,
    /// ...or K is at most this and the blocks at least `dmma_short_k_fill` of the SMs
    /// (one block walks a short K faster on the tensor cores than the split of K
    /// spreads it over the CUDA cores).
    pub dmma_short_k: usize,
    pub dmma_short_k_fill: (usize, usize),
    /// f64 on the FP64 tensor cores (matmul): stream-K where its cost is at most this
    /// fraction (numerator, denominator) of one block per tile's...
    pub stream_tc_keep: (usize, usize),
    /// ...counting this many K-tiles of 16 for a part's stores and the sums' launch...
    pub stream_tc_extra_steps: usize,
    /// ...and a block alone on an SM at this fraction of the time of two sharing it...
    pub stream_tc_alone: (usize, usize),
    /// ...with every block at least `stream_k_min_steps` K-tiles and at most this many
    /// stream blocks per stream tile.
    pub stream_tc_max_parts: usize,
    /// gram `stream_k`: runs stream-K where its cost is at most this fraction
    /// (numerator, denominator) of one block per tile's...
    pub stream_k_keep: (usize, usize),
    /// ...counting this many K-steps for the pieces and their sums...
    pub stream_k_extra_steps: usize,
    /// ...with every block at least this many K-steps.
    pub stream_k_min_steps: usize,
    /// gram `stream_k`: the narrow kernel for M of at most this many rows...
    pub narrow_max_n: usize,
    /// ...and K of at least this...
    pub narrow_min_k: usize,
    /// ...cut into as many slices as make about this many threads per SM.
    pub narrow_threads_per_sm: usize,
}

impl Table {
    /// Whether `blocks` are at least the DMMA fraction of `sms`.
    pub(crate) fn filled(&self, blocks: usize, sms: usize) -> bool {
        let (num, den) = self.dmma_min_fill;
        blocks * den >= sms * num
    }

    /// Whether f64 runs on the FP64 tensor cores for `blocks` blocks of its kernel over a
    /// K of `k` on `sms` SMs, by the rules above (stream-K's apart).
    pub(crate) fn dmma(&self, blocks: usize, sms: usize, k: usize) -> bool {
        let (num, den) = self.dmma_short_k_fill;
        self.filled(blocks, sms)
            || k <= self.dmma_whole_k
            || (k <= self.dmma_short_k && blocks * den >= sms * num)
    }
}

/// Hopper: the H100 (SXM, 80 GB HBM3) and H200 runs of 2026-11-24 to 2026-11-26.
pub(crate) const HOPPER: Table = Table {
    arch: "sm_90",
    source: "H100 and H200 ladders and shape sweeps, 2026-11-24..27 (docs/performance.md, docs/kernels.md)",
    small_max_k: 256,
    split_blocks_per_sm: 2,
    split_min_k_tiles: 4,
    dmma_min_fill: (1, 2),
    dmma_whole_k: 256,
    dmma_short_k: 1024,
    dmma_short_k_fill: (1, 12),
    stream_tc_keep: (88, 100),
    stream_tc_extra_steps: 8,
    stream_tc_alone: (53, 100),
    stream_tc_max_parts: 2,
    stream_k_keep: (9, 10),
    stream_k_extra_steps: 2,
    stream_k_min_steps: 4,
    narrow_max_n: 64,
    narrow_min_k: 1024,
    narrow_threads_per_sm: 1024,
};

/// Every measured table.
const TABLES: &[&Table] = &[&HOPPER];

/// The table of `arch`, and whether it was measured on it (else Hopper's).
pub(crate) fn table(arch: &str) -> (&'static Table, bool) {
    match TABLES.iter().find(|t| t.arch == arch) {
        Some(t) => (t, true),
        None => (&HOPPER, false),
    }
}

/// What the shape rules know of a device: its SM count and its architecture's table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dev {
    pub sms: usize,
    pub t: &'static Table,
}

impl Dev {
    /// The device `gpu` as the shape rules see it.
    ///
    /// # Errors
    /// The driver's, reading the SM count.
    pub(crate) fn of(gpu: &Gpu) -> Result<Dev> {
        Ok(Dev {
            sms: gpu.sm_count()?,
            t: table(gpu.arch()).0,
        })
    }

    /// Hopper's table on `sms` SMs (the tests' device).
    #[cfg(test)]
    pub(crate) fn hopper(sms: usize) -> Dev {
        Dev { sms, t: &HOPPER }
    }
}

/// The line a backend's description gives its table.
pub(crate) fn describe(arch: &str) -> String {
    match table(arch) {
        (t, true) => format!("shape rules: the {} table ({})", t.arch, t.source),
        (t, false) => format!(
            "shape rules: none measured on {arch}, so the {} table ({})",
            t.arch, t.source
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{describe, table, HOPPER};

    #[test]
    fn hopper_is_measured_and_other_architectures_run_its_table_and_say_so() {
        assert_eq!(table("sm_90"), (&HOPPER, true));
        assert_eq!(table("sm_80"), (&HOPPER, false));
        assert!(describe("sm_90").starts_with("shape rules: the sm_90 table ("));
        assert!(describe("sm_89").starts_with("shape rules: none measured on sm_89, so the sm_90"));
    }
}
