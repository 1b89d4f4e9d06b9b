//! The M·Mᵀ ladder of report 003 (`kernels/gram.cu`): from one thread per output (v001)
//! through shared-memory tiles (v004), the symmetric upper half (v005), single-strip
//! diagonal tiles (v006), a fully unrolled inner product (v007) and column stripes summed
//! with atomics (v008, v009), to the GEMM ladder's register-blocked, vectorized kernel
//! run on upper-triangle tiles only, and the GEMM ladder's tensor-core kernel on those
//! tiles (`tensor_core`: 3xTF32 for f32, FP64 tensor cores for f64). The default,
//! `stream_k`, is `reg_blocked` where C's tiles fill whole waves of the device, and
//! reg_blocked's work dealt out evenly over a fixed number of blocks (stream-K) where
//! they do not: few tiles (a short, wide M: long K, a small C) or a last wave nearly
//! empty.
//!
//! The result is exactly symmetric on every variant: the symmetric ones compute the upper
//! triangle and mirror it; `naive` and `tiled` compute both halves, but C[i][j] and
//! C[j][i] then come from the same multiply-adds in the same order with the factors
//! swapped, which round identically. The stripe rungs sum the upper triangle with
//! atomics into a zeroed C, then copy it to the lower one in a second launch.

mod launch;
mod rules;
mod table;

use cudarc::driver::{DevicePtr, LaunchConfig};
use ndgpu_core::{Backend, DType, Error, Family, Matrix, Result};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{check_buffer, dim_i32, grid_1d, launch_in_out};
use ndgpu_cuda_runtime::{CudaElement, DeviceMatrix, Gpu};

use crate::ops::dispatch::Dev;
use crate::ops::matmul::{self, wgmma};
use crate::CudaBackend;
use launch::{mirror, narrow, stream_k, stream_tc, tensor_core, zero};
use rules::{cut, dmma, narrow_cut, pairs, tc_items};
use table::{rung, Grid, REG_BLOCKED, TENSOR_CORE};

