// reduce.cu: whole-array reductions, dot products and per-axis reductions.
//
// Every reduction is written once as a template over an operator (below) and
// instantiated for each op and dtype by the macros at the end:
//     reduce_<op>_<technique>_<dtype>     op ∈ sum, sumsq, min, max, argmin, argmax, dot
//
// The operators' combine is associative and commutative *as a selection* for min, max
// and the arg ops (NaN first, then the extreme, then the lower index: a total order),
// so their results do not depend on the order of combination at all. Sums do depend on
// it; every technique here except `atomic` combines in an order fixed by (n, grid), so
// it gives the same bits on every run.
//
// The story, top to bottom (report 004 and the classic reduction ladder; each rung's
// share of a device copy of the same bytes on the H200 is in docs/kernels.md):
//   atomic         report 004: grid-stride loop, shared-memory tree, one atomicAdd per
//                  block into the result; sum-like ops only; the order of the atomics
//                  varies from run to run
//   interleaved    one element per thread, tree with interleaved addressing: the
//                  `tid % (2s)` test leaves most lanes of every warp idle
//   sequential     sequential addressing: the active threads are contiguous
//   first_add      each thread combines two elements while loading: half the blocks
//   unrolled_warp  the last 6 tree steps run in one warp without block barriers
//   shuffle        16-byte loads, 4 independent accumulators, warp shuffles, ~4×SM
//                  blocks, and the last block to finish folds the partials: one launch
// The ladder techniques write one partial per block; `finish` folds partials 2048 to
// one, launched until one value remains (a fixed order).
//
// Axis reductions: `rows` (a group of up to 32 lanes per row, 4 rows at a time),
// `rows_block` (blocks per row, for few long rows; columns split into chunks), `cols`
// (threads over columns, coalesced; rows split into chunks) and `cols_finish` (folds
// the chunks of each column, or row, in a fixed order).
#include "common.cuh"

#define FULL_MASK 0xffffffffu

// ---- operators ------------------------------------------------------------------------
template <typename T> struct ArgPair {
    T v;
    i64 i;
};

// How an accumulator is stored in the partial arrays (values; indices for arg ops).
// Partials written by other blocks of the same launch are read with __ldcg (L2, not
// the non-coherent L1).
template <typename T> struct ValueAcc {
    typedef T Acc;
    static constexpr bool ARG = false;
    __device__ static void put(T* pv, i64*, i64 k, T a) { pv[k] = a; }
    __device__ static T get(const T* pv, const i64*, i64 k) { return __ldcg(pv + k); }
};
template <typename T> struct PairAcc {
    typedef ArgPair<T> Acc;
    static constexpr bool ARG = true;
    __device__ static void put(T* pv, i64* pi, i64 k, Acc a) {
        pv[k] = a.v;
        pi[k] = a.i;
    }
    __device__ static Acc get(const T* pv, const i64* pi, i64 k) {
        Acc a;
        a.v = __ldcg(pv + k);
        a.i = __ldcg(pi + k);
        return a;
    }
};

