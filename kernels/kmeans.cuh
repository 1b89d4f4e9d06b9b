// kmeans.cuh: what the two k-means assignment files share (kmeans.cu, kmeans_tc.cu): the
// fixed-order sum of per-block statistics and the direct distance of a point to the
// centroid it is given, so that both assignments give a point the same bits.
#pragma once
#include "common.cuh"

#define KM_FULL 0xffffffffu

// Sums (inertia, changed) over a block in a fixed order and stores the block's pair.
// Every thread of the block must call it.
__device__ __forceinline__ void km_block_stats(double inertia, double changed,
                                               double* block_stats) {
    __shared__ double si[32], sc[32];
    for (int off = 16; off; off >>= 1) {
        inertia += __shfl_xor_sync(KM_FULL, inertia, off);
        changed += __shfl_xor_sync(KM_FULL, changed, off);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    if (lane == 0) { si[warp] = inertia; sc[warp] = changed; }
    __syncthreads();
    if (threadIdx.x == 0) {
        double a = 0, b = 0;
        for (int w = 0; w < nw; ++w) { a += si[w]; b += sc[w]; }
        block_stats[2 * blockIdx.x] = a;
        block_stats[2 * blockIdx.x + 1] = b;
    }
}

// ‖x_row − c_lab‖² of TP points by the 16 lanes of a half-warp (`lane16` its lane; every
// lane of the warp must call it): each lane a fused multiply-add chain over the
// dimensions ≡ lane16 (mod 16) in increasing order, then a butterfly over the 16 lanes,
// after which every lane holds every point's distance. The order depends on D only, so a
// point gets the same bits whichever kernel and lane compute it, and wherever the rows
// are read from (x and c have row strides ldx and ldc). With NORM, ‖x_row − c_0‖²
// likewise (c_0 the first centroid). A row < 0 gives 0. Rows are R: i64 or int.
template <typename T, int TP, bool NORM, typename R>
__device__ __forceinline__ void km_direct(const T* __restrict__ x, int ldx, const T* __restrict__ c,
                                          int ldc, int d, const R (&row)[TP], const int (&lab)[TP],
                                          int lane16, T (&dist)[TP], T (&norm)[TP]) {
#pragma unroll
    for (int i = 0; i < TP; ++i) { dist[i] = T(0); norm[i] = T(0); }
    for (int t = lane16; t < d; t += 16)
#pragma unroll
        for (int i = 0; i < TP; ++i)
            if (row[i] >= 0) {
                const T v = x[(i64)row[i] * ldx + t];
                const T df = v - c[(i64)lab[i] * ldc + t];
                dist[i] = fma(df, df, dist[i]);
                if (NORM) {
                    const T v0 = v - c[t];
                    norm[i] = fma(v0, v0, norm[i]);
                }
            }
#pragma unroll
    for (int i = 0; i < TP; ++i)
        for (int off = 8; off; off >>= 1) {
            dist[i] += __shfl_xor_sync(KM_FULL, dist[i], off);
            if (NORM) norm[i] += __shfl_xor_sync(KM_FULL, norm[i], off);
        }
}

// km_direct for TP points per quad of lanes (r0 = lane % 4; the four lanes of a quad must
// call it together, each with the quad's rows and labs), for rows in shared memory that
// are readable up to column DP (a multiple of 16, at least d) and hold +0 in the columns
// d .. DP − 1, x's and c's alike, and rows that are all readable (a caller passes a row
// past the data as one of zeros, and ignores its result): for each point, lane r0 runs
// the chains of km_direct's lanes r0, r0 + 4, r0 + 8 and r0 + 12 (the dimensions ≡ each
// mod 16, in increasing order), adds them as the butterfly's first two levels do,
// (c_r0 + c_r0+8) + (c_r0+4 + c_r0+12), and the last two levels are shuffles within the
// quad: the same additions in the same order, so the same bits as km_direct, from a
// quarter of the lanes and half the shuffles. A padding column adds fma(+0, +0, s) = s to
// its chain, which leaves every chain's bits as they are (chains start at +0 and never
// hold −0), so the loops run to DP with no test of d or of the row, and every address is
// a row's base plus a constant. The TP points' loads go out together.
template <typename T, int TP, int DP, bool NORM>
__device__ __forceinline__ void km_direct4(const T* __restrict__ x, int ldx, const T* __restrict__ c,
                                           int ldc, const int (&row)[TP], const int (&lab)[TP], int r0,
                                           T (&dist)[TP], T (&norm)[TP]) {
    static_assert(DP % 16 == 0, "whole groups of 16 columns");
    T ds[TP][4], ns[TP][4];
    const T* xr[TP];
    const T* cr[TP];
#pragma unroll
    for (int i = 0; i < TP; ++i) {
        xr[i] = x + row[i] * ldx + r0;
        cr[i] = c + lab[i] * ldc + r0;
#pragma unroll
        for (int j = 0; j < 4; ++j) { ds[i][j] = T(0); ns[i][j] = T(0); }
    }
#pragma unroll
    for (int t0 = 0; t0 < DP; t0 += 16)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int t = t0 + 4 * j;
            const T c0 = NORM ? c[r0 + t] : T(0);
#pragma unroll
            for (int i = 0; i < TP; ++i) {
                const T v = xr[i][t];
                const T df = v - cr[i][t];
                ds[i][j] = fma(df, df, ds[i][j]);
                if (NORM) {
                    const T v0 = v - c0;
                    ns[i][j] = fma(v0, v0, ns[i][j]);
                }
            }
        }
#pragma unroll
    for (int i = 0; i < TP; ++i) {
        dist[i] = (ds[i][0] + ds[i][2]) + (ds[i][1] + ds[i][3]);
        norm[i] = NORM ? (ns[i][0] + ns[i][2]) + (ns[i][1] + ns[i][3]) : T(0);
        for (int off = 2; off; off >>= 1) {
            dist[i] += __shfl_xor_sync(KM_FULL, dist[i], off);
            if (NORM) norm[i] += __shfl_xor_sync(KM_FULL, norm[i], off);
        }
    }
}

// ‖c_j − c_0‖²: one fused multiply-add chain over the dimensions in order, the shift
// taken from c's first row (c: k×d, row-major). Every kernel that needs a centroid's norm
// forms it here, so they all read the same bits.
template <typename T>
__device__ __forceinline__ T km_norm(const T* __restrict__ c, int j, int d) {
    const T* cj = c + (i64)j * d;
    T s = T(0);
    for (int t = 0; t < d; ++t) {
        const T v = cj[t] - c[t];
        s = fma(v, v, s);
    }
    return s;
}

// A point's outcome: its label, its distance to that centroid (for the inertia) and
// whether the label changed from `old`, its previous label (which the kernels load, or
// copy, well before this: waiting for it here held up a kernel's end).
template <typename T>
__device__ __forceinline__ void km_settle(i64 row, int old, int lab, T dist, int* __restrict__ labels,
                                          T* __restrict__ pdist, unsigned char* __restrict__ pchg) {
    pchg[row] = old != lab;
    labels[row] = lab;
    pdist[row] = dist;
}
