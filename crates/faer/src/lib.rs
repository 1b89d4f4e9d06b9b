//! # ndgpu-faer
//!
//! A fast CPU backend of ndgpu, for machines without a GPU: multi-threaded (rayon),
//! SIMD, pure Rust, on [faer](https://docs.rs/faer)'s matrix kernels. `ndgpu::backend("auto")`
//! picks it when no GPU backend can run. Its resident arrays live in host memory, in the
//! same storage as the reference backend's, so the two read each other's arrays.
//!
//! Unlike the reference (`ndgpu-cpu`), it computes in the element type, as a GPU does,
//! and its results meet the same error bounds as every other backend's
//! (`ndgpu_core::tolerance`):
//!
//! | family | how |
//! |---|---|
//! | matmul | faer's GEMM, all cores; with β = 0, C is never read |
//! | gram | faer's triangular GEMM computes the lower triangle, which is mirrored: exactly symmetric |
//! | transpose | 64×64 tiles, rows of tiles in parallel |
//! | reduce | sums and dot products accumulate in f64 over fixed chunks in parallel, combined in chunk order (the same bits every run); min/max/arg with NumPy's NaN policy; per-axis reductions per lane in parallel |
//! | cholesky | right-looking blocked: each diagonal block factored unblocked in f64 (so the failing pivot and its value are exact), the panel by faer's triangular solve, the trailing lower triangle by faer's triangular GEMM; solves by two triangular solves |
//! | trsm | faer's triangular solves on views of the triangle used, no copy |
//! | lu | LAPACK's recursive getrf2 on the row-major matrix in place: panels of up to 16 columns unblocked (a zero pivot left unscaled), faer's GEMM and triangular solves between them, row swaps in parallel over columns |
//! | qr | faer's blocked Householder QR on a column-major copy; Q applied as faer's block reflectors; lstsq by Qᵀ·B and back substitution |
//! | eigh, svd | faer's `self_adjoint_eigen` and `thin_svd` (tridiagonal or bidiagonal reduction, then divide and conquer) on the row-major data in place |
//! | kmeans | ‖x‖² − 2·x·c + ‖c‖² with x·c from a GEMM over blocks of points in parallel, argmin per point; centroid sums per block in f64, combined in block order |
//!
//! Each family has one variant, `faer`.
//!
//! ```
//! use ndarray::array;
//! use ndgpu_core::{Backend, Factorize, MatMul};
//! use ndgpu_faer::FaerBackend;
//!
//! let fast = FaerBackend::new();
//! let a = array![[4.0f64, 2.0], [2.0, 3.0]];
//! let l = fast.cholesky(a.view())?;
//! let llt = fast.matmul(l.view(), l.t())?;
//! assert!((&llt - &a).iter().all(|d| d.abs() < 1e-15));
//! # Ok::<(), ndgpu_core::Error>(())
//! ```
#![warn(missing_docs)]

mod cholesky;
mod kmeans;
mod lu;
mod products;
mod qr;
mod reduce;
mod spectra;
mod trsm;

use faer::traits::RealField;
use ndgpu_core::backend::Here;
use ndgpu_core::{Backend, Element, Place, Variant, Variants};

/// The one variant of every family.
pub const VARIANTS: &[Variant] = &[Variant::new(
    "faer",
    "reductions and k-means combine their parallel parts in a fixed order (the same bits \
     every run on one machine); products, Cholesky, LU, QR and the triangular solve use \
     faer's kernels, whose summation order depends on the number of threads",
)];

/// Where the backend computes, for the place check of every resident operand.
pub(crate) const HERE: Here = Here {
    backend: "faer",
    place: Place::Host,
};

/// The element types faer computes in: `f32` and `f64`.
pub trait FaerElement: Element + RealField {}
impl FaerElement for f32 {}
impl FaerElement for f64 {}

/// The multi-threaded CPU backend.
#[derive(Debug, Clone)]
pub struct FaerBackend {
    variants: Variants,
}

impl FaerBackend {
    /// The backend (it cannot fail: it needs nothing but the CPU). It runs on rayon's
    /// global thread pool, one thread per core unless `RAYON_NUM_THREADS` says otherwise.
    pub fn new() -> Self {
        FaerBackend {
            variants: Variants::uniform("faer", VARIANTS, ""),
        }
    }
}

impl Default for FaerBackend {
    fn default() -> Self {
        Self::new()
    }
}

ndgpu_core::impl_host_memory!(FaerBackend, HERE);

ndgpu_core::impl_kernels!(FaerBackend, FaerElement: matmul, transpose, reduce, factorize, cluster);

impl Backend for FaerBackend {
    fn description(&self) -> String {
        format!(
            "multi-threaded CPU on faer's kernels ({} threads), computing in the element type",
            rayon::current_num_threads()
        )
    }
    fn variant_table(&self) -> &Variants {
        &self.variants
    }
    fn variant_table_mut(&mut self) -> &mut Variants {
        &mut self.variants
    }
}

/// faer's parallelism for one call: all of rayon's threads.
pub(crate) fn par() -> faer::Par {
    faer::Par::rayon(0)
}

/// A row-major rows×cols slice as a faer matrix.
pub(crate) fn mat<T>(data: &[T], rows: usize, cols: usize) -> faer::MatRef<'_, T> {
    faer::MatRef::from_row_major_slice(data, rows, cols)
}

/// A row-major rows×cols slice as a mutable faer matrix.
pub(crate) fn mat_mut<T>(data: &mut [T], rows: usize, cols: usize) -> faer::MatMut<'_, T> {
    faer::MatMut::from_row_major_slice_mut(data, rows, cols)
}

/// A deterministic pseudo-random m×n matrix, entries in [−0.5, 0.5) (tests).
#[cfg(test)]
pub(crate) fn rand(m: usize, n: usize, seed: u64) -> ndarray::Array2<f64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    ndarray::Array2::from_shape_fn((m, n), |_| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    })
}
