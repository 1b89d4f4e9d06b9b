// mma.cuh: the tensor-core GEMM of matmul.cu's tensor_core rungs, on warp-level
// mma.sync (sm_80 and later). Handed to NVRTC as an in-memory header, as tiles.cuh is.
//
// Block tile 128×128, 256 threads = 8 warps as 2 (M) × 4 (N), a warp computing 64×32 of
// C from fragments read out of shared memory. K-tiles of 128 bytes per row of A (32 f32,
// 16 f64) go through a three-stage cp.async pipeline (32 KB a stage, 96 KB in all: dynamic
// shared memory, TC_SMEM bytes, which the launch grants).
// The stage tiles are stored as they lie (A[m][k], B[k][n]) with the 16-byte chunks of a
// row permuted by an XOR of low row bits: the chunks stay whole for cp.async, and the 32
// reads of one fragment fall in 32 different banks.
//
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

#define TC_SMEM (3 * 2 * 128 * 128)

template <typename T> struct Tc;
template <> struct Tc<float> {
    static const int BK = 32;  // K per stage
    // Element (r, c) of A's 128×BK stage tile: chunk c/4 XOR bits 0–2 of r.
    __device__ __forceinline__ static int a_at(int r, int c) {
        return r * BK + (c ^ ((r & 7) << 2));
    }
    // Element (k, n) of B's BK×128 stage tile: chunk n/4 XOR bits 0–1 of k, times 2.
    __device__ __forceinline__ static int b_at(int k, int n) {
        return k * 128 + (n ^ ((k & 3) << 3));
    }
};
template <> struct Tc<double> {
    static const int BK = 16;
    // Chunk c/2 XOR bits 0–1 of r, times 2: a half-warp's 16 reads of 8 bytes then span
    // the 32 banks.
    __device__ __forceinline__ static int a_at(int r, int c) {
        return r * BK + (c ^ ((r & 3) << 2));
    }
    __device__ __forceinline__ static int b_at(int k, int n) {
        return k * 128 + (n ^ ((k & 3) << 2));
    }
};

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
// stage: each of the 256 threads moves LOADS 16-byte chunks of each (Panel::put: whole
// chunks inside the matrices asynchronously, the rest element by element, zeros outside).
template <typename T>
__device__ __forceinline__ void tc_stage(const T* A, const T* B, int M, int N, int K, int lda,
                                         int ldb, int m0, int n0, int k0, bool vec_a,
                                         bool vec_b, T* As, T* Bs) {
    typedef Panel<T, 128, Tc<T>::BK, 256> PA;
    typedef Panel<T, Tc<T>::BK, 128, 256> PB;
#pragma unroll
    for (int s = 0; s < PA::LOADS; ++s) {
        const int id = threadIdx.x + s * 256, r = id / PA::PER_ROW, c = (id % PA::PER_ROW) * PA::V;
        PA::put(As + Tc<T>::a_at(r, c), A + (i64)(m0 + r) * lda + k0 + c, vec_a, m0 + r < M,
                k0 + c, K);
    }
#pragma unroll
    for (int s = 0; s < PB::LOADS; ++s) {
        const int id = threadIdx.x + s * 256, r = id / PB::PER_ROW, c = (id % PB::PER_ROW) * PB::V;
        PB::put(Bs + Tc<T>::b_at(r, c), B + (i64)(k0 + r) * ldb + n0 + c, vec_b, k0 + r < K,
                n0 + c, N);
    }
}

