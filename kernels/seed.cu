// seed.cu: k-means++ and k-means|| seeding on the device, following the host reference
// (ndgpu_core::init) to the bit: distances in f64 from the element values, one rounded
// product and one rounded sum per dimension in dimension order (__dmul_rn/__dadd_rn, so
// that nothing is contracted into a fused multiply-add); D² weights replaced only when
// strictly smaller; draws walk a tree of pairwise sums over blocks of 2048 values.
//
// Per k-means++ draw: seed_nearest (weights and block sums), seed_tree_roots up to a
// single total, seed_pick (one block walks the tree down and writes the pick where the
// next seed_nearest reads it). The host reads nothing until the last draw.
// With sample weights w: the leaves are D²·w (seed_nearest_weighted), and a draw whose
// total is 0 walks the tree of the weights instead (seed_weight_leaves builds its level
// 0 and first roots; seed_pick_weighted).
#include "common.cuh"

#define SEED_LEAVES 2048
#define SEED_THREADS 256

// The pairwise sum tree of SEED_LEAVES leaves in t[SEED_LEAVES .. 2·SEED_LEAVES), built
// into t[1 .. SEED_LEAVES) (node h = node 2h + node 2h+1). Every thread must call it.
__device__ void seed_build(double* t) {
    for (int m = SEED_LEAVES / 2; m >= 1; m >>= 1) {
        __syncthreads();
        for (int h = m + threadIdx.x; h < 2 * m; h += blockDim.x) t[h] = __dadd_rn(t[2 * h], t[2 * h + 1]);
    }
    __syncthreads();
}

// Σ (a_t − b_t)² in f64, in t order; four elements per 16-byte load where both rows
// are aligned (the order of the sum is the same either way).
template <typename T>
__device__ __forceinline__ void seed_acc(double& s, T a, T b) {
    const double df = __dsub_rn((double)a, (double)b);
    s = __dadd_rn(s, __dmul_rn(df, df));
}
template <typename T>
__device__ double seed_dist(const T* a, const T* b, int d) {
    double s = 0.0;
    int t = 0;
    if (aligned16(a) && aligned16(b))
        for (; t + 4 <= d; t += 4) {
            T va[4], vb[4];
            ld4(a + t, va);
            ld4(b + t, vb);
#pragma unroll
            for (int q = 0; q < 4; ++q) seed_acc(s, va[q], vb[q]);
        }
    for (; t < d; ++t) seed_acc(s, a[t], b[t]);
    return s;
}

// Points of block b: b·2048 + threadIdx.x + 256·q. For each, the centres
// centres[from .. to) in order: closest[i] and owner[i] (the centre's position in
// `centres`) take a strictly smaller distance. fresh: no centre yet (closest = +Inf).
// roots[b] = the block's tree root. With W (sample weights w), the leaf of point i is
// prod[i] = closest[i]·w[i] (one rounded product, as the host's weighted_d2).
template <typename T, bool W>
__device__ void seed_nearest(const T* __restrict__ x, int n, int d, const int* __restrict__ centres,
                             int from, int to, int fresh, const T* __restrict__ wt,
                             double* __restrict__ closest, int* __restrict__ owner,
                             double* __restrict__ prod, double* __restrict__ roots) {
    __shared__ double t[2 * SEED_LEAVES];
    const i64 base = (i64)blockIdx.x * SEED_LEAVES;
    for (int l = threadIdx.x; l < SEED_LEAVES; l += SEED_THREADS) {
        const i64 i = base + l;
        double w = 0.0;
        if (i < n) {
            double cl = fresh ? Lim<double>::inf() : closest[i];
            int ow = fresh ? 0 : owner[i];
            const T* xi = x + i * d;
            for (int j = from; j < to; ++j) {
                const double s = seed_dist(xi, x + (i64)centres[j] * d, d);
                if (s < cl) { cl = s; ow = j; }
            }
            closest[i] = cl;
            owner[i] = ow;
            w = cl;
            if (W) {
                w = __dmul_rn(cl, (double)wt[i]);
                prod[i] = w;
            }
        }
        t[SEED_LEAVES + l] = w;
    }
    seed_build(t);
    if (threadIdx.x == 0) roots[blockIdx.x] = t[1];
}

