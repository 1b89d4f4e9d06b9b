//! `M·Mᵀ` through cuBLAS, made exactly symmetric without a kernel of our own.
//!
//! Both variants compute one triangle, the row-major lower one (the column-major upper
//! one: the same memory), into a buffer S whose other triangle is zero, and then
//! mirror it exactly with two cuBLAS calls:
//!
//! 1. GEAM `out = S + Sᵀ`: off the diagonal each element is `x + 0`, which is exact;
//!    the diagonal comes out doubled;
//! 2. COPY of S's diagonal onto out's (stride n + 1), which undoes the doubling.

use cudarc::cublas::sys::{cublasFillMode_t, cublasHandle_t, cublasOperation_t};
use ndgpu_core::Variant;
use ndgpu_core::{Family, Matrix, Result, Trans};
use ndgpu_cuda_runtime::dim_i32;

use crate::matmul::gemm_raw;
use crate::{error, i64_of, ptr, ptr_mut, BlasElement, CublasBackend};

/// Variants, default first.
pub const VARIANTS: &[Variant] = &[
    Variant::new(
        "syrk",
        "SSYRK/DSYRK into one triangle of a zeroed buffer, mirrored exactly by GEAM (S + Sᵀ) \
         and a strided COPY of the diagonal",
    ),
    Variant::new(
        "gemm",
        "the full SGEMM/DGEMM of M·Mᵀ, which need not be exactly symmetric, so its row-major \
         lower triangle is kept (TRTTP to packed, TPTTR into a zeroed buffer) and mirrored \
         the same way",
    ),
];

/// What every variant shares.
pub const NOTE: &str = "exactly symmetric; all steps are cuBLAS";

/// The row-major lower triangle is the column-major upper one.
const ROW_MAJOR_LOWER: cublasFillMode_t = cublasFillMode_t::CUBLAS_FILL_MODE_UPPER;

impl CublasBackend {
    /// `M·Mᵀ` (n×n for an n×k `M`) with the selected [`Family::Gram`] variant; the result
    /// is exactly symmetric. Needs one n×n scratch buffer, plus a packed triangle for
    /// `gemm`. The backend's `gram` kernel.
    pub(crate) fn gram_device<T: BlasElement>(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        let gpu = &self.gpu;
        let m = gpu.dm(self.here(), "gram", "M", m)?;
        let (n, k) = m.dim();
        let mut out = gpu.alloc_matrix::<T>("gram", n, n)?;
        if n == 0 {
            return Ok(gpu.matrix(out));
        }
        let mut s = gpu.alloc_matrix::<T>("gram", n, n)?;
        let use_gemm = k > 0 && self.variants.current(Family::Gram) == "gemm";
        let mut packed = match use_gemm {
            true => Some(gpu.alloc::<T>("gram", n * (n + 1) / 2)?),
            false => None,
        };
        let h = self.blas()?;
        let pm = ptr(gpu, &m.data);
        let ps = ptr_mut(gpu, &mut s.data);
        let pout = ptr_mut(gpu, &mut out.data);
        match packed.as_mut() {
            Some(p) => {
                let pp = ptr_mut(gpu, p);
                // SAFETY: m is n×k, so M·Mᵀ is n×n like s; p holds n(n+1)/2 elements.
                unsafe {
                    let (mk, no, yes) = ((n, k), Trans::No, Trans::Yes);
                    gemm_raw(h.raw, T::one(), pm, mk, no, pm, mk, yes, T::zero(), ps)?;
                    packed_lower(h.raw, Packing::Pack, ps, n, pp)?;
                }
                // Queued after the packing on the same stream, so it clears S only
                // once the triangle is safe in `p`.
                self.zero(&mut s.data)?;
                // SAFETY: as above.
                unsafe { packed_lower(h.raw, Packing::Unpack, ps, n, pp)? };
            }
            None => {
                self.zero(&mut s.data)?;
                if k > 0 {
                    // SAFETY: m is n×k row-major (column-major k×n, ld k); s is n×n.
                    unsafe { syrk_lower(h.raw, pm, n, k, ps)? };
                }
            }
        }
        // SAFETY: s and out are distinct n×n buffers. The scratch buffers are freed
        // after this call is queued; frees are ordered on the same stream.
        unsafe { mirror(h.raw, ps, n, pout)? };
        drop(h);
        Ok(gpu.matrix(out))
    }
}

/// The row-major lower triangle of `m·mᵀ` into `s` (the rest of `s` untouched).
///
/// # Safety
/// `m` holds n×k row-major elements, `s` n×n.
unsafe fn syrk_lower<T: BlasElement>(
    h: cublasHandle_t,
    m: *const T,
    n: usize,
    k: usize,
    s: *mut T,
) -> Result<()> {
    // Column-major, m's buffer is X = Mᵀ (k×n, ld k) and M·Mᵀ = Xᵀ·X: trans = T.
    error::cublas(
        T::syrk(
            h,
            ROW_MAJOR_LOWER,
            cublasOperation_t::CUBLAS_OP_T,
            i64_of(n),
            i64_of(k),
            &T::one(),
            m,
            i64_of(k.max(1)),
            &T::zero(),
            s,
            i64_of(n),
        ),
        "gram: syrk",
    )
}

/// Which way [`packed_lower`] copies.
#[derive(Clone, Copy)]
enum Packing {
    /// From the row-major lower triangle of S into the packed array.
    Pack,
    /// From the packed array back into S's lower triangle (its other triangle is left
    /// as it is).
    Unpack,
}

/// Copies between the row-major lower triangle of the n×n `s` and `packed`, the way
/// `dir` says.
///
/// # Safety
/// `s` holds n×n elements, `packed` n(n+1)/2.
unsafe fn packed_lower<T: BlasElement>(
    h: cublasHandle_t,
    dir: Packing,
    s: *mut T,
    n: usize,
    packed: *mut T,
) -> Result<()> {
    let n32 = dim_i32("gram", n)?;
    match dir {
        Packing::Pack => error::cublas(
            T::trttp(h, ROW_MAJOR_LOWER, n32, s, n32, packed),
            "gram: packing the triangle (trttp)",
        ),
        Packing::Unpack => error::cublas(
            T::tpttr(h, ROW_MAJOR_LOWER, n32, packed, s, n32),
            "gram: unpacking the triangle (tpttr)",
        ),
    }
}

/// `out ← S + Sᵀ` with S's diagonal, for an n×n `s` that is zero outside one triangle:
/// the exact symmetric completion of that triangle.
///
/// # Safety
/// `s` and `out` are distinct n×n buffers.
unsafe fn mirror<T: BlasElement>(
    h: cublasHandle_t,
    s: *mut T,
    n: usize,
    out: *mut T,
) -> Result<()> {
    let nn = i64_of(n);
    error::cublas(
        T::geam(
            h,
            cublasOperation_t::CUBLAS_OP_N,
            cublasOperation_t::CUBLAS_OP_T,
            nn,
            nn,
            &T::one(),
            s,
            nn,
            &T::one(),
            s,
            nn,
            out,
            nn,
        ),
        "gram: mirroring (geam)",
    )?;
    error::cublas(
        T::copy(h, nn, s, nn + 1, out, nn + 1),
        "gram: restoring the diagonal (copy)",
    )
}
