//! Host allocation of results that may be far larger than their inputs.
//!
//! Most results are bounded by the bytes of their inputs, but not all: an m×0 times a
//! 0×n matrix is an m×n matrix of zeros, and a 10¹²×0 matrix takes no bytes at all.
//! ndarray's constructors abort the process (or panic on overflow) when such a result
//! cannot be allocated; these return [`Error::HostOutOfMemory`] instead.

use ndarray::{Array1, Array2};

use crate::{Error, Result};

/// An empty vector with room for `cap` elements, allocated fallibly.
///
/// # Errors
/// [`Error::HostOutOfMemory`] when the bytes overflow the address space or the
/// allocator refuses them.
pub fn with_capacity<T>(op: &'static str, cap: usize) -> Result<Vec<T>> {
    let bytes = cap
        .checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize);
    let oom = || Error::HostOutOfMemory {
        op,
        requested: bytes,
    };
    bytes.ok_or_else(oom)?;
    let mut v = Vec::new();
    v.try_reserve_exact(cap).map_err(|_| oom())?;
    Ok(v)
}

/// A vector of `len` copies of `value`, allocated fallibly.
///
/// # Errors
/// As [`with_capacity`].
pub fn filled_vec<T: Clone>(op: &'static str, len: usize, value: T) -> Result<Vec<T>> {
    let mut v = with_capacity(op, len)?;
    v.resize(len, value);
    Ok(v)
}

/// A `rows`×`cols` matrix of `value`, allocated fallibly.
///
/// # Errors
/// As [`filled_vec`].
pub fn filled<T: Clone>(
    op: &'static str,
    (rows, cols): (usize, usize),
    value: T,
) -> Result<Array2<T>> {
    let len = rows.checked_mul(cols).ok_or(Error::HostOutOfMemory {
        op,
        requested: None,
    })?;
    let v = filled_vec(op, len, value)?;
    Ok(Array2::from_shape_vec((rows, cols), v).expect("the length is rows × cols"))
}

/// A vector of `len` copies of `value` as an [`Array1`], allocated fallibly.
///
/// # Errors
/// As [`filled_vec`].
pub fn filled1<T: Clone>(op: &'static str, len: usize, value: T) -> Result<Array1<T>> {
    Ok(Array1::from_vec(filled_vec(op, len, value)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_the_address_space_are_errors_not_panics() {
        let e = filled::<f64>("gram", (usize::MAX / 2, 3), 0.0).unwrap_err();
        assert!(
            matches!(
                e,
                Error::HostOutOfMemory {
                    op: "gram",
                    requested: None
                }
            ),
            "{e}"
        );
        let e = filled_vec::<f32>("sum", usize::MAX / 4 + 1, 0.0).unwrap_err();
        assert!(
            matches!(
                e,
                Error::HostOutOfMemory {
                    requested: None,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("address space"), "{e}");
    }

    #[test]
    fn a_request_no_allocator_grants_is_an_error() {
        // 2⁶² bytes: within isize, beyond any machine.
        let e = filled_vec::<u8>("matmul", 1 << 62, 0).unwrap_err();
        assert!(
            matches!(e, Error::HostOutOfMemory { op: "matmul", requested: Some(b) } if b == 1 << 62),
            "{e}"
        );
    }

    #[test]
    fn ordinary_sizes_are_filled() {
        let a = filled("t", (2, 3), 7u8).unwrap();
        assert_eq!(a.dim(), (2, 3));
        assert!(a.iter().all(|&v| v == 7));
        assert_eq!(filled1("t", 0, 1.0f32).unwrap().len(), 0);
    }
}
