// wgmma.cu: the Hopper rungs of the GEMM ladder, `wgmma` (TF32) and `wgmma_3x` (3xTF32):
// warpgroup-level wgmma.mma_async on operands in shared memory (TF32's A via registers), loaded by
// the Tensor Memory Accelerator (TMA), warp-specialized and persistent. Compiled for
// sm_90a (the Hopper-only instructions); on any other architecture the GEMM kernels trap
// and the backend lists the rungs as unavailable before launching them.
//
// Operands. wgmma takes TF32 operands only K-major, so A (m×k) is read as it lies and B
// (k×n) as Bᵀ (n×k). A first pass (tf32_planes_*) writes them as planes of TF32 values
// rounded to nearest (cvt.rna): one plane per operand (PLANES 1), or big = tf32(x) and
// small = tf32(x − big) (PLANES 3: 3xTF32, as in mma.cuh), rows ld = K rounded up to 4
// apart (TMA needs 16-byte row strides). The planes are what the tensor maps describe.
// PLANES 1 skips A's pass where A's own rows are 16-byte strided (K a multiple of 4): its
// consumers read A's fragments from shared memory into registers, rounding them there
// (wg_afrag), and give them to wgmma as its register operand; a plane's values are their
// own rounding, so both forms compute the same product.
//
// Block: 384 threads, three warpgroups. Warpgroup 0 is the producer: one thread waits
// for a free stage, then has TMA copy the stage's K-tile (32 values = 128 bytes per row,
// the 128-byte swizzle's row) of every plane of A and B into shared memory, completing
// on the stage's `full` barrier. Warpgroups 1 and 2 are consumers, each computing 64 rows
// of the 128×BN tile of C with m64nBNk8 wgmma on descriptors of the swizzled stage, then
// releasing the stage on its `empty` barrier. setmaxnreg moves registers from the
// producer to the consumers. The grid is persistent: one block per SM, walking the tiles
// in bands of 16 tile rows (so that blocks working together share panels of B in L2).
//
// PLANES 1: BN = 256, four stages of 48 KB; C accumulates in the wgmma accumulators.
// PLANES 3: BN = 128, three stages of 64 KB; the three products (small·big, big·small,
// big·big) of every two K-steps of 8 go to fresh accumulators, each half of the 128
// columns its own, added in IEEE f32 to a sum of eight K-tiles, which is added to the
// running sum: two levels, so that a long K's roundings in the running sum are eight
// times fewer, and short runs in the tensor cores, whose sums truncate (wg_consume3).
// Sums run in a fixed order per output: bitwise reproducible run to run. TMA fills the
// parts of a box outside the matrix with zeros, so edges need no special case; C is
// written with bounds checks.
#include "common.cuh"
#include "mma.cuh"

typedef unsigned long long u64;

// A CUtensorMap (driver API), opaque here: 128 bytes, 64-byte aligned.
struct __align__(64) TensorMap {
    u64 raw[16];
};

#define WG_BM 128
#define WG_BK 32
#define WG_THREADS 384
// K-steps of 8 whose 3xTF32 products the tensor cores sum before an IEEE add (wg_consume3).
#define WG_FRESH 2
template <int PLANES> struct Wg;
template <> struct Wg<1> {
    static const int BN = 256, STAGES = 4, P = 1;
};
template <> struct Wg<3> {
    static const int BN = 128, STAGES = 3, P = 2;
};
// Dynamic shared memory of a PLANES kernel (STAGES stages and 1 KB to align them to the
// swizzle's 1024-byte pattern): `WG_SMEM_1` and `WG_SMEM_3` in crates/cuda.
#define WG_STAGE_BYTES(P, BN) ((P) * (WG_BM + (BN)) * WG_BK * 4)

