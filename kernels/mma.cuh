// mma.cuh: the tensor-core GEMM of matmul.cu's tensor_core rungs, on warp-level
// mma.sync (sm_80 and later). Handed to NVRTC as an in-memory header, as tiles.cuh is.
//
// Block tile 128×BN: f32 128×128, 256 threads = 8 warps as 2 (M) × 4 (N); f64 128×64,
// 128 threads = 4 warps as 2 × 2, two blocks per SM (cuBLAS's DGEMM shape on Hopper: one
// block's barrier and loads overlap the other's products). A warp computes 64×32 of C
// from fragments read out of shared memory. K-tiles of 128 bytes per row of A (32 f32,
// 16 f64) go through a three-stage cp.async pipeline (dynamic shared memory, TC_SMEM(T)
// bytes, which the launch grants; the f64 rows are padded).
// f32: mma.m16n8k8 on TF32 operands rounded to nearest (cvt.rna), f32 accumulation.
// MODE 1 (TF32): one product per step, operands carrying 11 significant bits. MODE 3
// (3xTF32): each operand x split into big = tf32(x) and small = tf32(x − big), which
// together carry 22 bits; the products small·big, big·small and big·big (the small ones
// first) are accumulated, small·small (below f32's rounding) being left out.
// f64: mma.m16n8k8.f64 (DMMA; four m8n8k4 before sm_90), IEEE double products and sums:
// MODE does not apply.
// Sums run in a fixed order per output (no atomics): bitwise reproducible run to run.
#pragma once
#include "common.cuh"
#include "tiles.cuh"

template <typename T> struct Tc;
template <> struct Tc<float> {
    static const int BK = 32, BN = 128, THREADS = 256, WN = 4;  // WN: warps along N
    static const int STAGES = 3;
    static const int A_STAGE = 128 * BK, B_STAGE = BK * BN;     // elements per stage
    // Element (r, c) of A's 128×BK stage tile: chunk c/4 XOR bits 0–2 of r.
    __device__ __forceinline__ static int a_at(int r, int c) {
        return r * BK + (c ^ ((r & 7) << 2));
    }
    // Element (k, n) of B's BK×BN stage tile: chunk n/4 XOR bits 0–1 of k, times 2.
    __device__ __forceinline__ static int b_at(int k, int n) {
        return k * BN + (n ^ ((k & 3) << 3));
    }
};
// f64: rows padded by 4 elements (32 bytes, a quarter of the banks) instead of permuted:
// the four rows a half-warp's 8-byte fragment reads meet fall in four different quarters,
// and every fragment read is one base register plus a constant (an XOR of row bits into
// the column costs address arithmetic on every read).
template <> struct Tc<double> {
    static const int BK = 16, BN = 64, THREADS = 128, WN = 2, STAGES = 3;
    static const int LDA = BK + 4, LDB = BN + 4;
    static const int A_STAGE = 128 * LDA, B_STAGE = BK * LDB;
    __device__ __forceinline__ static int a_at(int r, int c) { return r * LDA + c; }
    __device__ __forceinline__ static int b_at(int k, int n) { return k * LDB + n; }
    // BT (B given as its transpose, N×K row-major, as M·Mᵀ reads M): B's stage holds
    // BN rows of BK, laid out as A's.
    static const int BT_STAGE = BN * LDA;
    __device__ __forceinline__ static int bt_at(int n, int k) { return n * LDA + k; }
};
// B's stage of gemm_tc<T, ..., BT>, in elements.
template <typename T, bool BT> struct TcB {
    static const int STAGE = Tc<T>::B_STAGE;
};
template <> struct TcB<double, true> {
    static const int STAGE = Tc<double>::BT_STAGE;
};
// The dynamic shared memory of gemm_tc<T>: STAGES stages of A's 128×BK tile and B's BK×BN
// (A_STAGE and B_STAGE elements, padding included).
#define TC_SMEM(T) (Tc<T>::STAGES * (Tc<T>::A_STAGE + Tc<T>::B_STAGE) * (int)sizeof(T))
// The same for gemm_tc<double, ..., BT = true>.
#define TC_SMEM_BT (Tc<double>::STAGES * (Tc<double>::A_STAGE + Tc<double>::BT_STAGE) * 8)

__device__ __forceinline__ u32 to_tf32(float x) {
    u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}
