//! The element types of the vendor backend and the table mapping each to its cuBLAS
//! and cuSOLVER routines (`S…` for `f32`, `D…` for `f64`).
//!
//! | operation | cuBLAS / cuSOLVER routine |
//! |---|---|
//! | matrix product | `cublas{S,D}gemm_v2_64` |
//! | batched 1×1 products (row dot products) | `cublas{S,D}gemmStridedBatched_64` |
//! | transpose, add | `cublas{S,D}geam_64` |
//! | M·Mᵀ | `cublas{S,D}syrk_v2_64` |
//! | matrix·vector | `cublas{S,D}gemv_v2_64` |
//! | dot product | `cublas{S,D}dot_v2_64` |
//! | strided copy | `cublas{S,D}copy_v2_64` |
//! | triangle ↔ packed | `cublas{S,D}trttp`, `cublas{S,D}tpttr` |
//! | Cholesky | `cusolverDn{S,D}potrf_bufferSize`, `cusolverDn{S,D}potrf`, `cusolverDn{S,D}potrs` |

use ndgpu_cuda::CudaElement;

/// An element type the vendor libraries compute in: `f32` or `f64`. Sealed: the
/// routine table behind it is private.
pub trait BlasElement: CudaElement + table::Table {}
impl BlasElement for f32 {}
impl BlasElement for f64 {}

pub(crate) mod table {
    use cudarc::cublas::sys::{
        cublasFillMode_t, cublasHandle_t, cublasOperation_t, cublasStatus_t,
    };
    use cudarc::cusolver::sys as solver;

    /// One routine per operation, with the 64-bit integer interface of cuBLAS where it
    /// exists (so long vectors need no chunking). Arguments are those of the routine.
    #[allow(clippy::too_many_arguments, clippy::missing_safety_doc)]
    pub trait Table: Sized {
        unsafe fn gemm(
            h: cublasHandle_t,
            ta: cublasOperation_t,
            tb: cublasOperation_t,
            m: i64,
            n: i64,
            k: i64,
            alpha: *const Self,
            a: *const Self,
            lda: i64,
            b: *const Self,
            ldb: i64,
            beta: *const Self,
            c: *mut Self,
            ldc: i64,
        ) -> cublasStatus_t;
        unsafe fn gemm_strided_batched(
            h: cublasHandle_t,
            ta: cublasOperation_t,
            tb: cublasOperation_t,
            m: i64,
            n: i64,
            k: i64,
            alpha: *const Self,
            a: *const Self,
            lda: i64,
            stride_a: i64,
            b: *const Self,
            ldb: i64,
            stride_b: i64,
            beta: *const Self,
            c: *mut Self,
            ldc: i64,
            stride_c: i64,
            batch: i64,
        ) -> cublasStatus_t;
        unsafe fn geam(
            h: cublasHandle_t,
            ta: cublasOperation_t,
            tb: cublasOperation_t,
            m: i64,
            n: i64,
            alpha: *const Self,
            a: *const Self,
            lda: i64,
            beta: *const Self,
            b: *const Self,
            ldb: i64,
            c: *mut Self,
            ldc: i64,
        ) -> cublasStatus_t;
        unsafe fn syrk(
            h: cublasHandle_t,
            uplo: cublasFillMode_t,
            trans: cublasOperation_t,
            n: i64,
            k: i64,
            alpha: *const Self,
            a: *const Self,
            lda: i64,
            beta: *const Self,
            c: *mut Self,
            ldc: i64,
        ) -> cublasStatus_t;
        unsafe fn gemv(
            h: cublasHandle_t,
            trans: cublasOperation_t,
            m: i64,
            n: i64,
            alpha: *const Self,
            a: *const Self,
            lda: i64,
            x: *const Self,
            incx: i64,
            beta: *const Self,
            y: *mut Self,
            incy: i64,
        ) -> cublasStatus_t;
        unsafe fn dot(
            h: cublasHandle_t,
            n: i64,
            x: *const Self,
            incx: i64,
            y: *const Self,
            incy: i64,
            result: *mut Self,
        ) -> cublasStatus_t;
        unsafe fn copy(
            h: cublasHandle_t,
            n: i64,
            x: *const Self,
            incx: i64,
            y: *mut Self,
            incy: i64,
        ) -> cublasStatus_t;
        unsafe fn trttp(
            h: cublasHandle_t,
            uplo: cublasFillMode_t,
            n: i32,
            a: *const Self,
            lda: i32,
            ap: *mut Self,
        ) -> cublasStatus_t;
        unsafe fn tpttr(
            h: cublasHandle_t,
            uplo: cublasFillMode_t,
            n: i32,
            ap: *const Self,
            a: *mut Self,
            lda: i32,
        ) -> cublasStatus_t;
        unsafe fn potrf_buffer_size(
            h: solver::cusolverDnHandle_t,
            uplo: solver::cublasFillMode_t,
            n: i32,
            a: *mut Self,
            lda: i32,
            lwork: *mut i32,
        ) -> solver::cusolverStatus_t;
        unsafe fn potrf(
            h: solver::cusolverDnHandle_t,
            uplo: solver::cublasFillMode_t,
            n: i32,
            a: *mut Self,
            lda: i32,
            work: *mut Self,
            lwork: i32,
            info: *mut i32,
        ) -> solver::cusolverStatus_t;
        unsafe fn potrs(
            h: solver::cusolverDnHandle_t,
            uplo: solver::cublasFillMode_t,
            n: i32,
            nrhs: i32,
            a: *const Self,
            lda: i32,
            b: *mut Self,
            ldb: i32,
            info: *mut i32,
        ) -> solver::cusolverStatus_t;
    }