// Planes of X (rows×cols, row-major): the TF32 rounding of each element at (i, j) (or,
// TRANS, at (j, i)) of `out`, rows `ld` apart, and with PLANES 3 the rounding of its
// remainder at the same place of the plane `plane` elements further. 32×32 tiles through
// shared memory, so that both reads and writes are coalesced when transposing.
template <int PLANES, bool TRANS>
__device__ void tf32_planes(int rows, int cols, const float* X, int ld, i64 plane, float* out) {
    __shared__ float tile[32][33];
    const int tx = threadIdx.x, c0 = blockIdx.x * 32;
    for (int r0 = blockIdx.y * 32; r0 < rows; r0 += gridDim.y * 32) {
        for (int i = threadIdx.y; i < 32; i += 8) {
            const int r = r0 + i, c = c0 + tx;
            tile[i][tx] = (r < rows && c < cols) ? X[(i64)r * cols + c] : 0.0f;
        }
        __syncthreads();
        for (int i = threadIdx.y; i < 32; i += 8) {
            // Output row `orow`, column `ocol` (X's (r0 + i, c0 + tx), or transposed).
            const int orow = TRANS ? c0 + i : r0 + i, ocol = TRANS ? r0 + tx : c0 + tx;
            const bool in = TRANS ? (orow < cols && ocol < rows) : (orow < rows && ocol < cols);
            if (in) {
                u32 b, s = 0;
                tf32_operand<PLANES>(TRANS ? tile[tx][i] : tile[i][tx], b, s);
                out[(i64)orow * ld + ocol] = __uint_as_float(b);
                if (PLANES == 3) out[plane + (i64)orow * ld + ocol] = __uint_as_float(s);
            }
        }
        __syncthreads();
    }
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ u32 smem_u32(const void* p) {
    return (u32)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void bar_init(u32 bar, u32 count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void bar_expect(u32 bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bar_arrive(u32 bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase of parity `parity` of the barrier has completed.
__device__ __forceinline__ void bar_wait(u32 bar, u32 parity) {
    u32 done = 0;
    while (!done) {
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    }
}
// The box at (inner, outer) of the tensor map into shared memory at dst, completing
// (its bytes) on the barrier.
__device__ __forceinline__ void tma_load(u32 dst, const TensorMap* map, int inner, int outer,
                                         u32 bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"((u64)map), "r"(inner), "r"(outer), "r"(bar)
        : "memory");
}
// A shared-memory matrix descriptor: K-major, 128-byte swizzle, 8-row groups 1024 bytes
// apart (PTX ISA, "Matrix Descriptor Format"; the leading offset is unused when swizzled).
__device__ __forceinline__ u64 desc(u32 addr) {
    return (u64)((addr & 0x3FFFF) >> 4) | ((u64)1 << 16) | ((u64)(1024 >> 4) << 32) |
           ((u64)1 << 62);
}
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait_all() {
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// Waits until at most one committed group is still running.
__device__ __forceinline__ void wgmma_wait_one() {
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
}

// Pins the n registers of v at this point of the program: the compiler sees them read and
// written here, so no read of an accumulator moves above the wgmma wait before it (the
// wait itself names no registers).
template <int N>
__device__ __forceinline__ void wg_pin(float* v) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(v[i])::"memory");
}

// wg_pin for u32 registers (A's fragments, which wgmma reads until its wait).
template <int N>
__device__ __forceinline__ void wg_pin_u(u32* v) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+r"(v[i])::"memory");
}

// d (64×BN, the warpgroup's accumulator fragment) = A·B + (scale_d ? d : 0) for one
// K-step of 8 (PTX ISA, "wgmma.mma_async"): A 64×8 and B BN×8, K-major in shared memory.
template <int BN>
__device__ __forceinline__ void wgmma_tf32(float* d, u64 da, u64 db, int scale_d);

// The accumulator operands d[i..i + 8) of an asm statement.
#define WG_D8(i)                                                                           \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]),           \
        "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
template <>
__device__ __forceinline__ void wgmma_tf32<64>(float* d, u64 da, u64 db, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31 "
        "}, %32, %33, p, 1, 1;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24)
        : "l"(da), "l"(db), "r"(scale_d));
}

// As wgmma_tf32 with BN = 256, A (64×8) from registers: the warpgroup's fragment, a[0..4) of each
// thread (PTX ISA, "Register fragment of matrix A": rows 16·warp + lane/4 (+ 8),
// columns lane % 4 (+ 4)).
__device__ __forceinline__ void wgmma_tf32_ra(float* d, const u32* a, u64 db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127 "
        "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56),
          WG_D8(64), WG_D8(72), WG_D8(80), WG_D8(88), WG_D8(96), WG_D8(104), WG_D8(112), WG_D8(120)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}
// The thread's A fragment of K-step kk, rounded to TF32 (cvt.rna: a TF32 value is its
// own rounding), from the warpgroup's 64 rows of a K-tile at `tile`, 128-byte rows
// swizzled by 128 bytes: 16-byte chunk j of row r lies at chunk j ^ (r % 8).
__device__ __forceinline__ void wg_afrag(u32 tile, int kk, u32* a) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const u32 r0 = tile + (((threadIdx.x % 128) / 32) * 16 + g) * 128 + t * 4;
    const u32 c0 = (u32)(((2 * kk) ^ g) << 4), c1 = (u32)(((2 * kk + 1) ^ g) << 4);
    const u32 at[4] = {r0 + c0, r0 + 8 * 128 + c0, r0 + c1, r0 + 8 * 128 + c1};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float x;
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(x) : "r"(at[i]) : "memory");
        a[i] = to_tf32(x);
    }
}

