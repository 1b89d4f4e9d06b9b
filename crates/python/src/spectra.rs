//! The spectra (`eigh`, `svd`) and PCA.

use ndarray::Array1;
use ndgpu::{Matrix, Ops, Pca, PcaFit, PcaSolver};
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::array::{Elem, Operand, Typed};
use crate::backend::Backend;
use crate::operate::{operate, In, Out};
use crate::ops::dispatch;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, spectra, pca_fit, pca_transform)
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

/// What [`spectra`] computes.
#[derive(Clone, Copy)]
enum What {
    Eigh { vectors: bool },
    Svd { full: Option<bool> },
}

impl What {
    fn parse(s: &str) -> PyResult<What> {
        Ok(match s {
            "eigh" => What::Eigh { vectors: true },
            "eigvalsh" => What::Eigh { vectors: false },
            "svd" => What::Svd { full: Some(false) },
            "svd_full" => What::Svd { full: Some(true) },
            "svdvals" => What::Svd { full: None },
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown spectrum '{s}' (eigh, eigvalsh, svd, svd_full, svdvals)"
                )))
            }
        })
    }
}

/// The values, and the matrices asked for (V, or U and Vt).
type Parts<T> = (Values<T>, Vec<Out<T>>);

/// The parts where the operand is: a host operand is uploaded, computed on, and its
/// parts downloaded, except for the complete SVD, which the core forms on the host.
fn parts<T: Elem>(b: &dyn Ops<T>, x: In<'_, T, 1>, what: What) -> ndgpu::Result<Parts<T>> {
    let host = matches!(x, In::Host(_));
    if let What::Svd { full: Some(true) } = what {
        let (u, s, vt) = match &x {
            In::Host([a]) => b.svd(a.view(), true)?,
            In::Dev([a]) => b.svd(b.download(a)?.view(), true)?,
        };
        let parts = (Values::Host(s), vec![Out::Host(u), Out::Host(vt)]);
        return if host {
            Ok(parts)
        } else {
            moved(b, parts, false)
        };
    }
    let uploaded;
    let a = match x {
        In::Host([a]) => {
            uploaded = b.upload(a)?;
            &uploaded
        }
        In::Dev([a]) => a,
    };
    let parts = match what {
        What::Eigh { vectors: true } => {
            let (w, v) = b.eigh_dev(a)?;
            (Values::Dev(w), vec![Out::Dev(v)])
        }
        What::Eigh { vectors: false } => (Values::Dev(b.eigvalsh_dev(a)?), vec![]),
        What::Svd { full: None } => (Values::Dev(b.svdvals_dev(a)?), vec![]),
        What::Svd { .. } => {
            let (u, s, vt) = b.svd_dev(a)?;
            (Values::Dev(s), vec![Out::Dev(u), Out::Dev(vt)])
        }
    };
    if host {
        moved(b, parts, true)
    } else {
        Ok(parts)
    }
}

/// `p` downloaded (`to_host`) or uploaded.
fn moved<T: Elem>(b: &dyn Ops<T>, (v, mats): Parts<T>, to_host: bool) -> ndgpu::Result<Parts<T>> {
    let v = match (v, to_host) {
        (Values::Dev(m), true) => Values::Host(b.download(&m)?.column(0).to_owned()),
        (Values::Host(h), false) => Values::Dev(b.upload(h.view().insert_axis(ndarray::Axis(1)))?),
        (v, _) => v,
    };
    let mats = mats
        .into_iter()
        .map(|m| match (m, to_host) {
            (Out::Dev(m), true) => b.download(&m).map(Out::Host),
            (Out::Host(h), false) => b.upload(h.view()).map(Out::Dev),
            (m, _) => Ok(m),
        })
        .collect::<ndgpu::Result<_>>()?;
    Ok((v, mats))
}

type Args<'a, T> = Vec<Typed<'a, T>>;

/// What a function gives Python.
type Obj = PyResult<PyObject>;

fn spectra_t<T: Elem>(py: Python, b: &Py<Backend>, v: Args<T>, w: What) -> PyResult<PyObject> {
    let (values, mut mats) = operate(py, b, v, |b, x| parts(b, x, w))?;
    let values = values.into_py(py, b)?;
    if mats.is_empty() {
        return Ok(values);
    }
    // (w, V) or (U, s, Vt): the values before the last matrix.
    let last = mats.pop().map(|m| m.into_py(py, b)).transpose()?;
    let mut items: Vec<PyObject> = mats
        .into_iter()
        .map(|m| m.into_py(py, b))
        .collect::<PyResult<_>>()?;
    items.push(values);
    items.extend(last);
    PyTuple::new(py, items)?.into_py_any(py)
}

/// `what`: `eigh` (eigenvalues ascending and eigenvectors as columns, of the lower
/// triangle), `eigvalsh`, `svd` (reduced U, S, Vh), `svd_full` (complete), `svdvals`
/// (descending). Host operands give NumPy arrays (the values 1-D); resident ones give
/// resident arrays (the values k×1).
#[pyfunction]
fn spectra(py: Python<'_>, backend: Py<Backend>, a: Operand<'_>, what: &str) -> PyResult<PyObject> {
    let what = What::parse(what)?;
    dispatch!(spectra_t(py, &backend, [a], what))
}

fn pca_fit_t<T: Elem>(py: Python, b: &Py<Backend>, v: Args<T>, config: Pca) -> PyResult<PyObject> {
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

fn pca_transform_t<T: Elem>(py: Python, b: &Py<Backend>, v: Args<T>) -> PyResult<PyObject> {
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
fn pca_transform(py: Python, b: Py<Backend>, x: Operand, mean: Operand, c: Operand) -> Obj {
    dispatch!(pca_transform_t(py, &b, [x, mean, c]))
}
