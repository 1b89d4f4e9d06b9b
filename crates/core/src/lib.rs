//! # ndgpu-core
//!
//! The traits, element types, resident arrays, errors, shared input checks and
//! tolerances of ndgpu. It knows nothing of CUDA: backends (`ndgpu-cpu`, `ndgpu-cuda`,
//! `ndgpu-cublas`) implement these traits, and the `ndgpu` facade picks one at run time.
//!
//! | trait | operations (resident forms `*_dev` on [`Matrix`], host forms on ndarray views) |
//! |---|---|
//! | [`Memory`] | `upload`, `download`, `alloc`, `zeros`, `copy`, `copy_into` |
//! | [`MatMul`] | `gemm` (α·op(A)·op(B) + β·C), `matmul`, `gram` (M·Mᵀ) |
//! | [`Transpose`] | out-of-place transpose |
//! | [`Reduce`] | sum, sum of squares, min, max, argmin, argmax (whole or per axis), dot |
//! | [`Factorize`] | Cholesky `A = L·Lᵀ`, LU `P·A = L·U`, QR `A = Q·R`, and what they solve: `solve`, `lstsq`, `solve_triangular`, `det`, `slogdet`, `inv` |
//! | [`Cluster`] | k-means (Lloyd), predict, and the two steps of an iteration |
//!
//! The family traits are written once, here, over [`Kernels`]: they check the input,
//! then run the backend's unchecked kernel. A backend implements [`Device`], [`Memory`]
//! and the kernel traits of the families it has ([`MatMulKernels`], ...), hands them out
//! with [`impl_kernels!`]; a family it lacks answers [`Error::Unsupported`]. [`Backend`]
//! adds its variants ([`Variants`]).
//!
//! ```
//! use ndgpu_core::{check, Trans};
//! use ndarray::array;
//! let a = array![[1.0f32, 2.0, 3.0]];
//! let b = array![[1.0f32], [2.0]];
//! // Inner dimensions 3 and 2 differ: every backend rejects this the same way.
//! let err = check::gemm(a.view(), Trans::No, b.view(), Trans::No, 0.0, None).unwrap_err();
//! assert!(err.to_string().contains("inner dimensions"));
//! ```
#![warn(missing_docs)]

mod array;
pub mod backend;
pub mod check;
mod element;
mod error;
mod factors;
pub mod host;
mod host_array;
mod host_memory;
pub mod init;
pub mod kmeans;
mod params;
pub mod pca;
pub mod tolerance;
mod traits;
mod variants;

pub use array::{CholeskyFactor, Indices, Matrix, Place};
pub use element::{DType, Element};
pub use error::{Error, Family, Result};
pub use factors::{FactorLayout, LuFactor, QrFactor};
pub use host_array::HostArray;
pub use init::init_centroids;
pub use kmeans::{Assignment, Init, KMeansConfig, KMeansFit, KMeansResult, SplitMix64};
pub use params::{ArgOp, Gemm, QrMode, ReduceOp, Trans, Triangular, Uplo};
pub use pca::{Pca, PcaFit, PcaSolver};
pub use traits::{
    Backend, BackendElement, Cluster, ClusterKernels, Device, Factorize, FactorizeKernels, Kernels,
    MatMul, MatMulKernels, Memory, Ops, Points, Reduce, ReduceKernels, Transpose, TransposeKernels,
};
pub use variants::{Ladder, Needs, Precision, Variant, Variants};

pub use ndarray;

/// The traits a user calls, to import at once: `use ndgpu_core::prelude::*;`.
pub mod prelude {
    pub use crate::{Backend, Cluster, Device, Factorize, MatMul, Memory, Reduce, Transpose};
}
