// kmeans_tc.cu: the tensor-core assignment of the k-means ladder (f32, mma.sync: sm_80
// and later), whose labels are those of the fused rung, bit for bit.
//
// Scores ‖c_j‖² − 2·x·c_j (x, c shifted by c_0) come from TF32 products (operands rounded to nearest, f32
// accumulation) over 128-point × 128-centroid tiles, and each point keeps its best and
// second-best score. A TF32 score differs from the fused rung's f32 score of the same
// centroid by at most
//     E = Q·(2⁻⁹ + (3D + 16)·2⁻²¹) + 2⁻²¹·C,   Q = ‖x‖·√C·(1 + 2⁻⁹ + D·2⁻²²),
// C = max_j ‖c_j‖², where x and c are the data shifted by the first centroid c_0 as the
// fused kernel shifts them (so both kernels score the same f32 inputs): twice the dot products' error, which is the operands' rounding
// (2·2⁻¹¹ + 2⁻²², relative to Σ|x_t·c_t| ≤ ‖x‖·‖c_j‖) plus either accumulation's (at
// most D·2⁻²³ for the f32 chain, taken as (D + 8)·2⁻²¹ for the tensor cores, which
// truncate), and the last rounding of each score; the margins cover ‖x‖² and C being
// rounded sums. So when the second-best TF32 score exceeds the best by more than 2E, the
// best is the fused rung's unique winner, and the point is settled here: its label, and
// its distance by km_direct, the same bits as the fused rung's. The other points (ties
// within 2E, and non-finite scores) are appended to a list that the fused kernel then
// assigns; a point's outcome does not depend on its place in that list.
#include "mma.cuh"
#include "kmeans.cuh"

#define KT_BP 128

#define KT_BP 128
#define KT_BC 128
#define KT_BD 32
#define KT_LD (KT_BD + 4)  // row stride in words: fragment reads hit 32 banks
#define KT_RAW (KT_BD + 4)  // raw rows: the eight quads of a warp in km_direct4 read 32 different banks
#define KT_CRAW (KT_BD + 1)  // raw centroid rows: quads reading different centroids spread over the banks

struct Top2 {
    float best, second;
    int index;
};

// Adds score s of centroid j (scores come in increasing j): no branch. A tie with the
// best makes the second equal to it (a zero gap: the point goes to the list); a NaN
// score leaves the best as it is and makes the second equal to it, so it too sends the
// point to the list.
__device__ __forceinline__ void top2_add(Top2& a, float s, int j) {
    const bool lt = s < a.best;
    a.second = fminf(a.second, fmaxf(s, a.best));
    a.best = fminf(a.best, s);
    a.index = lt ? j : a.index;
}

// The best two of a and b (never NaN); ties of the best go to the lower index.
__device__ __forceinline__ Top2 top2_merge(Top2 a, Top2 b) {
    if (b.best < a.best || (b.best == a.best && b.index < a.index)) {
        b.second = fminf(b.second, a.best);
        return b;
    }
    a.second = fminf(a.second, b.best);
    return a;
}

__device__ __forceinline__ Top2 top2_shfl(Top2 a, int off) {
    Top2 o;
    o.best = __shfl_xor_sync(KM_FULL, a.best, off);
    o.second = __shfl_xor_sync(KM_FULL, a.second, off);
    o.index = __shfl_xor_sync(KM_FULL, a.index, off);
    return top2_merge(a, o);
}

// Rows r0.. of a row-major matrix (rows < m, columns d0.. < d), less the first centroid
// c0 as the fused kernel shifts them, as TF32 into a 128 × KT_LD tile: a warp moves 32
// consecutive elements of one row.
__device__ __forceinline__ void kt_stage(const float* __restrict__ src, const float* __restrict__ c0,
                                         int r0, int m, int d, int d0, u32* tile) {
    const int t = threadIdx.x % KT_BD, r1 = threadIdx.x / KT_BD;  // column t of rows r1 + 8·i
    const bool in = d0 + t < d;
    const float shift = in ? c0[d0 + t] : 0.0f;
#pragma unroll
    for (int i = 0; i < KT_BP / 8; ++i) {
        const int r = r1 + 8 * i;
        const float v = (r0 + r < m && in) ? src[(i64)(r0 + r) * d + d0 + t] - shift : 0.0f;
        tile[r * KT_LD + t] = to_tf32(v);
    }
}

