//! The GEMM ladder (`kernels/matmul.cu`): `C ← α·op(A)·op(B) + β·C`, one kernel per
//! optimisation step, from one thread per output with uncoalesced loads to a
//! double-buffered, register-blocked kernel with 16-byte loads.
//!
//! Every kernel multiplies row-major, untransposed operands. Transposed operands are
//! materialised first: on resident data with a transpose kernel, at the ndarray level by
//! uploading the transposed view (the upload lays any view out row-major, so it costs no
//! extra pass).

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ndarray::{Array2, ArrayView2, ShapeBuilder};
use ndgpu_core::{check, Backend, Error, Family, MatMul, Result, Trans};

use crate::kernels::KernelFile;
use crate::ops::transpose;
use crate::{dim_i32, CudaBackend, CudaElement, DeviceMatrix, Gpu};

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[&str] = &[
    "double_buffered",
    "vectorized",
    "reg_blocked",
    "tiled_unrolled",
    "tiled",
    "coalesced",
    "naive",
];

/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &["gemm_double_buffered_f32", "gemm_double_buffered_f64"];

/// Determinism and scope.
pub const NOTE: &str = "matmul (cuda): every variant is bitwise reproducible run to run (no \
atomics; each output is summed by one thread in a fixed order). naive: one thread per output, \
a warp walks down a column (uncoalesced); coalesced: one thread per output, a warp along a row; \
tiled: 32x32 shared-memory tiles (report 000); tiled_unrolled: the same, inner product fully \
unrolled and index arithmetic strength-reduced (report 000); reg_blocked: 128x128 block tile, \
BK 8, 8x8 outputs per thread in registers; vectorized: reg_blocked with 16-byte global and \
shared loads, A transposed in shared memory, warp-tiled 4x4 pieces; double_buffered \
(default): vectorized with BK 16 (f32) and two shared buffers, the next K-tile copied \
asynchronously (cp.async) while the current one is computed. Transposed operands are \
materialised before the product. K = 0 or alpha = 0 gives beta*C without reading A or B.";

/// One rung of the ladder: the tile of C a block computes, and the block's threads.
#[derive(Debug, Clone, Copy)]
struct Rung {
    name: &'static str,
    tile: (usize, usize),
    block: (u32, u32),
}

const RUNGS: [Rung; 7] = [
    Rung {
        name: "double_buffered",
        tile: (128, 128),
        block: (256, 1),
    },
    Rung {
        name: "vectorized",
        tile: (128, 128),
        block: (256, 1),
    },
    Rung {
        name: "reg_blocked",
        tile: (128, 128),
        block: (256, 1),
    },
    Rung {
        name: "tiled_unrolled",
        tile: (32, 32),
        block: (32, 32),
    },
    Rung {
        name: "tiled",
        tile: (32, 32),
        block: (32, 32),
    },
    Rung {
        name: "coalesced",
        tile: (8, 32),
        block: (32, 8),
    },
    Rung {
        name: "naive",
        tile: (32, 8),
        block: (32, 8),
    },
];

fn rung(variant: &str) -> Result<Rung> {
    RUNGS
        .iter()
        .copied()
        .find(|r| r.name == variant)
        .ok_or_else(|| Error::UnknownVariant {
            backend: "cuda".into(),
            family: Family::MatMul,
            name: variant.into(),
            available: VARIANTS.join(", "),
        })
}

/// A view with `dim` and no data of its own (zero strides over one element), so that the
/// shared ndarray-level checks can judge device shapes.
pub(crate) fn shape_only<T>(one: &[T; 1], dim: (usize, usize)) -> ArrayView2<'_, T> {
    ArrayView2::from_shape(dim.strides((0, 0)), &one[..]).expect("zero strides fit one element")
}

/// Checks that a matrix's buffer holds its `rows·cols` elements: the kernels index it up
/// to there.
pub(crate) fn check_buffer<T>(op: &'static str, what: &str, m: &DeviceMatrix<T>) -> Result<()> {
    if m.data.len() < m.len() {
        return Err(Error::invalid(
            op,
            format!(
                "{what} is {}x{} but its buffer holds {} elements",
                m.rows,
                m.cols,
                m.data.len()
            ),
        ));
    }
    Ok(())
}

