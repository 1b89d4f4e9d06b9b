//! Which cases a run measures: the size ladders (each op at a ladder of sizes, squares
//! for the matrix ops), or the shape suite (the squares and the rectangular shapes of
//! real workloads, and reductions of square, tall-thin and short-wide matrices).

use crate::cases::{named, Op, Target};
use crate::shape::Shape;

/// A set of cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Suite {
    /// Each op at its ladder of sizes ([`Op::default_sizes`], or the sizes asked for),
    /// as [`Op::shape`] makes them: squares for the matrix ops.
    #[default]
    Ladders,
    /// The shape suite ([`Suite::shapes`]): GEMM and M·Mᵀ at squares and at the
    /// rectangular shapes of real workloads, and the reductions whole and along each
    /// axis of square, tall-thin and short-wide matrices.
    Shapes,
}

/// The reductions of the shape suite.
const REDUCTIONS: [Op; 3] = [Op::Sum, Op::SumSq, Op::Argmax];

impl Suite {
    /// Both, as the CLI lists them.
    pub const ALL: [Suite; 2] = [Suite::Ladders, Suite::Shapes];

    /// `ladders` or `shapes`.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Ladders => "ladders",
            Suite::Shapes => "shapes",
        }
    }

    /// The ops it runs when none are named, in report order.
    pub fn ops(self) -> Vec<Op> {
        match self {
            Suite::Ladders => Op::LADDERS.to_vec(),
            Suite::Shapes => Op::ALL
                .into_iter()
                .filter(|op| !self.shapes(*op, Target::Gpu).is_empty())
                .collect(),
        }
    }

    /// The shapes of `op` for `target`, in the order they are run and reported; empty
    /// for an op the suite does not run.
    pub fn shapes(self, op: Op, target: Target) -> Vec<Shape> {
        match self {
            Suite::Ladders => op
                .default_sizes(target)
                .into_iter()
                .map(|n| op.shape(n))
                .collect(),
            Suite::Shapes => shape_suite(op, target),
        }
    }
}

/// Powers of two from 2^lo to 2^hi.
fn pow2(lo: u32, hi: u32) -> impl Iterator<Item = usize> {
    (lo..=hi).map(|e| 1usize << e)
}

/// The shape suite of issue 16. On the GPU: squares of 64 to 8192 for matmul and gram;
/// the GEMMs of the k-means distance product (N×D by D×K, N = 2²⁰, D ∈ {32, 128},
/// K ∈ {128, 1024}), an outer-product-like 8192×64×8192, an inner-product-like
/// 64×8192×64 and 1024×1024×64; M·Mᵀ of the tall-skinny 65536×64 (a 65536² result)
/// and the Gram matrices Mᵀ·M of the tall-skinny 65536×64 and 1048576×32 (the gram of
/// their transposes, 64×65536 and 32×1048576: a 64² and a 32² result; their M·Mᵀ
/// would be 4 TiB for 1048576×32); the reductions (sum, sum of squares, argmax) whole
/// and along each axis of an 8192² matrix, the tall-thin 2²⁴×16 and 2²⁰×32 and the
/// short-wide 16×2²⁴. The same kinds of shape, smaller, for the quick run and the host.
fn shape_suite(op: Op, target: Target) -> Vec<Shape> {
    let (squares, gemms, grams, matrices) = tables(target);
    match op {
        Op::Matmul => squares
            .iter()
            .map(|&n| op.shape(n))
            .chain(gemms.iter().map(|&(m, k, n)| Shape::gemm(m, k, n)))
            .collect(),
        Op::Gram => squares
            .iter()
            .map(|&n| op.shape(n))
            .chain(grams.iter().map(|&(m, k)| Shape::gram(m, k)))
            .collect(),
        _ if REDUCTIONS.contains(&op) => matrices
            .iter()
            .flat_map(|&(r, c)| [None, Some(0), Some(1)].map(|a| Shape::matrix(r, c, a)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The squares, GEMMs, grams and matrices of [`tables`].
type Tables = (
    Vec<usize>,
    Vec<(usize, usize, usize)>,
    Vec<(usize, usize)>,
    Vec<(usize, usize)>,
);

/// The lists of the shape suite for `target`: the squares (of matmul and gram), the
/// rectangular GEMMs (m, k, n), the grams (m, k) and the matrices reduced (rows,
/// columns). A table, one target a block, as [`shape_suite`] describes it.
#[rustfmt::skip]
fn tables(target: Target) -> Tables {
    match target {
        Target::Gpu => (
            pow2(6, 13).collect(),
            vec![(1 << 20, 32, 128), (1 << 20, 32, 1024), (1 << 20, 128, 128), (1 << 20, 128, 1024),
                 (8192, 64, 8192), (64, 8192, 64), (1024, 1024, 64)],
            vec![(65536, 64), (64, 65536), (32, 1 << 20)],
            vec![(8192, 8192), (1 << 24, 16), (1 << 20, 32), (16, 1 << 24)],
        ),
        Target::GpuQuick => (
            pow2(8, 9).collect(),
            vec![(1 << 16, 32, 128), (1 << 16, 128, 1024), (2048, 64, 2048), (64, 2048, 64), (1024, 1024, 64)],
            vec![(16384, 64), (64, 16384), (32, 1 << 16)],
            vec![(4096, 4096), (1 << 22, 16), (1 << 18, 32), (16, 1 << 22)],
        ),
        // Small enough for the single-threaded reference on 2 cores, in seconds.
        Target::Cpu => (
            pow2(6, 8).collect(),
            vec![(4096, 16, 32), (4096, 32, 128), (512, 16, 512), (16, 512, 16), (256, 256, 16)],
            vec![(1024, 16), (16, 1024), (8, 1 << 14)],
            vec![(512, 512), (1 << 16, 16), (1 << 14, 32), (16, 1 << 16)],
        ),
    }
}

named!(Suite, "suite");

#[cfg(test)]
mod tests;