// The block roots of `in` (len values, as doubles) into roots[b]; with LEAVES, the
// values also into leaves (the sample weights as level 0 of their tree).
template <typename V, bool LEAVES>
__device__ void seed_roots(const V* __restrict__ in, i64 len, double* __restrict__ leaves,
                           double* __restrict__ roots) {
    __shared__ double t[2 * SEED_LEAVES];
    const i64 base = (i64)blockIdx.x * SEED_LEAVES;
    for (int l = threadIdx.x; l < SEED_LEAVES; l += SEED_THREADS) {
        const double v = base + l < len ? (double)in[base + l] : 0.0;
        if (LEAVES && base + l < len) leaves[base + l] = v;
        t[SEED_LEAVES + l] = v;
    }
    seed_build(t);
    if (threadIdx.x == 0) roots[blockIdx.x] = t[1];
}

// roots[b] = the tree root of block b of `in` (len values).
extern "C" __global__ void __launch_bounds__(SEED_THREADS)
    seed_tree_roots(const double* __restrict__ in, i64 len, double* __restrict__ roots) {
    seed_roots<double, false>(in, len, nullptr, roots);
}

// Walks the `count` (2 to 4) levels lv (lengths lens) from the top down to the leaf
// that `target` falls in (left while the target is below the left sum or the right sum
// is 0, else right less the left sum). Every thread must call it; thread 0's result.
__device__ i64 seed_walk(const double* const* lv, const i64* lens, int count, double target) {
    __shared__ double t[2 * SEED_LEAVES];
    __shared__ i64 sblock;
    __shared__ double starget;
    __syncthreads();
    if (threadIdx.x == 0) { sblock = 0; starget = target; }
    for (int level = count - 2; level >= 0; --level) {
        __syncthreads();
        const i64 start = sblock * SEED_LEAVES;
        for (int l = threadIdx.x; l < SEED_LEAVES; l += SEED_THREADS)
            t[SEED_LEAVES + l] = start + l < lens[level] ? lv[level][start + l] : 0.0;
        seed_build(t);
        if (threadIdx.x == 0) {
            double tg = starget;
            int h = 1;
            while (h < SEED_LEAVES) {
                const double left = t[2 * h], right = t[2 * h + 1];
                if (tg < left || right == 0.0) {
                    h = 2 * h;
                } else {
                    tg = __dsub_rn(tg, left);
                    h = 2 * h + 1;
                }
            }
            starget = tg;
            sblock = start + (h - SEED_LEAVES);
        }
    }
    __syncthreads();
    return sblock;
}

// One D² draw (one block) from the `count` (2 to 4) levels of the sample tree: v0 the
// weights (len0 of them), each next level the block roots of the one below, the last a
// single total: centres[j] = the point that u[j]·total falls in (seed_walk), or, when
// the total is 0, the point that u[j]·(its total) falls in of the fallback tree fb (the
// sample weights', same lengths) if there is one, else ⌊u[j]·n⌋. A total that is not
// finite sets *status and draws nothing.
__device__ void seed_draw(const double* const* lv, const i64* lens, int count,
                          const double* const* fb, const double* __restrict__ u, int j, int n,
                          int* __restrict__ centres, int* __restrict__ status) {
    const double total = lv[count - 1][0];
    if (!isfinite(total)) {
        if (threadIdx.x == 0) { *status = 1; centres[j] = 0; }
        return;
    }
    if (!(total > 0.0)) {
        if (fb != nullptr && fb[count - 1][0] > 0.0) {
            const i64 p = seed_walk(fb, lens, count, __dmul_rn(u[j], fb[count - 1][0]));
            if (threadIdx.x == 0) centres[j] = (int)p;
            return;
        }
        if (threadIdx.x == 0) {
            const i64 p = (i64)__dmul_rn(u[j], (double)n);
            centres[j] = (int)(p < n - 1 ? p : n - 1);
        }
        return;
    }
    const i64 p = seed_walk(lv, lens, count, __dmul_rn(u[j], total));
    if (threadIdx.x == 0) centres[j] = (int)p;
}

