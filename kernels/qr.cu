// qr.cu: Householder QR (crates/cuda/src/ops/qr), row-major, LAPACK's reflectors:
// H = I − τ·v·vᵀ with v[j] = 1 implied and v below the diagonal of column j.
//
//   qr_house    one block per column step: ‖a[j+1.., j]‖, β, τ, v scaled in place
//   qr_dots     w[c] = vᵀ·B[j.., c] for the columns [c0, c1) of a target B (the matrix
//               itself when factoring, a right-hand side when applying), one thread per
//               column walking the rows (fixed order: reproducible); v null: B's own
//               reflectors (factoring)
//   qr_update   B[i][c] −= τ·v[i]·w[c]
//   tsqr_tile   TSQR: one block factors a tile of TSQR_ROWS rows in shared memory, writes
//               its reflectors back in place and its R to the next level's stack
//   tsqr_apply  TSQR: one block applies a tile's reflectors (Q or Qᵀ) to a column chunk
//               of the tile's rows of a right-hand side
//   tsqr_tops   TSQR: copies each tile's top n rows of a right-hand side up to the next
//               level's stack, or back down
//   r_solve     X = R⁻¹·Y for an upper n×n R (row stride ldr), one thread per column
#include "common.cuh"

#define TSQR_ROWS 256

__device__ __forceinline__ float qr_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double qr_sqrt(double x) { return sqrt(x); }

// LAPACK's xLARFG from the head α of a column and σ, the sum of squares below it:
// β = −sign(α)·‖(α, x)‖, τ = (β − α)/β, and 1/(α − β) to scale x into v. σ = 0: no
// reflection (τ = 0, β = α).
template <typename T> __device__ void qr_reflector(T alpha, T sigma, T& beta, T& tau, T& scale) {
    tau = T(0);
    scale = T(0);
    beta = alpha;
    if (sigma != T(0)) {
        const T norm = qr_sqrt(alpha * alpha + sigma);
        beta = alpha >= T(0) ? -norm : norm;
        tau = (beta - alpha) / beta;
        scale = T(1) / (alpha - beta);
    }
}

// The reflector of column j of the m-row a (row stride lda): one block.
template <typename T> __device__ void qr_house(T* a, int m, i64 lda, int j, T* tau) {
    __shared__ T part[32];
    T s = T(0);
    for (int i = j + 1 + threadIdx.x; i < m; i += blockDim.x) {
        const T x = a[(i64)i * lda + j];
        s += x * x;
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        T sigma = T(0);
        for (int w = 0; w < (int)blockDim.x / 32; ++w) sigma += part[w];
        const T alpha = a[(i64)j * lda + j];
        T t, scale, beta;
        qr_reflector(alpha, sigma, beta, t, scale);
        tau[j] = t;
        a[(i64)j * lda + j] = beta;
        part[0] = scale;
    }
    __syncthreads();
    const T scale = part[0];
    if (scale != T(0))
        for (int i = j + 1 + threadIdx.x; i < m; i += blockDim.x) a[(i64)i * lda + j] *= scale;
}

// w[c − c0] = v_jᵀ·b[j.., c] for c in [c0, c1).
template <typename T> __device__ void qr_dots(const T* v, i64 ldv, int j, int m, const T* b,
                                              i64 ldb, int c0, int c1, T* w) {
    const int c = c0 + blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= c1) return;
    if (v == nullptr) { v = b; ldv = ldb; }  // factoring: the reflectors are b's own
    T s = b[(i64)j * ldb + c];
    for (int i = j + 1; i < m; ++i) s += v[(i64)i * ldv + j] * b[(i64)i * ldb + c];
    w[c - c0] = s;
}

template <typename T> __device__ void qr_update(const T* v, i64 ldv, int j, int m, T* b, i64 ldb,
                                                int c0, int c1, const T* w, const T* tau) {
    const int c = c0 + blockIdx.x * 32 + threadIdx.x;
    if (c >= c1) return;
    if (v == nullptr) { v = b; ldv = ldb; }
    const T tw = tau[j] * w[c - c0];
    if (tw == T(0)) return;
    const int i0 = j + blockIdx.y * blockDim.y + threadIdx.y;
    for (int i = i0; i < m; i += gridDim.y * blockDim.y)
        b[(i64)i * ldb + c] -= (i == j ? T(1) : v[(i64)i * ldv + j]) * tw;
}

