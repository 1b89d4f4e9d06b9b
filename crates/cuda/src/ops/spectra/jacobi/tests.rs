//! The sweep driver on host matrices: convergence on graded columns in f64 and f32
//! (W rounded to f32 as the device uploads it), against the reference's singular
//! values; the stopping test, the order and the permutations.

use ndarray::{array, Array2};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{Element, Error, Factorize};
use ndgpu_cpu::CpuBackend;

use super::*;

/// Y on the host in the working type T: G and Y·W computed in T, as on the device.
struct Host<T>(Array2<T>);

impl<T: Element> Columns for Host<T> {
    fn gram(&mut self) -> Result<Array2<f64>> {
        Ok(self.0.t().dot(&self.0).mapv(|x| x.as_f64()))
    }
    fn rotate(&mut self, w: &Array2<f64>) -> Result<()> {
        self.0 = self.0.dot(&w.mapv(T::from_f64));
        Ok(())
    }
}

/// An m×n matrix with entries in [−1, 1), each column mixed with the first (cosines
/// near 0.7 between columns), column j then scaled by 10^(−5j/(n−1)).
fn graded<T: Element>(m: usize, n: usize, seed: u64) -> Array2<T> {
    let mut rng = SplitMix64::new(seed);
    let mut a = Array2::from_shape_simple_fn((m, n), || 2.0 * rng.next_f64() - 1.0);
    let first = a.column(0).to_owned();
    for mut c in a.columns_mut().into_iter().skip(1) {
        c += &first;
    }
    for (j, mut c) in a.columns_mut().into_iter().enumerate() {
        c *= 10f64.powf(-5.0 * j as f64 / (n - 1) as f64);
    }
    a.mapv(T::from_f64)
}

/// The sweeps on a graded 400×8 matrix in T: the singular values agree with the
/// reference's to a few ε relative (one-sided Jacobi is relatively accurate on graded
/// columns), V is orthogonal, and Y·diag(1/σ) has orthonormal columns.
fn graded_columns_converge<T: Element>() {
    let (m, n) = (400, 8);
    let a = graded::<T>(m, n, 5);
    let want = CpuBackend::new().svdvals(a.view()).unwrap();
    let mut y = Host(a.clone());
    let tol = (m as f64).sqrt() * T::EPS;
    let s = sweep(&mut y, n, (tol, 0.0), true).unwrap().unwrap();
    let order = descending(&s.norms);
    assert!(!rank_deficient(&s.norms, T::EPS));
    for (i, &j) in order.iter().enumerate() {
        let rel = (s.norms[j] - want[i].as_f64()).abs() / want[i].as_f64();
        assert!(rel <= 10.0 * m as f64 * T::EPS, "σ{i}: {rel:e}");
    }
    let v = s.v.unwrap();
    let vtv = v.t().dot(&v) - Array2::<f64>::eye(n);
    assert!(vtv.iter().all(|x| x.abs() <= 1e-13), "{vtv}");
    let y = y.0.mapv(|x| x.as_f64());
    let u = y.dot(&scaled_permutation(&s.norms, &order).t());
    let utu = u.t().dot(&u) - Array2::<f64>::eye(n);
    let bound = 10.0 * m as f64 * T::EPS;
    assert!(utu.iter().all(|x| x.abs() <= bound), "{utu}");
}

#[test]
fn graded_columns_converge_in_f64_and_f32() {
    graded_columns_converge::<f64>();
    graded_columns_converge::<f32>();
}

#[test]
fn the_stopping_test_is_relative_and_skips_zero_columns() {
    let g = array![[1.0, 1e-9], [1e-9, 1e-8]];
    // |g01| = 1e-9 against tol·sqrt(1e-8) = tol·1e-4.
    assert!(converged(&g, 1e-5, 0.0));
    assert!(!converged(&g, 1e-6, 0.0));
    // A column below the floor leaves the test: g is then converged.
    assert!(converged(&g, 1e-6, 1.0));
    assert!(converged(&array![[0.0, 0.0], [0.0, 4.0]], 0.0, 0.0));
}