extern "C" __global__ void __launch_bounds__(SEED_THREADS)
    seed_pick(const double* v0, i64 len0, const double* v1, i64 len1, const double* v2, i64 len2,
              const double* v3, i64 len3, int count, const double* __restrict__ u, int j, int n,
              int* __restrict__ centres, int* __restrict__ status) {
    const double* const lv[4] = {v0, v1, v2, v3};
    const i64 lens[4] = {len0, len1, len2, len3};
    seed_draw(lv, lens, count, nullptr, u, j, n, centres, status);
}

// seed_pick with the sample weights' tree f0..f3 (same lengths) as the fallback.
extern "C" __global__ void __launch_bounds__(SEED_THREADS)
    seed_pick_weighted(const double* v0, i64 len0, const double* v1, i64 len1, const double* v2,
                       i64 len2, const double* v3, i64 len3, int count, const double* f0,
                       const double* f1, const double* f2, const double* f3,
                       const double* __restrict__ u, int j, int n, int* __restrict__ centres,
                       int* __restrict__ status) {
    const double* const lv[4] = {v0, v1, v2, v3};
    const double* const fb[4] = {f0, f1, f2, f3};
    const i64 lens[4] = {len0, len1, len2, len3};
    seed_draw(lv, lens, count, fb, u, j, n, centres, status);
}

// SplitMix64's first output from `state`, as a double in [0, 1).
__device__ double seed_uniform(unsigned long long state) {
    unsigned long long z = state + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

// k-means|| round `round`: flags[i] = 1 when point i (weight closest[i] > 0) is drawn,
// with probability ell·w / phi from its own uniform number.
extern "C" __global__ void __launch_bounds__(SEED_THREADS)
    seed_select(const double* __restrict__ closest, int n, unsigned long long seed, int round,
                double ell, double phi, unsigned char* __restrict__ flags) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double w = closest[i];
    const unsigned long long state = seed ^ ((unsigned long long)(round + 1) << 40) ^ (unsigned long long)i;
    flags[i] = w > 0.0 && seed_uniform(state) < __ddiv_rn(__dmul_rn(ell, w), phi);
}

// counts[owner[i]] += 1 for every point (integer atomics: exact in any order).
extern "C" __global__ void __launch_bounds__(SEED_THREADS)
    seed_owner_counts(const int* __restrict__ owner, int n, int* __restrict__ counts) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(counts + owner[i], 1);
}

// c[r] = x[rows[r]], r < k.
template <typename T>
__device__ void seed_gather(const T* __restrict__ x, int d, const int* __restrict__ rows, int k,
                            T* __restrict__ c) {
    const i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (i64)k * d) return;
    const i64 r = e / d, col = e % d;
    c[e] = x[(i64)rows[r] * d + col];
}

#define SEED_KERNELS(T, S)                                                                  \
    extern "C" __global__ void __launch_bounds__(SEED_THREADS) seed_nearest_##S(          \
        const T* x, int n, int d, const int* centres, int from, int to, int fresh,          \
        double* closest, int* owner, double* roots) {                                       \
        seed_nearest<T, false>(x, n, d, centres, from, to, fresh, nullptr, closest, owner,  \
                               nullptr, roots);                                             \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(SEED_THREADS) seed_nearest_weighted_##S( \
        const T* x, int n, int d, const int* centres, int from, int to, int fresh,          \
        const T* w, double* closest, int* owner, double* prod, double* roots) {             \
        seed_nearest<T, true>(x, n, d, centres, from, to, fresh, w, closest, owner, prod,   \
                              roots);                                                       \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(SEED_THREADS)                              \
        seed_weight_leaves_##S(const T* w, i64 n, double* leaves, double* roots) {          \
        seed_roots<T, true>(w, n, leaves, roots);                                           \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(SEED_THREADS)                              \
        seed_gather_##S(const T* x, int d, const int* rows, int k, T* c) {                  \
        seed_gather<T>(x, d, rows, k, c);                                                   \
    }

SEED_KERNELS(float, f32)
SEED_KERNELS(double, f64)
