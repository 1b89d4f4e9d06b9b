//! Reductions along one axis of a row-major matrix. `Axis(1)` (per row, contiguous):
//! for arg ops on rows of at most 8 whole 16-byte vectors, a thread per row; for rows of
//! whole 16-byte vectors, up to 32 lanes of vector loads; else a group of up to 32
//! lanes per row (as many as the row is long, rounded up to a power of two), 4 rows per
//! group at a time; or, for few long rows, blocks on chunks of each row. `Axis(0)` (per
//! column): for few rows of whole vectors, a thread per vector of columns; else threads
//! over columns, so every warp reads whole lines;
//! rows are split into chunks when there are too few columns to fill the device. Chunks
//! are folded by a second pass in a fixed order (eight runs of consecutive chunks, then
//! the runs), so every order is fixed by the shape and the device.

use crate::push_args;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use ndarray::Axis;
use ndgpu_core::{Error, Result};

use super::{kernel_name, Kind};
use crate::kernels::KernelFile;
use crate::launch::{launched, linear};
use crate::{CudaElement, DeviceMatrix, Gpu};

/// The kernels take `int` dimensions and step past the end by at most a few hundred.
const MAX_DIM: usize = i32::MAX as usize - (1 << 20);
/// Rows at least this long, too few to fill the device in groups, get blocks of their own.
const BLOCK_ROW_MIN_COLS: usize = 1024;
/// Column chunks of a long row are at least this long (4 loads of 256 threads × 4).
const MIN_CHUNK_COLS: usize = 4096;
/// Row chunks of a column are at least this long (shorter ones would be mostly overhead).
const MIN_CHUNK_ROWS: usize = 64;
/// At most this many rows (`COLS_VEC_ROWS` in reduce.cu), of whole 16-byte vectors, get
/// a thread per vector of columns that walks them all.
const COLS_VEC_ROWS: usize = 64;
/// The most 16-byte vectors in a row that `rows_thread` takes (`RT_VECS` in
/// reduce_axis.cuh: a thread holds two rows of them in registers).
const RT_VECS: usize = 8;
/// Blocks per SM the axis kernels aim for when they split a row or a column.
const BLOCKS_PER_SM: usize = 8;
/// Blocks per SM of `cols_tall` (each of its 256 threads keeps four 16-byte loads in
/// flight; `cols_finish` then folds the chunks, eight loads at a time).
const TALL_BLOCKS_PER_SM: usize = 4;

/// Checks that the dimensions fit the kernels' index range.
pub(super) fn check_dims<T>(op: &'static str, m: &DeviceMatrix<T>) -> Result<()> {
    if m.rows > MAX_DIM || m.cols > MAX_DIM {
        return Err(Error::invalid(
            op,
            format!(
                "{}x{}: dimensions above {MAX_DIM} exceed the kernels' index range",
                m.rows, m.cols
            ),
        ));
    }
    Ok(())
}

/// Where an axis reduction writes: values, and indices (written by arg ops only; value
/// ops may pass a one-element buffer), each holding at least the kept length.
pub(super) struct Out<'a, T> {
    pub(super) v: &'a mut CudaSlice<T>,
    pub(super) i: &'a mut CudaSlice<i64>,
}

/// Reduces a non-empty `m` along `axis` into `out`.
pub(super) fn run<T: CudaElement>(
    gpu: &Gpu,
    kind: Kind,
    m: &DeviceMatrix<T>,
    axis: Axis,
    out: Out<T>,
) -> Result<()> {
    debug_assert!(!m.is_empty() && !matches!(kind, Kind::Dot));
    if axis.index() == 1 {
        rows(gpu, kind, m, out)
    } else {
        cols(gpu, kind, m, out)
    }
}

