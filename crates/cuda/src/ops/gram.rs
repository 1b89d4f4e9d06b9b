//! The M·Mᵀ ladder of report 003 (`kernels/gram.cu`): from one thread per output (v001)
//! through shared-memory tiles (v004), the symmetric upper half (v005), single-strip
//! diagonal tiles (v006), a fully unrolled inner product (v007) and column stripes summed
//! with atomics (v008, v009), to the GEMM ladder's register-blocked, vectorized kernel
//! run on upper-triangle tiles only, and the GEMM ladder's tensor-core kernel on those
//! tiles (`tensor_core`: 3xTF32 for f32, FP64 tensor cores for f64). The default,
//! `split_k`, is `reg_blocked` where C has enough tiles to fill the device, and the GEMM
//! ladder's split-K product of M and Mᵀ where it has not (short, wide M: long K, a
//! small C).
//!
//! The result is exactly symmetric on every variant: the symmetric ones compute the upper
//! triangle and mirror it; `naive` and `tiled` compute both halves, but C[i][j] and
//! C[j][i] then come from the same multiply-adds in the same order with the factors
//! swapped, which round identically. The stripe rungs sum the upper triangle with
//! atomics into a zeroed C, then copy it to the lower one in a second launch.

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ndgpu_core::{Backend, DType, Error, Family, Gemm, Gram, Matrix, Result, Trans};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{check_buffer, dim_i32, go, grid_1d, launch_in_out};
use ndgpu_cuda_runtime::{driver, push_args, CudaElement, DeviceMatrix, Gpu};

use crate::ops::{matmul, wgmma};
use crate::CudaBackend;

/// Variants, default (fastest measured) first. The rungs not yet timed sit next to the
/// rung they change.
pub const VARIANTS: &[&str] = &[
    "split_k",
    "reg_blocked",
    "symmetric",
    "symmetric_unrolled",
    "diagonal",
    "tiled",
    "stripes_transposed",
    "stripes",
    "naive",
    "tensor_core",
    "wgmma",
];

/// Kernels the default variant launches of its own: reg_blocked's (where it splits K, it
/// runs the transpose's and the GEMM ladder's default kernels, listed with theirs).
pub const DEFAULT_KERNELS: &[&str] = &["gram_reg_blocked_f32", "gram_reg_blocked_f64"];

/// Determinism, scope and limits.
pub const NOTE: &str = "gram (cuda): every variant is exactly symmetric; every variant but \
stripes and stripes_transposed is bitwise reproducible run to run (no atomics; each output is \
summed by one thread in a fixed order). naive (report 003 v001): one thread per output; tiled \
(v004): 32x32 shared-memory tiles, zero-filled at the edges; symmetric (v005): only tiles on or \
above the diagonal are computed, each result written to C[i][j] and C[j][i]; diagonal (v006): \
as symmetric, diagonal tiles stage one strip of rows since both operands are the same; \
symmetric_unrolled (v007): as symmetric, the 32-term inner product of each K-step fully \
unrolled; stripes (v008) and stripes_transposed (v009): one block per 32-byte-wide column \
stripe of M (8 floats, 4 doubles) held in shared memory for all rows, as it lies (v008) or \
transposed (v009, conflict-free reads), each block's partial sums of the upper triangle added \
with floating-point atomics, then mirrored: NOT bitwise reproducible run to run (the atomics' order \
varies), and limited to M of at most 1024 rows (larger is refused with InvalidArgument); \
reg_blocked: the GEMM ladder's 128x128 register-blocked kernel with 16-byte loads \
on a 1-D grid over the T(T+1)/2 upper tiles, results mirrored as 16-byte stores (f32: BK 16, \
one shared buffer; f64: BK 8, double-buffered through registers: the faster of each); \
tensor_core (sm_80 and later; unavailable before): the GEMM ladder's tensor_core kernel \
(mma.sync, three cp.async stages) on the same upper tiles with M transposed first, each \
result written with its mirror, sums in a fixed order (reproducible run to run); f32 on \
3xTF32 (precision 3xtf32), f64 on FP64 tensor cores (IEEE); wgmma (Hopper, sm_90; \
unavailable elsewhere): f32 on the GEMM ladder's wgmma_3x kernel (3xTF32, TMA, warp-specialized, \
persistent) on the upper 128x128 tiles, M's TF32 planes serving as both operands, each result \
written with its mirror; f64 runs tensor_core's DMMA kernel. split_k (default): reg_blocked \
where C's 128x128 tiles are at least as many as the SMs; where they are fewer (a short, wide \
M: small C, long K), M transposed into a new buffer and the GEMM ladder's split_k product of M \
and that copy, K cut into slices summed in a fixed order (bitwise reproducible run to run; \
exactly symmetric, since C[i][j] and C[j][i] take the same products in the same order); the \
choice depends only on the shape and the device's SM count.";

