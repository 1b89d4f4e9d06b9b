// gram.cu: the M·Mᵀ ladder of report 003. Every kernel takes (int N, int K, const T* A,
// T* C) with A N×K and C N×N row-major, writes every element of C, and leaves C exactly
// symmetric. Grids are 1-D over output tiles (over column stripes of A for the stripe
// rungs). Every rung is a template instantiated for float (_f32) and double (_f64).
// Every rung but the stripe ones sums each output in one thread in a fixed order, so its
// results are bitwise reproducible run to run; the stripe rungs add partial sums with
// atomics (see there).
// Each rung's time on the H200, against cuBLAS, is in docs/kernels.md.
#include "common.cuh"
#include "tiles.cuh"
#include "mma.cuh"

// ---- naive (v001) --------------------------------------------------------------------
// Block 32×8 threads covers 8 rows × 32 columns of C; each thread sums one dot product of
// two rows of A. Both halves of C are computed; C[i][j] and C[j][i] still agree bit for
// bit, since both run the same multiply-adds in the same order with the two factors
// swapped, and a product (fused or not) does not depend on its factors' order.
template <typename T>
__device__ __forceinline__ void gram_naive(int N, int K, const T* A, T* C) {
    const int tiles_n = (N + 31) / 32;
    const int i = (blockIdx.x / tiles_n) * 8 + threadIdx.y;
    const int j = (blockIdx.x % tiles_n) * 32 + threadIdx.x;
    if (i >= N || j >= N) return;
    const T* a = A + (i64)i * K;
    const T* b = A + (i64)j * K;
    T acc = T(0);
    for (int k = 0; k < K; ++k) acc += a[k] * b[k];
    C[(i64)i * N + j] = acc;
}

// ---- tiled, symmetric, diagonal, symmetric_unrolled (v004–v007) ----------------------
// Block 32×32 threads, 32×32 tile of C, one output per thread. Both operands are strips
// of rows of A: each K-step stages rows [i0, i0+32) and [j0, j0+32) × 32 columns in
// shared memory (zero outside A: v004's boundary handling) and every thread reads a row
// of each. Rows are padded to 33 so that a warp reading down a column hits 32 banks.
//   tiled (v004): every tile of C.
//   symmetric (v005): only tiles on or above the diagonal do work, and each result is
//     written twice, C[i][j] and C[j][i]; lower tiles return at once.
//   diagonal (v006): as symmetric, and a diagonal tile stages one strip only, since both
//     operands are the same rows.
//   symmetric_unrolled (v007): as symmetric, with the 32-term inner product of a K-step
//     fully unrolled instead of by 8 (no loop counter or branch left per K-step; the
//     report wrote its 8 terms out by hand and found no gain).
// symmetric does half the work of tiled; diagonal gains nothing over symmetric:
// diagonal tiles are only 1/T of the tiles, and the per-tile branch costs more than the
// strip it saves (also with one loop over a selected strip).
template <typename T, bool UPPER, bool ONE_STRIP, int UNROLL>
__device__ __forceinline__ void gram_tiles(int N, int K, const T* A, T* C) {
    __shared__ T As[32][33];
    __shared__ T Bs[32][33];
    const int tiles = (N + 31) / 32;
    const int bi = blockIdx.x / tiles, bj = blockIdx.x % tiles;
    if (UPPER && bi > bj) return;  // the whole block leaves before any barrier
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i = bi * 32 + ty, j = bj * 32 + tx;
    const bool one = ONE_STRIP && bi == bj;  // uniform across the block
    const int ra = bi * 32 + ty, rb = bj * 32 + ty;  // rows this thread stages
    T acc = T(0);
    for (int k0 = 0; k0 < K; k0 += 32) {
        const int c = k0 + tx;
        As[ty][tx] = (ra < N && c < K) ? A[(i64)ra * K + c] : T(0);
        if (!one) Bs[ty][tx] = (rb < N && c < K) ? A[(i64)rb * K + c] : T(0);
        __syncthreads();
        if (one) {
#pragma unroll UNROLL
            for (int k = 0; k < 32; ++k) acc += As[ty][k] * As[tx][k];
        } else {
#pragma unroll UNROLL
            for (int k = 0; k < 32; ++k) acc += As[ty][k] * Bs[tx][k];
        }
        __syncthreads();
    }
    if (i >= N || j >= N) return;
    if (!UPPER) {
        C[(i64)i * N + j] = acc;
    } else if (i <= j) {  // in a diagonal tile, the lower half comes from the mirror
        C[(i64)i * N + j] = acc;
        if (i < j) C[(i64)j * N + i] = acc;
    }
}

