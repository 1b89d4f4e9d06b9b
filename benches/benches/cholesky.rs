//! Criterion benches of the Cholesky factorization on every backend and variant (see `common`).

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::Cholesky]);
}
