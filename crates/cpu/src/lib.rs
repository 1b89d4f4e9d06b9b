//! # ndgpu-cpu
//!
//! The reference backend of ndgpu: single-threaded, written to be obviously correct
//! rather than fast, and used by the conformance suite as the answer every other
//! backend is compared with. Its resident arrays live in host memory.
//!
//! Every operation converts its operands to `f64`, computes there, and rounds once to
//! the element type at the end, so for `f32` inputs the result is (close to) the
//! correctly rounded exact answer and for `f64` inputs it is as good as a plain
//! sequential algorithm gets:
//!
//! | family | how |
//! |---|---|
//! | matmul | operands to f64, ndarray `dot` (matrixmultiply, no threads), α and β applied in f64, one rounding |
//! | gram | as matmul; only the lower triangle is rounded and mirrored, so the result is exactly symmetric |
//! | transpose | element copy into a C-ordered array |
//! | reduce | sums, sums of squares and dot products accumulated in f64 in row-major order; min/max/arg with NumPy's NaN policy |
//! | cholesky | unblocked left-looking (Cholesky–Crout) in f64, reading the lower triangle only; solve by forward then backward substitution |
//! | trsm | forward or backward substitution in f64, reading only the triangle used |
//! | lu | right-looking unblocked LU with partial pivoting in f64 (LAPACK's getf2: the first largest pivot, a zero pivot recorded and its column left unscaled) |
//! | qr | Householder QR in f64 (LAPACK's geqr2); Q applied reflector by reflector; lstsq by Qᵀ·B and back substitution |
//! | eigh, svd | cyclic Jacobi in f64: two-sided for eigh, one-sided (Hestenes) on the tall orientation for svd, Demmel–Veselić's stopping test, at most 60 sweeps |
//! | kmeans | the two steps of Lloyd's iteration documented on [`Cluster`](ndgpu_core::Cluster); distances as direct squared differences in f64 |
//!
//! Each family has one variant, `reference`.
//!
//! ```
//! use ndarray::array;
//! use ndgpu_core::prelude::*;
//! use ndgpu_core::ReduceOp;
//! use ndgpu_cpu::CpuBackend;
//!
//! let cpu = CpuBackend::new();
//! assert_eq!(cpu.name(), "cpu");
//!
//! let a = array![[4.0f64, 2.0], [2.0, 3.0]];
//! let l = cpu.cholesky(a.view())?;
//! assert_eq!(l, array![[2.0, 0.0], [1.0, 2f64.sqrt()]]);
//! // L·Lᵀ gives A back.
//! let llt = cpu.matmul(l.view(), l.t())?;
//! assert!((&llt - &a).iter().all(|d| d.abs() < 1e-15));
//!
//! let x = array![[1.0f32, -2.0, 3.0]];
//! assert_eq!(cpu.reduce(ReduceOp::Sum, x.view())?, 2.0);
//! # Ok::<(), ndgpu_core::Error>(())
//! ```
#![warn(missing_docs)]

mod cholesky;
mod kmeans;
mod lu;
mod matmul;
mod memory;
mod qr;
mod reduce;
mod spectra;
mod trsm;

pub use spectra::jacobi_eigh;

use ndarray::{Array2, ArrayView2};
use ndgpu_core::backend::Here;
use ndgpu_core::{Backend, Element, Place, Variant, Variants};

/// The one variant of every family.
pub const VARIANTS: &[Variant] = &[Variant::new(
    "reference",
    "deterministic (same input, same bits); every result is computed in f64 and rounded once",
)];

/// Where the reference computes, for the place check of every resident operand.
pub(crate) const HERE: Here = Here {
    backend: "cpu",
    place: Place::Host,
};

/// The single-threaded reference backend.
#[derive(Debug, Clone)]
pub struct CpuBackend {
    variants: Variants,
}

impl CpuBackend {
    /// The reference backend (it cannot fail: it needs nothing but the CPU).
    pub fn new() -> Self {
        CpuBackend {
            variants: Variants::uniform("cpu", VARIANTS, ""),
        }
    }
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new()
    }
}

ndgpu_core::impl_kernels!(CpuBackend, Element: matmul, transpose, reduce, factorize, cluster);

impl Backend for CpuBackend {
    fn description(&self) -> String {
        "single-threaded reference on the host, f64 accumulation, one rounding per result"
            .to_string()
    }
    fn variant_table(&self) -> &Variants {
        &self.variants
    }
    fn variant_table_mut(&mut self) -> &mut Variants {
        &mut self.variants
    }
}

/// An f64 copy of a view of any layout, in C order.
pub(crate) fn to_f64<T: Element>(a: &ArrayView2<T>) -> Array2<f64> {
    Array2::from_shape_fn(a.dim(), |ix| a[ix].as_f64())
}

/// Whether `a` and `b` have one shape and agree within `tol` entry by entry (tests).
#[cfg(test)]
pub(crate) fn close(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>, tol: f64) -> bool {
    a.dim() == b.dim() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

/// A row, a column, a tall and a wide matrix (tests).
#[cfg(test)]
pub(crate) fn thin_and_rectangular() -> [ndarray::Array2<f64>; 4] {
    use ndarray::array;
    [
        array![[1.0f64, -2.0, 0.5, 3.0]],
        array![[0.5f64], [-3.0], [2.0]],
        array![[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 9.0]],
        array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 7.0]],
    ]
}
