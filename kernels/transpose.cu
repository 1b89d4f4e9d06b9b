// transpose.cu: the out-of-place transpose ladder (report 001).
//
// Every kernel has the signature
//     transpose_<technique>_<dtype>(int rows, int cols, const T* in, T* out)
// with `in` rows×cols row-major and `out` cols×rows row-major. Any shape works: tiles
// that hang over an edge guard each element. Flat indices are 64-bit, since rows·cols
// may exceed 2^31. gridDim.y is capped at 65535, so the kernels walk tile rows with a
// grid-stride loop over blockIdx.y (block-uniform, so the barriers inside stay legal).
//
// The story, top to bottom (each rung's share of a device copy of the same bytes on the
// H200 is in docs/kernels.md):
//   naive       one thread per element: reads coalesced, writes strided by `rows`
//   smem        32×32 tile staged in shared memory: both global sides coalesced, but the
//               column read of the tile hits one bank 32 times
//   padded      the same tile 32×33: the extra column spreads a tile column over all
//               banks
//   tile64      report 001's "optimal": 64×64 tile padded to 65, 64×16 threads, each
//               moving 4 elements, 4-way unrolled
//   tile64_ilp  64×64 tile padded to 65 with 32×8 threads, each moving 16 elements:
//               a quarter of tile64's threads keep as many loads in flight, and small
//               blocks let 8 of them share an SM, so one block's barrier never idles it
#include "common.cuh"

// ---- naive -------------------------------------------------------------------------
// Block 32×8; thread (x, y) copies in[row][col] to out[col][row] for rows y, y+8·gridDim.y,
// ... A warp reads 32 consecutive elements of a row (one 128-byte line) but writes 32
// elements `rows` apart: 32 lines per store instruction, most of each wasted.
template <typename T>
__device__ void transpose_naive(int rows, int cols, const T* __restrict__ in,
                                T* __restrict__ out) {
    const int col = blockIdx.x * 32 + threadIdx.x;
    if (col >= cols) return;  // no barriers in this kernel, so an early exit is safe
    for (int row = blockIdx.y * 8 + threadIdx.y; row < rows; row += gridDim.y * 8) {
        out[(i64)col * rows + row] = in[(i64)row * cols + col];
    }
}

// ---- smem, padded, tile64 ---------------------------------------------------------
// A TILE×TILE tile staged in shared memory, rows padded by PAD; block TILE×(TILE/STEP)
// threads, each moving rows y, y+STEP, ... of column x, unrolled so that its loads are
// independent. Phase 1: a warp reads a tile row (coalesced) into a row of shared memory.
// Phase 2: a warp reads a tile *column* from shared memory and writes it as a row of
// `out` (coalesced).
//   smem (32, PAD 0, STEP 8): the column read has stride 32 words: every thread hits
//     the same bank, a 32-way conflict.
//   padded (32, PAD 1, STEP 8): stride 33, so consecutive threads land in consecutive
//     banks.
//   tile64 (64, PAD 1, STEP 16; report 001's "optimal"): 1024 threads, 4 elements
//     each; each warp covers half a tile row (32 consecutive elements, one 128-byte
//     line). Stride 65 puts tile[r][c] in bank (r + c) mod 32, so neither phase
//     conflicts (also for f64: 130·r mod 32 = 2r, distinct over the 16 lanes of a 64-bit
//     half-warp access).
template <typename T, int TILE, int PAD, int STEP>
__device__ void transpose_tiled(int rows, int cols, const T* __restrict__ in,
                                T* __restrict__ out) {
    __shared__ T tile[TILE][TILE + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c0 = blockIdx.x * TILE;
    const int tiles_y = (rows + TILE - 1) / TILE;
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const int r0 = by * TILE;
#pragma unroll
        for (int j = 0; j < TILE; j += STEP) {
            const int r = r0 + ty + j, c = c0 + tx;
            if (r < rows && c < cols) tile[ty + j][tx] = in[(i64)r * cols + c];
        }
        __syncthreads();
        // out[c][r]: the output row is a tile column (c0 + ty + j), its column r0 + tx.
#pragma unroll
        for (int j = 0; j < TILE; j += STEP) {
            const int orow = c0 + ty + j, ocol = r0 + tx;
            if (orow < cols && ocol < rows) out[(i64)orow * rows + ocol] = tile[tx][ty + j];
        }
        __syncthreads();  // the next tile overwrites this one
    }
}

