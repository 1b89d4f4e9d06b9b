//! What is measured: the operations, their shapes, and the work (FLOPs or bytes) that
//! turns a time into a rate.

use ndgpu_core::{ArgOp, Family, ReduceOp};

use crate::shape::Shape;
pub use crate::shape::{KMEANS_D, KMEANS_K};

/// An operation of the shootout, run at a [`Shape`] (see [`Op::takes`]). A ladder's
/// size `n` is the shape [`Op::shape`] makes of it: the order of the square matrices
/// (matmul, gram, transpose, cholesky, solve, lu, lu_solve, qr, lstsq, trsm, eigh, svd,
/// pca, chain), the
/// number of elements (the reductions, dot, transfer), or the number of points N
/// (kmeans). (The variants' order is that of the seeds of their inputs; [`Op::ALL`] is
/// the reports' order.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// GEMM `C = A·B`, A m×k, B k×n (n×n×n on a ladder).
    Matmul,
    /// `M·Mᵀ` of an m×k `M` (n×n on a ladder).
    Gram,
    /// Out-of-place transpose of an n×n matrix.
    Transpose,
    /// Sum of a matrix's elements, whole or along an axis (of n elements, one row, on a
    /// ladder).
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
    /// Sum of squares of a matrix's elements, whole or along an axis (as [`Op::Sum`]).
    SumSq,
    /// Index of the largest element, whole (flat, row-major) or along an axis (as
    /// [`Op::Sum`]; 8-byte indices, as NumPy's and PyTorch's).
    Argmax,
    /// LU with partial pivoting of an n×n matrix, in place (LAPACK's `getrf`).
    Lu,
    /// `A·X = B` with A's LU factor (made outside the timed region), n×n, and n
    /// right-hand sides, into a new X (`getrs`).
    LuSolve,
    /// Householder QR of an m×n matrix, in place: R and the reflectors, Q not formed
    /// (`geqrf`); n×n on a ladder.
    Qr,
    /// The least-squares solution of `A·x ≈ b`, A m×n (m ≥ n) of full column rank, one
    /// right-hand side, through QR (n×n on a ladder).
    Lstsq,
    /// `L·X = B` in place, L the lower triangle of an n×n matrix, n right-hand sides
    /// (`trsm`, left, lower, no transpose).
    Trsm,
    /// The symmetric eigendecomposition `A = V·diag(w)·Vᵀ` of an n×n A, eigenvalues and
    /// eigenvectors (`syevd`, `numpy.linalg.eigh`).
    Eigh,
    /// The reduced SVD `A = U·diag(s)·Vt` of an m×n A, with U and Vt (`gesvd`,
    /// `numpy.linalg.svd(full_matrices=False)`); n×n on a ladder.
    Svd,
    /// A PCA fit of m×d data to min(m, d, [`PCA_COMPONENTS`]) components
    /// ([`ndgpu_core::Pca`]: the covariance's `eigh` or the centred data's SVD, as
    /// scikit-learn's `svd_solver="auto"`); n×n on a ladder.
    Pca,
}

/// The components a PCA case keeps (fewer where the data has fewer features).
pub const PCA_COMPONENTS: usize = 8;

/// What a reduction op computes: a value or an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// Sum, sum of squares, min, max.
    Value(ReduceOp),
    /// Argmin, argmax.
    Arg(ArgOp),
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

/// `Display` as the type's `name()`; with a noun, also `FromStr` of the name of one of
/// the type's `ALL` (else `unknown NOUN 'x' (known: ...)`), as the command line takes it.
macro_rules! named {
    ($t:ident) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
    ($t:ident, $noun:literal) => {
        $crate::cases::named!($t);
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<$t, String> {
                $t::ALL.into_iter().find(|x| x.name() == s).ok_or_else(|| {
                    let known: Vec<_> = $t::ALL.iter().map(|x| x.name()).collect();
                    format!("unknown {} '{s}' (known: {})", $noun, known.join(", "))
                })
            }
        }
    };
}
pub(crate) use named;