template <typename T>
__device__ __forceinline__ void gram_tiled(int N, int K, const T* A, T* C) {
    gram_tiles<T, false, false, 8>(N, K, A, C);
}
template <typename T>
__device__ __forceinline__ void gram_symmetric(int N, int K, const T* A, T* C) {
    gram_tiles<T, true, false, 8>(N, K, A, C);
}
template <typename T>
__device__ __forceinline__ void gram_diagonal(int N, int K, const T* A, T* C) {
    gram_tiles<T, true, true, 8>(N, K, A, C);
}
template <typename T>
__device__ __forceinline__ void gram_symmetric_unrolled(int N, int K, const T* A, T* C) {
    gram_tiles<T, true, false, 32>(N, K, A, C);
}

// ---- stripes, stripes_transposed (v008, v009) ---------------------------------------
// Column stripes instead of square tiles: block b owns columns [b·W, b·W+W) of A, stages
// that stripe of every row in shared memory once, and adds its share of every upper
// output, Σ over its W columns of A[i][k]·A[j][k], into C with atomicAdd. C must be
// zeroed first and is mirrored afterwards (gram_mirror below). 256 threads; warp w takes
// rows i = w, w+8, ... of C, its lanes the columns j = i + lane, i + lane + 32, ...: in
// one step the lanes read the stripe at 32 consecutive rows j, and all at row i (one
// broadcast, held in registers for the row).
//   stripes (v008): the stripe stored as it lies, S[row][k]: the lanes' reads of S[j][k]
//     are W elements apart, so they share few banks (8-way conflicts in f32).
//   stripes_transposed (v009): stored transposed, S[k][row]: the lanes' reads are
//     consecutive, conflict-free.
// Limits: the whole stripe of N rows sits in shared memory, at most STRIPE_ROWS rows (the
// report's 1024); each row's piece is 32 bytes (the report's 8 floats, or 4 doubles), so
// the stripe takes 32 KiB for either dtype. The host refuses larger N before launch.
// Unlike the report, only outputs on or above the diagonal are summed (it summed all N²)
// and the lower half is a copy: the atomics add the blocks' partial sums in whatever
// order the blocks arrive, so C[i][j] and C[j][i] summed separately could differ in the
// last bit, and neither is bitwise reproducible run to run. A stripe's own W terms are
// summed in a fixed order; columns past K are staged as zeros.
#define STRIPE_ROWS 1024
template <typename T, bool TRANSPOSED>
__device__ __forceinline__ void gram_stripe_sums(int N, int K, const T* A, T* C) {
    constexpr int W = 32 / (int)sizeof(T);
    __shared__ T S[STRIPE_ROWS * W];
    if (N > STRIPE_ROWS) return;  // refused by the host; never write past the stripe
    const int k0 = blockIdx.x * W;
    for (int e = threadIdx.x; e < N * W; e += blockDim.x) {  // a warp reads 32/W rows
        const int r = e / W, c = e % W;
        const T v = k0 + c < K ? A[(i64)r * K + k0 + c] : T(0);
        S[TRANSPOSED ? c * STRIPE_ROWS + r : e] = v;
    }
    __syncthreads();
    const int lane = threadIdx.x % 32;
    for (int i = threadIdx.x / 32; i < N; i += blockDim.x / 32) {
        T a[W];
#pragma unroll
        for (int c = 0; c < W; ++c) a[c] = S[TRANSPOSED ? c * STRIPE_ROWS + i : i * W + c];
        for (int j = i + lane; j < N; j += 32) {
            T sum = T(0);
#pragma unroll
            for (int c = 0; c < W; ++c)
                sum += a[c] * S[TRANSPOSED ? c * STRIPE_ROWS + j : j * W + c];
            atomicAdd(C + (i64)i * N + j, sum);
        }
    }
}

template <typename T>
__device__ __forceinline__ void gram_stripes(int N, int K, const T* A, T* C) {
    gram_stripe_sums<T, false>(N, K, A, C);
}
template <typename T>
__device__ __forceinline__ void gram_stripes_transposed(int N, int K, const T* A, T* C) {
    gram_stripe_sums<T, true>(N, K, A, C);
}

// The lower triangle of C from its upper one, after the stripe sums. A 1-D grid over the
// 32×32 tiles on or above the diagonal, 32×8 threads: a tile is read by rows, and its
// transpose written by rows to the mirror tile, through shared memory padded to 33 so
// that both global sides are coalesced. A diagonal tile writes only its strictly lower
// half, read from its upper half before the barrier.
template <typename T>
__device__ __forceinline__ void gram_mirror(int N, T* C) {
    __shared__ T t[32][33];
    int bi, bj;
    upper_tile(blockIdx.x, bi, bj);
    const int tx = threadIdx.x;
    for (int y = threadIdx.y; y < 32; y += 8) {  // t[y][x] = C[bi·32 + y][bj·32 + x]
        const int r = bi * 32 + y, c = bj * 32 + tx;
        if (r < N && c < N) t[y][tx] = C[(i64)r * N + c];
    }
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += 8) {  // C[r][c] = C[c][r] = t[tx][y]
        const int r = bj * 32 + y, c = bi * 32 + tx;
        if (r < N && c < r) C[(i64)r * N + c] = t[tx][y];
    }
}

