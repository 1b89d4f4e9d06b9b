// matmul.cu: the GEMM ladder, C = alpha·A·B + beta·C with A M×K, B K×N, C M×N, all
// row-major. Every kernel takes (int M, int N, int K, T alpha, const T* A, const T* B,
// T beta, T* C) and runs on a 1-D grid of output tiles (so no grid dimension is limited
// to 65535); C is never read when beta == 0 (BLAS semantics: NaN in C does not leak).
// Every rung is a template instantiated for float (_f32) and double (_f64). No atomics:
// each output is summed by one thread in a fixed order, so results are bitwise
// reproducible run to run.
// Each rung's rate on the H200, against cuBLAS, is in docs/kernels.md.
#include "common.cuh"
#include "tiles.cuh"
#include "mma.cuh"

// BLAS epilogue for one element.
template <typename T>
__device__ __forceinline__ T gemm_out(T acc, T alpha, T beta, const T* c) {
    return beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
}

// ---- naive and coalesced ------------------------------------------------------------
// One output per thread, summed over K straight from global memory; a block of 32×8
// threads covers TR×TC outputs of C.
// naive (DOWN): 32 rows × 8 columns, threadIdx.x runs *down* a column, so a warp reads 32
// different rows of A and writes 32 different rows of C: every access is its own memory
// transaction (the lecture's uncoalesced first kernel).
// coalesced: 8 rows × 32 columns, threadIdx.x runs along a row of C: a warp reads one
// broadcast element of A and 32 consecutive elements of B, and writes 32 consecutive
// outputs: the loads now coalesce, but every operand still comes from L2 or memory.
template <typename T, bool DOWN>
__device__ __forceinline__ void gemm_one_per_thread(int M, int N, int K, T alpha,
                                                   const T* A, const T* B, T beta, T* C) {
    constexpr int TR = DOWN ? 32 : 8, TC = DOWN ? 8 : 32;
    const int tiles_n = (N + TC - 1) / TC;
    const int row = (blockIdx.x / tiles_n) * TR + (DOWN ? threadIdx.x : threadIdx.y);
    const int col = (blockIdx.x % tiles_n) * TC + (DOWN ? threadIdx.y : threadIdx.x);
    if (row >= M || col >= N) return;
    T acc = T(0);
    for (int k = 0; k < K; ++k) acc += A[(i64)row * K + k] * B[(i64)k * N + col];
    const i64 idx = (i64)row * N + col;
    C[idx] = gemm_out(acc, alpha, beta, C + idx);
}
template <typename T>
__device__ __forceinline__ void gemm_naive(int M, int N, int K, T alpha, const T* A,
                                          const T* B, T beta, T* C) {
    gemm_one_per_thread<T, true>(M, N, K, alpha, A, B, beta, C);
}
template <typename T>
__device__ __forceinline__ void gemm_coalesced(int M, int N, int K, T alpha, const T* A,
                                              const T* B, T beta, T* C) {
    gemm_one_per_thread<T, false>(M, N, K, alpha, A, B, beta, C);
}

// The row and column of C a thread of a 32×32 block owns, the blocks in row-major order
// of C's 32×32 tiles.
__device__ __forceinline__ int tile32_row(int N) {
    return (blockIdx.x / ((N + 31) / 32)) * 32 + threadIdx.y;
}
__device__ __forceinline__ int tile32_col(int N) {
    return (blockIdx.x % ((N + 31) / 32)) * 32 + threadIdx.x;
}