// Tile t of C in bands of 16 tile rows: down a band's rows first, then along its columns;
// SYM (M·Mᵀ): the upper tiles, column by column (upper_tile).
template <bool SYM>
__device__ __forceinline__ void wg_tile(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
    if (SYM) {
        upper_tile(t, tm, tn);
        return;
    }
    const int band = t / (16 * tiles_n), first = band * 16;
    const int rows = min(tiles_m - first, 16), r = t - first * tiles_n;
    tm = first + r % rows;
    tn = r / rows;
}

// The producer thread: every K-tile of every tile this block computes, into the stages
// in turn, each once the consumers have released it.
template <int PLANES, bool SYM>
__device__ __forceinline__ void wg_produce(int tiles, int tiles_m, int tiles_n, int kts,
                                           u32 base, u32 full, u32 empty,
                                           const TensorMap* const maps[4]) {
    typedef Wg<PLANES> G;
    const u32 stage = WG_STAGE_BYTES(G::P, G::BN), a_bytes = WG_BM * WG_BK * 4;
    int it = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int tm, tn;
        wg_tile<SYM>(t, tiles_m, tiles_n, tm, tn);
        for (int kt = 0; kt < kts; ++kt, ++it) {
            const int s = it % G::STAGES;
            bar_wait(empty + 8 * s, ((it / G::STAGES) & 1) ^ 1);
            const u32 at = base + s * stage, bar = full + 8 * s;
            bar_expect(bar, stage);
#pragma unroll
            for (int p = 0; p < G::P; ++p) {
                tma_load(at + p * a_bytes, maps[p], kt * WG_BK, tm * WG_BM, bar);
                tma_load(at + G::P * a_bytes + p * G::BN * WG_BK * 4, maps[2 + p], kt * WG_BK,
                         tn * G::BN, bar);
            }
        }
    }
}

// C ← alpha·acc + beta·C for the consumer's 64×BN: fragment rows w·16 + lane/4 (+ 8),
// columns 8j + 2·(lane%4) (+ 1), in d[4j + 2h + {0, 1}] for row + 8h. SYM (M·Mᵀ, alpha
// 1, beta 0): each result to C[row][col] and C[col][row], a diagonal tile (`diag`)
// writing its upper half and that half's mirror.
template <int BN, bool SYM>
__device__ __forceinline__ void wg_store(const float* v, int M, int N, int row0, int col0,
                                         bool diag, float alpha, float beta, float* C) {
    const int lane = threadIdx.x % 32, w = (threadIdx.x % 128) / 32;
    const bool pairs = (N & 1) == 0;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + w * 16 + lane / 4 + 8 * h, col = col0 + 8 * j + 2 * (lane % 4);
            if (row >= M || col >= N) continue;
            if (SYM) {
#pragma unroll
                for (int e = 0; e < 2; ++e)
                    if (col + e < N && (!diag || row <= col + e))
                        C[(i64)row * N + col + e] = C[(i64)(col + e) * N + row] =
                            v[4 * j + 2 * h + e];
                continue;
            }
            float* c = C + (i64)row * N + col;
            float x = alpha * v[4 * j + 2 * h], y = alpha * v[4 * j + 2 * h + 1];
            const bool two = col + 1 < N;
            if (pairs && two) {
                if (beta != 0.0f) {
                    const float2 old = *reinterpret_cast<const float2*>(c);
                    x += beta * old.x;
                    y += beta * old.y;
                }
                *reinterpret_cast<float2*>(c) = make_float2(x, y);
            } else {
                c[0] = beta != 0.0f ? x + beta * c[0] : x;
                if (two) c[1] = beta != 0.0f ? y + beta * c[1] : y;
            }
        }
    }
}

