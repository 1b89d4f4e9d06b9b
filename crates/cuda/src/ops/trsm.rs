//! Triangular solve ladder: `op(T)·X = B` in place, T a triangle of a square row-major
//! matrix, B n×nrhs (BLAS `trsm`, side = left).
//!
//! | variant | what it launches |
//! |---|---|
//! | `recursive` (default) | the Cholesky solve's recursive blocked solve: halves of the rows, the off-diagonal block by the GEMM ladder's fastest rung (f64: the FP64 tensor cores where the shape suits them), leaves of 256 rows (f64 on DMMA: 64) as products with the inverses of 64×64 diagonal blocks; a triangle other than a non-unit lower one is first copied as a lower-stored one (`tri_prepare`: the upper triangle transposed, ones on a unit diagonal) |
//! | `naive` | one thread per column of B, substitution row by row (`trsm_naive`) |

use cudarc::driver::PushKernelArg;
use ndgpu_core::Variant as Row;
use ndgpu_core::{Backend, Error, Family, Matrix, Result, Triangular, Uplo};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{go, linear};
use ndgpu_cuda_runtime::triangle::diag_scan;
use ndgpu_cuda_runtime::{blocks, dim_i32, kernel, push_args, CudaElement, DeviceMatrix, Gpu};

use super::cholesky::lower_solve;
use super::find_row;
use crate::CudaBackend;

/// Variants, default first.
pub const VARIANTS: &[Row] = &[
    Row::new(
        "recursive",
        "recursive blocked solve (the Cholesky solve's): the off-diagonal blocks by the GEMM \
         ladder (f64 on DMMA where the shape suits it), 256-row leaves (f64 on DMMA: 64) \
         as products with inverted 64x64 diagonal blocks; other triangles than a \
         non-unit lower one copied as one first",
    ),
    Row::new(
        "naive",
        "one thread per column of B, substitution row by row",
    ),
];

/// Determinism and scope.
pub const NOTE: &str = "bitwise reproducible (fixed order, no atomics); a zero on a \
    diagonal that is read is found by one scan of the diagonal, read back once, before \
    anything is solved";

/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &["tri_prepare_f32", "tri_prepare_f64"];

/// Solves `op(T)·X = B` in place with the named variant, T the triangle `tri` of the n×n
/// `a` (square, B n rows: checked by the caller; a zero diagonal is not looked for).
///
/// # Errors
/// [`Error::UnknownVariant`]; out of memory; device errors.
pub(crate) fn trsm<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    a: &DeviceMatrix<T>,
    tri: Triangular,
    b: &mut DeviceMatrix<T>,
) -> Result<()> {
    let row = find_row(VARIANTS, Family::Trsm, variant)?;
    let n = dim_i32("solve_triangular", a.rows)?;
    let nrhs = dim_i32("solve_triangular", b.cols)?;
    let (upper, trans, unit) = (
        i32::from(tri.uplo == Uplo::Upper),
        i32::from(tri.trans == ndgpu_core::Trans::Yes),
        i32::from(tri.unit),
    );
    if row.name == "naive" {
        let name = kernel!("trsm_naive").of::<T>();
        let f = gpu.function(KernelFile::LU, name)?;
        let mut l = gpu.stream().launch_builder(&f);
        push_args!(l; &a.data, &n, &mut b.data, &nrhs, &upper, &trans, &unit);
        // SAFETY: (const T* t, int n, T* b, int nrhs, int upper, int trans, int unit): t
        // is n×n, b n×nrhs (checked by the caller); thread c < nrhs walks column c only.
        return unsafe { go(l, name, linear(blocks(b.cols, 128), 128)) };
    }
    let back = !tri.forward();
    if tri.uplo == Uplo::Lower && !tri.unit {
        return lower_solve(gpu, a, None, b, back);
    }
    let mut l = gpu.alloc_matrix::<T>("solve_triangular", a.rows, a.rows)?;
    let name = kernel!("tri_prepare").of::<T>();
    let f = gpu.function(KernelFile::LU, name)?;
    let mut lb = gpu.stream().launch_builder(&f);
    push_args!(lb; &a.data, &n, &mut l.data, &upper, &unit);
    // SAFETY: (const T* src, int n, T* dst, int upper, int unit): both n×n; the
    // grid-stride loop stays below n².
    unsafe { go(lb, name, linear(blocks(a.len(), 256).min(4096), 256))? };
    // An upper A holds the copy's transpose: the backward updates read it as it is.
    let upper = (tri.uplo == Uplo::Upper).then_some(a);
    lower_solve(gpu, &l, upper, b, back)
}

impl CudaBackend {
    /// `FactorizeKernels::trsm_unchecked`: one read of A's diagonal (when it is read),
    /// then [`trsm`].
    pub(crate) fn triangular_solve<T>(
        &self,
        a: &Matrix<T>,
        tri: Triangular,
        b: &mut Matrix<T>,
    ) -> Result<()>
    where
        T: CudaElement,
    {
        let gpu = self.gpu();
        let op = "solve_triangular";
        let da = gpu.dm(self.here(), op, "A", a)?;
        if !tri.unit {
            let scan = diag_scan(gpu, op, &da.data, da.dim())?;
            if let Some(pivot) = scan.diag.iter().position(|&d| d == 0.0) {
                return Err(Error::Singular { op, pivot });
            }
        }
        let db = gpu.dm_mut(self.here(), op, "B", b)?;
        trsm(gpu, self.variant(Family::Trsm), da, tri, db)
    }
}
