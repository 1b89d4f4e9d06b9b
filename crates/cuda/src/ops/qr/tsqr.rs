//! TSQR (Demmel, Grigori, Hoemmen, Langou, "Communication-optimal parallel and
//! sequential QR and LU factorizations", 2012): a tall m×n matrix (n ≤ [`MAX_COLS`]) cut
//! into tiles of [`TILE`] rows, each factored by one block in shared memory; their R's
//! stacked (n rows each) and factored the same way, level after level, until one tile is
//! left, whose R is A's.
//!
//! The factor keeps level 0's reflectors in place below each tile's diagonal and every
//! other level in the factor's `tau` buffer, laid out per level as `[τ of every tile]`
//! then `[the next level's stacked matrix]`; [`Tree`] computes the offsets from (m, n).
//! Applying Qᵀ runs the levels up (each tile's reflectors on its rows, then the tiles'
//! top n rows gathered into the next level); Q runs them down.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, LaunchConfig, PushKernelArg};
use ndgpu_core::{Error, Result};
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::launch::go;
use ndgpu_cuda_runtime::{dim_i32, kernel, push_args, CudaElement, Gpu};

/// Rows per tile (`TSQR_ROWS` in `kernels/qr.cu`).
pub(super) const TILE: usize = 256;
/// The widest matrix TSQR takes: a tile and its reflectors fit in shared memory.
pub(super) const MAX_COLS: usize = 64;

/// One level of the tree.
#[derive(Debug, Clone, Copy)]
pub(super) struct Level {
    /// Rows of the level's matrix (A's for level 0).
    pub rows: usize,
    /// Tiles of [`TILE`] rows.
    pub tiles: usize,
    /// Offset of the level's τ in the buffer.
    pub tau: usize,
    /// Offset of the level's matrix in the buffer (none for level 0: A itself).
    pub mat: Option<usize>,
}

/// The levels of TSQR of an m×n matrix and the buffer they take.
#[derive(Debug, Clone)]
pub(super) struct Tree {
    pub levels: Vec<Level>,
    pub len: usize,
    pub n: usize,
}

impl Tree {
    pub(super) fn new(m: usize, n: usize) -> Tree {
        let mut levels = Vec::new();
        let (mut rows, mut at, mut mat) = (m, 0, None);
        loop {
            let tiles = rows.div_ceil(TILE).max(1);
            levels.push(Level {
                rows,
                tiles,
                tau: at,
                mat,
            });
            at += tiles * n;
            if tiles == 1 {
                break;
            }
            rows = tiles * n;
            mat = Some(at);
            at += rows * n;
        }
        Tree { levels, len: at, n }
    }
}

/// Shared memory of a tile of `cols` columns, each row padded by one element.
fn smem<T>(cols: usize) -> u32 {
    (TILE * (cols + 1) * std::mem::size_of::<T>()) as u32
}

/// Factors `a` (m×n) by TSQR into `buf` ([`Tree::len`] elements): reflectors in place,
/// R over the top n×n of `a`.
///
/// # Errors
/// Dimensions beyond the kernels' indices; device errors.
pub(super) fn factor<T: CudaElement>(
    gpu: &Gpu,
    a: &mut CudaSlice<T>,
    tree: &Tree,
    buf: &mut CudaSlice<T>,
) -> Result<()> {
    let n = dim_i32("qr", tree.n)?;
    let name = kernel!("tsqr_tile").of::<T>();
    let f = gpu.function(KernelFile::QR, name)?;
    gpu.grant_shared_memory(&f, name)?;
    let (null, zero, one) = (0u64, 0i32, 1i32);
    for (l, lv) in tree.levels.iter().enumerate() {
        let top = l + 1 == tree.levels.len();
        let rows = lv.rows as i64;
        let cfg = LaunchConfig {
            grid_dim: (lv.tiles as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: smem::<T>(tree.n),
        };
        // The buffer from the level's τ on: [τ][the next level's stack]...; before it,
        // the level's own stack (levels past 0).
        let (mut lo, mut hi) = buf.split_at_mut(lv.tau);
        let (mut taus, mut next) = hi.split_at_mut(lv.tiles * tree.n);
        let mut own = lo.slice_mut(lv.mat.unwrap_or(0)..);
        let mut b = gpu.stream().launch_builder(&f);
        match (lv.mat, top) {
            // One tile: A's own R is the tile's; nothing goes up.
            (None, true) => push_args!(b; &mut *a, &rows, &n, &mut taus, &null, &zero),
            (None, false) => push_args!(b; &mut *a, &rows, &n, &mut taus, &mut next, &zero),
            (Some(_), false) => push_args!(b; &mut own, &rows, &n, &mut taus, &mut next, &zero),
            // The top of the tree: its R over A's first n rows, upper triangle only.
            (Some(_), true) => push_args!(b; &mut own, &rows, &n, &mut taus, &mut *a, &one),
        }
        // SAFETY: (T* a, i64 rows, int n, T* tau, T* next, int upper_only): the level's
        // matrix (A, or its stack in the buffer) holds rows·n elements, its τ tiles·n,
        // next the next level's stack of tiles·n rows of n (it follows τ in the buffer)
        // or, at the top, A's first n rows (upper triangle only), or is null for a single
        // tile; every block reads and writes its own tile's rows; TILE·n elements of
        // shared memory (granted above).
        unsafe { go(b, name, cfg)? };
    }
    Ok(())
}

/// Applies Q (`trans` false) or Qᵀ to the m×nrhs `b` in place, with the reflectors of
/// `a` and `buf`. With `up_only`, Qᵀ stops at the top level and returns its buffer:
/// its first n rows are the first n rows of Qᵀ·B (for least squares).
///
/// # Errors
/// Out of memory (each level's rows of B); device errors.
pub(super) fn apply<T: CudaElement>(
    gpu: &Gpu,
    (a, buf): (&CudaSlice<T>, &CudaSlice<T>),
    tree: &Tree,
    b: &mut CudaSlice<T>,
    nrhs: usize,
    trans: bool,
    up_only: bool,
) -> Result<Option<CudaSlice<T>>> {
    let levels = &tree.levels;
    let mut bl: Vec<CudaSlice<T>> = Vec::new();
    for lv in &levels[1..] {
        bl.push(gpu.alloc::<T>("qr_apply", lv.rows * nrhs)?);
    }
    let top = levels.len() - 1;
    if trans {
        for l in 0..=top {
            apply_level(gpu, (a, buf), tree, l, level_b(b, &mut bl, l), nrhs, true)?;
            if l < top {
                tops(gpu, (tree, l), (&mut bl, b), (nrhs, true))?;
            }
        }
        if up_only {
            return Ok(bl.pop());
        }
        for l in (0..top).rev() {
            tops(gpu, (tree, l), (&mut bl, b), (nrhs, false))?;
        }
    } else {
        for l in 0..top {
            tops(gpu, (tree, l), (&mut bl, b), (nrhs, true))?;
        }
        for l in (0..=top).rev() {
            apply_level(gpu, (a, buf), tree, l, level_b(b, &mut bl, l), nrhs, false)?;
            if l > 0 {
                tops(gpu, (tree, l - 1), (&mut bl, b), (nrhs, false))?;
            }
        }
    }
    Ok(None)
}

/// B at level l: b itself, or the level's buffer.
fn level_b<'a, T>(
    b: &'a mut CudaSlice<T>,
    bl: &'a mut [CudaSlice<T>],
    l: usize,
) -> CudaViewMut<'a, T> {
    if l == 0 {
        b.slice_mut(..)
    } else {
        bl[l - 1].slice_mut(..)
    }
}

