// kmeans.cu: Lloyd's k-means on row-major data (x: N×D points, c: K×D centroids).
//
//   atomic  report 000: one thread per point finds its nearest centroid by direct
//           differences; atomicAdd of the point into centroid sums and counts; a division
//           kernel on the device; membership changes counted with atomics. Float atomics
//           make the sums' order, hence their rounding, vary from run to run.
//   fused   distances as ‖c‖² − 2·x·c over 128-point × 128-centroid tiles staged in shared
//           memory, fused with the argmin (no N×K matrix is written); centroid sums per
//           block in shared memory, combined in a fixed order: bitwise reproducible.
//
// The fused assignment writes per-block partials (inertia, changed) that
// kmeans_stats_sum_f64 adds in a fixed order into two doubles, the one read-back per
// iteration (the atomic rung adds them with atomics instead). Labels are int32; on entry
// they hold the previous labels (-1 for none).
// Times per iteration on the H200 are in docs/kernels.md.
#include "kmeans.cuh"

// stats[0] = Σ inertia, stats[1] = Σ changed over nblocks per-block pairs, by one block
// of 256 threads: each thread a strided run, then a fixed tree. Every thread of the block
// must call it.
__device__ __forceinline__ void km_stats_sum(const double* block_stats, int nblocks, double* stats) {
    __shared__ double si[256], sc[256];
    double a = 0, b = 0;
    for (int i = threadIdx.x; i < nblocks; i += 256) {
        a += __ldcg(block_stats + 2 * i);
        b += __ldcg(block_stats + 2 * i + 1);
    }
    si[threadIdx.x] = a;
    sc[threadIdx.x] = b;
    __syncthreads();
    for (int s = 128; s; s >>= 1) {
        if (threadIdx.x < s) {
            si[threadIdx.x] += si[threadIdx.x + s];
            sc[threadIdx.x] += sc[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) { stats[0] = si[0]; stats[1] = sc[0]; }
}

extern "C" __global__ void __launch_bounds__(256)
    kmeans_stats_sum_f64(const double* block_stats, int nblocks, double* stats) {
    km_stats_sum(block_stats, nblocks, stats);
}

// ---- rung 1: atomic (report 000) ---------------------------------------------------
// One thread per point, all K centroids by direct differences from global memory (the
// report's 8-way unrolled inner loop). Membership changes and inertia are added into
// stats[0..2) with atomics, once per warp.
template <typename T, bool WEIGHTED>
__device__ void km_assign_direct(const T* x, const T* c, const T* w, int n, int k, int d,
                                 int* labels, double* stats) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double dist = 0, changed = 0;
    if (i < n) {
        const T* xi = x + (i64)i * d;
        T best = Lim<T>::inf();
        int bi = 0;
        for (int j = 0; j < k; ++j) {
            const T* cj = c + (i64)j * d;
            T s = T(0);
#pragma unroll 8
            for (int t = 0; t < d; ++t) {
                const T df = xi[t] - cj[t];
                s = fma(df, df, s);
            }
            if (s < best) { best = s; bi = j; }
        }
        changed = labels[i] != bi;
        labels[i] = bi;
        dist = WEIGHTED ? (double)best * (double)w[i] : (double)best;
    }
    for (int off = 16; off; off >>= 1) {
        dist += __shfl_xor_sync(KM_FULL, dist, off);
        changed += __shfl_xor_sync(KM_FULL, changed, off);
    }
    if (threadIdx.x % 32 == 0) {
        atomicAdd(stats, dist);
        atomicAdd(stats + 1, changed);
    }
}

// Thread per point: its coordinates and a count of one, added into the centroid sums
// with atomics (report 000's update_newCluster_newClusterSize). WEIGHTED: w·x and w
// (C = T), in whatever order the atomics land.
template <typename T, typename C, bool WEIGHTED>
__device__ void km_accumulate_atomic(const T* x, const int* labels, const T* w, int n, int d,
                                     T* sums, C* counts) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int j = labels[i];
    const T wi = WEIGHTED ? w[i] : T(1);
    atomicAdd(counts + j, WEIGHTED ? (C)wi : (C)1);
    const T* xi = x + (i64)i * d;
    T* sj = sums + (i64)j * d;
    for (int t = 0; t < d; ++t) atomicAdd(sj + t, WEIGHTED ? wi * xi[t] : xi[t]);
}

// Thread per centroid coordinate: the mean, or the old value for a cluster of no
// points (of no weight).
template <typename T, typename C>
__device__ void km_divide(const T* sums, const C* counts, int k, int d, T* c) {
    const i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (i64)k * d) return;
    const C cnt = counts[e / d];
    if (cnt > C(0)) c[e] = sums[e] / (T)cnt;
}

// ---- rung 2: fused ----------------------------------------------------------------
// ‖c_j − c_0‖² per centroid, one thread each, in order (deterministic): the norms of the
// centroids shifted by the first one (see km_assign_fused).
template <typename T> __device__ void km_centroid_norms(const T* c, int k, int d, T* cnorm) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < k) cnorm[j] = km_norm(c, j, d);
}