fn rows<T: CudaElement>(gpu: &Gpu, kind: Kind, m: &DeviceMatrix<T>, out: Out<T>) -> Result<()> {
    let sm = gpu.sm_count()?.max(1);
    let (r, c) = (m.rows as i32, m.cols as i32);
    // Long rows, too few of them for the groups (4 rows each) to fill the device:
    // blocks per row, on chunks of columns.
    if m.cols >= BLOCK_ROW_MIN_COLS && m.rows.div_ceil(4) < BLOCKS_PER_SM * sm {
        // Chunks interleave the row's groups of 1024 columns (RB_GROUP in
        // reduce_axis.cuh), each chunk at least MIN_CHUNK_COLS of them in all.
        let chunks = (BLOCKS_PER_SM * sm)
            .div_ceil(m.rows)
            .min(m.cols.div_ceil(MIN_CHUNK_COLS))
            .clamp(1, 65535);
        let cfg = LaunchConfig {
            grid_dim: (m.rows as u32, chunks as u32, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        return chunked(gpu, kind, "rows_block", cfg, m, None, (chunks, m.rows), out);
    }
    let v = 16 / std::mem::size_of::<T>();
    let arg = matches!(kind, Kind::Arg(_));
    // Arg ops on rows of at most RT_VECS whole 16-byte vectors: a thread per row, blocks
    // striding the matrix (two rows in flight a thread).
    if arg && m.cols.is_multiple_of(v) && m.cols <= RT_VECS * v {
        let grid = m.rows.div_ceil(2 * 256).min(BLOCKS_PER_SM * sm);
        let name = kernel_name::<T>(kind, "rows_thread");
        let f = gpu.function(KernelFile::REDUCE, &name)?;
        let mut l = gpu.stream().launch_builder(&f);
        push_args!(l; &r, &c, &m.data, out.v, out.i);
        // SAFETY: (int rows, int cols, const T* x, T* out_v, i64* out_i): cols is a
        // multiple of V = 16 / size_of T, at most RT_VECS·V (the kernel's registers); x
        // holds rows·cols elements, read V at a time (as vectors where x is 16-byte
        // aligned) at rows < rows (row 0 stands in past the end) and columns < cols;
        // each row writes entry `row` of the outputs, which hold at least `rows` entries.
        return launched(&name, unsafe { l.launch(linear(grid as u32, 256)) });
    }
    // Rows of whole 16-byte vectors: up to 32 lanes per row, one per vector, blocks
    // striding the matrix (an allocation starts 16-byte aligned, and so then does every
    // row; the kernel loads element by element otherwise). Short rows for every op; long
    // ones for the arg ops only, where it measured faster (the sums measured slower:
    // docs/kernels.md).
    if m.cols.is_multiple_of(v) && (m.cols <= 32 * v || arg) {
        let g = (m.cols / v).next_power_of_two().min(32);
        let rows_per_block = 4 * (256 / g);
        let grid = m.rows.div_ceil(rows_per_block).min(BLOCKS_PER_SM * sm);
        let (g32, name) = (g as i32, kernel_name::<T>(kind, "rows_vec"));
        let f = gpu.function(KernelFile::REDUCE, &name)?;
        let mut l = gpu.stream().launch_builder(&f);
        push_args!(l; &r, &c, &g32, &m.data, out.v, out.i);
        // SAFETY: (int rows, int cols, int g, const T* x, T* out_v, i64* out_i): cols is
        // a multiple of V = 16 / size_of T, g = cols / V rounded up to a power of two, at
        // most 32; x holds rows·cols elements, read V at a time (as vectors where x
        // is 16-byte aligned) at rows < rows and columns < cols; each row writes entry
        // `row` of the outputs, which hold at least `rows` entries.
        return launched(&name, unsafe { l.launch(linear(grid as u32, 256)) });
    }
    // Groups of g lanes per row, g the row length rounded up to a power of two (≤ 32).
    let g = m.cols.next_power_of_two().min(32);
    let rows_per_block = 4 * (256 / g);
    let cfg = linear(m.rows.div_ceil(rows_per_block) as u32, 256);
    let g32 = g as i32;
    let name = kernel_name::<T>(kind, "rows");
    let f = gpu.function(KernelFile::REDUCE, &name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &r, &c, &g32, &m.data, out.v, out.i);
    // SAFETY: (int rows, int cols, int g, const T* x, T* out_v, i64* out_i): g is a power
    // of two ≤ 32 (the kernel's group width); x holds rows·cols elements, read at rows
    // < rows and columns < cols; each row's group writes entry `row` of the outputs,
    // which hold at least `rows` entries (out_i: arg ops only, which pass one such).
    launched(&name, unsafe { l.launch(cfg) })
}

fn cols<T: CudaElement>(gpu: &Gpu, kind: Kind, m: &DeviceMatrix<T>, out: Out<T>) -> Result<()> {
    let sm = gpu.sm_count()?.max(1);
    // Few rows of whole 16-byte vectors: a thread per vector of columns walks the rows.
    let v = 16 / std::mem::size_of::<T>();
    if m.rows <= COLS_VEC_ROWS && m.cols.is_multiple_of(v) {
        let (r, c) = (m.rows as i32, m.cols as i32);
        let grid = (m.cols / v).div_ceil(256).min(BLOCKS_PER_SM * sm);
        let name = kernel_name::<T>(kind, "cols_vec");
        let f = gpu.function(KernelFile::REDUCE, &name)?;
        let mut l = gpu.stream().launch_builder(&f);
        push_args!(l; &r, &c, &m.data, out.v, out.i);
        // SAFETY: (int rows, int cols, const T* x, T* out_v, i64* out_i): rows ≤ 64 and
        // cols a multiple of V = 16 / size_of T; x holds rows·cols elements, read V at a
        // time (as vectors where x is 16-byte aligned) at rows < rows and columns < cols;
        // each column writes entry `column` of the outputs, which hold at least `cols`.
        return launched(&name, unsafe { l.launch(linear(grid as u32, 256)) });
    }
    // Many rows of few columns, whole 16-byte vectors, cols / V a power of two of at most
    // 32: blocks on chunks of rows, each thread one vector of columns of every (256 /
    // (cols / V))-th row of its chunk, whole rows per warp.
    let groups = m.cols / v;
    if m.cols.is_multiple_of(v) && groups.is_power_of_two() && groups <= 32 {
        let chunks = (TALL_BLOCKS_PER_SM * sm).min(m.rows.div_ceil(256)).max(1);
        let rows_per_chunk = m.rows.div_ceil(chunks);
        let chunks = m.rows.div_ceil(rows_per_chunk);
        let cfg = LaunchConfig {
            grid_dim: (chunks as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        return chunked(
            gpu,
            kind,
            "cols_tall",
            cfg,
            m,
            Some(rows_per_chunk),
            (chunks, m.cols),
            out,
        );
    }
    let col_blocks = m.cols.div_ceil(32);
    let want = BLOCKS_PER_SM * sm;
    let chunks = if col_blocks >= want {
        1
    } else {
        want.div_ceil(col_blocks)
            .min(m.rows.div_ceil(MIN_CHUNK_ROWS))
            .clamp(1, 65535)
    };
    let rows_per_chunk = m.rows.div_ceil(chunks);
    let chunks = m.rows.div_ceil(rows_per_chunk);
    let cfg = LaunchConfig {
        grid_dim: (col_blocks as u32, chunks as u32, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    chunked(
        gpu,
        kind,
        "cols",
        cfg,
        m,
        Some(rows_per_chunk),
        (chunks, m.cols),
        out,
    )
}

/// Launches a first pass, `(int rows, int cols, [int per_chunk,] const T* x, T* out_v,
/// i64* out_i)`, that reduces `m` in `chunks` chunks (of `per_chunk` where the kernel
/// takes it; `rows_block` interleaves its chunks instead) for each of `width` outputs:
/// with one chunk straight into the outputs, else into chunk-major partials that
/// [`fold_chunks`] folds.
#[allow(clippy::too_many_arguments)]
fn chunked<T: CudaElement>(
    gpu: &Gpu,
    kind: Kind,
    tech: &str,
    cfg: LaunchConfig,
    m: &DeviceMatrix<T>,
    per_chunk: Option<usize>,
    (chunks, width): (usize, usize),
    out: Out<T>,
) -> Result<()> {
    let (r, c) = (m.rows as i32, m.cols as i32);
    let per = per_chunk.map(|p| p as i32);
    let name = kernel_name::<T>(kind, tech);
    let f = gpu.function(KernelFile::REDUCE, &name)?;
    let pass = |v: &mut CudaSlice<T>, i: &mut CudaSlice<i64>| {
        let mut l = gpu.stream().launch_builder(&f);
        l.arg(&r).arg(&c);
        if let Some(per) = per.as_ref() {
            l.arg(per);
        }
        push_args!(l; &m.data, v, i);
        // SAFETY: (int rows, int cols, [int per,] const T* x, T* out_v, i64* out_i), `per`
        // for the kernels that take it (every one but rows_block): x holds rows·cols
        // elements, read at rows < rows and columns < cols;
        // chunk k of output j < width writes entry k·width + j: with one chunk the
        // outputs hold at least width entries (out_i: arg ops only, which pass one
        // such), else the partials hold chunks·width.
        launched(&name, unsafe { l.launch(cfg) })
    };
    if chunks == 1 {
        return pass(out.v, out.i);
    }
    let parts = chunks * width;
    let mut pv = gpu.alloc::<T>(kind.name(), parts)?;
    let mut pi = gpu.alloc_zeroed::<i64>("reduce", parts)?;
    pass(&mut pv, &mut pi)?;
    fold_chunks(gpu, kind, (chunks, width), (&pv, &pi), out)
}

/// Folds `chunks` partials per output, stored chunk-major (`width` apart), into entries
/// `0..width` of the outputs, in a fixed order: eight runs of consecutive chunks, each
/// in chunk order, then the runs in order (chunk order for at most eight chunks).
fn fold_chunks<T: CudaElement>(
    gpu: &Gpu,
    kind: Kind,
    (chunks, width): (usize, usize),
    (pv, pi): (&CudaSlice<T>, &CudaSlice<i64>),
    out: Out<T>,
) -> Result<()> {
    let (k, w) = (chunks as i32, width as i32);
    let cfg = linear(width.div_ceil(32) as u32, 256);
    let name = kernel_name::<T>(kind, "cols_finish");
    let f = gpu.function(KernelFile::REDUCE, &name)?;
    let mut l = gpu.stream().launch_builder(&f);
    push_args!(l; &k, &w, pv, pi, out.v, out.i);
    // SAFETY: (int chunks, int cols, const T* in_v, const i64* in_i, T* out_v,
    // i64* out_i): the inputs hold chunks·width entries, all written by the first pass
    // (in_i by arg ops; zeroed otherwise); a block of 256 threads per 32 outputs, the
    // lane's output c < width written once, to entries that exist (the outputs hold at
    // least width entries; out_i: arg ops only).
    launched(&name, unsafe { l.launch(cfg) })
}
