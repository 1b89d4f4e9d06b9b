// triangle.cu: what both GPU backends' factorizations need around the factor, owned by
// the shared runtime (crates/cuda-runtime/src/triangle.rs):
//
//   zero_upper     clear the strict upper triangle of a square row-major matrix (the
//                  factor's promise; cuSOLVER leaves the input's values there)
//   factor_status  one small record from a factorization, read back once: the library's
//                  info and the first non-finite diagonal entry of the factor (cuSOLVER's
//                  potrf takes a NaN pivot for a positive one)
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

#define TRI_KERNELS(T, S)                                                                   \
    extern "C" __global__ void __launch_bounds__(256) triangle_zero_upper_##S(T* a, int n) { \
        tri_zero_upper<T>(a, n);                                                            \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        triangle_factor_status_##S(const int* info, const T* a, int n, int* out) {          \
        tri_factor_status<T>(info, a, n, out);                                              \
    }

TRI_KERNELS(float, f32)
TRI_KERNELS(double, f64)
