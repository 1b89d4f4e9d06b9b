//! The command line, as clap derive structs. Parsing only: what each command does
//! lives in `info.rs`, `run.rs` and `verify.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// GPU linear algebra on .npy files, with the backend chosen at run time.
#[derive(Debug, Parser)]
#[command(name = "ndgpu", version, arg_required_else_help = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every compiled-in backend: available or not (and why), its device and
    /// library versions, its variants per operation family, its notes.
    Info {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run one operation on .npy inputs (f32 or f64) and write .npy outputs.
    Run {
        #[command(subcommand)]
        op: Op,
    },
    /// Check every operation family of every available backend against the CPU
    /// reference on fresh random inputs; exits non-zero on any mismatch.
    Verify(VerifyArgs),
    /// Time every backend and variant side by side (CUDA events on the GPU, wall clock on
    /// the CPU) after checking each is correct; print a table per op and write
    /// shootout.md, shootout.csv and one SVG plot per op. Without a GPU: the CPU at small
    /// sizes, in well under a minute.
    Shootout(ShootoutArgs),
}

/// Options of `ndgpu shootout`.
#[derive(Debug, Args)]
pub struct ShootoutArgs {
    /// Ops, comma separated: matmul, gram, transpose, sum, dot, cholesky, kmeans, chain
    /// (gram, Cholesky and a solve on resident data), transfer (upload and download)
    /// (default: all).
    #[arg(long, value_delimiter = ',')]
    pub ops: Vec<String>,
    /// Sizes, comma separated, for every op instead of each op's default ladder.
    #[arg(long, value_delimiter = ',')]
    pub sizes: Option<Vec<usize>>,
    /// Backends, comma separated (cpu, cuda, cublas); default: the GPU backends if there
    /// is a GPU, else cpu.
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Only these variants (the vendor's default always runs, as the yardstick).
    #[arg(long, value_delimiter = ',')]
    pub variants: Option<Vec<String>>,
    /// Where the reports go.
    #[arg(long, default_value = "shootout")]
    pub out: PathBuf,
    /// A few small sizes only.
    #[arg(long)]
    pub quick: bool,
    /// Most timed repetitions per measurement (the median is reported).
    #[arg(long, default_value_t = 20)]
    pub reps: usize,
    /// Leave out the PyTorch peer (timed by default where python3 imports a CUDA torch).
    #[arg(long)]
    pub no_peer: bool,
    /// Also time the ndarray-level calls, host↔device transfers included.
    #[arg(long)]
    pub transfers: bool,
    /// Element type.
    #[arg(long, value_enum, default_value = "f32")]
    pub dtype: DTypeArg,
    /// No progress lines on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// Options every `run` operation takes.
#[derive(Debug, Args)]
pub struct Common {
    /// Backend: cpu, cuda, cublas or auto (the fastest available; NDGPU_BACKEND
    /// overrides what auto picks).
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Element type. Default: the dtype of the first input; every input must have it.
    #[arg(long, value_enum)]
    pub dtype: Option<DTypeArg>,
    /// Variant of the operation's family (see `ndgpu info`); default: the backend's.
    #[arg(long)]
    pub variant: Option<String>,
    /// Print a machine-readable JSON summary (op, backend, variant, dtype, shapes,
    /// seconds, and op-specific results).
    #[arg(long)]
    pub json: bool,
}

/// Where a single result goes.
#[derive(Debug, Args)]
pub struct Output {
    /// Write the result to this .npy file; without it the result is printed.
    #[arg(short = 'o', long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DTypeArg {
    F32,
    F64,
}

#[derive(Debug, Subcommand)]
pub enum Op {
    /// C = alpha·op(A)·op(B) + beta·C (gemm); plain A·B by default.
    Matmul {
        /// A (m×k, or k×m with --trans-a).
        a: PathBuf,
        /// B (k×n, or n×k with --trans-b).
        b: PathBuf,
        /// C (m×n), added with weight --beta (which it requires).
        c: Option<PathBuf>,
        /// Use Aᵀ.
        #[arg(long)]
        trans_a: bool,
        /// Use Bᵀ.
        #[arg(long)]
        trans_b: bool,
        /// Weight of the product.
        #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
        alpha: f64,
        /// Weight of C (required with C; C is never read when it is 0).
        #[arg(long, allow_negative_numbers = true)]
        beta: Option<f64>,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        common: Common,
    },
    /// M·Mᵀ (n×n for an n×k M).
    Gram {
        /// M.
        m: PathBuf,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        common: Common,
    },
    /// Aᵀ.
    Transpose {
        /// A.
        a: PathBuf,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        common: Common,
    },
    /// sum, sumsq, min, max, argmin or argmax of a matrix, whole or along an axis.
    Reduce {
        /// A.
        a: PathBuf,
        /// The reduction. Whole-matrix argmin/argmax give a flat row-major index.
        #[arg(long, value_enum)]
        op: ReduceArg,
        /// 0: one result per column; 1: one per row. Default: the whole matrix
        /// (written as a 0-d .npy).
        #[arg(long, value_parser = clap::value_parser!(u8).range(0..=1))]
        axis: Option<u8>,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        common: Common,
    },
    /// x·y of two 1-D arrays of the same length.
    Dot {
        /// x (1-D).
        x: PathBuf,
        /// y (1-D).
        y: PathBuf,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        common: Common,
    },
    /// The Cholesky factor L of a symmetric positive-definite A (A = L·Lᵀ).
    Cholesky {
        /// A (only its lower triangle is read).
        a: PathBuf,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        common: Common,
    },
    /// X with A·X = B for a symmetric positive-definite A (Cholesky, then solve).
    Solve {
        /// A, or its Cholesky factor L with --factor.
        a: PathBuf,
        /// B (n×r, or a 1-D vector of length n; X has B's rank).
        b: PathBuf,
        /// The first input is already the factor L (lower triangle read).
        #[arg(long)]
        factor: bool,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        common: Common,
    },
    /// k-means (Lloyd) on the rows of X: centroids and labels.
    Kmeans {
        /// X (N points × D dimensions).
        x: PathBuf,
        /// Number of clusters (1 ≤ k ≤ N).
        #[arg(long)]
        k: usize,
        /// Seed of the initialisation.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Stop when at most tol·N points change cluster (0 ≤ tol ≤ 1).
        #[arg(long, default_value_t = 1e-3)]
        tol: f64,
        /// Most assignment steps.
        #[arg(long, default_value_t = 500)]
        max_iter: usize,
        /// kmeans++, random, or a .npy file of k×D starting centroids.
        #[arg(long, default_value = "kmeans++")]
        init: String,
        /// Write centroids.npy and labels.npy (int64) into this directory.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
        /// Write the centroids here (overrides --out-dir).
        #[arg(long, value_name = "PATH")]
        centroids: Option<PathBuf>,
        /// Write the labels (int64) here (overrides --out-dir).
        #[arg(long, value_name = "PATH")]
        labels: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Labels each row of X with its nearest centroid (int64).
    Predict {
        /// X (N × D).
        x: PathBuf,
        /// Centroids (k × D).
        centroids: PathBuf,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReduceArg {
    Sum,
    Sumsq,
    Min,
    Max,
    Argmin,
    Argmax,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Backends to check, comma separated (default: every compiled-in backend; the
    /// unavailable ones are listed with the reason and skipped).
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// small (fast anywhere) or medium (adds shapes of a few hundred to ~1000).
    #[arg(long, value_enum, default_value_t = SizesArg::Small)]
    pub sizes: SizesArg,
    /// Check every variant of every family, not only each backend's default.
    #[arg(long)]
    pub all_variants: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SizesArg {
    Small,
    Medium,
}
