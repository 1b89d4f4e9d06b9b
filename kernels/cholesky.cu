// cholesky.cu: A = L·Lᵀ for symmetric positive-definite A (row-major, n×n, factored in
// place: the lower triangle becomes L, only the lower triangle is ever read), and the
// triangular solves with L. Report 004's two rungs, then the blocked algorithm:
//
//   single_block  one block does everything, threads split the outer i loop (report 004)
//   per_step      per k: a division kernel and an elimination kernel whose threads run
//                 along contiguous memory (report 004's coalesced version)
//   blocked       right-looking, NB = 64: factor the diagonal block in registers (one
//                 block), solve the panel below it (TRSM), update the trailing lower
//                 triangle with a register-blocked SYRK over lower tiles only (the n³/3
//                 flops); 3 launches per 64 columns
//
// The solves here invert the 64-row diagonal blocks of L and apply them; the rest of a
// solve is GEMM updates (crates/cuda/src/ops/cholesky/solve.rs).
//
// A pivot that is not positive (or not finite), taken before the square root, is
// recorded in `info` (info[0] = its global index, info[2..4) = its value as a double);
// every kernel reads info[0] first and does nothing once it is set, so the host
// launches the whole factorization and reads `info` once, at the end.
#include "common.cuh"
#include "mma.cuh"

#define CHOL_NB 64

__device__ __forceinline__ bool chol_failed(const int* info) { return info[0] >= 0; }

__device__ __forceinline__ void chol_record(int* info, int pivot, double value) {
    info[0] = pivot;
    *reinterpret_cast<double*>(info + 2) = value;
}

// NaN fails the first comparison, +Inf the second.
template <typename T> __device__ __forceinline__ bool chol_bad_pivot(T v) {
    return !(v > T(0) && v < Lim<T>::inf());
}

// Loads a run of N elements from shared memory aligned to the run's size (16 or 8 bytes
// or less), as vectors where the run allows.
template <int N, typename T> __device__ __forceinline__ void ld_run(const T* p, T* o) {
    constexpr int V = 16 / sizeof(T);
    if constexpr (N % V == 0) {
#pragma unroll
        for (int q = 0; q < N; q += V) ldv(p + q, o + q);
    } else if constexpr (N * sizeof(T) == 8 && sizeof(T) == 4) {
        const float2 v = *reinterpret_cast<const float2*>(p);
        o[0] = v.x; o[1] = v.y;
    } else {
#pragma unroll
        for (int q = 0; q < N; ++q) o[q] = p[q];
    }
}

// Asynchronous global → shared copies of one element (sm_80+): no registers are held
// while the loads are in flight, so a block can have all of its tile loads outstanding.
// An invalid element is zero-filled (source size 0; `src` must still be a valid address).
template <typename T>
__device__ __forceinline__ void cp_async(T* dst, const T* src, bool valid) {
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(src),
                 "n"(sizeof(T)), "r"(valid ? (int)sizeof(T) : 0));
}

// ---- rung 1: single_block -----------------------------------------------------------
// One block of 512 threads for the whole matrix, in global memory. Per k: thread 0 takes
// the pivot's square root, all threads divide column k, then each thread updates whole
// rows i of the trailing triangle (the outer i loop split across threads, as in the
// report). Reads of column k are strided by n: this is the slow rung the report starts from.
template <typename T> __device__ void chol_single_block(T* a, int n, int* info) {
    __shared__ int s_fail;
    const int tid = threadIdx.x, nt = blockDim.x;
    for (int k = 0; k < n; ++k) {
        T* akk = a + (i64)k * n + k;
        if (tid == 0) {
            const T v = *akk;
            s_fail = chol_bad_pivot(v);
            if (s_fail) chol_record(info, k, (double)v);
            else *akk = sqrt(v);
        }
        __syncthreads();
        if (s_fail) return;  // the same value in every thread
        const T d = *akk;
        for (int i = k + 1 + tid; i < n; i += nt) a[(i64)i * n + k] /= d;
        __syncthreads();
        for (int i = k + 1 + tid; i < n; i += nt) {
            T* row = a + (i64)i * n;
            const T lik = row[k];
            for (int j = k + 1; j <= i; ++j) row[j] -= lik * a[(i64)j * n + k];
        }
        __syncthreads();
    }
}

// ---- rung 2: per_step -------------------------------------------------------------
// Division (one block): square root of pivot k, column k divided by it and also copied to
// the contiguous vector `col`, so that the elimination reads it coalesced.
template <typename T> __device__ void chol_step_divide(T* a, int n, int k, T* col, int* info) {
    if (chol_failed(info)) return;
    T* akk = a + (i64)k * n + k;
    const T v = *akk;
    __syncthreads();  // every thread has the pivot before thread 0 overwrites it
    if (chol_bad_pivot(v)) {
        if (threadIdx.x == 0) chol_record(info, k, (double)v);
        return;
    }
    const T d = sqrt(v);
    if (threadIdx.x == 0) { *akk = d; col[k] = d; }
    for (int i = k + 1 + threadIdx.x; i < n; i += blockDim.x) {
        const T l = a[(i64)i * n + k] / d;
        a[(i64)i * n + k] = l;
        col[i] = l;
    }
}

// Elimination: one block per row i > k of the trailing triangle; its threads stride
// along the row (contiguous memory): a[i][j] -= l[i]·l[j] for k < j ≤ i.
template <typename T>
__device__ void chol_step_eliminate(T* a, int n, int k, const T* col, const int* info) {
    if (chol_failed(info)) return;
    const int i = k + 1 + blockIdx.x;
    const T li = col[i];
    T* row = a + (i64)i * n;
    for (int j = k + 1 + threadIdx.x; j <= i; j += blockDim.x) row[j] -= li * col[j];
}

// ---- rung 3: blocked (NB = 64) ----------------------------------------------------
// (a) The kb×kb diagonal block at k0 (kb ≤ 64), factored by one block of 256 threads with
// the tile in registers: thread (column l, row group g) holds column l's 16 elements in
// rows 16g .. 16g+15. Column j is published in shared memory (double-buffered) by its
// owners right after its last update, so each step needs one barrier: every thread reads
// the pivot, and updates its own column, branch-free (a select per element keeps the
// columns already final). Only elements with row ≥ column are ever read or stored; the
// others hold scratch. Scaling is by 1/√pivot, as LAPACK's dpotf2.
template <typename T> __device__ void chol_potrf_diag(T* a, int n, int k0, int* info) {
    constexpr int R = CHOL_NB / 4, V = 16 / sizeof(T);  // 256 threads: 4 row groups
    __shared__ __align__(16) T col[2][CHOL_NB];
    if (chol_failed(info)) return;
    const int tid = threadIdx.x, kb = min(CHOL_NB, n - k0);
    const int l = tid % CHOL_NB, g = tid / CHOL_NB, i0 = g * R;
    const int lc = min(l, kb - 1);
    T v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = min(i0 + r, kb - 1);  // clamped: every load is inside the matrix
        const T x = a[(i64)(k0 + i) * n + k0 + lc];
        v[r] = (i0 + r < kb && l <= i0 + r) ? x : T(0);
    }
    if (l == 0)
#pragma unroll
        for (int r = 0; r < R; ++r) col[0][i0 + r] = v[r];
    __syncthreads();
    T my_d = T(0), my_rd = T(0);
    for (int j = 0; j < kb; ++j) {
        const T* cj = col[j & 1];
        const T p = cj[j];
        if (chol_bad_pivot(p)) {  // the same in every thread: no thread is left at a barrier
            if (tid == 0) chol_record(info, k0 + j, (double)p);
            return;
        }
        const T d = sqrt(p), rd = T(1) / d;
        if (l == j) { my_d = d; my_rd = rd; }
        const T w = (cj[l] * rd) * rd;  // L[l][j] / √pivot
        const bool act = l > j;
        T c[R];
#pragma unroll
        for (int q = 0; q < R; q += V) ldv(&cj[i0 + q], &c[q]);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const T u = fma(-c[r], w, v[r]);  // a[i][l] -= L[i][j]·L[l][j]
            v[r] = act ? u : v[r];
        }
        if (l == j + 1)
