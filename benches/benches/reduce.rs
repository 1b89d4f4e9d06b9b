//! Criterion benches of the reductions on every backend and variant (see `common`): sum,
//! sum of squares and argmax (of a row on the ladder, and whole and along each axis of
//! square, tall-thin and short-wide matrices), and dot.

mod common;

use criterion::Criterion;
use ndgpu_shootout::Op;

fn sum(c: &mut Criterion) {
    common::bench_op(c, Op::Sum);
}

fn sumsq(c: &mut Criterion) {
    common::bench_op(c, Op::SumSq);
}

fn argmax(c: &mut Criterion) {
    common::bench_op(c, Op::Argmax);
}

fn dot(c: &mut Criterion) {
    common::bench_op(c, Op::Dot);
}

fn main() {
    common::main(&[sum, sumsq, argmax, dot]);
}
