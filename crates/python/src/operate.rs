//! Running one operation: host operands through the host form, resident ones (a host
//! operand beside them uploaded first) through the resident form, the GIL released.

use ndarray::{Array2, ArrayView2};
use ndgpu::{Matrix, Ops};
use numpy::PyArray2;
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use crate::array::{Array, Elem, Typed};
use crate::backend::Backend;
use crate::errors::IntoPy;

/// The operands as the operation gets them.
pub enum In<'a, T, const N: usize> {
    /// All on the host.
    Host([ArrayView2<'a, T>; N]),
    /// All resident.
    Dev([&'a Matrix<T>; N]),
}

/// A matrix result, host or resident as the operands were.
pub enum Out<T> {
    /// A host array.
    Host(Array2<T>),
    /// A resident matrix.
    Dev(Matrix<T>),
}

impl<T: Elem> Out<T> {
    /// As a NumPy array or an `Array` of `backend`.
    pub fn into_py(self, py: Python<'_>, backend: &Py<Backend>) -> PyResult<PyObject> {
        match self {
            Out::Host(a) => PyArray2::from_owned_array(py, a).into_py_any(py),
            Out::Dev(m) => Array::new_py(py, backend, m),
        }
    }
}

/// Runs `f` on `backend` with the GIL released, on the N operands `v`.
pub fn operate<T: Elem, const N: usize, R: Send>(
    py: Python<'_>,
    backend: &Py<Backend>,
    v: Vec<Typed<'_, T>>,
    f: impl FnOnce(&dyn Ops<T>, In<'_, T, N>) -> ndgpu::Result<R> + Send,
) -> PyResult<R> {
    assert_eq!(v.len(), N, "operand count");
    let shared = backend.get().shared.clone();
    py.allow_threads(move || {
        let guard = shared.read();
        let b = T::ops(&**guard);
        if v.iter().all(|t| matches!(t, Typed::Host(_))) {
            let views = std::array::from_fn(|i| match &v[i] {
                Typed::Host(a) => a.view(),
                Typed::Dev(_) => unreachable!("all host"),
            });
            return f(b, In::Host(views));
        }
        let mut uploaded: Vec<Option<Matrix<T>>> = Vec::with_capacity(N);
        for t in &v {
            uploaded.push(match t {
                Typed::Host(a) => Some(b.upload(a.view())?),
                Typed::Dev(_) => None,
            });
        }
        let refs = std::array::from_fn(|i| match (&v[i], &uploaded[i]) {
            (Typed::Dev(m), _) => *m,
            (Typed::Host(_), Some(m)) => m,
            (Typed::Host(_), None) => unreachable!("uploaded"),
        });
        f(b, In::Dev(refs))
    })
    .py()
}
