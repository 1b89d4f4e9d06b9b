// triangle.cu: what both GPU backends' factorizations need around the factor, owned by
// the shared runtime (crates/cuda-runtime/src/triangle.rs):
//
//   zero_upper     clear the strict upper triangle of a square row-major matrix (the
//                  factor's promise; cuSOLVER leaves the input's values there)
//   factor_status  one small record from a factorization, read back once: the library's
//                  info and the first non-finite diagonal entry of the factor (cuSOLVER's
//                  potrf takes a NaN pivot for a positive one)
//   diag_scan      the diagonal of a general factor (LU's U, QR's R) and the first
//                  non-finite entry of the whole factor, in one record read back once
//   pivots_from_lapack  LAPACK's 1-based row swaps to 0-based ones, in place
//   laswp          apply row swaps to a row-major right-hand side, forward or backward
//   widen, narrow  f32 → f64 and f64 → f32 copies (cuBLAS's eigh factors f32 in f64)
//   gather_rows    dst row i = src row perm[i] of a row-major matrix (eigenvectors put in
//                  the order of their sorted eigenvalues)
#include "common.cuh"

// Zeroes the strict upper triangle (never read, so it may hold anything on entry).
template <typename T> __device__ void tri_zero_upper(T* a, int n) {
    for (int i = blockIdx.y; i < n; i += gridDim.y)
        for (int j = i + 1 + blockIdx.x * blockDim.x + threadIdx.x; j < n;
             j += gridDim.x * blockDim.x)
            a[(i64)i * n + j] = T(0);
}

__device__ __forceinline__ bool tri_finite(float x) { return x - x == 0.0f; }
__device__ __forceinline__ bool tri_finite(double x) { return x - x == 0.0; }

// out[0] = info[0]; out[1] = the first p with a[p][p] not finite, -1 for none (scanned
// only where info[0] is 0). One block; the smallest index wins whatever the order.
template <typename T> __device__ void tri_factor_status(const int* info, const T* a, int n,
                                                        int* out) {
    __shared__ int first;
    if (threadIdx.x == 0) first = 0x7fffffff;
    __syncthreads();
    const int status = info[0];
    if (status == 0)
        for (int p = threadIdx.x; p < n; p += blockDim.x)
            if (!tri_finite(a[(i64)p * (n + 1)])) atomicMin(&first, p);
    __syncthreads();
    if (threadIdx.x == 0) {
        out[0] = status;
        out[1] = first == 0x7fffffff ? -1 : first;
    }
}

// out[i] = a[i][i] as double bits for i < k; out[k] = the largest of (2^63 - 1 - e) over
// non-finite entries e (row-major index of an r×c buffer), so 0 means none and the
// smallest index wins. out must be zeroed.
template <typename T> __device__ void tri_diag_scan(const T* a, i64 r, i64 c,
                                                    unsigned long long* out) {
    const i64 k = r < c ? r : c;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < r * c; e += stride) {
        const T x = a[e];
        if (!tri_finite(x)) atomicMax(out + k, (unsigned long long)(0x7fffffffffffffffLL - e));
        const i64 i = e / c;
        if (i == e % c) out[i] = (unsigned long long)__double_as_longlong((double)x);
    }
}

// Row swaps of a row-major n×cols matrix: for i in 0..k (forward) or k-1 down to 0, swap
// rows i and ipiv[i]. One thread per column walks every swap in order.
template <typename T> __device__ void tri_laswp(T* b, i64 cols, const i64* ipiv, int k,
                                                int forward) {
    for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < cols;
         j += (i64)gridDim.x * blockDim.x)
        for (int s = 0; s < k; ++s) {
            const int i = forward ? s : k - 1 - s;
            const i64 p = ipiv[i];
            if (p != i) {
                const T t = b[(i64)i * cols + j];
                b[(i64)i * cols + j] = b[p * cols + j];
                b[p * cols + j] = t;
            }
        }
}

extern "C" __global__ void __launch_bounds__(256) triangle_pivots_from_lapack(i64* ipiv, int k) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x)
        ipiv[i] -= 1;
}

extern "C" __global__ void __launch_bounds__(256) triangle_widen(const float* src, double* dst,
                                                                  i64 len) {
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < len;
         e += (i64)gridDim.x * blockDim.x)
        dst[e] = (double)src[e];
}

// Rounds to nearest (the conversion's default), as the host's `as f32`.
extern "C" __global__ void __launch_bounds__(256) triangle_narrow(const double* src, float* dst,
                                                                   i64 len) {
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < len;
         e += (i64)gridDim.x * blockDim.x)
        dst[e] = (float)src[e];
}

// dst row i = src row perm[i], both row-major rows×cols; perm holds rows indices below rows.
// A grid-stride loop over dst's elements.
template <typename T> __device__ void tri_gather_rows(const T* src, T* dst, const i64* perm,
                                                      i64 rows, i64 cols) {
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < rows * cols;
         e += (i64)gridDim.x * blockDim.x) {
        const i64 i = e / cols;
        dst[e] = src[perm[i] * cols + (e - i * cols)];
    }
}

#define TRI_KERNELS(T, S)                                                                   \
    extern "C" __global__ void __launch_bounds__(256) triangle_zero_upper_##S(T* a, int n) { \
        tri_zero_upper<T>(a, n);                                                            \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        triangle_factor_status_##S(const int* info, const T* a, int n, int* out) {          \
        tri_factor_status<T>(info, a, n, out);                                              \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        triangle_diag_scan_##S(const T* a, i64 r, i64 c, unsigned long long* out) {         \
        tri_diag_scan<T>(a, r, c, out);                                                     \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        triangle_laswp_##S(T* b, i64 cols, const i64* ipiv, int k, int forward) {           \
        tri_laswp<T>(b, cols, ipiv, k, forward);                                            \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        triangle_gather_rows_##S(const T* src, T* dst, const i64* perm, i64 rows, i64 cols) { \
        tri_gather_rows<T>(src, dst, perm, rows, cols);                                     \
    }

TRI_KERNELS(float, f32)
TRI_KERNELS(double, f64)
