//! The M·Mᵀ ladder's table: one row per rung (its variant row, its kernel, how its grid
//! covers C, its threads), and the stripe rungs' limits.

use ndgpu_core::{Family, Needs, Precision, Result, Variant};
use ndgpu_cuda_runtime::{kernel, Kernel};

/// Kernels the default variant launches: stream-K's pieces and their sums, reg_blocked's
/// where C's tiles fill whole waves, and the narrow kernels (W = 64 and 32) and their sums
/// for a short, wide M.
pub const DEFAULT_KERNELS: &[&str] = &[
    "gram_stream_k_f32",
    "gram_stream_k_f64",
    "gram_stream_k_sum_f32",
    "gram_stream_k_sum_f64",
    "gram_reg_blocked_f32",
    "gram_reg_blocked_f64",
    "gram_narrow_f32",
    "gram_narrow_f64",
    "gram_narrow32_f32",
    "gram_narrow32_f64",
    "gram_narrow_sum_f32",
    "gram_narrow_sum_f64",
    "gram_tensor_core_f64",
    "gram_stream_tc_f64",
    "gram_stream_tc_fix_f64",
];

/// What every variant shares.
pub const NOTE: &str = "exactly symmetric; every variant but stripes and stripes_transposed \
    is bitwise reproducible run to run (no atomics; each output summed by one thread in a \
    fixed order)";

/// Rows of M that the stripe rungs hold in shared memory (`STRIPE_ROWS` in
/// kernels/gram.cu, the report's 1024).
pub(crate) const STRIPE_ROWS: usize = 1024;
/// Bytes of a row's piece of one stripe (`32 / sizeof(T)` columns in kernels/gram.cu).
pub(crate) const STRIPE_BYTES: usize = 32;

/// How a variant covers C.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Grid {
    /// Every tile of (rows, cols) of C.
    Full(usize, usize),
    /// Every square tile of this order on or above the diagonal, numbered column by column.
    Upper(usize),
    /// One block per column stripe of M ([`STRIPE_BYTES`] wide), adding into a zeroed C
    /// with atomics; `gram_mirror` completes C. At most [`STRIPE_ROWS`] rows.
    Stripes,
}

impl Grid {
    /// Blocks covering C (or M's stripes) for an n×k M of `T`.
    pub(crate) fn blocks<T>(self, n: usize, k: usize) -> usize {
        match self {
            Grid::Full(rows, cols) => n.div_ceil(rows) * n.div_ceil(cols),
            Grid::Upper(order) => {
                let t = n.div_ceil(order);
                t * (t + 1) / 2
            }
            Grid::Stripes => k.div_ceil(STRIPE_BYTES / size_of::<T>()),
        }
    }
}

/// One rung of the ladder: its row in the variant table, its kernel, how its grid
/// covers C, the block's threads, whether it runs the tensor-core GEMM
/// (`kernels/mma.cuh`; f32 on Mᵀ materialised first), and whether its f32 kernel is
/// Hopper's (`ops::wgmma`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rung {
    pub(crate) v: Variant,
    pub(crate) kernel: Kernel,
    pub(crate) grid: Grid,
    pub(crate) block: (u32, u32),
    pub(crate) tensor_cores: bool,
    pub(crate) hopper: bool,
}

impl Rung {
    const fn new(v: Variant, kernel: Kernel, grid: Grid, block: (u32, u32)) -> Rung {
        Rung {
            v,
            kernel,
            grid,
            block,
            tensor_cores: false,
            hopper: false,
        }
    }
}

/// The f64 kernel of both tensor-core rungs.
pub(crate) const TENSOR_CORE: Rung = Rung {
    tensor_cores: true,
    ..Rung::new(
        Variant::new(
            "tensor_core",
            "the GEMM ladder's tensor_core kernel (mma.sync, three cp.async stages) on the \
             upper 128x128 tiles (f32 with M transposed first; f64 reads M's rows as both \
             operands, each upper tile as two 128x64 blocks), each result written with its \
             mirror; f32 on 3xTF32, f64 on FP64 tensor cores (IEEE)",
        )
        .precision(Precision::Tf32x3)
        .needs(Needs::Sm80),
        kernel!("gram_tensor_core"),
        Grid::Upper(128),
        (256, 1),
    )
};

/// The kernel `stream_k` runs where C's tiles fill whole waves.
pub(crate) const REG_BLOCKED: Rung = Rung::new(
    Variant::new(
        "reg_blocked",
        "the GEMM ladder's 128x128 register-blocked kernel with 16-byte loads on a 1-D grid \
         over the T(T+1)/2 upper tiles, results mirrored as 16-byte stores (f32: BK 16, one \
         shared buffer; f64: BK 8, double-buffered through registers)",
    ),
    kernel!("gram_reg_blocked"),
    Grid::Upper(128),
    (256, 1),
);

