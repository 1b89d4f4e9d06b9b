//! Reductions over a whole matrix or along one axis, and the dot product.

use ndarray::{Array1, ArrayView1, ArrayView2, Axis};

use super::kernels::need;
use super::{Device, Kernels, Memory};
use crate::{check, ArgOp, Element, Indices, Matrix, ReduceOp, Result};

/// Reductions over a whole matrix or along one axis, and the dot product.
///
/// **NaN policy, the same on every backend** (that of NumPy): sums, sums of squares and
/// dot products follow IEEE arithmetic, so a NaN (or `+Inf` meeting `-Inf`) gives NaN;
/// `min`/`max` return NaN if any element is NaN; `argmin`/`argmax` return the index
/// of the first NaN if there is one, else the first index of the extreme value.
/// Indices of whole-matrix arg reductions are flat, in row-major (logical) order.
///
/// Per-axis results of the resident forms stay resident, shaped as NumPy's
/// `keepdims=True`: `Axis(0)` (one value per column) gives a 1×cols matrix, `Axis(1)`
/// (one per row) a rows×1 matrix.
pub trait Reduce<T: Element>: Kernels<T> {
    /// Reduces a resident matrix to one value, returned to the host.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `Min`/`Max` of an empty matrix;
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn reduce_dev(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T> {
        if op.needs_element() {
            check::nonempty_dim(op.name(), a.dim())?;
        }
        need(self, self.reduce_kernels(), op.name())?.reduce_unchecked(op, a)
    }

    /// Reduces a resident matrix along `axis` into a new resident matrix (1×cols for
    /// `Axis(0)`, rows×1 for `Axis(1)`).
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `Min`/`Max` along an axis of length 0
    /// (unless the result itself is empty); `InvalidArgument` for an axis other than 0
    /// and 1; [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn reduce_axis_dev(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>> {
        check::axis_dims(op.name(), a.dim(), axis, op.needs_element())?;
        need(self, self.reduce_kernels(), op.name())?.reduce_axis_unchecked(op, a, axis)
    }

