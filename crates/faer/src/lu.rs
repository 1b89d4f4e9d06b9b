//! LU with partial pivoting, and its solves.
//!
//! **FactorLayout: row-major** ([`FactorLayout::RowMajor`]). A resident matrix is row-major, and
//! LU's row swaps move whole rows, which are contiguous there; faer's GEMM and
//! triangular solves take any strides at full speed. So the matrix is factored in
//! place, with no copy: the resident m×n buffer becomes LAPACK's packed `L\U`.
//! (Column-major would first need a transposing copy of A: QR, whose reflections work
//! on columns, pays it; LU does not need to.)
//!
//! **Algorithm:** LAPACK's recursive `getrf2`, with faer's kernels doing the work: the
//! left half of the columns is factored (recursively), its swaps applied to the right
//! half, `U12 = L11⁻¹·A12` (faer's unit lower triangular solve), `A22 −= L21·U12`
//! (faer's GEMM, all cores), the trailing block factored (recursively), and its swaps
//! applied back to `L21`. Panels of at most [`LEAF`] columns are factored unblocked in
//! a column-major copy. faer's own `lu_in_place` is not used because it divides by an
//! exactly zero pivot (filling the factor with NaN); here, as in LAPACK, a zero pivot
//! leaves its column unscaled, so a singular matrix factors to a finite `L\U` with a
//! zero on U's diagonal, reported as [`LuFactor::zero_pivot`].
//!
//! The swaps are LAPACK's: row i swapped with row `pivots[i]` ≥ i, for i in order.

use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_unit_lower_triangular_in_place,
    solve_unit_upper_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::perm::swap_rows_idx;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef};
use ndgpu_core::backend::{self, first_zero_diagonal, HostStorage};
use ndgpu_core::{check, Element, FactorLayout, LuFactor, Matrix, Result, Trans};
use rayon::prelude::*;

use crate::{mat, mat_mut, par, FaerBackend, FaerElement, HERE};

/// The op of the solves, in errors.
const SOLVE_OP: &str = "lu_solve";

/// Widest panel factored unblocked.
pub(crate) const LEAF: usize = 8;

/// Elements (swapped rows × columns) above which row swaps run in parallel.
const PAR_SWAPS: usize = 128 * 128;

/// Checks a row-major rows×cols host buffer for NaN and ±Inf, in parallel; names the
/// first offending entry (row-major order) as input `what` of `op`.
pub(crate) fn finite_input<T: Element>(
    op: &'static str,
    what: &'static str,
    data: &[T],
    (rows, cols): (usize, usize),
) -> Result<()> {
    let all_finite = data
        .par_chunks(1 << 14)
        .all(|c| c.iter().all(|v| v.is_finite()));
    if all_finite {
        return Ok(());
    }
    let view = ndarray::ArrayView2::from_shape((rows, cols), data).expect("rows × cols");
    check::finite(op, what, &view)
}

/// Applies the swaps `piv` (row i with row `piv[i]`, i in order; or in reverse order)
/// to the rows of `m`, in parallel over columns when there is enough to do.
fn swap_rows<T: FaerElement>(m: MatMut<'_, T>, piv: &[usize], reverse: bool) {
    let apply = |mut m: MatMut<'_, T>| {
        let mut one = |(i, &p): (usize, &usize)| {
            if p != i {
                swap_rows_idx(m.rb_mut(), i, p);
            }
        };
        if reverse {
            piv.iter().enumerate().rev().for_each(&mut one);
        } else {
            piv.iter().enumerate().for_each(&mut one);
        }
    };
    let cols = m.ncols();
    if cols == 0 || piv.is_empty() {
        return;
    }
    let threads = rayon::current_num_threads();
    if threads > 1 && cols * piv.len() > PAR_SWAPS && cols >= 2 * threads {
        m.par_col_partition_mut(threads).for_each(apply);
    } else {
        apply(m);
    }
}

/// Factors an m×n panel (n ≤ [`LEAF`], n ≤ m) unblocked, in a column-major copy: the
/// swaps (relative to the panel's top) go to `piv`, and only the panel's own columns
/// are swapped. A zero pivot leaves its column unscaled (it is all zero below).
fn leaf<T: FaerElement>(mut a: MatMut<'_, T>, piv: &mut [usize]) {
    let (m, n) = a.shape();
    let mut w = vec![T::zero(); m * n];
    for i in 0..m {
        for j in 0..n {
            w[j * m + i] = a[(i, j)];
        }
    }
    for j in 0..n {
        let col = &w[j * m..(j + 1) * m];
        let mut p = j;
        let mut max = col[j].abs();
        for (i, v) in col.iter().enumerate().skip(j + 1) {
            if v.abs() > max {
                max = v.abs();
                p = i;
            }
        }
        piv[j] = p;
        if p != j {
            for k in 0..n {
                w.swap(k * m + j, k * m + p);
            }
        }
        let (done, rest) = w.split_at_mut((j + 1) * m);
        let col = &mut done[j * m..];
        let pivot = col[j];
        if pivot != T::zero() {
            let inv = T::one() / pivot;
            if inv.is_finite() {
                col[j + 1..].iter_mut().for_each(|v| *v *= inv);
            } else {
                col[j + 1..].iter_mut().for_each(|v| *v /= pivot);
            }
        }
        let l = &col[j + 1..];
        for c in rest.chunks_exact_mut(m) {
            let u = c[j];
            if u != T::zero() {
                c[j + 1..].iter_mut().zip(l).for_each(|(v, &l)| *v -= l * u);
            }
        }
    }
    for i in 0..m {
        for j in 0..n {
            a[(i, j)] = w[j * m + i];
        }
    }
}