// x = big + small + O(2⁻²²·|x|); small is 0 where x is not finite, so Inf and NaN pass
// through big alone, as they would through an f32 product.
__device__ __forceinline__ void split_tf32(float x, u32& big, u32& small) {
    big = to_tf32(x);
    const float rest = x - __uint_as_float(big);
    small = to_tf32(rest == rest ? rest : 0.0f);
}

// An operand for MODE: rounded to TF32 (1), or split into big and small (3).
template <int MODE>
__device__ __forceinline__ void tf32_operand(float x, u32& big, u32& small) {
    if (MODE == 3) {
        split_tf32(x, big, small);
    } else {
        big = to_tf32(x);
    }
}

// One m16n8k8 mma with the types `types` on C (constraint CR), A and B (constraint AR).
#define NDGPU_MMA_M16N8K8(types, CR, AR, c, a, b)                                          \
    asm volatile("mma.sync.aligned.m16n8k8.row.col." types                                 \
                 " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                \
                 : CR(c[0]), CR(c[1]), CR(c[2]), CR(c[3])                                  \
                 : AR(a[0]), AR(a[1]), AR(a[2]), AR(a[3]), AR(b[0]), AR(b[1]))

__device__ __forceinline__ void mma_tf32(float c[4], const u32 a[4], const u32 b[2]) {
#if __CUDA_ARCH__ >= 800
    NDGPU_MMA_M16N8K8("f32.tf32.tf32.f32", "+f", "r", c, a, b);
#endif
}
__device__ __forceinline__ void mma_f64_8x8x4(double& c0, double& c1, double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, "
                 "{%0,%1};\n"
                 : "+d"(c0), "+d"(c1)
                 : "d"(a), "d"(b));
}
// C (16×8) += A (16×8) · B (8×8) in f64, fragments laid out as mma_tf32's: the sm_90
// shape where there is one, else four m8n8k4 (rows g and g + 8, K-halves t and t + 4),
// each output's terms added in the same order.
__device__ __forceinline__ void mma_f64(double c[4], const double a[4], const double b[2]) {
#if __CUDA_ARCH__ >= 900
    NDGPU_MMA_M16N8K8("f64.f64.f64.f64", "+d", "d", c, a, b);
#elif __CUDA_ARCH__ >= 800
    mma_f64_8x8x4(c[0], c[1], a[0], b[0]);
    mma_f64_8x8x4(c[0], c[1], a[2], b[1]);
    mma_f64_8x8x4(c[2], c[3], a[1], b[0]);
    mma_f64_8x8x4(c[2], c[3], a[3], b[1]);
#endif
}


// One K-tile of A (rows m0.., columns k0..) and of B (rows k0.., columns n0..) into a
// stage: each of the block's threads moves LOADS 16-byte chunks of each (Panel::put: whole
// chunks inside the matrices asynchronously, the rest element by element, zeros outside).
// BT: B is N×K row-major (rows n0.., columns k0..), staged as A is.
template <typename T, bool BT = false>
__device__ __forceinline__ void tc_stage(const T* A, const T* B, int M, int N, int K, int lda,
                                         int ldb, int m0, int n0, int k0, bool vec_a,
                                         bool vec_b, T* As, T* Bs) {
    constexpr int TH = Tc<T>::THREADS;
    typedef Panel<T, 128, Tc<T>::BK, TH> PA;
    typedef Panel<T, Tc<T>::BK, Tc<T>::BN, TH> PB;
#pragma unroll
    for (int s = 0; s < PA::LOADS; ++s) {
        const int id = threadIdx.x + s * TH, r = id / PA::PER_ROW, c = (id % PA::PER_ROW) * PA::V;
        PA::put(As + Tc<T>::a_at(r, c), A + (i64)(m0 + r) * lda + k0 + c, vec_a, m0 + r < M,
                k0 + c, K);
    }
    if constexpr (BT) {
        typedef Panel<T, Tc<T>::BN, Tc<T>::BK, TH> PT;
        // One chunk at a time: this path (rows not whole chunks) is rare, and unrolled it
        // would hold more registers than the kernel has.
#pragma unroll 1
        for (int s = 0; s < PT::LOADS; ++s) {
            const int id = threadIdx.x + s * TH, r = id / PT::PER_ROW,
                      c = (id % PT::PER_ROW) * PT::V;
            PT::put(Bs + Tc<T>::bt_at(r, c), B + (i64)(n0 + r) * ldb + k0 + c, vec_b,
                    n0 + r < N, k0 + c, K);
        }
        return;
    }
#pragma unroll
    for (int s = 0; s < PB::LOADS; ++s) {
        const int id = threadIdx.x + s * TH, r = id / PB::PER_ROW, c = (id % PB::PER_ROW) * PB::V;
        PB::put(Bs + Tc<T>::b_at(r, c), B + (i64)(k0 + r) * ldb + n0 + c, vec_b, k0 + r < K,
                n0 + c, N);
    }
}

