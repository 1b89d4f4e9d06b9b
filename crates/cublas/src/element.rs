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
//! | triangular solve | `cublas{S,D}trsm_v2_64` |
//! | Cholesky | `cusolverDn{S,D}potrf_bufferSize`, `cusolverDn{S,D}potrf`, `cusolverDn{S,D}potrs`; `cusolverDnXpotrf` (64-bit API, data type `CUDA_R_{32,64}F`) |
//! | LU | `cusolverDnXgetrf_bufferSize`, `cusolverDnXgetrf` (64-bit API, `int64_t` pivots) |
//! | QR | `cusolverDnXgeqrf_bufferSize`, `cusolverDnXgeqrf` (64-bit API) |
//! | product with Q | `cusolverDn{S,D}ormqr_bufferSize`, `cusolverDn{S,D}ormqr` (no 64-bit form exists) |
//! | triangle·vector | `cublas{S,D}trmv_v2_64` |
//! | symmetric eigendecomposition | `cusolverDnXsyevd_bufferSize`, `cusolverDnXsyevd` (64-bit API) |
//! | SVD | `cusolverDn{S,D}gesvdj_bufferSize`, `cusolverDn{S,D}gesvdj` (Jacobi, no 64-bit form); `cusolverDnXgesvd_bufferSize`, `cusolverDnXgesvd` (64-bit API) |

use cudarc::cusolver::sys::cudaDataType;
use ndgpu_core::Result;
use ndgpu_cuda_runtime::{triangle, CudaElement, DeviceMatrix, Gpu};

/// An element type the vendor libraries compute in: `f32` or `f64`. Sealed: the
/// routine table behind it is private.
pub trait BlasElement: CudaElement + table::Table {
    /// The data type of cuSOLVER's 64-bit (`X`) API.
    const DATA_TYPE: cudaDataType;

    /// For an operation that computes `Self` in f64 (`eigh`): an f64 copy of `a` for
    /// f32, `None` for f64 (computed as is).
    ///
    /// # Errors
    /// Allocation and driver errors.
    fn widened(gpu: &Gpu, a: &DeviceMatrix<Self>) -> Result<Option<DeviceMatrix<f64>>>;

    /// An f64 result as `Self`: rounded to nearest for f32, as is for f64.
    ///
    /// # Errors
    /// Allocation and driver errors.
    fn narrowed(gpu: &Gpu, a: DeviceMatrix<f64>) -> Result<DeviceMatrix<Self>>;
}
impl BlasElement for f32 {
    const DATA_TYPE: cudaDataType = cudaDataType::CUDA_R_32F;

    fn widened(gpu: &Gpu, a: &DeviceMatrix<f32>) -> Result<Option<DeviceMatrix<f64>>> {
        triangle::widen(gpu, a).map(Some)
    }

    fn narrowed(gpu: &Gpu, a: DeviceMatrix<f64>) -> Result<DeviceMatrix<f32>> {
        triangle::narrow(gpu, &a)
    }
}
impl BlasElement for f64 {
    const DATA_TYPE: cudaDataType = cudaDataType::CUDA_R_64F;

    fn widened(_: &Gpu, _: &DeviceMatrix<f64>) -> Result<Option<DeviceMatrix<f64>>> {
        Ok(None)
    }

    fn narrowed(_: &Gpu, a: DeviceMatrix<f64>) -> Result<DeviceMatrix<f64>> {
        Ok(a)
    }
}

pub(crate) mod table {
    use cudarc::cublas::sys::{
        self as blas, cublasDiagType_t, cublasFillMode_t, cublasHandle_t, cublasOperation_t,
        cublasSideMode_t, cublasStatus_t,
    };
    use cudarc::cusolver::sys as solver;

