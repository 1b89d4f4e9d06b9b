//! The options of the spectra (`eigh`, `svd`) and PCA, with NumPy's and scikit-learn's
//! names.

use std::path::PathBuf;

use clap::Args;

use super::linalg::OutDir;
use super::Common;

/// `run eigh`.
#[derive(Debug, Args)]
pub struct EighArgs {
    /// A (n×n, symmetric: only its lower triangle is read, or its upper one with
    /// --upper).
    pub a: PathBuf,
    /// Read A's upper triangle instead (NumPy's UPLO='U'; the default is UPLO='L').
    #[arg(long)]
    pub upper: bool,
    /// Writes w.npy (n, ascending) and v.npy (n×n, eigenvectors in columns).
    #[command(flatten)]
    pub out: OutDir,
    #[command(flatten)]
    pub common: Common,
}

/// `run svd`.
#[derive(Debug, Args)]
pub struct SvdArgs {
    /// A (m×n).
    pub a: PathBuf,
    /// U m×m and Vt n×n (NumPy's full_matrices=True); without it U m×k and Vt k×n,
    /// k = min(m, n).
    #[arg(long)]
    pub full_matrices: bool,
    /// Writes U.npy, S.npy (k, descending) and Vt.npy.
    #[command(flatten)]
    pub out: OutDir,
    #[command(flatten)]
    pub common: Common,
}

/// `run pca`.
#[derive(Debug, Args)]
pub struct PcaArgs {
    /// X (n_samples×n_features, at least two samples).
    pub x: PathBuf,
    /// The components kept (default: min(n_samples, n_features)).
    #[arg(long, value_name = "K")]
    pub n_components: Option<usize>,
    /// Also write transformed.npy, (X − mean)·componentsᵀ.
    #[arg(long)]
    pub transform: bool,
    /// Writes components.npy, explained_variance.npy, explained_variance_ratio.npy,
    /// singular_values.npy and mean.npy (and transformed.npy with --transform).
    #[command(flatten)]
    pub out: OutDir,
    #[command(flatten)]
    pub common: Common,
}
