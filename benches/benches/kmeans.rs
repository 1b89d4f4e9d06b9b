//! Criterion benches of one Lloyd iteration of k-means on every backend and variant (see `common`).

mod common;

use criterion::Criterion;
use ndgpu_shootout::Op;

fn kmeans(c: &mut Criterion) {
    common::bench_op(c, Op::KMeans);
}

fn main() {
    common::main(&[kmeans]);
}