// Points and centroids are shifted by the first centroid, c_0, as they are staged: the
// distances are the same, and the scores ‖c − c_0‖² − 2·(x − c_0)·(c − c_0) then lose no
// accuracy to an offset that all the data share (the unshifted form's rounding grows
// with ‖x‖·‖c‖, not with the distances).
// Block tile: BP = 16·TP points × BC = 16·TC centroids, the dimension staged BD = 16 at a
// time (transposed, padded: conflict-free stores, 16-byte reads). 256 threads as 16×16;
// a thread owns TP points × TC centroids (each as two runs of half, so its shared reads
// are 16-byte vectors) and keeps, per point, the best score ‖c‖² − 2·x·c and its index
// across centroid tiles, in increasing index order (strict < keeps the lowest on ties).
// The 16 threads sharing points then reduce (score, index) with shuffles, and for the
// winner recompute ‖x − c‖² by direct differences (km_direct: the inertia, exact to
// rounding). Each point's label, distance and change go to per-point arrays
// (km_settle), which kmeans_point_stats sums in a fixed order.
// The points are rows 0..n−1, or, with LIST, the rows list[0..*count) (the near ties that
// the tensor-core assignment leaves to this one); blocks stride over the tiles.
#define KM_BD 16
// The fused rung's arithmetic, which its list kernel repeats bit for bit. A 16 × 16 block
// of threads covers 16·TP points × 16·TC centroids; thread (tp, tc) owns points
// km_point_of(i, tp) and centroids km_centroid_of(j, tc), each as two runs of half, so
// that its shared reads are 16-byte vectors.
template <int TP> __device__ __forceinline__ int km_point_of(int i, int tp) {
    return (i / (TP / 2)) * (8 * TP) + tp * (TP / 2) + i % (TP / 2);
}
template <int TC> __device__ __forceinline__ int km_centroid_of(int j, int tc) {
    return (j / (TC / 2)) * (8 * TC) + tc * (TC / 2) + j % (TC / 2);
}
// One dimension of the dot products: acc[i][j] += x[i]·c[j] (xt, ct: that dimension's
// transposed rows of the point and centroid tiles, shifted by c_0).
template <typename T, int TP, int TC>
__device__ __forceinline__ void km_fma_step(const T* xt, const T* ct, int tp, int tc, T (&acc)[TP][TC]) {
    constexpr int V = 16 / sizeof(T), HP = TP / 2, HC = TC / 2;
    T a[TP], b[TC];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int q = 0; q < HP; q += V) ldv(&xt[h * (8 * TP) + tp * HP + q], &a[h * HP + q]);
#pragma unroll
        for (int q = 0; q < HC; q += V) ldv(&ct[h * (8 * TC) + tc * HC + q], &b[h * HC + q]);
    }
#pragma unroll
    for (int i = 0; i < TP; ++i)
#pragma unroll
        for (int j = 0; j < TC; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
}
// One point's scores ‖c‖² − 2·x·c over the thread's centroids of the tile at c0 (cn: the
// tile's norms), in increasing index order, into its running best (strict <: the lowest
// index on ties; NaN never wins).
template <typename T, int TC>
__device__ __forceinline__ void km_best_of_row(const T (&acc)[TC], const T* cn, int c0, int k, int tc,
                                               T& best, int& bi) {
#pragma unroll
    for (int j = 0; j < TC; ++j) {
        const int q = km_centroid_of<TC>(j, tc);
        const T s = fma(T(-2), acc[j], cn[q]);
        if (c0 + q < k && s < best) { best = s; bi = c0 + q; }
    }
}
// The best (score, index) of the 16 lanes that share a point (ties → the lowest index).
template <typename T> __device__ __forceinline__ void km_argmin16(T& best, int& bi) {
    for (int off = 8; off; off >>= 1) {
        const T os = __shfl_xor_sync(KM_FULL, best, off);
        const int oi = __shfl_xor_sync(KM_FULL, bi, off);
        if (os < best || (os == best && oi < bi)) { best = os; bi = oi; }
    }
}
template <typename T, int TP, int TC, bool LIST>
__device__ void km_assign_fused(const T* __restrict__ x, const T* __restrict__ c,
                                const T* __restrict__ cnorm, int n, int k, int d,
                                const int* __restrict__ list, const int* __restrict__ count,
                                int* __restrict__ labels, T* __restrict__ pdist,
                                unsigned char* __restrict__ pchg) {
    constexpr int BP = 16 * TP, BC = 16 * TC;
    constexpr int PAD = 16 / sizeof(T);
    __shared__ __align__(16) T xs[KM_BD][BP + PAD];
    __shared__ __align__(16) T cs[KM_BD][BC + PAD];
    __shared__ T cn[BC];
    __shared__ i64 prow[BP];
    // The running best per point lives in shared memory between centroid tiles: in
    // registers it would push the 8×8 f32 tile past 128 registers.
    __shared__ T sbest[TP][256];
    __shared__ int sbi[TP][256];
    const int tid = threadIdx.x, tc = tid % 16, tp = tid / 16;
    const int total = LIST ? *count : n;

    for (int p0 = blockIdx.x * BP; p0 < total; p0 += gridDim.x * BP) {
        __syncthreads();  // the previous tile's rows are no longer read
        if (LIST)
            for (int q = tid; q < BP; q += 256) prow[q] = p0 + q < total ? list[p0 + q] : -1;
#pragma unroll
        for (int i = 0; i < TP; ++i) { sbest[i][tid] = Lim<T>::inf(); sbi[i][tid] = 0; }
        __syncthreads();  // the rows are written
        // The previous label of the point this thread settles (its i = tc), loaded now so
        // that the change count does not wait on it at the end.
        i64 mine = -1;
        int old = 0;
        if (tc < TP) {
            const int p = km_point_of<TP>(tc, tp);
            mine = LIST ? prow[p] : (p0 + p < total ? p0 + p : -1);
            if (mine >= 0) old = labels[mine];
        }

        for (int c0 = 0; c0 < k; c0 += BC) {
            // This tile's norms, loaded before the dimension loop so that they are there
            // even when d == 0 (the loop then never runs and its barriers never publish them).
            __syncthreads();  // the previous tile's norms are no longer read
            for (int q = tid; q < BC; q += 256) cn[q] = (c0 + q < k) ? cnorm[c0 + q] : T(0);
            if (d == 0) __syncthreads();  // uniform: d is a kernel argument
            T acc[TP][TC] = {};
            for (int d0 = 0; d0 < d; d0 += KM_BD) {
                __syncthreads();  // the previous chunk is no longer read; this tile's norms are written
                // This thread stages dimension d0 + st of points (and centroids) sp + 16·r.
                const int st = tid % KM_BD, sp = tid / KM_BD;
                const bool in = d0 + st < d;
                const T shift = in ? c[d0 + st] : T(0);
#pragma unroll
                for (int r = 0; r < BP / 16; ++r) {
                    const int p = sp + 16 * r;
                    // Rows from the list go through shared memory; plain rows are computed (a
                    // shared-memory read in every load's address measured slower: docs/kmeans.md).
                    const i64 row = LIST ? prow[p] : (p0 + p < total ? p0 + p : -1);
                    xs[st][p] = (row >= 0 && in) ? x[row * d + d0 + st] - shift : T(0);
                }
#pragma unroll
                for (int r = 0; r < BC / 16; ++r) {
                    const int q = sp + 16 * r;
                    cs[st][q] = (c0 + q < k && in) ? c[(i64)(c0 + q) * d + d0 + st] - shift : T(0);
                }
                __syncthreads();
#pragma unroll
                for (int t = 0; t < KM_BD; ++t) km_fma_step<T, TP, TC>(xs[t], cs[t], tp, tc, acc);
            }
            // the thread's centroids in increasing index order: run 0, then run 1
#pragma unroll
            for (int i = 0; i < TP; ++i) {
                T best = sbest[i][tid];
                int bi = sbi[i][tid];
                km_best_of_row<T, TC>(acc[i], cn, c0, k, tc, best, bi);
                sbest[i][tid] = best;
                sbi[i][tid] = bi;
            }
        }

        int bi[TP];
        i64 row[TP];
#pragma unroll
        for (int i = 0; i < TP; ++i) {
            T best = sbest[i][tid];
            bi[i] = sbi[i][tid];
            km_argmin16(best, bi[i]);
            const int p = km_point_of<TP>(i, tp);
            row[i] = LIST ? prow[p] : (p0 + p < total ? p0 + p : -1);
        }
        T s[TP], unused[TP];
        km_direct<T, TP, false>(x, d, c, d, d, row, bi, tc, s, unused);
#pragma unroll
        for (int i = 0; i < TP; ++i)
            if (tc == i && mine >= 0) km_settle(mine, old, bi[i], s[i], labels, pdist, pchg);
    }
}

