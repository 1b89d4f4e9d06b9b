//! The cases of each family, written once for any backend and element type.

use ndgpu_core::{Element, Family, Ops};

use crate::data::Rng;
use crate::report::Recorder;
use crate::Sizes;

mod cholesky;
mod gemm;
mod kmeans;
mod reduce;
mod resident;
mod transpose;

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

/// Runs every case of `family` for one element type.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    family: Family,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    match family {
        Family::MatMul => gemm::run(b, sizes, rng, rec),
        Family::Gram => gemm::run_gram(b, sizes, rng, rec),
        Family::Transpose => transpose::run(b, sizes, rng, rec),
        Family::Reduce => reduce::run(b, sizes, rng, rec),
        Family::Cholesky => cholesky::run(b, sizes, rng, rec),
        Family::KMeans => kmeans::run(b, sizes, rng, rec),
    }
    resident::run(b, family, rng, rec);
}
