//! The element types ndgpu computes in: `f32` and `f64`.

use std::fmt::{Debug, Display};

/// The dtype tag of an [`Element`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
}

impl DType {
    /// `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 => 8,
        }
    }
}

impl Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A floating-point element type: `f32` or `f64`. Sealed.
pub trait Element:
    num_traits::Float
    + ndarray::LinalgScalar
    + ndarray::ScalarOperand
    + Default
    + Debug
    + Display
    + Send
    + Sync
    + std::iter::Sum
    + std::ops::AddAssign
    + private::Sealed
    + 'static
{
    /// The dtype tag.
    const DTYPE: DType;
    /// Machine epsilon (unit roundoff × 2): the gap between 1 and the next value.
    const EPS: f64;
    /// Converts to f64 exactly (named so as not to clash with `ToPrimitive::to_f64`).
    fn as_f64(self) -> f64;
    /// Rounds an f64 to this type.
    fn from_f64(x: f64) -> Self;
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    const EPS: f64 = f32::EPSILON as f64;
    fn as_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Element for f64 {
    const DTYPE: DType = DType::F64;
    const EPS: f64 = f64::EPSILON;
    fn as_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> Self {
        x
    }
}

mod private {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}
