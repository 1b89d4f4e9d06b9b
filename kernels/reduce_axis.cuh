// reduce_axis.cuh: the per-axis reductions of reduce.cu (rows, columns), included by it
// after its operators (Op::identity, combine, item, put, get) and SHUFFLE_THREADS.
#pragma once
#include "common.cuh"

// ---- along an axis ---------------------------------------------------------------------------
template <typename T> __device__ __forceinline__ T shfl_down_w(T a, int d, int w) {
    return __shfl_down_sync(FULL_MASK, a, d, w);
}
template <typename T> __device__ __forceinline__ ArgPair<T> shfl_down_w(ArgPair<T> a, int d, int w) {
    ArgPair<T> r;
    r.v = __shfl_down_sync(FULL_MASK, a.v, d, w);
    r.i = __shfl_down_sync(FULL_MASK, a.i, d, w);
    return r;
}

// Fold<Op, T>: one accumulator of a per-axis kernel, whose elements come in increasing
// index order from a first index known in advance. Value ops combine each item, as
// before. Arg ops scan forward by Op::takes from (the identity's value, the first index):
// an element that does not beat the identity's value (an argmax's −∞) keeps the first
// index, which is what the pair order gives it; the pair is formed once, at the end, and
// an accumulator that met no element is the identity. The order of pairs is total, so
// the result is the pair that combining every element would give, at a compare and two
// selects an element instead of a pair combine. Indices fit an int (the kernels' range).
template <typename Op, typename T, bool ARG = Op::ARG> struct Fold;
template <typename Op, typename T> struct Fold<Op, T, false> {
    typename Op::Acc a;
    __device__ __forceinline__ void start(int, bool) { a = Op::identity(); }
    __device__ __forceinline__ void add(T v, int i) { a = Op::combine(a, Op::item(v, T(0), i)); }
    __device__ __forceinline__ typename Op::Acc result() const { return a; }
};
template <typename Op, typename T> struct Fold<Op, T, true> {
    T b;
    int o;
    __device__ __forceinline__ void start(int first, bool any) {
        b = Op::identity().v;
        o = any ? first : -1;
    }
    __device__ __forceinline__ void add(T v, int i) {
        const bool take = Op::takes(v, b);
        b = take ? v : b;
        o = take ? i : o;
    }
    __device__ __forceinline__ typename Op::Acc result() const {
        return o >= 0 ? Op::item(b, T(0), o) : Op::identity();
    }
};

// rows: groups of g lanes (g a power of two ≤ 32: the row length rounded up, capped at
// 32) reduce a row each, 4 rows per group at a time, so every lane has 4 independent
// loads in flight however short the rows. Block 256 = 256/g groups covering 4·256/g
// consecutive rows; the groups of a warp take consecutive rows, so short rows are read
// as one contiguous span. Each lane walks its row g apart; shuffles of width g finish.
// Arg ops index the column.
template <typename Op, typename T>
__device__ void reduce_rows(int rows, int cols, int g, const T* __restrict__ x, T* out_v,
                            i64* out_i) {
    typedef typename Op::Acc Acc;
    const int groups = SHUFFLE_THREADS / g;
    const int lane = threadIdx.x % g;
    const i64 first = (i64)blockIdx.x * 4 * groups + threadIdx.x / g;
    Fold<Op, T> acc[4];
#pragma unroll
    for (int k = 0; k < 4; k++) acc[k].start(lane, lane < cols && first + (i64)k * groups < rows);
    for (int c = lane; c < cols; c += g) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const i64 r = first + (i64)k * groups;
            if (r < rows) acc[k].add(x[r * cols + c], c);
        }
    }
#pragma unroll
    for (int k = 0; k < 4; k++) {
        Acc a = acc[k].result();
#pragma unroll
        for (int d = 16; d > 0; d >>= 1)  // a fixed trip count keeps acc[] in registers
            if (d < g) a = Op::combine(a, shfl_down_w(a, d, g));
        const i64 r = first + (i64)k * groups;
        if (lane == 0 && r < rows) Op::put(out_v, out_i, r, a);
    }
}

