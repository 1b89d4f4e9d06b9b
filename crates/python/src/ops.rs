//! Products, transposes and reductions.

use ndarray::{Array1, Axis};
use ndgpu::{ArgOp, Matrix, ReduceOp};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use crate::array::{Elem, Operand, Typed};
use crate::backend::Backend;
use crate::operate::{operate, In, Out};

/// Calls `$body::<f32>` or `$body::<f64>` on the operands' typed form.
macro_rules! dispatch {
    ($body:ident($py:expr, $b:expr, [$($op:expr),+] $(, $arg:expr)*)) => {
        match $crate::array::typed(&[$(&$op),+])? {
            $crate::array::Args::F32(v) => $body::<f32>($py, $b, v $(, $arg)*),
            $crate::array::Args::F64(v) => $body::<f64>($py, $b, v $(, $arg)*),
        }
    };
}
pub(crate) use dispatch;

/// Defines, for each `fn name(operands) |ops| host, dev;`, the function
/// `name(backend, operands)` of an operation whose result is one matrix where its
/// operands are: `host` (an expression of the backend's `ops` and the operands as host
/// views) gives a host array, `dev` (of resident matrices) a resident one.
macro_rules! matrix_ops {
    ($($(#[$doc:meta])* fn $name:ident($($x:ident),+) |$ops:ident| $host:expr, $dev:expr;)+) => {$(
        $(#[$doc])*
        #[pyo3::pyfunction]
        fn $name(
            py: pyo3::Python<'_>,
            backend: pyo3::Py<$crate::backend::Backend>,
            $($x: $crate::array::Operand<'_>),+
        ) -> pyo3::PyResult<pyo3::PyObject> {
            fn typed_op<T: $crate::array::Elem>(
                py: pyo3::Python<'_>,
                backend: &pyo3::Py<$crate::backend::Backend>,
                v: Vec<$crate::array::Typed<'_, T>>,
            ) -> pyo3::PyResult<pyo3::PyObject> {
                use $crate::operate::{operate, In, Out};
                operate(py, backend, v, |$ops, operands| match operands {
                    In::Host([$($x),+]) => $host.map(Out::Host),
                    In::Dev([$($x),+]) => $dev.map(Out::Dev),
                })?
                .into_py(py, backend)
            }
            $crate::ops::dispatch!(typed_op(py, &backend, [$($x),+]))
        }
    )+};
}
pub(crate) use matrix_ops;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, matmul, gram, transpose, reduce, dot)
}

matrix_ops! {
    /// A·B of 2-D operands.
    fn matmul(a, b) |ops| ops.matmul(a, b), ops.matmul_dev(a, b);
    /// M·Mᵀ.
    fn gram(a) |ops| ops.gram(a), ops.gram_dev(a);
    /// Aᵀ, materialized.
    fn transpose(a) |ops| ops.transpose(a), ops.transpose_dev(a);
}

/// What a reduction gives.
enum Reduced<T> {
    Scalar(T),
    Index(usize),
    Values(Array1<T>),
    Indices(Array1<usize>),
    Dev(Matrix<T>),
}

#[derive(Clone, Copy)]
enum Which {
    Value(ReduceOp),
    Arg(ArgOp),
}

fn which(op: &str) -> PyResult<Which> {
    Ok(match op {
        "sum" => Which::Value(ReduceOp::Sum),
        "sumsq" => Which::Value(ReduceOp::SumSq),
        "min" => Which::Value(ReduceOp::Min),
        "max" => Which::Value(ReduceOp::Max),
        "argmin" => Which::Arg(ArgOp::ArgMin),
        "argmax" => Which::Arg(ArgOp::ArgMax),
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown reduction '{op}' (sum, sumsq, min, max, argmin, argmax)"
            )))
        }
    })
}

fn indices_py(py: Python<'_>, i: Array1<usize>) -> PyResult<PyObject> {
    i.mapv(|x| x as i64).into_pyarray(py).into_py_any(py)
}

fn reduce_t<T: Elem>(
    py: Python<'_>,
    b: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
    w: Which,
    axis: Option<usize>,
) -> PyResult<PyObject> {
    let r = operate(py, b, v, |b, x| {
        Ok(match (x, w, axis.map(Axis)) {
            (In::Host([a]), Which::Value(op), None) => Reduced::Scalar(b.reduce(op, a)?),
            (In::Host([a]), Which::Value(op), Some(ax)) => {
                Reduced::Values(b.reduce_axis(op, a, ax)?)
            }
            (In::Host([a]), Which::Arg(op), None) => Reduced::Index(b.arg_reduce(op, a)?),
            (In::Host([a]), Which::Arg(op), Some(ax)) => {
                Reduced::Indices(b.arg_reduce_axis(op, a, ax)?)
            }
            (In::Dev([a]), Which::Value(op), None) => Reduced::Scalar(b.reduce_dev(op, a)?),
            (In::Dev([a]), Which::Value(op), Some(ax)) => {
                Reduced::Dev(b.reduce_axis_dev(op, a, ax)?)
            }
            (In::Dev([a]), Which::Arg(op), None) => Reduced::Index(b.arg_reduce_dev(op, a)?),
            (In::Dev([a]), Which::Arg(op), Some(ax)) => {
                let i = b.arg_reduce_axis_dev(op, a, ax)?;
                Reduced::Indices(b.download_indices(&i)?)
            }
        })
    })?;
    match r {
        Reduced::Scalar(x) => x.as_f64().into_py_any(py),
        Reduced::Index(i) => i.into_py_any(py),
        Reduced::Values(a) => PyArray1::from_owned_array(py, a).into_py_any(py),
        Reduced::Indices(i) => indices_py(py, i),
        Reduced::Dev(m) => Out::Dev(m).into_py(py, b),
    }
}

/// A reduction (`sum`, `sumsq`, `min`, `max`, `argmin`, `argmax`) of the whole array
/// (`axis=None`: a Python number, an argmin/argmax index into the C-ordered array) or
/// along axis 0 or 1 (host: a 1-D array; resident: a resident 1×n or n×1 array, except
/// argmin/argmax, whose indices come to the host as int64).
#[pyfunction]
#[pyo3(signature = (backend, op, a, axis = None))]
fn reduce(
    py: Python<'_>,
    backend: Py<Backend>,
    op: &str,
    a: Operand<'_>,
    axis: Option<usize>,
) -> PyResult<PyObject> {
    let w = which(op)?;
    if axis.is_some_and(|x| x > 1) {
        return Err(PyValueError::new_err(format!(
            "axis {} is out of bounds for a 2-D array",
            axis.unwrap_or_default()
        )));
    }
    dispatch!(reduce_t(py, &backend, [a], w, axis))
}

fn dot_t<T: Elem>(py: Python<'_>, b: &Py<Backend>, v: Vec<Typed<'_, T>>) -> PyResult<PyObject> {
    let r = operate(py, b, v, |b, x| match x {
        In::Host([x, y]) => b.dot(x.row(0), y.row(0)),
        In::Dev([x, y]) => b.dot_dev(x, y),
    })?;
    r.as_f64().into_py_any(py)
}

/// Σ xᵢ·yᵢ of two 1×n operands (the same shape when resident).
#[pyfunction]
fn dot(py: Python<'_>, backend: Py<Backend>, x: Operand<'_>, y: Operand<'_>) -> PyResult<PyObject> {
    dispatch!(dot_t(py, &backend, [x, y]))
}
