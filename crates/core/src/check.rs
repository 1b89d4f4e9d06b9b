//! Input checks shared by every backend, so that bad input gets the same error
//! everywhere, before any device work starts.

use ndarray::{ArrayView1, ArrayView2, Axis};

use crate::{Element, Error, Gemm, Result, Trans};

mod kmeans;
pub use kmeans::*;

/// Checks that op(A)·op(B) is defined and returns `(m, n, k)`.
///
/// # Errors
/// [`Error::ShapeMismatch`] when the inner dimensions differ.
pub fn gemm_dims(
    ta: Trans,
    a: (usize, usize),
    tb: Trans,
    b: (usize, usize),
) -> Result<(usize, usize, usize)> {
    let (m, k) = ta.dim(a);
    let (k2, n) = tb.dim(b);
    if k != k2 {
        return Err(Error::shape(
            "gemm",
            format!("op(A) is {m}x{k} but op(B) is {k2}x{n}: inner dimensions {k} and {k2} differ"),
        ));
    }
    Ok((m, n, k))
}

/// Checks a resident `C ← α·op(A)·op(B) + β·C`: the product is defined and C (the
/// output, whatever β) is m×n. Returns `(m, n, k)`.
///
/// # Errors
/// [`Error::ShapeMismatch`].
pub fn gemm_dev<T>(
    g: &Gemm<T>,
    a: (usize, usize),
    b: (usize, usize),
    c: (usize, usize),
) -> Result<(usize, usize, usize)> {
    let (m, n, k) = gemm_dims(g.ta, a, g.tb, b)?;
    if c != (m, n) {
        return Err(Error::shape(
            "gemm",
            format!("C is {}x{}, expected {m}x{n}", c.0, c.1),
        ));
    }
    Ok((m, n, k))
}

/// Checks `alpha·op(A)·op(B) + beta·C` of host arrays and returns `(m, n, k)`.
///
/// # Errors
/// [`Error::ShapeMismatch`] when the inner dimensions differ, or `c` is missing or of
/// the wrong shape while `beta ≠ 0`.
pub fn gemm<T: Element>(
    a: ArrayView2<T>,
    ta: Trans,
    b: ArrayView2<T>,
    tb: Trans,
    beta: T,
    c: Option<&ArrayView2<T>>,
) -> Result<(usize, usize, usize)> {
    let (m, n, k) = gemm_dims(ta, a.dim(), tb, b.dim())?;
    if beta != T::zero() {
        match c {
            None => return Err(Error::shape("gemm", "beta is non-zero but no C was given")),
            Some(c) if c.dim() != (m, n) => {
                return Err(Error::shape(
                    "gemm",
                    format!("C is {}x{}, expected {m}x{n}", c.nrows(), c.ncols()),
                ))
            }
            _ => {}
        }
    }
    Ok((m, n, k))
}

/// Checks that a matrix of shape `dim` is square and returns its order.
///
/// # Errors
/// [`Error::NotSquare`].
pub fn square_dim(op: &'static str, (rows, cols): (usize, usize)) -> Result<usize> {
    if rows != cols {
        return Err(Error::NotSquare { op, rows, cols });
    }
    Ok(rows)
}

/// Checks that `a` is square and returns its order.
///
/// # Errors
/// [`Error::NotSquare`].
pub fn square<T>(op: &'static str, a: &ArrayView2<T>) -> Result<usize> {
    square_dim(op, a.dim())
}

/// Checks that every element is finite (row-major order: the first offender is named).
///
/// # Errors
/// [`Error::NonFinite`].
pub fn finite<T: Element>(op: &'static str, what: &'static str, a: &ArrayView2<T>) -> Result<()> {
    finite_where(op, what, a, |_, _| true)
}

/// Checks the lower triangle (diagonal included) of a square matrix for NaN/Inf.
///
/// # Errors
/// [`Error::NonFinite`].
pub fn finite_lower<T: Element>(
    op: &'static str,
    what: &'static str,
    a: &ArrayView2<T>,
) -> Result<()> {
    for i in 0..a.nrows() {
        for j in 0..=i.min(a.ncols().saturating_sub(1)) {
            let v = a[[i, j]];
            if !v.is_finite() {
                return Err(Error::NonFinite {
                    op,
                    what,
                    value: v.as_f64(),
                    index: (i, j),
                });
            }
        }
    }
    Ok(())
}

