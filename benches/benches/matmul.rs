//! Criterion benches of matmul (n×n×n GEMM, and the shape suite's m×k×n GEMMs) on every
//! backend and variant (see `common`).

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::Matmul]);
}
