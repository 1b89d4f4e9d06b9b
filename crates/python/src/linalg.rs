//! Factorizations and solves (`ndgpu.linalg`).

use ndgpu::{QrMode, Trans, Triangular};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::IntoPyObjectExt;

use crate::array::{Elem, Operand, Typed};
use crate::backend::Backend;
use crate::operate::{operate, In, Out};
use crate::ops::{dispatch, matrix_ops};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        cholesky,
        solve,
        lu,
        qr,
        lstsq,
        inv,
        det,
        slogdet,
        solve_triangular
    )
}

fn tuple<T: Elem>(py: Python<'_>, b: &Py<Backend>, outs: Vec<Out<T>>) -> PyResult<PyObject> {
    let items = outs
        .into_iter()
        .map(|o| o.into_py(py, b))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, items)?.into_py_any(py)
}

matrix_ops! {
    /// The lower factor L of A = L·Lᵀ (only A's lower triangle is read).
    fn cholesky(a) |ops| ops.cholesky(a), ops.cholesky_dev(a).map(|f| f.into_l());
    /// The least-squares X minimising ‖A·X − B‖ for A of full column rank (rows ≥ columns).
    fn lstsq(a, b) |ops| ops.lstsq(a, b), ops.lstsq_dev(a, b);
    /// A⁻¹.
    fn inv(a) |ops| ops.inv(a), ops.inv_dev(a);
}

fn solve_t<T: Elem>(
    py: Python<'_>,
    b: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
    pos: bool,
) -> PyResult<PyObject> {
    operate(py, b, v, |b, x| match x {
        In::Host([a, r]) if pos => {
            let l = b.cholesky(a)?;
            b.cholesky_solve(l.view(), r).map(Out::Host)
        }
        In::Host([a, r]) => b.solve(a, r).map(Out::Host),
        In::Dev([a, r]) if pos => {
            let f = b.cholesky_dev(a)?;
            b.cholesky_solve_dev(&f, r).map(Out::Dev)
        }
        In::Dev([a, r]) => b.solve_dev(a, r).map(Out::Dev),
    })?
    .into_py(py, b)
}

/// X with A·X = B: through LU, or through Cholesky when `pos` (A symmetric positive
/// definite; its lower triangle is read).
#[pyfunction]
#[pyo3(signature = (backend, a, b, pos = false))]
fn solve(
    py: Python<'_>,
    backend: Py<Backend>,
    a: Operand<'_>,
    b: Operand<'_>,
    pos: bool,
) -> PyResult<PyObject> {
    dispatch!(solve_t(py, &backend, [a, b], pos))
}

fn lu_t<T: Elem>(py: Python<'_>, b: &Py<Backend>, v: Vec<Typed<'_, T>>) -> PyResult<PyObject> {
    let outs = operate(py, b, v, |b, x| {
        Ok(match x {
            In::Host([a]) => {
                let (p, l, u) = b.lu(a)?;
                vec![Out::Host(p), Out::Host(l), Out::Host(u)]
            }
            In::Dev([a]) => {
                let f = b.lu_dev(a)?;
                let (p, l, u) = b.lu_unpack(&f)?;
                let up = |m: ndarray::Array2<T>| b.upload(m.view()).map(Out::Dev);
                vec![up(p)?, up(l)?, up(u)?]
            }
        })
    })?;
    tuple(py, b, outs)
}

/// (P, L, U) with A = P·L·U (as `scipy.linalg.lu`). Resident: factored where A lives,
/// unpacked on the host, the three uploaded.
#[pyfunction]
fn lu(py: Python<'_>, backend: Py<Backend>, a: Operand<'_>) -> PyResult<PyObject> {
    dispatch!(lu_t(py, &backend, [a]))
}