// ---- reg_blocked ---------------------------------------------------------------------
// The GEMM ladder's register-blocked, vectorized machinery (kernels/matmul.cu) on the
// upper triangle only. A 1-D grid of T(T+1)/2 blocks, one per 128×128 tile on or above
// the diagonal (T = ⌈N/128⌉); 256 threads, each keeping an 8×8 block of C in registers
// (warps 4×2, lanes 4×8, 2×2 pieces of 4×4, so shared reads are conflict-free 16-byte
// vectors). Both operands are 128-row strips of A, fetched as 16-byte vectors along k and
// stored transposed in shared memory; the K-loop's pipelining is chosen per dtype
// (GramCfg below). Each result is written twice, directly and mirrored, both as 16-byte
// vectors; diagonal tiles write their upper half and its mirror.
// Computing only half the tiles is what puts it ahead of a full SGEMM of the same M·Mᵀ.
// The panels (A's strips are RowPanel tiles), the warp layout and the rank-1 updates are
// tiles.cuh's.

// How the K-loop is pipelined, per dtype, the faster of the two as measured on the H200
// (docs/kernels.md): SINGLE (load, store, barrier, compute, barrier) with BK = 16 for
// f32, which beat double buffering at BK = 8 (at BK = 16 the prefetch registers spill
// under the 128-register cap that two blocks per SM need); REGS (next tile in registers
// during the compute, two shared buffers) with BK = 8 for f64, which beat SINGLE at
// BK = 16.
enum Pipe { SINGLE, REGS };
template <typename T> struct GramCfg;
template <> struct GramCfg<float> {
    static const int BK = 16;
    static const Pipe PIPE = SINGLE;
};
template <> struct GramCfg<double> {
    static const int BK = 8;
    static const Pipe PIPE = REGS;
};

// Accumulates into acc the K-tiles [kt0, kt1) of the 128×128 tile of C at rows m0 and
// columns n0. The shared buffers are static, so the stream-K kernel's segments reuse them.
template <typename T>
__device__ __forceinline__ void gram_rb_accumulate(int N, int K, const T* A, int m0, int n0,
                                                   int kt0, int kt1, int ar, int bc,
                                                   T (&acc)[8][8]) {
    constexpr int BK = GramCfg<T>::BK, BM = 128;
    constexpr Pipe PIPE = GramCfg<T>::PIPE;
    constexpr int BUFS = PIPE == REGS ? 2 : 1;
    typedef RowPanel<T, BM, BK, 256> S;  // rows [r0, r0+128) of A, stored S[k][row]
    __shared__ __align__(16) T As[BUFS][BK * S::LD];
    __shared__ __align__(16) T Bs[BUFS][BK * S::LD];
    const bool vec = K % S::V == 0 && aligned16(A);
    T ra[S::LOADS][S::V], rb[S::LOADS][S::V];
    if (PIPE == SINGLE) {
        for (int t = kt0; t < kt1; ++t) {
            S::load(A, N, K, K, m0, t * BK, vec, ra);
            S::load(A, N, K, K, n0, t * BK, vec, rb);
            S::store(As[0], ra);
            S::store(Bs[0], rb);
            __syncthreads();
            mma_tile<T, BK, S::LD, S::LD>(As[0], Bs[0], ar, bc, acc);
            __syncthreads();
        }
    } else {
        S::load(A, N, K, K, m0, kt0 * BK, vec, ra);
        S::load(A, N, K, K, n0, kt0 * BK, vec, rb);
        S::store(As[0], ra);
        S::store(Bs[0], rb);
        __syncthreads();
        for (int t = kt0; t < kt1; ++t) {
            const int cur = (t - kt0) & 1;
            const bool more = t + 1 < kt1;  // uniform across the block
            if (more) {
                S::load(A, N, K, K, m0, (t + 1) * BK, vec, ra);
                S::load(A, N, K, K, n0, (t + 1) * BK, vec, rb);
            }
            mma_tile<T, BK, S::LD, S::LD>(As[cur], Bs[cur], ar, bc, acc);
            if (more) {  // the other buffer was last read before the previous barrier
                S::store(As[cur ^ 1], ra);
                S::store(Bs[cur ^ 1], rb);
            }
            __syncthreads();
        }
    }
}