/// The number of blocks in a 1-D grid, which the kernels index with an `int`.
pub(crate) fn grid_1d(op: &'static str, n_blocks: usize) -> Result<u32> {
    u32::try_from(n_blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::invalid(op, format!("{n_blocks} blocks exceed the 1-D grid")))
}

/// `C ← alpha·op(A)·op(B) + beta·C` on resident data with the named variant. `c` must be
/// op(A)'s rows × op(B)'s columns; with `beta = 0` its contents are never read.
///
/// # Errors
/// [`Error::ShapeMismatch`] (inner dimensions, or `c` of the wrong shape),
/// [`Error::UnknownVariant`], [`Error::InvalidArgument`] for dimensions beyond the
/// kernels' 32-bit indices, device errors (out of memory when a transposed operand is
/// materialised).
#[allow(clippy::too_many_arguments)]
pub fn gemm<T: CudaElement>(
    gpu: &Gpu,
    variant: &str,
    alpha: T,
    a: &DeviceMatrix<T>,
    ta: Trans,
    b: &DeviceMatrix<T>,
    tb: Trans,
    beta: T,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let rung = rung(variant)?;
    let one = [T::zero()];
    let cv = shape_only(&one, c.dim());
    let (m, n, k) = check::gemm(
        shape_only(&one, a.dim()),
        ta,
        shape_only(&one, b.dim()),
        tb,
        beta,
        Some(&cv),
    )?;
    if c.dim() != (m, n) {
        return Err(Error::shape(
            "gemm",
            format!("C is {}x{}, expected {m}x{n}", c.rows, c.cols),
        ));
    }
    for (what, x) in [("A", a), ("B", b)] {
        check_buffer("gemm", what, x)?;
    }
    check_buffer("gemm", "C", c)?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 || alpha == T::zero() {
        return scale(gpu, beta, c);
    }
    let a_t;
    let a = match ta {
        Trans::No => a,
        Trans::Yes => {
            a_t = transposed(gpu, a)?;
            &a_t
        }
    };
    let b_t;
    let b = match tb {
        Trans::No => b,
        Trans::Yes => {
            b_t = transposed(gpu, b)?;
            &b_t
        }
    };
    launch(gpu, rung, (m, n, k), alpha, a, b, beta, c)
}

/// `xᵀ` in a new device matrix.
fn transposed<T: CudaElement>(gpu: &Gpu, x: &DeviceMatrix<T>) -> Result<DeviceMatrix<T>> {
    let mut t = gpu.alloc_matrix("gemm", x.cols, x.rows)?;
    transpose::transpose(gpu, transpose::VARIANTS[0], x, &mut t)?;
    Ok(t)
}

#[allow(clippy::too_many_arguments)]
fn launch<T: CudaElement>(
    gpu: &Gpu,
    rung: Rung,
    (m, n, k): (usize, usize, usize),
    alpha: T,
    a: &DeviceMatrix<T>,
    b: &DeviceMatrix<T>,
    beta: T,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let (mi, ni, ki) = (
        dim_i32("gemm", m)?,
        dim_i32("gemm", n)?,
        dim_i32("gemm", k)?,
    );
    let tiles = m.div_ceil(rung.tile.0) * n.div_ceil(rung.tile.1);
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gemm", tiles)?, 1, 1),
        block_dim: (rung.block.0, rung.block.1, 1),
        shared_mem_bytes: 0,
    };
    let name = format!("gemm_{}_{}", rung.name, T::SUFFIX);
    let f = gpu.function(KernelFile::MatMul, &name)?;
    let mut l = gpu.stream().launch_builder(&f);
    l.arg(&mi)
        .arg(&ni)
        .arg(&ki)
        .arg(&alpha)
        .arg(&a.data)
        .arg(&b.data)
        .arg(&beta)
        .arg(&mut c.data);
    // SAFETY: gemm_<variant>_<dtype>(int M, int N, int K, T alpha, const T* A, const T* B,
    // T beta, T* C) with A m×k, B k×n and C m×n row-major, each buffer checked to hold
    // rows·cols elements; the grid has one block per rung.tile of C, which is what the
    // kernel decodes from blockIdx.x, and every access is bounds-checked against M, N, K.
    launched(&name, unsafe { l.launch(cfg) })
}

