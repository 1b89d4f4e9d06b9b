//! The Hopper rungs of the GEMM ladder (`kernels/wgmma.cu`): `wgmma` (TF32) and
//! `wgmma_3x` (3xTF32), warpgroup-level `wgmma.mma_async` on operands that TMA loads,
//! warp-specialized and persistent; and the gram ladder's `wgmma` (3xTF32 on the upper
//! tiles). f32 only: Hopper has no f64 wgmma, and for f64 the rungs run the `tensor_core`
//! rungs' FP64 tensor-core (DMMA) kernels.
//!
//! A product is two passes: the operands' TF32 planes (A as it lies, B transposed, rows a
//! multiple of 16 bytes apart, as TMA needs), then the GEMM on tensor maps of the planes.
//! TF32 reads A in place where TMA can (K a multiple of 4), rounding it in the kernel, so
//! only B has a pass.

use std::ffi::c_void;
use std::mem::MaybeUninit;

use cudarc::driver::sys::{
    self, CUtensorMap, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndgpu_core::Result;
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{dim_i32, grid_1d, launched};
use ndgpu_cuda_runtime::push_args;
use ndgpu_cuda_runtime::{driver, CudaElement, DeviceMatrix, Gpu};

use super::launch::Product;
use super::table::{Hopper, TF32X3};

/// The dynamic shared memory of both kernels: four stages of 48 KB (`wgmma`) or three of
/// 64 KB (`wgmma_3x`), and 1 KB to align them to the 128-byte swizzle's 1024-byte
/// pattern (`WG_STAGE_BYTES` in `kernels/wgmma.cu`).
const WG_SMEM: u32 = 4 * 48 * 1024 + 1024;

/// A tensor map, passed to a kernel by value (its `TensorMap` parameter).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct TensorMap(CUtensorMap);

// SAFETY: 128 bytes of plain data, 64-byte aligned, as the kernel's `TensorMap` is.
unsafe impl DeviceRepr for TensorMap {}

/// One operand's TF32 planes and the tensor maps of its big and small planes (the same
/// map twice for TF32), as the kernels read it: `rows` × `k`, K-major.
struct Operand<T> {
    /// Kept until the kernel that reads the planes has been queued (freeing is ordered
    /// on the stream); none where the maps describe the operand itself.
    _planes: Option<CudaSlice<T>>,
    maps: [TensorMap; 2],
}

/// TF32's A (m×k, K-major as it lies) read in place, with no planes pass, where TMA can:
/// rows a multiple of 16 bytes apart (K a multiple of 4) from a 16-byte aligned start.
/// The TF32 kernel rounds A's values to nearest as it reads them (`wg_afrag`), so the
/// product is the one of A's plane.
fn in_place<T: CudaElement>(
    gpu: &Gpu,
    (rows, k): (usize, usize),
    x: &CudaSlice<T>,
    box_rows: u32,
) -> Result<Option<Operand<T>>> {
    // Event tracking is off (ndgpu_cuda_runtime::gpu), so the guard does nothing.
    let ptr = x.device_ptr(gpu.stream()).0;
    if k % 4 != 0 || ptr % 16 != 0 {
        return Ok(None);
    }
    let map = tensor_map(ptr, (rows, k), k, box_rows)?;
    Ok(Some(Operand {
        _planes: None,
        maps: [map, map],
    }))
}

/// The TF32 planes of x (rows×cols, or with `trans` its transpose, read K-major), rows a
/// multiple of 16 bytes apart, the remainders' plane (3xTF32) after the first, and their
/// tensor maps in boxes of `box_rows` rows.
fn operand<T: CudaElement>(
    gpu: &Gpu,
    h: Hopper,
    trans: bool,
    (rows, cols): (usize, usize),
    x: &CudaSlice<T>,
    box_rows: u32,
) -> Result<Operand<T>> {
    let (r_out, k) = if trans { (cols, rows) } else { (rows, cols) };
    // Rows of the planes: K rounded up to whole 16-byte vectors.
    let ld = k.next_multiple_of(4);
    dim_i32("gemm", ld)?;
    let stored = if h.planes == 1 { 1 } else { 2 };
    let mut p = gpu.alloc::<T>("gemm", stored * r_out * ld)?;
    let name = format!("tf32_planes_{}_{}", h.planes, if trans { 't' } else { 'n' });
    let f = gpu.function(KernelFile::WGMMA, &name)?;
    let plane = (r_out * ld) as i64;
    let [ri, ci, l] = [rows, cols, ld].map(|d| dim_i32("gemm", d));
    let (r, c, l) = (ri?, ci?, l?);
    let cfg = LaunchConfig {
        grid_dim: (
            cols.div_ceil(32) as u32,
            rows.div_ceil(32).min(65535) as u32,
            1,
        ),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = gpu.stream().launch_builder(&f);
    push_args!(launch; &r, &c, x, &l, &plane, &mut p);
    // SAFETY: tf32_planes_<planes>_<form>(int rows, int cols, const float* X, int ld,
    // i64 plane, float* out): X holds rows·cols elements (the operand's checked buffer);
    // p holds a plane (or two, `plane` elements apart) of r_out rows `ld` ≥ the output's
    // columns apart (allocated above); every access is bounds-checked and the grid's rows
    // are walked by a stride loop.
    launched(&name, unsafe { launch.launch(cfg) })?;
    // Event tracking is off (ndgpu_cuda_runtime::gpu), so the guard does nothing.
    let big = p.device_ptr(gpu.stream()).0;
    let small = if h.planes == 3 {
        big + (r_out * ld * std::mem::size_of::<T>()) as u64
    } else {
        big
    };
    let maps = [
        tensor_map(big, (r_out, k), ld, box_rows)?,
        tensor_map(small, (r_out, k), ld, box_rows)?,
    ];
    Ok(Operand {
        _planes: Some(p),
        maps,
    })
}

/// The kernel `name` of `kernels/wgmma.cu`, granted its shared memory, and its launch
/// over `tiles` tiles: one block of 384 threads per SM at most (the grid is persistent).
fn kernel(gpu: &Gpu, name: &str, tiles: usize) -> Result<(CudaFunction, LaunchConfig)> {
    let f = gpu.function(KernelFile::WGMMA, name)?;
    gpu.grant_shared_memory(&f, name)?;
    let cfg = LaunchConfig {
        grid_dim: (grid_1d("gemm", tiles.min(gpu.sm_count()?))?, 1, 1),
        block_dim: (384, 1, 1),
        shared_mem_bytes: WG_SMEM,
    };
    Ok((f, cfg))
}

/// `C ← alpha·A·B + beta·C` (f32) on the rung `h`.
pub(crate) fn gemm<T: CudaElement>(gpu: &Gpu, h: Hopper, p: Product<'_, T>) -> Result<()> {
    let (m, n, k) = p.mnk;
    let [mi, ni, ki] = [m, n, k].map(|d| dim_i32("gemm", d));
    let (mi, ni, ki) = (mi?, ni?, ki?);
    let a = match h.planes {
        1 => in_place(gpu, (m, k), &p.a.data, 128)?,
        _ => None,
    };
    let a = match a {
        Some(a) => a,
        None => operand(gpu, h, false, (m, k), &p.a.data, 128)?,
    };
    let b = operand(gpu, h, true, (k, n), &p.b.data, h.tile_n)?;
    let [a0, a1] = &a.maps;
    let [b0, b1] = &b.maps;
    let name = h.kernel;
    let tiles = m.div_ceil(128) * n.div_ceil(h.tile_n as usize);
    let (f, cfg) = kernel(gpu, name, tiles)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &mi, &ni, &ki, &p.alpha, a0, a1, b0, b1, &p.beta, &mut p.c.data);
    // SAFETY: gemm_<rung>_f32(int M, int N, int K, float alpha, TensorMap a0, a1, b0, b1,
    // float beta, float* C): T is f32 (the caller's check); the maps describe the planes
    // of A (m×k) and Bᵀ (n×k) inside their buffers (kept in `a` and `b` until after the
    // launch; freeing is ordered on the stream), and TMA reads only inside the maps'
    // extents; C holds m·n elements (checked by the caller) and every store is
    // bounds-checked; 384 threads and WG_SMEM bytes are what the kernel is written for,
    // and any grid size is walked by its persistent loop.
    launched(name, unsafe { l.launch(cfg) })
}

/// `out ← m·mᵀ` (f32, 3xTF32) by `gram_wgmma_f32`: m's planes serve as both operands
/// (A = m and Bᵀ = m, both K-major), the upper 128×128 tiles computed, each result
/// written with its mirror.
pub(crate) fn gram<T: CudaElement>(
    gpu: &Gpu,
    (n, k): (i32, i32),
    m: &DeviceMatrix<T>,
    out: &mut DeviceMatrix<T>,
) -> Result<()> {
    let op = operand(gpu, TF32X3, false, m.dim(), &m.data, 128)?;
    let [m0, m1] = &op.maps;
    let t = m.rows.div_ceil(128);
    let (f, cfg) = kernel(gpu, "gram_wgmma_f32", t * (t + 1) / 2)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &n, &k, m0, m1, &mut out.data);
    // SAFETY: gram_wgmma_f32(int N, int K, TensorMap m0, m1, float* C): T is f32 (the
    // caller's check); the maps describe m's planes (n×k) inside their buffer (kept in
    // `op` until after the launch); C holds n·n elements (checked by the caller), every
    // store bounds-checked; the kernel walks the T(T+1)/2 upper tiles with its persistent
    // loop over any grid, with 384 threads and WG_SMEM bytes.
    launched("gram_wgmma_f32", unsafe { l.launch(cfg) })
}