// ---- tiled (report 000) --------------------------------------------------------------
// Block 32×32 threads, 32×32 tile of C, one output per thread. Each K-step the block
// stages a 32×32 tile of A and of B in shared memory (zero outside the matrices), so
// every element fetched from global memory is used 32 times. With L1 and L2 absorbing
// coalesced's re-reads, the tile alone gains little on Hopper.
template <typename T>
__device__ __forceinline__ void gemm_tiled(int M, int N, int K, T alpha, const T* A,
                                          const T* B, T beta, T* C) {
    __shared__ T As[32][32];
    __shared__ T Bs[32][32];
    const int tx = threadIdx.x, ty = threadIdx.y, row = tile32_row(N), col = tile32_col(N);
    T acc = T(0);
    for (int k0 = 0; k0 < K; k0 += 32) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(i64)row * K + k0 + tx] : T(0);
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(i64)(k0 + ty) * N + col] : T(0);
        __syncthreads();
#pragma unroll 1
        for (int k = 0; k < 32; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) {
        const i64 idx = (i64)row * N + col;
        C[idx] = gemm_out(acc, alpha, beta, C + idx);
    }
}

// ---- tiled_unrolled (report 000) -----------------------------------------------------
// As `tiled`, with the 32-term inner product fully unrolled over the compile-time tile
// (no loop counter or branch per term) and the index arithmetic strength-reduced: the
// operand pointers advance by one tile per step instead of being recomputed.
template <typename T>
__device__ __forceinline__ void gemm_tiled_unrolled(int M, int N, int K, T alpha,
                                                   const T* A, const T* B, T beta, T* C) {
    __shared__ T As[32][32];
    __shared__ T Bs[32][32];
    const int tx = threadIdx.x, ty = threadIdx.y, row = tile32_row(N), col = tile32_col(N);
    const bool row_ok = row < M, col_ok = col < N;
    const T* a = A + (i64)row * K + tx;
    const T* b = B + (i64)ty * N + col;
    const i64 b_step = (i64)32 * N;
    T acc = T(0);
    for (int k0 = 0; k0 < K; k0 += 32, a += 32, b += b_step) {
        As[ty][tx] = (row_ok && k0 + tx < K) ? *a : T(0);
        Bs[ty][tx] = (col_ok && k0 + ty < K) ? *b : T(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 32; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row_ok && col_ok) {
        const i64 idx = (i64)row * N + col;
        C[idx] = gemm_out(acc, alpha, beta, C + idx);
    }
}

// ---- reg_blocked ---------------------------------------------------------------------
// Block tile 128×128, BK = 8, 256 threads as 16×16; each thread keeps an 8×8 block of C
// in registers. Per k it reads 8 values of A and 8 of B from shared memory and does 64
// multiply-adds: 4 FMAs per shared load instead of the tiled kernels' 1/2. Loads are
// scalar and A is stored as it lies (one shared read per A value).
template <typename T>
__device__ __forceinline__ void gemm_reg_blocked(int M, int N, int K, T alpha, const T* A,
                                                const T* B, T beta, T* C) {
    constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, THREADS = 256;
    __shared__ T As[BM * BK];
    __shared__ T Bs[BK * BN];
    const int tiles_n = (N + BN - 1) / BN;
    const int m0 = (blockIdx.x / tiles_n) * BM, n0 = (blockIdx.x % tiles_n) * BN;
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int s = 0; s < BM * BK / THREADS; ++s) {
            const int e = threadIdx.x + s * THREADS, r = m0 + e / BK, c = k0 + e % BK;
            As[e] = (r < M && c < K) ? A[(i64)r * K + c] : T(0);
        }
#pragma unroll
        for (int s = 0; s < BK * BN / THREADS; ++s) {
            const int e = threadIdx.x + s * THREADS, r = k0 + e / BN, c = n0 + e % BN;
            Bs[e] = (r < K && c < N) ? B[(i64)r * N + c] : T(0);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            T a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[(ty * TM + i) * BK + k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k * BN + tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + ty * TM + i;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = n0 + tx * TN + j;
            if (col < N) {
                const i64 idx = (i64)row * N + col;
                C[idx] = gemm_out(acc[i][j], alpha, beta, C + idx);
            }
        }
    }
}

// ---- shared machinery of the vectorized and double_buffered rungs --------------------
// The warp layout, the panels and the rank-1 updates are in tiles.cuh (gram.cu's
// reg_blocked rung uses them too).