// Writes the finished tile (bi, bj) of C and its mirror. The thread's rows are
// m0 + ar + {0..3, 16..19}, its columns n0 + bc + {0..3, 32..35}.
template <typename T>
__device__ __forceinline__ void gram_rb_store(int N, int bi, int bj, int ar, int bc,
                                              const T (&acc)[8][8], T* C) {
    const int m0 = bi * 128, n0 = bj * 128;
    if (bi == bj) {
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const int r = m0 + ar + (i / 4) * 16 + i % 4;
                const int c = n0 + bc + (j / 4) * 32 + j % 4;
                if (r < N && c < N && r <= c) {
                    C[(i64)r * N + c] = acc[i][j];
                    if (r < c) C[(i64)c * N + r] = acc[i][j];
                }
            }
        return;
    }
    const bool vec_c = N % 4 == 0 && aligned16(C);
#pragma unroll
    for (int ig = 0; ig < 2; ++ig)
#pragma unroll
        for (int jg = 0; jg < 2; ++jg) {
            const int r = m0 + ar + ig * 16, c = n0 + bc + jg * 32;
#pragma unroll
            for (int e = 0; e < 4; ++e) {  // row r + e, columns c..c+3
                if (r + e >= N) break;
                T* p = C + (i64)(r + e) * N + c;
                T v[4] = {acc[ig * 4 + e][jg * 4], acc[ig * 4 + e][jg * 4 + 1],
                          acc[ig * 4 + e][jg * 4 + 2], acc[ig * 4 + e][jg * 4 + 3]};
                if (vec_c && c < N) st4(p, v);
                else
                    for (int f = 0; f < 4; ++f)
                        if (c + f < N) p[f] = v[f];
            }
#pragma unroll
            for (int e = 0; e < 4; ++e) {  // mirror: row c + e, columns r..r+3
                if (c + e >= N) break;
                T* p = C + (i64)(c + e) * N + r;
                T v[4] = {acc[ig * 4][jg * 4 + e], acc[ig * 4 + 1][jg * 4 + e],
                          acc[ig * 4 + 2][jg * 4 + e], acc[ig * 4 + 3][jg * 4 + e]};
                if (vec_c && r < N) st4(p, v);
                else
                    for (int f = 0; f < 4; ++f)
                        if (r + f < N) p[f] = v[f];
            }
        }
}

template <typename T>
__device__ __forceinline__ void gram_reg_blocked(int N, int K, const T* A, T* C) {
    int bi, bj;
    upper_tile(blockIdx.x, bi, bj);
    int ar, bc;
    warp_block(ar, bc);
    T acc[8][8];
    zero_block(acc);
    gram_rb_accumulate(N, K, A, bi * 128, bj * 128, 0, (K + GramCfg<T>::BK - 1) / GramCfg<T>::BK,
                       ar, bc, acc);
    gram_rb_store(N, bi, bj, ar, bc, acc, C);
}

// ---- stream_k ------------------------------------------------------------------------
// reg_blocked's work cut evenly across a fixed number of blocks, however many tiles there
// are (stream-K, Osama et al. 2023): the U = tiles·KT units (an upper tile's K-tiles,
// tile after tile) are dealt out as contiguous ranges, block b taking [⌊bU/B⌋,
// ⌊(b+1)U/B⌋). Where C's tiles are few, or their last wave nearly empty, this keeps every
// SM busy to the end. A block runs each tile its range meets in turn and writes what it
// summed of the tile (a piece, or all of it) to its slot for the tile in W (up to MAXSEG
// slots of 128×128 per block); gram_stream_k_sum adds each tile's pieces in the order of
// K, then writes the tile and its mirror. (Writing whole tiles straight to C, as
// reg_blocked does, made the f32 kernel spill under the 128-register cap that two blocks
// per SM need.) Every sum has a fixed order, so results are bitwise reproducible run to
// run; they depend on B, which the host derives from the device's SM count alone.

// The block whose range holds unit u (B ≤ U, so no range is empty).
__device__ __forceinline__ i64 sk_owner(i64 u, i64 U, i64 B) { return ((u + 1) * B - 1) / U; }

