// lu.cu: LU with partial pivoting (crates/cuda/src/ops/lu), row-major, in place.
//
//   lu_pivot       one block per column step: the pivot search down column j (the first
//                  largest |a|), the swap of whole rows j and p, the column below scaled
//                  by 1/pivot (not when the pivot is exactly zero: LAPACK's getf2)
//   lu_rank1       the rank-1 update of the columns (j, c_end) below row j
//   lu_trsm_panel  U12 = L11^-1 A12 for a panel of nb columns (L11 unit lower, in shared
//                  memory), one thread per column of A12
//   lu_leaf        a narrow sub-panel (rows c0.., w columns) factored by one block in shared
//                  memory: per column the pivot search, the swap inside the sub-panel, the
//                  scaling and the rank-1 update of the sub-panel's other columns
//   lu_swap_rows   the leaf's swaps applied to every other column, a thread per column
//   lu_copy_block  a rows×cols block between row strides (L21 out of the matrix, so that
//                  the GEMM reads it while it writes the trailing matrix)
//   tri_prepare    a triangle as a lower-stored n×n matrix for the recursive solve: the
//                  lower triangle as is or the upper one transposed, ones on the diagonal
//                  for a unit triangle, zeros above
//   trsm_naive     the naive triangular solve: one thread per column of B, substitution
//                  in the order op(T) asks for
#include "common.cuh"

template <typename T> __device__ __forceinline__ T lu_abs(T x) { return x < T(0) ? -x : x; }

// A candidate pivot: |value| and row.
template <typename T> struct LuArg {
    T v;
    int at;
};

// The first largest candidate of a warp into its lane 0: NaN never wins a comparison,
// ties go to the lower row.
template <typename T> __device__ __forceinline__ LuArg<T> lu_warp_argmax(LuArg<T> c) {
    for (int o = 16; o > 0; o >>= 1) {
        const T ov = __shfl_down_sync(0xffffffff, c.v, o);
        const int oa = __shfl_down_sync(0xffffffff, c.at, o);
        if (ov > c.v || (ov == c.v && oa < c.at)) c = LuArg<T>{ov, oa};
    }
    return c;
}

// The first largest candidate of the block into thread 0, through 32 entries of shared
// memory (best, where).
template <typename T>
__device__ __forceinline__ LuArg<T> lu_block_argmax(LuArg<T> c, T* best, int* where) {
    c = lu_warp_argmax(c);
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { best[w] = c.v; where[w] = c.at; }
    __syncthreads();
    if (w == 0) {
        const int nw = blockDim.x / 32;
        c.v = lane < nw ? best[lane] : T(-1);
        c.at = lane < nw ? where[lane] : 0x7fffffff;
        c = lu_warp_argmax(c);
    }
    return c;
}

// Column j of the m×n row-major a (row stride lda): pivot search over rows j..m-1, swap,
// scale. ipiv[j] = p. One block of 1024 threads.
template <typename T> __device__ void lu_pivot(T* a, int m, int n, i64 lda, int j, i64* ipiv) {
    __shared__ T best[32];
    __shared__ int where[32];
    __shared__ int piv;
    T v = T(-1);
    int at = 0x7fffffff;
    for (int i = j + threadIdx.x; i < m; i += blockDim.x) {
        const T x = lu_abs(a[(i64)i * lda + j]);
        // NaN never wins a comparison; the first largest wins ties.
        if (x > v) { v = x; at = i; }
    }
    const LuArg<T> c = lu_block_argmax(LuArg<T>{v, at}, best, where);
    v = c.v;
    at = c.at;
    if (threadIdx.x == 0) {
        // A column of zeros (or NaN) keeps row j: nothing to swap.
        piv = (v > T(0) && at < m) ? at : j;
        ipiv[j] = piv;
    }
    __syncthreads();
    const int p = piv;
    if (p != j)
        for (int c = threadIdx.x; c < n; c += blockDim.x) {
            const T t = a[(i64)j * lda + c];
            a[(i64)j * lda + c] = a[(i64)p * lda + c];
            a[(i64)p * lda + c] = t;
        }
    __syncthreads();
    const T d = a[(i64)j * lda + j];
    if (d != T(0)) {
        const T r = T(1) / d;
        for (int i = j + 1 + threadIdx.x; i < m; i += blockDim.x) a[(i64)i * lda + j] *= r;
    }
}

