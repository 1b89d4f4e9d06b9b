//! Matrix products (`MatMul`, `Gram`) and the transpose.

use ndarray::{Array2, ArrayView2};

use super::{upload_operand, Memory};
use crate::{check, Element, Gemm, Matrix, Result};

/// General matrix products.
pub trait MatMul<T: Element>: Memory<T> {
    /// `C ← α·op(A)·op(B) + β·C` on resident matrices, C in place. C must be op(A)'s
    /// rows × op(B)'s columns; with β = 0 its contents are never read.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when the inner dimensions
    /// differ or C has the wrong shape; [`Error::WrongPlace`](crate::Error::WrongPlace);
    /// device errors.
    fn gemm_dev(&self, g: Gemm<T>, a: &Matrix<T>, b: &Matrix<T>, c: &mut Matrix<T>) -> Result<()>;

    /// `A·B` into a new resident matrix.
    ///
    /// # Errors
    /// As [`MatMul::gemm_dev`]; out of memory.
    fn matmul_dev(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T>> {
        let g = Gemm::new();
        let (m, n, _) = check::gemm_dims(g.ta, a.dim(), g.tb, b.dim())?;
        let mut c = self.alloc(m, n).map_err(|e| e.for_op("gemm"))?;
        self.gemm_dev(g, a, b, &mut c)?;
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
        self.gemm_dev(Gemm { ta, tb, ..g }, &da, &db, &mut dc)?;
        self.download(&dc)
    }

    /// `A·B` of host arrays.
    ///
    /// # Errors
    /// As [`MatMul::gemm`].
    fn matmul(&self, a: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        self.gemm(Gemm::new(), a, b, None)
    }
}

/// The symmetric product `M·Mᵀ`.
pub trait Gram<T: Element>: Memory<T> {
    /// `M·Mᵀ` (n×n for an n×k `M`) into a new resident matrix, exactly symmetric on
    /// every backend.
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); out of memory;
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) beyond a size limit of the
    /// selected variant (the variant's note states it); device errors.
    fn gram_dev(&self, m: &Matrix<T>) -> Result<Matrix<T>>;

    /// `M·Mᵀ` of a host array.
    ///
    /// # Errors
    /// Backend errors only: every shape is valid, except beyond a size limit of the
    /// selected variant.
    fn gram(&self, m: ArrayView2<T>) -> Result<Array2<T>> {
        self.download(&self.gram_dev(&self.upload(m)?)?)
    }
}

/// Out-of-place transpose.
pub trait Transpose<T: Element>: Memory<T> {
    /// `Aᵀ` into a new resident matrix (any m×n, including empty).
    ///
    /// # Errors
    /// [`Error::WrongPlace`](crate::Error::WrongPlace); out of memory; device errors.
    fn transpose_dev(&self, a: &Matrix<T>) -> Result<Matrix<T>>;

    /// `Aᵀ` of a host array, as a new C-ordered array.
    ///
    /// # Errors
    /// Backend errors only.
    fn transpose(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        self.download(&self.transpose_dev(&self.upload(a)?)?)
    }
}