// The list of the tensor-core assignment (its near ties) where k ≤ 128 and 1 ≤ d ≤ 32,
// f32: the fused rung's arithmetic, so the same bits (each dot product a fused
// multiply-add chain over the dimensions in increasing order, padded with zeros to a
// multiple of KM_BD; the scores and argmin of km_best_of_row and km_argmin16; the
// winner's distance by km_direct), but the block stages the shifted centroids once and
// strides over the list's 128-point tiles, the next tile's rows copying in with cp.async
// (with their previous labels, and the list entries of the tile after it) while the
// current one is computed. Each thread converts the elements it copied (less c_0) into
// the transposed tile; the winners' distances read the raw tile and centroids from
// shared memory, the change count the copied labels. Dynamic shared
// memory: KM_LIST_SMEM bytes.
#define KM_LIST_LD (128 + 4)  // transposed tiles: rows of 16-byte vectors
#define KM_LIST_RAW 33        // raw rows
#define KM_LIST_SMEM ((3 * 32 * KM_LIST_LD + 3 * 128 * KM_LIST_RAW + 128) * 4 + 5 * 128 * 4)
extern "C" __global__ void __launch_bounds__(256, 2)
    kmeans_assign_fused_list_small_f32(const float* __restrict__ x, const float* __restrict__ c,
                                       const float* __restrict__ cnorm, int n, int k, int d,
                                       const int* __restrict__ list, const int* __restrict__ count,
                                       int* __restrict__ labels, float* __restrict__ pdist,
                                       unsigned char* __restrict__ pchg) {
    constexpr int TP = 8, TC = 8, BP = 16 * TP, BC = 16 * TC, LD = KM_LIST_LD, RAW = KM_LIST_RAW;
    extern __shared__ __align__(16) unsigned char km_smem[];
    float* cs = reinterpret_cast<float*>(km_smem);  // 32 × LD: centroid tile, transposed
    float* xs = cs + 32 * LD;                        // 2 × 32 × LD: point tiles, transposed
    float* raw = xs + 2 * 32 * LD;                   // 2 × BP × RAW: point rows as they are
    float* craw = raw + 2 * BP * RAW;                // BC × RAW: centroid rows as they are
    float* cn = craw + BC * RAW;                     // BC norms
    int* prow = reinterpret_cast<int*>(cn + BC);     // 3 × BP list entries
    int* olds = prow + 3 * BP;                       // 2 × BP previous labels
    const int tid = threadIdx.x, tc = tid % 16, tp = tid / 16;
    const int lane = tid % 32, r1 = tid / 32;  // copies: dimension lane of rows r1 + 8·i
    const int total = *count, tiles = (total + BP - 1) / BP;
    if ((int)blockIdx.x >= tiles) return;  // uniform over the block
    const int dp = (d + KM_BD - 1) / KM_BD * KM_BD;
    const float shift = lane < d ? c[lane] : 0.0f;

    // The list entries of `tile` into prow slot s (zero-filled past the list), and the
    // rows they name into raw buffer b (zero-filled past the list or d).
    auto entries = [&](int tile, int s) {
        if (tid < BP) {
            const int p = tile * BP + tid;
            const unsigned dst = (unsigned)__cvta_generic_to_shared(prow + s * BP + tid);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(list + min(p, total - 1)),
                         "r"(p < total ? 4 : 0));
        }
    };
    auto rows = [&](int tile, int s, int b) {
#pragma unroll
        for (int i = 0; i < BP / 8; ++i) {
            const int r = r1 + 8 * i;
            const bool in = tile * BP + r < total && lane < d;
            const i64 row = in ? prow[s * BP + r] : 0;
            const unsigned dst = (unsigned)__cvta_generic_to_shared(raw + (b * BP + r) * RAW + lane);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(x + row * d + lane),
                         "r"(in ? 4 : 0));
        }
        // Their previous labels, so that the change count does not wait on a global load.
        if (tid < BP) {
            const bool in = tile * BP + tid < total;
            const unsigned dst = (unsigned)__cvta_generic_to_shared(olds + b * BP + tid);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst),
                         "l"(labels + (in ? prow[s * BP + tid] : 0)), "r"(in ? 4 : 0));
        }
    };

    // The centroids, once: shifted and transposed for the products, as they are for the
    // distances; and the first tile's list entries.
