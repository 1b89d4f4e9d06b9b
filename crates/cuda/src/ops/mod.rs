//! One module per op family: device-level functions on resident data, and the
//! ndarray-level trait implementations for [`crate::CudaBackend`].

pub(crate) mod cholesky;
pub(crate) mod dispatch;
pub(crate) mod gram;
pub(crate) mod kmeans;
pub(crate) mod lu;
pub(crate) mod matmul;
mod products;
pub(crate) mod qr;
pub(crate) mod reduce;
pub(crate) mod spectra;
pub(crate) mod transpose;
pub(crate) mod trsm;

use ndgpu_core::{Error, Family, Needs, Result, Variant};
use ndgpu_cuda_runtime::Gpu;

/// The rung of a family's ladder named `variant`, each rung carrying its row.
///
/// # Errors
/// [`Error::UnknownVariant`], listing the ladder's variants.
pub(crate) fn find_rung<R: Copy>(
    rungs: &[R],
    row: fn(&R) -> Variant,
    family: Family,
    variant: &str,
) -> Result<R> {
    rungs
        .iter()
        .copied()
        .find(|r| row(r).name == variant)
        .ok_or_else(|| {
            let names: Vec<&str> = rungs.iter().map(|r| row(r).name).collect();
            Error::unknown_variant("cuda", family, variant, &names)
        })
}

/// The row of `variant` in a family's table.
///
/// # Errors
/// [`Error::UnknownVariant`], listing the table's variants.
pub(crate) fn find_row(rows: &[Variant], family: Family, variant: &str) -> Result<Variant> {
    find_rung(rows, |v| *v, family, variant)
}

/// `Ok` where the device meets what variant `v` of `family` needs (its row's
/// [`Needs`]), else [`Error::Unavailable`] naming the variant and the device.
///
/// # Errors
/// As above.
pub(crate) fn require(gpu: &Gpu, family: Family, v: &Variant) -> Result<()> {
    let what = match v.needs {
        Needs::Any => return Ok(()),
        _ if v.needs.met_by(Some(gpu.arch())) => return Ok(()),
        Needs::Sm80 => "TF32/FP64 tensor cores (sm_80 or later)",
        Needs::Sm90 => "Hopper's wgmma and TMA (sm_90)",
    };
    Err(Error::Unavailable {
        backend: "cuda".into(),
        reason: format!(
            "{family} variant {} needs {what}; this device is {}",
            v.name,
            gpu.arch()
        ),
    })
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
        trsm::DEFAULT_KERNELS,
        lu::DEFAULT_KERNELS,
        qr::DEFAULT_KERNELS,
    ]
    .concat()
}
