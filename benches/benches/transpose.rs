//! Criterion benches of the out-of-place transpose on every backend and variant (see `common`).

mod common;

use criterion::Criterion;
use ndgpu_shootout::Op;

fn transpose(c: &mut Criterion) {
    common::bench_op(c, Op::Transpose);
}

fn main() {
    common::main(&[transpose]);
}
