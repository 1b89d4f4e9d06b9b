//! LU factorization with partial pivoting, and the solves with its factor.
//!
//! Right-looking and unblocked, as LAPACK's `getf2`, on an f64 copy of A, rounded once
//! into the factor: for each column j, the entry of largest magnitude on or below the
//! diagonal (the first of equals) becomes the pivot, its row is swapped with row j,
//! the column below it is divided by it (the multipliers, |Lᵢⱼ| ≤ 1) and the trailing
//! matrix takes the rank-one update. A column that is zero on and below the diagonal
//! has a zero pivot: nothing is swapped or scaled, and the factorization goes on.

use ndarray::{Array2, ArrayView2};
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{check, Element, Error, FactorLayout, LuFactor, Matrix, Result, Trans};

use crate::trsm::{store, substitute, work};
use crate::{to_f64, HERE};

/// The row, at or below `j`, of the entry of column `j` of largest magnitude (the
/// first of equals: only a larger one replaces it).
fn pivot_row(w: &Array2<f64>, j: usize) -> usize {
    let mut best = j;
    for i in j + 1..w.nrows() {
        if w[[i, j]].abs() > w[[best, j]].abs() {
            best = i;
        }
    }
    best
}

/// `P·A = L·U` of the m×n `w` in place (L below the diagonal, U on and above it);
/// returns the row swaps.
fn getf2(w: &mut Array2<f64>) -> Vec<usize> {
    let (m, n) = w.dim();
    let k = m.min(n);
    let mut pivots = Vec::with_capacity(k);
    for j in 0..k {
        let p = pivot_row(w, j);
        pivots.push(p);
        let d = w[[p, j]];
        if d == 0.0 {
            // The column is zero on and below the diagonal: a zero pivot. Its
            // multipliers would be 0/0; they are left as the zeros they are, and the
            // update they would make changes nothing.
            continue;
        }
        for c in 0..n {
            w.swap([j, c], [p, c]);
        }
        for i in j + 1..m {
            let l = w[[i, j]] / d;
            w[[i, j]] = l;
            for c in j + 1..n {
                w[[i, c]] -= l * w[[j, c]];
            }
        }
    }
    pivots
}

/// Rounds a factor computed in f64 into `out`; an entry that overflows `T` is
/// [`Error::NonFinite`] naming it (A itself was finite).
pub(crate) fn store_factor<T: Element>(
    op: &'static str,
    out: &mut [T],
    w: &Array2<f64>,
) -> Result<()> {
    store(out, w);
    let cols = w.ncols();
    match out.iter().position(|v| !v.is_finite()) {
        Some(at) => Err(Error::NonFinite {
            op,
            what: "A (its factor overflowed)",
            value: out[at].as_f64(),
            index: (at / cols, at % cols),
        }),
        None => Ok(()),
    }
}

/// LU of a resident host matrix, which becomes the row-major packed factor.
pub(crate) fn factor<T: Element>(mut a: Matrix<T>) -> Result<LuFactor<T>> {
    let op = "lu";
    let dim = a.dim();
    let view = HERE.host_view(op, "A", &a)?;
    // The reference looks at its input on the host: NaN or ±Inf is named where it is.
    check::finite(op, "A", &view)?;
    let mut w = to_f64(&view);
    let pivots = getf2(&mut w);
    let s: &mut HostStorage<T> = HERE.matrix_mut(op, "A", &mut a)?;
    store_factor(op, &mut s.data, &w)?;
    // The pivots as they are in T: one that rounds to zero there is a zero pivot.
    let diag: Vec<T> = (0..pivots.len()).map(|i| s.data[i * dim.1 + i]).collect();
    let zero_pivot = backend::first_zero_diagonal(&diag);
    let pivots = backend::indices(pivots.len(), HostStorage { data: pivots });
    Ok(backend::lu_factor(
        a,
        pivots,
        FactorLayout::RowMajor,
        dim,
        zero_pivot,
    ))
}