// Writes the thread's 8×8 block (first row r0, first column c0) with the BLAS epilogue.
template <typename T>
__device__ __forceinline__ void store_block(T* C, int M, int N, int ldc, int r0, int c0,
                                            T alpha, T beta, const T acc[8][8]) {
    const bool vec = N % 4 == 0 && ldc % 4 == 0 && aligned16(C);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = r0 + (i / 4) * 16 + i % 4;
        if (row >= M) continue;
#pragma unroll
        for (int jg = 0; jg < 2; ++jg) {
            const int col = c0 + jg * 32;
            T* p = C + (i64)row * ldc + col;
            T v[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) v[e] = alpha * acc[i][jg * 4 + e];
            if (vec && col < N) {
                if (beta != T(0)) {
                    T old[4];
                    ld4(p, old);
#pragma unroll
                    for (int e = 0; e < 4; ++e) v[e] += beta * old[e];
                }
                st4(p, v);
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (col + e < N) p[e] = beta == T(0) ? v[e] : v[e] + beta * p[e];
            }
        }
    }
}

// Grouped tile order: blocks run down GROUP tile-rows before moving right, so blocks
// resident together share A panels and B panels in L2.
__device__ __forceinline__ void grouped_tile_of(int id, int tiles_m, int tiles_n, int& tm,
                                                int& tn) {
    const int GROUP = 8, per_group = GROUP * tiles_n;
    const int first = (id / per_group) * GROUP, rows = min(tiles_m - first, GROUP);
    const int in = id % per_group;
    tm = first + in % rows;
    tn = in / rows;
}
// Block blockIdx.x's tile.
__device__ __forceinline__ void grouped_tile(int tiles_m, int tiles_n, int& tm, int& tn) {
    grouped_tile_of(blockIdx.x, tiles_m, tiles_n, tm, tn);
}

// ---- vectorized and double_buffered ---------------------------------------------------
// Block tile 128×128, 256 threads, 8×8 outputs per thread in the warp layout above.
// vectorized: BK = 8; 16-byte global loads, A stored transposed so that the inner loop
// reads 16-byte vectors of both operands; one shared buffer (load, barrier, compute,
// barrier). (BK = 16 was faster here, but double_buffered below is faster still.)
// double_buffered (PIPELINED): BK = 16 for f32 (8 for f64, whose stages would pass the
// 48 KB of static shared memory); two shared buffers, one barrier per K-tile. The next
// K-tile is in flight while the current one is computed, without holding registers:
// B's vectors are copied straight into the other buffer with cp.async, A's into this
// thread's own slots of a staging area (its transposing store waits until after the
// compute). Prefetching into registers instead needs more than the 128 registers that
// let two blocks share an SM: it spilled at BK = 16, and was slower at BK = 8.
template <typename T> struct FastCfg;
template <> struct FastCfg<float> { static const int BK = 16; };
template <> struct FastCfg<double> { static const int BK = 8; };

