//! One module per op family: device-level functions on resident data, and the
//! ndarray-level trait implementations for [`crate::CudaBackend`].

pub(crate) mod cholesky;
pub(crate) mod dispatch;
pub(crate) mod gram;
pub(crate) mod kmeans;
pub(crate) mod matmul;
pub(crate) mod reduce;
pub(crate) mod transpose;
pub(crate) mod wgmma;

use ndgpu_core::{Error, Family, Result};

/// The rung of a family's ladder named `variant`.
///
/// # Errors
/// [`Error::UnknownVariant`], listing `variants`.
pub(crate) fn find_rung<R: Copy>(
    rungs: &[R],
    name: fn(&R) -> &'static str,
    family: Family,
    variant: &str,
    variants: &[&str],
) -> Result<R> {
    rungs
        .iter()
        .copied()
        .find(|r| name(r) == variant)
        .ok_or_else(|| Error::unknown_variant("cuda", family, variant, variants))
}

/// Every kernel the default variants launch (both dtypes): the NVRTC check requires
/// that none of them spills registers.
pub fn default_kernels() -> Vec<&'static str> {
    [
        matmul::DEFAULT_KERNELS,
        gram::DEFAULT_KERNELS,
        transpose::DEFAULT_KERNELS,
        reduce::DEFAULT_KERNELS,
        cholesky::DEFAULT_KERNELS,
        kmeans::DEFAULT_KERNELS,
    ]
    .concat()
}
