//! The dimensions of a case. Every case of the shootout is an [`Op`](crate::Op) at a
//! [`Shape`]; the size ladders are the special case of one number `n` per case, which
//! [`Op::shape`](crate::Op::shape) turns into the op's square (or vector) shape.

use std::fmt;

/// Dimensions of every k-means case: D = 32 coordinates per point, K = 128 centroids.
pub const KMEANS_D: usize = 32;
/// Centroids of every k-means case.
pub const KMEANS_K: usize = 128;

/// The dimensions of one case; which kind an op takes is
/// [`Op::takes`](crate::Op::takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shape {
    /// `C = A·B` with A m×k and B k×n (C m×n). Written `m×k×n`: A's rows, the inner
    /// dimension, B's columns, the order in which the operands are read (`N×D×K` for the
    /// distances of N points of D coordinates to K centroids).
    Gemm {
        /// Rows of A and C.
        m: usize,
        /// Columns of B and C.
        n: usize,
        /// The inner dimension: columns of A, rows of B.
        k: usize,
    },
    /// `M·Mᵀ` of an m×k M: an m×m result. Written `m×k`, M's shape.
    Gram {
        /// Rows of M: the order of the result.
        m: usize,
        /// Columns of M: the inner dimension.
        k: usize,
    },
    /// An n×n matrix (transpose, Cholesky, solve, the chain, LU, its solve, the
    /// triangular solve). Written `n×n`.
    Square(usize),
    /// An m×n matrix factored by QR, or the m×n A of a least-squares problem. Written
    /// `m×n`.
    Rect {
        /// Rows.
        m: usize,
        /// Columns.
        n: usize,
    },
    /// A rows×cols matrix reduced whole (`axis: None`) or along an axis: 0 gives one
    /// value per column, 1 one per row. Written `rows×cols`, with ` axis 0` or ` axis 1`.
    Matrix {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// The axis reduced along; `None`: every element.
        axis: Option<usize>,
    },
    /// n elements (dot, transfer).
    Vector(usize),
    /// N points of k-means (D and K are fixed: [`KMEANS_D`], [`KMEANS_K`]).
    Points(usize),
}

impl Shape {
    /// `m×k×n` of `C = A·B`, A m×k, B k×n.
    pub fn gemm(m: usize, k: usize, n: usize) -> Shape {
        Shape::Gemm { m, n, k }
    }

    /// `M·Mᵀ` of an m×k M.
    pub fn gram(m: usize, k: usize) -> Shape {
        Shape::Gram { m, k }
    }

    /// An m×n matrix of QR or least squares.
    pub fn rect(m: usize, n: usize) -> Shape {
        Shape::Rect { m, n }
    }

    /// A rows×cols matrix reduced whole (`None`) or along axis 0 or 1.
    ///
    /// # Panics
    /// For an axis other than 0 and 1 (a matrix has no other).
    pub fn matrix(rows: usize, cols: usize, axis: Option<usize>) -> Shape {
        assert!(axis.is_none_or(|a| a < 2), "axis {axis:?} of a matrix");
        Shape::Matrix { rows, cols, axis }
    }

    /// The one number of a ladder, where this is the shape a ladder makes of it (an n×n×n
    /// GEMM, the gram of an n×n M, an n×n matrix, a 1×n row reduced whole, n elements or
    /// points); `None` for every other shape.
    pub fn size(&self) -> Option<usize> {
        match *self {
            Shape::Gemm { m, n, k } => (m == n && n == k).then_some(n),
            Shape::Gram { m, k } | Shape::Rect { m, n: k } => (m == k).then_some(m),
            Shape::Matrix {
                rows: 1,
                cols,
                axis: None,
            } => Some(cols),
            Shape::Matrix { .. } => None,
            Shape::Square(n) | Shape::Vector(n) | Shape::Points(n) => Some(n),
        }
    }

    /// Its dimensions, in the order of [`Shape::label`].
    pub fn dims(&self) -> Vec<usize> {
        match *self {
            Shape::Gemm { m, n, k } => vec![m, k, n],
            Shape::Gram { m, k } | Shape::Rect { m, n: k } => vec![m, k],
            Shape::Square(n) => vec![n, n],
            Shape::Matrix { rows, cols, .. } => vec![rows, cols],
            Shape::Vector(n) | Shape::Points(n) => vec![n],
        }
    }

    /// Its dimensions as `Backend::plan` takes them: `[m, n, k]` of a GEMM, `[m, k]` of a
    /// gram's M, `[N, D, K]` of k-means; `None` for the shapes of ops with no plan.
    pub fn plan_dims(&self) -> Option<Vec<usize>> {
        match *self {
            Shape::Gemm { m, n, k } => Some(vec![m, n, k]),
            Shape::Gram { m, k } => Some(vec![m, k]),
            Shape::Points(n) => Some(vec![n, KMEANS_D, KMEANS_K]),
            Shape::Square(_) | Shape::Rect { .. } | Shape::Matrix { .. } | Shape::Vector(_) => None,
        }
    }

    /// The label of the reports: `1048576×32×1024` (m×k×n), `65536×64` (M of a gram),
    /// `8192×8192`, `1048576×32` (A of QR), `16×16777216 axis 1`, `1048576` (elements or
    /// points).
    pub fn label(&self) -> String {
        self.written("×", " axis ")
    }