// U < 2³¹ (the host cuts no larger a product), so the loop runs on 32-bit units.
template <typename T>
__device__ __forceinline__ void gram_stream_k(int N, int K, int MAXSEG, const T* A, T* C,
                                              T* W) {
    const int KT = (K + GramCfg<T>::BK - 1) / GramCfg<T>::BK, tt = (N + 127) / 128;
    const i64 U = (i64)tt * (tt + 1) / 2 * KT, B = gridDim.x, b = blockIdx.x;
    const int u0 = (int)(b * U / B), u1 = (int)((b + 1) * U / B);
    T* w = W + (((i64)b * MAXSEG - u0 / KT) << 14);  // slot of tile t: w + (t << 14)
    int ar, bc;
    warp_block(ar, bc);
    for (int u = u0; u < u1;) {
        const int tile = u / KT, kt0 = u - tile * KT, kt1 = min(u1 - tile * KT, KT);
        int bi, bj;
        upper_tile(tile, bi, bj);
        T acc[8][8];
        zero_block(acc);
        gram_rb_accumulate(N, K, A, bi * 128, bj * 128, kt0, kt1, ar, bc, acc);
        // The piece (or the whole tile) as a 128×128 tile, rows and columns past N left out.
        T* p = w + ((i64)tile << 14);
        const int rows = N - bi * 128, cols = N - bj * 128;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int r = ar + (i / 4) * 16 + i % 4;
#pragma unroll
            for (int jg = 0; jg < 2; ++jg) {
                const int c = bc + jg * 32;
                if (r < rows && c < cols) {
                    T v[4] = {acc[i][jg * 4], acc[i][jg * 4 + 1], acc[i][jg * 4 + 2],
                              acc[i][jg * 4 + 3]};
                    st4(p + r * 128 + c, v);
                }
            }
        }
        u = tile * KT + kt1;
    }
}

// One block per (tile, slab of 8 rows), 256 threads, each four adjacent columns of one
// row: the tile's pieces added in the order of their blocks (of K), 16-byte loads with
// several in flight (one load at a time per thread left it waiting on memory: see
// docs/kernels.md), into C and, through shared memory, its mirror. B ≤ 1024.
template <typename T>
__device__ __forceinline__ void gram_stream_k_sum(int N, int K, int B, int MAXSEG, const T* W,
                                                  T* C) {
    __shared__ i64 base[1024];
    __shared__ T s[8][129];
    const i64 KT = (K + GramCfg<T>::BK - 1) / GramCfg<T>::BK, tt = (N + 127) / 128;
    const i64 U = tt * (tt + 1) / 2 * KT, tile = blockIdx.x;
    const int lo = (int)sk_owner(tile * KT, U, B);
    const int pieces = (int)sk_owner((tile + 1) * KT - 1, U, B) - lo + 1;
    for (int i = threadIdx.x; i < pieces; i += blockDim.x) {
        const i64 p = lo + i;
        base[i] = (p * MAXSEG + (tile - p * U / B / KT)) << 14;
    }
    __syncthreads();
    int bi, bj;
    upper_tile((int)tile, bi, bj);
    const int row = blockIdx.y * 8 + threadIdx.x / 32, col = (threadIdx.x % 32) * 4;
    const int r = bi * 128 + row, c = bj * 128 + col;
    if (r < N && c < N) {
        const T* w = W + row * 128 + col;
        T acc[4], v[4];
        ld4(w + base[0], acc);
#pragma unroll 4
        for (int i = 1; i < pieces; ++i) {
            ld4(w + base[i], v);
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[j] += v[j];
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            s[threadIdx.x / 32][col + j] = acc[j];
            if (c + j < N && (bi != bj || r <= c + j)) C[(i64)r * N + c + j] = acc[j];
        }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < 8 * 128; e += 256) {  // mirror: row c, 8 columns from r
        const int cc = e / 8, rr = e % 8, r = bi * 128 + blockIdx.y * 8 + rr, c = bj * 128 + cc;
        if (r < N && c < N && (bi != bj || r < c)) C[(i64)c * N + r] = s[rr][cc];
    }
}

// ---- narrow --------------------------------------------------------------------------
// For a short, wide M (N ≤ 64 rows, a long K: the gram of a tall-skinny matrix's
// transpose), where a 128×128 tile would compute 4 to 16 times the outputs there are.
// The output is padded to W×W (W = 32 or 64, the smaller that holds N), and each thread
// keeps a 4×4 block of it: (W/4)² threads, 64 or 256. Block b takes K's columns
// [b·KS, (b+1)·KS): BK = 32 of them at a time go through shared memory, stored k-major
// so that a thread reads its rows' and its columns' four values as two 16-byte vectors,
// the next stage's loads in registers during the current stage's products. The block's
// N×N piece goes to P (gridDim.x pieces), and gram_narrow_sum adds the pieces in the
// order of K. Every sum has a fixed order: bitwise reproducible run to run.
// Element e of the stage at kb: row (e·THREADS + tid) / BK, column kb + (… % BK): a
// warp reads 32 consecutive values of a row.
template <typename T, int THREADS, int PER, int BK>
__device__ __forceinline__ void narrow_load(int N, int K, const T* A, int kb, int k1,
                                            T (&reg)[PER]) {
#pragma unroll
    for (int e = 0; e < PER; ++e) {
        const int idx = e * THREADS + threadIdx.x, row = idx / BK, k = kb + idx % BK;
        reg[e] = row < N && k < k1 ? A[(i64)row * K + k] : T(0);
    }
}

