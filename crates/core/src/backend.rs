//! For backend authors: resident arrays built around a backend's own storage, and that
//! storage read back with the place check every backend makes first.
//!
//! A backend keeps its memory in a type of its own that implements [`Storage`] (host
//! backends share [`HostStorage`]). It wraps it with [`matrix`] or [`indices`] when it
//! hands an array out, and gets it back with a [`Here`] when an array comes in: an
//! array that lives elsewhere is [`Error::WrongPlace`], never a panic or a silent copy.

use ndarray::{Array2, ArrayView2};

use crate::array::{self, any, any_mut};
pub use crate::array::{HostStorage, Storage};
pub use crate::factors::{first_zero_diagonal, full_rank};
pub use crate::host_memory::UNLABELED;
use crate::{
    check, CholeskyFactor, Element, Error, FactorLayout, Indices, LuFactor, Matrix, Place,
    QrFactor, Result,
};

/// A rows×cols matrix around `storage`, which must hold its elements row-major.
pub fn matrix<T: Element>(rows: usize, cols: usize, storage: impl Storage) -> Matrix<T> {
    array::matrix(rows, cols, Box::new(storage))
}

/// `len` indices around `storage`.
pub fn indices(len: usize, storage: impl Storage) -> Indices {
    array::indices(len, Box::new(storage))
}

/// Declares `l` a Cholesky factor. The caller guarantees what [`CholeskyFactor`]
/// promises: square, lower triangular (strict upper triangle zero), a finite non-zero
/// diagonal.
pub fn cholesky_factor<T: Element>(l: Matrix<T>) -> CholeskyFactor<T> {
    array::factor(l)
}

/// Declares `packed` (m×n in `layout`: resident n×m when column-major) and `pivots`
/// (min(m, n) row swaps, 0-based, as LAPACK's `ipiv` less one) an LU factor of an m×n
/// matrix, whose first exactly zero pivot is `zero_pivot`. The caller guarantees what
/// [`LuFactor`] promises, and that no entry is NaN or ±Inf.
pub fn lu_factor<T: Element>(
    packed: Matrix<T>,
    pivots: Indices,
    layout: FactorLayout,
    dim: (usize, usize),
    zero_pivot: Option<usize>,
) -> LuFactor<T> {
    LuFactor {
        packed,
        pivots,
        layout,
        dim,
        zero_pivot,
    }
}

/// Declares `packed` (m×n in `layout`) and `tau` a QR factor of an m×n matrix, in a
/// representation of Q that the same backend's kernels read.
pub fn qr_factor<T: Element>(
    packed: Matrix<T>,
    tau: Matrix<T>,
    layout: FactorLayout,
    dim: (usize, usize),
) -> QrFactor<T> {
    QrFactor {
        packed,
        tau,
        layout,
        dim,
    }
}

/// The length of a per-axis reduction's result over a matrix of shape `dim`: the
/// columns for `Axis(0)`, the rows for `Axis(1)` (the axis is checked already).
pub fn kept((rows, cols): (usize, usize), axis: ndarray::Axis) -> usize {
    if axis.index() == 0 {
        cols
    } else {
        rows
    }
}

/// A host matrix around an owned array (copied only if it is not in C order).
pub fn host_matrix<T: Element>(a: Array2<T>) -> Matrix<T> {
    let (rows, cols) = a.dim();
    let data = if a.is_standard_layout() {
        a.into_raw_vec_and_offset().0
    } else {
        a.iter().copied().collect()
    };
    matrix(rows, cols, HostStorage { data })
}

/// A backend asking for its operands' storage: its name and where it computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Here {
    /// The backend's name, for errors.
    pub backend: &'static str,
    /// Where it computes.
    pub place: Place,
}

impl Here {
    fn check(&self, op: &'static str, what: &'static str, found: Place) -> Result<()> {
        if found != self.place {
            return Err(Error::WrongPlace {
                op,
                what,
                found,
                backend: self.backend,
                expected: self.place,
            });
        }
        Ok(())
    }

    fn foreign(&self, op: &'static str, what: &'static str) -> Error {
        Error::invalid(
            op,
            format!(
                "{what} is stored in {} in a form backend '{}' cannot read",
                self.place, self.backend
            ),
        )
    }

