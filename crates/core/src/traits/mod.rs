//! The operation contract.
//!
//! Two sides, so that the checks are written once and a backend writes only kernels:
//! - the **family traits** a user calls, [`MatMul`] (gemm, matmul, gram),
//!   [`Transpose`], [`Reduce`], [`Factorize`] (Cholesky) and [`Cluster`] (k-means),
//!   are written here, once, for every type that implements [`Kernels`]: each method
//!   checks its input, then runs one unchecked kernel;
//! - the **backend's side** is [`Memory`] (resident arrays), one kernel trait per family
//!   ([`MatMulKernels`], [`TransposeKernels`], [`ReduceKernels`], [`FactorizeKernels`],
//!   [`ClusterKernels`]: unchecked methods), and [`Kernels`], which hands out the
//!   families the backend has; a family it lacks is
//!   [`Error::Unsupported`](crate::Error::Unsupported) naming the backend and operation.
//!
//! [`Backend`] adds a name and variants, and requires [`Kernels`] for `f32` and `f64`,
//! so a `Box<dyn Backend>` chosen at run time has every family trait for both types.
//!
//! Every operation has two forms:
//! - the **resident** form (`*_dev`) works on [`Matrix`] handles that stay where the
//!   backend computes, so a chain of operations never crosses the bus; scalars (sums,
//!   indices of whole-array reductions) come back to the host, everything else stays;
//! - the **host** form takes ndarray views of any layout and returns owned C-ordered
//!   arrays. It is written once, here, for every backend: check the input
//!   ([`crate::check`]) → [`Memory::upload`] → the resident form → [`Memory::download`].
//!
mod cluster;
#[cfg(test)]
mod contract;
mod factorize;
mod kernels;
mod products;
mod reduce;

use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2};

use crate::{
    DType, Element, Family, HostArray, Indices, Matrix, Place, Precision, Result, Trans, Variants,
};

pub use cluster::{Cluster, ClusterKernels};
pub use factorize::{Factorize, FactorizeKernels};
pub use kernels::{Kernels, Points};
pub use products::{MatMul, MatMulKernels, Transpose, TransposeKernels};
pub use reduce::{Reduce, ReduceKernels};

/// What a backend offers whatever the element type: where it computes, index arrays,
/// synchronisation and timing.
pub trait Device: Send + Sync {
    /// Short name (`cpu`, `cuda`, `cublas`, `cuda:0,1`).
    fn name(&self) -> &'static str;

    /// The architecture of the device the backend computes on (`sm_90`), or `None` on
    /// the host: what a variant's [`Needs`](crate::Needs) is held against.
    fn arch(&self) -> Option<&str> {
        None
    }

    /// Where this backend's resident arrays live. Arrays from elsewhere are refused with
    /// [`Error::WrongPlace`](crate::Error::WrongPlace).
    fn place(&self) -> Place;

    /// `n` indices that name no centroid yet: the labels a first
    /// [`Cluster::assign_dev`] counts every point of as changed.
    ///
    /// # Errors
    /// Out of memory.
    fn unlabeled(&self, n: usize) -> Result<Indices>;

    /// Copies indices back to the host.
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); [`Error::InvalidArgument`](crate::Error::InvalidArgument)
    /// when an index was never assigned (labels from [`Device::unlabeled`] that no
    /// assignment wrote); device errors.
    fn download_indices(&self, i: &Indices) -> Result<Array1<usize>>;

    /// Waits for all work queued on this backend, and reports any fault it raised.
    ///
    /// # Errors
    /// Device errors.
    fn synchronize(&self) -> Result<()>;

    /// Seconds that the work `f` queues takes where the backend computes: between two
    /// CUDA events on a GPU backend (waiting for the second), by the wall clock on a
    /// host backend. For benchmarks: run `f` once first, to compile kernels and create
    /// library handles outside the timed region.
    ///
    /// # Errors
    /// Those of `f`; device errors.
    fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64>;
}

/// Resident matrices of one element type: made, filled, copied, read back.
pub trait Memory<T: Element>: Device {
    /// Copies a host array of any layout (C, Fortran, transposed, strided) into `m`, a
    /// resident matrix of the same shape. Nothing is allocated where `m` lives: a loop
    /// that streams data through one matrix pays only for the copy.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch),
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn upload_into(&self, a: ArrayView2<T>, m: &mut Matrix<T>) -> Result<()>;

