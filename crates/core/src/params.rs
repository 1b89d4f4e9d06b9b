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
