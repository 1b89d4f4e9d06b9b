//! # ndgpu
//!
//! GPU linear algebra behind one trait API over `ndarray`, with the backend chosen at
//! run time: `cpu` (the single-threaded reference), `faer` (multi-threaded CPU on
//! faer's kernels), `cuda` (hand-written kernels, compiled at run time with NVRTC, every
//! optimisation step a selectable variant) and `cublas` (cuBLAS and cuSOLVER). A machine
//! without a GPU gets an error value naming the reason, or the fast CPU backend through
//! `auto`: never a panic.
//!
//! Use the `ndarray` this crate re-exports, [`ndgpu::ndarray`](crate::ndarray) (0.16):
//! a separate `ndarray` dependency of another version has types that do not match.
//!
//! ```
//! use ndgpu::ndarray::array;
//! use ndgpu::ReduceOp;
//!
//! fn main() -> Result<(), ndgpu::Error> {
//!     // "auto": the fastest backend that runs here (NDGPU_BACKEND overrides it);
//!     // ndgpu::backend("cpu") would name the reference, the same on every machine.
//!     let backend = ndgpu::backend("auto")?;
//!     let a = array![[1.0f64, 2.0], [3.0, 4.0]];
//!     let c = backend.matmul(a.view(), a.t())?; // A·Aᵀ
//!     assert_eq!(c, array![[5.0, 11.0], [11.0, 25.0]]);
//!     assert_eq!(backend.reduce(ReduceOp::Sum, a.view())?, 10.0);
//!     println!("{} computed {c}", backend.name());
//!     Ok(())
//! }
//! ```
//!
//! # What a user calls
//!
//! | to | call |
//! |---|---|
//! | open a backend | [`backend()`]`("auto" \| "cpu" \| "faer" \| "cuda" \| "cublas" \| "cuda:all" …)`, [`backend_with`] (with variants); [`backends`] lists them with whether each runs here and why not |
//! | matrix products | [`MatMul`]: `matmul`, `gemm` ([`Gemm`], [`Trans`]), `gram` (M·Mᵀ) |
//! | transpose | [`Transpose`]: `transpose` |
//! | reductions | [`Reduce`]: `reduce` ([`ReduceOp`]: sum, sum of squares, min, max), `arg_reduce` ([`ArgOp`]), their `_axis` forms, `dot` |
//! | factorizations and solves | [`Factorize`]: `cholesky`, `cholesky_solve`, `solve`, `lu`, `det`, `slogdet`, `inv`, `qr` ([`QrMode`]), `lstsq`, `solve_triangular` ([`Triangular`], [`Uplo`]) |
//! | k-means | [`Cluster`]: `kmeans` ([`KMeansConfig`], [`Init`] → [`KMeansResult`]), `predict` |
//! | keep data on the device | [`Memory`]: `upload`, `download`, `upload_into`, `download_into`, `host_array` ([`HostArray`]); every operation's `_dev` form takes and returns [`Matrix`] handles ([`Indices`], [`CholeskyFactor`], [`LuFactor`], [`QrFactor`]) |
//! | choose how it computes | [`Backend`]: `variants`, `set_variant`, `set_precision` ([`Family`], [`Precision`]), `variant_table` ([`Variants`]) |
//! | where and when | [`Device`]: `name`, `place` ([`Place`]), `synchronize`, `time` |
//! | code generic over f32 and f64 | [`BackendElement`]`::ops(&*backend)` gives [`Ops`] (every operation) |
//! | errors | every call returns [`Result`]; [`Error`] names the operation and the reason |
//!
//! A `Box<dyn Backend>`, what [`backend()`] returns, has every operation for `f32` and
//! `f64`, with no import: [`Backend`]'s supertraits are [`Ops`]`<f32>` and `Ops<f64>`,
//! and `Ops` is [`MatMul`] + [`Transpose`] + [`Reduce`] + [`Factorize`] + [`Cluster`]
//! (with [`Memory`] and [`Device`] below them). Code that holds a concrete backend type
//! ([`CpuBackend`], …) imports those traits with `use ndgpu::prelude::*;` ([`prelude`]).
//! Each trait's page lists its methods: the host forms take ndarray views and return
//! new arrays, the resident forms (`*_dev`) take and return [`Matrix`] handles.
//! `docs/glossary.md` in the repository defines the terms (variant, rung, resident
//! form, precision tags, `auto`).
//!
//! # For backend authors
//!
//! A backend implements [`Device`], [`Memory`] and the kernel traits of the families it
//! has, collected in [`backend_authors`]; the operation traits above are written once,
//! over those kernels, and check every input before a kernel runs. `ndgpu-core` has the
//! rest of that side: its `backend`, `check`, `host` and `tolerance` modules.
#![warn(missing_docs)]
#![doc(test(attr(deny(warnings))))]

/// The traits a user calls, to import at once: `use ndgpu::prelude::*;`.
pub mod prelude {
    pub use crate::{Backend, Cluster, Device, Factorize, MatMul, Memory, Reduce, Transpose};
}

