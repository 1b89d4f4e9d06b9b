//! Criterion benches of M·Mᵀ on every backend and variant (see `common`).

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::Gram]);
}
