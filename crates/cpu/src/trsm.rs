//! Triangular solves (BLAS `trsm` with side = left) by forward or back substitution in
//! f64, and the pieces the LU and QR solves share with them: the f64 work array of a
//! right-hand side, the substitution itself, and the one rounding back to `T`.

use ndarray::{Array2, ArrayView2};
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{Element, Error, Matrix, Result, Trans, Triangular};

use crate::HERE;

/// A row-major f64 copy of a resident host matrix of shape `dim`.
pub(crate) fn work<T: Element>(dim: (usize, usize), data: &[T]) -> Array2<f64> {
    Array2::from_shape_fn(dim, |(i, j)| data[i * dim.1 + j].as_f64())
}

/// Rounds `x` into `out` (row-major, of the same number of elements), once per entry.
pub(crate) fn store<T: Element>(out: &mut [T], x: &Array2<f64>) {
    for (o, &v) in out.iter_mut().zip(x.iter()) {
        *o = T::from_f64(v);
    }
}

/// Solves `M·X = Y` in place on the n×nrhs work array `x` (Y in, X out), M the
/// triangular n×n matrix whose entry (i, k) is `m(i, k)`: lower when `forward` (rows
/// top to bottom, reading k ≤ i), upper otherwise (bottom to top, reading k ≥ i). With
/// `unit` the diagonal is taken as ones and `m(i, i)` is never asked for. Entries of
/// the other triangle are never asked for either.
///
/// Each column of `x` is solved on its own, so NaN or ±Inf in a column of Y stays in
/// that column of X.
pub(crate) fn substitute(
    x: &mut Array2<f64>,
    forward: bool,
    unit: bool,
    m: impl Fn(usize, usize) -> f64,
) {
    let (n, nrhs) = x.dim();
    for step in 0..n {
        let i = if forward { step } else { n - 1 - step };
        let done = if forward { 0..i } else { i + 1..n };
        for k in done {
            let f = m(i, k);
            for c in 0..nrhs {
                x[[i, c]] -= f * x[[k, c]];
            }
        }
        if !unit {
            let d = m(i, i);
            for c in 0..nrhs {
                x[[i, c]] /= d;
            }
        }
    }
}

/// Entry (i, k) of op(A) in f64.
fn op_entry<T: Element>(a: &ArrayView2<T>, trans: Trans, i: usize, k: usize) -> f64 {
    match trans {
        Trans::No => a[[i, k]].as_f64(),
        Trans::Yes => a[[k, i]].as_f64(),
    }
}

/// `op(T)·X = B` in place, T the triangle `tri` of the square `a`; the diagonal is
/// checked for a zero before `b` is touched.
pub(crate) fn solve<T: Element>(a: &Matrix<T>, tri: Triangular, b: &mut Matrix<T>) -> Result<()> {
    let op = "solve_triangular";
    let a = HERE.host_view(op, "A", a)?;
    let dim = b.dim();
    let b: &mut HostStorage<T> = HERE.matrix_mut(op, "B", b)?;
    if !tri.unit {
        let diag: Vec<T> = a.diag().to_vec();
        if let Some(pivot) = backend::first_zero_diagonal(&diag) {
            return Err(Error::Singular { op, pivot });
        }
    }
    let mut x = work(dim, &b.data);
    // op(T) is lower triangular exactly when the solve runs forward, so `substitute`
    // reads op(T) only on the side of its diagonal that `tri.uplo` names in A.
    substitute(&mut x, tri.forward(), tri.unit, |i, k| {
        op_entry(&a, tri.trans, i, k)
    });
    store(&mut b.data, &x);
    Ok(())
}

#[cfg(test)]
mod tests {
    use ndarray::{array, Array2};
    use ndgpu_core::prelude::*;
    use ndgpu_core::{Error, Trans, Triangular};

    use crate::CpuBackend;

