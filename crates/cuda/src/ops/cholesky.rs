//! Cholesky ladder. (Stub: being written.)
use ndarray::{Array2, ArrayView2};
use ndgpu_core::{Error, Factorize, Result};

use crate::{CudaBackend, CudaElement};

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &["single_block"];
/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[];
/// Determinism and scope.
pub const NOTE: &str = "cholesky: (being written)";

impl<T: CudaElement> Factorize<T> for CudaBackend {
    fn cholesky(&self, _a: ArrayView2<T>) -> Result<Array2<T>> {
        Err(Error::invalid("cholesky", "not yet written"))
    }
    fn cholesky_solve(&self, _l: ArrayView2<T>, _b: ArrayView2<T>) -> Result<Array2<T>> {
        Err(Error::invalid("cholesky_solve", "not yet written"))
    }
}
