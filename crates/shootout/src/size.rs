//! The sizes a run is asked for (`ndgpu shootout --sizes`): one number, a ladder's size,
//! which every op makes its shape of ([`Op::shape`]), or the dimensions of one shape,
//! written as the peer's specs or the reports' labels (`1048576x32`, `1048576×32×1024`,
//! `16x16777216@1`), which the ops of that kind of shape take and the others leave out.

use std::fmt;
use std::str::FromStr;

use crate::cases::{Op, KMEANS_K};
use crate::shape::Shape;

/// One size asked for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Size {
    /// A ladder's n: [`Op::shape`] of it, for every op.
    N(usize),
    /// The dimensions of a shape, in the order of its label (2 or 3 of them), and the
    /// axis a reduction runs along (`@0`, `@1`).
    Dims {
        /// The dimensions.
        dims: Vec<usize>,
        /// The axis reduced along (reductions only).
        axis: Option<usize>,
    },
}

impl Size {
    /// The shape of `op` at this size, or `None` when the op does not take it: a shape
    /// of another kind (two unequal dimensions for a square op, three for anything but
    /// matmul, an axis for anything but a reduction), a dimension of 0, fewer points than
    /// centroids (k-means), fewer rows than columns (lstsq), or fewer than two samples
    /// (pca).
    pub fn shape(&self, op: Op) -> Option<Shape> {
        let shape = match self {
            Size::N(n) => op.shape(*n),
            Size::Dims { dims, axis } => match (op.shape(1), &dims[..], *axis) {
                (Shape::Gemm { .. }, &[m, k, n], None) => Shape::gemm(m, k, n),
                (Shape::Gram { .. }, &[m, k], None) => Shape::gram(m, k),
                (Shape::Rect { .. }, &[m, n], None) => Shape::rect(m, n),
                (Shape::Square(_), &[m, n], None) if m == n => Shape::Square(n),
                (Shape::Matrix { .. }, &[r, c], axis) => Shape::matrix(r, c, axis),
                _ => return None,
            },
        };
        let dims = shape.dims();
        let min = if op == Op::KMeans { KMEANS_K } else { 1 };
        let fits = dims.iter().all(|&d| d >= 1) && dims[0] >= min && op.takes(shape);
        fits.then_some(shape)
    }

    /// Whether every dimension is at least 1 (the command line refuses 0).
    pub fn positive(&self) -> bool {
        match self {
            Size::N(n) => *n > 0,
            Size::Dims { dims, .. } => dims.iter().all(|&d| d > 0),
        }
    }
}

impl From<usize> for Size {
    fn from(n: usize) -> Self {
        Size::N(n)
    }
}

impl FromStr for Size {
    type Err = String;

    /// `n`, `MxN`, `MxKxN` (`×` for `x` too), `RxC@0` or `RxC@1`.
    fn from_str(s: &str) -> Result<Size, String> {
        let bad = |why: String| format!("size '{s}': {why} (sizes are n, MxN, MxKxN or RxC@axis)");
        let (body, axis) = match s.trim().split_once('@') {
            Some((body, axis)) => (body, Some(axis.trim())),
            None => (s.trim(), None),
        };
        let dims = body
            .split(['x', '×'])
            .map(|d| d.trim().parse::<usize>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(e.to_string()))?;
        let axis = match axis {
            None => None,
            Some("0") => Some(0),
            Some("1") => Some(1),
            Some(a) => return Err(bad(format!("a matrix has no axis '{a}'"))),
        };
        match (dims.len(), axis) {
            (1, None) => Ok(Size::N(dims[0])),
            (2, _) | (3, None) => Ok(Size::Dims { dims, axis }),
            (1 | 3, Some(_)) => Err(bad("an axis is for a matrix of rows×cols".into())),
            _ => Err(bad(format!("{} dimensions", dims.len()))),
        }
    }
}

impl fmt::Display for Size {
    /// As [`Shape::spec`] writes it: `4096`, `1048576x32`, `16x16777216@1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::N(n) => write!(f, "{n}"),
            Size::Dims { dims, axis } => {
                let dims: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
                f.write_str(&dims.join("x"))?;
                match axis {
                    Some(a) => write!(f, "@{a}"),
                    None => Ok(()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(s: &str) -> Size {
        s.parse().unwrap()
    }

    #[test]
    fn sizes_parse_and_print_as_specs() {
        assert_eq!(size("4096"), Size::N(4096));
        for (text, spec) in [
            ("1048576x32", "1048576x32"),
            ("1048576×32×1024", "1048576x32x1024"),
            ("16x16777216@1", "16x16777216@1"),
            (" 8 x 4 ", "8x4"),
        ] {
            assert_eq!(size(text).to_string(), spec);
        }
        for bad in [
            "", "x32", "4096x", "1x2x3x4", "4x4@2", "4@0", "2x3x4@1", "-1",
        ] {
            assert!(bad.parse::<Size>().is_err(), "{bad}");
        }
        assert!(!size("0").positive() && !size("8x0").positive() && size("8x1").positive());
    }

    #[test]
    fn each_op_takes_the_sizes_of_its_shapes() {
        let tall = size("1048576x32");
        assert_eq!(tall.shape(Op::Qr), Some(Shape::rect(1 << 20, 32)));
        assert_eq!(tall.shape(Op::Lstsq), Some(Shape::rect(1 << 20, 32)));
        assert_eq!(tall.shape(Op::Gram), Some(Shape::gram(1 << 20, 32)));
        assert_eq!(tall.shape(Op::Sum), Some(Shape::matrix(1 << 20, 32, None)));
        for op in [Op::Lu, Op::Trsm, Op::Matmul, Op::Dot, Op::KMeans] {
            assert_eq!(tall.shape(op), None, "{op}");
        }
        // lstsq is for overdetermined or square problems only; QR takes any.
        let wide = size("32x1024");
        assert_eq!(
            (wide.shape(Op::Lstsq), wide.shape(Op::Qr)),
            (None, Some(Shape::rect(32, 1024)))
        );
        assert_eq!(size("64x64").shape(Op::Lu), Some(Shape::Square(64)));
        assert_eq!(size("64").shape(Op::Qr), Some(Shape::rect(64, 64)));
        assert_eq!(
            size("8x9x10").shape(Op::Matmul),
            Some(Shape::gemm(8, 9, 10))
        );
        assert_eq!(
            size("8x9@0").shape(Op::Argmax),
            Some(Shape::matrix(8, 9, Some(0)))
        );
        assert_eq!(size("8x9@0").shape(Op::Qr), None);
        assert_eq!(size("0").shape(Op::Lu), None);
        assert_eq!(size("100").shape(Op::KMeans), None);
        assert_eq!(size("200").shape(Op::KMeans), Some(Shape::Points(200)));
    }
}
