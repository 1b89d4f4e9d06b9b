//! Criterion benches of the reductions, sum and dot, on every backend and variant (see
//! `common`).

mod common;

use criterion::Criterion;
use ndgpu_shootout::Op;

fn sum(c: &mut Criterion) {
    common::bench_op(c, Op::Sum);
}

fn dot(c: &mut Criterion) {
    common::bench_op(c, Op::Dot);
}

fn main() {
    common::main(&[sum, dot]);
}
