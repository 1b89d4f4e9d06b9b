//! The transpose ladder (report 001).
//!
//! | variant | kernel | tile, threads | idea |
//! |---|---|---|---|
//! | `tile64_ilp` | `transpose_tile64_ilp_*` | 64×65, 32×8, 16 elements each | many loads in flight per thread, small blocks |
//! | `padded` | `transpose_padded_*` | 32×33, 32×8, 4 elements each | padding removes bank conflicts |
//! | `tile64` | `transpose_tile64_*` | 64×65, 64×16, 4 elements each | report 001's "optimal" (4-way unrolled) |
//! | `smem` | `transpose_smem_*` | 32×32, 32×8, 4 elements each | shared-memory tile: coalesced both ways |
//! | `naive` | `transpose_naive_*` | none, 32×8 | one thread per element, strided writes |
//!
//! Every variant moves each element exactly once, so all are exact and reproducible.
use cudarc::driver::LaunchConfig;
use ndgpu_core::{Backend, Error, Family, Matrix, Result, TransposeKernels, Variant};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{blocks, launch_in_out};
use ndgpu_cuda_runtime::{kernel, CudaElement, DeviceMatrix, Gpu, Kernel};

use crate::CudaBackend;

/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &["transpose_tile64_ilp_f32", "transpose_tile64_ilp_f64"];
/// What every variant shares.
pub const NOTE: &str = "every variant moves each element once, so all are exact and bitwise \
    reproducible; any m×n";

/// The kernels take `int` dimensions and step row indices by up to 8·65535 past the
/// end of a tile column, so dimensions stay this far below `i32::MAX`.
const MAX_DIM: usize = i32::MAX as usize - (1 << 20);

/// One rung: its row in the variant table, its kernel, its block shape and its tile
/// (elements per block side; 0 for none).
#[derive(Debug, Clone, Copy)]
struct Rung {
    v: Variant,
    kernel: Kernel,
    block: (u32, u32),
    tile: u32,
}

impl Rung {
    const fn new(v: Variant, kernel: Kernel, block: (u32, u32), tile: u32) -> Rung {
        Rung {
            v,
            kernel,
            block,
            tile,
        }
    }
}

/// The ladder, expected fastest first: one row per variant.
const RUNGS: [Rung; 5] = [
    Rung::new(
        Variant::new(
            "tile64_ilp",
            "64×65 tile, 32×8 threads moving 16 elements each",
        ),
        kernel!("transpose_tile64_ilp"),
        (32, 8),
        64,
    ),
    Rung::new(
        Variant::new("padded", "32×33 tile (padded against bank conflicts)"),
        kernel!("transpose_padded"),
        (32, 8),
        32,
    ),
    Rung::new(
        Variant::new("tile64", "64×65 tile, 64×16 threads moving 4 elements each"),
        kernel!("transpose_tile64"),
        (64, 16),
        64,
    ),
    Rung::new(
        Variant::new("smem", "32×32 shared-memory tile with bank conflicts"),
        kernel!("transpose_smem"),
        (32, 8),
        32,
    ),
    Rung::new(
        Variant::new("naive", "one thread per element, strided writes"),
        kernel!("transpose_naive"),
        (32, 8),
        0,
    ),
];

/// The variant table's rows, default first.
pub fn variants() -> impl Iterator<Item = Variant> {
    RUNGS.iter().map(|r| r.v)
}

/// The default variant's name.
pub(crate) const DEFAULT: &str = RUNGS[0].v.name;

fn rung(variant: &str) -> Result<Rung> {
    super::find_rung(&RUNGS, |r| r.v, Family::Transpose, variant)
}

/// `out ← aᵀ` on resident data with the named variant. `out` must be `a.cols × a.rows`;
/// an empty `a` launches nothing.
///
/// # Errors
/// [`Error::UnknownVariant`]; [`Error::ShapeMismatch`] when `out` has the wrong shape;
/// [`Error::InvalidArgument`] for a dimension beyond the kernels' 32-bit range; device
/// errors.
pub(crate) fn transpose<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    a: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    let Rung {
        kernel,
        block: (bx, by),
        tile,
        ..
    } = rung(variant)?;
    if out.dim() != (a.cols, a.rows) {
        return Err(Error::shape(
            "transpose",
            format!(
                "input is {}x{}, so the output must be {}x{}, got {}x{}",
                a.rows, a.cols, a.cols, a.rows, out.rows, out.cols
            ),
        ));
    }
    if a.is_empty() {
        return Ok(());
    }
    if a.rows > MAX_DIM || a.cols > MAX_DIM {
        return Err(Error::invalid(
            "transpose",
            format!(
                "{}x{}: dimensions above {MAX_DIM} exceed the kernels' index range",
                a.rows, a.cols
            ),
        ));
    }
    // naive: one thread per element, blocks of 32 columns × 8 rows; tiled: one block
    // per tile. Row tiles beyond gridDim.y's limit are walked by the kernels' loop.
    let (gx, gy) = if tile == 0 {
        (blocks(a.cols, 32), blocks(a.rows, 8))
    } else {
        (blocks(a.cols, tile as usize), blocks(a.rows, tile as usize))
    };
    let cfg = LaunchConfig {
        grid_dim: (gx, gy.min(65535), 1),
        block_dim: (bx, by, 1),
        shared_mem_bytes: 0,
    };
    let (rows, cols) = (a.rows as i32, a.cols as i32);
    let kernel = (KernelFile::TRANSPOSE, kernel.of::<T>());
    // SAFETY: the kernel takes (int rows, int cols, const T* in, T* out); `a.data` holds
    // rows·cols elements and `out.data` cols·rows (checked above), and every access is
    // guarded by the dimensions, which fit the kernels' index arithmetic (MAX_DIM).
    unsafe { launch_in_out(gpu, kernel, cfg, (rows, cols), &a.data, &mut out.data) }
}

impl<T: CudaElement> TransposeKernels<T> for CudaBackend {
    fn transpose_unchecked(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        let gpu = self.gpu();
        let da = gpu.dm(self.here(), "transpose", "A", a)?;
        let mut out = gpu.alloc_matrix("transpose", da.cols, da.rows)?;
        transpose(gpu, self.variant(Family::Transpose), da, &mut out)?;
        Ok(gpu.matrix(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rung_has_a_block_and_default_kernels_are_the_first_rungs() {
        for r in RUNGS {
            let (bx, by) = r.block;
            assert!(bx * by <= 1024 && bx % 32 == 0, "{}", r.v.name);
        }
        assert!(rung("nope").is_err());
        for r in RUNGS {
            assert_eq!(r.kernel.f64, format!("transpose_{}_f64", r.v.name));
        }
        assert!(DEFAULT_KERNELS
            .iter()
            .all(|k| [RUNGS[0].kernel.f32, RUNGS[0].kernel.f64].contains(k)));
    }
}
