//! The operation traits. Each is generic over the element type and object safe, so
//! that [`Backend`] (which requires all of them for `f32` and `f64`) can be boxed and
//! chosen at run time.
//!
//! Inputs are ndarray views of any layout (C order, Fortran order, transposed,
//! sliced with strides); outputs are owned, C-ordered arrays. Every method checks its
//! input with the shared checks in [`crate::check`], so every backend rejects bad input
//! with the same [`Error`](crate::Error).

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};

use crate::{Element, Family, KMeansConfig, KMeansResult, Result};

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
}

/// Matrix products.
pub trait MatMul<T: Element> {
    /// BLAS-style `C ← alpha·op(A)·op(B) + beta·C`, returned as a new array.
    ///
    /// `c` is required when `beta ≠ 0` and ignored (never read, so NaN in it does not
    /// propagate) when `beta = 0`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when the inner dimensions
    /// differ or `c` has the wrong shape (or is missing while `beta ≠ 0`); backend errors.
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &self,
        alpha: T,
        a: ArrayView2<T>,
        ta: Trans,
        b: ArrayView2<T>,
        tb: Trans,
        beta: T,
        c: Option<ArrayView2<T>>,
    ) -> Result<Array2<T>>;

    /// `A·B`.
    ///
    /// # Errors
    /// As [`MatMul::gemm`].
    fn matmul(&self, a: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        self.gemm(T::one(), a, Trans::No, b, Trans::No, T::zero(), None)
    }

    /// The symmetric product `M·Mᵀ` (n×n for an n×k `M`); the result is exactly
    /// symmetric on every backend.
    ///
    /// # Errors
    /// Backend errors only: every shape is valid.
    fn gram(&self, m: ArrayView2<T>) -> Result<Array2<T>>;
}

/// Out-of-place transpose.
pub trait Transpose<T: Element> {
    /// Returns `Aᵀ` as a new C-ordered array (any m×n, including empty).
    ///
    /// # Errors
    /// Backend errors only.
    fn transpose(&self, a: ArrayView2<T>) -> Result<Array2<T>>;
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

/// Reductions over a whole matrix or along one axis, and the dot product.
///
/// **NaN policy, the same on every backend** (that of NumPy): sums, sums of squares and
/// dot products follow IEEE arithmetic, so a NaN (or `+Inf` meeting `-Inf`) gives NaN;
/// `min`/`max` return NaN if any element is NaN; `argmin`/`argmax` return the index
/// of the first NaN if there is one, else the first index of the extreme value.
/// Indices of whole-matrix arg reductions are flat, in row-major (logical) order.
pub trait Reduce<T: Element> {
    /// Reduces the whole matrix to one value.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `Min`/`Max` of an empty matrix.
    fn reduce(&self, op: ReduceOp, a: ArrayView2<T>) -> Result<T>;