/// For backend authors: the unchecked kernel traits a backend implements, one per
/// family, and [`Kernels`](backend_authors::Kernels), which hands them out. A user
/// never calls these: the operation traits ([`MatMul`], …) check the
/// input, then call them.
pub mod backend_authors {
    #[doc(inline)]
    pub use ndgpu_core::{
        impl_kernels, ClusterKernels, FactorizeKernels, Kernels, MatMulKernels, Points,
        ReduceKernels, TransposeKernels,
    };
}

/// The `ndarray` this crate is built with (0.16): use it for the arrays you pass.
pub use ndgpu_core::ndarray;
/// The backend [`backend()`] opens, as a `Box<dyn Backend>`.
///
/// **What a user calls**: the provided methods below (`variants`, `variant`,
/// `set_variant`, `set_precision`, `precision`, `runs_here`, `plan`, `notes`) and
/// `description`; through the supertraits, every operation: [`MatMul`], [`Transpose`],
/// [`Reduce`], [`Factorize`], [`Cluster`], with [`Memory`] and [`Device`]. A backend
/// implements the other required methods, `variant_table` and `variant_table_mut`.
///
#[doc(inline)]
pub use ndgpu_core::Backend;
use ndgpu_core::Precision as RowPrecision;
#[doc(inline)]
pub use ndgpu_core::{
    init_centroids, ArgOp, Assignment, BackendElement, CholeskyFactor, Cluster, DType, Device,
    Element, Error, FactorLayout, Factorize, Family, Gemm, HostArray, Indices, Init, KMeansConfig,
    KMeansFit, KMeansResult, LuFactor, MatMul, Matrix, Memory, Needs, Ops, Pca, PcaFit, PcaSolver,
    Place, Precision, QrFactor, QrMode, Reduce, ReduceOp, Result, Trans, Transpose, Triangular,
    Uplo, Variant, Variants,
};
pub use ndgpu_cpu::CpuBackend;
#[cfg(feature = "cublas")]
pub use ndgpu_cublas::CublasBackend;
#[cfg(feature = "cuda")]
pub use ndgpu_cuda::CudaBackend;
#[cfg(feature = "faer")]
pub use ndgpu_faer::FaerBackend;
#[cfg(feature = "multi")]
pub use ndgpu_multi::{Layout, MultiBackend};

/// The environment variable that overrides what `auto` picks.
pub const BACKEND_ENV: &str = "NDGPU_BACKEND";

/// The backends compiled into this build, in the order `auto` prefers them.
#[allow(clippy::vec_init_then_push)] // the pushes depend on features
pub fn compiled_in() -> Vec<&'static str> {
    let mut v = Vec::new();
    #[cfg(feature = "cublas")]
    v.push("cublas");
    #[cfg(feature = "cuda")]
    v.push("cuda");
    #[cfg(feature = "faer")]
    v.push("faer");
    v.push("cpu");
    v
}

/// What [`backends`] reports of one backend.
#[derive(Debug, Clone)]
pub struct BackendInfo {
    /// Its name.
    pub name: &'static str,
    /// `Ok(description)` if it can run here, `Err(reason)` if not.
    pub status: std::result::Result<String, String>,
    /// Notes on its variants (determinism, vendor vs hand-written parts).
    pub notes: Vec<String>,
    /// Variants per family, default first, and their precisions (also for a GPU backend
    /// that cannot open here; no family for another that cannot).
    pub variants: Variants,
}

/// Every compiled-in backend with its availability (and, when unavailable, why).
pub fn backends() -> Vec<BackendInfo> {
    compiled_in()
        .into_iter()
        .map(|name| match open(name) {
            Ok(b) => BackendInfo {
                name,
                status: Ok(b.description()),
                notes: b.notes(),
                variants: b.variant_table().clone(),
            },
            Err(e) => BackendInfo {
                name,
                status: Err(match e {
                    Error::Unavailable { reason, .. } => reason,
                    other => other.to_string(),
                }),
                notes: Vec::new(),
                variants: static_variants(name),
            },
        })
        .collect()
}

/// The variants of a backend from its static table (the GPU backends know theirs
/// without a device).
fn static_variants(name: &'static str) -> Variants {
    match name {
        "cpu" => CpuBackend::new().variant_table().clone(),
        #[cfg(feature = "faer")]
        "faer" => FaerBackend::new().variant_table().clone(),
        #[cfg(feature = "cuda")]
        "cuda" => CudaBackend::variant_table(),
        #[cfg(feature = "cublas")]
        "cublas" => CublasBackend::variant_table(),
        _ => Variants::new(name, vec![]),
    }
}