// tc_stage where both operands' rows are whole 16-byte chunks (K and N multiples of V,
// A and B 16-byte aligned): a thread's chunks lie at fixed offsets from two pointers
// fixed at the start, and those outside the matrices are zero-filled by cp.async
// itself, without a branch (a source size of 0 reads nothing at the address given).
// PAIR (gemm_tc's PAIR): A's stage rows 0..63 are rows m0.. and rows 64..127 are rows
// m0 + 128..; B is not loaded.
template <typename T, bool BT = false, bool PAIR = false>
struct TcFast {
    typedef Panel<T, 128, Tc<T>::BK, Tc<T>::THREADS> PA;
    typedef Panel<T, Tc<T>::BK, Tc<T>::BN, Tc<T>::THREADS> PB;
    typedef Panel<T, Tc<T>::BN, Tc<T>::BK, Tc<T>::THREADS> PT;  // BT: B's rows
    const T* a;      // this thread's first chunk of A at k0 = 0 (row m0 + ra, column ca)
    const T* b;      // and of B (row rb, column n0 + cb; BT: row n0 + rb, column cb)
    int ra, ca, rb, cb;
    unsigned a_in;   // bit s: A's chunk s lies in a row < M
    unsigned b_in;   // B's chunks lie in columns < N (BT: bit s, chunk s in a row < N)
    int lda, ldb;    // A's and B's leading dimensions
    __device__ __forceinline__ TcFast(const T* A, const T* B, int M, int N, int m0, int n0,
                                      int lda_, int ldb_)
        : lda(lda_), ldb(ldb_) {
        const int t = threadIdx.x;
        a_in = rows<PA>(A, lda, m0, M, ra, ca, a);
        if constexpr (BT) {
            b_in = rows<PT>(B, ldb, n0, N, rb, cb, b);
        } else {
            rb = t / PB::PER_ROW;
            cb = (t % PB::PER_ROW) * PB::V;
            b = B + (i64)rb * ldb + n0 + cb;
            b_in = n0 + cb < N;
        }
    }
    // A panel P of the K-major X (rows from r0, `limit` of them, ld apart): this thread's
    // row r and column c in it, its first chunk's address p, and a bit per chunk s whose
    // row lies inside X.
    template <typename P>
    __device__ __forceinline__ static unsigned rows(const T* X, int ld, int r0, int limit, int& r,
                                                    int& c, const T*& p) {
        r = threadIdx.x / P::PER_ROW;
        c = (threadIdx.x % P::PER_ROW) * P::V;
        p = X + (i64)(r0 + r) * ld + c;
        unsigned in = 0;
#pragma unroll
        for (int s = 0; s < P::LOADS; ++s)
            if (r0 + r + s * P::STEP + gap<P>(s) < limit) in |= 1u << s;
        return in;
    }
    // PAIR: the rows skipped before A's chunk s (the stage's second half).
    template <typename P> __device__ __forceinline__ static constexpr int gap(int s) {
        return PAIR && s * P::STEP >= 64 ? 64 : 0;
    }
    // The K-tile from k0 into a stage.
    __device__ __forceinline__ void stage(int K, int k0, T* As, T* Bs) const {
#pragma unroll
        for (int s = 0; s < PA::LOADS; ++s) {
            const bool in = ((a_in >> s) & 1) && k0 + ca < K;
            const T* q = a + (i64)(s * PA::STEP + gap<PA>(s)) * lda + k0;
            cp_async16_zfill(As + Tc<T>::a_at(ra + s * PA::STEP, ca), q, in);
        }
        if constexpr (PAIR) return;
        if constexpr (BT) {
#pragma unroll
            for (int s = 0; s < PT::LOADS; ++s) {
                const bool in = ((b_in >> s) & 1) && k0 + cb < K;
                const T* q = b + (i64)s * PT::STEP * ldb + k0;
                cp_async16_zfill(Bs + Tc<T>::bt_at(rb + s * PT::STEP, cb), q, in);
            }
            return;
        }
#pragma unroll
        for (int s = 0; s < PB::LOADS; ++s) {
            const int k = rb + s * PB::STEP;
            const bool in = b_in && k0 + k < K;
            const T* q = b + (i64)(k0 + s * PB::STEP) * ldb;
            cp_async16_zfill(Bs + Tc<T>::b_at(k, cb), q, in);
        }
    }
};