#pragma unroll
            for (int r = 0; r < R; ++r) col[(j + 1) & 1][i0 + r] = v[r];
        __syncthreads();
    }
    // Column l is final since step l: rows below the diagonal scaled, the diagonal √pivot.
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = i0 + r;
        if (i < kb && l <= i) a[(i64)(k0 + i) * n + k0 + l] = i == l ? my_d : v[r] * my_rd;
    }
}

// (b) The panel below the diagonal block, rows k0+64 .. n-1: X·L11ᵀ = A21. A block of 256
// threads takes 64 rows, staged with L11 (transposed) in dynamic shared memory by
// coalesced asynchronous copies, and solves them with chol_trsm_rows (4 lanes a row).
//
// chol_trsm_rows: the 64 rows of xs (xs[r * LD + m]) solved in place against L11, given
// as lt[j * LD + m] = L11[m][j] and the reciprocals of its diagonal, by 64·LANES threads.
// A row is split over LANES adjacent lanes, each holding 64/LANES of its columns in
// registers. Column block b is solved by its owner lane (substitution, scaling by
// reciprocals of the diagonal as LAPACK's dtrsm), shuffled to the lanes of the later
// blocks, which subtract its contribution. L11 is read as 16-byte broadcasts.
template <typename T, int LANES, int LD>
__device__ __forceinline__ void chol_trsm_rows(const T* lt, const T* rdiag, T* xs) {
    constexpr int V = 16 / sizeof(T), CW = CHOL_NB / LANES;
    const int tid = threadIdx.x;
    const int cg = tid % LANES, lane = tid % 32, rr = tid / LANES;
    T x[CW];
#pragma unroll
    for (int q = 0; q < CW; q += V) ldv(&xs[rr * LD + cg * CW + q], &x[q]);
#pragma unroll
    for (int b = 0; b < LANES; ++b) {
        if (cg == b) {
#pragma unroll
            for (int jj = 0; jj < CW; ++jj) {
                const int j = b * CW + jj;
                x[jj] *= rdiag[j];
#pragma unroll
                for (int q = (jj + 1) / V * V; q < CW; q += V) {
                    T w[V];
                    ldv(&lt[j * LD + b * CW + q], w);
#pragma unroll
                    for (int c = 0; c < V; ++c)
                        if (q + c > jj) x[q + c] = fma(-x[jj], w[c], x[q + c]);
                }
            }
        }
        if (b == LANES - 1) break;
        T y[CW];
#pragma unroll
        for (int p = 0; p < CW; ++p) y[p] = __shfl_sync(0xffffffffu, x[p], (lane & ~(LANES - 1)) | b);
        if (cg > b) {
#pragma unroll
            for (int p = 0; p < CW; ++p) {
                const int j = b * CW + p;
#pragma unroll
                for (int q = 0; q < CW; q += V) {
                    T w[V];
                    ldv(&lt[j * LD + cg * CW + q], w);
#pragma unroll
                    for (int c = 0; c < V; ++c) x[q + c] = fma(-y[p], w[c], x[q + c]);
                }
            }
        }
    }
#pragma unroll
    for (int m = 0; m < CW; ++m) xs[rr * LD + cg * CW + m] = x[m];
}

template <typename T> __device__ void chol_trsm_panel(T* a, int n, int k0, const int* info) {
    constexpr int PAD = 16 / sizeof(T);
    constexpr int LD = CHOL_NB + PAD;
    extern __shared__ __align__(16) unsigned char chol_smem[];
    T* lt = reinterpret_cast<T*>(chol_smem);  // lt[j * LD + m] = L11[m][j]
    T* xs = lt + CHOL_NB * LD;                 // xs[r * LD + m] = A[row0 + r][k0 + m]
    T* rdiag = xs + CHOL_NB * LD;
    if (chol_failed(info)) return;
    const int tid = threadIdx.x;
    const int row0 = k0 + CHOL_NB + blockIdx.x * CHOL_NB;
    const T* l11 = a + (i64)k0 * n + k0;
#pragma unroll
    for (int e = tid; e < CHOL_NB * CHOL_NB; e += 256) {
        const int r = e / CHOL_NB, m = e % CHOL_NB;
        cp_async(&lt[m * LD + r], l11 + (i64)r * n + m, m <= r);
        const bool ok = row0 + r < n;
        cp_async(&xs[r * LD + m], ok ? a + (i64)(row0 + r) * n + k0 + m : a, ok);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    if (tid < CHOL_NB) rdiag[tid] = T(1) / lt[tid * LD + tid];
    __syncthreads();
    chol_trsm_rows<T, 4, LD>(lt, rdiag, xs);
    __syncthreads();
#pragma unroll
    for (int e = tid; e < CHOL_NB * CHOL_NB; e += 256) {
        const int r = e / CHOL_NB, m = e % CHOL_NB;
        if (row0 + r < n) a[(i64)(row0 + r) * n + k0 + m] = xs[r * LD + m];
    }
}

// (c) Trailing update C -= L21·L21ᵀ on the lower tiles of the trailing matrix (from
// k1 = k0 + 64), one block per BM×BM tile, tiles numbered row by row over the lower
// triangle (1-D grid). 256 threads as 16×16, each a TM×TM register tile whose rows (and
// columns) are two runs of TM/2, so that its shared-memory reads are 16-byte vectors
// without bank conflicts. The whole 64-deep panel of both operands is copied to shared
// memory (transposed, dynamic: 2·64·(BM+PAD) elements) with cp.async in two groups of
// 32 columns, so the first half is computed while the second arrives.
// Diagonal tiles compute the full tile but write only c ≤ r. Instantiated with 128-wide
// tiles for f32 (TM = 8) and 64-wide ones (TM = 4, `lower64`, also f64's only size): the
// host takes the small tiles when the large ones would not give every SM two blocks.
// For the look-ahead (crates/cuda/src/ops/cholesky/mod.rs) the updated region starts at
// row and column s ≥ k1 and stops before column c_end; with `strip`, the tiles are one
// column of them (tile b at (b, 0)) rather than the lower triangle.
template <typename T, int TM, bool TC = false>
__device__ void chol_syrk_lower(T* a, int n, int k0, int s, int c_end, int strip,
                                const int* info) {
    constexpr int BM = 16 * TM, H = TM / 2, PAD = 16 / sizeof(T);
    constexpr int LD = BM + PAD;
    extern __shared__ __align__(16) unsigned char chol_smem[];
    T* as = reinterpret_cast<T*>(chol_smem);  // as[p * LD + r] = A[r0 + r][k0 + p]
    T* bs = as + CHOL_NB * LD;
    if (chol_failed(info)) return;
    // tile (ti, tj), tj ≤ ti, from the lower-triangle tile number b = ti(ti+1)/2 + tj
    const long long b = blockIdx.x;
    int ti = (int)((sqrt(8.0 * (double)b + 1.0) - 1.0) * 0.5);
    while ((long long)ti * (ti + 1) / 2 > b) --ti;
    while ((long long)(ti + 1) * (ti + 2) / 2 <= b) ++ti;
    int tj = (int)(b - (long long)ti * (ti + 1) / 2);
    if (strip) {
        ti = (int)b;
        tj = 0;
    }
    const int r0 = s + ti * BM, c0 = s + tj * BM;
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    // TC: warp w computes rows rw.. (16) and columns cw.. (32) of the 64×64 tile as four
    // 16×8 DMMA fragments, acc[j][e] at (rw + g + 8·(e/2), cw + 8j + 2t + e%2) (the
    // layouts of mma.cuh's mma_f64).
    const int g = (tid % 32) / 4, t = tid % 4, rw = (tid / 64) * 16, cw = ((tid / 32) % 2) * 32;

    // a warp copies 32 consecutive panel columns of one row; 8 rows per pass
    const int lp = tid % 32, lr = tid / 32;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int p = half * 32 + lp;
        const T* ga = a + (i64)(r0 + lr) * n + k0 + p;
        const T* gb = a + (i64)(c0 + lr) * n + k0 + p;
#pragma unroll
        for (int r = lr; r < BM; r += 8) {
            const i64 off = (i64)(r - lr) * n;
            cp_async(&as[p * LD + r], r0 + r < n ? ga + off : a, r0 + r < n);
            cp_async(&bs[p * LD + r], c0 + r < n ? gb + off : a, c0 + r < n);
        }
        cp_async_commit();
    }

    T acc[TM][TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TM; ++j) acc[i][j] = T(0);

#pragma unroll
    for (int half = 0; half < 2; ++half) {
        if (half == 0) cp_async_wait<1>();
        else cp_async_wait<0>();
        __syncthreads();
        if constexpr (TC) {
#pragma unroll
            for (int p = half * 32; p < half * 32 + 32; p += 8) {
                const T af[4] = {as[(p + t) * LD + rw + g], as[(p + t) * LD + rw + g + 8],
                                 as[(p + t + 4) * LD + rw + g], as[(p + t + 4) * LD + rw + g + 8]};
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const T bf[2] = {bs[(p + t) * LD + cw + 8 * j + g],
                                     bs[(p + t + 4) * LD + cw + 8 * j + g]};
                    mma_f64(acc[j], af, bf);
                }
            }
        } else {
#pragma unroll 4
            for (int p = half * 32; p < half * 32 + 32; ++p) {
                T ra[TM], rb[TM];
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    ld_run<H>(&as[p * LD + h * (BM / 2) + ty * H], &ra[h * H]);
                    ld_run<H>(&bs[p * LD + h * (BM / 2) + tx * H], &rb[h * H]);
                }
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TM; ++j) acc[i][j] = fma(ra[i], rb[j], acc[i][j]);
            }
        }
    }
    // C tile → shared memory (the panels are no longer needed) in one asynchronous
    // batch: read-modify-write through registers would wait for each load behind the
    // previous store, since the compiler cannot tell that they never alias.
    __syncthreads();
    T* cs = as;  // cs[r * LD + c], BM × LD ≤ 2·64·LD