// Strided and transposed operands (the leading dimensions lda, ldb, ldc; TA: A is held
// as its transpose, K×M with leading dimension lda) serve callers that multiply blocks of
// larger matrices in place, as the blocked triangular solves do. A transposed A's tiles
// are rows of a K×M matrix, loaded as B's are: as they lie, which is the S[k][row] order
// the inner loop reads. SPLIT (split_k): block y runs K-tiles [y·KS, (y+1)·KS) / BK
// only and writes partial product y, M·ldc elements past C.
template <typename T, int BK, bool PIPELINED, bool TA, bool SPLIT = false>
__device__ __forceinline__ void gemm_warp_tiled(int M, int N, int K, T alpha, const T* A,
                                               int lda, const T* B, int ldb, T beta, T* C,
                                               int ldc, int KS = 0) {
    constexpr int BM = 128, BN = 128, THREADS = 256, STAGES = PIPELINED ? 2 : 1;
    typedef RowPanel<T, BM, BK, THREADS> PA;
    typedef ColPanel<T, BK, BM, THREADS> PAT;  // A transposed: rows k, columns m
    typedef ColPanel<T, BK, BN, THREADS> PB;
    constexpr int LDA = TA ? PAT::LD : PA::LD;
    static_assert(!TA || PIPELINED, "transposed A only on the pipelined path");
    __shared__ __align__(16) T As[STAGES][BK * PA::LD];
    __shared__ __align__(16) T Bs[STAGES][BK * PB::LD];
    __shared__ __align__(16) T W[PIPELINED && !TA ? BM * BK : PA::V];  // A's staging area
    int tm, tn;
    grouped_tile((M + BM - 1) / BM, (N + BN - 1) / BN, tm, tn);
    const int m0 = tm * BM, n0 = tn * BN;
    int ar, bc;
    warp_block(ar, bc);
    // A vector may be used only where it cannot run past the matrix's edge into the
    // next row of a larger one: the extent and the leading dimension both whole vectors.
    const bool vec_a = (TA ? M : K) % PA::V == 0 && lda % PA::V == 0 && aligned16(A);
    const bool vec_b = N % PB::V == 0 && ldb % PB::V == 0 && aligned16(B);
    T acc[8][8];
    zero_block(acc);
    const int t0 = SPLIT ? blockIdx.y * (KS / BK) : 0;
    const int tiles = SPLIT ? min((K + BK - 1) / BK, t0 + KS / BK) : (K + BK - 1) / BK;
    if (!PIPELINED) {
        T ra[PA::LOADS][PA::V], rb[PB::LOADS][PB::V];
        for (int t = 0; t < tiles; ++t) {
            PA::load(A, M, K, lda, m0, t * BK, vec_a, ra);
            PB::load(B, K, N, ldb, t * BK, n0, vec_b, rb);
            PA::store(As[0], ra);
            PB::store(Bs[0], rb);
            __syncthreads();
            mma_tile<T, BK, LDA, PB::LD>(As[0], Bs[0], ar, bc, acc);
            __syncthreads();
        }
    } else {
        if (TA) {
            PAT::copy(A, K, M, lda, t0 * BK, m0, vec_a, As[0]);
        } else {
            PA::stage(A, M, K, lda, m0, t0 * BK, vec_a, W);
        }
        PB::copy(B, K, N, ldb, t0 * BK, n0, vec_b, Bs[0]);
        cp_async_wait_all();
        if (!TA) PA::unstage(As[0], W);
        __syncthreads();
        for (int t = t0; t < tiles; ++t) {
            const int cur = (t - t0) & 1;
            const bool more = t + 1 < tiles;  // uniform across the block
            // The other buffers were last read before the previous barrier, and W only
            // by this thread.
            if (more) {
                if (TA) {
                    PAT::copy(A, K, M, lda, (t + 1) * BK, m0, vec_a, As[cur ^ 1]);
                } else {
                    PA::stage(A, M, K, lda, m0, (t + 1) * BK, vec_a, W);
                }
                PB::copy(B, K, N, ldb, (t + 1) * BK, n0, vec_b, Bs[cur ^ 1]);
            }
            mma_tile<T, BK, LDA, PB::LD>(As[cur], Bs[cur], ar, bc, acc);
            if (more) {
                cp_async_wait_all();
                if (!TA) PA::unstage(As[cur ^ 1], W);
            }
            __syncthreads();
        }
    }
    if (SPLIT) C += (i64)blockIdx.y * M * ldc;
    store_block(C, M, N, ldc, m0 + ar, n0 + bc, alpha, beta, acc);
}

