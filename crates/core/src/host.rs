//! Host allocation of results that may be far larger than their inputs.
//!
//! Most results are bounded by the bytes of their inputs, but not all: an m×0 times a
//! 0×n matrix is an m×n matrix of zeros, and a 10¹²×0 matrix takes no bytes at all.
//! ndarray's constructors abort the process (or panic on overflow) when such a result
//! cannot be allocated; these return [`Error::HostOutOfMemory`] instead. A request
//! larger than the machine's memory and swap together is refused before the allocator
//! sees it: where the kernel overcommits, such an allocation would succeed and the
//! process would be killed when the pages are first written.

use std::sync::OnceLock;

use ndarray::{Array1, Array2};

use crate::{Element, Error, Result};

/// The bytes of physical memory and swap together (Linux: `/proc/meminfo`), or `None`
/// where that is not known.
fn memory_and_swap() -> Option<usize> {
    static BYTES: OnceLock<Option<usize>> = OnceLock::new();
    *BYTES.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kib = |key: &str| -> Option<usize> {
            let line = info.lines().find(|l| l.starts_with(key))?;
            line[key.len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()
        };
        kib("MemTotal:")?
            .checked_add(kib("SwapTotal:").unwrap_or(0))?
            .checked_mul(1024)
    })
}

/// `Some(bytes)` when the machine could hold them (see [`memory_and_swap`]).
fn could_hold(bytes: Option<usize>) -> Option<usize> {
    bytes.filter(|&b| memory_and_swap().is_none_or(|limit| b <= limit))
}

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
    could_hold(bytes).ok_or_else(oom)?;
    let mut v = Vec::new();
    v.try_reserve_exact(cap).map_err(|_| oom())?;
    Ok(v)
}

/// A `rows`×`cols` matrix of zeros, allocated fallibly and zeroed by the allocator: a
/// large one comes as fresh zero pages, touched first by whoever writes it (the
/// threads that unpack a download, say), not by a zeroing pass here.
///
/// # Errors
/// As [`with_capacity`].
pub fn zeros<T: Element>(op: &'static str, (rows, cols): (usize, usize)) -> Result<Array2<T>> {
    let len = rows.checked_mul(cols).ok_or(Error::HostOutOfMemory {
        op,
        requested: None,
    })?;
    let oom = |bytes| Error::HostOutOfMemory {
        op,
        requested: bytes,
    };
    let v = if len == 0 || std::mem::size_of::<T>() == 0 {
        Vec::new()
    } else {
        let layout = std::alloc::Layout::array::<T>(len)
            .map_err(|_| oom(len.checked_mul(std::mem::size_of::<T>())))?;
        could_hold(Some(layout.size())).ok_or_else(|| oom(Some(layout.size())))?;
        // SAFETY: the layout has a non-zero size (len > 0, T is f32 or f64).
        let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
        if p.is_null() {
            return Err(oom(Some(layout.size())));
        }
        // SAFETY: p was allocated by the global allocator with the layout of a [T; len]
        // (what Vec<T> with capacity len uses), and all-zero bits are 0.0 in f32 and f64,
        // the only element types (Element is sealed): every element is initialised.
        unsafe { Vec::from_raw_parts(p, len, len) }
    };
    Ok(Array2::from_shape_vec((rows, cols), v).expect("the length is rows × cols"))
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
    fn zeros_beyond_memory_and_swap_are_refused_before_allocating() {
        // 2²⁰ × 2²⁰ f64 is 8 TiB: an overcommitting kernel would hand out the zero pages.
        let e = zeros::<f64>("matmul", (1 << 20, 1 << 20)).unwrap_err();
        assert!(
            matches!(e, Error::HostOutOfMemory { op: "matmul", requested: Some(b) } if b == 1 << 43),
            "{e}"
        );
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
