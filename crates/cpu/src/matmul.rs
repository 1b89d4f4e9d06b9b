//! Products (`gemm`, `gram`) and the transpose.
//!
//! Products run in f64 through ndarray's `dot` (matrixmultiply, single-threaded), so an
//! f32 result is the f64 product rounded once: its error is about one unit roundoff of
//! f32 instead of the `k·u` of an f32 accumulation.

use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayViewMut2, Zip};
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{host, Element, Gemm, MatMulKernels, Matrix, Result, TransposeKernels};

use crate::memory::rounded;
use crate::{to_f64, CpuBackend, HERE};

impl<T: Element> MatMulKernels<T> for CpuBackend {
    fn gemm_unchecked(&self, g: Gemm<T>, ab: [&Matrix<T>; 2], c: &mut Matrix<T>) -> Result<()> {
        let [a, b] = ab;
        let (m, n) = c.dim();
        let a = HERE.host_view("gemm", "A", a)?;
        let b = HERE.host_view("gemm", "B", b)?;
        // m×n is not bounded by the operands' bytes when k = 0: allocate fallibly.
        let mut ab = host::filled("gemm", (m, n), 0.0f64)?;
        general_mat_mul(
            1.0,
            &to_f64(&g.ta.apply(a)),
            &to_f64(&g.tb.apply(b)),
            0.0,
            &mut ab,
        );
        let (alpha, beta) = (g.alpha.as_f64(), g.beta.as_f64());
        let c: &mut HostStorage<T> = HERE.matrix_mut("gemm", "C", c)?;
        let mut c = ArrayViewMut2::from_shape((m, n), &mut c.data).expect("C is m×n");
        // With beta = 0, C is never read: NaN in it must not reach the result.
        if beta != 0.0 {
            Zip::from(&mut c)
                .and(&ab)
                .for_each(|o, &p| *o = T::from_f64(alpha * p + beta * o.as_f64()));
        } else {
            Zip::from(&mut c)
                .and(&ab)
                .for_each(|o, &p| *o = T::from_f64(alpha * p));
        }
        Ok(())
    }

    fn gram_unchecked(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        let m64 = to_f64(&HERE.host_view("gram", "M", m)?);
        let n = m64.nrows();
        // n×n is not bounded by the operand's bytes when it has no columns.
        let mut g = host::filled("gram", (n, n), 0.0f64)?;
        general_mat_mul(1.0, &m64, &m64.t(), 0.0, &mut g);
        // Rounding only the lower triangle and mirroring it makes the result exactly
        // symmetric whatever order the f64 product summed in.
        let lower = Array2::from_shape_fn((n, n), |(i, j)| g[[i.max(j), i.min(j)]]);
        Ok(rounded(&lower))
    }
}

impl<T: Element> TransposeKernels<T> for CpuBackend {
    fn transpose_unchecked(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        let a = HERE.host_view("transpose", "A", a)?;
        Ok(backend::host_matrix(
            a.t().as_standard_layout().into_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, ShapeBuilder};
    use ndgpu_core::prelude::*;
    use ndgpu_core::Trans;

    #[test]
    fn gemm_applies_alpha_beta_and_transposes() {
        let cpu = CpuBackend::new();
        let a = array![[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]]; // 3x2
        let b = array![[1.0f64, 0.0, -1.0], [2.0, 1.0, 0.0]]; // 2x3
        let c = array![[1.0f64, 1.0], [1.0, 1.0]];
        // Aᵀ·Bᵀ: (2x3)·(3x2)
        let g = Gemm::new()
            .alpha(2.0)
            .ta(Trans::Yes)
            .tb(Trans::Yes)
            .beta(-1.0);
        let r = cpu.gemm(g, a.view(), b.view(), Some(c.view())).unwrap();
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
            .gemm(Gemm::new(), a.view(), b.view(), Some(c.view()))
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
