//! Input checks shared by every backend, so that bad input gets the same error
//! everywhere, before any device work starts.

use ndarray::{ArrayView1, ArrayView2, Axis};

use crate::{Element, Error, KMeansConfig, Result, Trans};

/// Checks `alpha·op(A)·op(B) + beta·C` and returns `(m, n, k)`.
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
    let (m, k) = ta.apply(a).dim();
    let (k2, n) = tb.apply(b).dim();
    if k != k2 {
        return Err(Error::shape(
            "gemm",
            format!("op(A) is {m}x{k} but op(B) is {k2}x{n}: inner dimensions {k} and {k2} differ"),
        ));
    }
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

/// Checks that `a` is square and returns its order.
///
/// # Errors
/// [`Error::NotSquare`].
pub fn square<T>(op: &'static str, a: &ArrayView2<T>) -> Result<usize> {
    let (r, c) = a.dim();
    if r != c {
        return Err(Error::NotSquare {
            op,
            rows: r,
            cols: c,
        });
    }
    Ok(r)
}

/// Checks that every element is finite (row-major order: the first offender is named).
///
/// # Errors
/// [`Error::NonFinite`].
pub fn finite<T: Element>(op: &'static str, what: &'static str, a: &ArrayView2<T>) -> Result<()> {
    match a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        Some((index, v)) => Err(Error::NonFinite {
            op,
            what,
            value: v.as_f64(),
            index,
        }),
        None => Ok(()),
    }
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

/// Checks a triangular solve `L·Lᵀ·X = B`: L square, B with as many rows, B finite, the
/// diagonal of L finite and non-zero. Returns `(n, nrhs)`.
///
/// # Errors
/// [`Error::NotSquare`], [`Error::ShapeMismatch`], [`Error::NonFinite`].
pub fn cholesky_solve<T: Element>(l: &ArrayView2<T>, b: &ArrayView2<T>) -> Result<(usize, usize)> {
    let n = square("cholesky_solve", l)?;
    if b.nrows() != n {
        return Err(Error::shape(
            "cholesky_solve",
            format!("L is {n}x{n} but B has {} rows", b.nrows()),
        ));
    }
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
    finite("cholesky_solve", "B", b)?;
    Ok((n, b.ncols()))
}

/// Checks that a min/max-style reduction has something to reduce.
///
/// # Errors
/// [`Error::Empty`].
pub fn nonempty<T>(op: &'static str, a: &ArrayView2<T>) -> Result<()> {
    if a.is_empty() {
        return Err(Error::Empty {
            op,
            rows: a.nrows(),
            cols: a.ncols(),
        });
    }
    Ok(())
}

/// Checks an axis of a 2-D reduction; for min/max-style ops (`needs_element`) the
/// reduced axis must be non-empty unless the result is empty too.
///
/// # Errors
/// [`Error::InvalidArgument`] for an axis other than 0 or 1; [`Error::Empty`].
pub fn axis<T>(op: &'static str, a: &ArrayView2<T>, axis: Axis, needs_element: bool) -> Result<()> {
    if axis.index() > 1 {
        return Err(Error::invalid(
            op,
            format!("axis {} of a 2-D array", axis.index()),
        ));
    }
    let reduced = a.len_of(axis);
    let kept = a.len_of(Axis(1 - axis.index()));
    if needs_element && reduced == 0 && kept > 0 {
        return Err(Error::Empty {
            op,
            rows: a.nrows(),
            cols: a.ncols(),
        });
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

/// Checks k-means data and configuration.
///
/// # Errors
/// [`Error::InvalidArgument`] for k = 0, k > N, max_iter = 0, tol outside [0, 1], given
/// centroids of the wrong shape; [`Error::NonFinite`] for NaN/Inf in the data.
pub fn kmeans<T: Element>(x: ArrayView2<T>, config: &KMeansConfig) -> Result<()> {
    let (n, d) = x.dim();
    if config.k == 0 {
        return Err(Error::invalid("kmeans", "k must be at least 1"));
    }
    if config.k > n {
        return Err(Error::invalid(
            "kmeans",
            format!(
                "k = {} is larger than the number of points N = {n}",
                config.k
            ),
        ));
    }
    if config.max_iter == 0 {
        return Err(Error::invalid("kmeans", "max_iter must be at least 1"));
    }
    if !(0.0..=1.0).contains(&config.tol) {
        return Err(Error::invalid(
            "kmeans",
            format!("tol = {} is outside [0, 1]", config.tol),
        ));
    }
    crate::kmeans::check_given(&config.init, config.k, d)?;
    finite("kmeans", "X", &x)
}

/// Checks `predict`'s operands. Returns `(n, k, d)`.
///
/// # Errors
/// [`Error::InvalidArgument`] for no centroids, [`Error::ShapeMismatch`] for a
/// dimension mismatch, [`Error::NonFinite`].
pub fn predict<T: Element>(x: &ArrayView2<T>, c: &ArrayView2<T>) -> Result<(usize, usize, usize)> {
    if c.nrows() == 0 {
        return Err(Error::invalid("predict", "no centroids"));
    }
    if x.ncols() != c.ncols() {
        return Err(Error::shape(
            "predict",
            format!(
                "points have {} dimensions, centroids {}",
                x.ncols(),
                c.ncols()
            ),
        ));
    }
    finite("predict", "X", x)?;
    finite("predict", "centroids", c)?;
    Ok((x.nrows(), c.nrows(), x.ncols()))
}
