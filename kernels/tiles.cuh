// tiles.cuh: the register-blocked machinery of matmul.cu's vectorized and
// double_buffered rungs, which gram.cu's reg_blocked rung runs on the upper triangle.
// Handed to NVRTC as an in-memory header, as common.cuh is.
//
// Block tile 128×128, 256 threads = 8 warps as 4 (M) × 2 (N); a warp covers 32×64 of C
// and its lanes form 4 (M) × 8 (N). Each thread owns an 8×8 block of C split 2×2 into
// 4×4 pieces: rows r0 + {0..3, 16..19}, columns c0 + {0..3, 32..35}. With that split the
// 8 lanes of a quarter-warp read 8 consecutive 16-byte vectors of B from shared memory
// (no bank conflict) and the lanes of A's read broadcast, and stores to C are 16-byte
// vectors of whole 128-byte rows per 8 lanes.
#pragma once
#include "common.cuh"

// The first row (ar) and column (bc) of this thread's 8×8 block within the 128×128 tile.
__device__ __forceinline__ void warp_block(int& ar, int& bc) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    ar = (warp / 2) * 32 + (lane / 8) * 4;
    bc = (warp % 2) * 64 + (lane % 8) * 4;
}

template <typename T>
__device__ __forceinline__ void zero_block(T acc[8][8]) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = T(0);
}

// 16 bytes global → shared without passing through registers (sm_80+), L2 only.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem));
}
// The same, zero-filled instead where `in` is false (a source size of 0: nothing is read,
// and gmem is not dereferenced).
__device__ __forceinline__ void cp_async16_zfill(void* smem, const void* gmem, bool in) {
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem),
                 "r"(in ? 16 : 0));
}
__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}

// How the threads fetch a ROWS×COLS tile of a row-major matrix: 16-byte vectors along
// its rows, PER_ROW threads a row, each thread LOADS vectors STEP rows apart. A vector
// is read whole where `vec` (the pointer aligned, the extent and the leading dimension
// whole vectors) and it lies inside the matrix; else element by element, zero outside.
template <typename T, int ROWS, int COLS, int THREADS>
struct Panel {
    static const int V = V16<T>::N, PER_ROW = COLS / V, LOADS = ROWS * PER_ROW / THREADS;
    static const int STEP = THREADS / PER_ROW;  // rows between one thread's vectors
    static_assert(THREADS % PER_ROW == 0 && LOADS * STEP == ROWS, "whole rows per pass");
    // The vector at q (column c of its row; `in`: the row is inside the matrix) into r.
    __device__ __forceinline__ static void get(const T* q, bool vec, bool in, int c,
                                               int cols, T r[V]) {
        if (vec && in && c < cols) {
            ldv(q, r);
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e) r[e] = (in && c + e < cols) ? q[e] : T(0);
        }
    }
    // The same vector into shared memory at d: asynchronously where whole
    // (cp_async_wait_all before it is read), else through registers.
    __device__ __forceinline__ static void put(T* d, const T* q, bool vec, bool in, int c,
                                               int cols) {
        if (vec && in && c < cols) {
            cp_async16(d, q);
        } else {
            T v[V];
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = (in && c + e < cols) ? q[e] : T(0);
            stv(d, v);
        }
    }
    // Rows [r0, r0+ROWS) × columns [c0, c0+COLS) of a rows×cols matrix (leading
    // dimension ld) into this thread's registers.
    __device__ __forceinline__ static void load(const T* X, int rows, int cols, int ld, int r0,
                                                int c0, bool vec, T reg[LOADS][V]) {
        const int r = r0 + threadIdx.x / PER_ROW, c = c0 + (threadIdx.x % PER_ROW) * V;
#pragma unroll
        for (int s = 0; s < LOADS; ++s) {
            const T* q = X + (i64)(r + s * STEP) * ld + c;
            get(q, vec, r + s * STEP < rows, c, cols, reg[s]);
        }
    }
};