/// Rows of M that the stripe rungs hold in shared memory (`STRIPE_ROWS` in
/// kernels/gram.cu, the report's 1024).
const STRIPE_ROWS: usize = 1024;
/// Bytes of a row's piece of one stripe (`32 / sizeof(T)` columns in kernels/gram.cu).
const STRIPE_BYTES: usize = 32;

/// How a variant covers C.
#[derive(Debug, Clone, Copy)]
enum Grid {
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
    fn blocks<T>(self, n: usize, k: usize) -> usize {
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

/// One rung of the ladder: how its grid covers C, the block's threads, whether it runs
/// the tensor-core GEMM (`kernels/mma.cuh`) on Mᵀ materialised first, and whether its
/// f32 kernel is Hopper's (`ops::wgmma`).
#[derive(Debug, Clone, Copy)]
struct Rung {
    name: &'static str,
    grid: Grid,
    block: (u32, u32),
    tensor_cores: bool,
    hopper: bool,
}

impl Rung {
    const fn new(name: &'static str, grid: Grid, block: (u32, u32)) -> Rung {
        Rung {
            name,
            grid,
            block,
            tensor_cores: false,
            hopper: false,
        }
    }
}

/// The f64 kernel of both tensor-core rungs.
const TENSOR_CORE: Rung = Rung {
    tensor_cores: true,
    ..Rung::new("tensor_core", Grid::Upper(128), (256, 1))
};

/// The kernel `split_k` runs where it does not split K.
const REG_BLOCKED: Rung = Rung::new("reg_blocked", Grid::Upper(128), (256, 1));

const RUNGS: [Rung; 11] = [
    Rung::new("split_k", Grid::Upper(128), (256, 1)),
    REG_BLOCKED,
    // The symmetric rungs launch every tile, as v005–v007 did; lower tiles return at once.
    Rung::new("symmetric", Grid::Full(32, 32), (32, 32)),
    Rung::new("symmetric_unrolled", Grid::Full(32, 32), (32, 32)),
    Rung::new("diagonal", Grid::Full(32, 32), (32, 32)),
    Rung::new("tiled", Grid::Full(32, 32), (32, 32)),
    Rung::new("stripes_transposed", Grid::Stripes, (256, 1)),
    Rung::new("stripes", Grid::Stripes, (256, 1)),
    Rung::new("naive", Grid::Full(8, 32), (32, 8)),
    TENSOR_CORE,
    Rung {
        name: "wgmma",
        hopper: true,
        ..TENSOR_CORE
    },
];

fn rung(variant: &str) -> Result<Rung> {
    super::find_rung(&RUNGS, |r| r.name, Family::Gram, variant, VARIANTS)
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

/// What `variant` runs for an n×k M on a device of `sms` SMs (see `Backend::plan`): for
/// `split_k`, reg_blocked's upper tiles or the GEMM ladder's cut of K.
pub(crate) fn plan(variant: &str, sms: usize, (n, k): (usize, usize)) -> Option<String> {
    if variant != "split_k" {
        return None;
    }
    match matmul::plan(variant, sms, (n, n, k))? {
        cut if cut.starts_with("K in") => Some(format!("M·(Mᵀ copied): {cut}")),
        _ => {
            let upper = REG_BLOCKED.grid.blocks::<f32>(n, k);
            Some(format!("reg_blocked: {upper} upper tiles of C"))
        }
    }
}

/// `out ← m·mᵀ` (n×n for an n×k `m`) on resident data with the named variant. Every
/// element of `out` is written and the result is exactly symmetric.
///
/// # Errors
/// [`Error::ShapeMismatch`] when `out` is not n×n, [`Error::UnknownVariant`],
/// [`Error::InvalidArgument`] for dimensions beyond the kernels' 32-bit indices or beyond
/// the variant's row limit ([`gram_row_limit`]), device errors.
pub(crate) fn gram<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    m: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    let rung = rung(variant)?;
    if rung.tensor_cores {
        matmul::tensor_cores_present(gpu, Family::Gram, rung.name)?;
    }
    let hopper = rung.hopper && T::DTYPE == DType::F32;
    if hopper {
        wgmma::present(gpu, Family::Gram, rung.name)?;
    }
    let (n, k) = m.dim();
    if out.dim() != (n, n) {
        return Err(Error::shape(
            "gram",
            format!(
                "the output is {}x{}, expected {n}x{n} for a {n}x{k} input",
                out.rows, out.cols
            ),
        ));
    }
    if let Some(limit) = gram_row_limit(variant).filter(|&l| n > l) {
        return Err(Error::invalid(
            "gram",
            format!(
                "variant {variant} holds a whole column stripe of M in shared memory, at \
                 most {limit} rows; M is {n}x{k}"
            ),
        ));
    }
    check_buffer("gram", "M", m)?;
    check_buffer("gram", "the output", out)?;
    if n == 0 {
        return Ok(());
    }
    if k == 0 {
        return zero(gpu, out);
    }
    let (ni, ki) = (dim_i32("gram", n)?, dim_i32("gram", k)?);
    let rung = if rung.name == "split_k" {
        if matmul::splits_k(gpu, (n, n, k))? {
            let g = Gemm::new().tb(Trans::Yes);
            return matmul::gemm(gpu, "split_k", g, m, m, out);
        }
        REG_BLOCKED
    } else {
        rung
    };
    if hopper {
        return wgmma::gram(gpu, (ni, ki), m, out);
    }
    if rung.tensor_cores {
        return tensor_core(gpu, (ni, ki), m, out);
    }
    let stripes = matches!(rung.grid, Grid::Stripes);
    if stripes {
        zero(gpu, out)?;
    }
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", rung.grid.blocks::<T>(n, k))?, 1, 1),
        block_dim: (rung.block.0, rung.block.1, 1),
        shared_mem_bytes: 0,
    };
    let kernel = (
        KernelFile::GRAM,
        &*format!("gram_{}_{}", rung.name, T::SUFFIX),
    );
    // SAFETY: gram_<variant>_<dtype>(int N, int K, const T* A, T* C) with A n×k and C n×n
    // row-major, both buffers checked to hold rows·cols elements; the grid has one block
    // per tile the kernel decodes from blockIdx.x (all tiles, or the upper ones), or per
    // stripe of A's columns (n checked against the stripe's rows above), and every access
    // is bounds-checked against N and K.
    unsafe { launch_in_out(gpu, kernel, cfg, (ni, ki), &m.data, &mut out.data) }?;
    if stripes {
        mirror(gpu, ni, out)?;
    }
    Ok(())
}

/// Zeros the whole of `out`.
fn zero<T: CudaElement>(gpu: &Gpu, out: &mut DeviceMatrix<T>) -> Result<()> {
    let len = out.len();
    gpu.stream()
        .memset_zeros(&mut out.data.slice_mut(0..len))
        .map_err(|e| driver("gram: zeroing the output", e))
}

/// `out ← m·mᵀ` by the `tensor_core` rung (and `wgmma`'s f64): mᵀ materialised, then the
/// tensor-core GEMM on the upper tiles, each result written with its mirror.
fn tensor_core<T: CudaElement>(
    gpu: &Gpu,
    (n, k): (i32, i32),
    m: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    let mt = matmul::transposed(gpu, m)?;
    let name = format!("gram_{}_{}", TENSOR_CORE.name, T::SUFFIX);
    let f = gpu.function(KernelFile::GRAM, &name)?;
    let cfg = LaunchConfig {
        grid_dim: (
            grid_1d("gram", TENSOR_CORE.grid.blocks::<T>(m.rows, m.cols))?,
            1,
            1,
        ),
        block_dim: (TENSOR_CORE.block.0, TENSOR_CORE.block.1, 1),
        shared_mem_bytes: matmul::tc_shared_memory("gram", &f)?,
    };
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &n, &k, &m.data, &mt.data, &mut out.data);
    // SAFETY: gram_tensor_core_<dtype>(int N, int K, const T* A, const T* At, T* C): A
    // n×k and C n×n (buffers checked by the caller), At k×n (allocated by `transposed`);
    // one block per upper 128×128 tile, decoded from blockIdx.x; every access is
    // bounds-checked against N and K, and the kernel gets the TC_SMEM bytes its stages
    // take.
    unsafe { go(b, &name, cfg) }
}