// rows_vec: rows of whole 16-byte vectors (cols a multiple of V = 16 / sizeof(T)), many
// of them: g lanes per row (cols / V rounded up to a power of two, at most 32), each lane
// 16-byte loads of V consecutive elements g·V apart, folded in column order (for arg ops
// each vector's best found first by a Fold of its own), then shuffles of width g. A thread takes 4 rows a grid stride apart at a time, so 4 vector
// loads are in flight per lane; the blocks stride over the matrix.
template <typename Op, typename T>
__device__ void reduce_rows_vec(int rows, int cols, int g, const T* __restrict__ x, T* out_v,
                                i64* out_i) {
    typedef typename Op::Acc Acc;
    constexpr int V = 16 / sizeof(T);
    const int groups = SHUFFLE_THREADS / g, lane = threadIdx.x % g, c = lane * V;
    const i64 stride = (i64)gridDim.x * groups;
    const bool vec = aligned16(x);  // always, for a whole allocation; else element loads
    for (i64 first = (i64)blockIdx.x * groups + threadIdx.x / g; first < rows; first += 4 * stride) {
        Acc acc[4];
#pragma unroll
        for (int k = 0; k < 4; k++) acc[k] = Op::identity();
        const T* row[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const i64 r = first + k * stride;
            row[k] = r < rows ? x + r * cols : nullptr;
        }
        for (int cc = c; cc < cols; cc += g * V) {
            T v[4][V];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                if (!row[k]) {
#pragma unroll
                    for (int e = 0; e < V; e++) v[k][e] = T(0);
                } else if (vec) {
                    ldv(row[k] + cc, v[k]);
                } else {
#pragma unroll
                    for (int e = 0; e < V; e++) v[k][e] = row[k][cc + e];
                }
            }
#pragma unroll
            for (int k = 0; k < 4; k++) {
                if constexpr (Op::ARG) {
                    // Each vector's best by its own scan, then one pair combine: the
                    // scans of the four rows' vectors are independent of the running
                    // pair, where one scan of a long row would be a single chain.
                    Fold<Op, T> f;
                    f.start(cc, true);
#pragma unroll
                    for (int e = 0; e < V; e++) f.add(v[k][e], cc + e);
                    acc[k] = Op::combine(acc[k], f.result());
                } else {
#pragma unroll
                    for (int e = 0; e < V; e++)
                        acc[k] = Op::combine(acc[k], Op::item(v[k][e], T(0), cc + e));
                }
            }
        }
#pragma unroll
        for (int k = 0; k < 4; k++) {
            Acc a = acc[k];
#pragma unroll
            for (int d = 16; d > 0; d >>= 1)
                if (d < g) a = Op::combine(a, shfl_down_w(a, d, g));
            const i64 r = first + k * stride;
            if (lane == 0 && r < rows) Op::put(out_v, out_i, r, a);
        }
    }
}