// The norms of centroids c0.. into shared memory, +∞ past k (their scores never win, so
// they need no test).
__device__ __forceinline__ void kt_norms(const float* __restrict__ cnorm, int c0, int k, float* cn) {
    const int q = threadIdx.x;
    if (q < KT_BC) cn[q] = c0 + q < k ? cnorm[c0 + q] : Lim<float>::inf();
}
// The largest norm of centroids c0 .. c0 + 127 (< k), in every lane, from cnorm (global
// or shared memory); NaN norms are passed over, as the scores pass over NaN.
__device__ __forceinline__ float kt_max_norm(const float* __restrict__ cnorm, int c0, int k) {
    float m = 0.0f;
    for (int q = threadIdx.x % 32; q < KT_BC && c0 + q < k; q += 32) m = fmaxf(m, cnorm[c0 + q]);
    for (int off = 16; off; off >>= 1) m = fmaxf(m, __shfl_xor_sync(KM_FULL, m, off));
    return m;
}

// Four 8×8 matrices of 16-bit elements from shared memory (ldmatrix), thread i giving
// the address of row i % 8 of matrix i / 8. Read as 32-bit words, thread T then holds
// word T % 4 of row T / 4 of each: the (g, t) layout of a TF32 mma fragment.
__device__ __forceinline__ void kt_ldsm_x4(u32 (&r)[4], const u32* p) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

// 256 threads = 8 warps as 4 (points) × 2 (centroids); a warp computes 32 points × 64
// centroids of the 128 × 128 tile (xs: points, cs: centroids, KT_BD dimensions) as 2 × 8
// mma.m16n8k8. Fragments come by ldmatrix: an A fragment (16 points × 8 dimensions) is
// four 8×4-word matrices, rows g and g + 8, words t and t + 4; two B fragments (8
// centroids × 8 dimensions each) are four more.
__device__ __forceinline__ void kt_mma(const u32* xs, const u32* cs, float (&acc)[2][8][4]) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / 2, wn = warp % 2, m = lane / 8, r = lane % 8;
#pragma unroll
    for (int kk = 0; kk < KT_BD; kk += 8) {
        u32 a[2][4];
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
            kt_ldsm_x4(a[mt], xs + (wm * 32 + mt * 16 + (m & 1) * 8 + r) * KT_LD + kk + (m >> 1) * 4);
#pragma unroll
        for (int nt = 0; nt < 8; nt += 2) {
            u32 b[4];  // b[0], b[1]: n-tile nt; b[2], b[3]: n-tile nt + 1
            kt_ldsm_x4(b, cs + (wn * 64 + (nt + (m >> 1)) * 8 + r) * KT_LD + kk + (m & 1) * 4);
            const u32 b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
            mma_tf32(acc[0][nt], a[0], b0);
            mma_tf32(acc[1][nt], a[1], b0);
            mma_tf32(acc[0][nt + 1], a[0], b1);
            mma_tf32(acc[1][nt + 1], a[1], b1);
        }
    }
}

// The tile's scores ‖c‖² − 2·x·c into each point's best two (run[mt][h]: point
// wm·32 + 16·mt + g + 8·h), the thread's centroids in increasing index order: C's
// (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1) of each n-tile.
__device__ __forceinline__ void kt_top2(const float (&acc)[2][8][4], const float* cn, int c0,
                                        Top2 (&run)[2][2]) {
    const int warp = threadIdx.x / 32, t = threadIdx.x % 4, wn = warp % 2;
    const int base = c0 + wn * 64 + 2 * t;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const float cq = cn[wn * 64 + nt * 8 + 2 * t + e];
#pragma unroll
            for (int mt = 0; mt < 2; ++mt)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    top2_add(run[mt][h], fmaf(-2.0f, acc[mt][nt][2 * h + e], cq), base + 8 * nt + e);
        }
}

__device__ __forceinline__ void kt_reset(Top2 (&run)[2][2]) {
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) run[mt][h] = Top2{Lim<float>::inf(), Lim<float>::inf(), 0};
}

