//! The options of the factorizations and the solves built on them (`lu`, `qr`,
//! `lstsq`, `det`, `inv`, `solve_triangular`, and `solve`'s `--assume-a`), with the
//! names NumPy and SciPy give them.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{Common, Output};

/// What `solve` assumes of A, as `scipy.linalg.solve`'s `assume_a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AssumeA {
    /// A general square matrix: LU with partial pivoting (SciPy's default).
    #[value(alias = "general")]
    Gen,
    /// Symmetric positive definite: Cholesky (only the lower triangle is read).
    #[value(alias = "positive-definite")]
    Pos,
}

/// `qr --mode`, as `numpy.linalg.qr`'s `mode` (k = min(m, n)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QrModeArg {
    /// Q m×k with orthonormal columns, R k×n.
    Reduced,
    /// Q m×m orthogonal, R m×n.
    Complete,
}

/// Where several results go: a folder, or else they are printed.
#[derive(Debug, Args)]
pub struct OutDir {
    /// Write the results into this folder (created if missing), one .npy file each;
    /// without it they are printed.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// `run lu`.
#[derive(Debug, Args)]
pub struct LuArgs {
    /// A (m×n).
    pub a: PathBuf,
    /// Writes P.npy (m×m), L.npy (m×k, unit lower triangular) and U.npy (k×n).
    #[command(flatten)]
    pub out: OutDir,
    #[command(flatten)]
    pub common: Common,
}

/// `run qr`.
#[derive(Debug, Args)]
pub struct QrArgs {
    /// A (m×n).
    pub a: PathBuf,
    /// reduced: Q m×k, R k×n; complete: Q m×m, R m×n (k = min(m, n)).
    #[arg(long, value_enum, default_value = "reduced")]
    pub mode: QrModeArg,
    /// Writes Q.npy and R.npy.
    #[command(flatten)]
    pub out: OutDir,
    #[command(flatten)]
    pub common: Common,
}

/// `run lstsq`.
#[derive(Debug, Args)]
pub struct LstsqArgs {
    /// A (m×n, m ≥ n, of full column rank).
    pub a: PathBuf,
    /// B (m×r, or a 1-D vector of length m; X has B's rank).
    pub b: PathBuf,
    #[command(flatten)]
    pub out: Output,
    #[command(flatten)]
    pub common: Common,
}

/// `run det` and `run inv`: one square matrix.
#[derive(Debug, Args)]
pub struct SquareArgs {
    /// A (n×n).
    pub a: PathBuf,
    #[command(flatten)]
    pub out: Output,
    #[command(flatten)]
    pub common: Common,
}

/// `run solve_triangular`, as `scipy.linalg.solve_triangular(a, b, trans, lower,
/// unit_diagonal)`.
#[derive(Debug, Args)]
pub struct TriangularArgs {
    /// A (n×n): only the triangle named by --lower/--upper is read (not its diagonal
    /// with --unit-diagonal).
    pub a: PathBuf,
    /// B (n×r, or a 1-D vector of length n; X has B's rank).
    pub b: PathBuf,
    /// Use A's lower triangle.
    #[arg(long, conflicts_with = "upper")]
    pub lower: bool,
    /// Use A's upper triangle (the default, as SciPy's lower=False).
    #[arg(long)]
    pub upper: bool,
    /// Solve Aᵀ·X = B (SciPy's trans=1).
    #[arg(long)]
    pub trans: bool,
    /// Take A's diagonal as ones, without reading it.
    #[arg(long)]
    pub unit_diagonal: bool,
    #[command(flatten)]
    pub out: Output,
    #[command(flatten)]
    pub common: Common,
}