// A TF32 consumer warpgroup (c = 0 or 1): rows 64c.. of each tile, the accumulators
// holding all of K. A K-tile's four K-steps take A's fragments from registers (read from
// the stage and rounded by wg_afrag) and B's plane by descriptor. The next K-tile's
// fragments are read while this one's products run; the two sets alternate, since a
// K-tile's are read until its products end.
template <bool SYM>
__device__ __forceinline__ void wg_consume(int c, int M, int N, int tiles, int tiles_m,
                                           int tiles_n, int kts, u32 base, u32 full, u32 empty,
                                           float alpha, float beta, float* C) {
    typedef Wg<1> G;
    constexpr int KS = WG_BK / 8;
    const u32 stage = WG_STAGE_BYTES(G::P, G::BN), a_off = c * 64 * WG_BK * 4;
    float d[G::BN / 2];
    u32 af0[KS][4], af1[KS][4];
    int it = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int tm, tn;
        wg_tile<SYM>(t, tiles_m, tiles_n, tm, tn);
#pragma unroll
        for (int i = 0; i < G::BN / 2; ++i) d[i] = 0.0f;
        // The first K-tile's fragments.
        bar_wait(full + 8 * (it % G::STAGES), (it / G::STAGES) & 1);
#pragma unroll
        for (int kk = 0; kk < KS; ++kk) wg_afrag(base + (it % G::STAGES) * stage + a_off, kk, af0[kk]);
        // One K-tile, its fragments in `cur`; the next one's go to `nxt`.
        auto step = [&](int kt, u32 (&cur)[KS][4], u32 (&nxt)[KS][4]) {
            const int s = it % G::STAGES;
            const u32 b = base + s * stage + WG_BM * WG_BK * 4;
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < KS; ++kk)
                // 8 TF32 values are 32 bytes along the swizzled row: the descriptor moves by 32.
                wgmma_tf32_ra(d, cur[kk], desc(b + kk * 32));
            wgmma_commit();
            if (kt + 1 < kts) {
                const int n = (it + 1) % G::STAGES;
                bar_wait(full + 8 * n, ((it + 1) / G::STAGES) & 1);
#pragma unroll
                for (int kk = 0; kk < KS; ++kk) wg_afrag(base + n * stage + a_off, kk, nxt[kk]);
            }
            wgmma_wait_all();
            wg_pin_u<KS * 4>(&cur[0][0]);
            if (threadIdx.x % 32 == 0) bar_arrive(empty + 8 * s);
            ++it;
        };
        for (int kt = 0; kt < kts; kt += 2) {
            step(kt, af0, af1);
            if (kt + 1 < kts) step(kt + 1, af1, af0);
        }
        wg_pin<G::BN / 2>(d);
        wg_store<G::BN, SYM>(d, M, N, tm * WG_BM + c * 64, tn * G::BN, tm == tn, alpha, beta,
                             C);
    }
}

