//! The GEMM ladder's table: one row per rung (its variant row, its kernel, its tile and
//! threads), the Hopper rungs' shapes, and the tensor-core GEMM's shape per element type.

use cudarc::driver::CudaFunction;
use ndgpu_core::{DType, Family, Needs, Precision, Result, Variant};
use ndgpu_cuda_runtime::{kernel, CudaElement, Gpu, Kernel};

/// Kernels the default variant launches: its own, double_buffered's where it does not
/// split K, small's for small outputs with a short K, and the FP64 tensor-core kernel
/// for f64 (`dmma`).
pub const DEFAULT_KERNELS: &[&str] = &[
    "gemm_split_k_f32",
    "gemm_split_k_f64",
    "gemm_split_k_sum_f32",
    "gemm_split_k_sum_f64",
    "gemm_double_buffered_f32",
    "gemm_double_buffered_f64",
    "gemm_small_f32",
    "gemm_small_f64",
    "gemm_small_32_f32",
    "gemm_small_32_f64",
    "gemm_tensor_core_f64",
    "gemm_stream_tc_f64",
    "gemm_stream_tc_fix_f64",
];

/// What every variant shares.
pub const NOTE: &str = "bitwise reproducible run to run (no atomics; each output summed by \
    one thread in a fixed order); transposed operands are materialised before the product; \
    K = 0 or alpha = 0 gives beta*C without reading A or B";

/// One rung of the ladder: its row in the variant table, its kernel, the tile of C a
/// block computes, the block's threads, whether it runs on tensor cores (their tile,
/// threads and dynamic shared memory depend on the element type: [`tc_shape`]), and for
/// the Hopper rungs their f32 kernel (`ops::wgmma`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rung {
    pub(crate) v: Variant,
    pub(crate) kernel: Kernel,
    pub(crate) tile: (usize, usize),
    pub(crate) block: (u32, u32),
    pub(crate) tensor_cores: bool,
    pub(crate) hopper: Option<Hopper>,
}

impl Rung {
    const fn new(v: Variant, kernel: Kernel, tile: (usize, usize), block: (u32, u32)) -> Rung {
        Rung {
            v,
            kernel,
            tile,
            block,
            tensor_cores: false,
            hopper: None,
        }
    }

    const fn tensor(v: Variant, kernel: Kernel) -> Rung {
        Rung {
            tensor_cores: true,
            ..Rung::new(v.needs(Needs::Sm80), kernel, (128, 128), (256, 1))
        }
    }

    /// A Hopper rung: its f32 kernel is `h`'s; f64 runs [`TENSOR_CORE`]'s.
    const fn hopper(v: Variant, h: Hopper) -> Rung {
        Rung {
            hopper: Some(h),
            ..Rung::tensor(v.needs(Needs::Sm90), kernel!("gemm_tensor_core"))
        }
    }
}

/// The double_buffered rung, which split_k runs on each slice of K and the blocked
/// solves on blocks of larger matrices.
pub(crate) const DOUBLE_BUFFERED: Rung = Rung::new(
    Variant::new(
        "double_buffered",
        "vectorized with BK 16 (f32) and two shared buffers, the next K-tile copied \
         asynchronously (cp.async) while the current one is computed",
    ),
    kernel!("gemm_double_buffered"),
    (128, 128),
    (256, 1),
);

/// The f64 kernel of every tensor-core rung (the wgmma ones too: Hopper has no f64
/// wgmma).
pub(crate) const TENSOR_CORE: Rung = Rung::tensor(
    Variant::new(
        "tensor_core",
        "warp-level mma.sync, 128x128 block tile (f64: 128x64, two blocks per SM), three \
         cp.async stages, sums in a fixed order; f32 on TF32 operands rounded to nearest, \
         f64 on FP64 tensor cores (DMMA, IEEE)",
    )
    .precision(Precision::Tf32),
    kernel!("gemm_tensor_core"),
);