#[test]
fn orthogonal_columns_stop_before_any_rotation() {
    let mut y = Host(array![[3.0f64, 0.0], [0.0, 4.0], [0.0, 0.0]]);
    let s = sweep(&mut y, 2, (1e-15, 0.0), true).unwrap().unwrap();
    assert_eq!(s.norms, vec![3.0, 4.0]);
    assert_eq!(s.v.unwrap(), Array2::eye(2));
}

/// Columns that never change: the driver gives up after SWEEPS sweeps.
struct Stuck;

impl Columns for Stuck {
    fn gram(&mut self) -> Result<Array2<f64>> {
        Ok(array![[2.0, 1.0], [1.0, 2.0]])
    }
    fn rotate(&mut self, _: &Array2<f64>) -> Result<()> {
        Ok(())
    }
}

#[test]
fn no_convergence_after_the_sweeps_allowed() {
    let e = sweep(&mut Stuck, 2, (1e-15, 0.0), false).unwrap_err();
    assert!(matches!(e, Error::NoConvergence { op: "svd", .. }), "{e}");
}

#[test]
fn a_gram_matrix_with_nan_or_inf_hands_the_call_back() {
    let mut y = Host(array![[1.0f64, f64::NAN], [0.0, 1.0]]);
    assert!(sweep(&mut y, 2, (1e-15, 0.0), true).unwrap().is_none());
    let mut y = Host(array![[1e200f64, 0.0], [0.0, 1.0]]);
    assert!(sweep(&mut y, 2, (1e-15, 0.0), true).unwrap().is_none());
}

#[test]
fn order_rank_and_permutations() {
    let norms = [2.0, 5.0, 2.0, 1.0];
    let order = descending(&norms);
    assert_eq!(order, vec![1, 0, 2, 3]);
    assert!(!rank_deficient(&norms, f64::EPSILON));
    assert!(rank_deficient(&[1.0, 1e-16], f64::EPSILON));
    assert!(rank_deficient(&[0.0, 0.0], f64::EPSILON));
    let s = scaled_permutation(&norms, &order);
    // Row i of S·Yᵀ is row order[i] of Yᵀ over its norm.
    let yt = array![[2.0], [5.0], [2.0], [1.0]];
    assert_eq!(s.dot(&yt), array![[1.0], [1.0], [1.0], [1.0]]);
    let v = array![[1.0, 2.0], [3.0, 4.0]];
    assert_eq!(permuted_vt(&v, &[1, 0]), array![[2.0, 4.0], [1.0, 3.0]]);
}

/// [`Host`] counting its sweeps.
struct Counted<T>(Host<T>, usize);

impl<T: Element> Columns for Counted<T> {
    fn gram(&mut self) -> Result<Array2<f64>> {
        self.1 += 1;
        self.0.gram()
    }
    fn rotate(&mut self, w: &Array2<f64>) -> Result<()> {
        self.0.rotate(w)
    }
}

/// The target shape scaled down (2¹⁶×32, columns graded over five decades) takes a
/// handful of sweeps in f32 and f64, far below [`SWEEPS`].
fn tall_graded_takes_few_sweeps<T: Element>() {
    let (m, n) = (1 << 16, 32);
    let mut y = Counted(Host(graded::<T>(m, n, 9)), 0);
    let tol = (m as f64).sqrt() * T::EPS;
    let s = sweep(&mut y, n, (tol, 0.0), false).unwrap().unwrap();
    assert!(!rank_deficient(&s.norms, T::EPS));
    assert!(y.1 <= 8, "{} reads of G", y.1);
}

#[test]
fn tall_graded_matrices_take_a_few_sweeps() {
    tall_graded_takes_few_sweeps::<f32>();
    tall_graded_takes_few_sweeps::<f64>();
}