/// The m×n matrix a packed factor holds, as a view, whatever its layout.
pub(crate) fn logical<T>(packed: ArrayView2<'_, T>, layout: FactorLayout) -> ArrayView2<'_, T> {
    match layout {
        FactorLayout::RowMajor => packed,
        FactorLayout::ColMajor => packed.reversed_axes(),
    }
}

/// Applies the row swaps to the rows of `x`: in order for P·X, in reverse for Pᵀ·X.
fn permute(x: &mut Array2<f64>, pivots: &[usize], reverse: bool) {
    let mut swap = |i: usize, p: usize| {
        for c in 0..x.ncols() {
            x.swap([i, c], [p, c]);
        }
    };
    if reverse {
        pivots
            .iter()
            .enumerate()
            .rev()
            .for_each(|(i, &p)| swap(i, p));
    } else {
        pivots.iter().enumerate().for_each(|(i, &p)| swap(i, p));
    }
}

/// `op(A)·X = B` in place with A's factor (A = Pᵀ·L·U, so Aᵀ = Uᵀ·Lᵀ·P).
pub(crate) fn solve<T: Element>(f: &LuFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
    let op = "lu_solve";
    let lu = logical(HERE.host_view(op, "the factor", f.packed())?, f.layout());
    let pivots: &HostStorage<usize> = HERE.indices(op, "the pivots", f.pivots())?;
    let dim = b.dim();
    let b: &mut HostStorage<T> = HERE.matrix_mut(op, "B", b)?;
    let at = |i: usize, k: usize| lu[[i, k]].as_f64();
    let mut x = work(dim, &b.data);
    match trans {
        Trans::No => {
            permute(&mut x, &pivots.data, false);
            substitute(&mut x, true, true, at);
            substitute(&mut x, false, false, at);
        }
        Trans::Yes => {
            substitute(&mut x, true, false, |i, k| at(k, i));
            substitute(&mut x, false, true, |i, k| at(k, i));
            permute(&mut x, &pivots.data, true);
        }
    }
    store(&mut b.data, &x);
    Ok(())
}

#[cfg(test)]
mod tests {
    use ndarray::{array, Array2};
    use ndgpu_core::prelude::*;
    use ndgpu_core::{Error, Trans};

    use crate::{close, thin_and_rectangular, CpuBackend};

    #[test]
    fn known_factor_of_a_3x3() {
        let cpu = CpuBackend::new();
        // Column 0 pivots on row 2 (|4| largest), then column 1 on the old row 0.
        let a = array![[1.0f64, 2.0, 3.0], [2.0, 1.0, 1.0], [4.0, 2.0, 0.0]];
        let (p, l, u) = cpu.lu(a.view()).unwrap();
        assert_eq!(p, array![[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]);
        assert!(close(
            &l,
            &array![[1.0, 0.0, 0.0], [0.25, 1.0, 0.0], [0.5, 0.0, 1.0]],
            0.0
        ));
        assert!(close(
            &u,
            &array![[4.0, 2.0, 0.0], [0.0, 1.5, 3.0], [0.0, 0.0, 1.0]],
            0.0
        ));
        assert!((cpu.det(a.view()).unwrap() - 6.0).abs() < 1e-14);
        let (sign, log) = cpu.slogdet(a.view()).unwrap();
        assert_eq!(sign, 1.0);
        assert!((log - 6f64.ln()).abs() < 1e-14);
    }

    #[test]
    fn solves_both_ways_and_inverts() {
        let cpu = CpuBackend::new();
        let a = array![[0.0f64, 2.0, 1.0], [3.0, -1.0, 2.0], [1.0, 1.0, 4.0]];
        let b = array![[1.0f64, 0.5], [2.0, -1.0], [0.0, 3.0]];
        let x = cpu.solve(a.view(), b.view()).unwrap();
        assert!(close(&a.dot(&x), &b, 1e-14));
        let da = cpu.upload(a.view()).unwrap();
        let f = cpu.lu_dev(&da).unwrap();
        let db = cpu.upload(b.view()).unwrap();
        let xt = cpu
            .download(&cpu.lu_solve_dev(&f, Trans::Yes, &db).unwrap())
            .unwrap();
        assert!(close(&a.t().dot(&xt), &b, 1e-14));
        let inv = cpu.inv(a.view()).unwrap();
        assert!(close(&a.dot(&inv), &Array2::eye(3), 1e-14));
    }

    #[test]
    fn rectangular_and_thin_shapes() {
        let cpu = CpuBackend::new();
        for a in thin_and_rectangular() {
            let (m, n) = a.dim();
            let k = m.min(n);
            let (p, l, u) = cpu.lu(a.view()).unwrap();
            assert_eq!((p.dim(), l.dim(), u.dim()), ((m, m), (m, k), (k, n)));
            assert!(close(&p.dot(&l).dot(&u), &a, 1e-14), "{a}");
            assert!(l.iter().all(|v| v.abs() <= 1.0));
        }
        // n×1: the pivot is the largest entry.
        let (_, l, u) = cpu.lu(array![[0.5f64], [-3.0], [2.0]].view()).unwrap();
        assert_eq!(u, array![[-3.0]]);
        assert!(close(&l, &array![[1.0], [-1.0 / 6.0], [-2.0 / 3.0]], 1e-16));
    }

    #[test]
    fn singular_matrices_factor_but_do_not_solve() {
        let cpu = CpuBackend::new();
        let a = array![[1.0f64, 2.0], [2.0, 4.0]];
        let (p, l, u) = cpu.lu(a.view()).unwrap();
        assert_eq!(u[[1, 1]], 0.0);
        assert!(close(&p.dot(&l).dot(&u), &a, 0.0));
        let b = array![[1.0f64], [1.0]];
        assert!(matches!(
            cpu.solve(a.view(), b.view()),
            Err(Error::Singular { pivot: 1, .. })
        ));
        assert_eq!(cpu.det(a.view()).unwrap(), 0.0);
        assert_eq!(cpu.slogdet(a.view()).unwrap(), (0.0, f64::NEG_INFINITY));
        // A zero column: the pivot there is zero, nothing is swapped, the rest goes on.
        let z = array![[0.0f32, 1.0, 2.0], [0.0, 1.0, 1.0], [0.0, 3.0, 1.0]];
        let f = cpu.lu_dev(&cpu.upload(z.view()).unwrap()).unwrap();
        assert_eq!(f.zero_pivot(), Some(0));
        assert_eq!(
            cpu.download_indices(f.pivots()).unwrap().to_vec(),
            vec![0, 2, 2]
        );
        assert!(matches!(
            cpu.inv(z.view()),
            Err(Error::Singular { pivot: 0, .. })
        ));
    }

    #[test]
    fn a_pivot_that_rounds_to_zero_in_f32_is_a_zero_pivot() {
        let cpu = CpuBackend::new();
        // 1 + 2⁻³⁰ is 1 in f32, so the f32 matrix is exactly singular; in f64 arithmetic
        // on its values the second pivot is exactly zero too.
        let a = array![[1.0f32, 1.0], [1.0, 1.0 + 2f32.powi(-30)]];
        let f = cpu.lu_dev(&cpu.upload(a.view()).unwrap()).unwrap();
        assert_eq!(f.zero_pivot(), Some(1));
        // The second pivot is −2⁻²⁰⁰: not zero in f64, but zero in f32.
        let tiny = 2f64.powi(-100);
        let a = array![[1.0, tiny], [tiny, 0.0]];
        let f = cpu.lu_dev(&cpu.upload(a.view()).unwrap()).unwrap();
        assert_eq!(f.zero_pivot(), None);
        let a = a.mapv(|v| v as f32);
        let f = cpu.lu_dev(&cpu.upload(a.view()).unwrap()).unwrap();
        assert_eq!(f.zero_pivot(), Some(1));
    }

    #[test]
    fn non_finite_input_is_named() {
        let cpu = CpuBackend::new();
        let a = array![[1.0f64, 2.0], [f64::INFINITY, 4.0]];
        match cpu.lu_dev(&cpu.upload(a.view()).unwrap()) {
            Err(Error::NonFinite {
                op: "lu",
                index,
                value,
                ..
            }) => {
                assert_eq!((index, value), ((1, 0), f64::INFINITY))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn factors_of_other_backends_in_column_major_order_are_read() {
        use ndgpu_core::backend::{self, HostStorage};
        use ndgpu_core::FactorLayout;
        let cpu = CpuBackend::new();
        // P·A = L·U of A = [[1, 2], [3, 4]]: swap, l = 1/3, U = [[3, 4], [0, 2/3]].
        let packed = array![[3.0f64, 4.0], [1.0 / 3.0, 2.0 / 3.0]];
        let col = backend::host_matrix(packed.t().as_standard_layout().into_owned());
        let pivots = backend::indices(
            2,
            HostStorage {
                data: vec![1usize, 1],
            },
        );
        let f = backend::lu_factor(col, pivots, FactorLayout::ColMajor, (2, 2), None);
        let b = array![[5.0f64], [11.0]];
        let x = cpu
            .lu_solve_dev(&f, Trans::No, &cpu.upload(b.view()).unwrap())
            .unwrap();
        assert!(close(
            &cpu.download(&x).unwrap(),
            &array![[1.0], [2.0]],
            1e-14
        ));
    }
}
