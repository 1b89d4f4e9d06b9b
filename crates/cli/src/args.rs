//! The command line, as clap derive structs. Parsing only: what each command does
//! lives in `info.rs`, `run.rs` and `verify.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::error::EXIT_CODES;

mod linalg;
mod random;
mod spectra;

pub use linalg::{AssumeA, LstsqArgs, LuArgs, QrArgs, QrModeArg, SquareArgs, TriangularArgs};
pub use random::{KindArg, RandomArgs};
pub use spectra::{EighArgs, PcaArgs, SvdArgs};

/// GPU linear algebra on .npy files, with the backend chosen at run time.
#[derive(Debug, Parser)]
#[command(
    name = "ndgpu",
    version,
    arg_required_else_help = true,
    after_help = EXIT_CODES
)]
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
        /// Also say what each available backend's default runs at a shape, where it
        /// chooses by shape: FAMILY=DIMS, as the shootout writes shapes: matmul=MxKxN
        /// (A m×k times B k×n), gram=NxK (M, n×k), kmeans=NxDxK (N points of D
        /// dimensions, K centroids). Repeatable.
        #[arg(long, value_name = "FAMILY=DIMS")]
        plan: Vec<String>,
        /// The element type of --plan.
        #[arg(long, value_enum, default_value = "f32")]
        dtype: DTypeArg,
        /// Print every backend's variant table as Markdown (what docs/variants.md holds).
        #[arg(long, conflicts_with_all = ["json", "plan"])]
        variants_md: bool,
    },
    /// Run one operation on .npy inputs (f32 or f64) and write .npy outputs.
    #[command(after_help = EXIT_CODES)]
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
    /// sizes, in well under a minute. `--suite shapes`: rectangular GEMMs and grams and
    /// per-axis reductions too.
    Shootout(ShootoutArgs),
    /// Write an example input: a .npy of random numbers (uniform, normal), a symmetric
    /// positive-definite matrix or points around a few centres, the same for the same
    /// --seed. To try the tool without NumPy: `ndgpu random 4x3 -o A.npy`.
    Random(RandomArgs),
}

/// Options of `ndgpu shootout`.
#[derive(Debug, Args)]
pub struct ShootoutArgs {
    /// Ops, comma separated: matmul, gram, transpose, sum, dot, cholesky, solve (with a
    /// given factor, n right-hand sides), kmeans, chain (gram, Cholesky and a solve on
    /// resident data), transfer (upload and download), the reductions sumsq and argmax,
    /// lu, lu_solve, qr, lstsq and trsm, and the spectra eigh, svd (reduced, with U and
    /// Vt) and pca (to min(m, d, 8) components) (default: those of the suite; the ladders
    /// leave out sumsq, argmax and the LU, QR, triangular-solve and spectral ops, which
    /// run when named).
    #[arg(long, value_delimiter = ',')]
    pub ops: Vec<String>,
    /// The cases. ladders: each op at a ladder of sizes (squares for the matrix ops).
    /// shapes: matmul as m×k×n and gram (M·Mᵀ of an m×k M) at squares of 64 to 8192 and
    /// at the rectangular shapes of real workloads (the k-means distance product
    /// 2²⁰×D×K, 8192×64×8192, 64×8192×64, 1024×1024×64, tall-skinny and short-wide
    /// grams), and sum, sumsq and argmax whole and along each axis of square, tall-thin
    /// and short-wide matrices; smaller shapes of the same kinds with --quick and on the
    /// CPU.
    #[arg(long, value_enum, default_value = "ladders")]
    pub suite: SuiteArg,
    /// Sizes, comma separated, for every op instead of each op's default ladder (not
    /// with --suite shapes, which has its own shapes): n for a square op, or rows x
    /// columns for qr, lstsq, svd and pca (`1048576x32`: samples x features for pca);
    /// an op skips sizes it does not take.
    #[arg(long, value_delimiter = ',')]
    pub sizes: Option<Vec<String>>,
    /// Backends, comma separated (cpu, faer, cuda, cublas); default: the GPU backends if
    /// there is a GPU, else the host ones (faer and cpu).
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
    /// Leave out the peers (timed by default: PyTorch beside the GPU backends where
    /// python3 imports a CUDA torch, NumPy beside the host ones where it imports numpy).
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
    /// Backend: cpu (the reference), faer (multi-threaded CPU), cuda, cublas or auto (the
    /// fastest available: a GPU backend, else faer; NDGPU_BACKEND overrides what auto
    /// picks).
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Element type (float32 and float64 are accepted too). Inputs of another dtype are
    /// converted, with a note on stderr: the other float one, and integer and bool ones
    /// (complex, string and object .npy files are refused). Default: f64 if any input is
    /// f64 or integer or bool (as NumPy promotes, and as numpy.linalg converts integers),
    /// else f32.
    #[arg(long, value_enum)]
    pub dtype: Option<DTypeArg>,
    /// Variant of the operation's family (see `ndgpu info`); default: the backend's.
    #[arg(long)]
    pub variant: Option<String>,
    /// Arithmetic of the operation's family: the backend selects its fastest variant of
    /// that precision that runs on the device (tf32 and 3xtf32 are opt-in; default:
    /// the backend's default variant, IEEE).
    #[arg(long, value_enum, conflicts_with = "variant")]
    pub precision: Option<PrecisionArg>,
    /// Print a machine-readable JSON summary (op, backend, variant, dtype, shapes,
    /// seconds, and op-specific results).
    #[arg(long)]
    pub json: bool,
}