// item(x, y, i): the accumulator for element i (y is read only by BINARY ops).
template <typename T> struct SumOp : ValueAcc<T> {
    static constexpr bool BINARY = false;
    __device__ static T identity() { return T(0); }
    __device__ static T item(T x, T, i64) { return x; }
    __device__ static T combine(T a, T b) { return a + b; }
};
template <typename T> struct SumSqOp : ValueAcc<T> {
    static constexpr bool BINARY = false;
    __device__ static T identity() { return T(0); }
    __device__ static T item(T x, T, i64) { return x * x; }
    __device__ static T combine(T a, T b) { return a + b; }
};
template <typename T> struct DotOp : ValueAcc<T> {
    static constexpr bool BINARY = true;
    __device__ static T identity() { return T(0); }
    __device__ static T item(T x, T y, i64) { return x * y; }
    __device__ static T combine(T a, T b) { return a + b; }
};
// NaN propagates: a NaN operand wins over any number.
template <typename T> struct MinOp : ValueAcc<T> {
    static constexpr bool BINARY = false;
    __device__ static T identity() { return Lim<T>::inf(); }
    __device__ static T item(T x, T, i64) { return x; }
    __device__ static T combine(T a, T b) {
        if (is_nan(a)) return a;
        if (is_nan(b)) return b;
        return b < a ? b : a;
    }
};
template <typename T> struct MaxOp : ValueAcc<T> {
    static constexpr bool BINARY = false;
    __device__ static T identity() { return -Lim<T>::inf(); }
    __device__ static T item(T x, T, i64) { return x; }
    __device__ static T combine(T a, T b) {
        if (is_nan(a)) return a;
        if (is_nan(b)) return b;
        return b > a ? b : a;
    }
};
// (value, index) pairs ordered by: NaN first, then the extreme value, then the lower
// index. The identity (±inf, INT64_MAX) loses to every element, ±inf included.
template <typename T, bool MAX> struct ArgOpT : PairAcc<T> {
    typedef ArgPair<T> Acc;
    static constexpr bool BINARY = false;
    __device__ static Acc identity() {
        Acc a;
        a.v = MAX ? -Lim<T>::inf() : Lim<T>::inf();
        a.i = 0x7fffffffffffffffLL;
        return a;
    }
    __device__ static Acc item(T x, T, i64 i) {
        Acc a;
        a.v = x;
        a.i = i;
        return a;
    }
    // Whether element x takes over from the best b of the elements before it (a forward
    // scan, so a tie keeps the earlier): b is not NaN, and x is NaN or beyond it.
    __device__ static bool takes(T x, T b) {
        return !is_nan(b) && (is_nan(x) || (MAX ? x > b : x < b));
    }
    __device__ static Acc combine(Acc a, Acc b) {
        const bool an = is_nan(a.v), bn = is_nan(b.v);
        if (an != bn) return an ? a : b;
        if (!an) {
            if (MAX ? b.v > a.v : b.v < a.v) return b;
            if (MAX ? a.v > b.v : a.v < b.v) return a;
        }
        return b.i < a.i ? b : a;
    }
};
template <typename T> struct ArgMinOp : ArgOpT<T, false> {};
template <typename T> struct ArgMaxOp : ArgOpT<T, true> {};

template <typename Op, typename T>
__device__ __forceinline__ typename Op::Acc load_item(const T* x, const T* y, i64 i) {
    if constexpr (Op::BINARY) {
        return Op::item(x[i], y[i], i);
    } else {
        return Op::item(x[i], T(0), i);
    }
}

// ---- warp and block trees (fixed order) ---------------------------------------------------
template <typename T> __device__ __forceinline__ T shfl_down(T a, int d) {
    return __shfl_down_sync(FULL_MASK, a, d);
}
template <typename T> __device__ __forceinline__ ArgPair<T> shfl_down(ArgPair<T> a, int d) {
    ArgPair<T> r;
    r.v = __shfl_down_sync(FULL_MASK, a.v, d);
    r.i = __shfl_down_sync(FULL_MASK, a.i, d);
    return r;
}

// Lane 0 ends with the combination of all 32 lanes (every lane must take part).
template <typename Op> __device__ typename Op::Acc warp_reduce(typename Op::Acc a) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) a = Op::combine(a, shfl_down(a, d));
    return a;
}