/// The small rung, which split_k runs for small outputs with a short K.
pub(crate) const SMALL: Rung = Rung::new(
    Variant::new(
        "small",
        "64x64 block tile, 256 threads of 4x4 outputs (32x32 tiles of 2x2 outputs where the \
         64x64 tiles would be fewer than the SMs), K through shared memory 64 at a time (f32; \
         32 for f64), the next stage's loads held in registers",
    ),
    kernel!("gemm_small"),
    (64, 64),
    (256, 1),
);
/// The small rung's kernel of 32×32 tiles, which it runs where its 64×64 tiles would be
/// fewer than the SMs ([`small_tiles`]); not a variant of its own.
pub(crate) const SMALL_32: Rung = Rung::new(
    Variant::new("small_32", ""),
    kernel!("gemm_small_32"),
    (32, 32),
    (256, 1),
);

/// The small rung's tiles for an m×n C on a device of `sms` SMs: 32×32 where 64×64
/// tiles would be fewer than the SMs, else 64×64.
pub(crate) fn small_tiles(sms: usize, m: usize, n: usize) -> Rung {
    match m.div_ceil(64) * n.div_ceil(64) < sms {
        true => SMALL_32,
        false => SMALL,
    }
}

/// The ladder, default (fastest measured) first: one row per variant.
pub(crate) const RUNGS: [Rung; 13] = [
    Rung::new(
        Variant::new(
            "split_k",
            "for few tiles of C, double_buffered on slices of K (as many as fill the SMs \
             twice, each at least 4 K-tiles) summed in slice order by a second kernel, or \
             small in one launch where K is at most 256; f64 on FP64 tensor cores (sm_80+) \
             runs tensor_core's DMMA kernel, with stream-K where its tiles would leave the \
             last wave mostly empty (docs/kernels.md, Shape rules); the choice depends on \
             the shape, the dtype and the device",
        ),
        kernel!("gemm_split_k"),
        (128, 128),
        (256, 1),
    ),
    DOUBLE_BUFFERED,
    SMALL,
    Rung::new(
        Variant::new(
            "vectorized",
            "reg_blocked with 16-byte global and shared loads, A transposed in shared \
             memory, warp-tiled 4x4 pieces",
        ),
        kernel!("gemm_vectorized"),
        (128, 128),
        (256, 1),
    ),
    Rung::new(
        Variant::new(
            "reg_blocked",
            "128x128 block tile, BK 8, 8x8 outputs per thread in registers",
        ),
        kernel!("gemm_reg_blocked"),
        (128, 128),
        (256, 1),
    ),
    Rung::new(
        Variant::new(
            "tiled_unrolled",
            "tiled, the inner product fully unrolled and the index arithmetic strength-reduced",
        ),
        kernel!("gemm_tiled_unrolled"),
        (32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new("tiled", "32x32 shared-memory tiles"),
        kernel!("gemm_tiled"),
        (32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new("coalesced", "one thread per output, a warp along a row"),
        kernel!("gemm_coalesced"),
        (8, 32),
        (32, 8),
    ),
    Rung::new(
        Variant::new(
            "naive",
            "one thread per output, a warp down a column (uncoalesced)",
        ),
        kernel!("gemm_naive"),
        (32, 8),
        (32, 8),
    ),
    TENSOR_CORE,
    Rung::tensor(
        Variant::new(
            "tensor_core_3x",
            "tensor_core with f32 as 3xTF32 (each operand split into two TF32 parts, three \
             products), close to f32's own error; f64 as tensor_core",
        )
        .precision(Precision::Tf32x3),
        kernel!("gemm_tensor_core_3x"),
    ),
    Rung::hopper(
        Variant::new(
            "wgmma",
            "f32 on Hopper's warpgroup wgmma: operands rounded to TF32 planes first, loaded \
             by TMA with 128-byte swizzle, one producer and two consumer warpgroups, \
             128x256 tiles, a persistent grid; f64 runs tensor_core's DMMA kernel",
        )
        .precision(Precision::Tf32),
        TF32,
    ),
    Rung::hopper(
        Variant::new(
            "wgmma_3x",
            "wgmma on 3xTF32 (128x128 tiles); f64 runs tensor_core's DMMA kernel",
        )
        .precision(Precision::Tf32x3),
        TF32X3,
    ),
];

/// The variant table's rows, default first.
pub fn variants() -> impl Iterator<Item = Variant> {
    RUNGS.iter().map(|r| r.v)
}

pub(crate) fn rung(variant: &str) -> Result<Rung> {
    crate::ops::find_rung(&RUNGS, |r| r.v, Family::MatMul, variant)
}

/// The shape of `kernels/mma.cuh`'s tensor-core GEMM for one element type (`Tc<T>`
/// there): its block tile of C, its threads, and the dynamic shared memory of its three
/// stages (`TC_SMEM(T)`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TcShape {
    pub tile: (usize, usize),
    pub threads: u32,
    pub smem: u32,
}

/// f32: 128×128 tiles of 256 threads, K-tiles of 32; f64: 128×64 tiles of 128 threads,
/// K-tiles of 16, two blocks per SM, the stage tiles' rows padded by 4 elements.
pub(crate) fn tc_shape<T: CudaElement>() -> TcShape {
    // (BN, BK, the rows' padding, stages, threads)
    let (bn, bk, pad, stages, threads) = match T::DTYPE {
        DType::F32 => (128, 32, 0, 3, 256),
        DType::F64 => (64, 16, 4, 3, 128),
    };
    let stage = 128 * (bk + pad) + bk * (bn + pad);
    TcShape {
        tile: (128, bn),
        threads,
        smem: (stages * stage * size_of::<T>()) as u32,
    }
}

/// Grants `f` (kernel `name`), a kernel on `kernels/mma.cuh`'s tensor-core GEMM for
/// `T`, the dynamic shared memory its stages take (past the 48 KB every kernel may use
/// without asking); returns it.
pub(crate) fn tc_shared_memory<T: CudaElement>(
    gpu: &Gpu,
    name: &str,
    f: &CudaFunction,
) -> Result<u32> {
    gpu.grant_shared_memory(f, name)?;
    Ok(tc_shape::<T>().smem)
}

/// Whether the device has the warp-level tensor-core instructions the `tensor_core`
/// rungs use (mma.sync on TF32 and f64: sm_80 and later).
pub(crate) fn has_tensor_cores(gpu: &Gpu) -> bool {
    Needs::Sm80.met_by(Some(gpu.arch()))
}

/// The two Hopper rungs: how many TF32 products each term takes, and the tile's width.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hopper {
    /// 1 (TF32) or 3 (3xTF32).
    pub(crate) planes: usize,
    /// Columns of C per block tile (`Wg<PLANES>::BN`).
    pub(crate) tile_n: u32,
    /// The f32 kernel.
    pub(crate) kernel: &'static str,
}

/// `wgmma`.
pub(crate) const TF32: Hopper = Hopper {
    planes: 1,
    tile_n: 256,
    kernel: "gemm_wgmma_f32",
};
/// `wgmma_3x`.
pub(crate) const TF32X3: Hopper = Hopper {
    planes: 3,
    tile_n: 128,
    kernel: "gemm_wgmma_3x_f32",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rung_launches_its_own_kernel_and_the_hopper_rungs_their_own_f32_kernels() {
        for r in RUNGS.iter().chain([&SMALL_32]) {
            let stem = match r.hopper {
                // f64 runs tensor_core's DMMA kernel; f32 the Hopper kernel.
                Some(h) => {
                    assert_eq!(h.kernel, format!("gemm_{}_f32", r.v.name));
                    "tensor_core"
                }
                None => r.v.name,
            };
            assert_eq!(r.kernel.f32, format!("gemm_{stem}_f32"), "{}", r.v.name);
            assert_eq!(r.kernel.f64, format!("gemm_{stem}_f64"), "{}", r.v.name);
        }
    }
}