template <typename T>
__device__ __forceinline__ void gemm_vectorized(int M, int N, int K, T alpha, const T* A,
                                               const T* B, T beta, T* C) {
    gemm_warp_tiled<T, 8, false, false>(M, N, K, alpha, A, K, B, N, beta, C, N);
}
template <typename T>
__device__ __forceinline__ void gemm_double_buffered(int M, int N, int K, T alpha,
                                                    const T* A, const T* B, T beta, T* C) {
    gemm_warp_tiled<T, FastCfg<T>::BK, true, false>(M, N, K, alpha, A, K, B, N, beta, C, N);
}

// ---- small ---------------------------------------------------------------------------
// For small outputs with a short K (squares up to 256, 1024×1024×64), where 128×128
// tiles leave most SMs idle and a cut of K costs a second launch: 64×64 tiles, 256
// threads of 4×4 outputs, so 16 times as many blocks as the 128×128 rungs give; or,
// where even those are fewer than the SMs (gemm_small_32), 32×32 tiles of 2×2 outputs
// a thread, four times as many again. K goes
// through shared memory 64 at a time (f32; 32 for f64), both tiles stored k-major (A
// transposed on the store, B as it lies) so that a thread reads its four rows and four
// columns as two 16-byte vectors; the next stage's loads wait in registers during the
// current stage's products. One launch, sums in a fixed order.
// K per stage: 64 for f32 (half the stages over a short K: each waits on its loads),
// 32 for f64 (whose two 64-deep tiles would pass the 48 KB of static shared memory).
template <typename T> struct SmallCfg { static const int BK = sizeof(T) == 4 ? 64 : 32; };
// TN outputs a thread along each axis, from TN consecutive elements at p.
template <int TN, typename T>
__device__ __forceinline__ void small_ld(const T* p, T* r) {
    if constexpr (TN == 4) {
        ld4(p, r);
    } else if constexpr (sizeof(T) == 4) {
        const float2 v = *reinterpret_cast<const float2*>(p);
        r[0] = v.x; r[1] = v.y;
    } else {
        const double2 v = *reinterpret_cast<const double2*>(p);
        r[0] = v.x; r[1] = v.y;
    }
}
template <typename T, int BM>
__device__ __forceinline__ void gemm_small_tile(int M, int N, int K, T alpha, const T* A,
                                           const T* B, T beta, T* C) {
    constexpr int BK = SmallCfg<T>::BK, LD = BM + 4, PER = BM * BK / 256, TN = BM / 16;
    __shared__ __align__(16) T As[BK][LD];  // As[k][row]
    __shared__ __align__(16) T Bs[BK][LD];  // Bs[k][column]
    const int tiles_n = (N + BM - 1) / BM;
    const int m0 = (blockIdx.x / tiles_n) * BM, n0 = (blockIdx.x % tiles_n) * BM;
    const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
    T acc[TN][TN];
#pragma unroll
    for (int i = 0; i < TN; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
    T ra[PER], rb[PER];
    // A: element e is row m0 + 8e + tid/32, k k0 + tid%32 (a warp reads 32 values of a
    // row); B: k k0 + 4e + tid/64, column n0 + tid%64. One base pointer and stride each.
    const int a_row = m0 + tid / BK, a_k = tid % BK, b_k = tid / BM, b_col = n0 + tid % BM;
    const T* pa = A + (i64)a_row * K + a_k;
    const T* pb = B + (i64)b_k * N + b_col;
    const i64 a_step = (i64)(256 / BK) * K, b_step = (i64)(256 / BM) * N;
#define SMALL_LOAD(k0)                                                                     \
    _Pragma("unroll") for (int e = 0; e < PER; ++e) {                                       \
        const bool ka = (k0) + a_k < K, kb = (k0) + b_k + e * (256 / BM) < K;              \
        ra[e] = ka && a_row + e * (256 / BK) < M ? pa[e * a_step + (k0)] : T(0);            \
        rb[e] = kb && b_col < N ? pb[e * b_step + (i64)(k0) * N] : T(0);                    \
    }
    SMALL_LOAD(0)
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int e = 0; e < PER; ++e) {
            const int i = e * 256 + tid;
            As[i % BK][i / BK] = ra[e];
            Bs[i / BM][i % BM] = rb[e];
        }
        __syncthreads();
        if (k0 + BK < K) { SMALL_LOAD(k0 + BK) }  // uniform across the block
#pragma unroll 4
        for (int kk = 0; kk < BK; ++kk) {
            T a[TN], b[TN];
            small_ld<TN>(&As[kk][TN * ty], a);
            small_ld<TN>(&Bs[kk][TN * tx], b);
#pragma unroll
            for (int i = 0; i < TN; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#undef SMALL_LOAD
#pragma unroll
    for (int i = 0; i < TN; ++i) {
        const int r = m0 + TN * ty + i;
        if (r >= M) break;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = n0 + TN * tx + j;
            if (c < N) C[(i64)r * N + c] = gemm_out(acc[i][j], alpha, beta, C + (i64)r * N + c);
        }
    }
}

template <typename T>
__device__ __forceinline__ void gemm_small(int M, int N, int K, T alpha, const T* A,
                                           const T* B, T beta, T* C) {
    gemm_small_tile<T, 64>(M, N, K, alpha, A, B, beta, C);
}
template <typename T>
__device__ __forceinline__ void gemm_small_32(int M, int N, int K, T alpha, const T* A,
                                              const T* B, T beta, T* C) {
    gemm_small_tile<T, 32>(M, N, K, alpha, A, B, beta, C);
}

// ---- split_k ---------------------------------------------------------------------------
// For products with few 128×128 tiles of C (small or thin outputs, long K), which leave
// most SMs idle: K is cut into gridDim.y slices of KS (a multiple of BK), and block (tile,
// s) runs double_buffered on slice s alone, writing its partial tile into W (gridDim.y
// partial products of M×N, α = 1, β = 0). split_sum then adds each element's partials in
// slice order and applies α and β. Every sum has a fixed order, so results are bitwise
// reproducible run to run; they differ in rounding from the unsplit rungs'.
template <typename T>
__device__ __forceinline__ void gemm_split_part(int M, int N, int K, int KS, const T* A,
                                               const T* B, T* W) {
    gemm_warp_tiled<T, FastCfg<T>::BK, true, false, true>(M, N, K, T(1), A, K, B, N, T(0), W,
                                                           N, KS);
}
template <typename T>
__device__ __forceinline__ void gemm_split_sum(i64 len, int S, T alpha, const T* W, T beta,
                                              T* C) {
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < len;
         i += (i64)gridDim.x * blockDim.x) {
        T acc = W[i];
        for (int s = 1; s < S; ++s) acc += W[(i64)s * len + i];
        C[i] = gemm_out(acc, alpha, beta, C + i);
    }
}

