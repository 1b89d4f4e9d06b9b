//! Criterion benches of the triangular solve with n right-hand sides (`trsm`: left,
//! lower, in place) on every backend and variant (see `common`).

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::Trsm]);
}