fn apply_level<T: CudaElement>(
    gpu: &Gpu,
    (a, buf): (&CudaSlice<T>, &CudaSlice<T>),
    tree: &Tree,
    l: usize,
    mut b: CudaViewMut<T>,
    nrhs: usize,
    trans: bool,
) -> Result<()> {
    let lv = tree.levels[l];
    let name = kernel!("tsqr_apply").of::<T>();
    let f = gpu.function(KernelFile::QR, name)?;
    gpu.grant_shared_memory(&f, name)?;
    let v: CudaView<T> = match lv.mat {
        Some(at) => buf.slice(at..),
        None => a.slice(..),
    };
    let taus = buf.slice(lv.tau..);
    let (rows, n, nr, tr) = (
        lv.rows as i64,
        dim_i32("qr_apply", tree.n)?,
        dim_i32("qr_apply", nrhs)?,
        i32::from(trans),
    );
    let chunks = u32::try_from(nrhs.div_ceil(8))
        .ok()
        .filter(|&c| c <= 65535)
        .ok_or_else(|| Error::invalid("qr_apply", "too many right-hand sides for TSQR"))?;
    let cfg = LaunchConfig {
        grid_dim: (lv.tiles as u32, chunks, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: smem::<T>(tree.n + 9),
    };
    let mut k = gpu.stream().launch_builder(&f);
    push_args!(k; &v, &rows, &n, &taus, &mut b, &nr, &tr);
    // SAFETY: (const T* v, i64 rows, int n, const T* tau, T* b, int nrhs, int trans): v
    // holds rows·n, tau tiles·n, b rows·nrhs; block (t, c) reads tile t's rows and writes
    // columns [8c, 8c + 8) ∩ [0, nrhs) of them; TILE·(n + 8) elements of shared memory.
    unsafe { go(k, name, cfg) }
}

/// Each tile's top n rows of B at level l up to level l + 1's buffer, or back down.
fn tops<T: CudaElement>(
    gpu: &Gpu,
    (tree, l): (&Tree, usize),
    (bl, b): (&mut [CudaSlice<T>], &mut CudaSlice<T>),
    (nrhs, up): (usize, bool),
) -> Result<()> {
    let lv = tree.levels[l];
    let name = kernel!("tsqr_tops").of::<T>();
    let f = gpu.function(KernelFile::QR, name)?;
    let (low, high) = if l == 0 {
        (b.slice_mut(..), bl[0].slice_mut(..))
    } else {
        let (lo, hi) = bl.split_at_mut(l);
        (lo[l - 1].slice_mut(..), hi[0].slice_mut(..))
    };
    let (mut low, mut high) = (low, high);
    let (rows, n, nr, u) = (
        lv.rows as i64,
        dim_i32("qr_apply", tree.n)?,
        dim_i32("qr_apply", nrhs)?,
        i32::from(up),
    );
    let mut k = gpu.stream().launch_builder(&f);
    push_args!(k; &mut low, &rows, &n, &mut high, &nr, &u);
    // SAFETY: (T* lvl, i64 rows, int n, T* upper, int nrhs, int up): lvl holds rows·nrhs,
    // upper tiles·n·nrhs; block t copies its tile's first n rows (below rows) only.
    unsafe {
        go(
            k,
            name,
            ndgpu_cuda_runtime::launch::linear(lv.tiles as u32, 256),
        )
    }
}
