//! Triangular solves with many right-hand sides (`solve_triangular`, BLAS `trsm` with
//! side = left), on faer's recursive triangular solve (all cores).
//!
//! The row-major n×n A is read in place: `op(T)` is A's triangle or its transpose (a
//! view, no copy), and faer's solve reads only the triangle it is given (the unit forms
//! not even its diagonal). X overwrites B in place.

use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_unit_lower_triangular_in_place,
    solve_unit_upper_triangular_in_place, solve_upper_triangular_in_place,
};
use ndgpu_core::backend::HostStorage;
use ndgpu_core::{Error, Matrix, Result, Trans, Triangular, Uplo};

use crate::{mat, mat_mut, par, FaerBackend, FaerElement, HERE};

/// The op, in errors.
const OP: &str = "solve_triangular";

impl FaerBackend {
    /// [`FactorizeKernels::trsm_unchecked`](ndgpu_core::FactorizeKernels::trsm_unchecked):
    /// a zero on a diagonal that is read is refused before B is touched.
    pub(crate) fn trsm_kernel<T: FaerElement>(
        &self,
        (a, tri, b): (&Matrix<T>, Triangular, &mut Matrix<T>),
    ) -> Result<()> {
        let op = OP;
        let n = a.rows();
        let nrhs = b.cols();
        let s: &HostStorage<T> = HERE.matrix(op, "A", a)?;
        if !tri.unit {
            if let Some(pivot) = (0..n).find(|&i| s.data[i * n + i] == T::zero()) {
                return Err(Error::Singular { op, pivot });
            }
        }
        let a = mat(&s.data, n, n);
        let t = match tri.trans {
            Trans::No => a,
            Trans::Yes => a.transpose(),
        };
        let bs: &mut HostStorage<T> = HERE.matrix_mut(op, "B", b)?;
        let x = mat_mut(&mut bs.data, n, nrhs);
        // op(T) is lower triangular when T is lower and used as is, or upper and
        // transposed.
        let lower = (tri.uplo == Uplo::Lower) == (tri.trans == Trans::No);
        match (lower, tri.unit) {
            (true, false) => solve_lower_triangular_in_place(t, x, par()),
            (true, true) => solve_unit_lower_triangular_in_place(t, x, par()),
            (false, false) => solve_upper_triangular_in_place(t, x, par()),
            (false, true) => solve_unit_upper_triangular_in_place(t, x, par()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};
    use ndgpu_core::prelude::*;

    fn close(a: &Array2<f64>, b: &Array2<f64>) -> bool {
        a.shape() == b.shape() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-12)
    }

    #[test]
    fn every_triangle_and_op_solves_and_ignores_the_other_triangle() {
        let b = FaerBackend::new();
        let n = 70;
        // A full matrix: each solve must read only its triangle (NaN elsewhere would
        // show if it did not).
        let full = Array2::from_shape_fn((n, n), |(i, j)| {
            if i == j {
                2.0 + i as f64 / n as f64
            } else {
                ((i * 7 + j * 3) % 13) as f64 / 130.0
            }
        });
        let want = Array2::from_shape_fn((n, 3), |(i, j)| (i + 2 * j) as f64 / 10.0 - 1.0);
        for upper in [false, true] {
            for trans in [Trans::No, Trans::Yes] {
                for unit in [false, true] {
                    let t = Array2::from_shape_fn((n, n), |(i, j)| {
                        let inside = if upper { j >= i } else { j <= i };
                        match (inside, i == j && unit) {
                            (_, true) => 1.0,
                            (true, false) => full[[i, j]],
                            (false, false) => 0.0,
                        }
                    });
                    let mut a = Array2::from_shape_fn((n, n), |(i, j)| {
                        let inside = if upper { j >= i } else { j <= i };
                        if inside && !(unit && i == j) {
                            full[[i, j]]
                        } else {
                            f64::NAN
                        }
                    });
                    if unit {
                        a.diag_mut().fill(f64::NAN);
                    }
                    let op_t = if trans == Trans::Yes {
                        t.t().to_owned()
                    } else {
                        t
                    };
                    let rhs = op_t.dot(&want);
                    let tri = Triangular {
                        uplo: if upper { Uplo::Upper } else { Uplo::Lower },
                        trans,
                        unit,
                    };
                    let ad = b.upload(a.view()).unwrap();
                    let mut x = b.upload(rhs.view()).unwrap();
                    b.solve_triangular_in_place_dev(&ad, tri, &mut x).unwrap();
                    let x = b.download(&x).unwrap();
                    assert!(close(&x, &want), "upper {upper} {trans:?} unit {unit}");
                }
            }
        }
    }

    #[test]
    fn a_zero_on_the_diagonal_is_singular_and_b_is_untouched() {
        let b = FaerBackend::new();
        let a = b.upload(array![[1.0f64, 0.0], [3.0, 0.0]].view()).unwrap();
        let rhs = array![[1.0f64], [2.0]];
        let mut x = b.upload(rhs.view()).unwrap();
        match b.solve_triangular_in_place_dev(&a, Triangular::lower(), &mut x) {
            Err(Error::Singular {
                op: "solve_triangular",
                pivot: 1,
            }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(b.download(&x).unwrap(), rhs);
        // With a unit diagonal the zero is not read.
        let tri = Triangular::lower().unit(true);
        b.solve_triangular_in_place_dev(&a, tri, &mut x).unwrap();
        assert_eq!(b.download(&x).unwrap(), array![[1.0], [-1.0]]);
    }
}