    /// Every combination of triangle, transpose and unit diagonal on a 3×3 matrix
    /// whose other triangle (and, for unit, diagonal) is NaN: X satisfies op(T)·X = B.
    #[test]
    fn all_eight_combinations_read_only_their_triangle() {
        let cpu = CpuBackend::new();
        let full = array![[2.0f64, -1.0, 3.0], [0.5, 4.0, 1.0], [-2.0, 1.5, 5.0]];
        let b = array![[1.0f64, 0.0], [2.0, -1.0], [3.0, 0.5]];
        for upper in [false, true] {
            for trans in [Trans::No, Trans::Yes] {
                for unit in [false, true] {
                    let base = if upper {
                        Triangular::upper()
                    } else {
                        Triangular::lower()
                    };
                    let tri = base.trans(trans).unit(unit);
                    let keep = |i: usize, j: usize| {
                        (if upper { j >= i } else { j <= i }) && !(unit && i == j)
                    };
                    let poisoned = Array2::from_shape_fn((3, 3), |(i, j)| {
                        if keep(i, j) {
                            full[[i, j]]
                        } else {
                            f64::NAN
                        }
                    });
                    let t = Array2::from_shape_fn((3, 3), |(i, j)| match (keep(i, j), i == j) {
                        (true, _) => full[[i, j]],
                        (false, true) if unit => 1.0,
                        _ => 0.0,
                    });
                    let x = cpu
                        .solve_triangular(poisoned.view(), b.view(), tri)
                        .unwrap();
                    let r = trans.apply(t.view()).dot(&x) - &b;
                    assert!(r.iter().all(|v| v.abs() < 1e-14), "{tri:?}: {r}");
                }
            }
        }
    }

    #[test]
    fn a_zero_on_the_diagonal_is_singular_and_leaves_b_alone() {
        let cpu = CpuBackend::new();
        let a = array![[1.0f32, 0.0, 0.0], [2.0, 0.0, 0.0], [3.0, 4.0, 0.0]];
        let b = array![[1.0f32], [2.0], [3.0]];
        let mut db = cpu.upload(b.view()).unwrap();
        let da = cpu.upload(a.view()).unwrap();
        let r = cpu.solve_triangular_in_place_dev(&da, Triangular::lower(), &mut db);
        assert!(matches!(r, Err(Error::Singular { pivot: 1, .. })), "{r:?}");
        assert_eq!(cpu.download(&db).unwrap(), b);
        // With a unit diagonal the zeros are not read.
        let x = cpu
            .solve_triangular(a.view(), b.view(), Triangular::lower().unit(true))
            .unwrap();
        assert_eq!(x, array![[1.0f32], [0.0], [0.0]]);
    }

    #[test]
    fn one_by_one_and_empty() {
        let cpu = CpuBackend::new();
        let a = array![[4.0f64]];
        let b = array![[2.0f64, -8.0, 1.0]];
        let x = cpu
            .solve_triangular(a.view(), b.view(), Triangular::upper())
            .unwrap();
        assert_eq!(x, array![[0.5, -2.0, 0.25]]);
        let e = Array2::<f64>::zeros((0, 0));
        let b0 = Array2::<f64>::zeros((0, 3));
        let x = cpu
            .solve_triangular(e.view(), b0.view(), Triangular::lower())
            .unwrap();
        assert_eq!(x.dim(), (0, 3));
    }

    /// NaN in B stays in its column.
    #[test]
    fn non_finite_right_hand_sides_stay_in_their_column() {
        let cpu = CpuBackend::new();
        let a = array![[2.0f64, 0.0], [1.0, 1.0]];
        let b = array![[f64::NAN, 2.0], [1.0, 3.0]];
        let (da, mut db) = (cpu.upload(a.view()).unwrap(), cpu.upload(b.view()).unwrap());
        cpu.solve_triangular_in_place_dev(&da, Triangular::lower(), &mut db)
            .unwrap();
        let x = cpu.download(&db).unwrap();
        assert!(x[[0, 0]].is_nan() && x[[1, 0]].is_nan());
        assert_eq!((x[[0, 1]], x[[1, 1]]), (1.0, 2.0));
    }
}
