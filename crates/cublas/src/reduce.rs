//! Reductions where cuBLAS truly computes the operation, and the hand-written kernels
//! of ndgpu-cuda where it does not.
//!
//! * sum: products with a vector of ones (exact multiplications, so only the additions
//!   round): GEMV per axis; for the whole matrix, GEMV over √L-long chunks, then DOT;
//! * sum of squares: DOT of x with itself (not NRM2², which scales and rounds
//!   differently); per axis, one 1×1×k GEMM per row or column in a strided batch;
//! * dot: DOT;
//! * min, max, argmin, argmax: cuBLAS has none. `I{S,D}AMAX`/`AMIN` find the largest
//!   or smallest *absolute* value, a different operation, so these run the runtime's
//!   reduction kernels (the hand-written backend's defaults).

use cudarc::cublas::sys::{cublasHandle_t, cublasOperation_t};
use cudarc::driver::CudaSlice;
use ndarray::Axis;
use ndgpu_core::Variant;
use ndgpu_core::{ArgOp, Error, Indices, Matrix, ReduceKernels, ReduceOp, Result};
use ndgpu_cuda_runtime::{reduce, DeviceMatrix};

use crate::{error, i64_of, ptr, ptr_mut, BlasElement, CublasBackend};

/// Variants, default first.
pub const VARIANTS: &[Variant] = &[Variant::new(
    "cublas",
    "sum = GEMV/DOT against a vector of ones, sum of squares = DOT(x, x) (per axis: \
     strided-batched 1×1 GEMMs, row·row), dot = DOT. cuBLAS has no min/max (its I?AMAX/I?AMIN \
     use absolute values and are NOT min/max), so min, max, argmin and argmax run the \
     runtime's kernels (those of the cuda backend's default variant)",
)];

/// What every variant shares.
pub const NOTE: &str = "";

const N: cublasOperation_t = cublasOperation_t::CUBLAS_OP_N;
const T_: cublasOperation_t = cublasOperation_t::CUBLAS_OP_T;

impl CublasBackend {
    /// `Σ xᵢ·yᵢ` over the first `n` elements of two resident vectors (DOT).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when a buffer is shorter than `n`; cuBLAS errors.
    pub(crate) fn dot_device<T: BlasElement>(
        &self,
        x: &CudaSlice<T>,
        y: &CudaSlice<T>,
        n: usize,
    ) -> Result<T> {
        if x.len() < n || y.len() < n {
            return Err(Error::shape(
                "dot",
                format!("n = {n} but the buffers hold {} and {}", x.len(), y.len()),
            ));
        }
        if n == 0 {
            return Ok(T::zero());
        }
        let h = self.blas()?;
        // SAFETY: both buffers hold at least n elements.
        unsafe { dot_raw(h.raw, n, ptr(&self.gpu, x), ptr(&self.gpu, y)) }
    }

    /// The sum of all elements of a resident matrix. Each call uploads a vector of
    /// about √len ones (a few KB for a billion elements) and waits for the result.
    ///
    /// # Errors
    /// cuBLAS errors; out of memory (two vectors of about √len elements).
    pub(crate) fn sum_device<T: BlasElement>(&self, m: &DeviceMatrix<T>) -> Result<T> {
        let len = m.len();
        if len == 0 {
            return Ok(T::zero());
        }
        // The buffer as a column-major chunk×q matrix (plus a tail): GEMV gives the q
        // column sums, DOT adds them up; ones of length chunk ≥ q serve both.
        let chunk = ceil_sqrt(len);
        let q = len / chunk;
        let tail = len - q * chunk;
        let ones = self.ones::<T>(chunk)?;
        let mut partial = self.gpu.alloc::<T>("sum", q)?;
        let gpu = &self.gpu;
        let (pm, po, pp) = (
            ptr(gpu, &m.data),
            ptr(gpu, &ones),
            ptr_mut(gpu, &mut partial),
        );
        let h = self.blas()?;
        // SAFETY: m holds len = q·chunk + tail elements; ones chunk; partial q ≤ chunk.
        unsafe {
            let (c, qq) = (i64_of(chunk), i64_of(q));
            let (one, zero) = (T::one(), T::zero());
            error::cublas(
                T::gemv(h.raw, T_, c, qq, &one, pm, c, po, 1, &zero, pp, 1),
                "sum (gemv)",
            )?;
            let head = dot_raw(h.raw, q, pp, po)?;
            let rest = match tail {
                0 => T::zero(),
                _ => dot_raw(h.raw, tail, pm.add(q * chunk), po)?,
            };
            Ok(head + rest)
        }
    }

