//! Criterion benches of the Cholesky factorization on every backend and variant (see `common`).

mod common;

use criterion::Criterion;
use ndgpu_shootout::Op;

fn cholesky(c: &mut Criterion) {
    common::bench_op(c, Op::Cholesky);
}

fn main() {
    common::main(&[cholesky]);
}
