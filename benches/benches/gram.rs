//! Criterion benches of M·Mᵀ on every backend and variant (see `common`).

mod common;

use criterion::Criterion;
use ndgpu_shootout::Op;

fn gram(c: &mut Criterion) {
    common::bench_op(c, Op::Gram);
}

fn main() {
    common::main(&[gram]);
}