// A 3xTF32 consumer warpgroup (c = 0 or 1): rows 64c.. of each tile. Its 64×128 is two
// halves of 64 columns (m64n64k8). The three products of WG_FRESH K-steps of a half (48
// terms) go to fresh accumulators, dh0 or dh1, whose result is added in IEEE f32 (round
// to nearest) to `mid`, the sum of eight K-tiles, and that to the running sum `acc`.
// The tensor cores' own sums do not round to nearest: they drop the bits of the terms
// below the largest one's, a bias (toward zero) that grows with the magnitude they
// accumulate, so they are kept to short runs of K. The halves alternate, so that one
// half's products run while the other's last result is added (wgmma.wait_group 1). A
// stage is released once the last products that read it are done: at the next K-tile's
// first wait, or where mid is folded.
template <bool SYM>
__device__ __forceinline__ void wg_consume3(int c, int M, int N, int tiles, int tiles_m,
                                            int tiles_n, int kts, u32 base, u32 full,
                                            u32 empty, float alpha, float beta, float* C) {
    typedef Wg<3> G;
    constexpr int R = G::BN / 2, H = R / 2;  // accumulators of the 64×128, of a half
    const u32 stage = WG_STAGE_BYTES(G::P, G::BN), a_bytes = WG_BM * WG_BK * 4;
    const u32 a_plane = WG_BM * WG_BK * 4, b_plane = G::BN * WG_BK * 4;
    const u32 b_half = 64 * WG_BK * 4;  // 64 rows of Bᵀ: eight 1024-byte swizzle groups
    float dh0[H], dh1[H], mid[R], acc[R];
    int it = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int tm, tn;
        wg_tile<SYM>(t, tiles_m, tiles_n, tm, tn);
#pragma unroll
        for (int i = 0; i < R; ++i) acc[i] = mid[i] = 0.0f;
        int prev = -1;  // the stage the pending products read, if any
        for (int kt = 0; kt < kts; ++kt, ++it) {
            const int s = it % G::STAGES;
            bar_wait(full + 8 * s, (it / G::STAGES) & 1);
            const u32 at = base + s * stage, a = at + c * 64 * WG_BK * 4, b = at + G::P * a_bytes;
#pragma unroll
            for (int kk = 0; kk < WG_BK / 8 / WG_FRESH; ++kk) {
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    float* d = h ? dh1 : dh0;
                    float* o = h ? dh0 : dh1;
                    wgmma_fence();
#pragma unroll
                    for (int j = 0; j < WG_FRESH; ++j) {
                        const int k8 = kk * WG_FRESH + j;
                        const u64 ab = desc(a + k8 * 32), as = desc(a + a_plane + k8 * 32);
                        const u32 bh = b + h * b_half + k8 * 32;
                        const u64 bb = desc(bh), bs = desc(bh + b_plane);
                        wgmma_tf32<64>(d, as, bb, j > 0);
                        wgmma_tf32<64>(d, ab, bs, 1);
                        wgmma_tf32<64>(d, ab, bb, 1);
                    }
                    wgmma_commit();
                    if (h == 1 || kk > 0 || prev >= 0) {
                        wgmma_wait_one();
                        wg_pin<H>(o);
                        if (h == 0 && kk == 0 && threadIdx.x % 32 == 0)
                            bar_arrive(empty + 8 * prev);
#pragma unroll
                        for (int i = 0; i < H; ++i) mid[(1 - h) * H + i] += o[i];
                    }
                }
            }
            prev = s;
            if (kt % 8 == 7 || kt == kts - 1) {
                // The second half's last products are pending: into mid first.
                wgmma_wait_all();
                wg_pin<H>(dh1);
                if (threadIdx.x % 32 == 0) bar_arrive(empty + 8 * s);
                prev = -1;
#pragma unroll
                for (int i = 0; i < H; ++i) mid[H + i] += dh1[i];
#pragma unroll
                for (int i = 0; i < R; ++i) {
                    acc[i] += mid[i];
                    mid[i] = 0.0f;
                }
            }
        }
        wg_store<G::BN, SYM>(acc, M, N, tm * WG_BM + c * 64, tn * G::BN, tm == tn, alpha, beta,
                             C);
    }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// C (m×n) ← alpha·A·B + beta·C from the tensor maps of A's planes (a0 big, a1 small) and
