//! The cases of each family, written once for any backend and element type.

use ndarray::Array2;
use ndgpu_core::{Element, Family, Ops, Result};
use ndgpu_cpu::CpuBackend;

use crate::compare::error_kind;
use crate::data::{Layout, Rng};
use crate::report::Recorder;
use crate::Sizes;

mod cholesky;
mod common;
mod gemm;
mod kmeans;
mod lu;
mod qr;
mod reduce;
mod resident;
mod spectra;
mod transpose;
mod trsm;

/// A table of shapes with `N` dimensions each.
pub(crate) type Shapes<const N: usize> = &'static [[usize; N]];

/// The small shapes, plus the medium ones for [`Sizes::Medium`].
pub(crate) fn shapes<const N: usize>(
    sizes: Sizes,
    small: Shapes<N>,
    medium: Shapes<N>,
) -> Vec<[usize; N]> {
    let mut v = small.to_vec();
    if sizes == Sizes::Medium {
        v.extend_from_slice(medium);
    }
    v
}

/// A random m×n input for the `i`th case of a family, and the layout that case gives it.
pub(crate) fn nth_input<T: Element>(
    rng: &mut Rng,
    i: usize,
    m: usize,
    n: usize,
) -> (Array2<T>, Layout) {
    (rng.matrix(m, n), Layout::nth(i))
}

/// A case's name: `what` followed by the layouts of A and B.
pub(crate) fn with_layouts(what: String, la: Layout, lb: Layout) -> String {
    format!("{what} A:{} B:{}", la.name(), lb.name())
}

/// An outcome as a comparable description: `Ok`, or the error's kind (with its pivot or
/// column, see [`error_kind`]).
pub(crate) fn outcome<V>(r: &Result<V>) -> String {
    match r {
        Ok(_) => "Ok".into(),
        Err(e) => error_kind(e),
    }
}

/// What the cases of a family draw on besides the backend, in this order: the sizes to
/// run, the random source, the report, and the CPU backend whose outcomes they must match.
pub(crate) struct Suite<'a>(
    pub(crate) Sizes,
    pub(crate) &'a mut Rng,
    pub(crate) &'a mut Recorder,
    pub(crate) &'a CpuBackend,
);

/// Runs every case of `family` for one element type.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    family: Family,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    let cpu = CpuBackend::new();
    let s = Suite(sizes, &mut *rng, &mut *rec, &cpu);
    match family {
        Family::MatMul => gemm::run(b, s),
        Family::Gram => gemm::run_gram(b, sizes, rng, rec),
        Family::Transpose => transpose::run(b, sizes, rng, rec),
        Family::Reduce => reduce::run(b, sizes, rng, rec),
        Family::Cholesky => cholesky::run(b, s),
        Family::KMeans => kmeans::run(b, sizes, rng, rec),
        Family::Trsm => trsm::run(b, s),
        Family::Lu => lu::run(b, s),
        Family::Qr => qr::run(b, s),
        Family::Spectra => spectra::run(b, s),
    }
    resident::run(b, family, rng, rec);
}