// rows_thread (arg ops): rows of at most RT_VECS whole 16-byte vectors (f32: 32
// columns, f64: 16), a thread per row. Its vectors' loads go out together, for two rows
// a grid stride apart, then a forward scan of the row in column order (Fold) and one
// put. No shuffles and no pair combines: on a tall, thin matrix rows_vec's four lanes
// per row spent most of their instructions on those, where a warp's 32 consecutive rows
// are one contiguous span of memory.
#define RT_VECS 8
template <typename Op, typename T>
__device__ void reduce_rows_thread(int rows, int cols, const T* __restrict__ x, T* out_v, i64* out_i) {
    static_assert(Op::ARG, "arg ops: the host sends the value ops to rows_vec");
    constexpr int V = 16 / sizeof(T);
    const int nv = cols / V;  // 1 ≤ nv ≤ RT_VECS (the caller's check)
    const i64 stride = (i64)gridDim.x * blockDim.x;
    const bool vec = aligned16(x);  // always, for a whole allocation; else element loads
    for (i64 first = (i64)blockIdx.x * blockDim.x + threadIdx.x; first < rows; first += 2 * stride) {
        T v[2][RT_VECS][V];
#pragma unroll
        for (int k = 0; k < 2; k++) {
            const i64 r = first + k * stride;
            const T* row = x + (r < rows ? r : 0) * cols;
#pragma unroll
            for (int j = 0; j < RT_VECS; j++) {
                if (j < nv) {
                    if (vec) {
                        ldv(row + j * V, v[k][j]);
                    } else {
#pragma unroll
                        for (int e = 0; e < V; e++) v[k][j][e] = row[j * V + e];
                    }
                }
            }
        }
#pragma unroll
        for (int k = 0; k < 2; k++) {
            const i64 r = first + k * stride;
            Fold<Op, T> f;
            f.start(0, true);
#pragma unroll
            for (int j = 0; j < RT_VECS; j++)
#pragma unroll
                for (int e = 0; e < V; e++)
                    if (j < nv) f.add(v[k][j][e], j * V + e);
            if (r < rows) Op::put(out_v, out_i, r, f.result());
        }
    }
}

// rows_block: for few long rows. Block 256 per (row, chunk): blockIdx.x is the row,
// blockIdx.y the chunk j of gridDim.y; chunk j takes the row's groups of 1024 columns
// j, j + chunks, j + 2·chunks, ... (interleaved, so that the blocks of a row read
// neighbouring memory at any moment rather than each its own distant span), thread t
// columns t + 256·k of each group into accumulator k; the block tree finishes. Output
// index chunk·rows + row (cols_finish folds the chunks of each row in a fixed order when
// there are several).
#define RB_GROUP 1024
template <typename Op, typename T>
__device__ void reduce_rows_block(int rows, int cols, const T* __restrict__ x, T* out_v, i64* out_i) {
    typedef typename Op::Acc Acc;
    const T* r = x + (i64)blockIdx.x * cols;
    const int first = blockIdx.y * RB_GROUP + threadIdx.x;
    const i64 step = (i64)gridDim.y * RB_GROUP;
    Fold<Op, T> acc[4];
#pragma unroll
    for (int k = 0; k < 4; k++) acc[k].start(first + 256 * k, first + 256 * k < cols);
    for (i64 g = first; g < cols; g += step) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const i64 c = g + 256 * k;
            if (c < cols) acc[k].add(r[c], (int)c);
        }
    }
    Acc a = Op::combine(Op::combine(acc[0].result(), acc[1].result()),
                        Op::combine(acc[2].result(), acc[3].result()));
    a = block_reduce<Op>(a);
    if (threadIdx.x == 0) Op::put(out_v, out_i, (i64)blockIdx.y * rows + blockIdx.x, a);
}

// cols: block 32×8; blockIdx.x picks 32 columns, blockIdx.y a chunk of rows. Thread
// (x, y) folds rows y, y+8, ... of its chunk in column x, 4 rows per iteration into 4
// accumulators (a warp reads 32 consecutive elements of a row: coalesced); the 8
// row-slices are folded in order through shared memory. Output index chunk·cols +
// column; arg ops index the row.
template <typename Op, typename T>
__device__ void reduce_cols(int rows, int cols, int rows_per_chunk, const T* __restrict__ x,
                            T* out_v, i64* out_i) {
    typedef typename Op::Acc Acc;
    __shared__ Acc sm[8][32];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const int r_begin = blockIdx.y * rows_per_chunk;
    const int r_end = (int)min((i64)rows, (i64)r_begin + rows_per_chunk);
    const int r0 = r_begin + threadIdx.y;
    // Accumulator k takes row r + 8·k of each group of four, and the first the rest.
    const bool whole = r0 + 24 < r_end;
    Fold<Op, T> acc[4];
#pragma unroll
    for (int k = 0; k < 4; k++) acc[k].start(r0 + 8 * k, c < cols && (k == 0 ? r0 < r_end : whole));
    if (c < cols) {
        int r = r0;
        for (; r + 24 < r_end; r += 32) {
#pragma unroll
            for (int k = 0; k < 4; k++) acc[k].add(x[(i64)(r + 8 * k) * cols + c], r + 8 * k);
        }
        for (; r < r_end; r += 8) acc[0].add(x[(i64)r * cols + c], r);
    }
    Acc a = Op::combine(Op::combine(acc[0].result(), acc[1].result()),
                        Op::combine(acc[2].result(), acc[3].result()));
    sm[threadIdx.y][threadIdx.x] = a;
    __syncthreads();
    if (threadIdx.y == 0 && c < cols) {
#pragma unroll
        for (int k = 1; k < 8; k++) a = Op::combine(a, sm[k][threadIdx.x]);
        Op::put(out_v, out_i, (i64)blockIdx.y * cols + c, a);
    }
}