// Thread 0 ends with the combination of the whole block (blockDim.x a multiple of 32,
// every thread must call it: it holds a barrier).
template <typename Op> __device__ typename Op::Acc block_reduce(typename Op::Acc a) {
    __shared__ typename Op::Acc warp_acc[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    a = warp_reduce<Op>(a);
    if (lane == 0) warp_acc[warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = lane < (int)(blockDim.x >> 5) ? warp_acc[lane] : Op::identity();
        a = warp_reduce<Op>(a);
    }
    return a;
}

// ---- atomic: report 004's dot product ------------------------------------------------------
// Block 512, grid ~2×SM. Each thread sums a grid-stride slice (coalesced), the block
// sums its threads with a shared-memory tree, and thread 0 adds the block's sum into
// *out (zeroed by the host) with atomicAdd. The order of the atomics changes from run
// to run, so the last bits of the result do too.
#define ATOMIC_THREADS 512
template <typename Op, typename T>
__device__ void reduce_atomic(const T* __restrict__ x, const T* __restrict__ y, i64 n, T* out) {
    __shared__ T sm[ATOMIC_THREADS];
    const int tid = threadIdx.x;
    T s = Op::identity();
    for (i64 i = (i64)blockIdx.x * ATOMIC_THREADS + tid; i < n; i += (i64)gridDim.x * ATOMIC_THREADS)
        s = Op::combine(s, load_item<Op>(x, y, i));
    sm[tid] = s;
    __syncthreads();
    for (int h = ATOMIC_THREADS / 2; h > 0; h >>= 1) {
        if (tid < h) sm[tid] = Op::combine(sm[tid], sm[tid + h]);
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sm[0]);
}

// ---- the classic ladder: one partial per block of 256 threads -----------------------------
#define LADDER_THREADS 256

// Loads the block's LADDER_THREADS items (the identity past n) into sm, one per thread,
// and waits for the whole block.
template <typename Op, typename T>
__device__ __forceinline__ void ladder_load(typename Op::Acc* sm, const T* __restrict__ x,
                                            const T* __restrict__ y, i64 n) {
    const int tid = threadIdx.x;
    const i64 i = (i64)blockIdx.x * LADDER_THREADS + tid;
    sm[tid] = i < n ? load_item<Op>(x, y, i) : Op::identity();
    __syncthreads();
}

// Interleaved addressing: at step s, threads with tid % 2s == 0 combine sm[tid + s].
// Correct but divergent: by s = 16 only one lane in 32 of each warp works.
template <typename Op, typename T>
__device__ void reduce_interleaved(const T* __restrict__ x, const T* __restrict__ y, i64 n,
                                   T* pv, i64* pi) {
    __shared__ typename Op::Acc sm[LADDER_THREADS];
    const int tid = threadIdx.x;
    ladder_load<Op>(sm, x, y, n);
    for (int s = 1; s < LADDER_THREADS; s *= 2) {
        if (tid % (2 * s) == 0) sm[tid] = Op::combine(sm[tid], sm[tid + s]);
        __syncthreads();
    }
    if (tid == 0) Op::put(pv, pi, blockIdx.x, sm[0]);
}

// Sequential addressing: at step s the first s threads combine sm[tid + s], so whole
// warps retire together and shared-memory accesses are consecutive (no conflicts).
template <typename Op>
__device__ void tree_sequential(typename Op::Acc* sm, int down_to) {
    const int tid = threadIdx.x;
    for (int s = LADDER_THREADS / 2; s > down_to; s >>= 1) {
        if (tid < s) sm[tid] = Op::combine(sm[tid], sm[tid + s]);
        __syncthreads();
    }
}

template <typename Op, typename T>
__device__ void reduce_sequential(const T* __restrict__ x, const T* __restrict__ y, i64 n,
                                  T* pv, i64* pi) {
    __shared__ typename Op::Acc sm[LADDER_THREADS];
    const int tid = threadIdx.x;
    ladder_load<Op>(sm, x, y, n);
    tree_sequential<Op>(sm, 0);
    if (tid == 0) Op::put(pv, pi, blockIdx.x, sm[0]);
}

// First add during load: each block covers 2×256 elements and each thread combines two
// of them before the tree, so half as many blocks do the same tree work.
template <typename Op, typename T>
__device__ typename Op::Acc load_two(const T* x, const T* y, i64 n) {
    const i64 i = (i64)blockIdx.x * (2 * LADDER_THREADS) + threadIdx.x;
    typename Op::Acc a = i < n ? load_item<Op>(x, y, i) : Op::identity();
    if (i + LADDER_THREADS < n) a = Op::combine(a, load_item<Op>(x, y, i + LADDER_THREADS));
    return a;
}

template <typename Op, typename T>
__device__ void reduce_first_add(const T* __restrict__ x, const T* __restrict__ y, i64 n,
                                 T* pv, i64* pi) {
    __shared__ typename Op::Acc sm[LADDER_THREADS];
    const int tid = threadIdx.x;
    sm[tid] = load_two<Op>(x, y, n);
    __syncthreads();
    tree_sequential<Op>(sm, 0);
    if (tid == 0) Op::put(pv, pi, blockIdx.x, sm[0]);
}

// Unrolled last warp: once 64 values remain, warp 0 finishes alone. Its lanes need no
// block barrier, only __syncwarp between each step's reads and writes (the
// independent-thread-scheduling-safe form of the old `volatile` idiom).
template <typename Op, typename T>
__device__ void reduce_unrolled_warp(const T* __restrict__ x, const T* __restrict__ y, i64 n,
                                     T* pv, i64* pi) {
    __shared__ typename Op::Acc sm[LADDER_THREADS];
    const int tid = threadIdx.x;
    sm[tid] = load_two<Op>(x, y, n);
    __syncthreads();
    tree_sequential<Op>(sm, 32);
    if (tid < 32) {
#pragma unroll
        for (int s = 32; s > 0; s >>= 1) {
            typename Op::Acc a;
            if (tid < s) a = Op::combine(sm[tid], sm[tid + s]);
            __syncwarp();
            if (tid < s) sm[tid] = a;
            __syncwarp();
        }
        if (tid == 0) Op::put(pv, pi, blockIdx.x, sm[0]);
    }
}

// Folds partials [2048·b, 2048·(b+1)) into out[b]: each thread combines 8 of them
// (stride 256, coalesced), then the block tree. Launched until one partial remains.
#define FINISH_THREADS 256
#define FINISH_ITEMS 8
template <typename Op, typename T>
__device__ void reduce_finish(const T* in_v, const i64* in_i, i64 p, T* out_v, i64* out_i) {
    const i64 base = (i64)blockIdx.x * (FINISH_THREADS * FINISH_ITEMS) + threadIdx.x;
    typename Op::Acc a = Op::identity();
#pragma unroll
    for (int k = 0; k < FINISH_ITEMS; k++) {
        const i64 j = base + (i64)k * FINISH_THREADS;
        if (j < p) a = Op::combine(a, Op::get(in_v, in_i, j));
    }
    a = block_reduce<Op>(a);
    if (threadIdx.x == 0) Op::put(out_v, out_i, blockIdx.x, a);
}

// ---- shuffle: the fast single-pass reduction -----------------------------------------------
// Block 256, grid min(4×SM, what n needs). Each thread walks a grid-stride sequence of
// 16-byte vectors (float4 / double2), 4 vectors per iteration into 4 independent
// accumulators (64 bytes in flight per thread); the < 16 bytes past the last whole
// vector go to the first threads of the grid. Warp shuffles and one shared-memory step
// reduce the block; thread 0 stores the block's partial, fences, and takes a ticket.
// The block that takes the last ticket folds all partials in index order and writes
// the result after them (at index gridDim.x), then resets the ticket for the next call.
// Every combination happens in an order fixed by (n, grid): bitwise reproducible.
#define SHUFFLE_THREADS 256
#define SHUFFLE_UNROLL 4

template <typename T> struct Vec16;
template <> struct Vec16<float> {
    typedef float4 V;
    static constexpr int N = 4;
    __device__ static float at(const float4& v, int c) {
        return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
    }
};
template <> struct Vec16<double> {
    typedef double2 V;
    static constexpr int N = 2;
    __device__ static double at(const double2& v, int c) { return c == 0 ? v.x : v.y; }
};

template <typename Op, typename T>
__device__ __forceinline__ void fold_vec(typename Op::Acc& acc, const typename Vec16<T>::V& a,
                                         const typename Vec16<T>::V& b, i64 first) {
#pragma unroll
    for (int c = 0; c < Vec16<T>::N; c++)
        acc = Op::combine(acc, Op::item(Vec16<T>::at(a, c), Vec16<T>::at(b, c), first + c));
}

template <typename Op, typename T>
__device__ void reduce_shuffle(const T* __restrict__ x, const T* __restrict__ y, i64 n, T* pv,
                               i64* pi, u32* ticket) {
    typedef typename Op::Acc Acc;
    typedef typename Vec16<T>::V V;
    constexpr int W = Vec16<T>::N, U = SHUFFLE_UNROLL;
    // The buffers come straight from the allocator (256-byte aligned), so the casts
    // are aligned.
    const V* xv = reinterpret_cast<const V*>(x);
    const V* yv = reinterpret_cast<const V*>(y);
    const i64 nv = n / W;
    const i64 stride = (i64)gridDim.x * SHUFFLE_THREADS;
    const i64 gtid = (i64)blockIdx.x * SHUFFLE_THREADS + threadIdx.x;
    Acc acc[U];
#pragma unroll
    for (int k = 0; k < U; k++) acc[k] = Op::identity();
    i64 i = gtid;
    for (; i + (U - 1) * stride < nv; i += U * stride) {
        V a[U], b[U];
#pragma unroll
        for (int k = 0; k < U; k++) {
            a[k] = xv[i + k * stride];
            if constexpr (Op::BINARY) b[k] = yv[i + k * stride];
            else b[k] = a[k];
        }
#pragma unroll
        for (int k = 0; k < U; k++) fold_vec<Op, T>(acc[k], a[k], b[k], (i + k * stride) * W);
    }
    for (; i < nv; i += stride) {
        const V a = xv[i];
        V b;
        if constexpr (Op::BINARY) b = yv[i];
        else b = a;
        fold_vec<Op, T>(acc[0], a, b, i * W);
    }
    if (gtid < n - nv * W) acc[0] = Op::combine(acc[0], load_item<Op>(x, y, nv * W + gtid));
    Acc a = acc[0];
#pragma unroll
    for (int k = 1; k < U; k++) a = Op::combine(a, acc[k]);
    a = block_reduce<Op>(a);

    __shared__ bool am_last;
    if (threadIdx.x == 0) {
        Op::put(pv, pi, blockIdx.x, a);
        __threadfence();  // the partial is visible device-wide before the ticket counts it
        am_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!am_last) return;  // block-uniform: the barrier below is reached by all or none
    __threadfence();
    Acc r = Op::identity();
    for (int k = threadIdx.x; k < (int)gridDim.x; k += SHUFFLE_THREADS)
        r = Op::combine(r, Op::get(pv, pi, k));
    r = block_reduce<Op>(r);
    if (threadIdx.x == 0) {
        Op::put(pv, pi, gridDim.x, r);
        *ticket = 0;
    }
}

#include "reduce_axis.cuh"

// ---- instantiation ---------------------------------------------------------------------------
#define NDGPU_K(op, tech, sfx) reduce_##op##_##tech##_##sfx

// Entry point NDGPU_K(op, tech, sfx) of the device function reduce_<tech>, with launch
// bounds `threads` and a parenthesised parameter list and argument list.
#define NDGPU_REDUCE(op, Op, T, sfx, tech, threads, params, args) \
    NDGPU_ENTRY(NDGPU_K(op, tech, sfx), __launch_bounds__(threads), params, \
                (reduce_##tech<Op<T>, T> args))
// A rung of the whole-array ladder that writes one partial per block.
#define NDGPU_LADDER(op, Op, T, sfx, tech)                                                \
    NDGPU_REDUCE(op, Op, T, sfx, tech, LADDER_THREADS,                                    \
                 (const T* x, const T* y, i64 n, T* pv, i64* pi), (x, y, n, pv, pi))

#define NDGPU_WHOLE(op, Op, T, sfx)                                                       \
    NDGPU_REDUCE(op, Op, T, sfx, shuffle, SHUFFLE_THREADS,                                \
                 (const T* x, const T* y, i64 n, T* pv, i64* pi, u32* ticket),            \
                 (x, y, n, pv, pi, ticket))                                               \
    NDGPU_LADDER(op, Op, T, sfx, interleaved)                                             \
    NDGPU_LADDER(op, Op, T, sfx, sequential)                                              \
    NDGPU_LADDER(op, Op, T, sfx, first_add)                                               \
    NDGPU_LADDER(op, Op, T, sfx, unrolled_warp)                                           \
    NDGPU_REDUCE(op, Op, T, sfx, finish, FINISH_THREADS,                                  \
                 (const T* in_v, const i64* in_i, i64 p, T* out_v, i64* out_i),           \
                 (in_v, in_i, p, out_v, out_i))

#define NDGPU_ATOMIC(op, Op, T, sfx)                                                      \
    NDGPU_REDUCE(op, Op, T, sfx, atomic, ATOMIC_THREADS,                                  \
                 (const T* x, const T* y, i64 n, T* out), (x, y, n, out))

// Per-axis entry points, one per device function above.
#define NDGPU_AXIS(op, Op, T, sfx)                                                        \
    NDGPU_REDUCE(op, Op, T, sfx, rows, 256,                                               \
                 (int rows, int cols, int g, const T* x, T* out_v, i64* out_i),           \
                 (rows, cols, g, x, out_v, out_i))                                        \
    NDGPU_REDUCE(op, Op, T, sfx, rows_vec, 256,                                           \
                 (int rows, int cols, int g, const T* x, T* out_v, i64* out_i),           \
                 (rows, cols, g, x, out_v, out_i))                                        \
    NDGPU_REDUCE(op, Op, T, sfx, rows_block, 256,                                         \
                 (int rows, int cols, const T* x, T* out_v, i64* out_i),                  \
                 (rows, cols, x, out_v, out_i))                                           \
    NDGPU_REDUCE(op, Op, T, sfx, cols, 256,                                               \
                 (int rows, int cols, int per, const T* x, T* out_v, i64* out_i),         \
                 (rows, cols, per, x, out_v, out_i))                                      \
    NDGPU_REDUCE(op, Op, T, sfx, cols_tall, 256,                                          \
                 (int rows, int cols, int per, const T* x, T* out_v, i64* out_i),         \
                 (rows, cols, per, x, out_v, out_i))                                      \
    NDGPU_REDUCE(op, Op, T, sfx, cols_vec, 256,                                           \
                 (int rows, int cols, const T* x, T* out_v, i64* out_i),                  \
                 (rows, cols, x, out_v, out_i))                                           \
    NDGPU_REDUCE(op, Op, T, sfx, cols_finish, 256,                                        \
                 (int chunks, int cols, const T* in_v, const i64* in_i, T* out_v,         \
                  i64* out_i),                                                            \
                 (chunks, cols, in_v, in_i, out_v, out_i))

#define NDGPU_VALUE_OPS(M, T, sfx) \
    M(sum, SumOp, T, sfx) M(sumsq, SumSqOp, T, sfx) M(min, MinOp, T, sfx) M(max, MaxOp, T, sfx)
#define NDGPU_ARG_OPS(M, T, sfx) M(argmin, ArgMinOp, T, sfx) M(argmax, ArgMaxOp, T, sfx)
#define NDGPU_SUM_OPS(M, T, sfx) M(sum, SumOp, T, sfx) M(sumsq, SumSqOp, T, sfx) M(dot, DotOp, T, sfx)

// Per-axis entry points of the arg ops alone.
#define NDGPU_AXIS_ARG(op, Op, T, sfx)                                                    \
    NDGPU_REDUCE(op, Op, T, sfx, rows_thread, 256,                                        \
                 (int rows, int cols, const T* x, T* out_v, i64* out_i),                  \
                 (rows, cols, x, out_v, out_i))

#define NDGPU_DTYPE(T, sfx)                 \
    NDGPU_VALUE_OPS(NDGPU_WHOLE, T, sfx)    \
    NDGPU_ARG_OPS(NDGPU_WHOLE, T, sfx)      \
    NDGPU_WHOLE(dot, DotOp, T, sfx)         \
    NDGPU_SUM_OPS(NDGPU_ATOMIC, T, sfx)     \
    NDGPU_VALUE_OPS(NDGPU_AXIS, T, sfx)     \
    NDGPU_ARG_OPS(NDGPU_AXIS, T, sfx)       \
    NDGPU_ARG_OPS(NDGPU_AXIS_ARG, T, sfx)

NDGPU_DTYPE(float, f32)
NDGPU_DTYPE(double, f64)
