//! # ndgpu-core
//!
//! The traits, element types, resident arrays, errors, shared input checks and
//! tolerances of ndgpu. It knows nothing of CUDA: backends (`ndgpu-cpu`, `ndgpu-cuda`,
//! `ndgpu-cublas`) implement these traits, and the `ndgpu` facade picks one at run time.
//!
//! | trait | operations (resident forms `*_dev` on [`Matrix`], host forms on ndarray views) |
//! |---|---|
//! | [`Memory`] | `upload`, `download`, `alloc`, `zeros`, `copy`, `copy_into` |
//! | [`MatMul`] | `gemm` (α·op(A)·op(B) + β·C), `matmul` |
//! | [`Gram`] | `gram` (M·Mᵀ) |
//! | [`Transpose`] | out-of-place transpose |
//! | [`Reduce`] | sum, sum of squares, min, max, argmin, argmax (whole or per axis), dot |
//! | [`Cholesky`] | Cholesky `A = L·Lᵀ`, solve `A·X = B` with the factor |
//! | [`KMeans`] | k-means (Lloyd), predict, and the two steps of an iteration |
//!
//! Each family of [`Family`] is one trait; [`Backend`] requires them all for `f32` and
//! `f64`, plus [`Device`] (place, index arrays, synchronisation, timing).
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
pub mod host;
mod host_array;
mod host_memory;
pub mod init;
pub mod kmeans;
mod params;
pub mod tolerance;
mod traits;
mod variants;

pub use array::{CholeskyFactor, Indices, Matrix, Place};
pub use element::{DType, Element};
pub use error::{Error, Family, Result};
pub use host_array::HostArray;
pub use init::init_centroids;
pub use kmeans::{Assignment, Init, KMeansConfig, KMeansFit, KMeansResult, SplitMix64};
pub use params::{ArgOp, Gemm, ReduceOp, Trans};
pub use traits::{
    Backend, BackendElement, Cholesky, Device, Gram, KMeans, MatMul, Memory, Ops, Reduce, Transpose,
};
pub use variants::{Precision, Variants};

pub use ndarray;
