//! Criterion benches of one Lloyd iteration of k-means on every backend and variant (see `common`).

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::KMeans]);
}