    /// Copies the resident matrix `m` into `out`, a host array of the same shape and any
    /// layout (C-ordered is fastest: the data lands in place, with no second pass).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch),
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors, including faults
    /// of earlier work on the matrix.
    fn download_into(&self, m: &Matrix<T>, out: ArrayViewMut2<T>) -> Result<()>;

    /// A zeroed rows×cols host array in the memory this backend's transfers reach
    /// fastest: pinned memory on a GPU (uploads from it and downloads into it go straight
    /// to and from the bus), ordinary memory on the host. Allocating pinned memory is
    /// slow: make one and reuse it.
    ///
    /// # Errors
    /// Out of host memory, or of memory the driver will pin.
    fn host_array(&self, rows: usize, cols: usize) -> Result<HostArray<T>> {
        HostArray::zeros(rows, cols)
    }

    /// Copies a host array of any layout (C, Fortran, transposed, strided) into a new
    /// resident matrix: [`Memory::alloc`], then [`Memory::upload_into`].
    ///
    /// # Errors
    /// Out of memory (device or host); device errors.
    fn upload(&self, a: ArrayView2<T>) -> Result<Matrix<T>> {
        let mut m = self.alloc(a.nrows(), a.ncols())?;
        self.upload_into(a, &mut m)?;
        Ok(m)
    }

    /// Copies a resident matrix into a new C-ordered host array: a zeroed allocation
    /// (fresh pages, not written twice), then [`Memory::download_into`].
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); out of host memory; device errors,
    /// including faults of earlier work on the matrix.
    fn download(&self, m: &Matrix<T>) -> Result<Array2<T>> {
        let mut out = crate::host::zeros("download", m.dim())?;
        self.download_into(m, out.view_mut())?;
        Ok(out)
    }

    /// A new rows×cols matrix of unspecified values (any bit pattern is a valid float),
    /// to be overwritten: the output of [`MatMul::gemm_dev`] with β = 0, for example.
    ///
    /// # Errors
    /// Out of memory, including sizes beyond the address space.
    fn alloc(&self, rows: usize, cols: usize) -> Result<Matrix<T>>;

    /// A new rows×cols matrix of zeros.
    ///
    /// # Errors
    /// As [`Memory::alloc`].
    fn zeros(&self, rows: usize, cols: usize) -> Result<Matrix<T>>;

    /// Copies `src` into `dst`, which has the same shape.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch),
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn copy_into(&self, src: &Matrix<T>, dst: &mut Matrix<T>) -> Result<()>;

    /// A copy of `src`, resident here too.
    ///
    /// # Errors
    /// As [`Memory::alloc`] and [`Memory::copy_into`].
    fn copy(&self, src: &Matrix<T>) -> Result<Matrix<T>> {
        let mut dst = self.alloc(src.rows(), src.cols())?;
        self.copy_into(src, &mut dst)?;
        Ok(dst)
    }
}

/// Every operation for one element type: whatever implements [`Kernels`] has every
/// family trait. `dyn Backend` has it for `f32` and `f64` through its supertraits, so
/// code generic over the element type takes `&dyn Ops<T>` (or `B: Ops<T> + ?Sized`) and
/// is handed a `&dyn Backend`.
pub trait Ops<T: Element>:
    Kernels<T> + MatMul<T> + Transpose<T> + Reduce<T> + Factorize<T> + Cluster<T>
{
}

impl<T: Element, B: Kernels<T> + ?Sized> Ops<T> for B {}

/// The element types a `dyn Backend` computes in, with the way from a `&dyn Backend` to
/// its operations for that type: what code generic over the element type needs.
///
/// ```
/// use ndgpu_core::{Backend, BackendElement, Ops, Result};
/// fn total<T: BackendElement>(b: &dyn Backend, x: ndarray::ArrayView2<T>) -> Result<T> {
///     T::ops(b).reduce(ndgpu_core::ReduceOp::Sum, x)
/// }
/// ```
pub trait BackendElement: Element {
    /// `b`'s operations for this type.
    fn ops(b: &dyn Backend) -> &dyn Ops<Self>;
}