#pragma unroll 8
    for (int e = tid; e < BM * BM; e += 256) {
        const int r = e / BM, c = e % BM;
        const bool ok = r0 + r < n && c0 + c < n;
        cp_async(&cs[r * LD + c], ok ? a + (i64)(r0 + r) * n + c0 + c : a, ok);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    if constexpr (TC) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int lr = rw + g + 8 * (e / 2), lc = cw + 8 * j + 2 * t + e % 2;
                const int r = r0 + lr, c = c0 + lc;
                if (r < n && c <= r && c < c_end)
                    a[(i64)r * n + c] = cs[lr * LD + lc] - acc[j][e];
            }
    } else {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int lr = (i / H) * (BM / 2) + ty * H + i % H, r = r0 + lr;
            if (r >= n) continue;
            T* crow = a + (i64)r * n;
            T old[TM];
#pragma unroll
            for (int h = 0; h < 2; ++h) ld_run<H>(&cs[lr * LD + h * (BM / 2) + tx * H], &old[h * H]);
#pragma unroll
            for (int j = 0; j < TM; ++j) {
                const int c = c0 + (j / H) * (BM / 2) + tx * H + j % H;
                if (c <= r && c < c_end) crow[c] = old[j] - acc[i][j];
            }
        }
    }
}

// ---- rung 5: dataflow (f64 on DMMA, f32 on 3xTF32) ------------------------------------
// The whole factorization in one persistent kernel, left-looking over the 64×64 tiles of
// the lower triangle (nt = ⌈n/64⌉ tiles a side). Blocks take tiles from a counter, in
// an order the host gives (crates/cuda/src/ops/cholesky/mod.rs). Tile (i, j) computes
// C = A_ij − Σ_{k<j} L_ik·L_jkᵀ in registers (DMMA, the K axis streamed in chunks of 32
// through a 3-stage cp.async pipeline), taking the terms of column k once tiles (i, k)
// and (j, k) are final; then factors C (i = j) or solves X·L_jjᵀ = C once (j, j) is
// final; stores its L and marks the tile final (one flag per tile in `work`); the roles
// of the tiles next to the diagonal are at df_run_tile. A tile waits only on tiles of
// earlier tickets, which blocks that are running already hold, so it cannot deadlock,
// however many blocks are resident.
// Each tile is read and written once, and the updates read the finished tiles from L2:
// where the right-looking rungs read and write the trailing matrix once per 64 columns,
// and synchronise the whole device three times per 64 columns, this one neither.
// Sums run in a fixed order per tile (k ascending): bitwise reproducible.
// A large matrix goes in panels of tile columns, one launch each (chol_dataflow's c0, nc),
// with the trailing matrix's update from each panel between them (cholesky_update_f64,
// cholesky_update_f32): the tiles of a panel sum only its own earlier columns.
// A pivot that is not positive (or not finite) is recorded (the first one: the diagonal
// tiles are factored one after another) and replaced by 1, so that every tile still
// completes and no block waits forever; the host reports the recorded pivot.
// Flags: written after the tile's stores by thread 0 (barrier, fence, atomic); polled by
// thread 0 with relaxed loads, then a fence and a barrier before anyone reads the tile;
// every tile read is L2-only (cp.async.cg, ld.global.cg): no stale L1 line of a tile
// that was still being written when a neighbour's line was cached.
// The rows are read as 16-byte vectors: the host pads n to a leading dimension `lda` of
// whole 16-byte vectors (even for f64, a multiple of 4 for f32).
// f32 (`dataflow_3x`, opt-in): the same kernel with every product on TF32 tensor cores as
// three products (3xTF32, as mma.cuh's tc_compute: small·big + big·small + big·big, the
// sums in f32), the pivots, divisions and solves' own steps in f32.
#define DF_THREADS 128
#define DF_BK 32
#define DF_STAGES 3
#define DF_CPT (CHOL_NB / DF_BK)                  // chunks per tile column
#define DF_LDK (DF_BK + 4)                        // padded row of a stage tile
#define DF_STAGE (2 * CHOL_NB * DF_LDK)           // elements per stage: A's and B's rows
#define DF_SMEM(T) (DF_STAGES * DF_STAGE * (int)sizeof(T))  // bytes; solve and factor fit

// Per element type: the 16-byte vector's elements, the solve tiles' rows (whole vectors),
// the operand fragments of one m16n8k8 product (f64: the values, DMMA's operands; f32: the
// big and small TF32 parts of each value) and the product.
template <typename T> struct Df;
struct DfA64 { double v[4]; };
struct DfB64 { double v[2]; };
struct DfA32 { u32 hi[4], lo[4]; };
struct DfB32 { u32 hi[2], lo[2]; };
template <> struct Df<double> {
    static constexpr int V = 2, LDT = CHOL_NB + 2;
    typedef DfA64 A;
    typedef DfB64 B;
};
template <> struct Df<float> {
    static constexpr int V = 4, LDT = CHOL_NB + 4;
    typedef DfA32 A;
    typedef DfB32 B;
};
// A's fragment at p (row g, column t of the 16×8 block; leading dimension ld), B's at p
// (row g of the 8 rows of Bᵀ, column t).
__device__ __forceinline__ void df_frag(DfA64& f, const double* p, int ld) {
    f.v[0] = p[0];
    f.v[1] = p[8 * ld];
    f.v[2] = p[4];
    f.v[3] = p[8 * ld + 4];
}
__device__ __forceinline__ void df_frag(DfB64& f, const double* p, int) {
    f.v[0] = p[0];
    f.v[1] = p[4];
}
__device__ __forceinline__ void df_frag(DfA32& f, const float* p, int ld) {
    split_tf32(p[0], f.hi[0], f.lo[0]);
    split_tf32(p[8 * ld], f.hi[1], f.lo[1]);
    split_tf32(p[4], f.hi[2], f.lo[2]);
    split_tf32(p[8 * ld + 4], f.hi[3], f.lo[3]);
}
__device__ __forceinline__ void df_frag(DfB32& f, const float* p, int) {
    split_tf32(p[0], f.hi[0], f.lo[0]);
    split_tf32(p[4], f.hi[1], f.lo[1]);
}
__device__ __forceinline__ void df_product(double c[4], const DfA64& a, const DfB64& b) {
    mma_f64(c, a.v, b.v);
}
__device__ __forceinline__ void df_product(float c[4], const DfA32& a, const DfB32& b) {
    mma_tf32(c, a.lo, b.hi);
    mma_tf32(c, a.hi, b.lo);
    mma_tf32(c, a.hi, b.hi);
}
// Two neighbouring elements from L2 (p aligned to both).
__device__ __forceinline__ void df_ld2(const double* p, double& x, double& y) {
    const double2 v = __ldcg(reinterpret_cast<const double2*>(p));
    x = v.x;
    y = v.y;
}
__device__ __forceinline__ void df_ld2(const float* p, float& x, float& y) {
    const float2 v = __ldcg(reinterpret_cast<const float2*>(p));
    x = v.x;
    y = v.y;
}

