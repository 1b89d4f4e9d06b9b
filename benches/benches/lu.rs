//! Criterion benches of LU with partial pivoting (in place, as `getrf`) and of the solve
//! with its factor, on every backend and variant (see `common`).

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::Lu, Op::LuSolve]);
}