    /// Writes each routine's signature once: the trait [`Table`] with that method, and
    /// its `f32` and `f64` impls calling the routine named for each type.
    macro_rules! routines {
        ($(
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $s:path, $d:path;
        )*) => {
            /// One routine per operation, with the 64-bit integer interface of cuBLAS
            /// where it exists (so long vectors need no chunking). Arguments are those
            /// of the routine.
            #[allow(clippy::too_many_arguments, clippy::missing_safety_doc)]
            pub trait Table: Sized {
                $(unsafe fn $name($($arg: $ty),*) -> $ret;)*
            }
            #[allow(clippy::too_many_arguments)]
            impl Table for f32 {
                $(unsafe fn $name($($arg: $ty),*) -> $ret { $s($($arg),*) })*
            }
            #[allow(clippy::too_many_arguments)]
            impl Table for f64 {
                $(unsafe fn $name($($arg: $ty),*) -> $ret { $d($($arg),*) })*
            }
        };
    }

    routines! {
        fn gemm(
            h: cublasHandle_t, ta: cublasOperation_t, tb: cublasOperation_t,
            m: i64, n: i64, k: i64,
            alpha: *const Self, a: *const Self, lda: i64, b: *const Self, ldb: i64,
            beta: *const Self, c: *mut Self, ldc: i64,
        ) -> cublasStatus_t = blas::cublasSgemm_v2_64, blas::cublasDgemm_v2_64;
        fn gemm_strided_batched(
            h: cublasHandle_t, ta: cublasOperation_t, tb: cublasOperation_t,
            m: i64, n: i64, k: i64,
            alpha: *const Self, a: *const Self, lda: i64, stride_a: i64,
            b: *const Self, ldb: i64, stride_b: i64,
            beta: *const Self, c: *mut Self, ldc: i64, stride_c: i64, batch: i64,
        ) -> cublasStatus_t = blas::cublasSgemmStridedBatched_64, blas::cublasDgemmStridedBatched_64;
        fn geam(
            h: cublasHandle_t, ta: cublasOperation_t, tb: cublasOperation_t, m: i64, n: i64,
            alpha: *const Self, a: *const Self, lda: i64,
            beta: *const Self, b: *const Self, ldb: i64, c: *mut Self, ldc: i64,
        ) -> cublasStatus_t = blas::cublasSgeam_64, blas::cublasDgeam_64;
        fn syrk(
            h: cublasHandle_t, uplo: cublasFillMode_t, trans: cublasOperation_t, n: i64, k: i64,
            alpha: *const Self, a: *const Self, lda: i64,
            beta: *const Self, c: *mut Self, ldc: i64,
        ) -> cublasStatus_t = blas::cublasSsyrk_v2_64, blas::cublasDsyrk_v2_64;
        fn gemv(
            h: cublasHandle_t, trans: cublasOperation_t, m: i64, n: i64,
            alpha: *const Self, a: *const Self, lda: i64, x: *const Self, incx: i64,
            beta: *const Self, y: *mut Self, incy: i64,
        ) -> cublasStatus_t = blas::cublasSgemv_v2_64, blas::cublasDgemv_v2_64;
        fn dot(
            h: cublasHandle_t, n: i64, x: *const Self, incx: i64, y: *const Self, incy: i64,
            result: *mut Self,
        ) -> cublasStatus_t = blas::cublasSdot_v2_64, blas::cublasDdot_v2_64;
        fn copy(
            h: cublasHandle_t, n: i64, x: *const Self, incx: i64, y: *mut Self, incy: i64,
        ) -> cublasStatus_t = blas::cublasScopy_v2_64, blas::cublasDcopy_v2_64;
        fn trsm(
            h: cublasHandle_t, side: cublasSideMode_t, uplo: cublasFillMode_t,
            trans: cublasOperation_t, diag: cublasDiagType_t, m: i64, n: i64,
            alpha: *const Self, a: *const Self, lda: i64, b: *mut Self, ldb: i64,
        ) -> cublasStatus_t = blas::cublasStrsm_v2_64, blas::cublasDtrsm_v2_64;
        fn trttp(
            h: cublasHandle_t, uplo: cublasFillMode_t, n: i32, a: *const Self, lda: i32,
            ap: *mut Self,
        ) -> cublasStatus_t = blas::cublasStrttp, blas::cublasDtrttp;
        fn tpttr(
            h: cublasHandle_t, uplo: cublasFillMode_t, n: i32, ap: *const Self, a: *mut Self,
            lda: i32,
        ) -> cublasStatus_t = blas::cublasStpttr, blas::cublasDtpttr;
        fn potrf_buffer_size(
            h: solver::cusolverDnHandle_t, uplo: solver::cublasFillMode_t, n: i32,
            a: *mut Self, lda: i32, lwork: *mut i32,
        ) -> solver::cusolverStatus_t =
            solver::cusolverDnSpotrf_bufferSize, solver::cusolverDnDpotrf_bufferSize;
        fn potrf(
            h: solver::cusolverDnHandle_t, uplo: solver::cublasFillMode_t, n: i32,
            a: *mut Self, lda: i32, work: *mut Self, lwork: i32, info: *mut i32,
        ) -> solver::cusolverStatus_t = solver::cusolverDnSpotrf, solver::cusolverDnDpotrf;
        fn potrs(
            h: solver::cusolverDnHandle_t, uplo: solver::cublasFillMode_t, n: i32, nrhs: i32,
            a: *const Self, lda: i32, b: *mut Self, ldb: i32, info: *mut i32,
        ) -> solver::cusolverStatus_t = solver::cusolverDnSpotrs, solver::cusolverDnDpotrs;
        fn trmv(
            h: cublasHandle_t, uplo: cublasFillMode_t, trans: cublasOperation_t,
            diag: cublasDiagType_t, n: i64, a: *const Self, lda: i64, x: *mut Self, incx: i64,
        ) -> cublasStatus_t = blas::cublasStrmv_v2_64, blas::cublasDtrmv_v2_64;
        fn gesvdj_buffer_size(
            h: solver::cusolverDnHandle_t, jobz: solver::cusolverEigMode_t, econ: i32,
            m: i32, n: i32, a: *const Self, lda: i32, s: *const Self,
            u: *const Self, ldu: i32, v: *const Self, ldv: i32, lwork: *mut i32,
            params: solver::gesvdjInfo_t,
        ) -> solver::cusolverStatus_t =
            solver::cusolverDnSgesvdj_bufferSize, solver::cusolverDnDgesvdj_bufferSize;
        fn gesvdj(
            h: solver::cusolverDnHandle_t, jobz: solver::cusolverEigMode_t, econ: i32,
            m: i32, n: i32, a: *mut Self, lda: i32, s: *mut Self,
            u: *mut Self, ldu: i32, v: *mut Self, ldv: i32, work: *mut Self, lwork: i32,
            info: *mut i32, params: solver::gesvdjInfo_t,
        ) -> solver::cusolverStatus_t = solver::cusolverDnSgesvdj, solver::cusolverDnDgesvdj;
        fn ormqr_buffer_size(
            h: solver::cusolverDnHandle_t, side: solver::cublasSideMode_t,
            trans: solver::cublasOperation_t, m: i32, n: i32, k: i32,
            a: *const Self, lda: i32, tau: *const Self, c: *const Self, ldc: i32,
            lwork: *mut i32,
        ) -> solver::cusolverStatus_t =
            solver::cusolverDnSormqr_bufferSize, solver::cusolverDnDormqr_bufferSize;
        fn ormqr(
            h: solver::cusolverDnHandle_t, side: solver::cublasSideMode_t,
            trans: solver::cublasOperation_t, m: i32, n: i32, k: i32,
            a: *const Self, lda: i32, tau: *const Self, c: *mut Self, ldc: i32,
            work: *mut Self, lwork: i32, info: *mut i32,
        ) -> solver::cusolverStatus_t = solver::cusolverDnSormqr, solver::cusolverDnDormqr;
    }
}
