//! Criterion benches of the reductions on every backend and variant (see `common`): sum,
//! sum of squares and argmax (of a row on the ladder, and whole and along each axis of
//! square, tall-thin and short-wide matrices), and dot.

mod common;

use ndgpu_shootout::Op;

fn main() {
    common::main(&[Op::Sum, Op::SumSq, Op::Argmax, Op::Dot]);
}
