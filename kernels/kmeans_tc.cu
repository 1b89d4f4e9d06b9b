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
#define KT_BC 128
#define KT_BD 32
#define KT_LD (KT_BD + 4)  // row stride in words: fragment reads hit 32 banks

struct Top2 {
    float best, second;
    int index;
};

__device__ __forceinline__ void top2_add(Top2& a, float s, int j) {
    if (s < a.best) {
        a.second = a.best;
        a.best = s;
        a.index = j;
    } else if (s < a.second) {
        a.second = s;
    }
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
    for (int i = 0; i < 128 / 8; ++i) {
        const int r = r1 + 8 * i;
        const float v = (r0 + r < m && in) ? src[(i64)(r0 + r) * d + d0 + t] - shift : 0.0f;
        tile[r * KT_LD + t] = to_tf32(v);
    }
}

// 256 threads = 8 warps as 4 (points) × 2 (centroids); a warp computes 32 points × 64
// centroids of the tile as 2 × 8 mma.m16n8k8.
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
    __shared__ float wmax[8];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int wm = warp / 2, wn = warp % 2;
    const int p0 = blockIdx.x * KT_BP;

    Top2 run[2][2];  // [m-tile][h]: point wm·32 + 16·mt + g + 8·h
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) run[mt][h] = Top2{Lim<float>::inf(), Lim<float>::inf(), 0};
    float cmax = 0.0f;

    for (int c0 = 0; c0 < k; c0 += KT_BC) {
        __syncthreads();  // the previous tile's norms are no longer read
        if (tid < KT_BC) cn[tid] = (c0 + tid < k) ? cnorm[c0 + tid] : 0.0f;
        if (d == 0) __syncthreads();  // uniform: d is a kernel argument
        float acc[2][8][4] = {};
        for (int d0 = 0; d0 < d; d0 += KT_BD) {
            __syncthreads();  // the previous chunk is no longer read; the norms are written
            kt_stage(x, c, p0, n, d, d0, xs);
            kt_stage(c, c, c0, k, d, d0, cs);
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < KT_BD; kk += 8) {
                u32 a[2][4];
#pragma unroll
                for (int mt = 0; mt < 2; ++mt) {
                    const u32* r = xs + (wm * 32 + mt * 16 + g) * KT_LD + kk + t;
                    a[mt][0] = r[0];
                    a[mt][1] = r[8 * KT_LD];
                    a[mt][2] = r[4];
                    a[mt][3] = r[8 * KT_LD + 4];
                }
#pragma unroll
                for (int nt = 0; nt < 8; ++nt) {
                    const u32* q = cs + (wn * 64 + nt * 8 + g) * KT_LD + kk + t;
                    const u32 b[2] = {q[0], q[4]};
                    mma_tf32(acc[0][nt], a[0], b);
                    mma_tf32(acc[1][nt], a[1], b);
                }
            }
        }
        // The thread's centroids in increasing index order; C's (g, 2t), (g, 2t+1),
        // (g+8, 2t), (g+8, 2t+1).
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int q = wn * 64 + nt * 8 + 2 * t + e;
                if (c0 + q < k) {
                    cmax = fmaxf(cmax, cn[q]);
#pragma unroll
                    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
                        for (int h = 0; h < 2; ++h)
                            top2_add(run[mt][h], fmaf(-2.0f, acc[mt][nt][2 * h + e], cn[q]), c0 + q);
                }
            }
    }

    // The quad's best two, then the two centroid halves through shared memory.
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            run[mt][h] = top2_shfl(run[mt][h], 1);
            run[mt][h] = top2_shfl(run[mt][h], 2);
            if (t == 0) half[wn][wm * 32 + mt * 16 + g + 8 * h] = run[mt][h];
        }
    for (int off = 16; off; off >>= 1) cmax = fmaxf(cmax, __shfl_xor_sync(KM_FULL, cmax, off));
    if (lane == 0) wmax[warp] = cmax;
    __syncthreads();
    float cc = 0.0f;
#pragma unroll
    for (int w = 0; w < 8; ++w) cc = fmaxf(cc, wmax[w]);

    // 16 half-warps of 8 points each: the winners' distances and the points' norms.
    const int tp = tid / 16, l16 = tid % 16;
    i64 row[8];
    int lab[8];
    Top2 mine = Top2{0.0f, 0.0f, 0};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int q = tp * 8 + i;
        const Top2 m = top2_merge(half[0][q], half[1][q]);
        row[i] = p0 + q < n ? p0 + q : -1;
        lab[i] = m.index;
        if (i == l16) mine = m;
    }
    float dist[8], xx[8];
    km_direct<float, 8, true>(x, c, d, row, lab, l16, dist, xx);
    i64 myrow = -1;
    int mylab = 0;
    float mydist = 0.0f, myxx = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i)
        if (i == l16) { myrow = row[i]; mylab = lab[i]; mydist = dist[i]; myxx = xx[i]; }
    bool pending = false;
    if (myrow >= 0) {
        const float q = sqrtf(myxx) * sqrtf(cc) * (1.0f + 0x1p-9f + d * 0x1p-22f);
        const float e = q * (0x1p-9f + (3 * d + 16) * 0x1p-21f) + cc * 0x1p-21f;
        const float gap = mine.second - mine.best;
        const bool safe = k == 1 || (mine.best >= -NDGPU_F32_MAX && mine.second <= NDGPU_F32_MAX &&
                                     gap > 2.0f * e * (1.0f + 0x1p-8f));
        if (safe) km_settle(myrow, mylab, mydist, labels, pdist, pchg);
        pending = !safe;
    }
    // The warp's pending points appended with one atomic.
    const unsigned m = __ballot_sync(KM_FULL, pending);
    if (m) {
        const int first = __ffs(m) - 1;
        int base = 0;
        if (lane == first) base = atomicAdd(count, __popc(m));
        base = __shfl_sync(KM_FULL, base, first);
        if (pending) list[base + __popc(m & ((1u << lane) - 1))] = (int)myrow;
    }
}
