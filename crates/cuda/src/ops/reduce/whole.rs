//! Whole-array reductions: one launch function per technique of `kernels/reduce.cu`
//! (the default, `shuffle`, is the runtime's, which the vendor backend launches too).
//! Scratch (partials, ticket) is allocated per call, stream-ordered, and freed the same
//! way, so a call costs no host synchronisation until its result is read.

use cudarc::driver::{CudaSlice, PushKernelArg};
use ndgpu_core::Result;
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::{grid_1d, launched, linear};
use ndgpu_cuda_runtime::push_args;
use ndgpu_cuda_runtime::reduce::{kernel_name, read_at, read_result, shuffle, Kind, Whole};
use ndgpu_cuda_runtime::{CudaElement, Gpu};

/// Threads per block of the ladder and `finish` kernels (`LADDER_THREADS`,
/// `FINISH_THREADS` in the kernel file).
const THREADS: u32 = 256;
/// Partials one `finish` block folds (`FINISH_THREADS · FINISH_ITEMS`).
const FINISH_PER_BLOCK: usize = 256 * 8;
/// `ATOMIC_THREADS`.
const ATOMIC_THREADS: u32 = 512;
/// Blocks of `atomic` per multiprocessor (report 004 used 240 blocks of 512).
const ATOMIC_BLOCKS_PER_SM: usize = 2;

/// How a variant reduces a whole array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Technique {
    Shuffle,
    /// A classic-ladder kernel (its name) covering this many elements per block,
    /// then `finish` passes.
    Ladder(&'static str, usize),
    Atomic,
}

/// The technique of a variant name.
pub(super) fn technique(variant: &str) -> Option<Technique> {
    Some(match variant {
        "shuffle" => Technique::Shuffle,
        "unrolled_warp" => Technique::Ladder("unrolled_warp", 512),
        "first_add" => Technique::Ladder("first_add", 512),
        "sequential" => Technique::Ladder("sequential", 256),
        "interleaved" => Technique::Ladder("interleaved", 256),
        "dot_atomic" => Technique::Atomic,
        _ => return None,
    })
}

/// Reduces `w` and returns (value, index); the index is meaningful for arg ops only.
pub(super) fn run<T: CudaElement>(gpu: &Gpu, tech: Technique, w: Whole<'_, T>) -> Result<(T, i64)> {
    debug_assert!(w.n >= 1 && w.n <= w.x.len() && w.n <= w.y.len());
    match tech {
        Technique::Atomic if w.kind.additive() => atomic(gpu, w).map(|v| (v, -1)),
        Technique::Atomic | Technique::Shuffle => shuffle(gpu, w),
        Technique::Ladder(name, per_block) => ladder(gpu, name, per_block, w),
    }
}

/// One partial per block of `per_block` elements, then `finish` passes until one
/// partial remains.
fn ladder<T: CudaElement>(
    gpu: &Gpu,
    name: &str,
    per_block: usize,
    w: Whole<'_, T>,
) -> Result<(T, i64)> {
    let Whole { kind, x, y, n } = w;
    let grid = grid_1d(kind.name(), n.div_ceil(per_block))?;
    let mut pv = gpu.alloc::<T>(kind.name(), grid as usize)?;
    let mut pi = gpu.alloc_zeroed::<i64>("reduce", grid as usize)?;
    let n64 = n as i64;
    let cfg = linear(grid, THREADS);
    let kname = kernel_name::<T>(kind, name);
    let f = gpu.function(KernelFile::REDUCE, &kname)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; x, y, &n64, &mut pv, &mut pi);
    // SAFETY: (const T* x, const T* y, i64 n, T* pv, i64* pi): x and y hold at least n
    // elements, read only below n; each of the `grid` blocks writes entry blockIdx.x of
    // pv and pi, which hold `grid` entries.
    launched(&kname, unsafe { l.launch(cfg) })?;
    let (pv, pi) = finish(gpu, kind, pv, pi, grid as usize)?;
    read_result(gpu, kind, &pv, &pi, 0)
}

/// Folds `p` partials, 2048 per block in index order, until one remains (at index 0).
fn finish<T: CudaElement>(
    gpu: &Gpu,
    kind: Kind,
    mut pv: CudaSlice<T>,
    mut pi: CudaSlice<i64>,
    mut p: usize,
) -> Result<(CudaSlice<T>, CudaSlice<i64>)> {
    while p > 1 {
        let q = p.div_ceil(FINISH_PER_BLOCK);
        let mut qv = gpu.alloc::<T>(kind.name(), q)?;
        let mut qi = gpu.alloc_zeroed::<i64>("reduce", q)?;
        let p64 = p as i64;
        let cfg = linear(q as u32, THREADS);
        let name = kernel_name::<T>(kind, "finish");
        let f = gpu.function(KernelFile::REDUCE, &name)?;
        let mut l = gpu.stream().launch_builder(&f);
        push_args!(l; &pv, &pi, &p64, &mut qv, &mut qi);
        // SAFETY: (const T* in_v, const i64* in_i, i64 p, T* out_v, i64* out_i): the
        // inputs hold p entries and are read below p only; block b writes entry b of the
        // outputs, which hold q = ceil(p / 2048) entries.
        launched(&name, unsafe { l.launch(cfg) })?;
        (pv, pi, p) = (qv, qi, q);
    }
    Ok((pv, pi))
}

/// Report 004: `2·SM` blocks of 512 threads, each adding its sum into a zeroed result.
fn atomic<T: CudaElement>(gpu: &Gpu, w: Whole<'_, T>) -> Result<T> {
    let Whole { kind, x, y, n } = w;
    let cap = ATOMIC_BLOCKS_PER_SM * gpu.sm_count()?.max(1);
    let grid = n.div_ceil(ATOMIC_THREADS as usize).clamp(1, cap) as u32;
    let mut out = gpu.alloc_zeroed::<T>("reduce", 1)?;
    let n64 = n as i64;
    let cfg = linear(grid, ATOMIC_THREADS);
    let name = kernel_name::<T>(kind, "atomic");
    let f = gpu.function(KernelFile::REDUCE, &name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; x, y, &n64, &mut out);
    // SAFETY: (const T* x, const T* y, i64 n, T* out): x and y hold at least n elements,
    // read only below n (grid-stride loop); out is one zeroed element.
    launched(&name, unsafe { l.launch(cfg) })?;
    read_at(gpu, &out, 0)
}