fn qr_t<T: Elem>(
    py: Python<'_>,
    b: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
    mode: QrMode,
) -> PyResult<PyObject> {
    let outs = operate(py, b, v, |b, x| {
        Ok(match x {
            In::Host([a]) => {
                let (q, r) = b.qr(a, mode)?;
                vec![Out::Host(q), Out::Host(r)]
            }
            In::Dev([a]) => {
                let (q, r) = b.qr(b.download(a)?.view(), mode)?;
                vec![Out::Dev(b.upload(q.view())?), Out::Dev(b.upload(r.view())?)]
            }
        })
    })?;
    tuple(py, b, outs)
}

/// (Q, R) with A = Q·R, `complete` or reduced (as `numpy.linalg.qr`). Resident: through
/// the host (the core forms Q on the host only).
#[pyfunction]
#[pyo3(signature = (backend, a, complete = false))]
fn qr(py: Python<'_>, backend: Py<Backend>, a: Operand<'_>, complete: bool) -> PyResult<PyObject> {
    let mode = if complete {
        QrMode::Complete
    } else {
        QrMode::Reduced
    };
    dispatch!(qr_t(py, &backend, [a], mode))
}

fn det_t<T: Elem>(py: Python<'_>, b: &Py<Backend>, v: Vec<Typed<'_, T>>) -> PyResult<PyObject> {
    let d = operate(py, b, v, |b, x| match x {
        In::Host([a]) => b.det(a),
        In::Dev([a]) => b.lu_det(&b.lu_dev(a)?),
    })?;
    d.as_f64().into_py_any(py)
}

/// det A, a Python float (in the operands' dtype's range).
#[pyfunction]
fn det(py: Python<'_>, backend: Py<Backend>, a: Operand<'_>) -> PyResult<PyObject> {
    dispatch!(det_t(py, &backend, [a]))
}

fn slogdet_t<T: Elem>(py: Python<'_>, b: &Py<Backend>, v: Vec<Typed<'_, T>>) -> PyResult<PyObject> {
    let d = operate(py, b, v, |b, x| match x {
        In::Host([a]) => b.slogdet(a),
        In::Dev([a]) => b.lu_slogdet(&b.lu_dev(a)?),
    })?;
    d.into_py_any(py)
}

/// (sign, log|det A|), in float64.
#[pyfunction]
fn slogdet(py: Python<'_>, backend: Py<Backend>, a: Operand<'_>) -> PyResult<PyObject> {
    dispatch!(slogdet_t(py, &backend, [a]))
}

fn trsm_t<T: Elem>(
    py: Python<'_>,
    b: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
    tri: Triangular,
) -> PyResult<PyObject> {
    operate(py, b, v, |b, x| match x {
        In::Host([a, r]) => b.solve_triangular(a, r, tri).map(Out::Host),
        In::Dev([a, r]) => {
            let mut x = b.copy(r)?;
            b.solve_triangular_in_place_dev(a, tri, &mut x)?;
            Ok(Out::Dev(x))
        }
    })?
    .into_py(py, b)
}

/// X with op(T)·X = B, T the lower or upper triangle of A (`trans`: 0/'N', 1/'T', 2/'C'
/// as SciPy; for real A 'C' is 'T'), a unit diagonal assumed when `unit_diagonal`.
#[pyfunction]
#[pyo3(signature = (backend, a, b, lower = false, trans = 0, unit_diagonal = false))]
fn solve_triangular(
    py: Python<'_>,
    backend: Py<Backend>,
    a: Operand<'_>,
    b: Operand<'_>,
    lower: bool,
    trans: u8,
    unit_diagonal: bool,
) -> PyResult<PyObject> {
    let t = match trans {
        0 => Trans::No,
        1 | 2 => Trans::Yes,
        _ => {
            return Err(PyValueError::new_err(
                "trans must be 0, 1 or 2 ('N', 'T' or 'C')",
            ))
        }
    };
    let tri = if lower {
        Triangular::lower()
    } else {
        Triangular::upper()
    }
    .trans(t)
    .unit(unit_diagonal);
    dispatch!(trsm_t(py, &backend, [a, b], tri))
}