// A's tiles: rows [r0, r0+ROWS) × columns [k0, k0+BK) of a rows×K matrix, stored
// transposed, S[k][row], so that the inner loop reads 4 consecutive rows as one vector.
// LD = ROWS + one vector: the transposing stores of a warp then fall in different banks.
// Addresses are recomputed per tile from (r0, k0) rather than carried, which spares
// registers in the inner loop.
template <typename T, int ROWS, int BK, int THREADS>
struct RowPanel : Panel<T, ROWS, BK, THREADS> {
    typedef Panel<T, ROWS, BK, THREADS> P;
    static const int LD = ROWS + P::V;
    __device__ __forceinline__ static void store(T* S, const T reg[P::LOADS][P::V]) {
        const int row = threadIdx.x / P::PER_ROW, col = (threadIdx.x % P::PER_ROW) * P::V;
#pragma unroll
        for (int s = 0; s < P::LOADS; ++s)
#pragma unroll
            for (int e = 0; e < P::V; ++e) S[(col + e) * LD + row + s * P::STEP] = reg[s][e];
    }
    // Prefetch without registers: the thread's vectors go to its own slots of a staging
    // area W (LOADS·THREADS vectors); after cp_async_wait_all the same thread moves
    // them, transposed, into S.
    __device__ __forceinline__ static void stage(const T* X, int rows, int K, int ld, int r0,
                                                 int k0, bool vec, T* W) {
        const int r = r0 + threadIdx.x / P::PER_ROW, c = k0 + (threadIdx.x % P::PER_ROW) * P::V;
#pragma unroll
        for (int s = 0; s < P::LOADS; ++s) {
            const T* q = X + (i64)(r + s * P::STEP) * ld + c;
            T* d = W + (s * THREADS + threadIdx.x) * P::V;
            P::put(d, q, vec, r + s * P::STEP < rows, c, K);
        }
    }
    __device__ __forceinline__ static void unstage(T* S, const T* W) {
        T reg[P::LOADS][P::V];
#pragma unroll
        for (int s = 0; s < P::LOADS; ++s) ldv(W + (s * THREADS + threadIdx.x) * P::V, reg[s]);
        store(S, reg);
    }
};

// B's tiles: rows [k0, k0+BK) × columns [c0, c0+COLS) of a K×N matrix, stored as they
// lie, S[k][col].
template <typename T, int BK, int COLS, int THREADS>
struct ColPanel : Panel<T, BK, COLS, THREADS> {
    typedef Panel<T, BK, COLS, THREADS> P;
    static const int LD = COLS;
    __device__ __forceinline__ static void store(T* S, const T reg[P::LOADS][P::V]) {
        const int row = threadIdx.x / P::PER_ROW, col = (threadIdx.x % P::PER_ROW) * P::V;
#pragma unroll
        for (int s = 0; s < P::LOADS; ++s) stv(S + (row + s * P::STEP) * LD + col, reg[s]);
    }
    // As load + store, with whole vectors copied asynchronously (cp_async_wait_all and a
    // barrier before the tile is read).
    __device__ __forceinline__ static void copy(const T* X, int K, int N, int ld, int k0,
                                                int c0, bool vec, T* S) {
        const int row = threadIdx.x / P::PER_ROW, col = (threadIdx.x % P::PER_ROW) * P::V;
        const int r = k0 + row, c = c0 + col;
#pragma unroll
        for (int s = 0; s < P::LOADS; ++s) {
            const T* q = X + (i64)(r + s * P::STEP) * ld + c;
            T* d = S + (row + s * P::STEP) * LD + col;
            P::put(d, q, vec, r + s * P::STEP < K, c, N);
        }
    }
};

// BK rank-1 updates of the thread's 8×8 block from staged tiles (As[k][m], Bs[k][n]).
template <typename T, int BK, int LDA, int LDB>
__device__ __forceinline__ void mma_tile(const T* As, const T* Bs, int ar, int bc,
                                         T acc[8][8]) {
#pragma unroll
    for (int k = 0; k < BK; ++k) {
        T a[8], b[8];
        ld4(As + k * LDA + ar, a);
        ld4(As + k * LDA + ar + 16, a + 4);
        ld4(Bs + k * LDB + bc, b);
        ld4(Bs + k * LDB + bc + 32, b + 4);
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
}