// TSQR tile: rows [t·R, min((t+1)·R, rows)) of the rows×n row-major a (row stride n).
// Writes the tile back (reflectors below the diagonal, R on and above), τ to tau[t·n..],
// and R (n rows, zeros below the diagonal) to next[t·n..] unless next is null; with
// upper_only, only R's upper triangle goes to next (the final R over the packed factor).
template <typename T> __device__ void tsqr_tile(T* a, i64 rows, int n, T* tau, T* next,
                                                int upper_only) {
    extern __shared__ unsigned char smem_raw[];
    T* s = reinterpret_cast<T*>(smem_raw);  // TSQR_ROWS × (n + 1): padded, no bank conflicts
    const int ld = n + 1;
    __shared__ T red[32];
    const i64 r0 = (i64)blockIdx.x * TSQR_ROWS;
    const int rt = (int)((rows - r0) < TSQR_ROWS ? (rows - r0) : TSQR_ROWS);
    for (int e = threadIdx.x; e < TSQR_ROWS * n; e += blockDim.x) {
        const int i = e / n;
        s[i * ld + e % n] = i < rt ? a[(r0 + i) * n + e % n] : T(0);
    }
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    for (int j = 0; j < n; ++j) {
        T sq = T(0);
        for (int i = j + 1 + threadIdx.x; i < TSQR_ROWS; i += blockDim.x) sq += s[i * ld + j] * s[i * ld + j];
        for (int o = 16; o > 0; o >>= 1) sq += __shfl_down_sync(0xffffffff, sq, o);
        if (lane == 0) red[warp] = sq;
        __syncthreads();
        if (threadIdx.x == 0) {
            T sigma = T(0);
            for (int w = 0; w < nw; ++w) sigma += red[w];
            const T alpha = s[j * ld + j];
            T t, scale, beta;
            qr_reflector(alpha, sigma, beta, t, scale);
            s[j * ld + j] = beta;
            red[0] = t;
            red[1] = scale;
            tau[(i64)blockIdx.x * n + j] = t;
        }
        __syncthreads();
        const T t = red[0], scale = red[1];
        if (scale != T(0))
            for (int i = j + 1 + threadIdx.x; i < TSQR_ROWS; i += blockDim.x) s[i * ld + j] *= scale;
        __syncthreads();
        if (t != T(0))
            for (int c = j + 1 + warp; c < n; c += nw) {
                T d = T(0);
                for (int i = j + lane; i < TSQR_ROWS; i += 32)
                    d += (i == j ? T(1) : s[i * ld + j]) * s[i * ld + c];
                for (int o = 16; o > 0; o >>= 1) d += __shfl_xor_sync(0xffffffff, d, o);
                const T tw = t * d;
                for (int i = j + lane; i < TSQR_ROWS; i += 32)
                    s[i * ld + c] -= (i == j ? T(1) : s[i * ld + j]) * tw;
                __syncwarp();
            }
        __syncthreads();
    }
    for (int e = threadIdx.x; e < rt * n; e += blockDim.x) a[(r0 + e / n) * n + e % n] = s[(e / n) * ld + e % n];
    if (next != nullptr)
        for (int e = threadIdx.x; e < n * n; e += blockDim.x) {
            const int i = e / n, c = e % n;
            if (c >= i)
                next[((i64)blockIdx.x * n + i) * n + c] = s[i * ld + c];
            else if (!upper_only)
                next[((i64)blockIdx.x * n + i) * n + c] = T(0);
        }
}

