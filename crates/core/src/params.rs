//! The parameters of operations: transposes and scalars of a product, reductions.

use ndarray::ArrayView2;

use crate::Element;

/// Builder setters, in order: `name: Type;` makes `pub fn name(mut self, name: Type) ->
/// Self` setting the field `name`, with the doc comment written before it; `name: Type
/// => Some;` sets an optional field to `Some(name)`.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty $(=> $some:ident)?;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $name: $ty) -> Self {
                self.$name = $($some)?($name);
                self
            }
        )*
    };
}
pub(crate) use setters;

/// Whether an operand is used as is or transposed (BLAS `op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Trans {
    /// op(A) = A.
    #[default]
    No,
    /// op(A) = Aᵀ.
    Yes,
}

impl Trans {
    /// Applies op to a view (free: only the strides change).
    pub fn apply<'a, T>(self, a: ArrayView2<'a, T>) -> ArrayView2<'a, T> {
        match self {
            Trans::No => a,
            Trans::Yes => a.reversed_axes(),
        }
    }

    /// The other one.
    pub fn flip(self) -> Trans {
        match self {
            Trans::No => Trans::Yes,
            Trans::Yes => Trans::No,
        }
    }

    /// The shape of op(X) for an X of shape `dim`.
    pub fn dim(self, (rows, cols): (usize, usize)) -> (usize, usize) {
        match self {
            Trans::No => (rows, cols),
            Trans::Yes => (cols, rows),
        }
    }
}

/// The scalars and transposes of `C ← α·op(A)·op(B) + β·C` (BLAS gemm). The default is
/// the plain product: α = 1, β = 0, no transposes.
///
/// ```
/// use ndgpu_core::{Gemm, Trans};
/// let g = Gemm::<f32>::new().alpha(2.0).ta(Trans::Yes);
/// assert_eq!((g.alpha, g.beta, g.ta, g.tb), (2.0, 0.0, Trans::Yes, Trans::No));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gemm<T> {
    /// α.
    pub alpha: T,
    /// op of A.
    pub ta: Trans,
    /// op of B.
    pub tb: Trans,
    /// β. With β = 0, C is never read (BLAS semantics: NaN in C does not propagate).
    pub beta: T,
}

impl<T: Element> Gemm<T> {
    /// `(m, n, k)` of op(A)·op(B) for operands of shapes `a` and `b`, once
    /// [`check::gemm_dims`](crate::check::gemm_dims) has found them to fit.
    pub fn dims(&self, a: (usize, usize), b: (usize, usize)) -> (usize, usize, usize) {
        let (m, k) = self.ta.dim(a);
        (m, self.tb.dim(b).1, k)
    }

    /// α = 1, β = 0, no transposes.
    pub fn new() -> Self {
        Gemm {
            alpha: T::one(),
            ta: Trans::No,
            tb: Trans::No,
            beta: T::zero(),
        }
    }
    setters! {
        /// Sets α.
        alpha: T;
        /// Sets β.
        beta: T;
        /// Sets op of A.
        ta: Trans;
        /// Sets op of B.
        tb: Trans;
    }
}

impl<T: Element> Default for Gemm<T> {
    fn default() -> Self {
        Gemm::new()
    }
}

/// A reduction that yields a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Σ x. Empty: 0.
    Sum,
    /// Σ x². Empty: 0.
    SumSq,
    /// min x. Empty: error. NaN anywhere: NaN.
    Min,
    /// max x. Empty: error. NaN anywhere: NaN.
    Max,
}

impl ReduceOp {
    /// Every value reduction.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::SumSq, ReduceOp::Min, ReduceOp::Max];
    /// Lowercase name (`sum`, `sumsq`, `min`, `max`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::SumSq => "sumsq",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
        }
    }
    /// Whether it needs at least one element (min, max).
    pub fn needs_element(self) -> bool {
        matches!(self, ReduceOp::Min | ReduceOp::Max)
    }
}

/// A reduction that yields an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgOp {
    /// Index of the smallest element; ties → the lowest index; NaN → the first NaN.
    ArgMin,
    /// Index of the largest element; ties → the lowest index; NaN → the first NaN.
    ArgMax,
}

impl ArgOp {
    /// Both index reductions.
    pub const ALL: [ArgOp; 2] = [ArgOp::ArgMin, ArgOp::ArgMax];
    /// Lowercase name (`argmin`, `argmax`).
    pub fn name(self) -> &'static str {
        match self {
            ArgOp::ArgMin => "argmin",
            ArgOp::ArgMax => "argmax",
        }
    }
}

/// Which triangle of a square matrix holds a triangular one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Uplo {
    /// On and below the diagonal.
    #[default]
    Lower,
    /// On and above the diagonal.
    Upper,
}

/// A triangular operand of a solve (BLAS `trsm` with side = left): which triangle of
/// the square matrix is read, whether it is used transposed, and whether its diagonal is
/// taken as ones (and not read). The default is the lower triangle, as is, diagonal read.
///
/// ```
/// use ndgpu_core::{Triangular, Trans, Uplo};
/// let t = Triangular::upper().trans(Trans::Yes);
/// assert_eq!((t.uplo, t.trans, t.unit), (Uplo::Upper, Trans::Yes, false));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Triangular {
    /// The triangle read.
    pub uplo: Uplo,
    /// op of the triangle.
    pub trans: Trans,
    /// Unit diagonal: the diagonal is taken as ones and never read.
    pub unit: bool,
}

impl Triangular {
    /// The lower triangle, as is, its diagonal read.
    pub fn lower() -> Self {
        Triangular::default()
    }
    /// The upper triangle, as is, its diagonal read.
    pub fn upper() -> Self {
        Triangular {
            uplo: Uplo::Upper,
            ..Triangular::default()
        }
    }
    setters! {
        /// Sets op of the triangle.
        trans: Trans;
        /// Sets whether the diagonal is taken as ones.
        unit: bool;
    }
    /// Whether op(triangle) is lower triangular: the solve runs top to bottom.
    pub fn forward(&self) -> bool {
        (self.uplo == Uplo::Lower) == (self.trans == Trans::No)
    }
}

/// Which Q and R a QR factorization of an m×n matrix returns, as `numpy.linalg.qr`'s
/// `mode` (k = min(m, n)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QrMode {
    /// Q is m×k with orthonormal columns, R is k×n.
    #[default]
    Reduced,
    /// Q is m×m orthogonal, R is m×n.
    Complete,
}
