//! `Array`: a matrix resident where a backend computes, and the operands the compiled
//! functions take.

use ndgpu::{BackendElement, DType, Matrix, Place};
use ndgpu_core::backend::Here;
use numpy::{PyArray2, PyReadonlyArray2};
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::IntoPyObjectExt;

use crate::backend::Backend;
use crate::errors::IntoPy;

/// The element types: what NumPy and the backends both have.
pub trait Elem: BackendElement + numpy::Element {
    /// A resident matrix of this type, typed at run time.
    fn wrap(m: Matrix<Self>) -> Mat;
    /// The matrix, if it is of this type.
    fn get(m: &Mat) -> Option<&Matrix<Self>>;
}

/// `Elem` for `$t`, the element type of `Mat::$var`.
macro_rules! impl_elem {
    ($($t:ty => $var:ident),+) => {$(
        impl Elem for $t {
            fn wrap(m: Matrix<$t>) -> Mat {
                Mat::$var(m)
            }
            fn get(m: &Mat) -> Option<&Matrix<$t>> {
                match m {
                    Mat::$var(m) => Some(m),
                    _ => None,
                }
            }
        }
    )+};
}
impl_elem!(f32 => F32, f64 => F64);

/// A resident matrix of either element type.
pub enum Mat {
    /// float32.
    F32(Matrix<f32>),
    /// float64.
    F64(Matrix<f64>),
}

impl Mat {
    fn dim(&self) -> (usize, usize) {
        match self {
            Mat::F32(m) => m.dim(),
            Mat::F64(m) => m.dim(),
        }
    }
    fn place(&self) -> Place {
        match self {
            Mat::F32(m) => m.place(),
            Mat::F64(m) => m.place(),
        }
    }
    fn dtype(&self) -> DType {
        match self {
            Mat::F32(_) => DType::F32,
            Mat::F64(_) => DType::F64,
        }
    }
}

/// A 2-D array resident where its backend computes (host memory for `cpu` and `faer`,
/// the GPU for `cuda` and `cublas`). Operations on it run there and give resident
/// arrays; `numpy()` copies it to the host.
#[pyclass(frozen, module = "ndgpu._ndgpu", name = "Array")]
pub struct Array {
    /// The backend it lives on.
    pub backend: Py<Backend>,
    /// The matrix.
    pub mat: Mat,
}

impl Array {
    /// A new resident array of `backend`.
    pub fn new_py<T: Elem>(
        py: Python<'_>,
        backend: &Py<Backend>,
        m: Matrix<T>,
    ) -> PyResult<PyObject> {
        Array {
            backend: backend.clone_ref(py),
            mat: T::wrap(m),
        }
        .into_py_any(py)
    }

    fn download<'py, T: Elem>(
        &self,
        py: Python<'py>,
        m: &Matrix<T>,
    ) -> PyResult<Bound<'py, PyArray2<T>>> {
        let shared = self.backend.get().shared.clone();
        let host = py
            .allow_threads(|| T::ops(&**shared.read()).download(m))
            .py()?;
        Ok(PyArray2::from_owned_array(py, host))
    }

    /// A NumPy array sharing this array's host memory (kept alive by it), for arrays
    /// that live in host memory in the host backends' storage.
    fn host_view<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        const HERE: Here = Here {
            backend: "python",
            place: Place::Host,
        };
        let me = slf.get();
        let owner = slf.clone().into_any();
        let refuse = |_| {
            PyBufferError::new_err(format!(
                "DLPack export is implemented for arrays in host memory of the cpu and faer \
                 backends; this one lives in {}: call .numpy() to copy it to the host",
                me.mat.place()
            ))
        };
        // Safety: the view points into the Vec of a HostStorage owned by this frozen
        // object, never written or reallocated while it lives; `owner` keeps it alive
        // as long as the NumPy array does.
        Ok(match &me.mat {
            Mat::F32(m) => {
                let v = HERE
                    .host_view::<f32>("dlpack", "array", m)
                    .map_err(refuse)?;
                unsafe { PyArray2::borrow_from_array(&v, owner) }.into_any()
            }
            Mat::F64(m) => {
                let v = HERE
                    .host_view::<f64>("dlpack", "array", m)
                    .map_err(refuse)?;
                unsafe { PyArray2::borrow_from_array(&v, owner) }.into_any()
            }
        })
    }
}

#[pymethods]
impl Array {
    /// (rows, columns).
    #[getter]
    fn shape(&self) -> (usize, usize) {
        self.mat.dim()
    }

    /// 2.
    #[getter]
    fn ndim(&self) -> usize {
        2
    }

    /// Number of elements.
    #[getter]
    fn size(&self) -> usize {
        let (r, c) = self.mat.dim();
        r * c
    }