    /// The ASCII form the peer script takes and gives back: `1048576x32x1024`,
    /// `1048576x32`, `16x16777216@1`, and for the ops of one size (squares, vectors,
    /// points) the size alone.
    pub fn spec(&self) -> String {
        match *self {
            Shape::Square(n) => n.to_string(),
            _ => self.written("x", "@"),
        }
    }

    fn written(&self, times: &str, axis: &str) -> String {
        let dims: Vec<String> = self.dims().iter().map(|d| d.to_string()).collect();
        let mut s = dims.join(times);
        if let Shape::Matrix { axis: Some(a), .. } = self {
            s.push_str(&format!("{axis}{a}"));
        }
        s
    }

    /// Where a case is, for messages: `n = 131` for a ladder's shape (as the ladders have
    /// always said), else the label.
    pub fn at(&self) -> String {
        match self.size() {
            Some(n) => format!("n = {n}"),
            None => self.label(),
        }
    }

    /// Each dimension capped at `cap` and made odd (rounded up): a small shape of the
    /// same kind and about the same aspect, whose dimensions are no multiple of any tile.
    /// A dimension of 1 stays 1.
    pub fn shrunk(&self, cap: usize) -> Shape {
        let d = |x: usize| if x <= 1 { x } else { x.min(cap) | 1 };
        match *self {
            Shape::Gemm { m, n, k } => Shape::Gemm {
                m: d(m),
                n: d(n),
                k: d(k),
            },
            Shape::Gram { m, k } => Shape::Gram { m: d(m), k: d(k) },
            Shape::Rect { m, n } => Shape::Rect { m: d(m), n: d(n) },
            Shape::Square(n) => Shape::Square(d(n)),
            Shape::Matrix { rows, cols, axis } => Shape::Matrix {
                rows: d(rows),
                cols: d(cols),
                axis,
            },
            Shape::Vector(n) => Shape::Vector(d(n)),
            Shape::Points(n) => Shape::Points(d(n)),
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_every_dimension() {
        // The k-means distance product: N×D points by D×K centroids.
        let km = Shape::gemm(1 << 20, 32, 1024);
        assert_eq!(
            km,
            Shape::Gemm {
                m: 1 << 20,
                n: 1024,
                k: 32
            }
        );
        assert_eq!(km.label(), "1048576×32×1024");
        assert_eq!(km.spec(), "1048576x32x1024");
        assert_eq!(Shape::gram(65536, 64).label(), "65536×64");
        assert_eq!(Shape::Square(131).label(), "131×131");
        assert_eq!(Shape::Square(131).spec(), "131");
        assert_eq!(
            Shape::matrix(16, 1 << 24, Some(1)).label(),
            "16×16777216 axis 1"
        );
        assert_eq!(Shape::matrix(16, 1 << 24, Some(0)).spec(), "16x16777216@0");
        assert_eq!(Shape::matrix(8192, 8192, None).to_string(), "8192×8192");
        assert_eq!(Shape::Vector(1000).label(), "1000");
        let tall = Shape::rect(1 << 20, 32);
        assert_eq!(
            (tall.label(), tall.spec()),
            ("1048576×32".into(), "1048576x32".into())
        );
        assert_eq!((tall.size(), Shape::rect(64, 64).size()), (None, Some(64)));
        assert_eq!(tall.shrunk(131), Shape::rect(131, 33));
    }

    #[test]
    fn ladder_shapes_have_a_size() {
        assert_eq!(Shape::gemm(256, 256, 256).size(), Some(256));
        assert_eq!(Shape::gemm(1024, 1024, 64).size(), None);
        assert_eq!(Shape::gram(64, 64).size(), Some(64));
        assert_eq!(Shape::gram(65536, 64).size(), None);
        assert_eq!(Shape::matrix(1, 1 << 20, None).size(), Some(1 << 20));
        assert_eq!(Shape::matrix(1, 1 << 20, Some(1)).size(), None);
        assert_eq!(Shape::matrix(8192, 8192, None).size(), None);
        assert_eq!(Shape::Points(4096).size(), Some(4096));
        assert_eq!(Shape::gemm(256, 256, 256).at(), "n = 256");
        assert_eq!(Shape::gemm(64, 8192, 64).at(), "64×8192×64");
    }

    #[test]
    fn shrunk_shapes_are_odd_and_capped() {
        assert_eq!(
            Shape::gemm(1 << 20, 32, 1024).shrunk(131),
            Shape::gemm(131, 33, 131)
        );
        assert_eq!(
            Shape::gemm(8192, 8192, 8192).shrunk(131),
            Shape::gemm(131, 131, 131)
        );
        assert_eq!(Shape::gemm(64, 64, 64).shrunk(131), Shape::gemm(65, 65, 65));
        assert_eq!(
            Shape::matrix(1, 1 << 28, None).shrunk(100_003),
            Shape::matrix(1, 100_003, None)
        );
        assert_eq!(
            Shape::matrix(16, 1 << 24, Some(0)).shrunk(100_003),
            Shape::matrix(17, 100_003, Some(0))
        );
    }

    #[test]
    #[should_panic(expected = "axis Some(2)")]
    fn a_matrix_has_two_axes() {
        let _ = Shape::matrix(2, 2, Some(2));
    }
}
