//! Cholesky factorization and solve.
//!
//! Unblocked left-looking (Cholesky–Crout) order: column `j` of `L` is formed from
//! the already finished columns `0..j`, so the first pivot that fails is found before
//! anything after it is touched. All arithmetic in f64, one rounding at the end.

use ndarray::ArrayView2;
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{
    CholeskyFactor, Element, Error, FactorizeKernels, LuFactor, Matrix, QrFactor, Result, Trans,
    Triangular,
};

use crate::{CpuBackend, HERE};

/// The singular vectors `(U, Vt)` of an SVD, when asked for.
type Spectrum<T> = Option<(Matrix<T>, Matrix<T>)>;

/// Σ_{k<len} x[k]·y[k] in f64.
fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// The lower factor of the lower triangle of `a` (n×n), row-major in f64.
fn factor<T: Element>(a: &ArrayView2<T>, n: usize) -> Result<Vec<f64>> {
    let mut l = vec![0.0f64; n * n];
    for j in 0..n {
        // A copy of the finished part of row j, so rows below can be written freely.
        let lj = l[j * n..j * n + j].to_vec();
        let d = a[[j, j]].as_f64() - dot(&lj, &lj);
        let root = d.sqrt();
        // `d > 0` is false for NaN too; an infinite pivot means overflow; a root that
        // rounds to zero in T would make the factor singular.
        let usable = d > 0.0 && d.is_finite() && T::from_f64(root) != T::zero();
        if !usable {
            return Err(Error::NotPositiveDefinite { pivot: j, value: d });
        }
        l[j * n + j] = root;
        for i in j + 1..n {
            let s = a[[i, j]].as_f64() - dot(&l[i * n..i * n + j], &lj);
            l[i * n + j] = s / root;
        }
    }
    Ok(l)
}

impl<T: Element> FactorizeKernels<T> for CpuBackend {
    fn cholesky_unchecked(&self, mut a: Matrix<T>) -> Result<CholeskyFactor<T>> {
        let n = a.rows();
        // No host check for NaN here: as on every backend's resident form, it surfaces
        // at the pivot of its row (`factor` refuses a pivot that is not finite).
        let l = factor(&HERE.host_view("cholesky", "A", &a)?, n)?;
        let s: &mut HostStorage<T> = HERE.matrix_mut("cholesky", "A", &mut a)?;
        // The strict upper triangle of `l` was never written: it is exactly zero.
        for (o, &v) in s.data.iter_mut().zip(&l) {
            *o = T::from_f64(v);
        }
        Ok(backend::cholesky_factor(a))
    }

    fn cholesky_solve_unchecked(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()> {
        let n = l.order();
        let (nrhs, l) = HERE.solve_inputs(l, b)?;
        let b: &mut HostStorage<T> = HERE.matrix_mut("cholesky_solve", "B", b)?;
        let lij = |i: usize, j: usize| l[[i, j]].as_f64();
        // Row-major n × nrhs work array; each step updates a whole row of right-hand sides.
        let mut x: Vec<f64> = b.data.iter().map(|v| v.as_f64()).collect();
        // Forward: L·Y = B, reading L below and on the diagonal.
        for i in 0..n {
            for k in 0..i {
                let f = lij(i, k);
                for c in 0..nrhs {
                    x[i * nrhs + c] -= f * x[k * nrhs + c];
                }
            }
            let d = lij(i, i);
            x[i * nrhs..(i + 1) * nrhs].iter_mut().for_each(|v| *v /= d);
        }
        // Backward: Lᵀ·X = Y, where Lᵀ[i][k] = L[k][i].
        for i in (0..n).rev() {
            for k in i + 1..n {
                let f = lij(k, i);
                for c in 0..nrhs {
                    x[i * nrhs + c] -= f * x[k * nrhs + c];
                }
            }
            let d = lij(i, i);
            x[i * nrhs..(i + 1) * nrhs].iter_mut().for_each(|v| *v /= d);
        }
        for (o, v) in b.data.iter_mut().zip(x) {
            *o = T::from_f64(v);
        }
        Ok(())
    }

    // The other factorizations live in their own modules.

    fn trsm_unchecked(&self, a: &Matrix<T>, tri: Triangular, b: &mut Matrix<T>) -> Result<()> {
        crate::trsm::solve(a, tri, b)
    }

    fn lu_unchecked(&self, a: Matrix<T>) -> Result<LuFactor<T>> {
        crate::lu::factor(a)
    }

    fn lu_solve_unchecked(&self, f: &LuFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        crate::lu::solve(f, trans, b)
    }

    fn qr_unchecked(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        crate::qr::factor(a)
    }

    fn eigh_unchecked(
        &self,
        a: &Matrix<T>,
        vectors: bool,
    ) -> Result<(Matrix<T>, Option<Matrix<T>>)> {
        crate::spectra::eigh(a, vectors)
    }

    fn svd_unchecked(&self, a: &Matrix<T>, vectors: bool) -> Result<(Matrix<T>, Spectrum<T>)> {
        crate::spectra::svd(a, vectors)
    }

    fn qr_apply_unchecked(&self, f: &QrFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        crate::qr::apply(f, trans, b)
    }

    fn qr_solve_unchecked(&self, f: &QrFactor<T>, b: Matrix<T>) -> Result<Matrix<T>> {
        crate::qr::solve(f, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;
    use ndgpu_core::prelude::*;

    #[test]
    fn factor_and_solve_small() {
        let cpu = CpuBackend::new();
        // Upper triangle is garbage on purpose: only the lower one may be read.
        let a = array![
            [4.0f64, f64::NAN, f64::NAN],
            [2.0, 5.0, f64::NAN],
            [-2.0, 1.0, 6.0]
        ];
        let l = cpu.cholesky(a.view()).unwrap();
        let expect = array![[2.0, 0.0, 0.0], [1.0, 2.0, 0.0], [-1.0, 1.0, 2.0]];
        assert_eq!(l, expect);
        let b = array![[2.0f64, 0.0], [4.0, 1.0], [10.0, 0.0]];
        let x = cpu.cholesky_solve(l.view(), b.view()).unwrap();
        let full = expect.dot(&expect.t());
        let r = full.dot(&x) - &b;
        assert!(r.iter().all(|v| v.abs() < 1e-14), "{r}");
    }

    #[test]
    fn first_failing_pivot_is_named() {
        let cpu = CpuBackend::new();
        let a = array![[1.0f32, 0.0, 0.0], [0.0, -2.0, 0.0], [0.0, 0.0, -1.0]];
        match cpu.cholesky(a.view()) {
            Err(Error::NotPositiveDefinite { pivot, value }) => {
                assert_eq!((pivot, value), (1, -2.0))
            }
            other => panic!("{other:?}"),
        }
        // Singular: the second pivot is exactly zero.
        let s = array![[1.0f64, 1.0], [1.0, 1.0]];
        assert!(matches!(
            cpu.cholesky(s.view()),
            Err(Error::NotPositiveDefinite { pivot: 1, .. })
        ));
    }
}