// The warp's 64×32 of C from one stage: f32 as 4×4 mma.m16n8k8 per K-step of 8.
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k8", tf32): with g = lane/4
// and t = lane%4, A's registers hold (g, t), (g+8, t), (g, t+4), (g+8, t+4), B's (t, g)
// and (t+4, g), C's (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
template <int MODE, bool BT = false>
__device__ __forceinline__ void tc_compute(const float* As, const float* Bs, int wm, int wn,
                                           float acc[4][4][4]) {
    static_assert(!BT, "f32 reads B as K×N");
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int kk = 0; kk < Tc<float>::BK; kk += 8) {
        u32 a[4][4], as[4][4], b[4][2], bs[4][2];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int r = wm * 64 + i * 16 + g;
            const float x[4] = {As[Tc<float>::a_at(r, kk + t)], As[Tc<float>::a_at(r + 8, kk + t)],
                                As[Tc<float>::a_at(r, kk + t + 4)],
                                As[Tc<float>::a_at(r + 8, kk + t + 4)]};
#pragma unroll
            for (int e = 0; e < 4; ++e) tf32_operand<MODE>(x[e], a[i][e], as[i][e]);
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int n = wn * 32 + j * 8 + g;
            const float x[2] = {Bs[Tc<float>::b_at(kk + t, n)], Bs[Tc<float>::b_at(kk + t + 4, n)]};
#pragma unroll
            for (int e = 0; e < 2; ++e) tf32_operand<MODE>(x[e], b[j][e], bs[j][e]);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                if (MODE == 3) {
                    mma_tf32(acc[i][j], as[i], b[j]);
                    mma_tf32(acc[i][j], a[i], bs[j]);
                }
                mma_tf32(acc[i][j], a[i], b[j]);
            }
    }
}
// f64: the same 4×4 tiles of 16×8 per K-step of 8, on mma.m16n8k8.f64 (same fragment
// layouts, no rounding of the operands). (Reading A's columns t and t + 4 as one 16-byte
// pair, from a K order permuted to put them side by side, cost more than it saved: the
// fragment wants them two registers apart, so every pair was moved.)
template <int MODE, bool BT = false>
__device__ __forceinline__ void tc_compute(const double* As, const double* Bs, int wm, int wn,
                                           double acc[4][4][4]) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    typedef Tc<double> C;
#pragma unroll
    for (int kk = 0; kk < C::BK; kk += 8) {
        double a[4][4], b[4][2];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int r = wm * 64 + i * 16 + g;
            a[i][0] = As[C::a_at(r, kk + t)];
            a[i][1] = As[C::a_at(r + 8, kk + t)];
            a[i][2] = As[C::a_at(r, kk + t + 4)];
            a[i][3] = As[C::a_at(r + 8, kk + t + 4)];
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int n = wn * 32 + j * 8 + g;
            b[j][0] = Bs[BT ? C::bt_at(n, kk + t) : C::b_at(kk + t, n)];
            b[j][1] = Bs[BT ? C::bt_at(n, kk + t + 4) : C::b_at(kk + t + 4, n)];
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) mma_f64(acc[i][j], a[i], b[j]);
    }
}