/// Turns a launch's result into ours. (`Gpu::launch` takes a closure that cannot push
/// borrowed arguments, so launches here use the stream's builder directly.)
pub(crate) fn launched<E>(
    name: &str,
    r: std::result::Result<E, cudarc::driver::DriverError>,
) -> Result<()> {
    r.map(drop)
        .map_err(|e| crate::runtime::driver(format!("launching {name}"), e))
}

/// `C ← beta·C` (zeros when `beta = 0`, without reading C): the product is empty or
/// multiplied by zero.
fn scale<T: CudaElement>(gpu: &Gpu, beta: T, c: &mut DeviceMatrix<T>) -> Result<()> {
    let len = c.len();
    if beta == T::one() {
        return Ok(());
    }
    if beta == T::zero() {
        return gpu
            .stream()
            .memset_zeros(&mut c.data.slice_mut(0..len))
            .map_err(|e| crate::runtime::driver("gemm: zeroing C", e));
    }
    let (mi, ni) = (dim_i32("gemm", c.rows)?, dim_i32("gemm", c.cols)?);
    let cfg = LaunchConfig {
        grid_dim: (len.div_ceil(256).min(1 << 16) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let name = format!("gemm_scale_{}", T::SUFFIX);
    let f = gpu.function(KernelFile::MatMul, &name)?;
    let mut l = gpu.stream().launch_builder(&f);
    l.arg(&mi).arg(&ni).arg(&beta).arg(&mut c.data);
    // SAFETY: gemm_scale_<dtype>(int M, int N, T beta, T* C) touches C[0..M·N) with a
    // grid-stride loop; C's buffer was checked to hold rows·cols elements.
    launched(&name, unsafe { l.launch(cfg) })
}

impl<T: CudaElement> MatMul<T> for CudaBackend {
    fn gemm(
        &self,
        alpha: T,
        a: ArrayView2<T>,
        ta: Trans,
        b: ArrayView2<T>,
        tb: Trans,
        beta: T,
        c: Option<ArrayView2<T>>,
    ) -> Result<Array2<T>> {
        let (m, n, k) = check::gemm(a, ta, b, tb, beta, c.as_ref())?;
        let c = c.filter(|_| beta != T::zero());
        if m == 0 || n == 0 || k == 0 || alpha == T::zero() {
            // from_shape_fn: the result is C-ordered whatever C's layout.
            return Ok(match c {
                Some(c) => Array2::from_shape_fn((m, n), |ix| beta * c[ix]),
                // m×n is not bounded by the operands' bytes when k = 0.
                None => ndgpu_core::host::filled("gemm", (m, n), T::zero())?,
            });
        }
        let gpu = &self.gpu;
        // Uploading op(X) lays it out row-major: no transpose kernel needed.
        let da = gpu.upload(ta.apply(a))?;
        let db = gpu.upload(tb.apply(b))?;
        let mut dc = match c {
            Some(c) => gpu.upload(c)?,
            None => gpu.alloc_matrix("gemm", m, n)?,
        };
        let variant = self.variant(Family::MatMul);
        gemm(
            gpu,
            variant,
            alpha,
            &da,
            Trans::No,
            &db,
            Trans::No,
            beta,
            &mut dc,
        )?;
        gpu.download(&dc)
    }

    fn gram(&self, m: ArrayView2<T>) -> Result<Array2<T>> {
        let (n, k) = m.dim();
        if n == 0 || k == 0 {
            // n×n is not bounded by the operand's bytes when k = 0.
            return ndgpu_core::host::filled("gram", (n, n), T::zero());
        }
        let gpu = &self.gpu;
        let dm = gpu.upload(m)?;
        let mut out = gpu.alloc_matrix("gram", n, n)?;
        crate::ops::gram::gram(gpu, self.variant(Family::Gram), &dm, &mut out)?;
        gpu.download(&out)
    }
}