// Bᵀ's (b0, b1); with beta = 0, C is not read. SYM: C = A·Aᵀ (M = N, b = a, square
// tiles) on the upper tiles, mirrored.
template <int PLANES, bool SYM = false>
__device__ void wg_gemm(int M, int N, int K, float alpha, const TensorMap* a0,
                        const TensorMap* a1, const TensorMap* b0, const TensorMap* b1,
                        float beta, float* C) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    typedef Wg<PLANES> G;
    extern __shared__ unsigned char wg_smem[];
    __shared__ __align__(8) u64 bars[2 * G::STAGES];
    const u32 base = (smem_u32(wg_smem) + 1023) & ~1023u;
    const u32 full = smem_u32(bars), empty = full + 8 * G::STAGES;
    const int tiles_m = (M + WG_BM - 1) / WG_BM, tiles_n = (N + G::BN - 1) / G::BN;
    const int tiles = SYM ? tiles_m * (tiles_m + 1) / 2 : tiles_m * tiles_n;
    const int kts = (K + WG_BK - 1) / WG_BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < G::STAGES; ++s) {
            bar_init(full + 8 * s, 1);
            bar_init(empty + 8 * s, 8);  // the consumers' eight warps
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x < 128) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            const TensorMap* const maps[4] = {a0, a1, b0, b1};
            wg_produce<PLANES, SYM>(tiles, tiles_m, tiles_n, kts, base, full, empty, maps);
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        if constexpr (PLANES == 3)
            wg_consume3<SYM>(threadIdx.x / 128 - 1, M, N, tiles, tiles_m, tiles_n, kts, base,
                             full, empty, alpha, beta, C);
        else
            wg_consume<SYM>(threadIdx.x / 128 - 1, M, N, tiles, tiles_m, tiles_n, kts, base,
                            full, empty, alpha, beta, C);
    }
#else
    __trap();
#endif
}

// Entry points: gemm_<tech>_f32 (the tensor maps passed by value, as __grid_constant__
// parameters TMA reads in place) and the planes passes.
#define NDGPU_WGMMA(tech, PLANES)                                                           \
    NDGPU_ENTRY(gemm_##tech##_f32, __launch_bounds__(WG_THREADS, 1),                        \
                (int M, int N, int K, float alpha, const __grid_constant__ TensorMap a0,    \
                 const __grid_constant__ TensorMap a1, const __grid_constant__ TensorMap b0, \
                 const __grid_constant__ TensorMap b1, float beta, float* C),                \
                (wg_gemm<PLANES>(M, N, K, alpha, &a0, &a1, &b0, &b1, beta, C)))
NDGPU_WGMMA(wgmma, 1)
NDGPU_WGMMA(wgmma_3x, 3)

// The gram ladder's rung: gram_<tech>_f32(int N, int K, TensorMap m0, m1, float* C), M·Mᵀ
// on 3xTF32 from the maps of M's planes, which serve as both operands.
#define NDGPU_WGMMA_GRAM(tech)                                                              \
    NDGPU_ENTRY(gram_##tech##_f32, __launch_bounds__(WG_THREADS, 1),                        \
                (int N, int K, const __grid_constant__ TensorMap m0,                        \
                 const __grid_constant__ TensorMap m1, float* C),                           \
                (wg_gemm<3, true>(N, N, K, 1.0f, &m0, &m1, &m0, &m1, 0.0f, C)))
NDGPU_WGMMA_GRAM(wgmma)

#define NDGPU_TF32_PLANES(PLANES, form, TRANS)                                              \
    NDGPU_ENTRY(tf32_planes_##PLANES##_##form, __launch_bounds__(256),                      \
                (int rows, int cols, const float* X, int ld, i64 plane, float* out),        \
                (tf32_planes<PLANES, TRANS>(rows, cols, X, ld, plane, out)))
NDGPU_TF32_PLANES(1, n, false)
NDGPU_TF32_PLANES(1, t, true)
NDGPU_TF32_PLANES(3, n, false)
NDGPU_TF32_PLANES(3, t, true)