// The points p0 .. p0 + 127 (< n) given each thread's best two of its centroids (cc the
// largest ‖c_j − c_0‖², rcc its square root; prev[q] the previous label of point p0 + q):
// the quad's best two, then the two centroid halves through shared memory (half:
// 2 × 128); then each point's two halves are merged and the winner's distance and the
// point's norm computed (x and c: rows of strides ldx and ldc), and the point's owner
// settles it if its gap exceeds 2E, or else appends it to the list (one atomic per warp).
// With LOCAL (x holds the tile's rows from 0, in shared memory, zeros past n and past d
// up to KT_BD, as are c's), a quad of lanes per point, two points per quad, whose loads
// go out together (km_direct4, with no test of d or of the row; lane 0 owns them); from
// global memory, a half-warp per point, 8 points per half-warp (km_direct: 64 contiguous
// bytes of a row per load, where a quad's 16 would touch twice the sectors; lanes 0–7
// own them). Every thread of the block calls it.
template <bool LOCAL>
__device__ __forceinline__ void kt_finish(const float* __restrict__ x, int ldx, const float* __restrict__ c,
                                          int ldc, int n, int k, int d, int p0, float cc, float rcc,
                                          Top2 (&run)[2][2], Top2 (*half)[KT_BP],
                                          const int* __restrict__ prev, int* __restrict__ labels,
                                          float* __restrict__ pdist,
                                          unsigned char* __restrict__ pchg, int* __restrict__ list,
                                          int* __restrict__ count) {
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int wm = warp / 2, wn = warp % 2;
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            run[mt][h] = top2_shfl(run[mt][h], 1);
            run[mt][h] = top2_shfl(run[mt][h], 2);
            if (t == 0) half[wn][wm * 32 + mt * 16 + g + 8 * h] = run[mt][h];
        }
    __syncthreads();

    // The (up to) two points this thread owns: q (their index in the tile), their merged
    // best two, the winner's distance and the point's norm.
    bool own[2];
    int q[2];
    Top2 mine[2];
    float mydist[2], myxx[2];
    if constexpr (LOCAL) {
        int row[2], lab[2];
#pragma unroll
        for (int ps = 0; ps < 2; ++ps) {
            q[ps] = 64 * ps + tid / 4;
            mine[ps] = top2_merge(half[0][q[ps]], half[1][q[ps]]);
            row[ps] = q[ps];  // zeros past n: its result is not used
            lab[ps] = mine[ps].index;
            own[ps] = t == 0;
        }
        km_direct4<float, 2, KT_BD, true>(x, ldx, c, ldc, row, lab, t, mydist, myxx);
    } else {
        const int tp = tid / 16, l16 = tid % 16;
        int row[8], lab[8];
        float dist[8], xx[8];
        mine[0] = Top2{0.0f, 0.0f, 0};
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int qi = tp * 8 + i;
            const Top2 m = top2_merge(half[0][qi], half[1][qi]);
            row[i] = p0 + qi < n ? p0 + qi : -1;
            lab[i] = m.index;
            if (i == l16) mine[0] = m;
        }
        km_direct<float, 8, true>(x, ldx, c, ldc, d, row, lab, l16, dist, xx);
#pragma unroll
        for (int i = 0; i < 8; ++i)
            if (i == l16) { mydist[0] = dist[i]; myxx[0] = xx[i]; }
        q[0] = tp * 8 + l16 % 8;
        own[0] = l16 < 8;
        own[1] = false;  // no second point
        q[1] = 0;
        mine[1] = mine[0];
        mydist[1] = myxx[1] = 0.0f;
    }
    bool pending[2];
#pragma unroll
    for (int ps = 0; ps < 2; ++ps) {
        const int myrow = p0 + q[ps];
        pending[ps] = false;
        if (own[ps] && myrow < n) {
            const float qn = sqrtf(myxx[ps]) * rcc * (1.0f + 0x1p-9f + d * 0x1p-22f);
            const float e = qn * (0x1p-9f + (3 * d + 16) * 0x1p-21f) + cc * 0x1p-21f;
            const float gap = mine[ps].second - mine[ps].best;
            const bool safe = k == 1 || (mine[ps].best >= -NDGPU_F32_MAX && mine[ps].second <= NDGPU_F32_MAX &&
                                         gap > 2.0f * e * (1.0f + 0x1p-8f));
            if (safe) km_settle(myrow, prev[q[ps]], mine[ps].index, mydist[ps], labels, pdist, pchg);
            pending[ps] = !safe;
        }
    }
    const unsigned m0 = __ballot_sync(KM_FULL, pending[0]), m1 = __ballot_sync(KM_FULL, pending[1]);
    if (m0 | m1) {
        int base = 0;
        if (lane == 0) base = atomicAdd(count, __popc(m0) + __popc(m1));
        base = __shfl_sync(KM_FULL, base, 0);
        const unsigned below = (1u << lane) - 1;
        if (pending[0]) list[base + __popc(m0 & below)] = p0 + q[0];
        if (pending[1]) list[base + __popc(m0) + __popc(m1 & below)] = p0 + q[1];
    }
}

