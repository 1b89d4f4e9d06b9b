//! Matrix products (`gemm`, `matmul`, `gram`) and the transpose.

use ndarray::{Array2, ArrayView2};

use super::kernels::need;
use super::{upload_operand, Kernels, Memory};
use crate::{check, Element, Gemm, Matrix, Result};

/// Matrix products: the general product and the symmetric product M·Mᵀ.
///
/// Written once for every backend (every [`Kernels`] implementor): the methods check
/// the shapes, then run the backend's kernel.
pub trait MatMul<T: Element>: Kernels<T> {
    /// `C ← α·op(A)·op(B) + β·C` on resident matrices, C in place. C must be op(A)'s
    /// rows × op(B)'s columns; with β = 0 its contents are never read.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when the inner dimensions
    /// differ or C has the wrong shape; [`Error::WrongPlace`](crate::Error::WrongPlace);
    /// device errors.
    fn gemm_dev(&self, g: Gemm<T>, a: &Matrix<T>, b: &Matrix<T>, c: &mut Matrix<T>) -> Result<()> {
        check::gemm_dev(&g, a.dim(), b.dim(), c.dim())?;
        need(self, self.matmul_kernels(), "gemm")?.gemm_unchecked(g, [a, b], c)
    }

    /// `A·B` into a new resident matrix.
    ///
    /// # Errors
    /// As [`MatMul::gemm_dev`]; out of memory.
    fn matmul_dev(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T>> {
        let g = Gemm::new();
        let (m, n, _) = check::gemm_dims(g.ta, a.dim(), g.tb, b.dim())?;
        let mut c = self.alloc(m, n).map_err(|e| e.for_op("gemm"))?;
        need(self, self.matmul_kernels(), "gemm")?.gemm_unchecked(g, [a, b], &mut c)?;
        Ok(c)
    }

    /// BLAS-style `α·op(A)·op(B) + β·C` of host arrays, returned as a new array.
    ///
    /// `c` is required when `β ≠ 0` and ignored (never read) when `β = 0`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when the inner dimensions
    /// differ or `c` has the wrong shape (or is missing while `β ≠ 0`); backend errors.
    fn gemm(
        &self,
        g: Gemm<T>,
        a: ArrayView2<T>,
        b: ArrayView2<T>,
        c: Option<ArrayView2<T>>,
    ) -> Result<Array2<T>> {
        let (m, n, _) = check::gemm(a, g.ta, b, g.tb, g.beta, c.as_ref())?;
        let (da, ta) = upload_operand(self, a, g.ta)?;
        let (db, tb) = upload_operand(self, b, g.tb)?;
        let mut dc = match c {
            Some(c) if g.beta != T::zero() => self.upload(c)?,
            _ => self.alloc(m, n).map_err(|e| e.for_op("gemm"))?,
        };
        let g = Gemm { ta, tb, ..g };
        need(self, self.matmul_kernels(), "gemm")?.gemm_unchecked(g, [&da, &db], &mut dc)?;
        self.download(&dc)
    }

    /// `A·B` of host arrays.
    ///
    /// # Errors
    /// As [`MatMul::gemm`].
    fn matmul(&self, a: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        self.gemm(Gemm::new(), a, b, None)
    }

    /// `M·Mᵀ` (n×n for an n×k `M`) into a new resident matrix, exactly symmetric on
    /// every backend.
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); out of memory;
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) beyond a size limit of the
    /// selected variant (the variant's note states it); device errors.
    fn gram_dev(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        need(self, self.matmul_kernels(), "gram")?.gram_unchecked(m)
    }

    /// `M·Mᵀ` of a host array.
    ///
    /// # Errors
    /// Backend errors only: every shape is valid, except beyond a size limit of the
    /// selected variant.
    fn gram(&self, m: ArrayView2<T>) -> Result<Array2<T>> {
        self.download(&self.gram_dev(&self.upload(m)?)?)
    }
}

/// Out-of-place transpose, written once for every backend.
pub trait Transpose<T: Element>: Kernels<T> {
    /// `Aᵀ` into a new resident matrix (any m×n, including empty).
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); out of memory; device errors.
    fn transpose_dev(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        need(self, self.transpose_kernels(), "transpose")?.transpose_unchecked(a)
    }

    /// `Aᵀ` of a host array, as a new C-ordered array.
    ///
    /// # Errors
    /// Backend errors only.
    fn transpose(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        self.download(&self.transpose_dev(&self.upload(a)?)?)
    }
}

impl<T: Element, B: Kernels<T> + ?Sized> MatMul<T> for B {}
impl<T: Element, B: Kernels<T> + ?Sized> Transpose<T> for B {}

/// The kernels of [`MatMul`]; see [`Kernels`].
pub trait MatMulKernels<T: Element>: Memory<T> {
    /// `C ← α·op(A)·op(B) + β·C`. Checked: op(A) is m×k, op(B) k×n, C m×n.
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    /// `ab` is `[A, B]`.
    fn gemm_unchecked(&self, g: Gemm<T>, ab: [&Matrix<T>; 2], c: &mut Matrix<T>) -> Result<()>;

    /// `M·Mᵀ`, exactly symmetric (every shape is valid).
    ///
    /// # Errors
    /// As `gemm_unchecked`; a size limit of the selected variant.
    fn gram_unchecked(&self, m: &Matrix<T>) -> Result<Matrix<T>>;
}

/// The kernel of [`Transpose`]; see [`Kernels`].
pub trait TransposeKernels<T: Element>: Memory<T> {
    /// `Aᵀ` into a new matrix (every shape is valid).
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); device errors.
    fn transpose_unchecked(&self, a: &Matrix<T>) -> Result<Matrix<T>>;
}
