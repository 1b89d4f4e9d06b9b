//! What is measured: the operations, their sizes, and the work (FLOPs or bytes) that
//! turns a time into a rate.

use std::fmt;
use std::str::FromStr;

use ndgpu_core::Family;

/// Dimensions of every k-means case: D = 32 coordinates per point, K = 128 centroids.
pub const KMEANS_D: usize = 32;
/// Centroids of every k-means case.
pub const KMEANS_K: usize = 128;

/// An operation of the shootout. The size `n` of a case means, per op: the order of
/// the square matrices (matmul, gram, transpose, cholesky), the number of elements
/// (sum, dot), or the number of points N (kmeans).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// n×n×n GEMM `C = A·B`.
    Matmul,
    /// `M·Mᵀ` of an n×n `M`.
    Gram,
    /// Out-of-place transpose of an n×n matrix.
    Transpose,
    /// Sum of n elements.
    Sum,
    /// Dot product of two vectors of n elements.
    Dot,
    /// Cholesky factorization of an n×n SPD matrix.
    Cholesky,
    /// `A·X = B` with A's Cholesky factor (made outside the timed region), n×n, and n
    /// right-hand sides, into a new X.
    Solve,
    /// One Lloyd iteration of k-means on N points, D = 32, K = 128.
    KMeans,
    /// A resident chain: `G = M·Mᵀ` of an n×n M, its Cholesky factor, then the solve
    /// `G·X = B` with n right-hand sides; only X is downloaded (at the check).
    Chain,
    /// An upload of n elements (a C-ordered host array) and the download of the result.
    Transfer,
}

/// What a rate is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    /// 10⁹ floating-point operations per second.
    GFlops,
    /// 10⁹ bytes per second.
    GBs,
}

impl Unit {
    /// `GFLOP/s` or `GB/s`.
    pub fn name(self) -> &'static str {
        match self {
            Unit::GFlops => "GFLOP/s",
            Unit::GBs => "GB/s",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which default size ladder to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The full ladder on the GPU (the default run: minutes).
    Gpu,
    /// A few small sizes on the GPU (`quick`).
    GpuQuick,
    /// Small sizes for the single-threaded CPU reference.
    Cpu,
}

impl Op {
    /// Every op, in report order.
    pub const ALL: [Op; 10] = [
        Op::Matmul,
        Op::Gram,
        Op::Transpose,
        Op::Sum,
        Op::Dot,
        Op::Cholesky,
        Op::Solve,
        Op::KMeans,
        Op::Chain,
        Op::Transfer,
    ];

    /// Lowercase name, as the CLI takes it and the files are named.
    pub fn name(self) -> &'static str {
        match self {
            Op::Matmul => "matmul",
            Op::Gram => "gram",
            Op::Transpose => "transpose",
            Op::Sum => "sum",
            Op::Dot => "dot",
            Op::Cholesky => "cholesky",
            Op::Solve => "solve",
            Op::KMeans => "kmeans",
            Op::Chain => "chain",
            Op::Transfer => "transfer",
        }
    }

    /// Parses [`Op::name`].
    pub fn from_name(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }

    /// The family whose variants run this op; `None` for the chain (it runs every
    /// family's default) and the transfer (no family).
    pub fn family(self) -> Option<Family> {
        match self {
            Op::Matmul => Some(Family::MatMul),
            Op::Gram => Some(Family::Gram),
            Op::Transpose => Some(Family::Transpose),
            Op::Sum | Op::Dot => Some(Family::Reduce),
            Op::Cholesky | Op::Solve => Some(Family::Cholesky),
            Op::KMeans => Some(Family::KMeans),
            Op::Chain | Op::Transfer => None,
        }
    }

    /// Whether the op is limited by memory bandwidth (rated in GB/s against a copy of
    /// the same bytes) rather than by arithmetic (GFLOP/s against the peak).
    pub fn bandwidth_bound(self) -> bool {
        matches!(self, Op::Transpose | Op::Sum | Op::Dot | Op::Transfer)
    }

    /// The unit of its rate.
    pub fn unit(self) -> Unit {
        if self.bandwidth_bound() {
            Unit::GBs
        } else {
            Unit::GFlops
        }
    }

