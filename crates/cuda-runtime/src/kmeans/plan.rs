//! The chunking of the deterministic centroid sums ([`Plan`]) and the kernel that forms
//! them ([`ChunkSums`]); both depend on the shape only.

use crate::element::CudaElement;

/// Warps of the partial-sum kernel (`W` in `km_accumulate_partials`).
const WARPS: usize = 8;
/// Shared memory the partial-sum kernel may take (under the 48 KB static limit).
const PARTIAL_SMEM: usize = 40 * 1024;
/// Cap on the chunk partials, in elements (G·K·D): 8 Mi.
const PARTIAL_CAP: usize = 1 << 23;
/// Smallest chunk of points per partial.
const MIN_CHUNK: usize = 4096;

/// The chunking of the deterministic centroid sums; depends on the shape only.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Points per chunk: chunk `c` sums points `c·chunk ..` of the whole of X, wherever
    /// they are stored (a backend over several devices sums the chunks of its shards).
    pub chunk: usize,
    /// Number of chunks (partials).
    pub g: usize,
    pub(super) kb: usize,
    pub(super) db: usize,
    /// Bytes of one count: an `i32`, or a `T` with sample weights.
    mass: usize,
}

impl Plan {
    /// The chunking for N points, K centroids, D dimensions in `T`; `weighted`: with
    /// sample weights (the counts are sums of weights in `T`). The points of a chunk
    /// do not depend on `weighted`.
    pub fn new<T: CudaElement>(n: usize, k: usize, d: usize, weighted: bool) -> Plan {
        let db = d.clamp(1, 128);
        let mass = if weighted {
            std::mem::size_of::<T>()
        } else {
            4
        };
        let kb = (PARTIAL_SMEM / (WARPS * (db * std::mem::size_of::<T>() + mass))).clamp(1, k);
        let gmax = (PARTIAL_CAP / (k * d).max(1)).max(1);
        let chunk = n.div_ceil(gmax).max(MIN_CHUNK);
        Plan {
            chunk,
            g: n.div_ceil(chunk).max(1),
            kb,
            db,
            mass,
        }
    }
    pub(super) fn smem<T>(&self) -> u32 {
        (WARPS * self.kb * (self.db * std::mem::size_of::<T>() + self.mass)) as u32
    }
    /// The dynamic shared memory of the whole-row partial-sum kernel
    /// (`km_accumulate_rows`) for K centroids of D dimensions: every warp's K×D sum, K
    /// masses and 32 scratch elements (8·K masses keep them aligned).
    fn rows_smem<T>(&self, k: usize, d: usize) -> usize {
        WARPS * (k * (d * std::mem::size_of::<T>() + self.mass) + 32 * std::mem::size_of::<T>())
    }
    /// The kernel that sums `chunks` chunks of points for K centroids of D dimensions in
    /// `T` on a device of `sms` SMs whose blocks may be granted `optin` bytes of shared
    /// memory: the whole-row kernel where D ≤ 32, every warp's K×D sum fits and its one
    /// block per chunk fills the SMs (at least as many chunks as SMs); else cluster and
    /// dimension ranges, whose blocks are more and smaller. Both give the same bits.
    pub fn chunk_sums<T>(
        &self,
        k: usize,
        d: usize,
        chunks: usize,
        optin: usize,
        sms: usize,
    ) -> ChunkSums {
        let smem = self.rows_smem::<T>(k, d);
        if d <= 32 && smem <= optin && chunks >= sms {
            ChunkSums::WholeRows { smem }
        } else {
            ChunkSums::Ranges {
                clusters: k.div_ceil(self.kb),
                dims: d.div_ceil(self.db),
            }
        }
    }
}

/// The kernel that forms a set of chunk sums ([`Plan::chunk_sums`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkSums {
    /// `km_accumulate_rows`: one block per chunk, taking every row, granted `smem` bytes
    /// of shared memory.
    WholeRows {
        /// Bytes of dynamic shared memory a block.
        smem: usize,
    },
    /// `km_accumulate_partials`: per chunk, a block for each of `clusters` ranges of
    /// centroids and `dims` ranges of dimensions.
    Ranges {
        /// Ranges of centroids.
        clusters: usize,
        /// Ranges of dimensions.
        dims: usize,
    },
}

impl std::fmt::Display for ChunkSums {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkSums::WholeRows { .. } => write!(f, "whole-row chunk sums"),
            ChunkSums::Ranges { clusters, dims } => write!(
                f,
                "chunk sums over {clusters} centroid and {dims} dimension ranges"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The H100's and H200's opt-in shared memory a block, and SM counts.
    const OPTIN: usize = 232_448;

    #[test]
    fn whole_rows_where_d_is_at_most_32_the_sums_fit_and_the_chunks_fill_the_sms() {
        // 2^20 points, D = 32, K = 128: 256 chunks of 4096, 8 warps of 128×32 f32 sums,
        // 128 counts and 32 scratch words each.
        let p = Plan::new::<f32>(1 << 20, 128, 32, false);
        assert_eq!((p.chunk, p.g), (4096, 256));
        let smem = 8 * (128 * (32 * 4 + 4) + 32 * 4);
        assert_eq!(
            p.chunk_sums::<f32>(128, 32, p.g, OPTIN, 132),
            ChunkSums::WholeRows { smem }
        );
        // Fewer chunks than SMs (a shard, or a small N): the ranges' more blocks.
        let ranges = ChunkSums::Ranges {
            clusters: 128usize.div_ceil(p.kb),
            dims: 1,
        };
        assert_eq!(p.chunk_sums::<f32>(128, 32, 131, OPTIN, 132), ranges);
        // Shared memory short of the sums.
        assert_eq!(p.chunk_sums::<f32>(128, 32, p.g, smem - 1, 132), ranges);
        // D over 32.
        let wide = Plan::new::<f32>(1 << 20, 16, 33, false);
        assert!(matches!(
            wide.chunk_sums::<f32>(16, 33, wide.g, OPTIN, 132),
            ChunkSums::Ranges { .. }
        ));
        // f64 with weights: masses of 8 bytes.
        let w = Plan::new::<f64>(1 << 20, 64, 32, true);
        assert_eq!(
            w.chunk_sums::<f64>(64, 32, w.g, OPTIN, 132),
            ChunkSums::WholeRows {
                smem: 8 * (64 * (32 * 8 + 8) + 32 * 8)
            }
        );
        // K = 1024 at D = 32 does not fit (8 warps × 128 KB).
        let big = Plan::new::<f32>(1 << 20, 1024, 32, false);
        assert!(matches!(
            big.chunk_sums::<f32>(1024, 32, big.g, OPTIN, 132),
            ChunkSums::Ranges { .. }
        ));
    }
}