template <typename T, int W>
__device__ __forceinline__ void gram_narrow_piece(int N, int K, int KS, const T* A, T* P) {
    constexpr int BK = 32, TW = W / 4, THREADS = TW * TW, PER = W * BK / THREADS;
    constexpr int LD = W + 4;  // a multiple of 4, so that rows of As stay 16-byte aligned
    __shared__ __align__(16) T As[BK][LD];
    const int k0 = blockIdx.x * KS, k1 = min(K, k0 + KS);
    const int tid = threadIdx.x, ty = tid / TW, tx = tid % TW;
    T acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = T(0);
    T reg[PER];
    narrow_load<T, THREADS, PER, BK>(N, K, A, k0, k1, reg);
    for (int kb = k0; kb < k1; kb += BK) {
#pragma unroll
        for (int e = 0; e < PER; ++e) {
            const int idx = e * THREADS + tid;
            As[idx % BK][idx / BK] = reg[e];
        }
        __syncthreads();
        if (kb + BK < k1) narrow_load<T, THREADS, PER, BK>(N, K, A, kb + BK, k1, reg);
#pragma unroll 8
        for (int kk = 0; kk < BK; ++kk) {
            T a[4], c[4];
            ld4(&As[kk][4 * ty], a);
            ld4(&As[kk][4 * tx], c);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * c[j];
        }
        __syncthreads();
    }
    T* piece = P + (i64)blockIdx.x * N * N;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int r = 4 * ty + i, c = 4 * tx + j;
            if (r < N && c < N) piece[r * N + c] = acc[i][j];
        }
}

// 1024 threads per 32 elements of C, a warp per contiguous run of pieces: warp w adds
// pieces [w·S/32, (w+1)·S/32) in order, lane l element 32·blockIdx.x + l (reads of 128
// bytes); the 32 warps' sums are then added in warp order. C[r][c] and C[c][r] both take
// the sum of element (min, max), so C is exactly symmetric.
template <typename T>
__device__ __forceinline__ void gram_narrow_sum(int N, int S, const T* P, T* C) {
    __shared__ T part[32][33];
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    const int e = blockIdx.x * 32 + l, r = e / N, c = e % N;
    const bool in = e < N * N;
    const int at = in ? min(r, c) * N + max(r, c) : 0;
    const int p0 = (int)((i64)w * S / 32), p1 = (int)((i64)(w + 1) * S / 32);
    T acc = T(0);
#pragma unroll 8
    for (int p = p0; p < p1; ++p)
        if (in) acc = p == p0 ? P[(i64)p * N * N + at] : acc + P[(i64)p * N * N + at];
    part[w][l] = acc;
    __syncthreads();
    if (w == 0 && in) {
        T sum = T(0);
        bool any = false;
        for (int v = 0; v < 32; ++v) {
            if ((i64)v * S / 32 == (i64)(v + 1) * S / 32) continue;  // warp v had no pieces
            sum = any ? sum + part[v][l] : part[v][l];
            any = true;
        }
        C[e] = sum;
    }
}

// ---- tensor_core ---------------------------------------------------------------------
// The GEMM ladder's tensor-core kernel (mma.cuh: 128×BN tiles, three cp.async stages,
// mma.sync) on the tiles that meet the upper triangle, each result on or above the
// diagonal written with its mirror: the upper 128×128 tiles of reg_blocked's grid, each
// as 128/BN blocks (f64: two of 128×64). f32 on 3xTF32 (MODE 3: close to f32's own
// accuracy; TF32 alone would lose three digits), with B = Mᵀ materialised by the host
// (At, K×N); f64 on DMMA (IEEE), B's stages read from M's rows (gemm_tc's BT), no copy.
template <typename T>
__device__ __forceinline__ void gram_tensor_core(int N, int K, const T* A, const T* At, T* C) {
    constexpr int H = 128 / Tc<T>::BN;
    int bi, bj;
    upper_tile(blockIdx.x / H, bi, bj);
    if constexpr (sizeof(T) == 8) {
        // A diagonal tile's left block (its columns 0..63) meets the upper triangle only in
        // its top 64 rows: where A's rows are whole chunks, the left blocks of diagonal
        // tiles 2p and 2p + 1 are one block (PAIR), and the other ends at once, so that
        // the grid's work is whole blocks (at n = 2048, 264: one wave at two per SM).
        if (bi == bj && blockIdx.x % H == 0 && tc_rows16(K, A)) {
            if (bi % 2 == 0)
                gemm_tc<T, 3, true, true, true>(N, N, K, T(1), A, A, T(0), C, bi, 0, K, K, N);
            return;
        }
        gemm_tc<T, 3, true, true>(N, N, K, T(1), A, A, T(0), C, bi, bj * H + blockIdx.x % H, K, K,
                                  N);
    } else {
        gemm_tc<T, 3, true>(N, N, K, T(1), A, At, T(0), C, bi, bj * H + blockIdx.x % H, K, N, N);
    }
}

