//! # ndgpu-core
//!
//! The traits, element types, errors, shared input checks and tolerances of ndgpu.
//! It knows nothing of CUDA: backends (`ndgpu-cpu`, `ndgpu-cuda`, `ndgpu-cublas`)
//! implement these traits, and the `ndgpu` facade picks one at run time.
//!
//! | trait | operations |
//! |---|---|
//! | [`MatMul`] | `gemm` (α·op(A)·op(B) + β·C), `matmul`, `gram` (M·Mᵀ) |
//! | [`Transpose`] | out-of-place transpose |
//! | [`Reduce`] | sum, sum of squares, min, max, argmin, argmax (whole or per axis), dot |
//! | [`Factorize`] | Cholesky `A = L·Lᵀ`, solve `A·X = B` with the factor |
//! | [`Cluster`] | k-means (Lloyd), predict |
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

pub mod check;
mod element;
mod error;
pub mod host;
pub mod kmeans;
pub mod tolerance;
mod traits;
mod variants;

pub use element::{DType, Element};
pub use error::{Error, Family, Result};
pub use kmeans::{Init, KMeansConfig, KMeansResult};
pub use traits::{ArgOp, Backend, Cluster, Factorize, MatMul, Reduce, ReduceOp, Trans, Transpose};
pub use variants::Variants;

pub use ndarray;
