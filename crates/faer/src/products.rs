//! Products (`gemm`, `gram`) and the transpose.

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{matmul as triangular_matmul, BlockStructure};
use faer::Accum;
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{host, Gemm, MatMulKernels, Matrix, Memory, Result, Trans, TransposeKernels};
use rayon::prelude::*;

use crate::{par, FaerBackend, FaerElement, HERE};

/// The transpose of `op(X)` for a row-major X: its buffer read column-major is Xᵀ.
fn op_transposed<T>(t: Trans, data: &[T], (rows, cols): (usize, usize)) -> faer::MatRef<'_, T> {
    let xt = faer::MatRef::from_column_major_slice(data, cols, rows);
    match t {
        Trans::No => xt,
        Trans::Yes => xt.transpose(),
    }
}

impl<T: FaerElement> MatMulKernels<T> for FaerBackend {
    fn gemm_unchecked(&self, g: Gemm<T>, ab: [&Matrix<T>; 2], c: &mut Matrix<T>) -> Result<()> {
        let [a, b] = ab;
        let (m, n) = c.dim();
        let (da, db) = (a.dim(), b.dim());
        let a: &HostStorage<T> = HERE.matrix("gemm", "A", a)?;
        let b: &HostStorage<T> = HERE.matrix("gemm", "B", b)?;
        let c: &mut HostStorage<T> = HERE.matrix_mut("gemm", "C", c)?;
        // BLAS semantics: with β = 0, C is written, never read (NaN in it stays out).
        let accum = if g.beta == T::zero() {
            Accum::Replace
        } else {
            if g.beta != T::one() {
                c.data.par_iter_mut().for_each(|v| *v *= g.beta);
            }
            Accum::Add
        };
        // faer runs fastest on column-major data, and a row-major matrix read
        // column-major is its transpose: so compute Cᵀ = op(B)ᵀ·op(A)ᵀ.
        matmul(
            faer::MatMut::from_column_major_slice_mut(&mut c.data, n, m),
            accum,
            op_transposed(g.tb, &b.data, db),
            op_transposed(g.ta, &a.data, da),
            g.alpha,
            par(),
        );
        Ok(())
    }

    fn gram_unchecked(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        let (n, k) = m.dim();
        let s: &HostStorage<T> = HERE.matrix("gram", "M", m)?;
        // n×n is not bounded by the operand's bytes when it has no columns.
        let mut g = host::filled_vec("gram", n * n, T::zero())?;
        // Column-major reads of the row-major buffers (faer's fast layout): M's is Mᵀ,
        // and G's lower triangle read column-major is the row-major upper one.
        let mt = faer::MatRef::from_column_major_slice(&s.data, k, n);
        triangular_matmul(
            faer::MatMut::from_column_major_slice_mut(&mut g, n, n),
            BlockStructure::TriangularLower,
            Accum::Replace,
            mt.transpose(),
            BlockStructure::Rectangular,
            mt,
            BlockStructure::Rectangular,
            T::one(),
            par(),
        );
        // Mirroring the computed (upper) triangle makes the result exactly symmetric.
        for i in 0..n {
            for j in 0..i {
                g[i * n + j] = g[j * n + i];
            }
        }
        Ok(backend::matrix(n, n, HostStorage { data: g }))
    }
}

/// The side of the square tiles of the transpose.
const TILE: usize = 64;

impl<T: FaerElement> TransposeKernels<T> for FaerBackend {
    fn transpose_unchecked(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        let (rows, cols) = a.dim();
        let src: &HostStorage<T> = HERE.matrix("transpose", "A", a)?;
        let mut out = Memory::<T>::zeros(self, cols, rows)?;
        let dst: &mut HostStorage<T> = HERE.matrix_mut("transpose", "Aᵀ", &mut out)?;
        if rows == 0 || cols == 0 {
            return Ok(out);
        }
        // Each task writes TILE rows of the output (TILE columns of the input), tile by
        // tile, so both sides are read and written in cache-sized pieces.
        dst.data
            .par_chunks_mut(TILE * rows)
            .enumerate()
            .for_each(|(block, out_rows)| {
                let j0 = block * TILE;
                let jn = out_rows.len() / rows;
                for i0 in (0..rows).step_by(TILE) {
                    for i in i0..(i0 + TILE).min(rows) {
                        let row = &src.data[i * cols + j0..i * cols + j0 + jn];
                        for (jj, &v) in row.iter().enumerate() {
                            out_rows[jj * rows + i] = v;
                        }
                    }
                }
            });
        Ok(out)
    }
}
