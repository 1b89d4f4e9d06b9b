//! The options of `ndgpu random`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::DTypeArg;

/// Options of `ndgpu random`.
#[derive(Debug, Args)]
pub struct RandomArgs {
    /// The shape: ROWSxCOLS for a matrix (`1000x64`), or N for a vector. spd needs a
    /// square matrix (or N, for N×N), blobs a matrix (points × dimensions).
    #[arg(value_name = "SHAPE")]
    pub shape: String,
    /// What to fill it with. uniform: [0, 1). normal: the standard normal. spd: a
    /// symmetric positive-definite matrix (G·Gᵀ/n + I of a normal G), for cholesky and
    /// solve --assume-a pos. blobs: points around --centers centres drawn in [-10, 10)
    /// (a normal spread of 1), for kmeans.
    #[arg(long, value_enum, default_value = "uniform")]
    pub kind: KindArg,
    /// Seed: the same seed gives the same file.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Element type (default f64, as NumPy's random numbers).
    #[arg(long, value_enum, default_value = "f64")]
    pub dtype: DTypeArg,
    /// Number of centres of blobs.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub centers: u64,
    /// Where the .npy goes (its folder is created if missing; `-`: stdout).
    #[arg(short = 'o', long, value_name = "PATH")]
    pub output: PathBuf,
}

/// `ndgpu random --kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    Uniform,
    Normal,
    Spd,
    Blobs,
}
