//! The resident sets of LU, its solve, QR, least squares and the triangular solve: what
//! each run calls, what is reset between runs, and the result read back for the check.

use ndarray::Array2;
use ndgpu_core::{Element, Error, FactorLayout, Matrix, Ops, Result, Trans, Triangular};
use ndgpu_core::{LuFactor, QrFactor};

use crate::check::Output;
use crate::data::Inputs;

use super::IntoX;

/// One set of buffers of a factorization or a solve.
pub(super) enum Lin<T> {
    /// Factored in place by each run (`getrf`): `a` a fresh copy of the pristine A, made
    /// outside the timed region; `f` the last run's factor.
    Lu {
        a: Option<Matrix<T>>,
        f: Option<LuFactor<T>>,
    },
    /// Factored in place by each run (`geqrf`), as [`Lin::Lu`].
    Qr {
        a: Option<Matrix<T>>,
        f: Option<QrFactor<T>>,
    },
    /// A solve with the factor made at the upload, into a new X.
    LuSolve(IntoX<LuFactor<T>, T>),
    /// Least squares into a new x (A is kept: each run factors a copy of it).
    Lstsq(IntoX<Matrix<T>, T>),
    /// B solved in place with A's lower triangle, reset from the pristine B before each
    /// run.
    Trsm { a: Matrix<T>, b: Matrix<T> },
}

fn lost() -> Error {
    Error::invalid("shootout", "the matrix was lost")
}

/// A packed factor read back row-major, whatever its layout.
fn row_major<T: Element>(packed: Array2<T>, layout: FactorLayout) -> Array2<T> {
    match layout {
        FactorLayout::RowMajor => packed,
        FactorLayout::ColMajor => packed.reversed_axes().as_standard_layout().into_owned(),
    }
}

impl<T: Element> Lin<T> {
    /// Uploads `inputs`, and into `pristine`, if it is empty, what the runs reset from
    /// (A of LU and QR, B of the triangular solve). LU's solve factors A here, outside
    /// the timed region.
    ///
    /// # Errors
    /// Out of memory; device errors; the inputs of another op.
    pub(super) fn upload(
        ops: &dyn Ops<T>,
        inputs: &Inputs<T>,
        pristine: &mut Option<Matrix<T>>,
    ) -> Result<Self> {
        let mut keep = |m: &Array2<T>| -> Result<()> {
            if pristine.is_none() {
                *pristine = Some(ops.upload(m.view())?);
            }
            Ok(())
        };
        Ok(match inputs {
            Inputs::Lu { a } => {
                keep(a)?;
                Lin::Lu {
                    a: Some(ops.upload(a.view())?),
                    f: None,
                }
            }
            Inputs::Qr { a } => {
                keep(a)?;
                Lin::Qr {
                    a: Some(ops.upload(a.view())?),
                    f: None,
                }
            }
            Inputs::LuSolve { a, b } => {
                let f = ops.lu_in_place_dev(ops.upload(a.view())?)?;
                Lin::LuSolve(IntoX::upload(ops, f, b)?)
            }
            Inputs::Lstsq { a, b } => Lin::Lstsq(IntoX::upload(ops, ops.upload(a.view())?, b)?),
            Inputs::Trsm { a, b } => {
                keep(b)?;
                Lin::Trsm {
                    a: ops.upload(a.view())?,
                    b: ops.upload(b.view())?,
                }
            }
            _ => {
                return Err(Error::invalid(
                    "shootout",
                    "not the inputs of a factorization or a solve",
                ))
            }
        })
    }

    /// Whether each run must be preceded by [`Lin::prepare`] (it works in place).
    pub(super) fn in_place(&self) -> bool {
        matches!(self, Lin::Lu { .. } | Lin::Qr { .. } | Lin::Trsm { .. })
    }

    /// Resets the set from `pristine`, outside the timed region: the last factor dropped
    /// and a fresh copy of A made to factor, or B restored.
    ///
    /// # Errors
    /// Out of memory; device errors.
    pub(super) fn prepare(&mut self, ops: &dyn Ops<T>, pristine: &Matrix<T>) -> Result<()> {
        match self {
            Lin::Lu { a, f } => {
                *f = None;
                if a.is_none() {
                    *a = Some(ops.copy(pristine)?);
                }
            }
            Lin::Qr { a, f } => {
                *f = None;
                if a.is_none() {
                    *a = Some(ops.copy(pristine)?);
                }
            }
            Lin::Trsm { b, .. } => ops.copy_into(pristine, b)?,
            Lin::LuSolve(_) | Lin::Lstsq(_) => {}
        }
        Ok(())
    }

    /// Clears the outputs (before the checked run, so that a variant which writes
    /// nothing cannot pass with an earlier result).
    pub(super) fn clear(&mut self) {
        match self {
            Lin::LuSolve(IntoX { x, .. }) | Lin::Lstsq(IntoX { x, .. }) => *x = None,
            Lin::Lu { .. } | Lin::Qr { .. } | Lin::Trsm { .. } => {}
        }
    }

    /// One run.
    ///
    /// # Errors
    /// Those of the backend.
    pub(super) fn run(&mut self, ops: &dyn Ops<T>) -> Result<()> {
        match self {
            Lin::Lu { a, f } => *f = Some(ops.lu_in_place_dev(a.take().ok_or_else(lost)?)?),
            Lin::Qr { a, f } => *f = Some(ops.qr_in_place_dev(a.take().ok_or_else(lost)?)?),
            Lin::LuSolve(s) => s.x = Some(ops.lu_solve_dev(&s.by, Trans::No, &s.b)?),
            Lin::Lstsq(s) => s.x = Some(ops.lstsq_dev(&s.by, &s.b)?),
            Lin::Trsm { a, b } => ops.solve_triangular_in_place_dev(a, Triangular::lower(), b)?,
        }
        Ok(())
    }

    /// The result of the last run, on the host: LU's packed factor and row swaps, QR's
    /// reduced Q (the backend's factor applied to the first columns of the identity) and
    /// R, or the solution.
    ///
    /// # Errors
    /// Device errors; a run that left no result.
    pub(super) fn output(&self, ops: &dyn Ops<T>) -> Result<Output<T>> {
        let none = || Error::invalid("shootout", "the run returned no result");
        Ok(match self {
            Lin::Lu { f, .. } => {
                let f = f.as_ref().ok_or_else(none)?;
                Output::Lu {
                    packed: row_major(ops.download(f.packed())?, f.layout()),
                    pivots: ops.download_indices(f.pivots())?.to_vec(),
                }
            }
            Lin::Qr { f, .. } => {
                let f = f.as_ref().ok_or_else(none)?;
                let (m, n) = f.dim();
                let k = m.min(n);
                let eye = Array2::from_shape_fn((m, k), |(i, j)| match i == j {
                    true => T::one(),
                    false => T::zero(),
                });
                let mut q = ops.upload(eye.view())?;
                ops.qr_apply_in_place_dev(f, Trans::No, &mut q)?;
                let packed = row_major(ops.download(f.packed())?, f.layout());
                let r = Array2::from_shape_fn((k, n), |(i, j)| match j >= i {
                    true => packed[[i, j]],
                    false => T::zero(),
                });
                Output::Qr {
                    q: ops.download(&q)?,
                    r,
                }
            }
            Lin::LuSolve(IntoX { x, .. }) | Lin::Lstsq(IntoX { x, .. }) => {
                Output::Matrix(ops.download(x.as_ref().ok_or_else(none)?)?)
            }
            Lin::Trsm { b, .. } => Output::Matrix(ops.download(b)?),
        })
    }
}