    /// Reduces along `axis`: `Axis(0)` gives one value per column, `Axis(1)` one per row.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `Min`/`Max` along an axis of length 0
    /// (unless the result itself is empty); `InvalidArgument` for an axis other than 0, 1.
    fn reduce_axis(&self, op: ReduceOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<T>>;

    /// Flat row-major index of the extreme element of the whole matrix.
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for an empty matrix.
    fn arg_reduce(&self, op: ArgOp, a: ArrayView2<T>) -> Result<usize>;

    /// Index of the extreme element along `axis` (row index per column for `Axis(0)`,
    /// column index per row for `Axis(1)`).
    ///
    /// # Errors
    /// As [`Reduce::reduce_axis`].
    fn arg_reduce_axis(&self, op: ArgOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<usize>>;

    /// `Σ xᵢ·yᵢ`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when the lengths differ.
    fn dot(&self, x: ArrayView1<T>, y: ArrayView1<T>) -> Result<T>;
}

/// Cholesky factorization of symmetric positive-definite matrices.
pub trait Factorize<T: Element> {
    /// The lower factor `L` with `A = L·Lᵀ`; its strict upper triangle is zero.
    /// Only the lower triangle of `A` (diagonal included) is read.
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare);
    /// [`Error::NonFinite`](crate::Error::NonFinite) for NaN/Inf in the lower triangle;
    /// [`Error::NotPositiveDefinite`](crate::Error::NotPositiveDefinite) with the first
    /// failing pivot (never NaN in an output). A 0×0 matrix has a 0×0 factor.
    ///
    /// Nearly singular input: the factorization is sure to complete while κ₂ of `A`
    /// scaled to a unit diagonal is below about 1/(n²·u) (Demmel's condition: Higham,
    /// *Accuracy and Stability*, §10.1), and in practice completes far beyond that, with
    /// the backward error LAPACK's tests allow. Near κ₂ ≈ 1/ε, rounding (of the input to
    /// `T`, and in the factorization) can make the matrix indefinite, and then the
    /// result is that error, with the pivot where it happened; which pivot, or whether
    /// at all, may differ between backends.
    fn cholesky(&self, a: ArrayView2<T>) -> Result<Array2<T>>;

    /// Solves `A·X = B` given the factor `L` of `A` from [`Factorize::cholesky`]
    /// (only its lower triangle is read).
    ///
    /// # Errors
    /// [`Error::NotSquare`](crate::Error::NotSquare) for `L`,
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `B` has a different
    /// number of rows, [`Error::NonFinite`](crate::Error::NonFinite) for NaN/Inf in `B`
    /// or a zero or non-finite diagonal entry of `L`.
    fn cholesky_solve(&self, l: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>>;
}

/// k-means clustering (Lloyd's algorithm).
///
/// The iteration, identical on every backend: (1) assign each point to its nearest
/// centroid (ties → the lowest index) and count the points whose label changed (all of
/// them in the first iteration); (2) stop if that count is at most `tol · N` or
/// `max_iter` assignments have been made; (3) else move each centroid to the mean of its
/// points (a centroid with no points stays where it is) and go to (1). So the returned
/// labels are always those of the nearest returned centroid.
pub trait Cluster<T: Element> {
    /// Runs k-means on the rows of `x` (N points × D dimensions).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for k = 0, k > N,
    /// `max_iter` = 0, `tol` outside [0, 1] or given centroids of the wrong shape;
    /// [`Error::NonFinite`](crate::Error::NonFinite) for NaN/Inf in `x`.
    fn kmeans(&self, x: ArrayView2<T>, config: &KMeansConfig) -> Result<KMeansResult<T>>;

    /// Labels each row of `x` with its nearest centroid (ties → the lowest index).
    ///
    /// # Errors
    /// Shape mismatch between `x` and `centroids`, no centroids, NaN/Inf in either.
    fn predict(&self, x: ArrayView2<T>, centroids: ArrayView2<T>) -> Result<Array1<usize>>;
}

/// A complete backend: every operation for `f32` and `f64`, a name, and variants.
pub trait Backend:
    MatMul<f32>
    + MatMul<f64>
    + Transpose<f32>
    + Transpose<f64>
    + Reduce<f32>
    + Reduce<f64>
    + Factorize<f32>
    + Factorize<f64>
    + Cluster<f32>
    + Cluster<f64>
    + Send
    + Sync
{
    /// Short name (`cpu`, `cuda`, `cublas`).
    fn name(&self) -> &'static str;

    /// One line: what it runs on (device name, library versions, ...).
    fn description(&self) -> String;

    /// The variants offered for `family`, default first. Backends with one way of
    /// doing a family return one name.
    fn variants(&self, family: Family) -> Vec<&'static str>;

    /// The variant currently used for `family`.
    fn variant(&self, family: Family) -> &'static str;

    /// Selects the variant used for `family` from now on.
    ///
    /// # Errors
    /// [`Error::UnknownVariant`](crate::Error::UnknownVariant).
    fn set_variant(&mut self, family: Family, name: &str) -> Result<()>;

    /// Per-variant notes for documentation and `ndgpu info` (for example which
    /// variants are bitwise reproducible, which parts use a vendor library).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}