// The warp's 64×32 of C from one stage: f32 as 4×4 mma.m16n8k8 per K-step of 8.
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k8", tf32): with g = lane/4
// and t = lane%4, A's registers hold (g, t), (g+8, t), (g, t+4), (g+8, t+4), B's (t, g)
// and (t+4, g), C's (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
template <int MODE>
__device__ __forceinline__ void tc_compute(const float* As, const float* Bs, int wm, int wn,
                                           float acc[4][4][4]) {
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
// layouts, no rounding of the operands).
template <int MODE>
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
            b[j][0] = Bs[C::b_at(kk + t, n)];
            b[j][1] = Bs[C::b_at(kk + t + 4, n)];
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

// C = alpha·A·B + beta·C (C not read when beta == 0) with A M×K, B K×N, C M×N row-major,
// on the grouped 1-D grid of 128×128 tiles (grouped_tile, matmul.cu). SYM (gram.cu's
// M·Mᵀ, with B = Aᵀ, tiles tm ≤ tn only, beta = 0): each result is written to C[row][col]
// and to C[col][row], a diagonal tile writing its upper half and that half's mirror.
template <typename T, int MODE, bool SYM = false>
__device__ __forceinline__ void gemm_tc(int M, int N, int K, T alpha, const T* A, const T* B,
                                        T beta, T* C, int tm, int tn) {
    constexpr int BK = Tc<T>::BK, STAGES = 3, V = V16<T>::N;
    // TC_SMEM bytes of dynamic shared memory: A's stages, then B's.
    extern __shared__ __align__(16) unsigned char tc_smem[];
    T* const As = reinterpret_cast<T*>(tc_smem);
    T* const Bs = As + STAGES * 128 * BK;
    const int m0 = tm * 128, n0 = tn * 128;
    const int warp = threadIdx.x / 32, wm = warp / 4, wn = warp % 4;
    const bool vec_a = K % V == 0 && aligned16(A);
    const bool vec_b = N % V == 0 && aligned16(B);
    typedef TcAcc<T> Acc;
    typename Acc::type acc, part;
    tc_zero<T>(acc);
    const int tiles = (K + BK - 1) / BK;
    // Stages 0 and 1 in flight; one commit group per tile, empty past the last, so that
    // wait_group<STAGES − 2> always means "tile t has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles)
            tc_stage(A, B, M, N, K, K, N, m0, n0, s * BK, vec_a, vec_b, As + s * 128 * BK, Bs + s * BK * 128);
        cp_async_commit();
    }
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<STAGES - 2>();
        // Tile t is visible to every thread, and every thread is done with tile t − 1,
        // whose stage the next load overwrites.
        __syncthreads();
        const int next = t + STAGES - 1;
        if (next < tiles) {
            const int s = next % STAGES;
            tc_stage(A, B, M, N, K, K, N, m0, n0, next * BK, vec_a, vec_b, As + s * 128 * BK, Bs + s * BK * 128);
        }
        cp_async_commit();
        if (Acc::CHUNKED) {
            tc_zero<T>(part);
            tc_compute<MODE>(As + (t % STAGES) * 128 * BK, Bs + (t % STAGES) * BK * 128, wm, wn, part);
#pragma unroll
            for (int i = 0; i < Acc::I; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
#pragma unroll
                    for (int e = 0; e < Acc::E; ++e) acc[i][j][e] += part[i][j][e];
        } else {
            tc_compute<MODE>(As + (t % STAGES) * 128 * BK, Bs + (t % STAGES) * BK * 128, wm, wn, acc);
        }
    }
    const int lane = threadIdx.x % 32, g = lane / 4, t2 = (lane % 4) * 2;
#pragma unroll
    for (int i = 0; i < TcAcc<T>::I; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < TcAcc<T>::E; ++e) {
                const int row = m0 + wm * 64 + i * 16 + g + (e / 2) * 8;
                const int col = n0 + wn * 32 + j * 8 + t2 + e % 2;
                if (row < M && col < N && SYM) {
                    if (tm != tn || row <= col)
                        C[(i64)row * N + col] = C[(i64)col * N + row] = alpha * acc[i][j][e];
                } else if (row < M && col < N) {
                    T* p = C + (i64)row * N + col;
                    *p = beta == T(0) ? alpha * acc[i][j][e] : alpha * acc[i][j][e] + beta * *p;
                }
            }
}