// The accumulator per thread: 4×4 tiles of 16×8, 4 values each; its element (i, j, e)
// is C's row wm·64 + i·16 + g + (e / 2)·8 and column wn·32 + j·8 + 2t + e % 2 within the
// block tile.
// CHUNKED: each K-tile is summed into a fresh fragment, added to the total in IEEE f32
// afterwards. The tensor cores' own f32 accumulation does not round to nearest (Fasi et
// al. 2021 found truncation in earlier generations' tensor cores); accumulated over all
// of K, that bias grows with K and, on inputs without cancellation, swamps 3xTF32's
// accuracy (docs/kernels.md). DMMA rounds as IEEE does.
template <typename T> struct TcAcc {
    typedef T type[4][4][4];
    static const int I = 4, E = 4;
    static const bool CHUNKED = sizeof(T) == 4;
};
template <typename T>
__device__ __forceinline__ void tc_zero(typename TcAcc<T>::type acc) {
#pragma unroll
    for (int i = 0; i < TcAcc<T>::I; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < TcAcc<T>::E; ++e) acc[i][j][e] = T(0);
}

// gemm_tc's K loop: acc += the block tile's product over the K-tiles kt0 .. kt0 + tiles − 1
// (of BK columns of A each), through a three-stage cp.async pipeline; FAST: the stages are
// loaded by TcFast (both operands in whole chunks). PAIR (FAST, BT): B is A's stage
// itself, from row 64·wm (see gemm_tc).
template <typename T, int MODE, bool FAST, bool BT, bool PAIR = false>
__device__ __forceinline__ void tc_mainloop(int M, int N, int K, const T* A, const T* B, int lda,
                                            int ldb, int m0, int n0, bool vec_a, bool vec_b, T* As,
                                            T* Bs, int wm, int wn, int kt0, int tiles,
                                            typename TcAcc<T>::type acc) {
    constexpr int BK = Tc<T>::BK, STAGES = Tc<T>::STAGES;
    typedef TcAcc<T> Acc;
    typename Acc::type part;
    constexpr int B_STAGE = TcB<T, BT>::STAGE;
    static_assert(!PAIR || (FAST && BT), "PAIR reads B from A's stage");
    const TcFast<T, BT, PAIR> ld(A, B, M, N, m0, n0, lda, ldb);
    auto stage = [&](int kt, int s) {
        T* const as = As + s * Tc<T>::A_STAGE;
        T* const bs = Bs + s * B_STAGE;
        if (FAST) {
            ld.stage(K, (kt0 + kt) * BK, as, bs);
        } else {
            tc_stage<T, BT>(A, B, M, N, K, lda, ldb, m0, n0, (kt0 + kt) * BK, vec_a, vec_b, as,
                            bs);
        }
    };
    // Stages 0 and 1 in flight; one commit group per tile, empty past the last, so that
    // wait_group<STAGES − 2> always means "tile t has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) stage(s, s);
        cp_async_commit();
    }
    // The next tile's copies come after tile t's products, so that their issue fills the
    // products' gaps, and on the fast path with no branch around them. Before the
    // products, the wait and the barrier: tile t is visible to every thread, and every
    // thread is done with tile t − 1, whose stage the copies overwrite.
    if constexpr (FAST && !Acc::CHUNKED) {
        // f64: a loop while there is a next tile, then the last STAGES − 1 tiles' products.
        auto products = [&](int t) {
            cp_async_wait<STAGES - 2>();
            __syncthreads();
            const T* const as = As + (t % STAGES) * Tc<T>::A_STAGE;
            tc_compute<MODE, BT>(as, PAIR ? as + Tc<T>::a_at(64 * wm, 0) : Bs + (t % STAGES) * B_STAGE,
                                 wm, wn, acc);
        };
        int t = 0;
        for (; t + STAGES - 1 < tiles; ++t) {
            products(t);
            stage(t + STAGES - 1, (t + STAGES - 1) % STAGES);
            cp_async_commit();
        }
        for (; t < tiles; ++t) {
            products(t);
            cp_async_commit();
        }
    } else {
        // f32 (the split form made its 3xTF32 kernels spill) and the general path: one
        // loop; on the fast path the copies past the last tile are zero fills of a free
        // stage (k0 ≥ K: source size 0).
        for (int t = 0; t < tiles; ++t) {
            cp_async_wait<STAGES - 2>();
            __syncthreads();
            if (Acc::CHUNKED) {
                tc_zero<T>(part);
                tc_compute<MODE>(As + (t % STAGES) * Tc<T>::A_STAGE, Bs + (t % STAGES) * B_STAGE, wm,
                                 wn, part);
#pragma unroll
                for (int i = 0; i < Acc::I; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j)
#pragma unroll
                        for (int e = 0; e < Acc::E; ++e) acc[i][j][e] += part[i][j][e];
            } else {
                tc_compute<MODE, BT>(As + (t % STAGES) * Tc<T>::A_STAGE, Bs + (t % STAGES) * B_STAGE,
                                     wm, wn, acc);
            }
            const int next = t + STAGES - 1;
            if (FAST || next < tiles) stage(next, next % STAGES);
            cp_async_commit();
        }
        cp_async_wait<0>();
    }
}