__device__ __forceinline__ long long df_first(int j, int nt) {
    return (long long)j * nt - (long long)j * (j - 1) / 2;  // number of tile (j, j)
}
__device__ __forceinline__ int df_poll(const int* p) {
    int v;
    asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}
// Thread 0: waits until every column k < upto of tile rows ti and tj is final, `ready`
// being the count already seen. Flags are read 16 columns at a time; a flag not yet set
// is polled again after a pause.
__device__ __forceinline__ int df_wait_cols(const int* done, int nt, int ti, int tj, int upto,
                                            int ready) {
    const int seen = ready;
    long long spins = 0;
    while (ready < upto) {
        int f[16];
#pragma unroll
        for (int q = 0; q < 16; ++q) {
            const int k = min(ready + q, upto - 1);
            const long long base = df_first(k, nt) - k;
            f[q] = df_poll(done + base + ti) & df_poll(done + base + tj);
        }
        int got = 0;
#pragma unroll
        for (int q = 0; q < 16; ++q)
            if (got == q && ready + q < upto && f[q]) got = q + 1;
        ready += got;
        if (got == 0) {
            __nanosleep(128);
            if (++spins > (1ll << 28)) __trap();  // tens of seconds: a bug, not a wait
        }
    }
    if (ready > seen) __threadfence();
    return ready;
}
__device__ __forceinline__ void df_wait_tile(const int* flag, int want) {
    long long spins = 0;
    while (df_poll(flag) < want) {
        __nanosleep(128);
        if (++spins > (1ll << 28)) __trap();
    }
    __threadfence();
}

// The accumulator: warp w computes rows 32·(w/2).. and columns 32·(w%2).. of the tile as
// 2×4 fragments of 16×8; element (i, j, e) is at row 32(w/2) + 16i + g + 8(e/2), column
// 32(w%2) + 8j + 2t + e%2 (mma_f64's layout).
__device__ __forceinline__ void df_pos(int i, int j, int e, int& r, int& c) {
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    r = 32 * (w / 2) + 16 * i + g + 8 * (e / 2);
    c = 32 * (w % 2) + 8 * j + 2 * t + e % 2;
}

// One chunk (16 columns of K) of the tile's rows (r0..) into As and of (c0..) into Bs,
// 16-byte copies, rows past n zero-filled. `same`: B is A (a diagonal tile).
template <typename T>
__device__ __forceinline__ void df_load(T* st, const T* a, int n, int lda, int r0, int c0, int k,
                                        bool same) {
    constexpr int V = Df<T>::V;
#pragma unroll
    for (int e = threadIdx.x; e < CHOL_NB * DF_BK / V; e += DF_THREADS) {
        const int r = e / (DF_BK / V), v = V * (e % (DF_BK / V));
        cp_async16_zfill(&st[r * DF_LDK + v], a + (i64)min(r0 + r, n - 1) * lda + k + v, r0 + r < n);
        if (!same)
            cp_async16_zfill(&st[(CHOL_NB + r) * DF_LDK + v],
                             a + (i64)min(c0 + r, n - 1) * lda + k + v, c0 + r < n);
    }
}

// acc += As·Bsᵀ over K columns of 64-row operands in shared memory (leading dimension
// LD), in the accumulator layout; the K loop unrolled U times.
template <int LD, int K, int U, typename T>
__device__ __forceinline__ void df_mma(const T* As, const T* Bs, T acc[2][4][4]) {
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wm = w / 2, wn = w % 2;
#pragma unroll U
    for (int kk = 0; kk < K; kk += 8) {
        typename Df<T>::A af[2];
        typename Df<T>::B bf[4];
#pragma unroll
        for (int i = 0; i < 2; ++i) df_frag(af[i], As + (32 * wm + 16 * i + g) * LD + kk + t, LD);
#pragma unroll
        for (int j = 0; j < 4; ++j) df_frag(bf[j], Bs + (32 * wn + 8 * j + g) * LD + kk + t, LD);
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) df_product(acc[i][j], af[i], bf[j]);
    }
}

// 1/√p and √p of a positive finite pivot without the branches of the library's routines
// (on the diagonal chain, where every cycle counts): the hardware's estimate
// (rsqrt.approx, about 23 bits), refined by its residual e = 1 − p·y² (f32: one Newton
// step, y·(1 + e/2); f64: one step of third order, y·(1 + e/2 + 3e²/8), whose error ~e³ is
// below f64's rounding, in four dependent operations where two Newton steps took six),
// then √p = p·y with one correction by its residual p − s². A subnormal p (the
// estimate flushes it) takes the library's path; the branch is uniform, every lane
// holding the same pivot.
__device__ __forceinline__ double df_rsqrt_approx(double p) {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;\n" : "=d"(y) : "d"(p));
    return y;
}
__device__ __forceinline__ float df_rsqrt_approx(float p) {
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(p));
    return y;
}
template <typename T> __device__ __forceinline__ void df_root(T p, T& r, T& s) {
    const T smallest = sizeof(T) == 8 ? T(2.2250738585072014e-308) : T(1.17549435e-38f);
    if (p < smallest) {
        s = sqrt(p);
        r = T(1) / s;
        return;
    }
    T y = df_rsqrt_approx(p);
    const T e = fma(-p * y, y, T(1));
    if (sizeof(T) == 8)
        y = fma(y * e, fma(T(0.375), e, T(0.5)), y);
    else
        y = fma(T(0.5) * y, e, y);
    r = y;
    const T q = p * y;
    s = fma(T(0.5) * y, fma(-q, q, p), q);
}

// D[r][c] −= Σ_{k<16} P[r][k]·Q[c][k] on tensor cores (df_product), for r < rows (warp w
// takes rows 16w.., w < rows/16) and c < 8·nf (nf ≤ 6 fragments of 8 columns; with
// `lower`, only those not wholly above the diagonal r = c). P, Q and D in shared memory,
// leading dimension LD.
template <int LD, typename T>
__device__ __forceinline__ void df_rank16(T* D, const T* P, const T* Q, int rows, int nf,
                                          bool lower) {
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    if (16 * w >= rows) return;
    T acc[6][4] = {};
#pragma unroll
    for (int kk = 0; kk < 16; kk += 8) {
        typename Df<T>::A af;
        df_frag(af, P + (16 * w + g) * LD + kk + t, LD);
#pragma unroll
        for (int f = 0; f < 6; ++f) {
            if (f < nf && !(lower && 8 * f > 16 * w + 15)) {
                typename Df<T>::B bf;
                df_frag(bf, Q + (8 * f + g) * LD + kk + t, LD);
                df_product(acc[f], af, bf);
            }
        }
    }
#pragma unroll
    for (int f = 0; f < 6; ++f) {
        if (f < nf && !(lower && 8 * f > 16 * w + 15)) {
#pragma unroll
            for (int e = 0; e < 4; ++e)
                D[(16 * w + g + 8 * (e / 2)) * LD + 8 * f + 2 * t + e % 2] -= acc[f][e];
        }
    }
}

