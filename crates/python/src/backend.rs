//! `Backend`: one opened ndgpu backend, shared by the resident arrays it makes.

use std::sync::{Arc, RwLock, RwLockReadGuard};

use ndgpu::{Family, Precision};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::IntoPy;

/// The backend behind a `Backend` object and its arrays: read while it computes,
/// written when a variant is selected.
pub struct Shared {
    inner: RwLock<Box<dyn ndgpu::Backend>>,
}

impl Shared {
    /// The backend, for an operation (a panic in an earlier one leaves it usable).
    pub fn read(&self) -> RwLockReadGuard<'_, Box<dyn ndgpu::Backend>> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Box<dyn ndgpu::Backend>> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// An opened backend (`cpu`, `faer`, `cuda`, `cublas`, `cuda:0,1`, or `auto`).
///
/// The Python class `ndgpu.Backend` subclasses this one and adds the NumPy-shaped
/// operations as methods.
#[pyclass(subclass, frozen, module = "ndgpu._ndgpu", name = "Backend")]
pub struct Backend {
    /// The backend, shared with the arrays resident on it.
    pub shared: Arc<Shared>,
}

/// The operation family named `name` (`matmul`, `gram`, `cholesky`, ...).
pub fn parse_family(name: &str) -> PyResult<Family> {
    Family::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
        PyValueError::new_err(format!(
            "unknown operation family '{name}' (known: {})",
            known.join(", ")
        ))
    })
}

fn parse_precision(name: &str) -> PyResult<Precision> {
    let all = [Precision::Ieee, Precision::Tf32, Precision::Tf32x3];
    all.into_iter().find(|p| p.name() == name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown precision '{name}' (known: ieee, tf32, 3xtf32)"
        ))
    })
}

/// `{family: [variant, ...]}`, default first, for every family with variants.
fn variant_dict<'py>(py: Python<'py>, v: &ndgpu::Variants) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for f in Family::ALL {
        let names = v.list(f);
        if !names.is_empty() {
            d.set_item(f.name(), names)?;
        }
    }
    Ok(d)
}

#[pymethods]
impl Backend {
    /// Opens backend `name`; the CUDA ones load the driver and libraries now.
    #[new]
    #[pyo3(signature = (name = "auto"))]
    fn new(py: Python<'_>, name: &str) -> PyResult<Self> {
        let name = name.to_owned();
        let b = py.allow_threads(move || ndgpu::backend(&name)).py()?;
        Ok(Backend {
            shared: Arc::new(Shared {
                inner: RwLock::new(b),
            }),
        })
    }

    /// The backend's name (`cpu`, `faer`, `cuda`, `cublas`, `cuda:0,1`).
    #[getter]
    fn name(&self) -> &'static str {
        self.shared.read().name()
    }

    /// One line: what it runs on.
    fn description(&self) -> String {
        self.shared.read().description()
    }

    /// Selects variant `name` of operation family `family` from now on.
    fn set_variant(&self, family: &str, name: &str) -> PyResult<()> {
        let f = parse_family(family)?;
        self.shared.write().set_variant(f, name).py()
    }

    /// Selects the variant of `family` that computes in `precision` (`ieee`, `tf32`,
    /// `3xtf32`) and runs here.
    fn set_precision(&self, family: &str, precision: &str) -> PyResult<()> {
        let (f, p) = (parse_family(family)?, parse_precision(precision)?);
        self.shared.write().set_precision(f, p).py()
    }

    /// The variant in use for `family`.
    fn variant(&self, family: &str) -> PyResult<&'static str> {
        Ok(self.shared.read().variant(parse_family(family)?))
    }

    /// `{family: [variant, ...]}`, default first.
    fn variants<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        variant_dict(py, self.shared.read().variant_table())
    }

    /// Name, description, notes, and per family the variants, the one in use and its
    /// precision.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let b = self.shared.read();
        let d = PyDict::new(py);
        d.set_item("name", b.name())?;
        d.set_item("description", b.description())?;
        d.set_item("notes", b.notes())?;
        let fams = PyDict::new(py);
        for f in Family::ALL {
            let names = b.variants(f);
            if names.is_empty() {
                continue;
            }
            let e = PyDict::new(py);
            e.set_item("variants", names)?;
            e.set_item("current", b.variant(f))?;
            e.set_item("precision", b.precision(f).name())?;
            fams.set_item(f.name(), e)?;
        }
        d.set_item("families", fams)?;
        Ok(d)
    }

    /// Waits for the work queued on the backend, and reports any fault it raised.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        let s = self.shared.clone();
        py.allow_threads(move || s.read().synchronize()).py()
    }

    fn __repr__(&self) -> String {
        format!("ndgpu.backend('{}')", self.shared.read().name())
    }
}

/// The backends compiled in, in the order `auto` prefers them.
#[pyfunction]
pub fn compiled_in() -> Vec<&'static str> {
    ndgpu::compiled_in()
}

/// Every compiled-in backend: `name`, `available`, `description` (when available) or
/// `reason` (when not), `notes`, `variants`.
#[pyfunction]
pub fn backends(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let all = py.allow_threads(ndgpu::backends);
    let out = PyList::empty(py);
    for b in all {
        let d = PyDict::new(py);
        d.set_item("name", b.name)?;
        d.set_item("available", b.status.is_ok())?;
        match &b.status {
            Ok(desc) => d.set_item("description", desc)?,
            Err(reason) => d.set_item("reason", reason)?,
        }
        d.set_item("notes", &b.notes)?;
        d.set_item("variants", variant_dict(py, &b.variants)?)?;
        out.append(d)?;
    }
    Ok(out)
}