    /// The NumPy dtype (`float32` or `float64`).
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let np = py.import("numpy")?;
        np.getattr(match self.mat.dtype() {
            DType::F32 => "float32",
            DType::F64 => "float64",
        })
        .and_then(|t| np.call_method1("dtype", (t,)))
    }

    /// The backend it lives on.
    #[getter]
    fn backend(&self, py: Python<'_>) -> Py<Backend> {
        self.backend.clone_ref(py)
    }

    /// Where it lives: `host memory`, `CUDA device 0 (runtime …)`.
    #[getter]
    fn device(&self) -> String {
        self.mat.place().to_string()
    }

    /// A copy in a new C-ordered NumPy array.
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match &self.mat {
            Mat::F32(m) => self.download(py, m)?.into_any(),
            Mat::F64(m) => self.download(py, m)?.into_any(),
        })
    }

    /// NumPy's array protocol: a copy (`copy=False` only for host arrays, which it
    /// then shares).
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = if copy == Some(false) {
            Self::host_view(slf).map_err(|_| {
                PyValueError::new_err(
                    "a resident GPU array cannot be viewed as a NumPy array without a copy",
                )
            })?
        } else {
            slf.get().numpy(slf.py())?
        };
        match dtype {
            Some(d) => a.call_method1("astype", (d,)),
            None => Ok(a),
        }
    }

    /// DLPack export (host arrays of the cpu and faer backends, zero copy): the
    /// capsule shares this array's memory and keeps it alive.
    #[pyo3(signature = (**kwargs))]
    fn __dlpack__<'py>(
        slf: &Bound<'py, Self>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Self::host_view(slf)?.call_method("__dlpack__", (), kwargs)
    }

    /// `(device type, device id)` in DLPack's codes: (1, 0) for host memory, (2, n)
    /// for CUDA device n.
    fn __dlpack_device__(&self) -> (i32, usize) {
        match self.mat.place() {
            Place::Host => (1, 0),
            Place::Cuda { device, .. } => (2, device),
            Place::CudaGroup { devices, .. } => (2, devices.trailing_zeros() as usize),
        }
    }

    fn __len__(&self) -> usize {
        self.mat.dim().0
    }

    fn __repr__(&self) -> String {
        let (r, c) = self.mat.dim();
        format!(
            "ndgpu.Array(shape=({r}, {c}), dtype={}, backend='{}', device='{}')",
            match self.mat.dtype() {
                DType::F32 => "float32",
                DType::F64 => "float64",
            },
            self.backend.get().shared.read().name(),
            self.mat.place()
        )
    }
}

/// An operand: a 2-D float32 or float64 NumPy array (any strides), or a resident array.
#[derive(FromPyObject)]
pub enum Operand<'py> {
    /// float32 on the host.
    F32(PyReadonlyArray2<'py, f32>),
    /// float64 on the host.
    F64(PyReadonlyArray2<'py, f64>),
    /// Resident.
    Dev(Bound<'py, Array>),
}

/// One operand, typed.
pub enum Typed<'a, T> {
    /// A host array.
    Host(ndarray::ArrayView2<'a, T>),
    /// A resident one.
    Dev(&'a Matrix<T>),
}

/// Operands of one element type.
pub enum Args<'a> {
    /// float32.
    F32(Vec<Typed<'a, f32>>),
    /// float64.
    F64(Vec<Typed<'a, f64>>),
}

fn mixed() -> PyErr {
    crate::errors::type_error("operands of one dtype (float32 or float64) expected")
}

/// The operands as `$var` of `Args` (`$host` of `Operand`, `$mat` of `Mat`).
macro_rules! typed_as {
    ($ops:expr, $var:ident) => {{
        let mut v = Vec::with_capacity($ops.len());
        for o in $ops {
            v.push(match o {
                Operand::$var(a) => Typed::Host(a.as_array()),
                Operand::Dev(d) => match &d.get().mat {
                    Mat::$var(m) => Typed::Dev(m),
                    _ => return Err(mixed()),
                },
                _ => return Err(mixed()),
            });
        }
        Args::$var(v)
    }};
}

/// The operands, all of one dtype (the first decides).
pub fn typed<'a>(ops: &[&'a Operand<'_>]) -> PyResult<Args<'a>> {
    let f32_first = match ops.first() {
        Some(Operand::F32(_)) => true,
        Some(Operand::Dev(d)) => matches!(d.get().mat, Mat::F32(_)),
        _ => false,
    };
    Ok(if f32_first {
        typed_as!(ops, F32)
    } else {
        typed_as!(ops, F64)
    })
}

/// Uploads a 2-D float32 or float64 NumPy array (any strides) to `backend`.
#[pyfunction]
pub fn upload(py: Python<'_>, backend: Py<Backend>, a: Operand<'_>) -> PyResult<PyObject> {
    match &a {
        Operand::Dev(d) => {
            // Already resident: a copy on `backend` (through the host if it lives elsewhere).
            let host = d.get().numpy(py)?;
            let a: Operand = host.extract()?;
            upload(py, backend, a)
        }
        Operand::F32(x) => upload_host(py, &backend, x.as_array()),
        Operand::F64(x) => upload_host(py, &backend, x.as_array()),
    }
}

/// A host array uploaded to `backend`, as an `Array`.
fn upload_host<T: Elem>(
    py: Python<'_>,
    backend: &Py<Backend>,
    a: ndarray::ArrayView2<'_, T>,
) -> PyResult<PyObject> {
    let shared = backend.get().shared.clone();
    let m = py
        .allow_threads(|| T::ops(&**shared.read()).upload(a))
        .py()?;
    Array::new_py(py, backend, m)
}