// Any k and d: a block per 128-point tile, the centroids staged 128 × 32 at a time.
extern "C" __global__ void __launch_bounds__(256, 2)
    kmeans_assign_tf32_f32(const float* __restrict__ x, const float* __restrict__ c,
                           const float* __restrict__ cnorm, int n, int k, int d,
                           int* __restrict__ labels, float* __restrict__ pdist,
                           unsigned char* __restrict__ pchg, int* __restrict__ list,
                           int* __restrict__ count) {
    __shared__ __align__(16) u32 xs[KT_BP * KT_LD];
    __shared__ __align__(16) u32 cs[KT_BC * KT_LD];
    __shared__ float cn[KT_BC];
    __shared__ Top2 half[2][KT_BP];
    __shared__ int olds[KT_BP];
    const int p0 = blockIdx.x * KT_BP;
    // The tile's previous labels, copied while the scores are formed, so that the change
    // count does not wait on a global load at the end.
    if (threadIdx.x < KT_BP) {
        const int q = threadIdx.x;
        const unsigned od = (unsigned)__cvta_generic_to_shared(olds + q);
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(od), "l"(labels + min(p0 + q, n - 1)),
                     "r"(p0 + q < n ? 4 : 0));
    }
    cp_async_commit();
    Top2 run[2][2];
    kt_reset(run);
    float cc = 0.0f;
    for (int c0 = 0; c0 < k; c0 += KT_BC) {
        __syncthreads();  // the previous tile's norms are no longer read
        kt_norms(cnorm, c0, k, cn);
        cc = fmaxf(cc, kt_max_norm(cnorm, c0, k));
        if (d == 0) __syncthreads();  // uniform: d is a kernel argument
        float acc[2][8][4] = {};
        for (int d0 = 0; d0 < d; d0 += KT_BD) {
            __syncthreads();  // the previous chunk is no longer read; the norms are written
            kt_stage(x, c, p0, n, d, d0, xs);
            kt_stage(c, c, c0, k, d, d0, cs);
            __syncthreads();
            kt_mma(xs, cs, acc);
        }
        kt_top2(acc, cn, c0, run);
    }
    cp_async_wait<0>();  // published by kt_finish's barrier
    kt_finish<false>(x, d, c, d, n, k, d, p0, cc, sqrtf(cc), run, half, olds, labels, pdist, pchg, list, count);
}