#pragma unroll
    for (int i = 0; i < BC / 8; ++i) {
        const int q = r1 + 8 * i;
        const bool in = q < k && lane < d;
        const float v = in ? c[q * d + lane] : 0.0f;
        craw[q * RAW + lane] = v;
        cs[lane * LD + q] = in ? v - shift : 0.0f;
    }
    if (tid < BC) cn[tid] = tid < k ? cnorm[tid] : 0.0f;
    entries(blockIdx.x, 0);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();  // the first entries are in
    rows(blockIdx.x, 0, 0);
    entries(blockIdx.x + gridDim.x, 1);
    cp_async_commit();

    for (int tile = blockIdx.x, it = 0; tile < tiles; tile += gridDim.x, ++it) {
        const int b = it & 1, s = it % 3;
        float* xt = xs + b * 32 * LD;
        const float* cur = raw + b * BP * RAW;
        cp_async_wait<0>();
#pragma unroll
        for (int i = 0; i < BP / 8; ++i) {
            const int r = r1 + 8 * i;
            xt[lane * LD + r] = tile * BP + r < total && lane < d ? cur[r * RAW + lane] - shift : 0.0f;
        }
        __syncthreads();  // this tile is in; so are the next tile's entries
        const int next = tile + gridDim.x;
        if (next < tiles) {
            rows(next, (it + 1) % 3, b ^ 1);
            entries(next + gridDim.x, (it + 2) % 3);
        }
        cp_async_commit();

        float acc[TP][TC] = {};
        for (int t0 = 0; t0 < dp; t0 += KM_BD)
#pragma unroll
            for (int t = t0; t < t0 + KM_BD; ++t) km_fma_step<float, TP, TC>(xt + t * LD, cs + t * LD, tp, tc, acc);
        int bi[TP], lrow[TP];
#pragma unroll
        for (int i = 0; i < TP; ++i) {
            float best = Lim<float>::inf();
            bi[i] = 0;
            km_best_of_row<float, TC>(acc[i], cn, 0, k, tc, best, bi[i]);
            km_argmin16(best, bi[i]);
            const int p = km_point_of<TP>(i, tp);
            lrow[i] = tile * BP + p < total ? p : -1;
        }
        float dist[TP], unused[TP];
        km_direct<float, TP, false>(cur, RAW, craw, RAW, d, lrow, bi, tc, dist, unused);
#pragma unroll
        for (int i = 0; i < TP; ++i)
            if (tc == i && lrow[i] >= 0)
                km_settle((i64)prow[s * BP + lrow[i]], olds[b * BP + lrow[i]], bi[i], dist[i], labels, pdist, pchg);
    }
}

// Σ pdist and Σ pchg over the n points into one (inertia, changed) pair per block, each
// thread a strided run (eight loads in flight, added in order), then km_block_stats: a
// fixed order given n (the grid depends on n only). WEIGHTED: Σ pdist·w, each product in
// f64. The last block to finish (`done` counts them; zero on entry, zero again on exit)
// adds the pairs into `stats` as kmeans_stats_sum_f64 does, the same bits, and zeroes
// the list's count `count` (when not null) for the next assignment: the list kernel
// that read it ran before.
template <typename T, bool WEIGHTED>
__device__ void km_point_stats(const T* __restrict__ pdist, const unsigned char* __restrict__ pchg,
                               const T* __restrict__ w, int n, double* __restrict__ block_stats,
                               double* __restrict__ stats, unsigned* __restrict__ done,
                               int* __restrict__ count) {
    constexpr int U = 8;
    double s = 0, ch = 0;
    const int step = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (U - 1) * step < n; i += U * step) {
        T v[U], wv[U];
        unsigned char c[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            v[u] = pdist[i + u * step];
            c[u] = pchg[i + u * step];
            wv[u] = WEIGHTED ? w[i + u * step] : T(1);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            s += WEIGHTED ? (double)v[u] * (double)wv[u] : (double)v[u];
            ch += c[u];
        }
    }
    for (; i < n; i += step) {
        s += WEIGHTED ? (double)pdist[i] * (double)w[i] : (double)pdist[i];
        ch += pchg[i];
    }
    km_block_stats(s, ch, block_stats);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        __threadfence();  // this block's pair, before its count
        last = atomicAdd(done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last) {  // uniform over the block
        __threadfence();
        km_stats_sum(block_stats, gridDim.x, stats);
        if (threadIdx.x == 0) {
            *done = 0;
            if (count) *count = 0;
        }
    }
}