    /// The sum of the squares of all elements of a resident matrix: DOT(x, x).
    ///
    /// # Errors
    /// cuBLAS errors.
    pub(crate) fn sum_sq_device<T: BlasElement>(&self, m: &DeviceMatrix<T>) -> Result<T> {
        self.dot_device(&m.data, &m.data, m.len())
    }

    /// Per-axis sums (`Axis(0)`: one per column, `Axis(1)`: one per row) into `out`,
    /// by GEMV against a vector of ones (uploaded by each call, as long as the reduced
    /// axis).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `out` is too short, `InvalidArgument` for another
    /// axis; cuBLAS errors.
    pub(crate) fn sum_axis_device<T: BlasElement>(
        &self,
        (m, axis): (&DeviceMatrix<T>, Axis),
        out: &mut CudaSlice<T>,
    ) -> Result<()> {
        let Some((kept, reduced)) = self.axis_lengths("sum", m, axis, out)? else {
            return Ok(());
        };
        let ones = self.ones::<T>(reduced)?;
        let gpu = &self.gpu;
        let (pm, po, pout) = (ptr(gpu, &m.data), ptr(gpu, &ones), ptr_mut(gpu, out));
        // Column-major the buffer is X = mᵀ (cols×rows, ld cols): row sums are Xᵀ·1,
        // column sums X·1.
        let trans = if axis == Axis(1) { T_ } else { N };
        let (xr, xc) = (i64_of(m.cols), i64_of(m.rows));
        let h = self.blas()?;
        let (one, zero) = (T::one(), T::zero());
        debug_assert_eq!(kept * reduced, m.len());
        // SAFETY: m is rows×cols; ones has the reduced length, out the kept one.
        let status = unsafe {
            T::gemv(
                h.raw,
                trans,
                xr,
                xc,
                &one,
                pm,
                xr.max(1),
                po,
                1,
                &zero,
                pout,
                1,
            )
        };
        error::cublas(status, "sum along an axis (gemv)")
    }

    /// Per-axis sums of squares into `out`: the dot product of each row (or column)
    /// with itself, as a strided batch of 1×1×k GEMMs.
    ///
    /// # Errors
    /// As [`CublasBackend::sum_axis_device`].
    pub(crate) fn sum_sq_axis_device<T: BlasElement>(
        &self,
        m: &DeviceMatrix<T>,
        (axis, out): (Axis, &mut CudaSlice<T>),
    ) -> Result<()> {
        let Some((kept, reduced)) = self.axis_lengths("sumsq", m, axis, out)? else {
            return Ok(());
        };
        // Each batch entry is a 1×k row vector (A) times its transpose (B = A, op T).
        // Rows: elements 1 apart, entries `cols` apart. Columns: the reverse.
        let (ld, stride) = if axis == Axis(1) {
            (1, i64_of(m.cols))
        } else {
            (i64_of(m.cols), 1)
        };
        let gpu = &self.gpu;
        let (pm, pout) = (ptr(gpu, &m.data), ptr_mut(gpu, out));
        let (k, batch) = (i64_of(reduced), i64_of(kept));
        let (one, zero) = (T::one(), T::zero());
        let h = self.blas()?;
        // SAFETY: entry i reads elements i·stride + l·ld (l < k) of m, all within its
        // rows×cols; out holds `kept` elements, written 1 apart.
        let status = unsafe {
            T::gemm_strided_batched(
                h.raw, N, T_, 1, 1, k, &one, pm, ld, stride, pm, ld, stride, &zero, pout, 1, 1,
                batch,
            )
        };
        error::cublas(status, "sum of squares along an axis (batched gemm)")
    }