    /// Flat row-major index of the extreme element of a resident matrix.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for an empty matrix; as
    /// [`Reduce::reduce_dev`].
    fn arg_reduce_dev(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize> {
        check::nonempty_dim(op.name(), a.dim())?;
        need(self, self.reduce_kernels(), op.name())?.arg_reduce_unchecked(op, a)
    }

    /// Index of the extreme element along `axis` (the row index per column for
    /// `Axis(0)`, the column index per row for `Axis(1)`), resident.
    ///
    /// # Errors
    /// As [`Reduce::reduce_axis_dev`]; an axis of length 0 is always
    /// [`Error::Empty`](crate::Error::Empty) unless the result is empty too.
    fn arg_reduce_axis_dev(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices> {
        check::axis_dims(op.name(), a.dim(), axis, true)?;
        need(self, self.reduce_kernels(), op.name())?.arg_reduce_axis_unchecked(op, a, axis)
    }

    /// `Σᵢⱼ xᵢⱼ·yᵢⱼ` of two resident matrices of the same shape (the dot product of two
    /// vectors stored as 1×n matrices), returned to the host.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when the shapes differ; as
    /// [`Reduce::reduce_dev`].
    fn dot_dev(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T> {
        check::same_shape("dot", x.dim(), y.dim())?;
        need(self, self.reduce_kernels(), "dot")?.dot_unchecked(x, y)
    }

    /// Reduces a host array to one value.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `Min`/`Max` of an empty matrix.
    fn reduce(&self, op: ReduceOp, a: ArrayView2<T>) -> Result<T> {
        if op.needs_element() {
            check::nonempty(op.name(), &a)?;
        }
        let da = self.upload(a)?;
        need(self, self.reduce_kernels(), op.name())?.reduce_unchecked(op, &da)
    }

    /// Reduces a host array along `axis`: `Axis(0)` gives one value per column,
    /// `Axis(1)` one per row.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `Min`/`Max` along an axis of length 0
    /// (unless the result itself is empty); `InvalidArgument` for an axis other than 0, 1.
    fn reduce_axis(&self, op: ReduceOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<T>> {
        check::axis(op.name(), &a, axis, op.needs_element())?;
        let da = self.upload(a)?;
        let r =
            need(self, self.reduce_kernels(), op.name())?.reduce_axis_unchecked(op, &da, axis)?;
        let r = self.download(&r)?;
        Ok(Array1::from(r.into_raw_vec_and_offset().0))
    }

    /// The mean of a host array: its sum (as [`ReduceOp::Sum`] computes it) over its
    /// number of elements, as `numpy.mean`. NaN for an empty array, as NumPy gives.
    ///
    /// # Errors
    /// As [`Reduce::reduce`].
    fn mean(&self, a: ArrayView2<T>) -> Result<T> {
        let n = T::from_f64(a.len() as f64);
        Ok(self.reduce(ReduceOp::Sum, a)? / n)
    }

    /// The means of a host array along `axis` (one per column for `Axis(0)`, one per row
    /// for `Axis(1)`): the sums along it over its length. NaN along an axis of length 0.
    ///
    /// # Errors
    /// As [`Reduce::reduce_axis`].
    fn mean_axis(&self, a: ArrayView2<T>, axis: Axis) -> Result<Array1<T>> {
        // An axis other than 0 and 1 is refused by `reduce_axis`.
        let n = a.shape().get(axis.index()).copied().unwrap_or(1);
        Ok(self.reduce_axis(ReduceOp::Sum, a, axis)? / T::from_f64(n as f64))
    }

    /// Flat row-major index of the extreme element of a host array.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for an empty matrix.
    fn arg_reduce(&self, op: ArgOp, a: ArrayView2<T>) -> Result<usize> {
        check::nonempty(op.name(), &a)?;
        let da = self.upload(a)?;
        need(self, self.reduce_kernels(), op.name())?.arg_reduce_unchecked(op, &da)
    }

    /// Index of the extreme element of a host array along `axis` (row index per
    /// column for `Axis(0)`, column index per row for `Axis(1)`).
    ///
    /// # Errors
    /// As [`Reduce::reduce_axis`].
    fn arg_reduce_axis(&self, op: ArgOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<usize>> {
        check::axis(op.name(), &a, axis, true)?;
        let da = self.upload(a)?;
        let i = need(self, self.reduce_kernels(), op.name())?
            .arg_reduce_axis_unchecked(op, &da, axis)?;
        Device::download_indices(self, &i)
    }

    /// `Σ xᵢ·yᵢ` of two host vectors.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when the lengths differ.
    fn dot(&self, x: ArrayView1<T>, y: ArrayView1<T>) -> Result<T> {
        check::dot(&x, &y)?;
        let dx = self.upload(x.insert_axis(Axis(0)))?;
        let dy = self.upload(y.insert_axis(Axis(0)))?;
        need(self, self.reduce_kernels(), "dot")?.dot_unchecked(&dx, &dy)
    }
}

impl<T: Element, B: Kernels<T> + ?Sized> Reduce<T> for B {}

/// The kernels of [`Reduce`]; see [`Kernels`].
pub trait ReduceKernels<T: Element>: Memory<T> {
    /// A whole-matrix reduction. Checked: `a` is not empty where `op` needs an element.
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn reduce_unchecked(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T>;

    /// A reduction along `axis`, keepdims-shaped. Checked: the axis is 0 or 1 and has
    /// an element where `op` needs one (or the result is empty).
    ///
    /// # Errors
    /// As `reduce_unchecked`.
    fn reduce_axis_unchecked(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>>;

    /// The flat row-major index of the extreme element. Checked: `a` is not empty.
    ///
    /// # Errors
    /// As `reduce_unchecked`.
    fn arg_reduce_unchecked(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize>;

    /// The index of the extreme element along `axis`, checked as
    /// `reduce_axis_unchecked`.
    ///
    /// # Errors
    /// As `reduce_unchecked`.
    fn arg_reduce_axis_unchecked(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices>;

    /// `Σ xᵢⱼ·yᵢⱼ`. Checked: the shapes are equal.
    ///
    /// # Errors
    /// As `reduce_unchecked`.
    fn dot_unchecked(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T>;
}