/// A backend by name: `cpu`, `faer`, `cuda`, `cublas`, or `auto` (the value of `NDGPU_BACKEND`
/// if set, else the first available of [`compiled_in`]). `cuda:0,1` or `cuda:all` (and
/// `cublas:…`) is one backend over those devices ([`MultiBackend`]).
///
/// # Errors
/// [`Error::UnknownBackend`] for a name that is not compiled in;
/// [`Error::Unavailable`] (with the reason) for a GPU backend on a machine without a
/// usable GPU. `auto` without the environment variable never fails: the CPU is always
/// there.
pub fn backend(name: &str) -> Result<Box<dyn Backend>> {
    if name == "auto" {
        if let Ok(forced) = std::env::var(BACKEND_ENV) {
            if !forced.is_empty() && forced != "auto" {
                return open(&forced);
            }
        }
        let mut last = None;
        for candidate in compiled_in() {
            match open(candidate) {
                Ok(b) => return Ok(b),
                Err(e) => last = Some(e),
            }
        }
        return Err(last.expect("the cpu backend is always compiled in"));
    }
    open(name)
}

fn open(name: &str) -> Result<Box<dyn Backend>> {
    match name {
        "cpu" => Ok(Box::new(CpuBackend::new())),
        #[cfg(feature = "faer")]
        "faer" => Ok(Box::new(FaerBackend::new())),
        #[cfg(feature = "cuda")]
        "cuda" => Ok(Box::new(CudaBackend::new(0)?)),
        #[cfg(feature = "cublas")]
        "cublas" => Ok(Box::new(CublasBackend::new(0)?)),
        #[cfg(feature = "multi")]
        group if group.starts_with("cuda:") || group.starts_with("cublas:") => open_group(group),
        other => Err(Error::UnknownBackend {
            name: other.to_string(),
            known: {
                let mut k = compiled_in();
                k.push("auto");
                #[cfg(feature = "multi")]
                k.push("cuda:<devices>");
                k.join(", ")
            },
        }),
    }
}

/// A backend over several devices: `kind:0,1` or `kind:all`.
#[cfg(feature = "multi")]
fn open_group(name: &str) -> Result<Box<dyn Backend>> {
    use ndgpu_multi::Rank;
    let (kind, spec) = name.split_once(':').expect("a group name has a colon");
    let devices = ndgpu_multi::parse_devices(kind, spec)?;
    let group = match kind {
        #[cfg(feature = "cublas")]
        "cublas" => MultiBackend::open(kind, &devices, |d| {
            let b = CublasBackend::new(d)?;
            let gpu = b.gpu().clone();
            Ok(Rank::new(Box::new(b), gpu))
        })?,
        "cuda" => MultiBackend::open(kind, &devices, |d| {
            let b = CudaBackend::new(d)?;
            let gpu = b.gpu().clone();
            Ok(Rank::new(Box::new(b), gpu))
        })?,
        other => {
            return Err(Error::UnknownBackend {
                name: name.to_string(),
                known: format!("{other} is not compiled in"),
            })
        }
    };
    Ok(Box::new(group))
}

/// Opens a backend and selects variants, e.g. `[(Family::MatMul, "tiled")]`.
///
/// # Errors
/// As [`backend()`], and [`Error::UnknownVariant`].
pub fn backend_with(name: &str, variants: &[(Family, &str)]) -> Result<Box<dyn Backend>> {
    let mut b = backend(name)?;
    for &(family, v) in variants {
        b.set_variant(family, v)?;
    }
    Ok(b)
}

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Every compiled-in backend's variant table, one section per backend and a table per
/// family, rendered from the backends' own rows.
pub fn variants_markdown() -> String {
    let mut s = String::from(
        "# Variants\n\n\
         Generated from the backends' variant tables (`ndgpu info --variants-md`; the test \
         `crates/ndgpu/tests/docs.rs` keeps this file equal to it). Each family's first \
         variant is its default. *precision*: the arithmetic of f32 results (f64 is always \
         IEEE double); *needs*: the device it needs (elsewhere it is `Unavailable`); \
         *reproducible*: the same bits on every run.\n",
    );
    for name in compiled_in() {
        let table = static_variants(name);
        s.push_str(&format!("\n## `{name}`\n"));
        for family in Family::ALL {
            let rows = table.rows(family);
            if rows.is_empty() {
                continue;
            }
            s.push_str(&format!("\n### {family}\n\n"));
            if let Some(note) = family_note(&table, name, family) {
                s.push_str(&format!("{note}\n\n"));
            }
            s.push_str("| variant | precision | needs | reproducible | what it does |\n");
            s.push_str("|---|---|---|---|---|\n");
            for v in rows {
                let precision = match v.precision {
                    RowPrecision::Ieee => "IEEE",
                    p => p.name(),
                };
                s.push_str(&format!(
                    "| `{}` | {precision} | {} | {} | {} |\n",
                    v.name,
                    v.needs.name().unwrap_or("any"),
                    if v.reproducible { "yes" } else { "no" },
                    v.note
                ));
            }
        }
    }
    s
}

/// The note `family` shares on backend `name`, as [`Variants::notes`] gives it.
fn family_note(table: &Variants, name: &str, family: Family) -> Option<String> {
    let prefix = format!("{family} ({name}): ");
    table
        .notes()
        .into_iter()
        .find_map(|n| n.strip_prefix(&prefix).map(str::to_string))
}