/// A tensor map of the rows×cols f32 matrix at `ptr` (rows `ld` elements apart) in boxes
/// of `box_rows` × 32, swizzled by 128 bytes, zeros outside the matrix.
fn tensor_map(
    ptr: u64,
    (rows, cols): (usize, usize),
    ld: usize,
    box_rows: u32,
) -> Result<TensorMap> {
    let dims: [u64; 2] = [cols as u64, rows as u64];
    let strides: [u64; 1] = [(ld * 4) as u64];
    let boxes: [u32; 2] = [32, box_rows];
    let steps: [u32; 2] = [1, 1];
    let mut map = MaybeUninit::<CUtensorMap>::zeroed();
    // SAFETY: every array has the rank's length (2, and 1 stride); ptr is 16-byte aligned
    // (a plane is a whole allocation; an operand read in place is checked) and starts at
    // least rows·ld elements of device memory; the stride is a multiple of 16 bytes and
    // the box's inner extent 128 bytes, as the 128-byte swizzle asks.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            2,
            ptr as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            steps.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    r.result().map_err(|e| {
        driver(
            format!("gemm: encoding the tensor map of a {rows}x{cols} plane"),
            e,
        )
    })?;
    // SAFETY: initialised by the successful call.
    Ok(TensorMap(unsafe { map.assume_init() }))
}
