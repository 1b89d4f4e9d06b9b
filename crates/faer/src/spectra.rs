//! The spectra through faer: `self_adjoint_eigen` (tridiagonalisation, then divide and
//! conquer) for eigh, and `thin_svd` (bidiagonalisation, then divide and conquer) for
//! the SVD, on the row-major data read in place. faer gives eigenvalues ascending and
//! singular values descending, as the contract; U and V come column by column and are
//! copied to row-major U and Vt.

use faer::{MatRef, Side};
use ndarray::Array2;
use ndgpu_core::backend::{host_matrix, HostStorage};
use ndgpu_core::{check, Error, Matrix, Result};

use crate::lu::finite_input;
use crate::{mat, FaerBackend, FaerElement, HERE};

/// `(U, Vt)` of an SVD, when asked for.
type SingularVectors<T> = Option<(Matrix<T>, Matrix<T>)>;

/// faer's iteration failing, as the contract's error.
fn no_convergence(op: &'static str) -> Error {
    Error::NoConvergence {
        op,
        method: "faer's divide and conquer (its iteration limit)",
    }
}

/// A faer matrix as a resident row-major one.
fn resident<T: FaerElement>(m: MatRef<'_, T>) -> Matrix<T> {
    host_matrix(Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| {
        m[(i, j)]
    }))
}

/// A vector as a resident n×1 matrix.
fn column<T: FaerElement>(v: Vec<T>) -> Matrix<T> {
    host_matrix(Array2::from_shape_fn((v.len(), 1), |(i, _)| v[i]))
}

impl FaerBackend {
    /// [`FactorizeKernels::eigh_unchecked`](ndgpu_core::FactorizeKernels::eigh_unchecked).
    pub(crate) fn eigh_kernel<T: FaerElement>(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, Option<Matrix<T>>)> {
        let op = "eigh";
        let n = a.rows();
        check::finite_lower(op, "A", &HERE.host_view(op, "A", a)?)?;
        let s: &HostStorage<T> = HERE.matrix(op, "A", a)?;
        let a = mat(&s.data, n, n);
        if !vectors {
            let w = a
                .self_adjoint_eigenvalues(Side::Lower)
                .map_err(|_| no_convergence(op))?;
            return Ok((column(w), None));
        }
        let e = a
            .self_adjoint_eigen(Side::Lower)
            .map_err(|_| no_convergence(op))?;
        let w = e.S().column_vector().iter().copied().collect();
        Ok((column(w), Some(resident(e.U()))))
    }

    /// [`FactorizeKernels::svd_unchecked`](ndgpu_core::FactorizeKernels::svd_unchecked):
    /// faer's `singular_values` alone, or its `thin_svd`, whose V is transposed.
    pub(crate) fn svd_kernel<T: FaerElement>(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, SingularVectors<T>)> {
        let (m, n) = a.dim();
        let s: &HostStorage<T> = HERE.matrix("svd", "A", a)?;
        finite_input("svd", "A", &s.data, (m, n))?;
        let a = mat(&s.data, m, n);
        if !vectors {
            let s = a.singular_values().map_err(|_| no_convergence("svd"))?;
            return Ok((column(s), None));
        }
        let d = a.thin_svd().map_err(|_| no_convergence("svd"))?;
        let s = d.S().column_vector().iter().copied().collect();
        Ok((
            column(s),
            Some((resident(d.U()), resident(d.V().transpose()))),
        ))
    }
}