// The sub-panel rows [c0, m) × columns [c0, c0 + w) of the m×n a, in shared memory with
// rows w + 1 apart. 512 threads.
template <typename T> __device__ void lu_leaf(T* a, int m, int n, i64 lda, int c0, int w, i64* ipiv) {
    extern __shared__ unsigned char smem_raw[];
    T* s = reinterpret_cast<T*>(smem_raw);
    __shared__ T best[32];
    __shared__ int where[32];
    __shared__ int piv;
    const int rows = m - c0, ld = w + 1;
    for (int e = threadIdx.x; e < rows * w; e += blockDim.x)
        s[(e / w) * ld + e % w] = a[(i64)(c0 + e / w) * lda + c0 + e % w];
    __syncthreads();
    for (int jj = 0; jj < w; ++jj) {
        T v = T(-1);
        int at = 0x7fffffff;
        for (int i = jj + threadIdx.x; i < rows; i += blockDim.x) {
            const T x = lu_abs(s[i * ld + jj]);
            if (x > v) { v = x; at = i; }
        }
        const LuArg<T> c = lu_block_argmax(LuArg<T>{v, at}, best, where);
        if (threadIdx.x == 0) {
            piv = (c.v > T(0) && c.at < rows) ? c.at : jj;
            ipiv[c0 + jj] = c0 + piv;
        }
        __syncthreads();
        const int p = piv;
        if (p != jj)
            for (int c = threadIdx.x; c < w; c += blockDim.x) {
                const T t = s[jj * ld + c];
                s[jj * ld + c] = s[p * ld + c];
                s[p * ld + c] = t;
            }
        __syncthreads();
        const T d = s[jj * ld + jj];
        const T r = d != T(0) ? T(1) / d : T(0);
        // Scale and update, a row per thread: l = a[i][jj]·r, a[i][c] −= l·u[c].
        for (int i = jj + 1 + threadIdx.x; i < rows; i += blockDim.x) {
            const T l = d != T(0) ? s[i * ld + jj] * r : s[i * ld + jj];
            s[i * ld + jj] = l;
            if (d != T(0))
                for (int c = jj + 1; c < w; ++c) s[i * ld + c] -= l * s[jj * ld + c];
        }
        __syncthreads();
    }
    for (int e = threadIdx.x; e < rows * w; e += blockDim.x)
        a[(i64)(c0 + e / w) * lda + c0 + e % w] = s[(e / w) * ld + e % w];
}

// Rows c0 + s and ipiv[c0 + s] swapped for s = 0..w−1 in order, in every column outside
// [c0, c0 + w).
template <typename T> __device__ void lu_swap_rows(T* a, int n, i64 lda, const i64* ipiv, int c0, int w) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n - w) return;
    const int col = t < c0 ? t : t + w;
    for (int q = 0; q < w; ++q) {
        const i64 i = c0 + q, p = ipiv[c0 + q];
        if (p != i) {
            const T x = a[i * lda + col];
            a[i * lda + col] = a[p * lda + col];
            a[p * lda + col] = x;
        }
    }
}

// a[i][c] -= a[i][j]·a[j][c] for j < i < m, j < c < c_end. Block (x, y): 32 columns × 8
// rows per pass, grid-stride over both.
template <typename T> __device__ void lu_rank1(T* a, int m, i64 lda, int j, int c_end) {
    const int c = j + 1 + blockIdx.x * 32 + threadIdx.x;
    if (c >= c_end) return;
    const T u = a[(i64)j * lda + c];
    if (u == T(0)) return;
    for (int i = j + 1 + blockIdx.y * blockDim.y + threadIdx.y; i < m; i += gridDim.y * blockDim.y)
        a[(i64)i * lda + c] -= a[(i64)i * lda + j] * u;
}