/// The ladder, default (fastest measured) first: one row per variant. The symmetric
/// rungs launch every tile; lower tiles return at once.
pub(crate) const RUNGS: [Rung; 11] = [
    Rung::new(
        Variant::new(
            "stream_k",
            "reg_blocked's kernel where its upper tiles fill whole waves; else the tiles' \
             K-steps dealt out evenly over one wave of blocks (stream-K), pieces summed in \
             the order of K; a narrow kernel for a short, wide M (at most 64 rows, K at \
             least 1024); f64 on FP64 tensor cores (sm_80+) runs tensor_core's DMMA kernel \
             (with stream-K over its blocks where the last wave would be mostly empty); the \
             choice depends on the shape, the dtype and the device",
        ),
        kernel!("gram_stream_k"),
        Grid::Upper(128),
        (256, 1),
    ),
    REG_BLOCKED,
    Rung::new(
        Variant::new(
            "symmetric",
            "only tiles on or above the diagonal computed, each result written to C[i][j] \
             and C[j][i]",
        ),
        kernel!("gram_symmetric"),
        Grid::Full(32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new(
            "symmetric_unrolled",
            "symmetric with the 32-term inner product of each K-step fully unrolled",
        ),
        kernel!("gram_symmetric_unrolled"),
        Grid::Full(32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new(
            "diagonal",
            "symmetric; diagonal tiles stage one strip of rows since both operands are the same",
        ),
        kernel!("gram_diagonal"),
        Grid::Full(32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new(
            "tiled",
            "32x32 shared-memory tiles, zero-filled at the edges",
        ),
        kernel!("gram_tiled"),
        Grid::Full(32, 32),
        (32, 32),
    ),
    Rung::new(
        Variant::new(
            "stripes_transposed",
            "stripes with the stripe held transposed in shared memory (conflict-free reads)",
        )
        .not_reproducible(),
        kernel!("gram_stripes_transposed"),
        Grid::Stripes,
        (256, 1),
    ),
    Rung::new(
        Variant::new(
            "stripes",
            "one block per 32-byte-wide column stripe of M held in shared memory for all \
             rows, partial sums of the upper triangle added with floating-point atomics, \
             then mirrored; M of at most 1024 rows (larger is InvalidArgument)",
        )
        .not_reproducible(),
        kernel!("gram_stripes"),
        Grid::Stripes,
        (256, 1),
    ),
    Rung::new(
        Variant::new("naive", "one thread per output"),
        kernel!("gram_naive"),
        Grid::Full(8, 32),
        (32, 8),
    ),
    TENSOR_CORE,
    Rung {
        v: Variant::new(
            "wgmma",
            "f32 on the GEMM ladder's wgmma_3x kernel (3xTF32, TMA, warp-specialized, \
             persistent) on the upper 128x128 tiles, M's TF32 planes serving as both \
             operands, each result written with its mirror; f64 runs tensor_core's DMMA \
             kernel",
        )
        .precision(Precision::Tf32x3)
        .needs(Needs::Sm90),
        hopper: true,
        ..TENSOR_CORE
    },
];

/// The variant table's rows, default first.
pub fn variants() -> impl Iterator<Item = Variant> {
    RUNGS.iter().map(|r| r.v)
}

pub(crate) fn rung(variant: &str) -> Result<Rung> {
    crate::ops::find_rung(&RUNGS, |r| r.v, Family::Gram, variant)
}

/// The most rows of M that the gram variant `variant` takes, where it has a limit:
/// `stripes` and `stripes_transposed` hold a whole column stripe of M in shared memory,
/// at most 1024 rows; beyond that they return [`Error::InvalidArgument`]. `None` for the
/// other variants and for unknown names.
pub fn gram_row_limit(variant: &str) -> Option<usize> {
    match rung(variant).ok()?.grid {
        Grid::Stripes => Some(STRIPE_ROWS),
        Grid::Full(..) | Grid::Upper(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rung_launches_its_own_kernel_and_wgmma_tensor_cores_for_f64() {
        for r in RUNGS {
            let stem = if r.hopper { "tensor_core" } else { r.v.name };
            assert_eq!(r.kernel.f32, format!("gram_{stem}_f32"), "{}", r.v.name);
            assert_eq!(r.kernel.f64, format!("gram_{stem}_f64"), "{}", r.v.name);
        }
    }
}