// One row of 16 columns solved in place against a 16×16 lower block: x·Lᵀ = row, with
// L[c2][c] at l[c2 * LD + c] and rd[c] = 1/L[c][c]. Rows of whole 16-byte vectors move a
// vector at a time.
template <int LD, typename T>
__device__ __forceinline__ void df_solve16(T* row, const T* l, const T* rd) {
    constexpr int V = Df<T>::V;
    T x[16];
#pragma unroll
    for (int c = 0; c < 16; c += V) {
        if (LD % V == 0) {
            ldv(row + c, x + c);
        } else {
#pragma unroll
            for (int v = 0; v < V; ++v) x[c + v] = row[c + v];
        }
    }
#pragma unroll
    for (int c = 0; c < 16; ++c) {
        x[c] *= rd[c];
#pragma unroll
        for (int c2 = c + 1; c2 < 16; ++c2) x[c2] = fma(-x[c], l[c2 * LD + c], x[c2]);
    }
#pragma unroll
    for (int c = 0; c < 16; c += V) {
        if (LD % V == 0) {
            stv(row + c, x + c);
        } else {
#pragma unroll
            for (int v = 0; v < V; ++v) row[c + v] = x[c + v];
        }
    }
}

// The diagonal tile at k0 (in S, S[r * LDT + c], lower part) factored in place, in
// four panels of 16 columns (rd[c] gets 1/L[c][c]). Per panel: warp 0 factors its 16×16
// diagonal block in registers (lane r holds row r; each column's multipliers reach the
// later columns through a warp-private buffer in shared memory, so the 16 pivots need no
// barrier), the threads solve the rows below it one row each, and the rest of the lower
// triangle takes the panel's rank-16 update on tensor cores (df_rank16). Padding rows
// (k0 + r ≥ n) take pivot 1. The 32 elements after rd must be free (16-byte aligned):
// in the chain's call they are the start of X's tile, stored and no longer read.
template <typename T>
__device__ void df_potrf(T* S, T* rd, int n, int k0, int base, int* info) {
    constexpr int V = Df<T>::V, LDS = Df<T>::LDT;
    const int tid = threadIdx.x, lane = tid % 32;
    T* const col = rd + CHOL_NB;  // two buffers of 16
#pragma unroll 1
    for (int p = 0; p < 4; ++p) {
        const int c0 = 16 * p;
        if (tid < 32) {
            const int r = lane & 15;  // lanes 16..31 repeat lanes 0..15
            T x[16];
#pragma unroll
            for (int c = 0; c < 16; ++c) x[c] = S[(c0 + r) * LDS + c0 + c];
            // The next pivot first: lane c + 1 updates its own diagonal element with its
            // own multiplier, so one shuffle a pivot is on the chain; the other lanes'
            // updates (the same fma for that element) follow off it.
            T piv = __shfl_sync(0xffffffffu, x[0], 0);
            // A pivot that is not positive and finite is replaced by 1 at once and recorded
            // after the panel (the first in it), off the chain.
            unsigned bad = 0;
            T badv = T(0);
#pragma unroll
            for (int c = 0; c < 16; ++c) {
                if (k0 + c0 + c >= n) piv = T(1);
                const bool b = chol_bad_pivot(piv);
                badv = b && bad == 0 ? piv : badv;
                bad |= (unsigned)b << c;
                piv = b ? T(1) : piv;
                T rs, root;
                df_root(piv, rs, root);
                const T l = x[c] * rs;  // L[r][c] for r > c
                if (c + 1 < 16) {
                    piv = __shfl_sync(0xffffffffu, fma(-l, l, x[c + 1]), c + 1);
                    // Column c of L to every lane through shared memory (two buffers, so
                    // one __syncwarp a pivot), read back as 16-byte vectors.
                    T* const cb = col + 16 * (c % 2);
                    if (lane < 16) cb[lane] = l;
                    __syncwarp();
                    T lc[16];
#pragma unroll
                    for (int v = (c + 1) / V * V; v < 16; v += V) ldv(cb + v, lc + v);
#pragma unroll
                    for (int c2 = c + 1; c2 < 16; ++c2) x[c2] = fma(-l, lc[c2], x[c2]);
                }
                x[c] = r > c ? l : (r == c ? root : T(0));
                if (lane == 0) rd[c0 + c] = rs;
            }
            if (bad != 0 && lane == 0 &&
                atomicCAS(info, -1, base + k0 + c0 + __ffs(bad) - 1) == -1)
                *reinterpret_cast<double*>(info + 2) = (double)badv;
            __syncwarp();  // lanes 16..31 have read the block too
            if (lane < 16)
#pragma unroll
                for (int c = 0; c < 16; ++c) S[(c0 + r) * LDS + c0 + c] = x[c];
        }
        __syncthreads();
        const int c1 = c0 + 16, m = CHOL_NB - c1;  // the rows below, the trailing order
        if (m == 0) break;
        if (tid < m)
            df_solve16<LDS>(S + (c1 + tid) * LDS + c0, S + c0 * LDS + c0, rd + c0);
        __syncthreads();
        // S[c1.., c1..] −= P·Pᵀ, P = S[c1.., c0..c0+16) (lower fragments only).
        df_rank16<LDS>(S + c1 * LDS + c1, S + c1 * LDS + c0, S + c1 * LDS + c0, m, m / 8, true);
        __syncthreads();
    }
}

// X·Lᵀ = C for the 64 rows of xs (xs[r * LDT + c]) in place, L lower triangular in ls
// (ls[r * LDT + c]), rd[c] = 1/L[c][c]: in four blocks of 16 columns, each solved by
// one thread a row, then subtracted from the later columns (df_rank16).
template <typename T> __device__ void df_trsm(const T* ls, const T* rd, T* xs) {
    constexpr int LDT = Df<T>::LDT;
    const int tid = threadIdx.x;
#pragma unroll 1
    for (int b = 0; b < 4; ++b) {
        const int c0 = 16 * b;
        if (tid < CHOL_NB)
            df_solve16<LDT>(xs + tid * LDT + c0, ls + c0 * LDT + c0, rd + c0);
        __syncthreads();
        const int c1 = c0 + 16;
        if (c1 == CHOL_NB) break;
        // xs[.., c1..] −= X_b·L[c1.., c0..c0+16)ᵀ, X_b = xs[.., c0..c0+16).
        df_rank16<LDT>(xs + c1, xs + c0, ls + c1 * LDT + c0, CHOL_NB, (CHOL_NB - c1) / 8, false);
        __syncthreads();
    }
}

// One tile (ti, tj) of the dataflow factorization; see above.
// C's tile at (r0, c0) into the accumulator layout (rows and columns past n read as zero;
// only the lower triangle is read: a diagonal tile's upper part is zero).
template <typename T>
__device__ __forceinline__ void df_load_c(T cin[2][4][4], const T* a, int n, int lda, int r0,
                                          int c0) {
    const bool diag = r0 == c0;
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; e += 2) {
                int r, c;
                df_pos(i, j, e, r, c);
                T x = T(0), y = T(0);
                if (r0 + r < n && c0 + c < n && !(diag && c > r))
                    df_ld2(a + (i64)(r0 + r) * lda + c0 + c, x, y);
                cin[i][j][e] = x;
                cin[i][j][e + 1] = c0 + c + 1 < n && !(diag && c + 1 > r) ? y : T(0);
            }
}

// dst (row-major, leading dimension ld) = cin − acc, in the accumulator layout.
template <typename T>
__device__ __forceinline__ void df_put(T* dst, int ld, const T cin[2][4][4], const T acc[2][4][4]) {
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                int r, c;
                df_pos(i, j, e, r, c);
                dst[r * ld + c] = cin[i][j][e] - acc[i][j][e];
            }
}

