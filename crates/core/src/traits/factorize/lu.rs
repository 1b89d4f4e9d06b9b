//! LU's checks and the host arithmetic around its kernels.

use ndarray::{Array2, ArrayView2};

use super::{fk, Factorize};
use crate::factors::{self, row_major};
use crate::{backend, check, Element, Error, FactorLayout, LuFactor, Matrix, Result, Trans};

pub(super) fn factor<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    a: Matrix<T>,
) -> Result<LuFactor<T>> {
    match (fk(b, "lu")?, a.dim()) {
        // Nothing to factor: no swaps, no pivots.
        (_, dim) if a.is_empty() => {
            let none = b.unlabeled(0)?;
            Ok(backend::lu_factor(
                a,
                none,
                FactorLayout::RowMajor,
                dim,
                None,
            ))
        }
        (kern, _) => kern.lu_unchecked(a),
    }
}

/// The order of a square factor.
fn order<T: Element>(op: &'static str, f: &LuFactor<T>) -> Result<usize> {
    check::square_dim(op, f.dim())
}

pub(super) fn solve<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    (op, f): (&'static str, &LuFactor<T>),
    trans: Trans,
    x: &mut Matrix<T>,
) -> Result<()> {
    let kern = fk(b, op)?;
    let n = order(op, f)?;
    check::rhs(op, n, x.dim())?;
    if let Some(pivot) = f.zero_pivot() {
        return Err(Error::Singular { op, pivot });
    }
    if n == 0 || x.is_empty() {
        return Ok(());
    }
    kern.lu_solve_unchecked(f, trans, x)
}

/// The packed factor (row-major) and its swaps, on the host.
pub(super) fn host<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    f: &LuFactor<T>,
) -> Result<(Array2<T>, Vec<usize>)> {
    let packed = row_major(b.download(f.packed())?, f.layout());
    Ok((packed, b.download_indices(f.pivots())?.to_vec()))
}

pub(super) fn slogdet<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    f: &LuFactor<T>,
) -> Result<(f64, f64)> {
    order("slogdet", f)?;
    let (packed, pivots) = host(b, f)?;
    Ok(factors::slogdet(packed.view(), &pivots))
}

pub(super) fn det<T: Element, B: Factorize<T> + ?Sized>(b: &B, f: &LuFactor<T>) -> Result<T> {
    order("det", f)?;
    let (packed, pivots) = host(b, f)?;
    let mut d = 1.0f64;
    for (i, &p) in pivots.iter().enumerate() {
        d *= if p == i { 1.0 } else { -1.0 } * packed[[i, i]].as_f64();
    }
    // A singular matrix has determinant 0, not −0.
    Ok(T::from_f64(if d == 0.0 { 0.0 } else { d }))
}

/// The identity, resident.
pub(super) fn eye<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    rows: usize,
    cols: usize,
) -> Result<Matrix<T>> {
    b.upload(Array2::eye(rows.max(cols)).slice(ndarray::s![..rows, ..cols]))
}

pub(super) fn inv<T: Element, B: Factorize<T> + ?Sized>(b: &B, a: &Matrix<T>) -> Result<Matrix<T>> {
    let n = check::square_dim("inv", a.dim())?;
    let f = b.lu_dev(a)?;
    let mut x = eye(b, n, n)?;
    solve(b, ("inv", &f), Trans::No, &mut x)?;
    Ok(x)
}

/// The checks of the host forms taking a square A (and a B): square, finite.
pub(super) fn square_inputs<T: Element>(
    op: &'static str,
    a: &ArrayView2<T>,
    rhs: Option<&ArrayView2<T>>,
) -> Result<()> {
    let n = check::square(op, a)?;
    check::finite(op, "A", a)?;
    if let Some(r) = rhs {
        check::rhs(op, n, r.dim())?;
        check::finite(op, "B", r)?;
    }
    Ok(())
}