// Assignment from a vendor score matrix S (N×K, S[i][j] = ‖c_j‖² − 2·x_i·c_j): one warp
// per point, lanes stride the row, then a shuffle argmin (ties → lowest index).
// Inertia from the expanded form, max(‖x‖² + S[i][label], 0) (NaN stays NaN);
// WEIGHTED: times w[i], in f64.
template <typename T, bool WEIGHTED>
__device__ void km_assign_scores(const T* s, const T* xsq, const T* w, int n, int k, int* labels,
                                 double* block_stats) {
    const int lane = threadIdx.x % 32;
    const int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    T best = Lim<T>::inf();
    int bi = 0;
    if (i < n) {
        const T* row = s + (i64)i * k;
        for (int j = lane; j < k; j += 32) {
            const T v = row[j];
            if (v < best) { best = v; bi = j; }
        }
    }
    for (int off = 16; off; off >>= 1) {
        const T os = __shfl_xor_sync(KM_FULL, best, off);
        const int oi = __shfl_xor_sync(KM_FULL, bi, off);
        if (os < best || (os == best && oi < bi)) { best = os; bi = oi; }
    }
    double dist = 0, changed = 0;
    if (i < n && lane == 0) {
        changed = labels[i] != bi;
        labels[i] = bi;
        const T v = xsq[i] + best;
        // Clamp rounding below zero, but let NaN through: it is how non-finite points
        // (or centroids) show, in a non-finite inertia.
        dist = v <= T(0) ? 0.0 : (double)v;
        if (WEIGHTED) dist *= (double)w[i];
    }
    km_block_stats(dist, changed, block_stats);
}

// Deterministic centroid sums. Grid (chunks of `chunk` points, cluster ranges of kb,
// dimension ranges of db); 8 warps, warp w takes a contiguous eighth of the chunk and owns
// a private kb×db sum (and kb counts) in shared memory. Lanes run along the dimensions; a
// ballot finds the warp's points in the cluster range, taken KM_U at a time (their loads
// in flight together), in index order. Each sum is thus built in one fixed order; the warps' sums are added in warp
// order and written as the chunk's partial (partial: G×K×D, pcount: G×K).
// WEIGHTED (sample weights w, C = T): the sums are of w·x and the counts of w, in the
// same fixed order.
#define KM_U 8
template <typename T, typename C, bool WEIGHTED>
__device__ void km_accumulate_partials(const T* __restrict__ x, const int* __restrict__ labels,
                                       const T* __restrict__ wts, int n, int d, int k, int chunk,
                                       int kb, int db, T* __restrict__ partial,
                                       C* __restrict__ pcount) {
    extern __shared__ __align__(16) unsigned char km_smem[];
    constexpr int W = 8;
    T* sums = reinterpret_cast<T*>(km_smem);
    C* cnts = reinterpret_cast<C*>(sums + W * kb * db);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int k0 = blockIdx.y * kb, d0 = blockIdx.z * db;
    const int kn = min(kb, k - k0), dn = min(db, d - d0);
    for (int e = tid; e < W * kb * db; e += blockDim.x) sums[e] = T(0);
    for (int e = tid; e < W * kb; e += blockDim.x) cnts[e] = C(0);
    __syncthreads();

    const i64 cbeg = (i64)blockIdx.x * chunk, cend = min((i64)n, cbeg + chunk);
    const i64 per = (chunk + W - 1) / W;
    const i64 wbeg = cbeg + warp * per, wend = min(cend, wbeg + per);
    T* my = sums + warp * kb * db;
    C* myc = cnts + warp * kb;
    // The next group's label (and weight) is loaded while this group is summed.
    int lab_next = wbeg + lane < wend ? labels[wbeg + lane] : 0;
    T wp_next = (WEIGHTED && wbeg + lane < wend) ? wts[wbeg + lane] : T(1);
    for (i64 base = wbeg; base < wend; base += 32) {
        const i64 p = base + lane;
        const int lab = (p < wend) ? lab_next - k0 : -1;
        const T wp = wp_next;
        lab_next = p + 32 < wend ? labels[p + 32] : 0;
        wp_next = (WEIGHTED && p + 32 < wend) ? wts[p + 32] : T(1);
        unsigned mask = __ballot_sync(KM_FULL, lab >= 0 && lab < kn);
        while (mask) {
            int src[KM_U];
#pragma unroll
            for (int u = 0; u < KM_U; ++u) {
                src[u] = mask ? __ffs(mask) - 1 : -1;
                mask &= mask - 1;  // stays 0 once empty
            }
            int cl[KM_U];
            T wt[KM_U];
#pragma unroll
            for (int u = 0; u < KM_U; ++u) {
                cl[u] = __shfl_sync(KM_FULL, lab, src[u] < 0 ? 0 : src[u]);
                wt[u] = WEIGHTED ? __shfl_sync(KM_FULL, wp, src[u] < 0 ? 0 : src[u]) : T(1);
            }
            for (int t = lane; t < dn; t += 32) {
                T v[KM_U];
#pragma unroll
                for (int u = 0; u < KM_U; ++u)
                    v[u] = src[u] >= 0 ? x[(base + src[u]) * d + d0 + t] : T(0);
#pragma unroll
                for (int u = 0; u < KM_U; ++u)
                    if (src[u] >= 0) my[cl[u] * db + t] += WEIGHTED ? wt[u] * v[u] : v[u];
            }
            if (lane == 0)
#pragma unroll
                for (int u = 0; u < KM_U; ++u)
                    if (src[u] >= 0) myc[cl[u]] += WEIGHTED ? (C)wt[u] : C(1);
        }
    }
    __syncthreads();
    const i64 g = blockIdx.x;
    for (int e = tid; e < kn * dn; e += blockDim.x) {
        const int kk = e / dn, t = e % dn;
        T s = T(0);
        for (int w = 0; w < W; ++w) s += sums[(w * kb + kk) * db + t];
        partial[(g * k + k0 + kk) * d + d0 + t] = s;
    }
    if (blockIdx.z == 0)
        for (int kk = tid; kk < kn; kk += blockDim.x) {
            C s = C(0);
            for (int w = 0; w < W; ++w) s += cnts[w * kb + kk];
            pcount[g * k + k0 + kk] = s;
        }
}