// cols_vec: few rows (at most COLS_VEC_ROWS) of whole 16-byte vectors: a thread per V
// consecutive columns walks the rows in order, one 16-byte load per row (4 in flight),
// V accumulators; the threads stride over the column groups.
#define COLS_VEC_ROWS 64
template <typename Op, typename T>
__device__ void reduce_cols_vec(int rows, int cols, const T* __restrict__ x, T* out_v,
                                i64* out_i) {
    typedef typename Op::Acc Acc;
    constexpr int V = 16 / sizeof(T);
    const bool vec = aligned16(x);  // always, for a whole allocation; else element loads
    const i64 groups = cols / V;
    for (i64 q = (i64)blockIdx.x * blockDim.x + threadIdx.x; q < groups;
         q += (i64)gridDim.x * blockDim.x) {
        const i64 c = q * V;
        Fold<Op, T> acc[V];
#pragma unroll
        for (int e = 0; e < V; e++) acc[e].start(0, rows > 0);
#pragma unroll 4
        for (int r = 0; r < rows; r++) {
            T v[V];
            if (vec) {
                ldv(x + (i64)r * cols + c, v);
            } else {
#pragma unroll
                for (int e = 0; e < V; e++) v[e] = x[(i64)r * cols + c + e];
            }
#pragma unroll
            for (int e = 0; e < V; e++) acc[e].add(v[e], r);
        }
#pragma unroll
        for (int e = 0; e < V; e++) Op::put(out_v, out_i, c + e, acc[e].result());
    }
}

