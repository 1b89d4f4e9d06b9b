//! Input checks shared by every backend, so that bad input gets the same error
//! everywhere, before any device work starts.

use ndarray::{ArrayView1, ArrayView2, Axis};

use crate::kmeans::{Init, KMeansConfig};
use crate::{Element, Error, Gemm, Result, Trans};

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

/// Checks a solve with a factor of order `n` against a right-hand side of shape `b`.
/// Returns `nrhs`.
///
/// # Errors
/// [`Error::ShapeMismatch`].
pub fn solve_dims(n: usize, b: (usize, usize)) -> Result<usize> {
    if b.0 != n {
        return Err(Error::shape(
            "cholesky_solve",
            format!("L is {n}x{n} but B has {} rows", b.0),
        ));
    }
    Ok(b.1)
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
    if a.is_empty() {
        return Err(Error::Empty {
            op,
            rows: a.nrows(),
            cols: a.ncols(),
        });
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

/// Checks a k-means configuration against data of N points × D dimensions.
///
/// # Errors
/// [`Error::InvalidArgument`] for k = 0, k > N, max_iter = 0, tol outside [0, 1], given
/// centroids of the wrong shape; [`Error::NonFinite`] for NaN/Inf in given centroids.
pub fn kmeans_config(n: usize, d: usize, config: &KMeansConfig) -> Result<()> {
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
    if let Some(t) = config.shift_tol {
        if !(t.is_finite() && t >= 0.0) {
            return Err(Error::invalid(
                "kmeans",
                format!("shift_tol = {t}: it must be finite and at least 0"),
            ));
        }
    }
    if config.n_init == 0 {
        return Err(Error::invalid("kmeans", "n_init must be at least 1"));
    }
    if let Init::KMeansParallel {
        oversampling,
        rounds,
    } = config.init
    {
        if !(oversampling.is_finite() && oversampling > 0.0) {
            return Err(Error::invalid(
                "kmeans",
                format!("k-means|| oversampling = {oversampling}: it must be finite and positive"),
            ));
        }
        if !(1..=64).contains(&rounds) {
            return Err(Error::invalid(
                "kmeans",
                format!("k-means|| rounds = {rounds}: it must be 1 to 64"),
            ));
        }
    }
    if let Init::Given(c) = &config.init {
        if c.dim() != (config.k, d) {
            return Err(Error::invalid(
                "kmeans",
                format!(
                    "given centroids are {}x{}, expected k x D = {}x{d}",
                    c.nrows(),
                    c.ncols(),
                    config.k
                ),
            ));
        }
        finite("kmeans", "init centroids", &c.view())?;
    }
    Ok(())
}

/// Checks the shapes of `predict`: points N×D, centroids K×D with K ≥ 1.
///
/// # Errors
/// [`Error::InvalidArgument`] for no centroids, [`Error::ShapeMismatch`] for a
/// dimension mismatch.
pub fn predict_dims(x: (usize, usize), c: (usize, usize)) -> Result<()> {
    if c.0 == 0 {
        return Err(Error::invalid("predict", "no centroids"));
    }
    if x.1 != c.1 {
        return Err(Error::shape(
            "predict",
            format!("points have {} dimensions, centroids {}", x.1, c.1),
        ));
    }
    Ok(())
}

/// Checks the operands of a k-means step: points N×D, centroids K×D (K ≥ 1), N labels.
///
/// # Errors
/// [`Error::InvalidArgument`] for no centroids, [`Error::ShapeMismatch`].
pub fn kmeans_step(x: (usize, usize), c: (usize, usize), labels: usize) -> Result<()> {
    if c.0 == 0 {
        return Err(Error::invalid("kmeans", "no centroids"));
    }
    if x.1 != c.1 {
        return Err(Error::shape(
            "kmeans",
            format!("points have {} dimensions, centroids {}", x.1, c.1),
        ));
    }
    if labels != x.0 {
        return Err(Error::shape(
            "kmeans",
            format!("{labels} labels for {} points", x.0),
        ));
    }
    Ok(())
}

/// Checks `predict`'s host operands. Returns `(n, k, d)`.
///
/// # Errors
/// As [`predict_dims`]; [`Error::NonFinite`].
pub fn predict<T: Element>(x: &ArrayView2<T>, c: &ArrayView2<T>) -> Result<(usize, usize, usize)> {
    predict_dims(x.dim(), c.dim())?;
    finite("predict", "X", x)?;
    finite("predict", "centroids", c)?;
    Ok((x.nrows(), c.nrows(), x.ncols()))
}

/// A host array and a resident matrix of one shape, as [`Memory::upload_into`] and
/// [`Memory::download_into`] need.
///
/// [`Memory::upload_into`]: crate::Memory::upload_into
/// [`Memory::download_into`]: crate::Memory::download_into
///
/// # Errors
/// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) naming both shapes.
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
