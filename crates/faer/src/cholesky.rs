//! Cholesky factorization (right-looking, blocked) and solves with the factor.
//!
//! For each block of [`NB`] columns: the diagonal block is factored unblocked in f64
//! (left-looking, as the reference does, so the first pivot that fails is found, with
//! its value, before anything after it is touched); the panel below it is solved
//! against it (`L21 = A21·L11⁻ᵀ`, faer's triangular solve); the trailing lower
//! triangle is updated (`A22 −= L21·L21ᵀ`, faer's triangular GEMM). Only the lower
//! triangle of A is read; the upper triangle of the factor is zeroed at the end.

use faer::linalg::matmul::triangular::{matmul as triangular_matmul, BlockStructure};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::Accum;
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{
    CholeskyFactor, Element, Error, FactorizeKernels, LuFactor, Matrix, QrFactor, Result, Trans,
    Triangular,
};

use crate::{mat, mat_mut, par, FaerBackend, FaerElement, HERE};

/// The singular vectors `(U, Vt)` of an SVD, when asked for.
type Spectrum<T> = Option<(Matrix<T>, Matrix<T>)>;

/// Columns per block.
const NB: usize = 128;

/// Factors the `nb`×`nb` diagonal block at (`j0`, `j0`) of the row-major n×n `a` in
/// place, in f64. Pivot numbers in errors count from the top of the whole matrix.
fn factor_diagonal<T: Element>(a: &mut [T], n: usize, j0: usize, nb: usize) -> Result<()> {
    let mut l = vec![0.0f64; nb * nb];
    for i in 0..nb {
        for j in 0..=i {
            l[i * nb + j] = a[(j0 + i) * n + j0 + j].as_f64();
        }
    }
    for j in 0..nb {
        let d = l[j * nb + j] - (0..j).map(|k| l[j * nb + k] * l[j * nb + k]).sum::<f64>();
        let root = d.sqrt();
        // `d > 0` is false for NaN too; an infinite pivot means overflow; a root that
        // rounds to zero in T would make the factor singular.
        if !(d > 0.0 && d.is_finite() && T::from_f64(root) != T::zero()) {
            return Err(Error::NotPositiveDefinite {
                pivot: j0 + j,
                value: d,
            });
        }
        l[j * nb + j] = root;
        for i in j + 1..nb {
            let s = l[i * nb + j] - (0..j).map(|k| l[i * nb + k] * l[j * nb + k]).sum::<f64>();
            l[i * nb + j] = s / root;
        }
    }
    for i in 0..nb {
        for j in 0..=i {
            a[(j0 + i) * n + j0 + j] = T::from_f64(l[i * nb + j]);
        }
    }
    Ok(())
}

/// The lower factor of the lower triangle of the row-major n×n `a`, in place.
fn factor<T: FaerElement>(a: &mut [T], n: usize) -> Result<()> {
    for j0 in (0..n).step_by(NB) {
        let nb = NB.min(n - j0);
        factor_diagonal(a, n, j0, nb)?;
        let rest = n - j0 - nb;
        if rest == 0 {
            break;
        }
        let whole = mat_mut(a, n, n);
        let (top, bottom) = whole.split_at_row_mut(j0 + nb);
        let l11 = top.rb().submatrix(j0, j0, nb, nb);
        let (mut panel, mut trailing) = bottom.split_at_col_mut(j0 + nb);
        let mut l21 = panel.rb_mut().subcols_mut(j0, nb);
        // L21·L11ᵀ = A21, i.e. L11·L21ᵀ = A21ᵀ.
        solve_lower_triangular_in_place(l11, l21.rb_mut().transpose_mut(), par());
        let l21 = l21.rb();
        triangular_matmul(
            trailing.rb_mut(),
            BlockStructure::TriangularLower,
            Accum::Add,
            l21,
            BlockStructure::Rectangular,
            l21.transpose(),
            BlockStructure::Rectangular,
            -T::one(),
            par(),
        );
    }
    // The strict upper triangle still holds A's: the factor's is zero.
    for i in 0..n {
        a[i * n + i + 1..(i + 1) * n].fill(T::zero());
    }
    Ok(())
}

