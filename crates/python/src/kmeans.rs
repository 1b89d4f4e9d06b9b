//! k-means (`ndgpu.cluster.KMeans` builds on these).

use ndgpu::{Init, KMeansConfig};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::IntoPyObjectExt;

use crate::array::{Elem, Operand, Typed};
use crate::backend::Backend;
use crate::operate::{operate, In, Out};
use crate::ops::dispatch;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, kmeans, predict)
}

fn labels_py(py: Python<'_>, l: ndarray::Array1<usize>) -> PyResult<PyObject> {
    numpy::IntoPyArray::into_pyarray(l.mapv(|x| x as i64), py).into_py_any(py)
}

/// A fit, before it becomes a dict.
struct Fit<T> {
    centroids: Out<T>,
    labels: ndarray::Array1<usize>,
    inertia: f64,
    iterations: usize,
    converged: bool,
    history: Vec<f64>,
    empty: Vec<usize>,
}

fn kmeans_t<T: Elem>(
    py: Python<'_>,
    b: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
    config: KMeansConfig,
) -> PyResult<PyObject> {
    let f = operate(py, b, v, move |b, x| {
        Ok(match x {
            In::Host([x]) => {
                let r = b.kmeans(x, &config)?;
                Fit {
                    centroids: Out::Host(r.centroids),
                    labels: r.labels,
                    inertia: r.inertia,
                    iterations: r.iterations,
                    converged: r.converged,
                    history: r.inertia_history,
                    empty: r.empty_clusters,
                }
            }
            In::Dev([x]) => {
                let r = b.kmeans_dev(x, &config)?;
                let labels = b.download_indices(&r.labels)?;
                let empty = ndgpu_core::kmeans::empty_clusters::<T>(&config, labels.view());
                Fit {
                    centroids: Out::Dev(r.centroids),
                    labels,
                    inertia: r.inertia,
                    iterations: r.iterations,
                    converged: r.converged,
                    history: r.inertia_history,
                    empty,
                }
            }
        })
    })?;
    let d = PyDict::new(py);
    d.set_item("centroids", f.centroids.into_py(py, b)?)?;
    d.set_item("labels", labels_py(py, f.labels)?)?;
    d.set_item("inertia", f.inertia)?;
    d.set_item("iterations", f.iterations)?;
    d.set_item("converged", f.converged)?;
    d.set_item("inertia_history", f.history)?;
    d.set_item("empty_clusters", f.empty)?;
    d.into_py_any(py)
}

/// Lloyd's k-means of the rows of `x`. `init`: `k-means++`, `random`, `k-means||`, or
/// `given` with `centers` (k×d, float64). `tol`: scikit-learn's (relative centroid
/// shift); `change_tol`: the fraction of points that may still change cluster.
/// Returns a dict: `centroids` (host or resident as `x`), `labels` (int64),
/// `inertia`, `iterations`, `converged`, `inertia_history`, `empty_clusters`.
#[pyfunction]
#[pyo3(signature = (backend, x, k, *, init = "k-means++", centers = None, n_init = 1,
    max_iter = 300, tol = 1e-4, change_tol = 0.0, seed = 0, sample_weight = None))]
#[allow(clippy::too_many_arguments)]
fn kmeans(
    py: Python<'_>,
    backend: Py<Backend>,
    x: Operand<'_>,
    k: usize,
    init: &str,
    centers: Option<PyReadonlyArray2<'_, f64>>,
    n_init: usize,
    max_iter: usize,
    tol: f64,
    change_tol: f64,
    seed: u64,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<PyObject> {
    let init = match (init, centers) {
        ("given", Some(c)) => Init::Given(c.as_array().to_owned()),
        ("k-means++", None) => Init::KMeansPlusPlus,
        ("random", None) => Init::Random,
        ("k-means||", None) => Init::kmeans_parallel(),
        _ => {
            return Err(PyValueError::new_err(format!(
                "init must be 'k-means++', 'random', 'k-means||', or 'given' with centers \
                 (got '{init}')"
            )))
        }
    };
    let mut config = KMeansConfig::new(k)
        .init(init)
        .n_init(n_init)
        .max_iter(max_iter)
        .tol(tol)
        .change_tol(change_tol)
        .seed(seed);
    if let Some(w) = sample_weight {
        config = config.sample_weight(w.as_array().to_owned());
    }
    dispatch!(kmeans_t(py, &backend, [x], config))
}

fn predict_t<T: Elem>(py: Python<'_>, b: &Py<Backend>, v: Vec<Typed<'_, T>>) -> PyResult<PyObject> {
    let l = operate(py, b, v, |b, x| match x {
        In::Host([x, c]) => b.predict(x, c),
        In::Dev([x, c]) => {
            let l = b.predict_dev(x, c)?;
            b.download_indices(&l)
        }
    })?;
    labels_py(py, l)
}

/// The index of the nearest row of `centroids` for each row of `x` (int64; ties → the
/// lowest index).
#[pyfunction]
fn predict(
    py: Python<'_>,
    backend: Py<Backend>,
    x: Operand<'_>,
    centroids: Operand<'_>,
) -> PyResult<PyObject> {
    dispatch!(predict_t(py, &backend, [x, centroids]))
}