    /// The work of one run at size `n` with elements of `elem_bytes` bytes: FLOPs for
    /// compute-bound ops, bytes moved for bandwidth-bound ones (see
    /// [`Op::work_formula`]).
    pub fn work(self, n: usize, elem_bytes: usize) -> f64 {
        let n = n as f64;
        let s = elem_bytes as f64;
        match self {
            Op::Matmul | Op::Gram => 2.0 * n * n * n,
            Op::Transpose => 2.0 * n * n * s,
            Op::Sum => n * s,
            Op::Dot => 2.0 * n * s,
            Op::Cholesky => n * n * n / 3.0,
            Op::Solve => 2.0 * n * n * n,
            Op::KMeans => 2.0 * n * (KMEANS_K * KMEANS_D) as f64,
            Op::Chain => 2.0 * n * n * n + n * n * n / 3.0 + 2.0 * n * n * n,
            Op::Transfer => 2.0 * n * s,
        }
    }

    /// How [`Op::work`] is counted, for the reports.
    pub fn work_formula(self) -> &'static str {
        match self {
            Op::Matmul => "2n³ FLOPs (n×n×n GEMM)",
            Op::Gram => {
                "2n³ GEMM-equivalent FLOPs (M·Mᵀ of an n×n M); the symmetric kernels \
                 compute only one triangle, so they do about half of that"
            }
            Op::Transpose => "2·n²·size bytes (each element read once and written once)",
            Op::Sum => "n·size bytes (each element read once)",
            Op::Dot => "2n·size bytes (each element of x and y read once)",
            Op::Cholesky => "n³/3 FLOPs (the leading term of the factorization)",
            Op::Solve => "2n³ FLOPs (two triangular solves with n right-hand sides)",
            Op::KMeans => {
                "2·N·K·D FLOPs with K = 128, D = 32: the distances' inner products only; \
                 the argmin (N·K compares) and the centroid update (N·D adds) are not counted"
            }
            Op::Chain => {
                "2n³ + n³/3 + 2n³ FLOPs: M·Mᵀ counted as a GEMM, the factorization's leading \
                 term, and two triangular solves with n right-hand sides"
            }
            Op::Transfer => "2·n·size bytes (each element crosses the bus once each way)",
        }
    }

    /// What the size means, for the reports' axes.
    pub fn size_label(self) -> &'static str {
        match self {
            Op::Matmul | Op::Gram | Op::Transpose | Op::Cholesky | Op::Solve | Op::Chain => {
                "n (n×n matrices)"
            }
            Op::Sum | Op::Dot | Op::Transfer => "n (elements)",
            Op::KMeans => "N (points; D = 32, K = 128)",
        }
    }

    /// The default sizes for `target`.
    pub fn default_sizes(self, target: Target) -> Vec<usize> {
        let pow2 = |lo: u32, hi: u32| (lo..=hi).map(|e| 1usize << e).collect::<Vec<_>>();
        match (self, target) {
            (Op::Matmul | Op::Gram | Op::Cholesky | Op::Solve, Target::Gpu) => pow2(8, 13),
            (Op::Matmul | Op::Gram | Op::Cholesky | Op::Solve, Target::GpuQuick) => pow2(8, 9),
            (Op::Matmul | Op::Gram | Op::Cholesky | Op::Solve, Target::Cpu) => pow2(6, 8),
            (Op::Transpose, Target::Gpu) => pow2(10, 14),
            (Op::Transpose, Target::GpuQuick) => pow2(10, 11),
            (Op::Transpose, Target::Cpu) => pow2(8, 10),
            (Op::Sum | Op::Dot, Target::Gpu) => pow2(20, 28),
            (Op::Sum | Op::Dot, Target::GpuQuick) => vec![1 << 20, 1 << 22],
            (Op::Sum | Op::Dot, Target::Cpu) => vec![1 << 16, 1 << 18, 1 << 20],
            (Op::KMeans, Target::Gpu) => pow2(14, 20),
            (Op::KMeans, Target::GpuQuick) => pow2(14, 15),
            (Op::KMeans, Target::Cpu) => pow2(12, 14),
            (Op::Chain, Target::Gpu) => pow2(10, 13),
            (Op::Chain, Target::GpuQuick) => pow2(9, 10),
            (Op::Chain, Target::Cpu) => pow2(6, 7),
            (Op::Transfer, Target::Gpu) => vec![1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28],
            (Op::Transfer, Target::GpuQuick) => vec![1 << 20, 1 << 22],
            (Op::Transfer, Target::Cpu) => vec![1 << 16, 1 << 18, 1 << 20],
        }
    }

    /// A small size that is not a multiple of any tile, at which every variant is
    /// checked against a full host reference before it is timed.
    pub fn check_size(self) -> usize {
        match self {
            Op::Matmul | Op::Gram | Op::Transpose | Op::Cholesky | Op::Solve | Op::Chain => 131,
            Op::Sum | Op::Dot | Op::Transfer => 100_003,
            Op::KMeans => 1_031,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Op {
    type Err = String;
    fn from_str(s: &str) -> Result<Op, String> {
        Op::from_name(s).ok_or_else(|| {
            let known: Vec<_> = Op::ALL.iter().map(|o| o.name()).collect();
            format!("unknown op '{s}' (known: {})", known.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flop_counts() {
        assert_eq!(Op::Matmul.work(1000, 4), 2e9);
        assert_eq!(Op::Gram.work(1000, 8), 2e9);
        assert_eq!(Op::Cholesky.work(300, 4), 9e6);
        // 2·N·K·D = 2 · 1024 · 128 · 32
        assert_eq!(Op::KMeans.work(1024, 4), 8_388_608.0);
    }

    #[test]
    fn byte_counts() {
        assert_eq!(Op::Transpose.work(1024, 4), 8_388_608.0);
        assert_eq!(Op::Transpose.work(1024, 8), 16_777_216.0);
        assert_eq!(Op::Sum.work(1 << 20, 4), 4_194_304.0);
        assert_eq!(Op::Dot.work(1 << 20, 8), 16_777_216.0);
    }

    #[test]
    fn units_follow_the_bound() {
        for op in Op::ALL {
            let expect = if op.bandwidth_bound() {
                Unit::GBs
            } else {
                Unit::GFlops
            };
            assert_eq!(op.unit(), expect, "{op}");
        }
        assert_eq!(Op::Sum.unit().name(), "GB/s");
        assert_eq!(Op::Matmul.unit().name(), "GFLOP/s");
    }

    #[test]
    fn names_round_trip() {
        for op in Op::ALL {
            assert_eq!(op.name().parse::<Op>(), Ok(op));
        }
        let err = "gemm".parse::<Op>().unwrap_err();
        assert!(
            err.contains("unknown op 'gemm'") && err.contains("matmul"),
            "{err}"
        );
    }

    #[test]
    fn default_sizes_are_the_documented_ladders() {
        assert_eq!(
            Op::Matmul.default_sizes(Target::Gpu),
            [256, 512, 1024, 2048, 4096, 8192]
        );
        assert_eq!(
            Op::Transpose.default_sizes(Target::Gpu),
            [1024, 2048, 4096, 8192, 16384]
        );
        let red = Op::Sum.default_sizes(Target::Gpu);
        assert_eq!((red[0], *red.last().unwrap()), (1 << 20, 1 << 28));
        let km = Op::KMeans.default_sizes(Target::Gpu);
        assert_eq!((km[0], *km.last().unwrap()), (1 << 14, 1 << 20));
        // The CPU ladder stays small enough for a run under a minute on 2 cores.
        for op in Op::ALL {
            let max = *op.default_sizes(Target::Cpu).iter().max().unwrap();
            let limit = match op {
                Op::Matmul | Op::Gram | Op::Cholesky | Op::Solve => 256,
                Op::Chain => 128,
                Op::Transpose => 1024,
                Op::Sum | Op::Dot | Op::Transfer => 1 << 20,
                Op::KMeans => 1 << 14,
            };
            assert!(max <= limit, "{op}: {max}");
        }
    }

    #[test]
    fn check_sizes_are_not_tile_multiples() {
        for op in Op::ALL {
            let n = op.check_size();
            assert!(n % 2 == 1, "{op}: {n}");
            if op == Op::KMeans {
                assert!(n >= KMEANS_K);
            }
        }
    }
}