/// Where the recursion cuts n > [`LEAF`] columns: about half, a multiple of [`LEAF`].
fn split(n: usize) -> usize {
    (n / 2 / LEAF * LEAF).max(LEAF)
}

/// Factors an m×n block with n ≤ m in place (LAPACK's `getrf2`); its swaps, relative
/// to its top, go to `piv` (length n). Only the block's own columns are swapped.
fn factor_tall<T: FaerElement>(mut a: MatMut<'_, T>, piv: &mut [usize]) {
    let n = a.ncols();
    if n <= LEAF {
        return leaf(a, piv);
    }
    let n1 = split(n);
    {
        let (left, right) = a.rb_mut().split_at_col_mut(n1);
        factor_tall(left, &mut piv[..n1]);
        swap_rows(right, &piv[..n1], false);
    }
    let (a00, mut a01, a10, mut a11) = a.split_at_mut(n1, n1);
    solve_unit_lower_triangular_in_place(a00.rb(), a01.rb_mut(), par());
    matmul(
        a11.rb_mut(),
        Accum::Add,
        a10.rb(),
        a01.rb(),
        -T::one(),
        par(),
    );
    factor_tall(a11, &mut piv[n1..]);
    swap_rows(a10, &piv[n1..], false);
    piv[n1..].iter_mut().for_each(|p| *p += n1);
}

/// Factors the m×n matrix in place; returns its min(m, n) swaps.
fn factor<T: FaerElement>(mut a: MatMut<'_, T>) -> Vec<usize> {
    let (m, n) = a.shape();
    let k = m.min(n);
    let mut piv = vec![0; k];
    if n <= m {
        factor_tall(a, &mut piv);
    } else {
        let (mut left, mut right) = a.rb_mut().split_at_col_mut(m);
        factor_tall(left.rb_mut(), &mut piv);
        swap_rows(right.rb_mut(), &piv, false);
        solve_unit_lower_triangular_in_place(left.rb(), right, par());
    }
    piv
}

/// The packed factor of `f` as an n×n faer matrix (either layout: a factor made by the
/// reference backend reads as well).
fn packed<'a, T: FaerElement>(op: &'static str, f: &'a LuFactor<T>) -> Result<MatRef<'a, T>> {
    let (m, n) = f.dim();
    let s: &HostStorage<T> = HERE.matrix(op, "LU", f.packed())?;
    Ok(match f.layout() {
        FactorLayout::RowMajor => mat(&s.data, m, n),
        FactorLayout::ColMajor => faer::MatRef::from_column_major_slice(&s.data, m, n),
    })
}

impl FaerBackend {
    /// [`FactorizeKernels::lu_unchecked`](ndgpu_core::FactorizeKernels::lu_unchecked):
    /// checks A on the host, factors it in place.
    pub(crate) fn lu_kernel<T: FaerElement>(&self, mut a: Matrix<T>) -> Result<LuFactor<T>> {
        let (m, n) = a.dim();
        let s: &mut HostStorage<T> = HERE.matrix_mut("lu", "A", &mut a)?;
        finite_input("lu", "A", &s.data, (m, n))?;
        let piv = factor(mat_mut(&mut s.data, m, n));
        // Finite input can still overflow (element growth): never a non-finite factor.
        finite_input("lu", "A (its factor overflowed)", &s.data, (m, n))?;
        let diag: Vec<T> = (0..m.min(n)).map(|i| s.data[i * n + i]).collect();
        let zero = first_zero_diagonal(&diag);
        let pivots = backend::indices(piv.len(), HostStorage { data: piv });
        Ok(backend::lu_factor(
            a,
            pivots,
            FactorLayout::RowMajor,
            (m, n),
            zero,
        ))
    }