// Two neighbouring elements of C as one aligned store.
__device__ __forceinline__ void tc_store_pair(float* p, float a, float b) {
    *reinterpret_cast<float2*>(p) = make_float2(a, b);
}
__device__ __forceinline__ void tc_store_pair(double* p, double a, double b) {
    *reinterpret_cast<double2*>(p) = make_double2(a, b);
}

// Whether the rows of X, `len` elements each, are whole 16-byte chunks: gemm_tc's fast
// path takes A's and B's rows so (and M·Mᵀ's PAIR blocks, whose B is A, only where A's are).
template <typename T> __device__ __forceinline__ bool tc_rows16(int len, const T* X) {
    return len % V16<T>::N == 0 && aligned16(X);
}

// gemm_tc's products: acc = the block tile (tm, tn)'s product over the K-tiles
// kt0 .. kt0 + ktiles − 1 (see gemm_tc for the flags).
template <typename T, int MODE, bool BT = false, bool PAIR = false, bool WHOLE = false>
__device__ __forceinline__ void gemm_tc_acc(int M, int N, int K, const T* A, const T* B, int tm,
                                            int tn, int lda, int ldb, int kt0, int ktiles,
                                            typename TcAcc<T>::type acc) {
    constexpr int BN = Tc<T>::BN, STAGES = Tc<T>::STAGES;
    // TC_SMEM(T) (BT: TC_SMEM_BT) bytes of dynamic shared memory: A's stages, then B's.
    extern __shared__ __align__(16) unsigned char tc_smem[];
    T* const As = reinterpret_cast<T*>(tc_smem);
    T* const Bs = As + STAGES * Tc<T>::A_STAGE;
    const int m0 = tm * 128, n0 = tn * BN;
    const int warp = threadIdx.x / 32, wm = warp / Tc<T>::WN, wn = warp % Tc<T>::WN;
    const bool vec_a = tc_rows16(K, A) && lda % V16<T>::N == 0;
    const bool vec_b = tc_rows16(BT ? K : N, B) && ldb % V16<T>::N == 0;
    tc_zero<T>(acc);
    // Two copies of the main loop, so that neither holds the other's addressing.
    if constexpr (PAIR) {
        tc_mainloop<T, MODE, true, BT, true>(M, N, K, A, B, lda, ldb, m0, n0, true, true, As, Bs,
                                             wm, wn, kt0, ktiles, acc);
    } else if (WHOLE || (vec_a && vec_b)) {
        tc_mainloop<T, MODE, true, BT>(M, N, K, A, B, lda, ldb, m0, n0, true, true, As, Bs, wm, wn,
                                       kt0, ktiles, acc);
    } else {
        tc_mainloop<T, MODE, false, BT>(M, N, K, A, B, lda, ldb, m0, n0, vec_a, vec_b, As, Bs, wm,
                                        wn, kt0, ktiles, acc);
    }
}

