//! # ndgpu-cuda-runtime
//!
//! The CUDA runtime under both GPU backends of ndgpu (`ndgpu-cuda`, hand-written
//! kernels; `ndgpu-cublas`, the vendor libraries):
//!
//! - [`Gpu`]: one device's context, compute stream and copy stream, device memory (out
//!   of memory is an error value, never a panic), and the NVRTC module cache: kernel
//!   files (`kernels/*.cu`) are compiled for the device's own architecture the first
//!   time one of their kernels is needed, once per process, and kept in an on-disk
//!   cache ([`cache`]) that later processes load instead of compiling. Backends opened on the same
//!   device share one `Gpu` ([`Gpu::shared`]) and so read each other's arrays.
//! - resident storage: [`DeviceMatrix`] and [`IndexStorage`] behind
//!   [`ndgpu_core::Matrix`] and [`ndgpu_core::Indices`], and the memory operations both
//!   backends offer ([`impl_device_memory!`]);
//! - transfers through pinned staging in chunks on the copy stream ([`Gpu::upload_into`],
//!   [`Gpu::download_into`]);
//! - the kernels both backends launch: whole-array and per-axis reductions
//!   ([`reduce`]), k-means' score assignment and centroid update ([`kmeans`]), and
//!   k-means++ and k-means‖ seeding ([`seed`]).
//!
//! The CUDA libraries are loaded at run time (`dynamic-loading`) and probed first
//! ([`probe`]), so a machine without them gets [`ndgpu_core::Error::Unavailable`].
#![warn(missing_docs)]

pub mod cache;
mod device_matrix;
mod element;
mod errors;
mod gpu;
mod indices;
pub mod kernels;
pub mod kmeans;
pub mod launch;
mod memory;
mod pinned;
mod pool;
pub mod reduce;
mod resident;
mod ring;
pub mod seed;
mod transfer;
pub mod triangle;

pub use device_matrix::DeviceMatrix;
pub use element::CudaElement;
pub use errors::{describe, driver, probe};
pub use gpu::Gpu;
pub use indices::{DeviceIndices, IndexStorage};
pub use launch::{blocks, dim_i32, Kernel};
pub use pinned::PinnedPair;

/// `ndgpu_core`, for [`impl_device_memory!`].
pub use ndgpu_core as core;
/// `ndarray`, for [`impl_device_memory!`].
pub use ndgpu_core::ndarray;