// Thread 0 waits until the flag is at least `want`; then the block may read the tile.
__device__ __forceinline__ void df_await(const int* flag, int want) {
    if (threadIdx.x == 0) df_wait_tile(flag, want);
    __syncthreads();
}

// Thread 0 sets the flag once every thread's stores of the tile are done.
__device__ __forceinline__ void df_publish(int* flag, int value) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicExch(flag, value);
    }
}

// The factored diagonal tile in S (row-major, LDT) stored at (k0, k0): whole rows, a
// thread V neighbours, the strict upper part too (never read: every read of a diagonal
// tile takes its lower part; the host zeroes it at the end), none from column n on (V
// neighbours there could pass the row's end). As 16-byte vectors the f32 kernel spilled.
template <typename T>
__device__ __forceinline__ void df_store_diag(T* a, int n, int lda, int k0, const T* S) {
    constexpr int V = Df<T>::V, LDS = Df<T>::LDT;
    for (int e = threadIdx.x; e < CHOL_NB * CHOL_NB / V; e += DF_THREADS) {
        const int r = e / (CHOL_NB / V), c = V * (e % (CHOL_NB / V));
        if (k0 + r < n && k0 + c < n) {
#pragma unroll
            for (int v = 0; v < V; ++v) a[(i64)(k0 + r) * lda + k0 + c + v] = S[r * LDS + c + v];
        }
    }
}

// One tile (ti, tj) of the dataflow factorization. Flags: an off-diagonal tile is 1 once
// final; a diagonal tile is 1 once its partial sum (every column but the last) is stored
// in its place and 2 once final. The roles:
//   (0, 0)       factored by its own block;
//   (j, j), j>0  the partial sum C − Σ_{k<j−1} L_jk·L_jkᵀ, stored in place;
//   (j+1, j)     solved, then it finishes (j+1, j+1) from that tile's partial sum and
//                its own solution X (−X·Xᵀ from shared memory), and factors it: the
//                chain diagonal → solve → diagonal runs in one block, without a round
//                trip through memory and flags;
//   others       solved.
// The host orders the tickets so that a tile waits only on tiles of earlier tickets.
template <typename T>
__device__ void df_run_tile(T* a, int n, int lda, int nt, int nc, int base, int ti, int tj,
                            int* done, int* info, T* sm) {
    constexpr int LDT = Df<T>::LDT, V = Df<T>::V;
    const int tid = threadIdx.x, r0 = ti * CHOL_NB, c0 = tj * CHOL_NB;
    const bool diag = ti == tj;
    const int w = tid / 32;
    int* flag = done + df_first(tj, nt) + (ti - tj);
    T acc[2][4][4], cin[2][4][4];
    df_load_c(cin, a, n, lda, r0, c0);
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = T(0);
    const int cols = diag ? max(tj - 1, 0) : tj;  // columns of L summed here
    const int nk = cols * DF_CPT;                // chunks of K
    const bool skip = diag && (w / 2) < (w % 2);  // the warp above the diagonal
    int ready = 0;
    if (nk > 0) {
        if (tid == 0) ready = df_wait_cols(done, nt, ti, tj, 1, ready);
        __syncthreads();
    }
#pragma unroll
    for (int s = 0; s < DF_STAGES - 1; ++s) {
        if (s < nk)
            df_load(sm + s * DF_STAGE, a, n, lda, r0, c0, s * DF_BK, diag);
        cp_async_commit();
    }
    for (int q = 0; q < nk; ++q) {
        const int nq = q + DF_STAGES - 1;
        if (tid == 0 && nq < nk) ready = df_wait_cols(done, nt, ti, tj, nq / DF_CPT + 1, ready);
        cp_async_wait<DF_STAGES - 2>();
        __syncthreads();
        if (nq < nk)
            df_load(sm + (nq % DF_STAGES) * DF_STAGE, a, n, lda, r0, c0, nq * DF_BK, diag);
        cp_async_commit();
        const T* st = sm + (q % DF_STAGES) * DF_STAGE;
        // A diagonal tile skips the warp above the diagonal.
        if (!skip) df_mma<DF_LDK, DF_BK, DF_BK / 8>(st, diag ? st : st + CHOL_NB * DF_LDK, acc);
    }
    cp_async_wait<0>();
    __syncthreads();  // the stages are free
    if (diag && tj > 0) {  // the partial sum, in place (A itself where no column is summed)
        if (nk > 0) {
            df_put(sm, LDT, cin, acc);
            __syncthreads();
            df_store_diag(a, n, lda, r0, sm);
        }
        df_publish(flag, 1);
    } else if (diag) {  // (0, 0)
        T* S = sm;
        T* rd = sm + CHOL_NB * LDT;
        df_put(S, LDT, cin, acc);
        __syncthreads();
        df_potrf(S, rd, n, r0, base, info);
        df_store_diag(a, n, lda, r0, S);
        df_publish(flag, 2);
    } else {
        T* ls = sm;                  // ls[r * LDT + c] = L_jj[r][c]
        T* xs = ls + CHOL_NB * LDT;  // xs[r * LDT + c] = C[r][c]
        T* rd = xs + CHOL_NB * LDT;
        df_put(xs, LDT, cin, acc);
        const bool chain = ti == tj + 1 && ti < nc;
        if (chain) {  // the next diagonal tile's partial sum, into cin
            df_await(done + df_first(ti, nt), 1);
            df_load_c(cin, a, n, lda, r0, r0);
        }
        df_await(done + df_first(tj, nt), 2);
        // L_jj's whole rows (the solve reads only its lower part).
        const T* ljj = a + (i64)c0 * lda + c0;
        for (int e = tid; e < CHOL_NB * CHOL_NB / V; e += DF_THREADS) {
            const int r = e / (CHOL_NB / V), c = V * (e % (CHOL_NB / V));
            cp_async16(&ls[r * LDT + c], ljj + (i64)r * lda + c);
        }
        cp_async_wait_all();
        __syncthreads();
        if (tid < CHOL_NB) rd[tid] = T(1) / ls[tid * LDT + tid];
        __syncthreads();
        df_trsm(ls, rd, xs);
        __syncthreads();
        // X as 16-byte vectors (xs's rows and a's are whole vectors; an off-diagonal
        // tile's 64 columns all lie below n).
        for (int e = tid; e < CHOL_NB * CHOL_NB / V; e += DF_THREADS) {
            const int r = e / (CHOL_NB / V), c = V * (e % (CHOL_NB / V));
            if (r0 + r < n) {
                T v[V];
                ldv(xs + r * LDT + c, v);
                stv(a + (i64)(r0 + r) * lda + c0 + c, v);
            }
        }
        if (!chain) {
            df_publish(flag, 1);
        } else {
            // (ti, ti) = its partial sum − X·Xᵀ, X = L(ti, tj) in xs; then factored. X's
            // flag is set by warp 3 while warp 0 starts the factorization.
            const int wm = w / 2, wn = w % 2;
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[i][j][e] = T(0);
            if (wm >= wn) df_mma<LDT, CHOL_NB, 2>(xs, xs, acc);
            T* S = ls;  // free since the solve: S is ls's place, rd and col follow it
            T* rdd = ls + CHOL_NB * LDT;  // X's tile, no longer read
            df_put(S, LDT, cin, acc);
            __syncthreads();  // X stored, S complete
            if (tid == DF_THREADS - 32) {
                __threadfence();
                atomicExch(flag, 1);
            }
            df_potrf(S, rdd, n, r0, base, info);
            df_store_diag(a, n, lda, r0, S);
            df_publish(done + df_first(ti, nt), 2);
        }
    }
}