pub(crate) use launch::TC_SMEM_BT_F64;
pub(crate) use rules::plan;
pub use table::{gram_row_limit, variants, DEFAULT_KERNELS, NOTE};

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
    let hopper = rung.hopper && T::DTYPE == DType::F32;
    // The Hopper rung runs tensor_core's DMMA kernel for f64, which needs sm_80 only.
    let needs = if rung.hopper && !hopper {
        TENSOR_CORE.v
    } else {
        rung.v
    };
    super::require(gpu, Family::Gram, &needs)?;
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
    let rung = if rung.v.name == "stream_k" {
        let dev = Dev::of(gpu)?;
        if let Some(cut) = narrow_cut(dev, (n, k)) {
            return narrow(gpu, (ni, ki), cut, m, out);
        }
        if T::DTYPE == DType::F64 && matmul::has_tensor_cores(gpu) && dmma(dev, (n, k)) {
            let paired = pairs(k, m.data.device_ptr(gpu.stream()).0);
            return match matmul::stream_cut(dev, tc_items(n, paired), k.div_ceil(16)) {
                Some(cut) => stream_tc(gpu, (ni, ki), paired, cut, m, out),
                None => tensor_core(gpu, (ni, ki), m, out),
            };
        }
        let c = cut::<T>(dev, (n, k));
        if let Some(blocks) = c.blocks {
            return stream_k(gpu, (ni, ki), c, blocks, m, out);
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
    let kernel = (KernelFile::GRAM, rung.kernel.of::<T>());
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

/// M·Mᵀ of a resident `m` into a new matrix, by the selected variant: the backend's
/// `gram` kernel.
pub(crate) fn gram_of<T: CudaElement>(b: &CudaBackend, m: &Matrix<T>) -> Result<Matrix<T>> {
    let gpu = b.gpu();
    let dm = gpu.dm(b.here(), "gram", "M", m)?;
    let n = dm.rows;
    let mut out = gpu.alloc_matrix("gram", n, n)?;
    gram(gpu, b.variant(Family::Gram), dm, &mut out)?;
    Ok(gpu.matrix(out))
}

#[cfg(test)]
mod tests {
    use super::rules::*;
    use super::table::RUNGS;
    use super::*;

    #[test]
    fn every_variant_has_a_rung_and_only_the_stripe_rungs_have_a_row_limit() {
        for v in variants().map(|v| v.name) {
            let r = rung(v).unwrap();
            assert!(
                r.block.0 * r.block.1 <= 1024 && r.block.0.is_multiple_of(32),
                "{v}"
            );
            let limit = gram_row_limit(v);
            assert_eq!(limit.is_some(), v.starts_with("stripes"), "{v}");
        }
        assert_eq!(gram_row_limit("stripes"), Some(1024));
        assert_eq!(gram_row_limit("nope"), None);
        assert_eq!(RUNGS[0].v.name, "stream_k");
        let launched = [
            "gram_stream_k_",
            "gram_reg_blocked_",
            "gram_narrow",
            "gram_tensor_core_f64",
            "gram_stream_tc_",
        ];
        assert!(DEFAULT_KERNELS
            .iter()
            .all(|k| launched.iter().any(|p| k.starts_with(p))));
        // 8 floats or 4 doubles per stripe, as the kernels' W = 32 / sizeof(T).
        assert_eq!(Grid::Stripes.blocks::<f32>(1024, 17), 3);
        assert_eq!(Grid::Stripes.blocks::<f64>(1024, 17), 5);
    }

    #[test]
    fn stream_k_runs_where_whole_tiles_leave_a_wave_part_empty() {
        let p = |dtype, nk| plan("stream_k", dtype, false, Dev::hopper(132), nk).unwrap();
        assert_eq!(
            plan(
                "reg_blocked",
                DType::F32,
                false,
                Dev::hopper(132),
                (32, 1 << 20)
            ),
            None
        );
        // Whole waves: 528 tiles are two waves of 264 blocks; 2080 are 7.9.
        assert_eq!(
            p(DType::F32, (4096, 4096)),
            "reg_blocked: 528 upper tiles, one block each, for 132 SMs"
        );
        assert!(p(DType::F32, (8192, 8192)).starts_with("reg_blocked: 2080 upper tiles"));
        // 136 tiles leave 128 of 264 blocks idle: 17,408 K-steps over 264 blocks.
        assert_eq!(
            p(DType::F32, (2048, 2048)),
            "stream-K: 136 upper tiles of 128 K-steps over 264 blocks, 66 each"
        );
        // One tile over a long K: as many blocks as the device holds at once.
        assert_eq!(
            p(DType::F32, (100, 1 << 20)),
            "stream-K: 1 upper tile of 65536 K-steps over 264 blocks, 249 each"
        );
        // f64: one block per SM, K-steps of 8.
        assert_eq!(
            p(DType::F64, (2048, 2048)),
            "stream-K: 136 upper tiles of 256 K-steps over 132 blocks, 264 each"
        );
        // Too little work to cut: one tile of four K-steps.
        assert!(p(DType::F32, (64, 64)).starts_with("reg_blocked: 1 upper tile,"));
        // f64 on FP64 tensor cores where their blocks fill half the SMs or K is short.
        let q = |nk| plan("stream_k", DType::F64, true, Dev::hopper(132), nk).unwrap();
        // Two blocks a tile, less the left blocks of the odd diagonal tiles (paired).
        assert_eq!(
            q((1024, 1024)),
            "tensor_core (FP64 tensor cores): 36 upper tiles of 128x128, 68 blocks of 128x64"
        );
        // 410 blocks, 1.55 waves: stream-K over all of them (matmul's rule).
        assert_eq!(
            q((2560, 2560)),
            "tensor_core (FP64 tensor cores): 210 upper tiles of 128x128, 410 blocks of \
             128x64; stream-K: 410 of 160 K-tiles of 16 dealt out over 264 blocks, the \
             other 0 one to a block"
        );
        assert_eq!(tc_items(3072, false), 600);
        assert!(q((65536, 64)).starts_with("tensor_core"));
        assert!(q((256, 256)).starts_with("tensor_core"));
        // A K of at most 1024 with at least 11 blocks (512²: 18); longer, or fewer
        // blocks: stream-K on the CUDA cores.
        assert!(q((512, 512)).starts_with("tensor_core"));
        assert!(q((320, 320)).starts_with("tensor_core"));
        assert!(q((768, 768)).starts_with("tensor_core"));
        assert!(q((512, 2048)).starts_with("stream-K"));
        assert!(q((256, 640)).starts_with("stream-K"));
        assert!(q((130, 262_147)).starts_with("stream-K"));
        assert!(q((32, 1 << 20)).starts_with("narrow"));
        // Short and wide: the narrow kernel, at about 1024 threads per SM.
        assert_eq!(
            p(DType::F32, (32, 1 << 20)),
            "narrow: C padded to 32x32, K in 2048 slices of 512"
        );
        assert_eq!(
            p(DType::F64, (64, 65536)),
            "narrow: C padded to 64x64, K in 512 slices of 128"
        );
        assert_eq!(
            p(DType::F32, (33, 1024)),
            "narrow: C padded to 64x64, K in 16 slices of 64"
        );
        assert!(p(DType::F32, (65, 1 << 20)).starts_with("stream-K: 1 upper tile"));
        // Tall, skinny M: 131,328 tiles of four K-steps fill 497.5 waves.
        assert!(p(DType::F32, (65536, 64)).starts_with("reg_blocked: 131328 upper tiles"));
    }

    #[test]
    fn stream_k_slots_cover_every_tile_a_range_meets() {
        for (n, k) in [
            (2048, 2048),
            (3072, 3072),
            (2560, 333),
            (300, 100_000),
            (1, 17),
        ] {
            let c = cut::<f32>(Dev::hopper(132), (n, k));
            let Some(b) = c.blocks else { continue };
            let u = c.tiles * c.steps;
            assert!(b <= u, "{n}x{k}");
            for i in 0..b {
                let (u0, u1) = (i * u / b, (i + 1) * u / b);
                let met = (u1 - 1) / c.steps - u0 / c.steps + 1;
                assert!(met <= c.most, "{n}x{k}: block {i} meets {met} > {}", c.most);
            }
        }
    }
}