// ---- stream_tc: tensor_core's f64 kernel with stream-K (stream_k's f64 form) -----------
// Where the blocks of gram_tensor_core_f64 leave its last wave mostly empty: tc_stream
// (mma.cuh) over that grid's blocks in order, less the ones PAIR leaves empty.
// PAIRED: PAIR applies (A's rows whole 16-byte chunks, so that every block runs gemm_tc's
// fast path alone: one copy of the K loop per kind of block, as in gram_tensor_core).
template <bool PAIRED> struct GramBlocks {
    int N, K;
    const double* A;
    double* C;
    // Item `item`'s block: its tile row bi and 64-column block tn, or (pair) the PAIR
    // block at diagonal tile bi. The grid's blocks in order, skipping the left halves of
    // the odd diagonal tiles where PAIR takes them (block 2·(j(j+1)/2 + j) for odd j).
    __device__ __forceinline__ void where(int item, int& bi, int& tn, bool& pair) const {
        int x = item;
        if (PAIRED)
            for (int j = 1; 2 * (j * (j + 1) / 2 + j) <= x; j += 2) ++x;
        int bj;
        upper_tile(x / 2, bi, bj);
        pair = PAIRED && bi == bj && x % 2 == 0;
        tn = bj * 2 + x % 2;
    }
    __device__ __forceinline__ void product(int item, int k0, int count,
                                            TcAcc<double>::type acc) const {
        int bi, tn;
        bool pair;
        where(item, bi, tn, pair);
        if (pair) {
            gemm_tc_acc<double, 3, true, true>(N, N, K, A, A, bi, 0, K, K, k0, count, acc);
        } else {
            gemm_tc_acc<double, 3, true, false, PAIRED>(N, N, K, A, A, bi, tn, K, K, k0, count,
                                                        acc);
        }
    }
    __device__ __forceinline__ void store(int item, TcAcc<double>::type acc) const {
        int bi, tn;
        bool pair;
        where(item, bi, tn, pair);
        if (pair) {
            tc_store<double, true, true>(N, N, 1.0, 0.0, C, bi, 0, N, acc);
        } else {
            tc_store<double, true>(N, N, 1.0, 0.0, C, bi, tn, N, acc);
        }
    }
};
__device__ __forceinline__ void gram_stream_tc(int N, int K, const double* A, double* C,
                                               double* W, int skt, int P) {
    if (tc_rows16(K, A)) {
        tc_stream(GramBlocks<true>{N, K, A, C}, K, W, skt, P);
    } else {
        tc_stream(GramBlocks<false>{N, K, A, C}, K, W, skt, P);
    }
}
__device__ __forceinline__ void gram_stream_tc_fix(int N, int K, int paired, const double* W,
                                                   double* C, int skt, int P) {
    if (paired) {
        tc_stream_fix(GramBlocks<true>{N, K, nullptr, C}, K, W, skt, P);
    } else {
        tc_stream_fix(GramBlocks<false>{N, K, nullptr, C}, K, W, skt, P);
    }
}

