//! Criterion benches of the spectra: the symmetric eigendecomposition (`eigh_dev`), the
//! reduced SVD with U and Vt (`svd_dev`), and PCA to min(m, d, 8) components
//! (`Pca::fit`, from the host array: it has no resident form), on every backend and
//! variant (see `common`), at the ladder's squares and, for the SVD and PCA, a
//! tall-skinny m×32 matrix.

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::Eigh, Op::Svd, Op::Pca]);
}
