//! Criterion benches of the out-of-place transpose on every backend and variant (see `common`).

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::Transpose]);
}
