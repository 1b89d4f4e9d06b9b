//! The spectra (`eigh`, `svd`) and PCA.

use ndarray::{Array1, Array2};
use ndgpu::{Matrix, Pca, PcaFit, PcaSolver};
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::array::{Elem, Operand, Typed};
use crate::backend::Backend;
use crate::operate::{operate, In, Out};
use crate::ops::dispatch;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, eigh, svd, pca_fit, pca_transform)
}

/// Values (a 1-D host array, or a resident k×1 matrix) and matrices where the operand
/// was.
enum Values<T> {
    Host(Array1<T>),
    Dev(Matrix<T>),
}

impl<T: Elem> Values<T> {
    fn into_py(self, py: Python<'_>, b: &Py<Backend>) -> PyResult<PyObject> {
        match self {
            Values::Host(v) => PyArray1::from_owned_array(py, v).into_py_any(py),
            Values::Dev(m) => Out::Dev(m).into_py(py, b),
        }
    }
}

fn eigh_t<T: Elem>(
    py: Python<'_>,
    b: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
    vectors: bool,
) -> PyResult<PyObject> {
    let (w, vecs) = operate(py, b, v, |b, x| {
        Ok(match (x, vectors) {
            (In::Host([a]), true) => {
                let (w, v) = b.eigh(a)?;
                (Values::Host(w), Some(Out::Host(v)))
            }
            (In::Host([a]), false) => (Values::Host(b.eigvalsh(a)?), None),
            (In::Dev([a]), true) => {
                let (w, v) = b.eigh_dev(a)?;
                (Values::Dev(w), Some(Out::Dev(v)))
            }
            (In::Dev([a]), false) => (Values::Dev(b.eigvalsh_dev(a)?), None),
        })
    })?;
    let w = w.into_py(py, b)?;
    match vecs {
        Some(v) => PyTuple::new(py, [w, v.into_py(py, b)?])?.into_py_any(py),
        None => Ok(w),
    }
}

/// The eigenvalues (ascending) of a symmetric matrix given by its lower triangle and,
/// when `vectors`, the tuple (eigenvalues, eigenvectors as columns).
#[pyfunction]
#[pyo3(signature = (backend, a, vectors = true))]
fn eigh(py: Python<'_>, backend: Py<Backend>, a: Operand<'_>, vectors: bool) -> PyResult<PyObject> {
    dispatch!(eigh_t(py, &backend, [a], vectors))
}

fn svd_t<T: Elem>(
    py: Python<'_>,
    b: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
    full: Option<bool>,
) -> PyResult<PyObject> {
    let (s, uv) = operate(py, b, v, |b, x| {
        Ok(match (x, full) {
            (In::Host([a]), Some(full)) => {
                let (u, s, vt) = b.svd(a, full)?;
                (Values::Host(s), Some((Out::Host(u), Out::Host(vt))))
            }
            (In::Host([a]), None) => (Values::Host(b.svdvals(a)?), None),
            (In::Dev([a]), Some(false)) => {
                let (u, s, vt) = b.svd_dev(a)?;
                (Values::Dev(s), Some((Out::Dev(u), Out::Dev(vt))))
            }
            // The complete factors are formed on the host (as the core does).
            (In::Dev([a]), Some(true)) => {
                let (u, s, vt) = b.svd(b.download(a)?.view(), true)?;
                let s = b.upload(s.view().insert_axis(ndarray::Axis(1)))?;
                let up = |m: Array2<T>| b.upload(m.view()).map(Out::Dev);
                (Values::Dev(s), Some((up(u)?, up(vt)?)))
            }
            (In::Dev([a]), None) => (Values::Dev(b.svdvals_dev(a)?), None),
        })
    })?;
    let s = s.into_py(py, b)?;
    match uv {
        Some((u, vt)) => {
            PyTuple::new(py, [u.into_py(py, b)?, s, vt.into_py(py, b)?])?.into_py_any(py)
        }
        None => Ok(s),
    }
}

/// The SVD: `full` None for the singular values alone (descending), else the tuple
/// (U, S, Vh), complete when `full` is true, reduced when false.
#[pyfunction]
#[pyo3(signature = (backend, a, full = None))]
fn svd(
    py: Python<'_>,
    backend: Py<Backend>,
    a: Operand<'_>,
    full: Option<bool>,
) -> PyResult<PyObject> {
    dispatch!(svd_t(py, &backend, [a], full))
}

fn pca_fit_t<T: Elem>(
    py: Python<'_>,
    b: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
    config: Pca,
) -> PyResult<PyObject> {
    let f: PcaFit<T> = operate(py, b, v, |b, x| match x {
        In::Host([x]) => config.fit(b, x),
        In::Dev([x]) => config.fit_dev(b, x),
    })?;
    let d = PyDict::new(py);
    d.set_item("components", PyArray2::from_owned_array(py, f.components))?;
    let one = |a: Array1<T>| PyArray1::from_owned_array(py, a);
    d.set_item("explained_variance", one(f.explained_variance))?;
    d.set_item("explained_variance_ratio", one(f.explained_variance_ratio))?;
    d.set_item("singular_values", one(f.singular_values))?;
    d.set_item("mean", one(f.mean))?;
    d.set_item("n_samples", f.n_samples)?;
    let solver = match f.solver {
        PcaSolver::CovarianceEigh => "covariance_eigh",
        PcaSolver::Svd => "full",
    };
    d.set_item("solver", solver)?;
    d.into_py_any(py)
}

/// Fits a PCA (scikit-learn's semantics) of the rows of `x` to `n_components` (all if
/// None). Returns a dict of host arrays: `components`, `explained_variance`,
/// `explained_variance_ratio`, `singular_values`, `mean`, and `n_samples`, `solver`
/// (`covariance_eigh` or `full`).
#[pyfunction]
#[pyo3(signature = (backend, x, n_components = None))]
fn pca_fit(
    py: Python<'_>,
    backend: Py<Backend>,
    x: Operand<'_>,
    n_components: Option<usize>,
) -> PyResult<PyObject> {
    dispatch!(pca_fit_t(py, &backend, [x], Pca { n_components }))
}

fn pca_transform_t<T: Elem>(
    py: Python<'_>,
    b: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
) -> PyResult<PyObject> {
    operate(py, b, v, |b, x| {
        let [x, mean, components] = match x {
            In::Host(x) => x.map(|m| m.to_owned()),
            In::Dev(x) => [b.download(x[0])?, b.download(x[1])?, b.download(x[2])?],
        };
        // Only the centring needs the mean and the product the components.
        let fit = PcaFit {
            components,
            explained_variance: Array1::zeros(0),
            explained_variance_ratio: Array1::zeros(0),
            singular_values: Array1::zeros(0),
            mean: mean.row(0).to_owned(),
            n_samples: 0,
            solver: PcaSolver::Svd,
        };
        fit.transform(b, x.view()).map(Out::Host)
    })?
    .into_py(py, b)
}

/// `(x − mean)·componentsᵀ` (`mean` 1×d, `components` k×d), a host array.
#[pyfunction]
fn pca_transform(
    py: Python<'_>,
    backend: Py<Backend>,
    x: Operand<'_>,
    mean: Operand<'_>,
    components: Operand<'_>,
) -> PyResult<PyObject> {
    dispatch!(pca_transform_t(py, &backend, [x, mean, components]))
}
