//! The spectra's checks and the host arithmetic around their kernels: the symmetric
//! eigendecomposition (`eigh`, `eigvalsh`) and the SVD (`svd`, `svdvals`).

use ndarray::{s, Array1, Array2, ArrayView2};

use super::{fk, Factorize};
use crate::{check, Element, Error, Matrix, QrMode, Result};

/// The reduced SVD's parts: `(U, Vt)` when asked for.
type Vectors<M> = Option<(M, M)>;

/// A kernel's vectors, which it must give when asked for.
pub(super) fn vectors<M>(op: &'static str, v: Option<M>) -> Result<M> {
    v.ok_or_else(|| Error::invalid(op, "the backend's kernel gave no vectors when asked for"))
}

/// The eigenvalues (n×1, ascending) and, when `vectors`, the eigenvectors of a
/// resident symmetric matrix given by its lower triangle.
pub(super) fn eigh<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    (op, a): (&'static str, &Matrix<T>),
    vectors: bool,
) -> Result<(Matrix<T>, Option<Matrix<T>>)> {
    let kern = fk(b, op)?;
    match check::square_dim(op, a.dim())? {
        0 => Ok((b.zeros(0, 1)?, vectors.then(|| b.zeros(0, 0)).transpose()?)),
        _ => kern.eigh_unchecked(a, vectors),
    }
}

/// The singular values (k×1, descending) and, when `vectors`, `(U, Vt)` of the reduced
/// SVD of a resident m×n matrix (k = min(m, n)).
pub(super) fn svd<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    op: &'static str,
    a: &Matrix<T>,
    vectors: bool,
) -> Result<(Matrix<T>, Vectors<Matrix<T>>)> {
    let kern = fk(b, op)?;
    let (m, n) = a.dim();
    if m.min(n) == 0 {
        let uv = match vectors {
            true => Some((b.zeros(m, 0)?, b.zeros(0, n)?)),
            false => None,
        };
        return Ok((b.zeros(0, 1)?, uv));
    }
    kern.svd_unchecked(a, vectors)
}

/// A resident k×1 matrix as a host vector.
fn column<T: Element, B: Factorize<T> + ?Sized>(b: &B, m: &Matrix<T>) -> Result<Array1<T>> {
    Ok(b.download(m)?.column(0).to_owned())
}

/// `eigh` of a host array: checks it (square, lower triangle finite), then the kernels.
pub(super) fn eigh_host<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    op: &'static str,
    a: ArrayView2<T>,
    vectors: bool,
) -> Result<(Array1<T>, Option<Array2<T>>)> {
    check::square(op, &a)?;
    check::finite_lower(op, "A", &a)?;
    let (w, v) = eigh(b, (op, &b.upload(a)?), vectors)?;
    Ok((column(b, &w)?, v.map(|v| b.download(&v)).transpose()?))
}

/// `svd` of a host array: checks it (finite), then the kernels; `full` is `None` for
/// the singular values alone, else `Some(full_matrices)`.
pub(super) fn svd_host<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    op: &'static str,
    a: ArrayView2<T>,
    full: Option<bool>,
) -> Result<(Array1<T>, Vectors<Array2<T>>)> {
    check::finite(op, "A", &a)?;
    let (s, uv) = svd(b, op, &b.upload(a)?, full.is_some())?;
    let s = column(b, &s)?;
    let Some(full) = full else {
        return Ok((s, None));
    };
    let (u, vt) = vectors(op, uv)?;
    let (u, vt) = (b.download(&u)?, b.download(&vt)?);
    if !full {
        return Ok((s, Some((u, vt))));
    }
    let v = complete(b, vt.t())?;
    Ok((
        s,
        Some((
            complete(b, u.view())?,
            v.t().as_standard_layout().into_owned(),
        )),
    ))
}

/// An m×m orthogonal matrix whose first k columns are those of `u` (m×k, orthonormal
/// columns): the rest are the last m − k columns of the complete QR of `u`'s Q, which
/// are orthogonal to the columns of `u` to within the QR's rounding.
fn complete<T: Element, B: Factorize<T> + ?Sized>(b: &B, u: ArrayView2<T>) -> Result<Array2<T>> {
    let (m, k) = u.dim();
    let mut out = Array2::zeros((m, m));
    out.slice_mut(s![.., ..k]).assign(&u);
    if k == 0 {
        out.diag_mut().fill(T::one());
    } else if k < m {
        let (q, _) = b.qr(u, QrMode::Complete)?;
        out.slice_mut(s![.., k..]).assign(&q.slice(s![.., k..]));
    }
    Ok(out)
}