// ---- tile64_ilp ------------------------------------------------------------------------
// Tile 64×64 padded to 65, block 32×8 (256 threads): thread (x, y) moves columns x and
// x+32 of rows y, y+8, ..., y+56: 16 independent loads issued before the barrier, so
// each thread keeps 64 bytes (f32) in flight where tile64 keeps 16. Bank analysis as
// for tile64. A small block (16.6 KB of shared memory for f32) lets 8 blocks share an
// SM, so while one waits at its barrier the others keep the memory system busy.
template <typename T>
__device__ void transpose_tile64_ilp(int rows, int cols, const T* __restrict__ in,
                                     T* __restrict__ out) {
    __shared__ T tile[64][65];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c0 = blockIdx.x * 64;
    const int tiles_y = (rows + 63) / 64;
    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const int r0 = by * 64;
        const bool full = r0 + 64 <= rows && c0 + 64 <= cols;
        if (full) {
            // Interior tiles (all but a thin rim on large matrices) skip the guards.
            const T* src = in + (i64)(r0 + ty) * cols + c0 + tx;
#pragma unroll
            for (int j = 0; j < 64; j += 8) {
                tile[ty + j][tx] = src[(i64)j * cols];
                tile[ty + j][tx + 32] = src[(i64)j * cols + 32];
            }
        } else {
#pragma unroll
            for (int j = 0; j < 64; j += 8) {
                const int r = r0 + ty + j, c = c0 + tx;
                if (r < rows && c < cols) tile[ty + j][tx] = in[(i64)r * cols + c];
                if (r < rows && c + 32 < cols) tile[ty + j][tx + 32] = in[(i64)r * cols + c + 32];
            }
        }
        __syncthreads();
        if (full) {
            T* dst = out + (i64)(c0 + ty) * rows + r0 + tx;
#pragma unroll
            for (int j = 0; j < 64; j += 8) {
                dst[(i64)j * rows] = tile[tx][ty + j];
                dst[(i64)j * rows + 32] = tile[tx + 32][ty + j];
            }
        } else {
#pragma unroll
            for (int j = 0; j < 64; j += 8) {
                const int orow = c0 + ty + j, ocol = r0 + tx;
                if (orow < cols && ocol < rows) out[(i64)orow * rows + ocol] = tile[tx][ty + j];
                if (orow < cols && ocol + 32 < rows)
                    out[(i64)orow * rows + ocol + 32] = tile[tx + 32][ty + j];
            }
        }
        __syncthreads();
    }
}

// ---- instantiation ---------------------------------------------------------------------
#define NDGPU_TRANSPOSE(name, threads, body)                                               \
    extern "C" __global__ void __launch_bounds__(threads)                                 \
        transpose_##name##_f32(int rows, int cols, const float* in, float* out) {          \
        body<float>(rows, cols, in, out);                                                  \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(threads)                                 \
        transpose_##name##_f64(int rows, int cols, const double* in, double* out) {        \
        body<double>(rows, cols, in, out);                                                 \
    }

template <typename T>
__device__ void transpose_smem(int rows, int cols, const T* in, T* out) {
    transpose_tiled<T, 32, 0, 8>(rows, cols, in, out);
}
template <typename T>
__device__ void transpose_padded(int rows, int cols, const T* in, T* out) {
    transpose_tiled<T, 32, 1, 8>(rows, cols, in, out);
}
template <typename T>
__device__ void transpose_tile64(int rows, int cols, const T* in, T* out) {
    transpose_tiled<T, 64, 1, 16>(rows, cols, in, out);
}

NDGPU_TRANSPOSE(naive, 256, transpose_naive)
NDGPU_TRANSPOSE(smem, 256, transpose_smem)
NDGPU_TRANSPOSE(padded, 256, transpose_padded)
NDGPU_TRANSPOSE(tile64, 1024, transpose_tile64)
NDGPU_TRANSPOSE(tile64_ilp, 256, transpose_tile64_ilp)
