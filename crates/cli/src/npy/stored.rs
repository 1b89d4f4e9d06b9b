//! The element types a `.npy` file may store that the tool reads: f32 and f64, and the
//! integer and bool types, which are converted to the float type of the computation as
//! NumPy converts them (`numpy.linalg` computes integer input in float64).

use std::path::Path;

use ndarray::{Array, ArrayD, Dimension, IxDyn, ShapeBuilder};
use ndarray_npy::ReadableElement;
use ndgpu::DType;
use num_traits::{NumCast, ToPrimitive};

use super::{read, Header};
use crate::error::{Failure, Result};

/// What a `.npy` file stores, of the element types the tool reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    Bool,
}

impl Stored {
    /// The type of a descriptor, among those ndarray-npy's readers accept (NumPy writes
    /// `|i1`, `|u1` and `|b1` for the one-byte types); `None` for any other.
    pub(super) fn from_descr(descr: &str) -> Option<Stored> {
        use Stored::*;
        Some(match descr {
            "<f4" | ">f4" => F32,
            "<f8" | ">f8" => F64,
            "|i1" | "i1" | "b" => I8,
            "<i2" | ">i2" => I16,
            "<i4" | ">i4" => I32,
            "<i8" | ">i8" => I64,
            "|u1" | "u1" | "B" => U8,
            "<u2" | ">u2" => U16,
            "<u4" | ">u4" => U32,
            "<u8" | ">u8" => U64,
            "|b1" => Bool,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        use Stored::*;
        match self {
            I8 | U8 | Bool => 1,
            I16 | U16 => 2,
            F32 | I32 | U32 => 4,
            F64 | I64 | U64 => 8,
        }
    }

    /// The float type a file of this type computes in unless `--dtype` says otherwise:
    /// its own for f32 and f64, f64 for integers and bool (as `numpy.linalg` converts
    /// them).
    pub fn float(self) -> DType {
        match self {
            Stored::F32 => DType::F32,
            _ => DType::F64,
        }
    }

    /// Whether this is f32 or f64.
    pub fn is_float(self) -> bool {
        matches!(self, Stored::F32 | Stored::F64)
    }

    /// The name, as the tool's notes give dtypes: `f32`, `f64`, and NumPy's names of
    /// the others (`int64`, `bool`).
    pub fn name(self) -> &'static str {
        use Stored::*;
        match self {
            F32 => "f32",
            F64 => "f64",
            I8 => "int8",
            I16 => "int16",
            I32 => "int32",
            I64 => "int64",
            U8 => "uint8",
            U16 => "uint16",
            U32 => "uint32",
            U64 => "uint64",
            Bool => "bool",
        }
    }
}

/// Reads the array of a checked header as `T`, converting from the stored type: each
/// value rounded once to `T` (integers beyond 2⁵³, or 2²⁴ for f32, round as NumPy rounds
/// them), `true` as 1 and `false` as 0.
pub(super) fn read_as<T, D>(path: &Path, h: &Header) -> Result<Array<T, D>>
where
    T: ReadableElement + ndgpu::Element,
    D: Dimension,
{
    fn cast<X: ReadableElement + ToPrimitive + Copy, T: ndgpu::Element, D: Dimension>(
        path: &Path,
    ) -> Result<Array<T, D>> {
        Ok(read::<X, D>(path)?.mapv(|x| <T as NumCast>::from(x).unwrap_or_else(T::nan)))
    }
    if h.stored == Stored::from_dtype(T::DTYPE) {
        return read(path);
    }
    match h.stored {
        Stored::F32 => cast::<f32, T, D>(path),
        Stored::F64 => cast::<f64, T, D>(path),
        Stored::I8 => cast::<i8, T, D>(path),
        Stored::I16 => cast::<i16, T, D>(path),
        Stored::I32 => cast::<i32, T, D>(path),
        Stored::I64 => cast::<i64, T, D>(path),
        Stored::U8 => cast::<u8, T, D>(path),
        Stored::U16 => cast::<u16, T, D>(path),
        Stored::U32 => cast::<u32, T, D>(path),
        Stored::U64 => cast::<u64, T, D>(path),
        Stored::Bool => read_bool(path, h),
    }
}

impl Stored {
    fn from_dtype(d: DType) -> Stored {
        match d {
            DType::F32 => Stored::F32,
            DType::F64 => Stored::F64,
        }
    }
}

/// A bool array, each byte read as NumPy reads it (0 is false, anything else true).
/// Not through ndarray-npy, which refuses bytes other than 0 and 1: a header accepted by
/// [`super::header`] reads.
fn read_bool<T: ndgpu::Element, D: Dimension>(path: &Path, h: &Header) -> Result<Array<T, D>> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
    let n: usize = h.shape.iter().product();
    // The header check made the data section exactly n bytes at the end of the file.
    let data = bytes.get(bytes.len().saturating_sub(n)..).unwrap_or(&[]);
    let values: Vec<T> = data
        .iter()
        .map(|&b| if b == 0 { T::zero() } else { T::one() })
        .collect();
    let shape = IxDyn(&h.shape);
    let a = if h.fortran_order {
        ArrayD::from_shape_vec(shape.f(), values)
    } else {
        ArrayD::from_shape_vec(shape, values)
    };
    a.map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?
        .into_dimensionality::<D>()
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))
}
