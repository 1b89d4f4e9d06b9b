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
// coalesced asynchronous copies. A row is split over 4 adjacent lanes, each holding 16 of
// its columns in registers. Column block b is solved by its owner lane (substitution,
// scaling by reciprocals of the diagonal as LAPACK's dtrsm), shuffled to the lanes of the
// later blocks, which subtract its contribution. L11 is read as 16-byte broadcasts.
template <typename T> __device__ void chol_trsm_panel(T* a, int n, int k0, const int* info) {
    constexpr int PAD = 16 / sizeof(T), V = 16 / sizeof(T), CW = CHOL_NB / 4;
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
    const int cg = tid % 4, lane = tid % 32, rr = tid / 4;
    T x[CW];
#pragma unroll
    for (int q = 0; q < CW; q += V) ldv(&xs[rr * LD + cg * CW + q], &x[q]);
#pragma unroll
    for (int b = 0; b < 4; ++b) {
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
        if (b == 3) break;
        T y[CW];
#pragma unroll
        for (int p = 0; p < CW; ++p) y[p] = __shfl_sync(0xffffffffu, x[p], (lane & ~3) | b);
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

// Zeroes the strict upper triangle (never read, so it may hold anything on entry).
template <typename T> __device__ void chol_zero_upper(T* a, int n) {
    for (int i = blockIdx.y; i < n; i += gridDim.y)
        for (int j = i + 1 + blockIdx.x * blockDim.x + threadIdx.x; j < n;
             j += gridDim.x * blockDim.x)
            a[(i64)i * n + j] = T(0);
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
        cholesky_zero_upper_##S(T* a, int n) { chol_zero_upper<T>(a, n); }                  \
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