impl<T: FaerElement> FactorizeKernels<T> for FaerBackend {
    fn cholesky_unchecked(&self, mut a: Matrix<T>) -> Result<CholeskyFactor<T>> {
        let n = a.rows();
        // No host check for NaN here: as on every backend's resident form, it surfaces
        // at the pivot of its row (a pivot that is not finite is refused).
        let s: &mut HostStorage<T> = HERE.matrix_mut("cholesky", "A", &mut a)?;
        factor(&mut s.data, n)?;
        Ok(backend::cholesky_factor(a))
    }

    fn cholesky_solve_unchecked(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()> {
        let n = l.order();
        let (nrhs, l) = HERE.solve_inputs(l, b)?;
        let b: &mut HostStorage<T> = HERE.matrix_mut("cholesky_solve", "B", b)?;
        let l = mat(l.as_slice().expect("host storage is in C order"), n, n);
        let mut x = mat_mut(&mut b.data, n, nrhs);
        solve_lower_triangular_in_place(l, x.rb_mut(), par());
        solve_upper_triangular_in_place(l.transpose(), x.rb_mut(), par());
        Ok(())
    }

    fn trsm_unchecked(&self, a: &Matrix<T>, tri: Triangular, b: &mut Matrix<T>) -> Result<()> {
        self.trsm_kernel((a, tri, b))
    }

    fn lu_unchecked(&self, a: Matrix<T>) -> Result<LuFactor<T>> {
        self.lu_kernel(a)
    }

    fn lu_solve_unchecked(&self, f: &LuFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        self.lu_solve_kernel(f, (trans, b))
    }

    fn qr_unchecked(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        self.qr_kernel(a)
    }

    fn qr_apply_unchecked(&self, f: &QrFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        self.qr_apply_kernel((f, trans), b)
    }

    fn qr_solve_unchecked(&self, f: &QrFactor<T>, b: Matrix<T>) -> Result<Matrix<T>> {
        self.qr_solve_kernel(f, b)
    }

    fn svd_unchecked(&self, a: &Matrix<T>, vectors: bool) -> Result<(Matrix<T>, Spectrum<T>)> {
        self.svd_kernel(a, vectors)
    }

    fn eigh_unchecked(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, Option<Matrix<T>>)> {
        self.eigh_kernel(a, vectors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use ndgpu_core::prelude::*;
    use ndgpu_core::Memory;

    /// A symmetric positive-definite n×n matrix spanning several blocks.
    fn spd(n: usize) -> Array2<f64> {
        let m = Array2::from_shape_fn((n, n), |(i, j)| ((i * 7 + j * 13) % 11) as f64 / 11.0);
        m.dot(&m.t()) + Array2::<f64>::eye(n) * n as f64
    }

    #[test]
    fn blocked_factor_reproduces_a_across_blocks() {
        let b = FaerBackend::new();
        let n = 2 * NB + 37;
        let a = spd(n);
        let l = b.cholesky(a.view()).unwrap();
        let r = l.dot(&l.t()) - &a;
        let err = r.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(err <= 1e-12 * n as f64 * n as f64, "max |A − L·Lᵀ| = {err}");
        assert!((0..n).all(|i| (i + 1..n).all(|j| l[[i, j]] == 0.0)));
    }

    #[test]
    fn a_failing_pivot_in_a_later_block_is_named() {
        let b = FaerBackend::new();
        let n = NB + 20;
        let mut a = spd(n);
        a[[NB + 5, NB + 5]] = -1.0e6;
        let m = b.upload(a.view()).unwrap();
        match b.cholesky_in_place_dev(m) {
            Err(Error::NotPositiveDefinite { pivot, value }) => {
                assert_eq!(pivot, NB + 5);
                assert!(value < 0.0);
            }
            other => panic!("expected NotPositiveDefinite, got {:?}", other.map(|_| ())),
        }
    }
}
