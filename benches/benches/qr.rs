//! Criterion benches of Householder QR (in place, as `geqrf`) and of least squares
//! through it, on every backend and variant (see `common`), at the ladder's squares and
//! a tall-skinny m×32 A.

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::Qr, Op::Lstsq]);
}