// Applies tile blockIdx.x's reflectors (from the rows×n level matrix v, τ at tau[t·n..])
// to columns [8·blockIdx.y, +8) of the same rows of b (rows×nrhs, row stride nrhs):
// Qᵀ (trans) runs j = 0..n−1, Q runs j = n−1..0.
template <typename T> __device__ void tsqr_apply(const T* v, i64 rows, int n, const T* tau,
                                                 T* b, int nrhs, int trans) {
    extern __shared__ unsigned char smem_raw[];
    T* sv = reinterpret_cast<T*>(smem_raw);  // TSQR_ROWS × (n + 1)
    const int ld = n + 1;
    T* sb = sv + TSQR_ROWS * ld;             // TSQR_ROWS × 9 (padded)
    const i64 r0 = (i64)blockIdx.x * TSQR_ROWS;
    const int rt = (int)((rows - r0) < TSQR_ROWS ? (rows - r0) : TSQR_ROWS);
    const int c0 = blockIdx.y * 8;
    const int cw = nrhs - c0 < 8 ? nrhs - c0 : 8;
    for (int e = threadIdx.x; e < TSQR_ROWS * n; e += blockDim.x)
        sv[(e / n) * ld + e % n] = e / n < rt ? v[(r0 + e / n) * n + e % n] : T(0);
    for (int e = threadIdx.x; e < TSQR_ROWS * 8; e += blockDim.x) {
        const int i = e / 8, c = e % 8;
        sb[i * 9 + c] = (i < rt && c < cw) ? b[(r0 + i) * nrhs + c0 + c] : T(0);
    }
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const T* tt = tau + (i64)blockIdx.x * n;
    for (int s = 0; s < n; ++s) {
        const int j = trans ? s : n - 1 - s;
        const T t = tt[j];
        if (t != T(0) && warp < cw) {
            const int c = warp;
            T d = T(0);
            for (int i = j + lane; i < TSQR_ROWS; i += 32)
                d += (i == j ? T(1) : sv[i * ld + j]) * sb[i * 9 + c];
            for (int o = 16; o > 0; o >>= 1) d += __shfl_xor_sync(0xffffffff, d, o);
            const T tw = t * d;
            for (int i = j + lane; i < TSQR_ROWS; i += 32)
                sb[i * 9 + c] -= (i == j ? T(1) : sv[i * ld + j]) * tw;
        }
        __syncwarp();
    }
    __syncthreads();
    for (int e = threadIdx.x; e < rt * 8; e += blockDim.x) {
        const int i = e / 8, c = e % 8;
        if (c < cw) b[(r0 + i) * nrhs + c0 + c] = sb[i * 9 + c];
    }
}

// For each tile t of a level with `rows` rows: its top min(n, rows in the tile) rows of
// lvl (rows×nrhs) to up[t·n..] (up = 1), or back (up = 0).
template <typename T> __device__ void tsqr_tops(T* lvl, i64 rows, int n, T* upper, int nrhs,
                                                int up) {
    const i64 t = blockIdx.x;
    for (int e = threadIdx.x; e < n * nrhs; e += blockDim.x) {
        const int i = e / nrhs, c = e % nrhs;
        const i64 r = t * TSQR_ROWS + i;
        if (r >= rows) continue;
        T* low = lvl + r * nrhs + c;
        T* high = upper + (t * n + i) * nrhs + c;
        if (up) *high = *low; else *low = *high;
    }
}

// x (n×nrhs) = R⁻¹·y, R upper n×n with row stride ldr, y with row stride ldy.
template <typename T> __device__ void r_solve(const T* r, i64 ldr, int n, const T* y, i64 ldy,
                                              int nrhs, T* x) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nrhs) return;
    for (int i = n - 1; i >= 0; --i) {
        T s = y[(i64)i * ldy + c];
        for (int k = i + 1; k < n; ++k) s -= r[(i64)i * ldr + k] * x[(i64)k * nrhs + c];
        x[(i64)i * nrhs + c] = s / r[(i64)i * ldr + i];
    }
}

#define QR_KERNELS(T, S)                                                                       \
    extern "C" __global__ void __launch_bounds__(1024)                                         \
        qr_house_##S(T* a, int m, i64 lda, int j, T* tau) {                                    \
        qr_house<T>(a, m, lda, j, tau);                                                        \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(128) qr_dots_##S(                             \
        const T* v, i64 ldv, int j, int m, const T* b, i64 ldb, int c0, int c1, T* w) {        \
        qr_dots<T>(v, ldv, j, m, b, ldb, c0, c1, w);                                           \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(256)                                          \
        qr_update_##S(const T* v, i64 ldv, int j, int m, T* b, i64 ldb, int c0, int c1,        \
                      const T* w, const T* tau) {                                              \
        qr_update<T>(v, ldv, j, m, b, ldb, c0, c1, w, tau);                                    \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(256)                                          \
        tsqr_tile_##S(T* a, i64 rows, int n, T* tau, T* next, int upper_only) {                \
        tsqr_tile<T>(a, rows, n, tau, next, upper_only);                                       \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(256)                                          \
        tsqr_apply_##S(const T* v, i64 rows, int n, const T* tau, T* b, int nrhs, int trans) { \
        tsqr_apply<T>(v, rows, n, tau, b, nrhs, trans);                                        \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(256)                                          \
        tsqr_tops_##S(T* lvl, i64 rows, int n, T* upper, int nrhs, int up) {                   \
        tsqr_tops<T>(lvl, rows, n, upper, nrhs, up);                                           \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(128)                                          \
        r_solve_##S(const T* r, i64 ldr, int n, const T* y, i64 ldy, int nrhs, T* x) {         \
        r_solve<T>(r, ldr, n, y, ldy, nrhs, x);                                                \
    }

QR_KERNELS(float, f32)
QR_KERNELS(double, f64)