// k ≤ 128 and 1 ≤ d ≤ 32 (the caller's check): the centroids are staged once (as TF32
// and as they are), their norms formed here (block 0 writes them to cnorm), and blocks
// stride over the point tiles. Each thread copies its
// elements of the next tile with cp.async (4-byte copies, zero-filled outside X) into one
// of two raw buffers while the current tile is computed, then converts those same
// elements into the TF32 tile; the winners' distances read the raw tile and centroids
// from shared memory. The tile's previous labels come with its points (cp.async), so
// that the change count does not wait on a global load. Dynamic shared memory:
// KT_SMALL_SMEM bytes.
#define KT_SMALL_SMEM ((2 * KT_BP * KT_RAW + KT_BC * KT_CRAW + 2 * KT_BP * KT_LD + KT_BC + 2 * KT_BP) * 4 + 2 * KT_BP * 12)
extern "C" __global__ void __launch_bounds__(256, 2)
    kmeans_assign_tf32_small_f32(const float* __restrict__ x, const float* __restrict__ c,
                                 float* __restrict__ cnorm, int n, int k, int d,
                                 int* __restrict__ labels, float* __restrict__ pdist,
                                 unsigned char* __restrict__ pchg, int* __restrict__ list,
                                 int* __restrict__ count) {
    extern __shared__ __align__(16) unsigned char kt_smem[];
    float* raw = reinterpret_cast<float*>(kt_smem);  // 2 × KT_BP × KT_RAW
    float* craw = raw + 2 * KT_BP * KT_RAW;           // KT_BC × KT_CRAW
    u32* xs = reinterpret_cast<u32*>(craw + KT_BC * KT_CRAW);
    u32* cs = xs + KT_BP * KT_LD;
    float* cn = reinterpret_cast<float*>(cs + KT_BC * KT_LD);
    Top2(*half)[KT_BP] = reinterpret_cast<Top2(*)[KT_BP]>(cn + KT_BC);
    int* olds = reinterpret_cast<int*>(&half[2][0]);  // 2 × KT_BP previous labels
    const int lane = threadIdx.x % 32, r1 = threadIdx.x / 32;  // column lane of rows r1 + 8·i
    const int tiles = (n + KT_BP - 1) / KT_BP;
    const float shift = lane < d ? c[lane] : 0.0f;

    // This thread's elements of tile p0 into raw buffer b (and, for the first 128
    // threads, one previous label into olds), asynchronously; with a size of 0 (outside
    // X) nothing is read and the element is zero-filled.
    auto fetch = [&](int p0, int b) {
        const float* src = x + (i64)(p0 + r1) * d + lane;
        const unsigned dst = (unsigned)__cvta_generic_to_shared(raw + (b * KT_BP + r1) * KT_RAW + lane);
#pragma unroll
        for (int i = 0; i < KT_BP / 8; ++i)
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst + 32 * i * KT_RAW),
                         "l"(src + 8 * i * d), "r"(p0 + r1 + 8 * i < n && lane < d ? 4 : 0));
        if (threadIdx.x < KT_BP) {
            const int q = threadIdx.x;
            const unsigned od = (unsigned)__cvta_generic_to_shared(olds + b * KT_BP + q);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(od), "l"(labels + p0 + q),
                         "r"(p0 + q < n ? 4 : 0));
        }
        cp_async_commit();
    };
    if (blockIdx.x < tiles) fetch(blockIdx.x * KT_BP, 0);
    kt_stage(c, c, 0, k, d, 0, cs);
#pragma unroll
    for (int i = 0; i < KT_BC / 8; ++i) {
        const int q = r1 + 8 * i;
        craw[q * KT_CRAW + lane] = q < k && lane < d ? c[q * d + lane] : 0.0f;
    }
    // ‖c_q − c_0‖² by km_norm, as kmeans_centroid_norms_f32 forms it, so these are the
    // bits the fused kernel reads: block 0 stores them for the fused kernel that assigns
    // the list.
    if (threadIdx.x < KT_BC) {
        const int q = threadIdx.x;
        const float s = q < k ? km_norm(c, q, d) : Lim<float>::inf();
        if (q < k && blockIdx.x == 0) cnorm[q] = s;
        cn[q] = s;
    }
    __syncthreads();  // the norms are in
    const float cc = kt_max_norm(cn, 0, k);

    for (int tile = blockIdx.x, b = 0; tile < tiles; tile += gridDim.x, b ^= 1) {
        const int p0 = tile * KT_BP;
        const float* cur = raw + b * KT_BP * KT_RAW;
        cp_async_wait<0>();
#pragma unroll
        for (int i = 0; i < KT_BP / 8; ++i) {
            const int r = r1 + 8 * i;
            xs[r * KT_LD + lane] = to_tf32(cur[r * KT_RAW + lane] - shift);
        }
        __syncthreads();  // the tile (and at first the centroids) written
        if (tile + (int)gridDim.x < tiles) fetch(p0 + gridDim.x * KT_BP, b ^ 1);
        float acc[2][8][4] = {};
        kt_mma(xs, cs, acc);
        Top2 run[2][2];
        kt_reset(run);
        kt_top2(acc, cn, 0, run);
        kt_finish<true>(cur, KT_RAW, craw, KT_CRAW, n, k, d, p0, cc, sqrtf(cc), run, half, olds + b * KT_BP, labels, pdist,
                        pchg, list, count);
    }
}