    fn downcast<'a, S: Storage>(
        &self,
        op: &'static str,
        what: &'static str,
        s: &'a dyn Storage,
    ) -> Result<&'a S> {
        self.check(op, what, s.place())?;
        any(s)
            .downcast_ref::<S>()
            .ok_or_else(|| self.foreign(op, what))
    }

    fn downcast_mut<'a, S: Storage>(
        &self,
        op: &'static str,
        what: &'static str,
        s: &'a mut dyn Storage,
    ) -> Result<&'a mut S> {
        self.check(op, what, s.place())?;
        any_mut(s)
            .downcast_mut::<S>()
            .ok_or_else(|| self.foreign(op, what))
    }

    /// The storage of operand `what` of `op`.
    ///
    /// # Errors
    /// [`Error::WrongPlace`] when `m` lives elsewhere; [`Error::InvalidArgument`] when
    /// it lives here but in another backend's storage type.
    pub fn matrix<'a, S: Storage, T>(
        &self,
        op: &'static str,
        what: &'static str,
        m: &'a Matrix<T>,
    ) -> Result<&'a S> {
        self.downcast(op, what, array::storage_of(m))
    }

    /// As [`Here::matrix`], for an operand the operation writes.
    ///
    /// # Errors
    /// As [`Here::matrix`].
    pub fn matrix_mut<'a, S: Storage, T>(
        &self,
        op: &'static str,
        what: &'static str,
        m: &'a mut Matrix<T>,
    ) -> Result<&'a mut S> {
        self.downcast_mut(op, what, array::storage_of_mut(m))
    }

    /// The storage of an index operand.
    ///
    /// # Errors
    /// As [`Here::matrix`].
    pub fn indices<'a, S: Storage>(
        &self,
        op: &'static str,
        what: &'static str,
        i: &'a Indices,
    ) -> Result<&'a S> {
        self.downcast(op, what, array::index_storage(i))
    }

    /// As [`Here::indices`], for indices the operation writes.
    ///
    /// # Errors
    /// As [`Here::matrix`].
    pub fn indices_mut<'a, S: Storage>(
        &self,
        op: &'static str,
        what: &'static str,
        i: &'a mut Indices,
    ) -> Result<&'a mut S> {
        self.downcast_mut(op, what, array::index_storage_mut(i))
    }

    /// The operands of a host solve with a Cholesky factor: B's number of right-hand
    /// sides and L as a view, once B's shape is checked against L. B's entries are not
    /// looked at (NaN or ±Inf in a column of B gives the same in that column of X).
    ///
    /// # Errors
    /// As [`check::solve_dims`] and [`Here::matrix`].
    pub fn solve_inputs<'a, T: Element>(
        &self,
        l: &'a CholeskyFactor<T>,
        b: &Matrix<T>,
    ) -> Result<(usize, ArrayView2<'a, T>)> {
        let nrhs = check::solve_dims(l.order(), b.dim())?;
        let op = "cholesky_solve";
        self.host_view(op, "B", b)?;
        Ok((nrhs, self.host_view(op, "L", l.l())?))
    }

    /// A host operand as a view (host backends).
    ///
    /// # Errors
    /// As [`Here::matrix`].
    pub fn host_view<'a, T: Element>(
        &self,
        op: &'static str,
        what: &'static str,
        m: &'a Matrix<T>,
    ) -> Result<ArrayView2<'a, T>> {
        let s: &HostStorage<T> = self.matrix(op, what, m)?;
        Ok(ArrayView2::from_shape(m.dim(), &s.data).expect("host storage holds rows × cols"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[derive(Debug)]
    struct Elsewhere;
    impl Storage for Elsewhere {
        fn place(&self) -> Place {
            Place::Cuda {
                device: 3,
                runtime: 7,
            }
        }
    }

    const HOST: Here = Here {
        backend: "cpu",
        place: Place::Host,
    };

    #[test]
    fn an_array_from_elsewhere_is_an_error_naming_both_places() {
        let m: Matrix<f32> = matrix(2, 2, Elsewhere);
        let e = HOST.host_view("gemm", "A", &m).unwrap_err();
        assert!(
            matches!(
                e,
                Error::WrongPlace {
                    op: "gemm",
                    what: "A",
                    backend: "cpu",
                    expected: Place::Host,
                    found: Place::Cuda { device: 3, .. }
                }
            ),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(
            text.contains("CUDA device 3") && text.contains("host memory"),
            "{text}"
        );
    }

    #[test]
    fn storage_of_another_type_in_the_same_place_is_an_error() {
        #[derive(Debug)]
        struct Other;
        impl Storage for Other {
            fn place(&self) -> Place {
                Place::Host
            }
        }
        let m: Matrix<f64> = matrix(1, 1, Other);
        let e = HOST.host_view("sum", "A", &m).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { op: "sum", .. }),
            "{e:?}"
        );
    }

    #[test]
    fn host_matrices_keep_their_logical_order() {
        let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let m = host_matrix(a.t().to_owned());
        assert_eq!(m.dim(), (3, 2));
        assert_eq!(HOST.host_view("t", "A", &m).unwrap(), a.t());
        let m = host_matrix(a.reversed_axes().as_standard_layout().into_owned());
        assert_eq!(m.place(), Place::Host);
    }
}
