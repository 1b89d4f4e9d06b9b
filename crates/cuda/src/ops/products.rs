//! The backend's products: gemm on the GEMM ladder, gram on the M·Mᵀ ladder.

use ndgpu_core::{Backend, Family, Gemm, MatMulKernels, Matrix, Result};
use ndgpu_cuda_runtime::CudaElement;

use crate::ops::{gram, matmul};
use crate::CudaBackend;

impl<T: CudaElement> MatMulKernels<T> for CudaBackend {
    fn gemm_unchecked(&self, g: Gemm<T>, ab: [&Matrix<T>; 2], c: &mut Matrix<T>) -> Result<()> {
        let [a, b] = ab;
        let (gpu, here) = (self.gpu(), self.here());
        let a = gpu.dm(here, "gemm", "A", a)?;
        let b = gpu.dm(here, "gemm", "B", b)?;
        let c = gpu.dm_mut(here, "gemm", "C", c)?;
        matmul::gemm(gpu, self.variant(Family::MatMul), g, a, b, c)
    }

    fn gram_unchecked(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        gram::gram_of(self, m)
    }
}