// ---- tensor_core and tensor_core_3x -------------------------------------------------
// Warp-level mma.sync on tensor cores (mma.cuh): f32 on TF32 operands, one product
// (tensor_core) or three (tensor_core_3x, 3xTF32, about f32's accuracy); f64 on DMMA,
// IEEE double arithmetic, in both.
template <typename T, int MODE>
__device__ __forceinline__ void gemm_mma(int M, int N, int K, T alpha, const T* A, const T* B,
                                        T beta, T* C) {
    int tm, tn;
    grouped_tile((M + 127) / 128, (N + Tc<T>::BN - 1) / Tc<T>::BN, tm, tn);
    gemm_tc<T, MODE>(M, N, K, alpha, A, B, beta, C, tm, tn, K, N, N);
}
#define GEMM_MMA(tech, MODE)                                                                \
    template <typename T>                                                                  \
    __device__ __forceinline__ void gemm_##tech(int M, int N, int K, T alpha, const T* A,  \
                                                const T* B, T beta, T* C) {                \
        gemm_mma<T, MODE>(M, N, K, alpha, A, B, beta, C);                                  \
    }
GEMM_MMA(tensor_core, 1)
GEMM_MMA(tensor_core_3x, 3)

// ---- stream_tc: tensor_core's f64 kernel with stream-K (split_k's f64 form) ------------
// Where C's tiles leave the last wave mostly empty: tc_stream (mma.cuh) over C's 128×64
// tiles in grouped order.
template <typename T> struct GemmTiles {
    int M, N, K, tiles_m, tiles_n;
    T alpha, beta;
    const T* A;
    const T* B;
    T* C;
    __device__ __forceinline__ void product(int t, int k0, int count,
                                            typename TcAcc<T>::type acc) const {
        int tm, tn;
        grouped_tile_of(t, tiles_m, tiles_n, tm, tn);
        gemm_tc_acc<T, 1>(M, N, K, A, B, tm, tn, K, N, k0, count, acc);
    }
    __device__ __forceinline__ void store(int t, typename TcAcc<T>::type acc) const {
        int tm, tn;
        grouped_tile_of(t, tiles_m, tiles_n, tm, tn);
        tc_store<T>(M, N, alpha, beta, C, tm, tn, N, acc);
    }
};
template <typename T>
__device__ __forceinline__ GemmTiles<T> gemm_tiles(int M, int N, int K, T alpha, const T* A,
                                                   const T* B, T beta, T* C) {
    return GemmTiles<T>{M, N, K, (M + 127) / 128, (N + Tc<T>::BN - 1) / Tc<T>::BN,
                        alpha, beta, A, B, C};
}