    /// [`FactorizeKernels::lu_solve_unchecked`](ndgpu_core::FactorizeKernels::lu_solve_unchecked),
    /// with a factor of either layout.
    pub(crate) fn lu_solve_kernel<T: FaerElement>(
        &self,
        f: &LuFactor<T>,
        (trans, b): (Trans, &mut Matrix<T>),
    ) -> Result<()> {
        let op = SOLVE_OP;
        let (n, nrhs) = b.dim();
        let lu = packed(op, f)?;
        let piv: &HostStorage<usize> = HERE.indices(op, "pivots", f.pivots())?;
        let s: &mut HostStorage<T> = HERE.matrix_mut(op, "B", b)?;
        let mut x = mat_mut(&mut s.data, n, nrhs);
        match trans {
            // P·A = L·U: X = U⁻¹·L⁻¹·P·B.
            Trans::No => {
                swap_rows(x.rb_mut(), &piv.data, false);
                solve_unit_lower_triangular_in_place(lu, x.rb_mut(), par());
                solve_upper_triangular_in_place(lu, x.rb_mut(), par());
            }
            // Aᵀ = Uᵀ·Lᵀ·P: X = Pᵀ·L⁻ᵀ·U⁻ᵀ·B, Pᵀ being the swaps in reverse order.
            Trans::Yes => {
                solve_lower_triangular_in_place(lu.transpose(), x.rb_mut(), par());
                solve_unit_upper_triangular_in_place(lu.transpose(), x.rb_mut(), par());
                swap_rows(x, &piv.data, true);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rand;
    use ndarray::{array, Array2};
    use ndgpu_core::prelude::*;
    use ndgpu_core::Error;

    fn close(a: &Array2<f64>, b: &Array2<f64>, tol: f64) -> bool {
        a.shape() == b.shape() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
    }

    #[test]
    fn two_by_two_matches_lapack() {
        let b = FaerBackend::new();
        let f = b
            .lu_in_place_dev(b.upload(array![[1.0f64, 2.0], [3.0, 4.0]].view()).unwrap())
            .unwrap();
        let packed = b.download(f.packed()).unwrap();
        assert!(close(
            &packed,
            &array![[3.0, 4.0], [1.0 / 3.0, 2.0 - 4.0 / 3.0]],
            1e-15
        ));
        assert_eq!(b.download_indices(f.pivots()).unwrap().to_vec(), vec![1, 1]);
        assert_eq!(f.zero_pivot(), None);
        assert!((b.det(array![[1.0f64, 2.0], [3.0, 4.0]].view()).unwrap() + 2.0).abs() < 1e-14);
    }

    #[test]
    fn p_l_u_reproduces_a_across_the_recursion() {
        let b = FaerBackend::new();
        for (m, n) in [(1, 1), (5, 5), (70, 70), (131, 40), (40, 131), (200, 200)] {
            let a = rand(m, n, (m * 1000 + n) as u64);
            let (p, l, u) = b.lu(a.view()).unwrap();
            assert!(close(&p.dot(&l).dot(&u), &a, 1e-12), "{m}x{n}");
            assert!(l.iter().all(|v| v.abs() <= 1.0 + 1e-15), "{m}x{n}: |L| ≤ 1");
        }
    }

    #[test]
    fn solves_plain_and_transposed() {
        let b = FaerBackend::new();
        let n = 97;
        let a = rand(n, n, 3) + Array2::<f64>::eye(n);
        let want = rand(n, 3, 4);
        let x = b.solve(a.view(), a.dot(&want).view()).unwrap();
        assert!(close(&x, &want, 1e-10));
        let f = b.lu_dev(&b.upload(a.view()).unwrap()).unwrap();
        let rhs = b.upload(a.t().dot(&want).view()).unwrap();
        let x = b.lu_solve_dev(&f, Trans::Yes, &rhs).unwrap();
        assert!(close(&b.download(&x).unwrap(), &want, 1e-10));
        let inv = b.inv(a.view()).unwrap();
        assert!(close(&inv.dot(&a), &Array2::eye(n), 1e-10));
    }

    #[test]
    fn a_singular_matrix_factors_finite_and_names_its_zero_pivot() {
        let b = FaerBackend::new();
        // A zero column past the first recursion's cut: U[25, 25] is exactly zero.
        let mut a = rand(40, 40, 9);
        a.column_mut(25).fill(0.0);
        let f = b.lu_dev(&b.upload(a.view()).unwrap()).unwrap();
        assert!(b
            .download(f.packed())
            .unwrap()
            .iter()
            .all(|v| v.is_finite()));
        assert_eq!(f.zero_pivot(), Some(25));
        let (p, l, u) = b.lu_unpack(&f).unwrap();
        assert!(close(&p.dot(&l).dot(&u), &a, 1e-12));
        assert_eq!(b.det(a.view()).unwrap(), 0.0);
        match b.solve(a.view(), rand(40, 1, 1).view()) {
            Err(Error::Singular { pivot: 25, .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_exactly_cancelling_pivot_is_zero() {
        let b = FaerBackend::new();
        let f = b
            .lu_dev(&b.upload(array![[1.0f64, 2.0], [2.0, 4.0]].view()).unwrap())
            .unwrap();
        assert_eq!(f.zero_pivot(), Some(1));
        assert_eq!(
            b.slogdet(array![[1.0f64, 2.0], [2.0, 4.0]].view())
                .unwrap()
                .0,
            0.0
        );
    }

    #[test]
    fn non_finite_input_is_named() {
        let b = FaerBackend::new();
        let a = array![[1.0f64, 2.0], [f64::NAN, 4.0]];
        match b.lu_in_place_dev(b.upload(a.view()).unwrap()) {
            Err(Error::NonFinite {
                op: "lu",
                what: "A",
                index: (1, 0),
                ..
            }) => {}
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
}