// The panel of the trailing matrix a[c0.., c0..] (n − c0 rows and columns) made of its
// first nc tile columns: its tiles (i, j), j < nc, factored (the diagonal ones) or solved
// against their diagonal tile, their updates from the panel's own earlier columns only
// (the columns left of c0 are already subtracted: cholesky_update). The whole matrix is
// one panel (c0 = 0, nc = nt). A pivot is recorded by its row in the whole matrix.
// work: [0] the ticket counter, [1..] one flag per tile, all zero on entry; order[t]:
// the tile of ticket t (row | column << 16), `tiles` tickets.
template <typename T>
__device__ void chol_dataflow(T* a, int n, int lda, int c0, int nc, int tiles, int* work,
                              const unsigned* order, int* info) {
    extern __shared__ __align__(16) unsigned char chol_smem[];
    T* sm = reinterpret_cast<T*>(chol_smem);
    __shared__ int s_ticket;
    a += (i64)c0 * lda + c0;
    n -= c0;
    const int nt = (n + CHOL_NB - 1) / CHOL_NB;
    for (;;) {
        if (threadIdx.x == 0) s_ticket = atomicAdd(work, 1);
        __syncthreads();
        const int t = s_ticket;
        if (t >= tiles) return;
        const unsigned o = order[t];
        df_run_tile(a, n, lda, nt, nc, c0, (int)(o & 0xffffu), (int)(o >> 16), work + 1, info,
                    sm);
        __syncthreads();  // s_ticket is read by every thread before thread 0 takes the next
    }
}

// ---- solves with the factor: L·Y = B, then Lᵀ·X = Y (B is n×nrhs, in place) --------
// The 64-row diagonal blocks of a solve are applied as products with their inverses, so
// that no kernel of the solve steps through rows one barrier at a time:
// chol_invert_diag inverts every 64×64 diagonal block of L at once (one block of threads
// each), and chol_solve_leaf solves up to 256 rows of B with them, in place. The rest of
// a solve is GEMM updates (crates/cuda/src/ops/cholesky/solve.rs).

// D_b = L_bb⁻¹ for diagonal block b (rows [64b, 64b + rb)), stored 64×64 row-major at
// inv + b·64²: lower triangular, zero above the diagonal, the identity on the rows and
// columns past rb. Thread j computes column j by forward substitution, summing in a
// fixed order, reading back the elements of its column it has already written.
template <typename T> __device__ void chol_invert_diag(const T* l, int n, T* inv) {
    __shared__ T ls[CHOL_NB][CHOL_NB + 1];
    const int tid = threadIdx.x, r0 = blockIdx.x * CHOL_NB, rb = min(CHOL_NB, n - r0);
    for (int e = tid; e < CHOL_NB * CHOL_NB; e += blockDim.x) {
        const int r = e / CHOL_NB, c = e % CHOL_NB;
        ls[r][c] = (r < rb && c <= r) ? l[(i64)(r0 + r) * n + r0 + c] : T(r == c);
    }
    __syncthreads();
    T* d = inv + (i64)blockIdx.x * CHOL_NB * CHOL_NB;
    if (tid < CHOL_NB) {
        const int j = tid;
        for (int i = 0; i < CHOL_NB; ++i) {
            T x = T(0);
            if (i >= j) {
                x = T(i == j);
                for (int k = j; k < i; ++k) x -= ls[i][k] * d[k * CHOL_NB + j];
                x /= ls[i][i];
            }
            d[i * CHOL_NB + j] = x;
        }
    }
}

// The bottom of a solve: rows [r0, r0 + len) of B (r0 a multiple of 64, len ≤ 256, so at
// most 4 diagonal blocks), solved in place by one kernel, one block of threads per
// LeafCfg::CB columns. The block holds its slab of B in shared memory and steps through
// the diagonal blocks in order (backwards going back): X_i = op(D_i)·B_i, then
// B_j −= op(L)_ji·X_i for the blocks j still to come, one 64×64 operand (an inverse, or
// a block of L, transposed going back) in shared memory at a time. Below this size the
// GEMMs of the recursion would be too small to fill the device.
#define LEAF_BLOCKS 4
template <typename T> struct LeafCfg;
template <> struct LeafCfg<float> { static const int CB = 16; };
template <> struct LeafCfg<double> { static const int CB = 4; };  // 48 KB of shared memory

// Row r of the operand in shared memory times column c of the slab's block i.
template <typename T, int CB>
__device__ __forceinline__ T leaf_dot(const T (*ms)[CHOL_NB + 1], const T (*bs)[CB + 1], int r,
                                      int i, int c) {
    T acc = T(0);
#pragma unroll
    for (int m = 0; m < CHOL_NB; ++m) acc += ms[r][m] * bs[i * CHOL_NB + m][c];
    return acc;
}

template <typename T, bool BACK>
__device__ void chol_solve_leaf(const T* l, int n, const T* inv, T* b, int nrhs, int r0,
                                int len) {
    constexpr int CB = LeafCfg<T>::CB, THREADS = 256, GROUPS = THREADS / CB;
    constexpr int RPT = CHOL_NB / GROUPS;  // rows of a 64-row block per thread
    __shared__ T ms[CHOL_NB][CHOL_NB + 1];
    __shared__ T bs[LEAF_BLOCKS * CHOL_NB][CB + 1];
    const int tid = threadIdx.x, c0 = blockIdx.x * CB, c = tid % CB, g = tid / CB;
    const int nb = (len + CHOL_NB - 1) / CHOL_NB;
    for (int e = tid; e < LEAF_BLOCKS * CHOL_NB * CB; e += THREADS) {
        const int r = e / CB, cc = e % CB;
        bs[r][cc] = (r < len && c0 + cc < nrhs) ? b[(i64)(r0 + r) * nrhs + c0 + cc] : T(0);
    }
    for (int s = 0; s < nb; ++s) {
        const int i = BACK ? nb - 1 - s : s;
        // ms = op(D_i): D_i is lower triangular, the identity past the matrix's end.
        const T* d = inv + (i64)(r0 / CHOL_NB + i) * CHOL_NB * CHOL_NB;
        __syncthreads();  // the previous operand and the slab's last writes are done
        for (int e = tid; e < CHOL_NB * CHOL_NB; e += THREADS) {
            const int r = e / CHOL_NB, m = e % CHOL_NB;
            if (BACK) ms[m][r] = d[e];
            else ms[r][m] = d[e];
        }
        __syncthreads();
        T x[RPT];
#pragma unroll
        for (int q = 0; q < RPT; ++q) x[q] = leaf_dot<T, CB>(ms, bs, g + q * GROUPS, i, c);
        __syncthreads();  // every thread has read B_i
#pragma unroll
        for (int q = 0; q < RPT; ++q) bs[i * CHOL_NB + g + q * GROUPS][c] = x[q];
        const int j0 = BACK ? 0 : i + 1, j1 = BACK ? i : nb;
        for (int j = j0; j < j1; ++j) {
            // ms = op(L)_ji: L[j][i] forward (rows of block j, columns of block i); going
            // back (Lᵀ)_ji = L[i][j]ᵀ. Rows past the slab's end read as zero.
            const int lr = r0 + (BACK ? i : j) * CHOL_NB, lc = r0 + (BACK ? j : i) * CHOL_NB;
            __syncthreads();  // X_i is stored and the previous operand read
            for (int e = tid; e < CHOL_NB * CHOL_NB; e += THREADS) {
                const int r = e / CHOL_NB, m = e % CHOL_NB;
                const T v = lr + r < r0 + len ? l[(i64)(lr + r) * n + lc + m] : T(0);
                if (BACK) ms[m][r] = v;
                else ms[r][m] = v;
            }
            __syncthreads();
#pragma unroll
            for (int q = 0; q < RPT; ++q) {
                const int r = g + q * GROUPS;
                bs[j * CHOL_NB + r][c] -= leaf_dot<T, CB>(ms, bs, r, i, c);
            }
        }
    }
    __syncthreads();
    for (int e = tid; e < len * CB; e += THREADS) {
        const int r = e / CB, cc = e % CB;
        if (c0 + cc < nrhs) b[(i64)(r0 + r) * nrhs + c0 + cc] = bs[r][cc];
    }
}

