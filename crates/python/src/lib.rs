//! `ndgpu._ndgpu`: the compiled half of the `ndgpu` Python package.
//!
//! The Python half (`python/ndgpu`) gives NumPy's, SciPy's and scikit-learn's names,
//! argument conventions and dtype rules; this module does the work on 2-D float32 or
//! float64 operands of one dtype, host (NumPy arrays, any strides) or resident
//! ([`Array`]), with the GIL released while a backend computes:
//! - [`Backend`]: one opened backend, its variants and precisions;
//! - [`Array`]: a matrix resident where a backend computes;
//! - one function per operation, its backend first (`matmul(backend, a, b)`): host
//!   operands give NumPy arrays, resident ones (a host one beside them is uploaded
//!   first) give resident arrays.
#![warn(missing_docs)]

use pyo3::prelude::*;

/// Adds the `#[pyfunction]`s named to the module `$m`.
macro_rules! add_functions {
    ($m:expr, $($f:path),+ $(,)?) => {{
        $($m.add_function(pyo3::wrap_pyfunction!($f, $m)?)?;)+
        pyo3::PyResult::Ok(())
    }};
}

mod array;
mod backend;
mod errors;
mod kmeans;
mod linalg;
mod operate;
mod ops;
mod spectra;

pub use array::Array;
pub use backend::Backend;

/// The module `ndgpu._ndgpu`.
#[pymodule]
fn _ndgpu(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Backend>()?;
    m.add_class::<Array>()?;
    add_functions!(m, backend::backends, backend::compiled_in, array::upload)?;
    ops::register(m)?;
    linalg::register(m)?;
    kmeans::register(m)?;
    spectra::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
