//! Products (`gemm`, `gram`) and the transpose.
//!
//! Products run in f64 through ndarray's `dot` (matrixmultiply, single-threaded), so an
//! f32 result is the f64 product rounded once: its error is about one unit roundoff of
//! f32 instead of the `k·u` of an f32 accumulation.

use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayView2, Zip};
use ndgpu_core::{check, host, Element, MatMul, Result, Trans, Transpose};

use crate::{to_f64, CpuBackend};

impl<T: Element> MatMul<T> for CpuBackend {
    fn gemm(
        &self,
        alpha: T,
        a: ArrayView2<T>,
        ta: Trans,
        b: ArrayView2<T>,
        tb: Trans,
        beta: T,
        c: Option<ArrayView2<T>>,
    ) -> Result<Array2<T>> {
        let (m, n, _k) = check::gemm(a, ta, b, tb, beta, c.as_ref())?;
        // m×n is not bounded by the operands' bytes when k = 0: allocate fallibly.
        let mut ab = host::filled("gemm", (m, n), 0.0f64)?;
        general_mat_mul(
            1.0,
            &to_f64(&ta.apply(a)),
            &to_f64(&tb.apply(b)),
            0.0,
            &mut ab,
        );
        let (alpha, beta) = (alpha.as_f64(), beta.as_f64());
        let mut out = host::filled("gemm", (m, n), T::zero())?;
        // With beta = 0, C is never read: NaN in it must not reach the result.
        match c {
            Some(c) if beta != 0.0 => Zip::from(&mut out)
                .and(&ab)
                .and(&c)
                .for_each(|o, &p, &cv| *o = T::from_f64(alpha * p + beta * cv.as_f64())),
            _ => Zip::from(&mut out)
                .and(&ab)
                .for_each(|o, &p| *o = T::from_f64(alpha * p)),
        }
        Ok(out)
    }

    fn gram(&self, m: ArrayView2<T>) -> Result<Array2<T>> {
        let m64 = to_f64(&m);
        let n = m.nrows();
        // n×n is not bounded by the operand's bytes when it has no columns.
        let mut g = host::filled("gram", (n, n), 0.0f64)?;
        general_mat_mul(1.0, &m64, &m64.t(), 0.0, &mut g);
        // Rounding only the lower triangle and mirroring it makes the result exactly
        // symmetric whatever order the f64 product summed in.
        let mut out = host::filled("gram", (n, n), T::zero())?;
        for ((i, j), o) in out.indexed_iter_mut() {
            *o = T::from_f64(g[[i.max(j), i.min(j)]]);
        }
        Ok(out)
    }
}

impl<T: Element> Transpose<T> for CpuBackend {
    fn transpose(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        let (m, n) = a.dim();
        Ok(Array2::from_shape_fn((n, m), |(i, j)| a[[j, i]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, ShapeBuilder};

    #[test]
    fn gemm_applies_alpha_beta_and_transposes() {
        let cpu = CpuBackend::new();
        let a = array![[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]]; // 3x2
        let b = array![[1.0f64, 0.0, -1.0], [2.0, 1.0, 0.0]]; // 2x3
        let c = array![[1.0f64, 1.0], [1.0, 1.0]];
        // Aᵀ·Bᵀ: (2x3)·(3x2)
        let r = cpu
            .gemm(
                2.0,
                a.view(),
                Trans::Yes,
                b.view(),
                Trans::Yes,
                -1.0,
                Some(c.view()),
            )
            .unwrap();
        let expect = a.t().dot(&b.t()) * 2.0 - &c;
        assert_eq!(r, expect);
    }

    #[test]
    fn beta_zero_never_reads_c() {
        let cpu = CpuBackend::new();
        let a = array![[1.0f32, 2.0]];
        let b = array![[3.0f32], [4.0]];
        let c = array![[f32::NAN]];
        let r = cpu
            .gemm(
                1.0,
                a.view(),
                Trans::No,
                b.view(),
                Trans::No,
                0.0,
                Some(c.view()),
            )
            .unwrap();
        assert_eq!(r, array![[11.0f32]]);
    }

    #[test]
    fn outputs_are_c_ordered() {
        let cpu = CpuBackend::new();
        let a = Array2::<f32>::ones((3, 4).f());
        assert!(cpu.transpose(a.view()).unwrap().is_standard_layout());
        assert!(cpu.matmul(a.t(), a.view()).unwrap().is_standard_layout());
        assert!(cpu.gram(a.t()).unwrap().is_standard_layout());
    }
}
