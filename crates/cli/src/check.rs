//! Shape checks the tool makes before calling the library, so that a mismatch is told in
//! the terms of the command line (the operation the user ran, its vectors as vectors)
//! rather than in those of the library call it becomes (`gemm` of 1×n and n×1
//! matrices).

use crate::error::{Failure, Result};

/// An operand of `run matmul`: its 2-D form as read (a vector as a 1×n row or n×1
/// column), whether the file held a vector, and whether it is transposed.
#[derive(Debug, Clone, Copy)]
pub struct Operand {
    pub dim: (usize, usize),
    pub vector: bool,
    pub trans: bool,
}

impl Operand {
    /// The operand's shape as it enters the product (transposed where asked).
    fn op(self) -> (usize, usize) {
        if self.trans {
            (self.dim.1, self.dim.0)
        } else {
            self.dim
        }
    }

    /// How the user sees it: `A is 2x3`, `Aᵀ is 3x2`, `A is a vector of length 4`.
    fn describe(self, name: &str) -> String {
        let (r, c) = self.op();
        match (self.vector, self.trans) {
            (true, _) => format!("{name} is a vector of length {}", r * c),
            (false, true) => format!("{name}ᵀ is {r}x{c}"),
            (false, false) => format!("{name} is {r}x{c}"),
        }
    }
}

fn mismatch(op: &str, detail: String) -> Failure {
    Failure::failed(format!("{op}: shape mismatch: {detail}"))
}

/// That A's columns meet B's rows in `run matmul`, and that C (its shape as in the file)
/// has the result's shape, as NumPy's matmul requires.
pub fn matmul(a: Operand, b: Operand, c: Option<&[usize]>) -> Result<()> {
    let ((m, k), (kb, n)) = (a.op(), b.op());
    if k != kb {
        let detail = match (a.vector, b.vector) {
            (true, true) => format!("vectors of lengths {k} and {kb} do not match"),
            (false, false) => format!(
                "{} but {}: the inner dimensions {k} and {kb} differ",
                a.describe("A"),
                b.describe("B")
            ),
            _ => format!("{} but {}", a.describe("A"), b.describe("B")),
        };
        return Err(mismatch("matmul", detail));
    }
    let result = match (a.vector, b.vector) {
        (false, false) => vec![m, n],
        (false, true) => vec![m],
        (true, false) => vec![n],
        (true, true) => vec![],
    };
    match c {
        Some(c) if c != result.as_slice() => Err(mismatch(
            "matmul",
            format!(
                "C is {} but the product is {}",
                shape_text(c),
                shape_text(&result)
            ),
        )),
        _ => Ok(()),
    }
}

/// That the two vectors of `run dot` have the same length.
pub fn dot(x: usize, y: usize) -> Result<()> {
    if x == y {
        Ok(())
    } else {
        Err(mismatch(
            "dot",
            format!("vectors of lengths {x} and {y} do not match"),
        ))
    }
}

/// `2x3`, or `a vector of length 4`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("a vector of length {n}"),
        _ => shape
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("x"),
    }
}