// ---- entry points ---------------------------------------------------------------------
#define CHOL_KERNELS(T, S, TM)                                                              \
    extern "C" __global__ void __launch_bounds__(512)                                       \
        cholesky_single_block_##S(T* a, int n, int* info) { chol_single_block<T>(a, n, info); } \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        cholesky_step_divide_##S(T* a, int n, int k, T* col, int* info) {                  \
        chol_step_divide<T>(a, n, k, col, info);                                            \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) cholesky_step_eliminate_##S(         \
        T* a, int n, int k, const T* col, const int* info) {                               \
        chol_step_eliminate<T>(a, n, k, col, info);                                         \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        cholesky_potrf_diag_##S(T* a, int n, int k0, int* info) {                          \
        chol_potrf_diag<T>(a, n, k0, info);                                                 \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        cholesky_trsm_panel_##S(T* a, int n, int k0, const int* info) {                    \
        chol_trsm_panel<T>(a, n, k0, info);                                                 \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256, 2)                                    \
        cholesky_syrk_lower_##S(T* a, int n, int k0, int s, int c_end, int strip,          \
                                const int* info) {                                          \
        chol_syrk_lower<T, TM>(a, n, k0, s, c_end, strip, info);                            \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        cholesky_syrk_lower64_##S(T* a, int n, int k0, int s, int c_end, int strip,        \
                                  const int* info) {                                        \
        chol_syrk_lower<T, 4>(a, n, k0, s, c_end, strip, info);                             \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        cholesky_invert_diag_##S(const T* l, int n, T* inv) { chol_invert_diag<T>(l, n, inv); } \
    extern "C" __global__ void __launch_bounds__(256) cholesky_solve_leaf_fwd_##S(         \
        const T* l, int n, const T* inv, T* b, int nrhs, int r0, int len) {                 \
        chol_solve_leaf<T, false>(l, n, inv, b, nrhs, r0, len);                             \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) cholesky_solve_leaf_bwd_##S(         \
        const T* l, int n, const T* inv, T* b, int nrhs, int r0, int len) {                 \
        chol_solve_leaf<T, true>(l, n, inv, b, nrhs, r0, len);                              \
    }

CHOL_KERNELS(float, f32, 8)
CHOL_KERNELS(double, f64, 4)

// The tensor_core variant's trailing update (f64, sm_80 and later; the host launches it
// on no other device): chol_syrk_lower's 64×64 tiles with the products on FP64 tensor
// cores (DMMA, IEEE double arithmetic), each output summed in a fixed order.
extern "C" __global__ void __launch_bounds__(256)
    cholesky_syrk_lower_tc_f64(double* a, int n, int k0, int s, int c_end, int strip,
                               const int* info) {
    chol_syrk_lower<double, 4, true>(a, n, k0, s, c_end, strip, info);
}

// The dataflow rung (f64 on DMMA, f32 on 3xTF32; sm_80 and later): DF_SMEM(T) bytes of
// dynamic shared memory, DF_THREADS threads, any number of blocks.
// (T* a, int n, int lda, int c0, int nc, int tiles, int* work, const unsigned* order,
// int* info).
extern "C" __global__ void __launch_bounds__(DF_THREADS)
    cholesky_dataflow_f64(double* a, int n, int lda, int c0, int nc, int tiles, int* work,
                          const unsigned* order, int* info) {
    chol_dataflow<double>(a, n, lda, c0, nc, tiles, work, order, info);
}
extern "C" __global__ void __launch_bounds__(DF_THREADS)
    cholesky_dataflow_f32(float* a, int n, int lda, int c0, int nc, int tiles, int* work,
                          const unsigned* order, int* info) {
    chol_dataflow<float>(a, n, lda, c0, nc, tiles, work, order, info);
}

// The dataflow rung's update between panels (f64, sm_80 and later): the trailing matrix
// C = a[c1.., c1..] (m = n − c1 rows and columns) less L·Lᵀ, L = a[c1.., c0..c1) the
// panel's rows below it, on the lower 128×128 tiles of C (upper_tile's numbering,
// transposed), each as two blocks of 128×64: the GEMM ladder's DMMA kernel (mma.cuh,
// gemm_tc with B = L given as its rows) with alpha = −1, beta = 1. The part of a diagonal
// tile above the diagonal is updated too (the dataflow kernel reads no strict upper part;
// the host zeroes it at the end). The host gives L's rows as whole 16-byte chunks (c0, c1
// and lda even). Each output is summed in a fixed order. TC_SMEM_BT bytes
// of dynamic shared memory, Tc<double>::THREADS threads.
extern "C" __global__ void __launch_bounds__(128, 2)
    cholesky_update_f64(double* a, int n, int lda, int c0, int c1) {
    int bi, bj;
    upper_tile(blockIdx.x / 2, bj, bi);  // bi ≥ bj
    const double* L = a + (i64)c1 * lda + c0;
    gemm_tc<double, 3, false, true, false, true>(n - c1, n - c1, c1 - c0, -1.0, L, L, 1.0,
                                                 a + (i64)c1 * lda + c1, bi,
                                                 2 * bj + blockIdx.x % 2, lda, lda, lda);
}

// The f32 update (dataflow_3x) on 3xTF32: gemm_tc's MODE 3 on the lower 128×128 tiles of
// C, one block each (256 threads, TC_SMEM(float) bytes), with B = Lᵀ materialised first
// by cholesky_panel_t_f32 (K × ldt, ldt = m rounded up to whole 16-byte vectors, zero
// from column m on, so that the columns of C from m to ldt, the padding of a's rows, take
// nothing). The host gives lda a multiple of 4.
extern "C" __global__ void __launch_bounds__(256)
    cholesky_update_f32(float* a, int n, int lda, int c0, int c1, const float* lt, int ldt) {
    int bi, bj;
    upper_tile(blockIdx.x, bj, bi);  // bi ≥ bj
    gemm_tc<float, 3, false, false, false, true>(n - c1, ldt, c1 - c0, -1.0f,
                                                 a + (i64)c1 * lda + c0, lt, 1.0f,
                                                 a + (i64)c1 * lda + c1, bi, bj, lda, ldt, lda);
}

// lt = (a[c1.., c0..c1))ᵀ, K × ldt with K = c1 − c0 (a multiple of 32), zero from column
// m = n − c1 on: 32×32 tiles through shared memory, 32×8 threads, grid (ldt/32 rounded up,
// K/32).
extern "C" __global__ void __launch_bounds__(256)
    cholesky_panel_t_f32(const float* a, int n, int lda, int c0, int c1, float* lt, int ldt) {
    __shared__ float t[32][33];
    const int r0 = blockIdx.x * 32, k0 = blockIdx.y * 32, m = n - c1;
    for (int y = threadIdx.y; y < 32; y += 8) {
        const int r = r0 + y;
        t[y][threadIdx.x] = r < m ? a[(i64)(c1 + r) * lda + c0 + k0 + threadIdx.x] : 0.0f;
    }
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += 8) {
        const int r = r0 + threadIdx.x;
        if (r < ldt) lt[(i64)(k0 + y) * ldt + r] = t[threadIdx.x][y];
    }
}

// The IEEE f32 default (`dataflow`) factors an f32 matrix in f64 on the dataflow kernel:
// cholesky_widen_f32 copies the lower triangle of s (n×n, rows lds apart) into d (rows
// ldd apart), cholesky_narrow_f32 rounds it back (lower triangle; the host zeroes the
// upper one). A 2-D grid-stride loop, a row's elements to consecutive threads.
template <typename S, typename D>
__device__ __forceinline__ void chol_convert_lower(const S* s, int n, int lds, D* d, int ldd) {
    for (int i = blockIdx.y; i < n; i += gridDim.y)
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j <= i; j += gridDim.x * blockDim.x)
            d[(i64)i * ldd + j] = (D)s[(i64)i * lds + j];
}
extern "C" __global__ void __launch_bounds__(256)
    cholesky_widen_f32(const float* s, int n, int lds, double* d, int ldd) {
    chol_convert_lower(s, n, lds, d, ldd);
}
extern "C" __global__ void __launch_bounds__(256)
    cholesky_narrow_f32(const double* s, int n, int lds, float* d, int ldd) {
    chol_convert_lower(s, n, lds, d, ldd);
}
