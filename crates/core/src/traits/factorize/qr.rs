//! QR's checks and the host arithmetic around its kernels.

use ndarray::{s, Array2, ArrayView2};

use super::{fk, lu::eye, Factorize};
use crate::factors::row_major;
use crate::{
    backend, check, Element, Error, FactorLayout, Matrix, QrFactor, QrMode, Result, Trans,
};

pub(super) fn factor<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    a: Matrix<T>,
) -> Result<QrFactor<T>> {
    let kern = fk(b, "qr")?;
    if a.is_empty() {
        let dim = a.dim();
        return Ok(backend::qr_factor(
            a,
            b.zeros(0, 1)?,
            FactorLayout::RowMajor,
            dim,
        ));
    }
    kern.qr_unchecked(a)
}

pub(super) fn apply<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    f: &QrFactor<T>,
    trans: Trans,
    x: &mut Matrix<T>,
) -> Result<()> {
    let op = "qr_apply";
    let kern = fk(b, op)?;
    let (m, n) = f.dim();
    check::rhs(op, m, x.dim())?;
    if m.min(n) == 0 || x.is_empty() {
        return Ok(()); // no reflections: Q = I
    }
    kern.qr_apply_unchecked(f, trans, x)
}

/// Refuses an underdetermined problem.
fn tall(op: &'static str, (m, n): (usize, usize)) -> Result<()> {
    if m < n {
        return Err(Error::invalid(
            op,
            format!(
                "A is {m}x{n}, with fewer rows than columns: lstsq solves overdetermined or \
                 square problems of full column rank only"
            ),
        ));
    }
    Ok(())
}

pub(super) fn lstsq<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    a: &Matrix<T>,
    rhs: &Matrix<T>,
) -> Result<Matrix<T>> {
    let op = "lstsq";
    let kern = fk(b, op)?;
    tall(op, a.dim())?;
    let nrhs = check::rhs(op, a.rows(), rhs.dim())?;
    if a.cols() == 0 || nrhs == 0 {
        return b.zeros(a.cols(), nrhs);
    }
    kern.lstsq_unchecked(a, rhs)
}

pub(super) fn lstsq_host<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    a: ArrayView2<T>,
    rhs: ArrayView2<T>,
) -> Result<Array2<T>> {
    let op = "lstsq";
    tall(op, a.dim())?;
    check::rhs(op, a.nrows(), rhs.dim())?;
    check::finite(op, "A", &a)?;
    check::finite(op, "B", &rhs)?;
    let (a, rhs) = (b.upload(a)?, b.upload(rhs)?);
    b.download(&lstsq(b, &a, &rhs)?)
}

pub(super) fn qr_host<T: Element, B: Factorize<T> + ?Sized>(
    b: &B,
    a: ArrayView2<T>,
    mode: QrMode,
) -> Result<(Array2<T>, Array2<T>)> {
    check::finite("qr", "A", &a)?;
    let (m, n) = a.dim();
    let f = b.qr_in_place_dev(b.upload(a)?)?;
    let rows = match mode {
        QrMode::Reduced => m.min(n),
        QrMode::Complete => m,
    };
    let mut q = eye(b, m, rows)?;
    b.qr_apply_in_place_dev(&f, Trans::No, &mut q)?;
    let packed = row_major(b.download(f.packed())?, f.layout());
    let mut r = Array2::zeros((rows, n));
    let k = m.min(n);
    r.slice_mut(s![..k, ..])
        .assign(&Array2::from_shape_fn((k, n), |(i, j)| {
            if j >= i {
                packed[[i, j]]
            } else {
                T::zero()
            }
        }));
    Ok((b.download(&q)?, r))
}