    /// `(kept, reduced)` lengths of an axis reduction, or `None` when there is nothing
    /// left to compute (`out` is already complete: empty, or zeroed here).
    fn axis_lengths<T: BlasElement>(
        &self,
        op: &'static str,
        m: &DeviceMatrix<T>,
        axis: Axis,
        out: &mut CudaSlice<T>,
    ) -> Result<Option<(usize, usize)>> {
        let (kept, reduced) = match axis.index() {
            0 => (m.cols, m.rows),
            1 => (m.rows, m.cols),
            i => return Err(Error::invalid(op, format!("axis {i} of a 2-D array"))),
        };
        if out.len() < kept {
            return Err(Error::shape(
                op,
                format!("out holds {} elements, {kept} needed", out.len()),
            ));
        }
        if kept == 0 {
            return Ok(None);
        }
        if reduced == 0 {
            self.zero(out)?;
            return Ok(None);
        }
        Ok(Some((kept, reduced)))
    }

    /// A device vector of `len` ones.
    pub(crate) fn ones<T: BlasElement>(&self, len: usize) -> Result<CudaSlice<T>> {
        let ones = ndgpu_core::host::filled_vec("ones", len, T::one())?;
        self.gpu.upload_slice("ones", &ones)
    }
}

/// DOT of two vectors of `n` elements, stride 1, result to the host.
///
/// # Safety
/// Both hold n elements on the handle's stream.
unsafe fn dot_raw<T: BlasElement>(
    h: cublasHandle_t,
    n: usize,
    x: *const T,
    y: *const T,
) -> Result<T> {
    let mut r = T::zero();
    // The handle is in host pointer mode (the default, never changed): cuBLAS writes
    // `r` before returning.
    error::cublas(T::dot(h, i64_of(n), x, 1, y, 1, &mut r), "dot")?;
    Ok(r)
}

/// The smallest s with s² ≥ n (1 for n = 0).
fn ceil_sqrt(n: usize) -> usize {
    let mut s = (n as f64).sqrt() as usize;
    while s * s < n {
        s += 1;
    }
    while s > 1 && (s - 1) * (s - 1) >= n {
        s -= 1;
    }
    s.max(1)
}

impl<T: BlasElement> ReduceKernels<T> for CublasBackend {
    fn reduce_unchecked(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T> {
        let a = self.gpu.dm(self.here(), op.name(), "A", a)?;
        match op {
            ReduceOp::Min | ReduceOp::Max => reduce::whole(&self.gpu, op, a),
            ReduceOp::Sum => self.sum_device(a),
            ReduceOp::SumSq => self.sum_sq_device(a),
        }
    }

    fn reduce_axis_unchecked(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>> {
        let gpu = &self.gpu;
        let a = gpu.dm(self.here(), op.name(), "A", a)?;
        if op.needs_element() {
            return Ok(gpu.matrix(reduce::along(gpu, op, a, axis)?));
        }
        let kept = ndgpu_core::backend::kept(a.dim(), axis);
        let (rows, cols) = if axis.index() == 0 {
            (1, kept)
        } else {
            (kept, 1)
        };
        let mut out = gpu.alloc_matrix(op.name(), rows, cols)?;
        match op {
            ReduceOp::Sum => self.sum_axis_device((a, axis), &mut out.data)?,
            _ => self.sum_sq_axis_device(a, (axis, &mut out.data))?,
        }
        Ok(gpu.matrix(out))
    }

    fn arg_reduce_unchecked(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize> {
        let a = self.gpu.dm(self.here(), op.name(), "A", a)?;
        reduce::arg_whole(&self.gpu, op, a)
    }

    fn arg_reduce_axis_unchecked(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices> {
        let gpu = &self.gpu;
        let a = gpu.dm(self.here(), op.name(), "A", a)?;
        let (len, s) = reduce::arg_along(gpu, op, a, axis)?;
        Ok(gpu.index_array(len, s))
    }

    fn dot_unchecked(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T> {
        let x = self.gpu.dm(self.here(), "dot", "x", x)?;
        let y = self.gpu.dm(self.here(), "dot", "y", y)?;
        self.dot_device(&x.data, &y.data, x.len())
    }
}

#[cfg(test)]
mod tests {
    use super::ceil_sqrt;

    #[test]
    fn ceil_sqrt_is_the_least_square_cover() {
        for n in 0..2000usize {
            let s = ceil_sqrt(n);
            assert!(s * s >= n, "{n}: {s}");
            assert!(s == 1 || (s - 1) * (s - 1) < n, "{n}: {s}");
            // The whole-matrix sum relies on q = n / s ≤ s for its ones vector.
            assert!(n / s <= s, "{n}: {s}");
        }
    }
}