    macro_rules! table {
        ($t:ty, $gemm:ident, $batched:ident, $geam:ident, $syrk:ident, $gemv:ident,
         $dot:ident, $copy:ident, $trttp:ident, $tpttr:ident,
         $potrf_size:ident, $potrf:ident, $potrs:ident) => {
            impl Table for $t {
                unsafe fn gemm(
                    h: cublasHandle_t,
                    ta: cublasOperation_t,
                    tb: cublasOperation_t,
                    m: i64,
                    n: i64,
                    k: i64,
                    alpha: *const Self,
                    a: *const Self,
                    lda: i64,
                    b: *const Self,
                    ldb: i64,
                    beta: *const Self,
                    c: *mut Self,
                    ldc: i64,
                ) -> cublasStatus_t {
                    cudarc::cublas::sys::$gemm(
                        h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                    )
                }
                unsafe fn gemm_strided_batched(
                    h: cublasHandle_t,
                    ta: cublasOperation_t,
                    tb: cublasOperation_t,
                    m: i64,
                    n: i64,
                    k: i64,
                    alpha: *const Self,
                    a: *const Self,
                    lda: i64,
                    stride_a: i64,
                    b: *const Self,
                    ldb: i64,
                    stride_b: i64,
                    beta: *const Self,
                    c: *mut Self,
                    ldc: i64,
                    stride_c: i64,
                    batch: i64,
                ) -> cublasStatus_t {
                    cudarc::cublas::sys::$batched(
                        h, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c,
                        ldc, stride_c, batch,
                    )
                }
                unsafe fn geam(
                    h: cublasHandle_t,
                    ta: cublasOperation_t,
                    tb: cublasOperation_t,
                    m: i64,
                    n: i64,
                    alpha: *const Self,
                    a: *const Self,
                    lda: i64,
                    beta: *const Self,
                    b: *const Self,
                    ldb: i64,
                    c: *mut Self,
                    ldc: i64,
                ) -> cublasStatus_t {
                    cudarc::cublas::sys::$geam(h, ta, tb, m, n, alpha, a, lda, beta, b, ldb, c, ldc)
                }
                unsafe fn syrk(
                    h: cublasHandle_t,
                    uplo: cublasFillMode_t,
                    trans: cublasOperation_t,
                    n: i64,
                    k: i64,
                    alpha: *const Self,
                    a: *const Self,
                    lda: i64,
                    beta: *const Self,
                    c: *mut Self,
                    ldc: i64,
                ) -> cublasStatus_t {
                    cudarc::cublas::sys::$syrk(h, uplo, trans, n, k, alpha, a, lda, beta, c, ldc)
                }
                unsafe fn gemv(
                    h: cublasHandle_t,
                    trans: cublasOperation_t,
                    m: i64,
                    n: i64,
                    alpha: *const Self,
                    a: *const Self,
                    lda: i64,
                    x: *const Self,
                    incx: i64,
                    beta: *const Self,
                    y: *mut Self,
                    incy: i64,
                ) -> cublasStatus_t {
                    cudarc::cublas::sys::$gemv(
                        h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy,
                    )
                }
                unsafe fn dot(
                    h: cublasHandle_t,
                    n: i64,
                    x: *const Self,
                    incx: i64,
                    y: *const Self,
                    incy: i64,
                    result: *mut Self,
                ) -> cublasStatus_t {
                    cudarc::cublas::sys::$dot(h, n, x, incx, y, incy, result)
                }
                unsafe fn copy(
                    h: cublasHandle_t,
                    n: i64,
                    x: *const Self,
                    incx: i64,
                    y: *mut Self,
                    incy: i64,
                ) -> cublasStatus_t {
                    cudarc::cublas::sys::$copy(h, n, x, incx, y, incy)
                }
                unsafe fn trttp(
                    h: cublasHandle_t,
                    uplo: cublasFillMode_t,
                    n: i32,
                    a: *const Self,
                    lda: i32,
                    ap: *mut Self,
                ) -> cublasStatus_t {
                    cudarc::cublas::sys::$trttp(h, uplo, n, a, lda, ap)
                }
                unsafe fn tpttr(
                    h: cublasHandle_t,
                    uplo: cublasFillMode_t,
                    n: i32,
                    ap: *const Self,
                    a: *mut Self,
                    lda: i32,
                ) -> cublasStatus_t {
                    cudarc::cublas::sys::$tpttr(h, uplo, n, ap, a, lda)
                }
                unsafe fn potrf_buffer_size(
                    h: solver::cusolverDnHandle_t,
                    uplo: solver::cublasFillMode_t,
                    n: i32,
                    a: *mut Self,
                    lda: i32,
                    lwork: *mut i32,
                ) -> solver::cusolverStatus_t {
                    solver::$potrf_size(h, uplo, n, a, lda, lwork)
                }
                unsafe fn potrf(
                    h: solver::cusolverDnHandle_t,
                    uplo: solver::cublasFillMode_t,
                    n: i32,
                    a: *mut Self,
                    lda: i32,
                    work: *mut Self,
                    lwork: i32,
                    info: *mut i32,
                ) -> solver::cusolverStatus_t {
                    solver::$potrf(h, uplo, n, a, lda, work, lwork, info)
                }
                unsafe fn potrs(
                    h: solver::cusolverDnHandle_t,
                    uplo: solver::cublasFillMode_t,
                    n: i32,
                    nrhs: i32,
                    a: *const Self,
                    lda: i32,
                    b: *mut Self,
                    ldb: i32,
                    info: *mut i32,
                ) -> solver::cusolverStatus_t {
                    solver::$potrs(h, uplo, n, nrhs, a, lda, b, ldb, info)
                }
            }
        };
    }

    table!(
        f32,
        cublasSgemm_v2_64,
        cublasSgemmStridedBatched_64,
        cublasSgeam_64,
        cublasSsyrk_v2_64,
        cublasSgemv_v2_64,
        cublasSdot_v2_64,
        cublasScopy_v2_64,
        cublasStrttp,
        cublasStpttr,
        cusolverDnSpotrf_bufferSize,
        cusolverDnSpotrf,
        cusolverDnSpotrs
    );
    table!(
        f64,
        cublasDgemm_v2_64,
        cublasDgemmStridedBatched_64,
        cublasDgeam_64,
        cublasDsyrk_v2_64,
        cublasDgemv_v2_64,
        cublasDdot_v2_64,
        cublasDcopy_v2_64,
        cublasDtrttp,
        cublasDtpttr,
        cusolverDnDpotrf_bufferSize,
        cusolverDnDpotrf,
        cusolverDnDpotrs
    );
}