// Rows j0..j0+nb of columns c0 + 128·blockIdx.x + threadIdx.x below c_end:
// X = L11^-1 · A12, L11 the unit lower nb×nb block at (j0, j0). nb ≤ 64.
template <typename T> __device__ void lu_trsm_panel(T* a, int n, i64 lda, int j0, int nb, int c0) {
    __shared__ T l[64][65];
    for (int e = threadIdx.x; e < nb * nb; e += blockDim.x) {
        const int r = e / nb, c = e % nb;
        l[r][c] = a[(i64)(j0 + r) * lda + j0 + c];
    }
    __syncthreads();
    const int c = c0 + blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    T x[64];
#pragma unroll 1
    for (int i = 0; i < nb; ++i) {
        T s = a[(i64)(j0 + i) * lda + c];
        for (int k = 0; k < i; ++k) s -= l[i][k] * x[k];
        x[i] = s;
        a[(i64)(j0 + i) * lda + c] = s;
    }
}

template <typename T> __device__ void lu_copy_block(const T* src, i64 lds, int rows, int cols,
                                                   T* dst, i64 ldd) {
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < (i64)rows * cols;
         e += (i64)gridDim.x * blockDim.x)
        dst[(e / cols) * ldd + e % cols] = src[(e / cols) * lds + e % cols];
}

template <typename T> __device__ void tri_prepare(const T* src, int n, T* dst, int upper, int unit) {
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < (i64)n * n;
         e += (i64)gridDim.x * blockDim.x) {
        const i64 i = e / n, j = e % n;
        T x = T(0);
        if (i == j) x = unit ? T(1) : src[e];
        else if (j < i) x = upper ? src[j * n + i] : src[e];
        dst[e] = x;
    }
}

// op(T)·X = B, T the uplo triangle of the n×n row-major t, B n×nrhs row-major: one thread
// per column of B. upper, trans, unit: 0 or 1.
template <typename T> __device__ void trsm_naive(const T* t, int n, T* b, int nrhs, int upper,
                                                 int trans, int unit) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nrhs) return;
    // op(T)[i][k]: T[i][k] or T[k][i].
    const bool forward = (upper == 0) == (trans == 0);
    for (int s = 0; s < n; ++s) {
        const int i = forward ? s : n - 1 - s;
        T acc = b[(i64)i * nrhs + c];
        if (forward)
            for (int k = 0; k < i; ++k)
                acc -= (trans ? t[(i64)k * n + i] : t[(i64)i * n + k]) * b[(i64)k * nrhs + c];
        else
            for (int k = i + 1; k < n; ++k)
                acc -= (trans ? t[(i64)k * n + i] : t[(i64)i * n + k]) * b[(i64)k * nrhs + c];
        b[(i64)i * nrhs + c] = unit ? acc : acc / t[(i64)i * n + i];
    }
}

#define LU_KERNELS(T, S)                                                                      \
    extern "C" __global__ void __launch_bounds__(1024)                                        \
        lu_pivot_##S(T* a, int m, int n, i64 lda, int j, i64* ipiv) {                         \
        lu_pivot<T>(a, m, n, lda, j, ipiv);                                                   \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(512)                                         \
        lu_leaf_##S(T* a, int m, int n, i64 lda, int c0, int w, i64* ipiv) {                  \
        lu_leaf<T>(a, m, n, lda, c0, w, ipiv);                                                \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                         \
        lu_swap_rows_##S(T* a, int n, i64 lda, const i64* ipiv, int c0, int w) {              \
        lu_swap_rows<T>(a, n, lda, ipiv, c0, w);                                              \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                         \
        lu_rank1_##S(T* a, int m, i64 lda, int j, int c_end) {                                \
        lu_rank1<T>(a, m, lda, j, c_end);                                                     \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(128)                                         \
        lu_trsm_panel_##S(T* a, int n, i64 lda, int j0, int nb, int c0) {                     \
        lu_trsm_panel<T>(a, n, lda, j0, nb, c0);                                              \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(256) lu_copy_block_##S(                      \
        const T* src, i64 lds, int rows, int cols, T* dst, i64 ldd) {                         \
        lu_copy_block<T>(src, lds, rows, cols, dst, ldd);                                     \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                         \
        tri_prepare_##S(const T* src, int n, T* dst, int upper, int unit) {                   \
        tri_prepare<T>(src, n, dst, upper, unit);                                             \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(128) trsm_naive_##S(                         \
        const T* t, int n, T* b, int nrhs, int upper, int trans, int unit) {                  \
        trsm_naive<T>(t, n, b, nrhs, upper, trans, unit);                                     \
    }

LU_KERNELS(float, f32)
LU_KERNELS(double, f64)