/// Checks a Cholesky input: square, lower triangle finite. Returns n.
///
/// # Errors
/// [`Error::NotSquare`], [`Error::NonFinite`].
pub fn cholesky<T: Element>(a: &ArrayView2<T>) -> Result<usize> {
    let n = square("cholesky", a)?;
    finite_lower("cholesky", "A", a)?;
    Ok(n)
}

/// Checks a solve with a factor of order `n` against a right-hand side of shape `b`.
/// Returns `nrhs`.
///
/// # Errors
/// [`Error::ShapeMismatch`].
pub fn solve_dims(n: usize, b: (usize, usize)) -> Result<usize> {
    rhs("cholesky_solve", n, b)
}

/// Checks that a right-hand side of shape `b` has the `n` rows of `op`'s matrix.
/// Returns its number of columns.
///
/// # Errors
/// [`Error::ShapeMismatch`].
pub fn rhs(op: &'static str, n: usize, b: (usize, usize)) -> Result<usize> {
    if b.0 != n {
        return Err(Error::shape(
            op,
            format!("A has {n} rows but B has {} rows", b.0),
        ));
    }
    Ok(b.1)
}

/// Checks the entries of `a` that `keep(i, j)` selects for NaN/Inf (row-major order).
///
/// # Errors
/// [`Error::NonFinite`].
pub fn finite_where<T: Element>(
    op: &'static str,
    what: &'static str,
    a: &ArrayView2<T>,
    keep: impl Fn(usize, usize) -> bool,
) -> Result<()> {
    match a
        .indexed_iter()
        .find(|&((i, j), v)| keep(i, j) && !v.is_finite())
    {
        Some((index, v)) => Err(Error::NonFinite {
            op,
            what,
            value: v.as_f64(),
            index,
        }),
        None => Ok(()),
    }
}

/// Checks a host triangular solve: A square, B with its rows, the triangle of A that is
/// read and all of B finite, no zero on a diagonal that is read. Returns n.
///
/// # Errors
/// [`Error::NotSquare`], [`Error::ShapeMismatch`], [`Error::NonFinite`],
/// [`Error::Singular`].
pub fn triangular<T: Element>(
    a: &ArrayView2<T>,
    tri: crate::Triangular,
    b: &ArrayView2<T>,
) -> Result<usize> {
    let op = "solve_triangular";
    let n = square(op, a)?;
    rhs(op, n, b.dim())?;
    let upper = tri.uplo == crate::Uplo::Upper;
    finite_where(op, "A", a, |i, j| {
        (if upper { j >= i } else { j <= i }) && !(tri.unit && i == j)
    })?;
    finite(op, "B", b)?;
    match (0..n).find(|&i| !tri.unit && a[[i, i]] == T::zero()) {
        Some(pivot) => Err(Error::Singular { op, pivot }),
        None => Ok(n),
    }
}

/// Checks a host array given as a Cholesky factor: square, lower triangle finite, the
/// diagonal non-zero. Returns n.
///
/// # Errors
/// [`Error::NotSquare`], [`Error::NonFinite`].
pub fn cholesky_factor<T: Element>(l: &ArrayView2<T>) -> Result<usize> {
    let n = square("cholesky_solve", l)?;
    finite_lower("cholesky_solve", "L", l)?;
    for i in 0..n {
        if l[[i, i]] == T::zero() {
            return Err(Error::NonFinite {
                op: "cholesky_solve",
                what: "L (zero diagonal)",
                value: 0.0,
                index: (i, i),
            });
        }
    }
    Ok(n)
}

/// Checks a triangular solve `L·Lᵀ·X = B` of host arrays: L as
/// [`cholesky_factor`], B with as many rows, B finite. Returns `(n, nrhs)`.
///
/// # Errors
/// [`Error::NotSquare`], [`Error::ShapeMismatch`], [`Error::NonFinite`].
pub fn cholesky_solve<T: Element>(l: &ArrayView2<T>, b: &ArrayView2<T>) -> Result<(usize, usize)> {
    let n = square("cholesky_solve", l)?;
    let nrhs = solve_dims(n, b.dim())?;
    cholesky_factor(l)?;
    finite("cholesky_solve", "B", b)?;
    Ok((n, nrhs))
}

