//! The GEMM ladder (`kernels/matmul.cu`): `C ← α·op(A)·op(B) + β·C`, one kernel per
//! optimisation step, from one thread per output with uncoalesced loads to a
//! double-buffered, register-blocked kernel with 16-byte loads.
//!
//! Every kernel multiplies row-major, untransposed operands: a transposed operand is
//! materialised first with the transpose ladder's default kernel.

mod launch;
mod rules;
mod table;
pub(crate) mod wgmma;

use ndgpu_core::{DType, Family, Gemm, Result};
use ndgpu_cuda_runtime::launch::check_buffer;
use ndgpu_cuda_runtime::{CudaElement, DeviceMatrix, Gpu};

use crate::ops::dispatch::Dev;
use launch::{applied, launch, scale, split_k, Product};
use table::{rung, small_tiles, TENSOR_CORE};

pub(crate) use launch::{gemm_strided, strided_dmma, transposed, Strided};
pub(crate) use rules::{plan, stream_cut, StreamCut};
pub(crate) use table::{has_tensor_cores, tc_shape, tc_shared_memory};
pub use table::{variants, DEFAULT_KERNELS, NOTE};

/// `C ← alpha·op(A)·op(B) + beta·C` on resident data with the named variant. `c` must be
/// op(A)'s rows × op(B)'s columns; with `beta = 0` its contents are never read.
///
/// # Errors
/// [`Error::ShapeMismatch`] (inner dimensions, or `c` of the wrong shape),
/// [`Error::UnknownVariant`], [`Error::InvalidArgument`] for dimensions beyond the
/// kernels' 32-bit indices, device errors (out of memory when a transposed operand is
/// materialised).
pub(crate) fn gemm<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    g: Gemm<T>,
    a: &DeviceMatrix<T>,
    b: &DeviceMatrix<T>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let rung = rung(variant)?;
    // The Hopper rungs run tensor_core's DMMA kernel for f64, which needs sm_80 only.
    let needs = match T::DTYPE {
        DType::F64 if rung.hopper.is_some() => TENSOR_CORE.v,
        _ => rung.v,
    };
    super::require(gpu, Family::MatMul, &needs)?;
    let (m, n, k) = g.dims(a.dim(), b.dim());
    for (what, x) in [("A", a), ("B", b)] {
        check_buffer("gemm", what, x)?;
    }
    check_buffer("gemm", "C", c)?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 || g.alpha == T::zero() {
        return scale(gpu, g.beta, c);
    }
    let (mut a_t, mut b_t) = (None, None);
    let a = applied(gpu, g.ta, a, &mut a_t)?;
    let b = applied(gpu, g.tb, b, &mut b_t)?;
    let p = Product::new((m, n, k), g, a, b, c);
    match (rung.v.name, rung.hopper, T::DTYPE) {
        ("split_k", _, _) => split_k(gpu, p),
        ("small", _, _) => launch(gpu, small_tiles(Dev::of(gpu)?.sms, m, n), p),
        (_, Some(_), DType::F64) => launch(gpu, TENSOR_CORE, p),
        (_, Some(h), _) => wgmma::gemm(gpu, h, p),
        _ => launch(gpu, rung, p),
    }
}
