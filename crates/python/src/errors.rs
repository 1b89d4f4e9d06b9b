//! ndgpu's errors as the exceptions Python users expect.

use ndgpu::Error;
use pyo3::exceptions::{
    PyMemoryError, PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The exception for an ndgpu error:
/// - bad input (shapes, empty input, NaN or ±Inf, an argument out of range, an unknown
///   backend or variant, an array of another backend) → `ValueError`;
/// - a singular matrix, one not positive definite, one without full column rank →
///   `ndgpu.LinAlgError` (a `numpy.linalg.LinAlgError`) with `op`, `pivot` and `value`;
/// - out of device or host memory → `MemoryError`;
/// - a backend that cannot run here, a driver or library failure → `RuntimeError`
///   with the reason; an operation the backend lacks → `NotImplementedError`.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::ShapeMismatch { .. }
        | Error::Empty { .. }
        | Error::NotSquare { .. }
        | Error::NonFinite { .. }
        | Error::InvalidArgument { .. }
        | Error::UnknownBackend { .. }
        | Error::UnknownVariant { .. }
        | Error::WrongPlace { .. } => PyValueError::new_err(msg),
        Error::NotPositiveDefinite { pivot, value } => {
            linalg_error(msg, "cholesky", Some(pivot), Some(value))
        }
        Error::Singular { op, pivot } => linalg_error(msg, op, Some(pivot), None),
        Error::RankDeficient {
            op, column, value, ..
        } => linalg_error(msg, op, Some(column), Some(value)),
        Error::OutOfMemory { .. } | Error::HostOutOfMemory { .. } => PyMemoryError::new_err(msg),
        Error::Unsupported { .. } => PyNotImplementedError::new_err(msg),
        _ => PyRuntimeError::new_err(msg),
    }
}

/// `ndgpu.LinAlgError(msg, op=, pivot=, value=)`, defined in Python as a subclass of
/// `numpy.linalg.LinAlgError`.
fn linalg_error(msg: String, op: &str, pivot: Option<usize>, value: Option<f64>) -> PyErr {
    Python::with_gil(|py| {
        let made = (|| -> PyResult<PyErr> {
            let cls = py.import("ndgpu._errors")?.getattr("LinAlgError")?;
            let kw = PyDict::new(py);
            kw.set_item("op", op)?;
            kw.set_item("pivot", pivot)?;
            kw.set_item("value", value)?;
            Ok(PyErr::from_value(cls.call((msg.clone(),), Some(&kw))?))
        })();
        made.unwrap_or_else(|_| PyRuntimeError::new_err(msg))
    })
}

/// A `TypeError` for operands the compiled functions do not take.
pub fn type_error(msg: impl Into<String>) -> PyErr {
    PyTypeError::new_err(msg.into())
}

/// Maps an ndgpu result.
pub trait IntoPy<T> {
    /// The result, or its exception.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for ndgpu::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