// gemm_tc's stores: C = alpha·acc + beta·C at the block tile (tm, tn), each accumulator
// element at its place in the tile (TcAcc), those outside C left out (see gemm_tc).
template <typename T, bool SYM = false, bool PAIR = false>
__device__ __forceinline__ void tc_store(int M, int N, T alpha, T beta, T* C, int tm, int tn,
                                         int ldc, typename TcAcc<T>::type acc) {
    const int m0 = tm * 128, n0 = tn * Tc<T>::BN;
    const int warp = threadIdx.x / 32, wm = warp / Tc<T>::WN, wn = warp % Tc<T>::WN;
    const int lane = threadIdx.x % 32, g = lane / 4, t2 = (lane % 4) * 2;
    // A thread's two neighbouring outputs (e and e + 1) go out as one store of 2·sizeof(T)
    // bytes where both lie in C and their address is aligned to it (N even, C aligned):
    // half the store instructions, on the stores that bound short-K products.
    const bool pairs = !SYM && ldc % 2 == 0 && ((unsigned long long)C % (2 * sizeof(T))) == 0;
#pragma unroll
    for (int i = 0; i < TcAcc<T>::I; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = (PAIR ? (tm + wm) * 128 : m0 + wm * 64) + i * 16 + g + h * 8;
                const int col = (PAIR ? (tm + wm) * 128 : n0) + wn * 32 + j * 8 + t2;
                const T v0 = alpha * acc[i][j][2 * h], v1 = alpha * acc[i][j][2 * h + 1];
                if (row >= M) continue;
                if (SYM) {
                    if (col < N && row <= col)
                        C[(i64)row * ldc + col] = C[(i64)col * ldc + row] = v0;
                    if (col + 1 < N && row <= col + 1)
                        C[(i64)row * ldc + col + 1] = C[(i64)(col + 1) * ldc + row] = v1;
                } else if (pairs && col + 1 < N) {
                    T* p = C + (i64)row * ldc + col;
                    tc_store_pair(p, beta == T(0) ? v0 : v0 + beta * p[0],
                                  beta == T(0) ? v1 : v1 + beta * p[1]);
                } else {
                    T* p = C + (i64)row * ldc + col;
                    if (col < N) p[0] = beta == T(0) ? v0 : v0 + beta * p[0];
                    if (col + 1 < N) p[1] = beta == T(0) ? v1 : v1 + beta * p[1];
                }
            }
}

// A partial accumulator of a block tile (stream-K, tc_stream below) to a slot of the
// workspace and back: element (i, j, e) of thread th at (e + 4·(j + 4·i))·THREADS + th,
// so that each load and store of a warp is 32 neighbouring elements.
template <typename T> struct TcSlot {
    static const int ELEMS = TcAcc<T>::I * 4 * TcAcc<T>::E, SIZE = ELEMS * Tc<T>::THREADS;
    __device__ __forceinline__ static i64 at(int i, int j, int e) {
        return (i64)((i * 4 + j) * TcAcc<T>::E + e) * Tc<T>::THREADS + threadIdx.x;
    }
};
template <typename T>
__device__ __forceinline__ void tc_put_slot(T* slot, typename TcAcc<T>::type acc) {
#pragma unroll
    for (int i = 0; i < TcAcc<T>::I; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < TcAcc<T>::E; ++e) slot[TcSlot<T>::at(i, j, e)] = acc[i][j][e];
}
// acc (+)= the slot (ADD: added in the order of the calls).
template <typename T, bool ADD>
__device__ __forceinline__ void tc_get_slot(const T* slot, typename TcAcc<T>::type acc) {
#pragma unroll
    for (int i = 0; i < TcAcc<T>::I; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < TcAcc<T>::E; ++e) {
                const T v = slot[TcSlot<T>::at(i, j, e)];
                acc[i][j][e] = ADD ? acc[i][j][e] + v : v;
            }
}

// C = alpha·A·B + beta·C (C not read when beta == 0) with A M×K, B K×N, C M×N row-major
// (leading dimensions lda, ldb, ldc; BT: B's rows ldb apart),
// on the grouped 1-D grid of 128×BN tiles (grouped_tile, matmul.cu); tile (tm, tn) is
// rows from tm·128 and columns from tn·BN. SYM (gram.cu's M·Mᵀ, with B = Aᵀ, the tiles that
// meet the upper triangle, beta = 0): each result on or above the diagonal is written to
// C[row][col] and to C[col][row]. BT (f64): B is given as Bᵀ, N×K row-major (M·Mᵀ passes
// M itself), and its stages are laid out as A's. PAIR (SYM, BT, A = B, K and A's rows whole
// 16-byte chunks): the upper triangles of the 64×64 blocks on C's diagonal at rows
// 128·tm and 128·(tm + 1), each the product of A's 64 rows there with themselves: warp
// rows wm take the block at 128·(tm + wm), B read from A's stage (no B stage loaded).
// WHOLE: the caller vouches that A's and B's rows are whole 16-byte chunks (the fast path
// alone is compiled).
template <typename T, int MODE, bool SYM = false, bool BT = false, bool PAIR = false,
          bool WHOLE = false>
