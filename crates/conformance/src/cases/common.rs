//! Helpers shared by the resident cases of every family: arrays from another place,
//! bit-for-bit comparison, the expected refusals, and the copying and in-place forms
//! run side by side. A leaf: it takes nothing from the case files.

use std::fmt::Debug;

use ndarray::Array2;
use ndgpu_core::backend::{self, Storage};
use ndgpu_core::{Element, Error, Matrix, Ops, Place, Result};

use crate::report::Verdict;

/// A storage that lives nowhere a backend computes: every backend must refuse it.
#[derive(Debug)]
struct Elsewhere;

impl Storage for Elsewhere {
    fn place(&self) -> Place {
        Place::Cuda {
            device: usize::MAX,
            runtime: u64::MAX,
        }
    }
}

/// A rows×cols matrix from nowhere: of the shape the operation wants, so that the
/// place is what it refuses.
pub(super) fn foreign_of<T: Element>(rows: usize, cols: usize) -> Matrix<T> {
    backend::matrix(rows, cols, Elsewhere)
}

/// Whether two sequences hold the same values to the bit (NaN included).
pub(super) fn same_bits<'a, T: Element>(
    a: impl Iterator<Item = &'a T>,
    b: impl Iterator<Item = &'a T>,
) -> bool {
    a.zip(b)
        .all(|(x, y)| x.as_f64().to_bits() == y.as_f64().to_bits())
}

/// Requires `r` to be [`Error::ShapeMismatch`] (`what`: the case, for the report).
pub(super) fn shape_mismatch<V: Debug>(v: &mut Verdict, r: Result<V>, what: &str) {
    v.err(r, what, |e| matches!(e, Error::ShapeMismatch { .. }));
}

/// Requires `r` to be [`Error::WrongPlace`] (`what`: the case, for the report).
pub(super) fn wrong_place<V: Debug>(v: &mut Verdict, r: Result<V>, what: &str) {
    v.err(r, what, |e| matches!(e, Error::WrongPlace { .. }));
}

/// Uploads `a` twice and runs the copying form on one upload and the in-place form on
/// the other: the copying form's input (to check it was left alone) and both results.
pub(super) fn both_forms<T: Element, B: Ops<T> + ?Sized, F>(
    v: &mut Verdict,
    b: &B,
    a: &Array2<T>,
    copying: impl FnOnce(&Matrix<T>) -> Result<F>,
    in_place: impl FnOnce(Matrix<T>) -> Result<F>,
) -> Option<(Matrix<T>, F, F)> {
    let da = v.ok(b.upload(a.view()))?;
    let moved = b.upload(a.view()).and_then(in_place);
    let (f, g) = v.both(copying(&da), moved)?;
    Some((da, f, g))
}

/// Requires the copying and in-place factors to agree and the copying form (`op`) to
/// have left its input alone.
pub(super) fn agree_and_kept(v: &mut Verdict, same: bool, kept: bool, op: &str) {
    v.require(same, || "the copying and in-place factors differ".into());
    v.require(kept, || format!("{op} changed its input"));
}

/// Requires `r` to be [`Error::NonFinite`] at `index` (row, column).
pub(super) fn non_finite_at<V: Debug>(v: &mut Verdict, r: Result<V>, index: (usize, usize)) {
    let what = format!("NonFinite at ({}, {})", index.0, index.1);
    v.err(
        r,
        &what,
        |e| matches!(e, Error::NonFinite { index: at, .. } if *at == index),
    );
}

/// Uploads each of `arrays`, reporting every failure: all of them, or `None`.
pub(super) fn upload_all<T: Element, B: Ops<T> + ?Sized, const N: usize>(
    v: &mut Verdict,
    b: &B,
    arrays: [&Array2<T>; N],
) -> Option<[Matrix<T>; N]> {
    let got: Vec<Option<Matrix<T>>> = arrays.map(|a| v.ok(b.upload(a.view()))).into();
    let all: Vec<Matrix<T>> = got.into_iter().collect::<Option<_>>()?;
    all.try_into().ok()
}