/// Checks that a min/max-style reduction has something to reduce.
///
/// # Errors
/// [`Error::Empty`].
pub fn nonempty<T>(op: &'static str, a: &ArrayView2<T>) -> Result<()> {
    nonempty_dim(op, a.dim())
}

/// [`nonempty`] of a matrix of shape `dim`.
///
/// # Errors
/// [`Error::Empty`].
pub fn nonempty_dim(op: &'static str, (rows, cols): (usize, usize)) -> Result<()> {
    if rows == 0 || cols == 0 {
        return Err(Error::Empty { op, rows, cols });
    }
    Ok(())
}

/// Checks an axis of a 2-D reduction of a matrix of shape `dim`; for min/max-style ops
/// (`needs_element`) the reduced axis must be non-empty unless the result is empty too.
/// Returns the length of the result (the kept axis).
///
/// # Errors
/// [`Error::InvalidArgument`] for an axis other than 0 or 1; [`Error::Empty`].
pub fn axis_dims(
    op: &'static str,
    (rows, cols): (usize, usize),
    axis: Axis,
    needs_element: bool,
) -> Result<usize> {
    let (reduced, kept) = match axis.index() {
        0 => (rows, cols),
        1 => (cols, rows),
        i => return Err(Error::invalid(op, format!("axis {i} of a 2-D array"))),
    };
    if needs_element && reduced == 0 && kept > 0 {
        return Err(Error::Empty { op, rows, cols });
    }
    Ok(kept)
}

/// [`axis_dims`] of a host array.
///
/// # Errors
/// As [`axis_dims`].
pub fn axis<T>(op: &'static str, a: &ArrayView2<T>, axis: Axis, needs_element: bool) -> Result<()> {
    axis_dims(op, a.dim(), axis, needs_element).map(drop)
}

/// Checks that two operands have the same shape (a resident dot product).
///
/// # Errors
/// [`Error::ShapeMismatch`].
pub fn same_shape(op: &'static str, x: (usize, usize), y: (usize, usize)) -> Result<()> {
    if x != y {
        return Err(Error::shape(
            op,
            format!("x is {}x{} but y is {}x{}", x.0, x.1, y.0, y.1),
        ));
    }
    Ok(())
}

/// Checks that a copy's source and destination have one shape.
///
/// # Errors
/// [`Error::ShapeMismatch`] naming both.
pub fn copy_dims(op: &'static str, src: (usize, usize), dst: (usize, usize)) -> Result<()> {
    if src != dst {
        return Err(Error::shape(
            op,
            format!(
                "source is {}x{}, destination {}x{}",
                src.0, src.1, dst.0, dst.1
            ),
        ));
    }
    Ok(())
}

/// Checks a dot product's operands. Returns their length.
///
/// # Errors
/// [`Error::ShapeMismatch`].
pub fn dot<T>(x: &ArrayView1<T>, y: &ArrayView1<T>) -> Result<usize> {
    if x.len() != y.len() {
        return Err(Error::shape(
            "dot",
            format!("x has {} elements, y has {}", x.len(), y.len()),
        ));
    }
    Ok(x.len())
}

/// A host array and a resident matrix of one shape, as [`Memory::upload_into`] and
/// [`Memory::download_into`] need.
///
/// [`Memory::upload_into`]: crate::Memory::upload_into
/// [`Memory::download_into`]: crate::Memory::download_into
///
/// # Errors
/// [`Error::ShapeMismatch`] naming both shapes.
pub fn transfer_shape(
    op: &'static str,
    host: (usize, usize),
    resident: (usize, usize),
) -> Result<()> {
    if host == resident {
        return Ok(());
    }
    Err(Error::shape(
        op,
        format!(
            "the host array is {}x{}, the resident matrix {}x{}",
            host.0, host.1, resident.0, resident.1
        ),
    ))
}