/// Copies the upper triangle of the n×n `out` to its lower one (the stripe rungs' second
/// launch).
fn mirror<T: CudaElement>(gpu: &Gpu, n: i32, out: &mut DeviceMatrix<T>) -> Result<()> {
    let name = format!("gram_mirror_{}", T::SUFFIX);
    let cfg = LaunchConfig {
        grid_dim: (
            grid_1d("gram", Grid::Upper(32).blocks::<T>(out.rows, 0))?,
            1,
            1,
        ),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let f = gpu.function(KernelFile::GRAM, &name)?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; &n, &mut out.data);
    // SAFETY: (int N, T* C) with C n×n row-major, its buffer checked to hold n·n elements;
    // one block per upper 32×32 tile, decoded from blockIdx.x, every access checked
    // against N.
    unsafe { go(b, &name, cfg) }
}

impl<T: CudaElement> Gram<T> for CudaBackend {
    fn gram_dev(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        let gpu = self.gpu();
        let dm = gpu.dm(self.here(), "gram", "M", m)?;
        let n = dm.rows;
        let mut out = gpu.alloc_matrix("gram", n, n)?;
        gram(gpu, self.variant(Family::Gram), dm, &mut out)?;
        Ok(gpu.matrix(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_rung_and_only_the_stripe_rungs_have_a_row_limit() {
        for v in VARIANTS {
            let r = rung(v).unwrap();
            assert!(
                r.block.0 * r.block.1 <= 1024 && r.block.0.is_multiple_of(32),
                "{v}"
            );
            let limit = gram_row_limit(v);
            assert_eq!(limit.is_some(), v.starts_with("stripes"), "{v}");
        }
        assert_eq!(VARIANTS.len(), RUNGS.len());
        assert_eq!(gram_row_limit("stripes"), Some(1024));
        assert_eq!(gram_row_limit("nope"), None);
        assert_eq!(VARIANTS[0], "split_k");
        assert_eq!(plan("reg_blocked", 132, (32, 1 << 20)), None);
        assert_eq!(
            plan("split_k", 132, (32, 1 << 20)).unwrap(),
            "M·(Mᵀ copied): K in 264 slices of 3984 (C in 1 tile)"
        );
        assert_eq!(
            plan("split_k", 132, (4096, 4096)).unwrap(),
            "reg_blocked: 528 upper tiles of C"
        );
        assert!(DEFAULT_KERNELS
            .iter()
            .all(|k| k.starts_with(&format!("gram_{}_", REG_BLOCKED.name))));
        // 8 floats or 4 doubles per stripe, as the kernels' W = 32 / sizeof(T).
        assert_eq!(Grid::Stripes.blocks::<f32>(1024, 17), 3);
        assert_eq!(Grid::Stripes.blocks::<f64>(1024, 17), 5);
    }
}
