//! Criterion benches of matmul (n×n×n GEMM, and the shape suite's m×k×n GEMMs) on every
//! backend and variant (see `common`).

mod common;

use criterion::Criterion;
use ndgpu_shootout::Op;

fn matmul(c: &mut Criterion) {
    common::bench_op(c, Op::Matmul);
}

fn main() {
    common::main(&[matmul]);
}