// cols_tall: many rows of few columns, whole 16-byte vectors (cols a multiple of V =
// 16 / sizeof(T), G = cols / V a power of two of at most 32): the tall-thin shapes (the
// k-means points). Block b takes rows [b·per, (b+1)·per); thread t keeps V accumulators
// for the vector q = t mod G of each row it reads, and reads rows l, l + L, l + 2L, ...
// of the chunk (l = t div G, L = 256 / G), four in flight (for f32 the next four are
// issued before the current four are combined): a warp's loads are 32
// consecutive vectors, whole rows. The L partials of each column are then folded in the
// order of l through shared memory. Output index chunk·cols + column (cols_finish folds
// the chunks in a fixed order).
template <typename Op, typename T>
__device__ void reduce_cols_tall(int rows, int cols, int rows_per_chunk, const T* __restrict__ x,
                                 T* out_v, i64* out_i) {
    typedef typename Op::Acc Acc;
    constexpr int V = 16 / sizeof(T);
    __shared__ Acc part[256 * V];  // [l][column]: L·cols = 256·V entries
    const int G = cols / V, L = 256 / G;
    const int t = threadIdx.x, q = t % G, l = t / G;
    const i64 r_begin = (i64)blockIdx.x * rows_per_chunk;
    const i64 r_end = min((i64)rows, r_begin + rows_per_chunk);
    const bool vec = aligned16(x);  // always, for a whole allocation; else element loads
    const T* base = x + (i64)q * V;
    Fold<Op, T> acc[V];
#pragma unroll
    for (int e = 0; e < V; e++) acc[e].start((int)(r_begin + l), r_begin + l < r_end);
    auto load = [&](i64 r, T (&v)[V]) {
        if (vec) {
            ldv(base + r * cols, v);
        } else {
#pragma unroll
            for (int e = 0; e < V; e++) v[e] = base[r * cols + e];
        }
    };
    i64 r = r_begin + l;
    if constexpr (sizeof(T) == 4) {
        // Four rows' loads in flight; the next four are issued before these are combined
        // (f32 only: f64's pairs would spill).
        T v[4][V];
        if (r + 3 * L < r_end)
#pragma unroll
            for (int k = 0; k < 4; k++) load(r + k * L, v[k]);
        for (; r + 3 * L < r_end; r += 4 * L) {
            T cur[4][V];
#pragma unroll
            for (int k = 0; k < 4; k++)
#pragma unroll
                for (int e = 0; e < V; e++) cur[k][e] = v[k][e];
            if (r + 7 * L < r_end)
#pragma unroll
                for (int k = 0; k < 4; k++) load(r + (4 + k) * L, v[k]);
#pragma unroll
            for (int k = 0; k < 4; k++)
#pragma unroll
                for (int e = 0; e < V; e++) acc[e].add(cur[k][e], (int)(r + k * L));
        }
    } else {
        for (; r + 3 * L < r_end; r += 4 * L) {
            T v[4][V];
#pragma unroll
            for (int k = 0; k < 4; k++) load(r + k * L, v[k]);
#pragma unroll
            for (int k = 0; k < 4; k++)
#pragma unroll
                for (int e = 0; e < V; e++) acc[e].add(v[k][e], (int)(r + k * L));
        }
    }
    for (; r < r_end; r += L) {
        T v[V];
        load(r, v);
#pragma unroll
        for (int e = 0; e < V; e++) acc[e].add(v[e], (int)r);
    }
#pragma unroll
    for (int e = 0; e < V; e++) part[l * cols + q * V + e] = acc[e].result();
    __syncthreads();
    if (t < cols) {
        Acc a = part[t];
        for (int j = 1; j < L; j++) a = Op::combine(a, part[j * cols + t]);
        Op::put(out_v, out_i, (i64)blockIdx.x * cols + t, a);
    }
}

// cols_finish: folds the `chunks` partials of each column (stored chunk-major, `cols`
// apart) in a fixed order: a block takes 32 columns, warp w folds its lane's column over
// the chunks [w·per, (w + 1)·per) in chunk order (per = ⌈chunks / 8⌉, eight loads in
// flight at a time), then warp 0 folds the eight results in warp order. With at most 8
// chunks that is chunk order. Also folds the column chunks of rows_block (with cols =
// rows).
template <typename Op, typename T>
__device__ void reduce_cols_finish(int chunks, int cols, const T* in_v, const i64* in_i,
                                   T* out_v, i64* out_i) {
    typedef typename Op::Acc Acc;
    __shared__ Acc part[8][32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int c = blockIdx.x * 32 + lane;
    const int per = (chunks + 7) / 8, k0 = warp * per, k1 = min(chunks, k0 + per);
    if (c < cols && k0 < k1) {
        Acc a = Op::get(in_v, in_i, (i64)k0 * cols + c);
        int k = k0 + 1;
        for (; k + 7 < k1; k += 8) {
            Acc b[8];
#pragma unroll
            for (int u = 0; u < 8; u++) b[u] = Op::get(in_v, in_i, (i64)(k + u) * cols + c);
#pragma unroll
            for (int u = 0; u < 8; u++) a = Op::combine(a, b[u]);
        }
        for (; k < k1; k++) a = Op::combine(a, Op::get(in_v, in_i, (i64)k * cols + c));
        part[warp][lane] = a;
    }
    __syncthreads();
    if (warp == 0 && c < cols) {
        Acc a = part[0][lane];  // chunks ≥ 1, so warp 0 has a run
        for (int w = 1; w < 8 && w * per < chunks; w++) a = Op::combine(a, part[w][lane]);
        Op::put(out_v, out_i, c, a);
    }
}
