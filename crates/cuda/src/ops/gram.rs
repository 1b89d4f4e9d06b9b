//! The M·Mᵀ ladder of report 003 (`kernels/gram.cu`): from one thread per output (v001)
//! through shared-memory tiles (v004), the symmetric upper half (v005), single-strip
//! diagonal tiles (v006) and a fully unrolled inner product (v007), to the GEMM ladder's
//! register-blocked, vectorized kernel run on upper-triangle tiles only.
//!
//! The result is exactly symmetric on every variant: the symmetric ones compute the upper
//! triangle and mirror it; `naive` and `tiled` compute both halves, but C[i][j] and
//! C[j][i] then come from the same multiply-adds in the same order with the factors
//! swapped, which round identically.

use cudarc::driver::LaunchConfig;
use ndgpu_core::{Backend, Error, Family, Gram, Matrix, Result};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{check_buffer, dim_i32, grid_1d, launch_in_out};
use ndgpu_cuda_runtime::{driver, CudaElement, DeviceMatrix, Gpu};

use crate::CudaBackend;

/// Variants, default (fastest measured) first.
/// The rungs not yet timed sit next to the rung they change.
pub const VARIANTS: &[&str] = &[
    "reg_blocked",
    "symmetric",
    "symmetric_unrolled",
    "diagonal",
    "tiled",
    "naive",
];

/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &["gram_reg_blocked_f32", "gram_reg_blocked_f64"];

/// Determinism and scope.
pub const NOTE: &str = "gram (cuda): every variant is bitwise reproducible run to run (no \
atomics; each output is summed by one thread in a fixed order) and exactly symmetric. naive \
(report 003 v001): one thread per output; tiled (v004): 32x32 shared-memory tiles, zero-filled \
at the edges; symmetric (v005): only tiles on or above the diagonal are computed, each result \
written to C[i][j] and C[j][i]; diagonal (v006): as symmetric, diagonal tiles stage one strip \
of rows since both operands are the same; symmetric_unrolled (v007): as symmetric, the \
32-term inner product of each K-step fully unrolled; \
reg_blocked (default): the GEMM ladder's 128x128 register-blocked kernel with 16-byte loads \
on a 1-D grid over the T(T+1)/2 upper tiles, results mirrored as 16-byte stores (f32: BK 16, \
one shared buffer; f64: BK 8, double-buffered through registers: the faster of each).";

/// How a variant covers C.
#[derive(Debug, Clone, Copy)]
enum Grid {
    /// Every tile of (rows, cols) of C.
    Full(usize, usize),
    /// Every square tile of this order on or above the diagonal, numbered column by column.
    Upper(usize),
}

/// One rung of the ladder: how its grid covers C, and the block's threads.
#[derive(Debug, Clone, Copy)]
struct Rung {
    name: &'static str,
    grid: Grid,
    block: (u32, u32),
}

impl Rung {
    const fn new(name: &'static str, grid: Grid, block: (u32, u32)) -> Rung {
        Rung { name, grid, block }
    }
}

const RUNGS: [Rung; 6] = [
    Rung::new("reg_blocked", Grid::Upper(128), (256, 1)),
    // The symmetric rungs launch every tile, as v005–v007 did; lower tiles return at once.
    Rung::new("symmetric", Grid::Full(32, 32), (32, 32)),
    Rung::new("symmetric_unrolled", Grid::Full(32, 32), (32, 32)),
    Rung::new("diagonal", Grid::Full(32, 32), (32, 32)),
    Rung::new("tiled", Grid::Full(32, 32), (32, 32)),
    Rung::new("naive", Grid::Full(8, 32), (32, 8)),
];

fn rung(variant: &str) -> Result<Rung> {
    super::find_rung(&RUNGS, |r| r.name, Family::Gram, variant, VARIANTS)
}

/// `out ← m·mᵀ` (n×n for an n×k `m`) on resident data with the named variant. Every
/// element of `out` is written and the result is exactly symmetric.
///
/// # Errors
/// [`Error::ShapeMismatch`] when `out` is not n×n, [`Error::UnknownVariant`],
/// [`Error::InvalidArgument`] for dimensions beyond the kernels' 32-bit indices, device
/// errors.
pub(crate) fn gram<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    m: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    let rung = rung(variant)?;
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
    check_buffer("gram", "M", m)?;
    check_buffer("gram", "the output", out)?;
    if n == 0 {
        return Ok(());
    }
    if k == 0 {
        let len = out.len();
        return gpu
            .stream()
            .memset_zeros(&mut out.data.slice_mut(0..len))
            .map_err(|e| driver("gram: zeroing the output", e));
    }
    let (ni, ki) = (dim_i32("gram", n)?, dim_i32("gram", k)?);
    let n_blocks = match rung.grid {
        Grid::Full(rows, cols) => n.div_ceil(rows) * n.div_ceil(cols),
        Grid::Upper(order) => {
            let t = n.div_ceil(order);
            t * (t + 1) / 2
        }
    };
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gram", n_blocks)?, 1, 1),
        block_dim: (rung.block.0, rung.block.1, 1),
        shared_mem_bytes: 0,
    };
    let kernel = (
        KernelFile::GRAM,
        &*format!("gram_{}_{}", rung.name, T::SUFFIX),
    );
    // SAFETY: gram_<variant>_<dtype>(int N, int K, const T* A, T* C) with A n×k and C n×n
    // row-major, both buffers checked to hold rows·cols elements; the grid has one block
    // per tile the kernel decodes from blockIdx.x (all tiles, or the upper ones), and
    // every access is bounds-checked against N and K.
    unsafe { launch_in_out(gpu, kernel, cfg, (ni, ki), &m.data, &mut out.data) }
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