// km_accumulate_partials where D ≤ 32 and each warp's private K×D sum (and K masses)
// fits in shared memory: the same chunks, eighths and order of additions, so the same
// bits, but no cluster or dimension ranges. A warp takes every point of its eighth,
// lane t holding dimension t, G points at a time (KM_G: where D = 32, 32 for f32 and
// 16 for f64, a compile-time stride; half that elsewhere, so that two groups' rows and
// addresses fit in registers): the next group's rows, labels and weights are loaded
// while the current group is added, so a warp keeps a whole group of rows in flight. The adds are
// branch-free: a point past the eighth (or with a label outside [0, k)) adds +0 to
// centroid 0's sum, which leaves its bits as they are (a sum that starts at +0 is never
// −0). Unweighted counts are integers, exact in any order: every lane adds its own
// point's with a shared-memory atomic, once per group. One block per chunk; dynamic
// shared memory 8·K·(D·sizeof T + sizeof C) + 8·32·sizeof T bytes (granted by the
// launch): the sums, the masses and the scratch words.
#define KM_G(T, DC) ((DC ? 128 : 64) / (int)sizeof(T))
template <typename T, bool WEIGHTED, int G>
struct KmGroup {
    T v[G];        // dimension `lane` of points base .. base + G − 1
    int lab;       // the label of point base + lane (lanes < G), 0 where not valid
    unsigned ok;   // bit u: point base + u lies in the eighth and has a label in [0, k)
    T w;           // the weight of point base + lane (0 where not valid)
};
// DC: D as a constant (its loads then take one base register), or 0 (D = d).
template <typename T, bool WEIGHTED, int DC, int G>
__device__ __forceinline__ void km_rows_load(const T* __restrict__ x, const int* __restrict__ labels,
                                             const T* __restrict__ wts, int d, int k, i64 base,
                                             i64 end, KmGroup<T, WEIGHTED, G>& g) {
    if (DC) d = DC;
    const int lane = threadIdx.x % 32;
    const i64 p = base + lane;
    const int lab = lane < G && p < end ? labels[p] : -1;
    const bool ok = lab >= 0 && lab < k;
    g.ok = __ballot_sync(KM_FULL, ok);
    g.lab = ok ? lab : 0;
    g.w = WEIGHTED ? (ok ? wts[p] : T(0)) : T(1);
    const T* src = x + base * d + lane;
    const int rows = (int)min((i64)G, end - base);  // ≤ 0 past the eighth
#pragma unroll
    for (int u = 0; u < G; ++u) g.v[u] = (lane < d && u < rows) ? src[u * d] : T(0);
}
// Adds B values into shared-memory words base[cl[i]·stride] (some may be the same) with
// the bits of adding them one after another, but with the B loads in flight together: the
// sum for value i starts from the result of the last earlier i' < i at the same word, if
// any, else from the word's loaded value; the stores then go in order, so a word's last
// store holds all its values. (One add after another, each load waiting for the previous
// store, is a chain of shared-memory latencies.) WEIGHTED: a[i] ← w[i]·v[i] + a[i] in one
// rounding.
template <int B, bool WEIGHTED, typename T>
__device__ __forceinline__ void km_batch_add(T* base, int stride, const int (&cl)[B], const T (&v)[B],
                                             const T (&w)[B]) {
    T old[B], r[B];
#pragma unroll
    for (int i = 0; i < B; ++i) old[i] = base[cl[i] * stride];
#pragma unroll
    for (int i = 0; i < B; ++i) {
        T from = old[i];
#pragma unroll
        for (int j = 0; j < i; ++j)
            if (cl[j] == cl[i]) from = r[j];
        if constexpr (WEIGHTED) r[i] = fma(w[i], v[i], from);
        else r[i] = from + v[i];
    }
#pragma unroll
    for (int i = 0; i < B; ++i) base[cl[i] * stride] = r[i];
}

