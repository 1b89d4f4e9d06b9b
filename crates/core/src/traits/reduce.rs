//! Reductions over a whole matrix or along one axis, and the dot product.

use ndarray::{Array1, ArrayView1, ArrayView2, Axis};

use super::{Device, Memory};
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
pub trait Reduce<T: Element>: Memory<T> {
    /// Reduces a resident matrix to one value, returned to the host.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `Min`/`Max` of an empty matrix;
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn reduce_dev(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T>;

    /// Reduces a resident matrix along `axis` into a new resident matrix (1×cols for
    /// `Axis(0)`, rows×1 for `Axis(1)`).
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `Min`/`Max` along an axis of length 0
    /// (unless the result itself is empty); `InvalidArgument` for an axis other than 0
    /// and 1; [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn reduce_axis_dev(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>>;

    /// Flat row-major index of the extreme element of a resident matrix.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for an empty matrix; as
    /// [`Reduce::reduce_dev`].
    fn arg_reduce_dev(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize>;

    /// Index of the extreme element along `axis` (the row index per column for
    /// `Axis(0)`, the column index per row for `Axis(1)`), resident.
    ///
    /// # Errors
    /// As [`Reduce::reduce_axis_dev`]; an axis of length 0 is always
    /// [`Error::Empty`](crate::Error::Empty) unless the result is empty too.
    fn arg_reduce_axis_dev(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices>;

    /// `Σᵢⱼ xᵢⱼ·yᵢⱼ` of two resident matrices of the same shape (the dot product of two
    /// vectors stored as 1×n matrices), returned to the host.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when the shapes differ; as
    /// [`Reduce::reduce_dev`].
    fn dot_dev(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T>;

    /// Reduces a host array to one value.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `Min`/`Max` of an empty matrix.
    fn reduce(&self, op: ReduceOp, a: ArrayView2<T>) -> Result<T> {
        if op.needs_element() {
            check::nonempty(op.name(), &a)?;
        }
        let da = self.upload(a)?;
        self.reduce_dev(op, &da)
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
        let r = self.reduce_axis_dev(op, &da, axis)?;
        let r = self.download(&r)?;
        Ok(Array1::from(r.into_raw_vec_and_offset().0))
    }

    /// Flat row-major index of the extreme element of a host array.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for an empty matrix.
    fn arg_reduce(&self, op: ArgOp, a: ArrayView2<T>) -> Result<usize> {
        check::nonempty(op.name(), &a)?;
        let da = self.upload(a)?;
        self.arg_reduce_dev(op, &da)
    }

    /// Index of the extreme element of a host array along `axis` (row index per
    /// column for `Axis(0)`, column index per row for `Axis(1)`).
    ///
    /// # Errors
    /// As [`Reduce::reduce_axis`].
    fn arg_reduce_axis(&self, op: ArgOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<usize>> {
        check::axis(op.name(), &a, axis, true)?;
        let da = self.upload(a)?;
        let i = self.arg_reduce_axis_dev(op, &da, axis)?;
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
        self.dot_dev(&dx, &dy)
    }
}