// ---- extern "C" entry points ---------------------------------------------------------
#define GRAM_ENTRY(tech, sfx, T, bounds)                                                  \
    NDGPU_ENTRY(gram_##tech##_##sfx, bounds,                                              \
                (int N, int K, const T* __restrict__ A, T* __restrict__ C),               \
                (gram_##tech<T>(N, K, A, C)))

NDGPU_F32_F64(GRAM_ENTRY, naive, __launch_bounds__(256), __launch_bounds__(256))
NDGPU_F32_F64(GRAM_ENTRY, tiled, __launch_bounds__(1024), __launch_bounds__(1024))
NDGPU_F32_F64(GRAM_ENTRY, symmetric, __launch_bounds__(1024), __launch_bounds__(1024))
NDGPU_F32_F64(GRAM_ENTRY, diagonal, __launch_bounds__(1024), __launch_bounds__(1024))
NDGPU_F32_F64(GRAM_ENTRY, symmetric_unrolled, __launch_bounds__(1024), __launch_bounds__(1024))
NDGPU_F32_F64(GRAM_ENTRY, stripes, __launch_bounds__(256), __launch_bounds__(256))
NDGPU_F32_F64(GRAM_ENTRY, stripes_transposed, __launch_bounds__(256), __launch_bounds__(256))
NDGPU_F32_F64(GRAM_ENTRY, reg_blocked, __launch_bounds__(256, 2), __launch_bounds__(256))

// gram_stream_tc_f64(int N, int K, const double* A, double* C, double* W, int skt, int P)
// and gram_stream_tc_fix_f64(int N, int K, int paired, const double* W, double* C, int skt,
// int P): items are gram_tensor_core_f64's blocks (GramBlocks), PAIR where A's rows are
// whole 16-byte chunks (`paired`: the host's finding from A's pointer, the same).
NDGPU_ENTRY(gram_stream_tc_f64, __launch_bounds__(128, 2),
            (int N, int K, const double* __restrict__ A, double* __restrict__ C,
             double* __restrict__ W, int skt, int P),
            (gram_stream_tc(N, K, A, C, W, skt, P)))
NDGPU_ENTRY(gram_stream_tc_fix_f64, __launch_bounds__(128),
            (int N, int K, int paired, const double* __restrict__ W, double* __restrict__ C,
             int skt, int P),
            (gram_stream_tc_fix(N, K, paired, W, C, skt, P)))

// gram_stream_k_<dtype>(int N, int K, int MAXSEG, const T* A, T* C, T* W) and
// gram_stream_k_sum_<dtype>(int N, int K, int B, int MAXSEG, const T* W, T* C).
#define STREAM_K_ENTRY(tech, sfx, T, bounds)                                               \
    NDGPU_ENTRY(gram_##tech##_##sfx, bounds,                                              \
                (int N, int K, int MAXSEG, const T* __restrict__ A, T* __restrict__ C,    \
                 T* __restrict__ W),                                                      \
                (gram_##tech<T>(N, K, MAXSEG, A, C, W)))                                  \
    NDGPU_ENTRY(gram_##tech##_sum_##sfx, __launch_bounds__(256),                          \
                (int N, int K, int B, int MAXSEG, const T* __restrict__ W,                \
                 T* __restrict__ C),                                                      \
                (gram_##tech##_sum<T>(N, K, B, MAXSEG, W, C)))
NDGPU_F32_F64(STREAM_K_ENTRY, stream_k, __launch_bounds__(256, 2), __launch_bounds__(256))

// gram_narrow_<dtype> (W = 64, 256 threads) and gram_narrow32_<dtype> (W = 32, 64
// threads): (int N, int K, int KS, const T* A, T* P); gram_narrow_sum_<dtype>(int N,
// int S, const T* P, T* C), 1024 threads.
#define NARROW_ENTRY(tech, sfx, T, bounds)                                                 \
    NDGPU_ENTRY(gram_##tech##_##sfx, __launch_bounds__(256, 1),                           \
                (int N, int K, int KS, const T* __restrict__ A, T* __restrict__ P),       \
                (gram_##tech##_piece<T, 64>(N, K, KS, A, P)))                             \
    NDGPU_ENTRY(gram_##tech##32_##sfx, __launch_bounds__(64),                             \
                (int N, int K, int KS, const T* __restrict__ A, T* __restrict__ P),       \
                (gram_##tech##_piece<T, 32>(N, K, KS, A, P)))                             \
    NDGPU_ENTRY(gram_##tech##_sum_##sfx, __launch_bounds__(1024),                         \
                (int N, int S, const T* __restrict__ P, T* __restrict__ C),               \
                (gram_##tech##_sum<T>(N, S, P, C)))
NDGPU_F32_F64(NARROW_ENTRY, narrow, , )

// gram_tensor_core_f32(int N, int K, const float* A, const float* At, float* C), with
// TC_SMEM(float) bytes of dynamic shared memory, and gram_tensor_core_f64(int N, int K,
// const double* A, double* C), with TC_SMEM_BT.
#define GRAM_TC_f32(tech, T, bounds)                                                       \
    NDGPU_ENTRY(gram_##tech##_f32, bounds,                                                \
                (int N, int K, const T* __restrict__ A, const T* __restrict__ At,         \
                 T* __restrict__ C),                                                      \
                (gram_##tech<T>(N, K, A, At, C)))
#define GRAM_TC_f64(tech, T, bounds)                                                       \
    NDGPU_ENTRY(gram_##tech##_f64, bounds, (int N, int K, const T* __restrict__ A,        \
                                            T* __restrict__ C),                           \
                (gram_##tech<T>(N, K, A, nullptr, C)))
#define GRAM_TC_ENTRY(tech, sfx, T, bounds) GRAM_TC_##sfx(tech, T, bounds)
NDGPU_F32_F64(GRAM_TC_ENTRY, tensor_core, __launch_bounds__(256), __launch_bounds__(128, 2))

// The stripe rungs' second launch: gram_mirror_<dtype>(int N, T* C).
#define MIRROR_ENTRY(tech, sfx, T, bounds) \
    NDGPU_ENTRY(gram_##tech##_##sfx, bounds, (int N, T* __restrict__ C), (gram_##tech<T>(N, C)))
NDGPU_F32_F64(MIRROR_ENTRY, mirror, __launch_bounds__(256), __launch_bounds__(256))