// The group's points into the warp's sums, four at a time (km_batch_add; eight make ptxas
// run out of predicate registers): lane t adds to
// mine[cl·stride] (its dimension of centroid cl; lanes t ≥ d to a scratch word of their
// own, stride 0), so that the adds need no branch. With weights, lane 0 adds them into
// the masses likewise.
template <typename T, typename C, bool WEIGHTED, int G>
__device__ __forceinline__ void km_rows_add(const KmGroup<T, WEIGHTED, G>& g, T* mine, int stride,
                                            C* myc) {
    constexpr int B = 4;
    const int lane = threadIdx.x % 32;
    if (!WEIGHTED && ((g.ok >> lane) & 1)) atomicAdd(reinterpret_cast<int*>(myc) + g.lab, 1);
#pragma unroll
    for (int u0 = 0; u0 < G; u0 += B) {
        T v[B], w[B];
        int cl[B];
#pragma unroll
        for (int i = 0; i < B; ++i) {
            const int u = u0 + i;
            cl[i] = __shfl_sync(KM_FULL, g.lab, u);
            v[i] = (g.ok >> u) & 1 ? g.v[u] : T(0);
            w[i] = WEIGHTED ? __shfl_sync(KM_FULL, g.w, u) : T(1);  // 0 where not valid
        }
        km_batch_add<B, WEIGHTED>(mine, stride, cl, v, w);
        if constexpr (WEIGHTED) {
            if (lane == 0)
#pragma unroll
                for (int i = 0; i < B; ++i) myc[cl[i]] += (C)w[i];  // +0 where not valid
        }
    }
}
template <typename T, typename C, bool WEIGHTED, int DC>
__device__ void km_accumulate_rows_d(const T* __restrict__ x, const int* __restrict__ labels,
                                     const T* __restrict__ wts, int n, int d, int k, int chunk,
                                     T* __restrict__ partial, C* __restrict__ pcount) {
    extern __shared__ __align__(16) unsigned char km_smem[];
    constexpr int W = 8, G = KM_G(T, DC);
    T* sums = reinterpret_cast<T*>(km_smem);
    C* cnts = reinterpret_cast<C*>(sums + W * k * d);
    const int tid = threadIdx.x, warp = tid / 32;
    for (int e = tid; e < W * k * d; e += blockDim.x) sums[e] = T(0);
    for (int e = tid; e < W * k; e += blockDim.x) cnts[e] = C(0);
    __syncthreads();

    const i64 cbeg = (i64)blockIdx.x * chunk, cend = min((i64)n, cbeg + chunk);
    const i64 per = (chunk + W - 1) / W;
    const i64 wbeg = cbeg + warp * per, wend = min(cend, wbeg + per);
    T* my = sums + warp * k * d;
    C* myc = cnts + warp * k;
    const int lane = tid % 32;
    T* scratch = reinterpret_cast<T*>(cnts + W * k) + warp * 32;  // T-aligned: see the launch
    T* mine = lane < d ? my + lane : scratch + lane;
    const int stride = lane < d ? d : 0;
    KmGroup<T, WEIGHTED, G> ga, gb;
    km_rows_load<T, WEIGHTED, DC>(x, labels, wts, d, k, wbeg, wend, ga);
    for (i64 base = wbeg; base < wend; base += 2 * G) {
        km_rows_load<T, WEIGHTED, DC>(x, labels, wts, d, k, base + G, wend, gb);
        km_rows_add<T, C, WEIGHTED, G>(ga, mine, stride, myc);
        km_rows_load<T, WEIGHTED, DC>(x, labels, wts, d, k, base + 2 * G, wend, ga);
        km_rows_add<T, C, WEIGHTED, G>(gb, mine, stride, myc);
    }
    __syncthreads();
    const i64 g = blockIdx.x;
    for (int e = tid; e < k * d; e += blockDim.x) {
        T s = T(0);
        for (int w = 0; w < W; ++w) s += sums[w * k * d + e];
        partial[g * k * d + e] = s;
    }
    for (int kk = tid; kk < k; kk += blockDim.x) {
        C s = C(0);
        for (int w = 0; w < W; ++w) s += cnts[w * k + kk];
        pcount[g * k + kk] = s;
    }
}

template <typename T, typename C, bool WEIGHTED>
__device__ void km_accumulate_rows(const T* __restrict__ x, const int* __restrict__ labels,
                                   const T* __restrict__ wts, int n, int d, int k, int chunk,
                                   T* __restrict__ partial, C* __restrict__ pcount) {
    if (d == 32)
        km_accumulate_rows_d<T, C, WEIGHTED, 32>(x, labels, wts, n, d, k, chunk, partial, pcount);
    else
        km_accumulate_rows_d<T, C, WEIGHTED, 0>(x, labels, wts, n, d, k, chunk, partial, pcount);
}

// The G chunk partials of each centroid coordinate added in a fixed order, divided by
// the count (C = int) or the weight (C = T); a cluster of none keeps its centroid. A
// block takes 32 coordinates; its 8 warps each add every 8th chunk in order, and warp 0
// adds the 8 results in order.
template <typename T, typename C>
__device__ void km_finalize(const T* __restrict__ partial, const C* __restrict__ pcount, int g,
                            int k, int d, T* __restrict__ c) {
    __shared__ T ps[8][32];
    __shared__ C pc[8][32];
    const i64 kd = (i64)k * d;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const i64 e = (i64)blockIdx.x * 32 + lane;
    T s = T(0);
    C cnt = C(0);
    if (e < kd) {
        // U chunks' loads in flight at a time, added in chunk order.
        constexpr int U = 8;
        int q = warp;
        for (; q + 8 * (U - 1) < g; q += 8 * U) {
            T v[U];
            C m[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                v[u] = partial[(q + 8 * u) * kd + e];
                m[u] = pcount[(q + 8 * u) * (i64)k + e / d];
            }
#pragma unroll
            for (int u = 0; u < U; ++u) { s += v[u]; cnt += m[u]; }
        }
        for (; q < g; q += 8) {
            s += partial[q * kd + e];
            cnt += pcount[q * (i64)k + e / d];
        }
    }
    ps[warp][lane] = s;
    pc[warp][lane] = cnt;
    __syncthreads();
    if (warp == 0 && e < kd) {
        s = T(0);
        cnt = C(0);
        for (int w = 0; w < 8; ++w) { s += ps[w][lane]; cnt += pc[w][lane]; }
        if (cnt > C(0)) c[e] = s / (T)cnt;
    }
}

// How far an update moved the centroids: Σ (a_e − b_e)² in f64 over len elements,
// each thread a strided run, then km_block_stats per block (a fixed order, given the
// grid, which depends on len only); the pairs are (shift, 0).
template <typename T>
__device__ void km_shift(const T* __restrict__ a, const T* __restrict__ b, i64 len,
                         double* __restrict__ block_stats) {
    double s = 0;
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < len; e += (i64)gridDim.x * blockDim.x) {
        const double df = (double)a[e] - (double)b[e];
        s += df * df;
    }
    km_block_stats(s, 0.0, block_stats);
}