__device__ __forceinline__ void gemm_tc(int M, int N, int K, T alpha, const T* A, const T* B,
                                        T beta, T* C, int tm, int tn, int lda, int ldb, int ldc) {
    static_assert(!PAIR || (SYM && BT), "PAIR is M·Mᵀ's");
    typename TcAcc<T>::type acc;
    gemm_tc_acc<T, MODE, BT, PAIR, WHOLE>(M, N, K, A, B, tm, tn, lda, ldb, 0,
                                          (K + Tc<T>::BK - 1) / Tc<T>::BK, acc);
    tc_store<T, SYM, PAIR>(M, N, alpha, beta, C, tm, tn, ldc, acc);
}

// ---- stream-K over gemm_tc's blocks (Osama et al., 2023, "Stream-K") -----------------
// Work items (a GEMM's tiles of C, M·Mᵀ's upper blocks) of S units of one K-tile each,
// numbered item after item. The first `skt` items (the stream items, U = skt·S units) are
// dealt out over blocks 0..P−1 as contiguous ranges; block P + d takes item skt + d whole
// (the blocks after the stream ones fill the places they leave: one launch, no wait
// between the two kinds). An item wholly inside one block's range is stored by it; a
// part of an item (where a range begins or ends) goes to the block's slot of W, 2b where
// the item is the first its range meets, 2b + 1 where it is the last, and tc_stream_fix
// adds each item's parts in the order of K (bitwise reproducible) and stores it. P ≤ U,
// so no range is empty; all the items' units number less than 2³¹.
// Items: product(item, k0, count, acc), acc = its product over K-tiles k0..k0+count−1;
// store(item, acc).
struct StreamCut {
    int units, P;
    // The first unit of block b's range (b ≤ P).
    __device__ __forceinline__ int lo(int b) const { return (int)((i64)b * units / P); }
    // The block whose range holds unit u.
    __device__ __forceinline__ int owner(int u) const {
        int b = (int)((i64)u * P / units);
        while (b + 1 < P && lo(b + 1) <= u) ++b;
        while (b > 0 && lo(b) > u) --b;
        return b;
    }
};

template <typename T, typename Items>
__device__ __forceinline__ void tc_stream(const Items& items, int K, T* W, int skt, int P) {
    const int S = (K + Tc<T>::BK - 1) / Tc<T>::BK, b = blockIdx.x;
    const StreamCut cut{skt * S, P};
    // This block's units [u, hi): a stream range, or one whole item after them.
    int u = b < P ? cut.lo(b) : (skt + b - P) * S;
    const int hi = b < P ? cut.lo(b + 1) : u + S;
    typename TcAcc<T>::type acc;
    int slot = 2 * b;
#pragma unroll 1
    for (; u < hi; ++slot) {
        const int t = u / S, first = t * S, end = min(hi, first + S);
        items.product(t, u - first, end - u, acc);
        if (u == first && end == first + S) {
            items.store(t, acc);
        } else {
            tc_put_slot<T>(W + (i64)min(slot, 2 * b + 1) * TcSlot<T>::SIZE, acc);
        }
        u = end;
        // Every warp is done with the stages before the next item's copies refill them.
        __syncthreads();
    }
}

// Stream item blockIdx.x: where blocks shared it, the sum of their parts in block order
// (the order of K) stored; where one block held it whole, nothing (it is stored).
template <typename T, typename Items>
__device__ __forceinline__ void tc_stream_fix(const Items& items, int K, const T* W, int skt,
                                              int P) {
    const int S = (K + Tc<T>::BK - 1) / Tc<T>::BK, t = blockIdx.x;
    const StreamCut cut{skt * S, P};
    const int first = t * S, end = first + S;
    const int b0 = cut.owner(first);
    if (cut.lo(b0 + 1) >= end) return;  // (lo(P) = U)
    typename TcAcc<T>::type acc;
    tc_get_slot<T, false>(W + (i64)(2 * b0 + (cut.lo(b0) < first ? 1 : 0)) * TcSlot<T>::SIZE,
                          acc);
    for (int b = b0 + 1; b < P && cut.lo(b) < end; ++b)
        tc_get_slot<T, true>(W + (i64)(2 * b) * TcSlot<T>::SIZE, acc);
    items.store(t, acc);
}