// ---- K = 0 or alpha = 0: C = beta·C (zeros when beta = 0, C unread) -----------------
template <typename T>
__device__ __forceinline__ void gemm_scale(int M, int N, T beta, T* C) {
    const i64 len = (i64)M * N;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < len;
         i += (i64)gridDim.x * blockDim.x)
        C[i] = beta == T(0) ? T(0) : beta * C[i];
}

// ---- extern "C" entry points ---------------------------------------------------------
#define GEMM_ENTRY(tech, sfx, T, bounds)                                                   \
    NDGPU_ENTRY(gemm_##tech##_##sfx, bounds,                                               \
                (int M, int N, int K, T alpha, const T* __restrict__ A,                    \
                 const T* __restrict__ B, T beta, T* __restrict__ C),                      \
                (gemm_##tech<T>(M, N, K, alpha, A, B, beta, C)))

NDGPU_F32_F64(GEMM_ENTRY, naive, __launch_bounds__(256), __launch_bounds__(256))
NDGPU_F32_F64(GEMM_ENTRY, coalesced, __launch_bounds__(256), __launch_bounds__(256))
NDGPU_F32_F64(GEMM_ENTRY, tiled, __launch_bounds__(1024), __launch_bounds__(1024))
NDGPU_F32_F64(GEMM_ENTRY, tiled_unrolled, __launch_bounds__(1024), __launch_bounds__(1024))
NDGPU_F32_F64(GEMM_ENTRY, reg_blocked, __launch_bounds__(256), __launch_bounds__(256))
NDGPU_F32_F64(GEMM_ENTRY, vectorized, __launch_bounds__(256, 2), __launch_bounds__(256))
NDGPU_F32_F64(GEMM_ENTRY, double_buffered, __launch_bounds__(256, 2), __launch_bounds__(256))
NDGPU_F32_F64(GEMM_ENTRY, small, __launch_bounds__(256, 2), __launch_bounds__(256, 2))
NDGPU_F32_F64(GEMM_ENTRY, small_32, __launch_bounds__(256, 2), __launch_bounds__(256, 2))
NDGPU_F32_F64(GEMM_ENTRY, tensor_core, __launch_bounds__(256), __launch_bounds__(128, 2))
NDGPU_F32_F64(GEMM_ENTRY, tensor_core_3x, __launch_bounds__(256), __launch_bounds__(128, 2))

// gemm_stream_tc_f64 and its sums, gemm_stream_tc_fix_f64 (tc_stream over GemmTiles).
NDGPU_ENTRY(gemm_stream_tc_f64, __launch_bounds__(128, 2),
            (int M, int N, int K, double alpha, const double* __restrict__ A,
             const double* __restrict__ B, double beta, double* __restrict__ C,
             double* __restrict__ W, int skt, int P),
            (tc_stream(gemm_tiles<double>(M, N, K, alpha, A, B, beta, C), K, W, skt, P)))
NDGPU_ENTRY(gemm_stream_tc_fix_f64, __launch_bounds__(128),
            (int M, int N, int K, double alpha, const double* __restrict__ W, double beta,
             double* __restrict__ C, int skt, int P),
            (tc_stream_fix(gemm_tiles<double>(M, N, K, alpha, nullptr, nullptr, beta, C), K, W,
                           skt, P)))

#define GEMM_SPLIT(tech, sfx, T, bounds)                                                   \
    NDGPU_ENTRY(gemm_split_k_##sfx, bounds,                                             \
                (int M, int N, int K, int KS, const T* __restrict__ A,                     \
                 const T* __restrict__ B, T* __restrict__ W),                              \
                (gemm_split_part<T>(M, N, K, KS, A, B, W)))                                \
    NDGPU_ENTRY(gemm_split_k_sum_##sfx, __launch_bounds__(256),                              \
                (i64 len, int S, T alpha, const T* __restrict__ W, T beta, T* C),          \
                (gemm_split_sum<T>(len, S, alpha, W, beta, C)))
NDGPU_F32_F64(GEMM_SPLIT, split_k, __launch_bounds__(256, 2), __launch_bounds__(256))

// The double_buffered rung on blocks of larger matrices: C = alpha·op(A)·B + beta·C with
// leading dimensions, op(A) = A (nn) or Aᵀ (tn, A held K×M).
#define GEMM_STRIDED(ta, TA, sfx, T, bounds)                                               \
    extern "C" __global__ void bounds gemm_strided_##ta##_##sfx(                           \
        int M, int N, int K, T alpha, const T* __restrict__ A, int lda,                    \
        const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {            \
        gemm_warp_tiled<T, FastCfg<T>::BK, true, TA>(M, N, K, alpha, A, lda, B, ldb, beta, \
                                                     C, ldc);                              \
    }
GEMM_STRIDED(nn, false, f32, float, __launch_bounds__(256, 2))
GEMM_STRIDED(tn, true, f32, float, __launch_bounds__(256, 2))
GEMM_STRIDED(nn, false, f64, double, __launch_bounds__(256))
GEMM_STRIDED(tn, true, f64, double, __launch_bounds__(256))

// tensor_core's f64 kernel (DMMA, mma.cuh) on blocks of larger matrices: C = alpha·A·B +
// beta·C with leading dimensions, A and B untransposed, on the grouped grid of 128×64
// tiles of C (the f64 solves' and LU's large updates).
extern "C" __global__ void __launch_bounds__(128, 2)
    gemm_strided_tc_nn_f64(int M, int N, int K, double alpha, const double* __restrict__ A,
                           int lda, const double* __restrict__ B, int ldb, double beta,
                           double* __restrict__ C, int ldc) {
    int tm, tn;
    grouped_tile((M + 127) / 128, (N + Tc<double>::BN - 1) / Tc<double>::BN, tm, tn);
    gemm_tc<double, 1>(M, N, K, alpha, A, B, beta, C, tm, tn, lda, ldb, ldc);
}

extern "C" __global__ void __launch_bounds__(256) gemm_scale_f32(int M, int N, float beta,
                                                                 float* C) {
    gemm_scale<float>(M, N, beta, C);
}
extern "C" __global__ void __launch_bounds__(256) gemm_scale_f64(int M, int N, double beta,
                                                                 double* C) {
    gemm_scale<double>(M, N, beta, C);
}