// ---- entry points ---------------------------------------------------------------------
#define KM_KERNELS(T, S, TP, TC)                                                            \
    extern "C" __global__ void __launch_bounds__(256) kmeans_assign_direct_##S(           \
        const T* x, const T* c, int n, int k, int d, int* labels, double* stats) {          \
        km_assign_direct<T, false>(x, c, nullptr, n, k, d, labels, stats);                  \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) kmeans_assign_direct_weighted_##S(  \
        const T* x, const T* c, const T* w, int n, int k, int d, int* labels,               \
        double* stats) {                                                                    \
        km_assign_direct<T, true>(x, c, w, n, k, d, labels, stats);                         \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) kmeans_accumulate_atomic_##S(       \
        const T* x, const int* labels, int n, int d, T* sums, int* counts) {                \
        km_accumulate_atomic<T, int, false>(x, labels, nullptr, n, d, sums, counts);        \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        kmeans_accumulate_atomic_weighted_##S(const T* x, const int* labels, const T* w,    \
                                              int n, int d, T* sums, T* wsum) {             \
        km_accumulate_atomic<T, T, true>(x, labels, w, n, d, sums, wsum);                   \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        kmeans_divide_##S(const T* sums, const int* counts, int k, int d, T* c) {          \
        km_divide<T, int>(sums, counts, k, d, c);                                           \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        kmeans_divide_weighted_##S(const T* sums, const T* wsum, int k, int d, T* c) {     \
        km_divide<T, T>(sums, wsum, k, d, c);                                               \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        kmeans_centroid_norms_##S(const T* c, int k, int d, T* cnorm) {                    \
        km_centroid_norms<T>(c, k, d, cnorm);                                               \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256, 2) kmeans_assign_fused_##S(         \
        const T* x, const T* c, const T* cnorm, int n, int k, int d, int* labels, T* pdist, \
        unsigned char* pchg) {                                                              \
        km_assign_fused<T, TP, TC, false>(x, c, cnorm, n, k, d, nullptr, nullptr, labels,   \
                                          pdist, pchg);                                     \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256, 2) kmeans_assign_fused_list_##S(    \
        const T* x, const T* c, const T* cnorm, int n, int k, int d, const int* list,       \
        const int* count, int* labels, T* pdist, unsigned char* pchg) {                     \
        km_assign_fused<T, TP, TC, true>(x, c, cnorm, n, k, d, list, count, labels, pdist,  \
                                         pchg);                                             \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) kmeans_point_stats_##S(             \
        const T* pdist, const unsigned char* pchg, int n, double* bs, double* stats,        \
        unsigned* done, int* count) {                                                       \
        km_point_stats<T, false>(pdist, pchg, nullptr, n, bs, stats, done, count);          \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) kmeans_point_stats_weighted_##S(    \
        const T* pdist, const unsigned char* pchg, const T* w, int n, double* bs,           \
        double* stats, unsigned* done, int* count) {                                        \
        km_point_stats<T, true>(pdist, pchg, w, n, bs, stats, done, count);                 \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) kmeans_assign_scores_##S(           \
        const T* s, const T* xsq, int n, int k, int* labels, double* bs) {                  \
        km_assign_scores<T, false>(s, xsq, nullptr, n, k, labels, bs);                      \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) kmeans_assign_scores_weighted_##S(  \
        const T* s, const T* xsq, const T* w, int n, int k, int* labels, double* bs) {      \
        km_assign_scores<T, true>(s, xsq, w, n, k, labels, bs);                             \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) kmeans_accumulate_partials_##S(     \
        const T* x, const int* labels, int n, int d, int k, int chunk, int kb, int db,      \
        T* partial, int* pcount) {                                                          \
        km_accumulate_partials<T, int, false>(x, labels, nullptr, n, d, k, chunk, kb, db,   \
                                              partial, pcount);                             \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        kmeans_accumulate_partials_weighted_##S(const T* x, const int* labels, const T* w,  \
                                                int n, int d, int k, int chunk, int kb,     \
                                                int db, T* partial, T* pweight) {           \
        km_accumulate_partials<T, T, true>(x, labels, w, n, d, k, chunk, kb, db, partial,   \
                                           pweight);                                        \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256, 1) kmeans_accumulate_rows_##S(      \
        const T* x, const int* labels, int n, int d, int k, int chunk, T* partial,          \
        int* pcount) {                                                                      \
        km_accumulate_rows<T, int, false>(x, labels, nullptr, n, d, k, chunk, partial,      \
                                          pcount);                                          \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256, 1) kmeans_accumulate_rows_weighted_##S( \
        const T* x, const int* labels, const T* w, int n, int d, int k, int chunk,          \
        T* partial, T* pweight) {                                                           \
        km_accumulate_rows<T, T, true>(x, labels, w, n, d, k, chunk, partial, pweight);     \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                       \
        kmeans_shift_##S(const T* a, const T* b, i64 len, double* bs) {                     \
        km_shift<T>(a, b, len, bs);                                                         \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) kmeans_finalize_##S(                \
        const T* partial, const int* pcount, int g, int k, int d, T* c) {                   \
        km_finalize<T, int>(partial, pcount, g, k, d, c);                                   \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) kmeans_finalize_weighted_##S(       \
        const T* partial, const T* pweight, int g, int k, int d, T* c) {                    \
        km_finalize<T, T>(partial, pweight, g, k, d, c);                                    \
    }

KM_KERNELS(float, f32, 8, 8)
KM_KERNELS(double, f64, 4, 4)