named!(Unit);

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
    pub const ALL: [Op; 20] = [
        Op::Matmul,
        Op::Gram,
        Op::Transpose,
        Op::Sum,
        Op::SumSq,
        Op::Argmax,
        Op::Dot,
        Op::Cholesky,
        Op::Solve,
        Op::Lu,
        Op::LuSolve,
        Op::Qr,
        Op::Lstsq,
        Op::Trsm,
        Op::Eigh,
        Op::Svd,
        Op::Pca,
        Op::KMeans,
        Op::Chain,
        Op::Transfer,
    ];

    /// The ops of the default run (the size ladders), in report order: every op but the
    /// reductions that only the shape suite runs unless asked for by name (`sumsq`,
    /// `argmax`) and the LU, QR, triangular-solve and spectral ops (eigh, svd, pca), which
    /// run when named (their naive rungs take minutes at the ladder's largest sizes).
    pub const LADDERS: [Op; 10] = {
        let mut ladders = [Op::Matmul; 10];
        let (mut i, mut j) = (0, 0);
        while i < Op::ALL.len() {
            let op = Op::ALL[i];
            // The cubic ops but the products, Cholesky and its solve; two reductions.
            let products = matches!(op, Op::Matmul | Op::Gram | Op::Cholesky | Op::Solve);
            let named_only = matches!(op, Op::SumSq | Op::Argmax) || (op.cubic() && !products);
            if !named_only {
                ladders[j] = Op::ALL[i];
                j += 1;
            }
            i += 1;
        }
        assert!(j == ladders.len());
        ladders
    };

    /// Lowercase name, as the CLI takes it and the files are named.
    pub fn name(self) -> &'static str {
        match self {
            Op::Matmul => "matmul",
            Op::Gram => "gram",
            Op::Transpose => "transpose",
            Op::Sum => "sum",
            Op::SumSq => "sumsq",
            Op::Argmax => "argmax",
            Op::Dot => "dot",
            Op::Cholesky => "cholesky",
            Op::Solve => "solve",
            Op::Lu => "lu",
            Op::LuSolve => "lu_solve",
            Op::Qr => "qr",
            Op::Lstsq => "lstsq",
            Op::Trsm => "trsm",
            Op::Eigh => "eigh",
            Op::Svd => "svd",
            Op::Pca => "pca",
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
            Op::Sum | Op::SumSq | Op::Argmax | Op::Dot => Some(Family::Reduce),
            Op::Cholesky | Op::Solve => Some(Family::Cholesky),
            Op::Lu | Op::LuSolve => Some(Family::Lu),
            Op::Qr | Op::Lstsq => Some(Family::Qr),
            Op::Trsm => Some(Family::Trsm),
            Op::Eigh | Op::Svd | Op::Pca => Some(Family::Spectra),
            Op::KMeans => Some(Family::KMeans),
            Op::Chain | Op::Transfer => None,
        }
    }

    /// Whether the op's work on a ladder grows as n³ and it runs at its own ladder of
    /// squares: the matrix products, the factorizations and solves, and the spectra
    /// (not the chain).
    pub const fn cubic(self) -> bool {
        matches!(
            self,
            Op::Matmul
                | Op::Gram
                | Op::Cholesky
                | Op::Solve
                | Op::Lu
                | Op::LuSolve
                | Op::Qr
                | Op::Lstsq
                | Op::Trsm
                | Op::Eigh
                | Op::Svd
                | Op::Pca
        )
    }

    /// Whether the op is limited by memory bandwidth (rated in GB/s against a copy of
    /// the same bytes) rather than by arithmetic (GFLOP/s against the peak).
    pub fn bandwidth_bound(self) -> bool {
        matches!(
            self,
            Op::Transpose | Op::Sum | Op::SumSq | Op::Argmax | Op::Dot | Op::Transfer
        )
    }

    /// What a reduction op computes (`None` for the other ops).
    pub fn reduction(self) -> Option<Reduction> {
        match self {
            Op::Sum => Some(Reduction::Value(ReduceOp::Sum)),
            Op::SumSq => Some(Reduction::Value(ReduceOp::SumSq)),
            Op::Argmax => Some(Reduction::Arg(ArgOp::ArgMax)),
            _ => None,
        }
    }

    /// The shape of a ladder's size `n`: an n×n×n GEMM, the gram of an n×n M, an n×n
    /// matrix (a square one, or one of QR), a row of n elements reduced whole, n
    /// elements, n points.
    pub fn shape(self, n: usize) -> Shape {
        match self {
            Op::Matmul => Shape::gemm(n, n, n),
            Op::Gram => Shape::gram(n, n),
            Op::Qr | Op::Lstsq | Op::Svd | Op::Pca => Shape::rect(n, n),
            Op::Transpose | Op::Cholesky | Op::Solve | Op::Chain => Shape::Square(n),
            Op::Lu | Op::LuSolve | Op::Trsm | Op::Eigh => Shape::Square(n),
            Op::Sum | Op::SumSq | Op::Argmax => Shape::matrix(1, n, None),
            Op::Dot | Op::Transfer => Shape::Vector(n),
            Op::KMeans => Shape::Points(n),
        }
    }

    /// Whether the op runs at `shape`: the shape is of the op's kind (that of
    /// [`Op::shape`]), for lstsq has no fewer rows than columns, and for pca has at
    /// least two samples (rows: its variance divides by m − 1).
    pub fn takes(self, shape: Shape) -> bool {
        let kind = std::mem::discriminant(&self.shape(1)) == std::mem::discriminant(&shape);
        kind && !matches!((self, shape), (Op::Lstsq, Shape::Rect { m, n }) if m < n)
            && !matches!((self, shape), (Op::Pca, Shape::Rect { m, .. }) if m < 2)
    }

    /// The sizes it takes, as `--sizes` writes them ([`crate::Size`]; every dimension
    /// at least 1).
    pub fn size_syntax(self) -> &'static str {
        match self.shape(1) {
            Shape::Points(_) => "N ≥ 128 (points)",
            Shape::Gemm { .. } => "n or m×k×n",
            Shape::Gram { .. } => "n or m×k",
            Shape::Rect { .. } if self == Op::Lstsq => "n or m×n with m ≥ n",
            Shape::Rect { .. } if self == Op::Pca => "n or m×d (samples × features) with m ≥ 2",
            Shape::Rect { .. } => "n or m×n",
            Shape::Square(_) => "n or n×n",
            Shape::Matrix { .. } => "n, rows×cols or rows×cols@axis",
            Shape::Vector(_) => "n",
        }
    }

    /// The unit of its rate.
    pub fn unit(self) -> Unit {
        if self.bandwidth_bound() {
            Unit::GBs
        } else {
            Unit::GFlops
        }
    }

    /// What the size means, for the reports' axes.
    pub fn size_label(self) -> &'static str {
        match self {
            Op::Sum | Op::SumSq | Op::Argmax | Op::Dot | Op::Transfer => "n (elements)",
            Op::KMeans => "N (points; D = 32, K = 128)",
            _ => "n (n×n matrices)",
        }
    }

    /// The default sizes for `target`.
    pub fn default_sizes(self, target: Target) -> Vec<usize> {
        let pow2 = |lo: u32, hi: u32| (lo..=hi).map(|e| 1usize << e).collect::<Vec<_>>();
        match (self, target) {
            (Op::Transpose, Target::Gpu) => pow2(10, 14),
            (Op::Transpose, Target::GpuQuick) => pow2(10, 11),
            (Op::Transpose, Target::Cpu) => pow2(8, 10),
            (Op::Sum | Op::SumSq | Op::Argmax | Op::Dot, Target::Gpu) => pow2(20, 28),
            (Op::Sum | Op::SumSq | Op::Argmax | Op::Dot, Target::GpuQuick) => {
                vec![1 << 20, 1 << 22]
            }
            (Op::Sum | Op::SumSq | Op::Argmax | Op::Dot, Target::Cpu) => {
                vec![1 << 16, 1 << 18, 1 << 20]
            }
            (Op::KMeans, Target::Gpu) => pow2(14, 20),
            (Op::KMeans, Target::GpuQuick) => pow2(14, 15),
            (Op::KMeans, Target::Cpu) => pow2(12, 14),
            (Op::Chain, Target::Gpu) => pow2(10, 13),
            (Op::Chain, Target::GpuQuick) => pow2(9, 10),
            (Op::Chain, Target::Cpu) => pow2(6, 7),
            (Op::Transfer, Target::Gpu) => vec![1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28],
            (Op::Transfer, Target::GpuQuick) => vec![1 << 20, 1 << 22],
            (Op::Transfer, Target::Cpu) => vec![1 << 16, 1 << 18, 1 << 20],
            // The matrix products, the factorizations and their solves ([`Op::cubic`]).
            (_, Target::Gpu) => pow2(8, 13),
            (_, Target::GpuQuick) => pow2(8, 9),
            (_, Target::Cpu) => pow2(6, 8),
        }
    }

    /// The largest dimension of the shapes every variant is checked at before it is
    /// timed ([`Op::check_shape`]).
    pub fn check_cap(self) -> usize {
        match self {
            Op::Sum | Op::SumSq | Op::Argmax | Op::Dot | Op::Transfer => 100_003,
            Op::KMeans => 1_031,
            _ => 131,
        }
    }

    /// A small shape of the same kind and about the same aspect as `shape`, with no
    /// dimension a multiple of any tile, at which every variant is checked against a full
    /// host reference before it is timed at `shape`: each dimension capped at
    /// [`Op::check_cap`] and made odd (131 for every square of 131 and more, as the
    /// ladders have always been checked; 131×33×131 for 1048576×32×1024).
    pub fn check_shape(self, shape: Shape) -> Shape {
        shape.shrunk(self.check_cap())
    }
}

named!(Op, "op");

mod work;

#[cfg(test)]
mod tests;