impl BackendElement for f32 {
    fn ops(b: &dyn Backend) -> &dyn Ops<f32> {
        b
    }
}

impl BackendElement for f64 {
    fn ops(b: &dyn Backend) -> &dyn Ops<f64> {
        b
    }
}

/// A complete backend: every operation for `f32` and `f64`, a name, and variants.
pub trait Backend: Ops<f32> + Ops<f64> {
    /// One line: what it runs on (device name, library versions, ...).
    fn description(&self) -> String;

    /// The backend's variants per family, and which is selected.
    fn variant_table(&self) -> &Variants;

    /// The same, to select from.
    fn variant_table_mut(&mut self) -> &mut Variants;

    /// The variants offered for `family`, default first. Backends with one way of
    /// doing a family return one name.
    fn variants(&self, family: Family) -> Vec<&'static str> {
        self.variant_table().list(family)
    }

    /// The variant currently used for `family`.
    fn variant(&self, family: Family) -> &'static str {
        self.variant_table().current(family)
    }

    /// The precision of the variant currently used for `family`: what its results may
    /// be checked against.
    fn precision(&self, family: Family) -> Precision {
        self.variant_table().precision(family)
    }

    /// Selects the variant used for `family` from now on.
    ///
    /// # Errors
    /// [`Error::UnknownVariant`](crate::Error::UnknownVariant).
    fn set_variant(&mut self, family: Family, name: &str) -> Result<()> {
        self.variant_table_mut().set(family, name)
    }

    /// Whether variant `name` of `family` runs on this backend's device: whether the
    /// device meets what its row needs (a rung that needs instructions the device lacks
    /// does not run).
    fn runs_here(&self, family: Family, name: &str) -> bool {
        self.variant_table()
            .row(family, name)
            .is_some_and(|v| v.needs.met_by(self.arch()))
    }

    /// Selects, for `family`, a variant that computes in `precision`: for
    /// [`Precision::Ieee`] the first in the table's order (the default, where it runs
    /// here), for a reduced precision the last (the ladder's top rung of that precision)
    /// that runs on this device. The precision is thus chosen by name, and the variant
    /// that gives it by the backend.
    ///
    /// # Errors
    /// [`Error::Unavailable`](crate::Error::Unavailable) naming the family and the
    /// precision when no variant of that precision runs here.
    fn set_precision(&mut self, family: Family, precision: Precision) -> Result<()> {
        let names = self.variant_table().of_precision(family, precision);
        let mut order: Vec<&str> = names.clone();
        if precision != Precision::Ieee {
            order.reverse();
        }
        match order.into_iter().find(|n| self.runs_here(family, n)) {
            Some(name) => self.set_variant(family, name),
            None => Err(crate::Error::Unavailable {
                backend: self.name().into(),
                reason: format!(
                    "no {} variant of {family} runs here (of that precision: {})",
                    precision.name(),
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            }),
        }
    }

    /// Per-variant notes for documentation and `ndgpu info` (for example which
    /// variants are bitwise reproducible, which parts use a vendor library).
    fn notes(&self) -> Vec<String> {
        self.variant_table().notes()
    }

    /// What the selected variant of `family` runs on operands of these dimensions, where
    /// it chooses by shape (a fixed rule of the shape and the device, never a timing): a
    /// short phrase for reports, such as the shootout's rows. `dims`: matmul `[m, n, k]`
    /// (an m×k times a k×n), gram `[n, k]` (an n×k M), k-means `[n, d, k]` (n points of d
    /// dimensions, k centroids). `None` where the variant runs the same kernels at every
    /// shape, or `dims` is not of the family's form.
    fn plan(&self, _family: Family, _dtype: DType, _dims: &[usize]) -> Option<String> {
        None
    }
}

/// Uploads a host operand in the layout that is contiguous: a column-major (Fortran)
/// view is uploaded as its transpose, which is row-major as stored, with `t` flipped.
pub(crate) fn upload_operand<T: Element, B: Memory<T> + ?Sized>(
    b: &B,
    a: ArrayView2<T>,
    t: Trans,
) -> Result<(Matrix<T>, Trans)> {
    if !a.is_standard_layout() && a.t().is_standard_layout() {
        Ok((b.upload(a.t())?, t.flip()))
    } else {
        Ok((b.upload(a)?, t))
    }
}