/// Where a single result goes.
#[derive(Debug, Args)]
pub struct Output {
    /// Write the result to this .npy file (its folder is created if missing; `-`:
    /// stdout, and the summary goes to stderr); without it the result is printed.
    #[arg(short = 'o', long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// The precisions a variant may compute in (`ndgpu info` shows each variant's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    Ieee,
    Tf32,
    #[value(name = "3xtf32")]
    Tf32x3,
}

impl From<PrecisionArg> for ndgpu::Precision {
    fn from(p: PrecisionArg) -> Self {
        match p {
            PrecisionArg::Ieee => ndgpu::Precision::Ieee,
            PrecisionArg::Tf32 => ndgpu::Precision::Tf32,
            PrecisionArg::Tf32x3 => ndgpu::Precision::Tf32x3,
        }
    }
}

/// NumPy's names are accepted as aliases.
/// `ndgpu shootout --suite`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SuiteArg {
    Ladders,
    Shapes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DTypeArg {
    #[value(alias = "float32")]
    F32,
    #[value(alias = "float64")]
    F64,
}

#[derive(Debug, Subcommand)]
pub enum Op {
    /// C = alpha·op(A)·op(B) + beta·C (gemm); plain A·B by default. As NumPy's
    /// matmul, a 1-D B is a column (A·v is a vector), a 1-D A a row (v·B is a vector),
    /// and --trans-a/--trans-b leave a 1-D operand as it is.
    Matmul {
        /// A (m×k, or k×m with --trans-a; or a vector of length k).
        a: PathBuf,
        /// B (k×n, or n×k with --trans-b; or a vector of length k).
        b: PathBuf,
        /// C (the result's shape), added with weight --beta (which it requires).
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
    /// sum, sumsq, mean, min, max, argmin or argmax of a matrix or a vector, whole or
    /// along an axis.
    Reduce {
        /// A (a matrix, or a 1-D vector).
        a: PathBuf,
        /// The reduction. Whole-matrix argmin/argmax give a flat row-major index.
        #[arg(long, value_enum)]
        op: ReduceArg,
        /// 0: one result per column; 1: one per row; negative counts from the last
        /// axis (-1 is 1, -2 is 0), as NumPy. A vector has only axis 0 (or -1), which is
        /// the whole vector. Default: the whole array (written as a 0-d .npy).
        #[arg(
            long,
            allow_negative_numbers = true,
            value_parser = clap::value_parser!(i8).range(-2..=1)
        )]
        axis: Option<i8>,
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
    /// X with A·X = B for a square A, as scipy.linalg.solve: LU with partial pivoting
    /// (--assume-a gen, the default), or Cholesky for a symmetric positive-definite A
    /// (--assume-a pos). A singular A is refused (exit 1).
    Solve {
        /// A, or its Cholesky factor L with --factor.
        a: PathBuf,
        /// B (n×r, or a 1-D vector of length n; X has B's rank).
        b: PathBuf,
        /// gen: any square A, through LU; pos: symmetric positive definite, through
        /// Cholesky (only A's lower triangle is read). Default: gen, or pos with --factor.
        #[arg(long, value_enum)]
        assume_a: Option<AssumeA>,
        /// The first input is already the Cholesky factor L (lower triangle read); implies
        /// --assume-a pos.
        #[arg(long)]
        factor: bool,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        common: Common,
    },
    /// P, L, U with A = P·L·U, as scipy.linalg.lu: LU with partial pivoting of an m×n A
    /// (k = min(m, n)): P m×m a permutation, L m×k unit lower triangular with |Lᵢⱼ| ≤ 1,
    /// U k×n upper triangular. --out-dir D writes D/P.npy, D/L.npy and D/U.npy.
    Lu(LuArgs),
    /// Q, R with A = Q·R, as numpy.linalg.qr (Householder): Q with orthonormal columns,
    /// R upper triangular. --out-dir D writes D/Q.npy and D/R.npy.
    Qr(QrArgs),
    /// The least-squares X minimising ‖A·X − B‖ for an m×n A of full column rank, m ≥ n
    /// (through QR; as numpy.linalg.lstsq's solution for such A). A without full column
    /// rank is refused (exit 1), naming the first dependent column.
    Lstsq(LstsqArgs),
    /// w, v with A = v·diag(w)·vᵀ of a symmetric A (lower triangle read), as
    /// numpy.linalg.eigh: w ascending. --out-dir D writes D/w.npy and D/v.npy.
    Eigh(EighArgs),
    /// U, S, Vt with A = U·diag(S)·Vt, as numpy.linalg.svd: S descending, reduced unless
    /// --full-matrices. --out-dir D writes D/U.npy, D/S.npy and D/Vt.npy.
    Svd(SvdArgs),
    /// Principal component analysis, as scikit-learn's PCA: components, variances and
    /// mean, and with --transform the projected data; --out-dir D writes one .npy each.
    Pca(PcaArgs),
    /// det A of a square A, as numpy.linalg.det (through LU; 0 for a singular A),
    /// printed, and written as a 0-d .npy with -o.
    Det(SquareArgs),
    /// A⁻¹ of a square A, as numpy.linalg.inv (through LU). A singular A is refused
    /// (exit 1).
    Inv(SquareArgs),
    /// X with T·X = B (or Tᵀ·X = B with --trans), T a triangle of the square A, as
    /// scipy.linalg.solve_triangular: the upper one by default (SciPy's lower=False),
    /// --lower for the lower one. A zero on T's diagonal is refused as singular (exit 1).
    #[command(name = "solve_triangular", alias = "solve-triangular")]
    SolveTriangular(TriangularArgs),
    /// k-means (Lloyd) on the rows of X: centroids and labels, as scikit-learn's KMeans
    /// (same tol, max_iter and stopping rule by default). Unless written, the centroids
    /// are printed, and so are the labels (as text; --json gives the cluster sizes
    /// instead). Fewer distinct clusters than k (clusters left empty, as when X has
    /// fewer than k distinct points) give a warning on stderr, as scikit-learn's, and
    /// the list of them in --json's empty_clusters; the exit code is still 0.
    Kmeans {
        /// X (N points × D dimensions).
        x: PathBuf,
        /// Number of clusters, 1 ≤ k ≤ N (scikit-learn's n_clusters; also spelt
        /// --n-clusters).
        #[arg(long, alias = "n-clusters", value_parser = at_least_one)]
        k: usize,
        /// Seed of the initialisation (scikit-learn's random_state; also spelt
        /// --random-state).
        #[arg(long, alias = "random-state", default_value_t = 0)]
        seed: u64,
        /// scikit-learn's tol: stop when an update moves the centroids by Σ‖Δc‖² at most
        /// tol times the mean per-dimension variance of X (then one more assignment, so
        /// the labels are those of the centroids). At least 0; 0 turns this test off.
        #[arg(long, default_value_t = 1e-4, value_parser = non_negative)]
        tol: f64,
        /// Stop when at most this fraction of the points changed cluster in an
        /// assignment (0 ≤ change-tol ≤ 1). 0, the default: when none changed,
        /// scikit-learn's "strict convergence".
        #[arg(long, default_value_t = 0.0, value_parser = unit_interval)]
        change_tol: f64,
        /// Most assignment steps (at least 1; scikit-learn's max_iter, 300 as there).
        #[arg(long, default_value_t = 300, value_parser = at_least_one)]
        max_iter: usize,
        /// kmeans++ (or scikit-learn's spelling k-means++), kmeans|| (k-means‖: ℓ = 2k,
        /// 2 rounds), random, or a .npy file of k×D starting centroids.
        #[arg(long, default_value = "kmeans++")]
        init: String,
        /// Starts (scikit-learn's n_init): start i seeds from seed + i; the fit of least
        /// inertia is kept.
        #[arg(long, default_value_t = 1, value_parser = at_least_one)]
        n_init: usize,
        /// A .npy vector of N sample weights (scikit-learn's sample_weight: finite, at
        /// least 0, of positive sum): weighted means, inertia and seeding.
        #[arg(long, value_name = "FILE.npy")]
        sample_weight: Option<PathBuf>,
        /// Write centroids.npy and labels.npy (int64) into this directory (created if
        /// missing).
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
        /// Write the centroids here (overrides --out-dir; `-`: stdout).
        #[arg(long, value_name = "PATH")]
        centroids: Option<PathBuf>,
        /// Write the labels (int64, one per point, as scikit-learn's fit_predict gives
        /// them) here (overrides --out-dir; `-`: stdout). Also spelt --output, as for
        /// the other operations.
        #[arg(short = 'o', long, alias = "output", value_name = "PATH")]
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

/// A count of at least 1 (k, --max-iter): 0 is refused as a bad argument, whatever
/// the data.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// A fraction in [0, 1] (--change-tol).
fn unit_interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(_) => Err("must be between 0 and 1".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// A finite number at least 0 (--tol).
fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Ok(_) => Err("must be a finite number at least 0".into()),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReduceArg {
    Sum,
    Sumsq,
    Mean,
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
