//! The deterministic centroid update: per-chunk sums and masses of the points of each
//! centroid ([`accumulate_chunks`]), then the sums added in chunk order and divided by
//! the masses ([`finalize`]).

use crate::push_args;
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, PushKernelArg};
use ndgpu_core::{Error, Result};

use super::launch::{cfg, kernel};
use super::plan::{ChunkSums, Plan};
use crate::device_matrix::DeviceMatrix;
use crate::element::CudaElement;
use crate::gpu::Gpu;
use crate::launch::{blocks, dim_i32, go};

/// The per-chunk masses of the update (G×K): point counts, or with sample weights the
/// sums of the weights in `T`.
#[derive(Debug)]
pub enum Masses<T> {
    /// Point counts.
    Counts(CudaSlice<i32>),
    /// Sums of sample weights.
    Weights(CudaSlice<T>),
}

impl<T: CudaElement> Masses<T> {
    /// The sums of weights, as a view, if these are weights.
    pub fn weights_view(&mut self) -> Option<CudaViewMut<'_, T>> {
        match self {
            Masses::Weights(m) => Some(m.slice_mut(..)),
            Masses::Counts(_) => None,
        }
    }

    /// The counts, as a view, if these are counts.
    pub fn counts_view(&mut self) -> Option<CudaViewMut<'_, i32>> {
        match self {
            Masses::Counts(m) => Some(m.slice_mut(..)),
            Masses::Weights(_) => None,
        }
    }

    /// `len` masses of the kind of `weighted`.
    ///
    /// # Errors
    /// Out of memory.
    pub fn alloc(gpu: &Gpu, len: usize, weighted: bool) -> Result<Self> {
        Ok(if weighted {
            Masses::Weights(gpu.alloc("kmeans", len)?)
        } else {
            Masses::Counts(gpu.alloc("kmeans", len)?)
        })
    }
}

/// Pushes `masses` from element `from` on as the next argument of launch builder `b`
/// (the view lives to the end of the caller's block, as the launch needs).
macro_rules! push_masses {
    ($b:ident; $masses:expr, $from:expr) => {
        let (mut counts, mut weights);
        match $masses {
            Masses::Counts(m) => {
                counts = m.slice_mut($from..);
                push_args!($b; &mut counts);
            }
            Masses::Weights(m) => {
                weights = m.slice_mut($from..);
                push_args!($b; &mut weights);
            }
        }
    };
}

/// Moves each centroid (rows of `c`, K×D) to the mean of the points of `x` (N×D) that
/// `labels` gives it (with sample weights `w`, N of them: Σ wᵢxᵢ / Σ wᵢ); a centroid
/// with no points (of no weight) stays where it is. The sums are formed in an order
/// fixed by N, K and D, so the result is bitwise reproducible.
///
/// # Errors
/// [`Error::InvalidArgument`] for more clusters than the kernel's grid takes; out of
/// memory; driver errors.
pub fn update<T: CudaElement>(
    gpu: &Gpu,
    x: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
    w: Option<&CudaSlice<T>>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let (n, d, k) = (x.rows, x.cols, c.rows);
    if n == 0 || d == 0 {
        return Ok(());
    }
    let plan = Plan::new::<T>(n, k, d, w.is_some());
    // The last call's sums where the shape is the same (a fit's every iteration).
    let shape = (plan.g, k, d, w.is_some());
    let mut sums = match gpu.take_scratch::<UpdateScratch<T>>(UPDATE_SCRATCH) {
        Some(s) if s.shape == shape => s,
        _ => UpdateScratch {
            shape,
            partial: gpu.alloc::<T>("kmeans", plan.g * k * d)?,
            masses: Masses::alloc(gpu, plan.g * k, w.is_some())?,
        },
    };
    let (xv, lv) = (x.data.slice(0..n * d), labels.slice(0..n));
    let wv = w.map(|w| w.slice(0..n));
    let rows = Rows::new(&xv, &lv, wv.as_ref(), d);
    accumulate_chunks(gpu, &plan, rows, k, &mut sums.partial, &mut sums.masses, 0)?;
    finalize(gpu, &plan, &sums.partial, &sums.masses, c)?;
    gpu.keep_scratch(UPDATE_SCRATCH, sums);
    Ok(())
}

/// The key of the update's scratch on the runtime ([`Gpu::keep_scratch`]).
const UPDATE_SCRATCH: &str = "kmeans update";

/// The chunk sums and masses of an update of shape (chunks, K, D, weighted).
struct UpdateScratch<T> {
    shape: (usize, usize, usize, bool),
    partial: CudaSlice<T>,
    masses: Masses<T>,
}

/// Consecutive points of X (row-major, `n`×`d`), their labels and sample weights,
/// starting at the first point of a chunk.
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a, 'b, T> {
    /// The points.
    pub x: &'a CudaView<'b, T>,
    /// Their labels.
    pub labels: &'a CudaView<'b, i32>,
    /// Their sample weights, if any.
    pub w: Option<&'a CudaView<'b, T>>,
    /// How many.
    pub n: usize,
    /// Dimensions.
    pub d: usize,
}

impl<'a, 'b, T> Rows<'a, 'b, T> {
    /// The points of `x` (`labels.len()` rows of `d`) with their labels and weights.
    pub fn new(
        x: &'a CudaView<'b, T>,
        labels: &'a CudaView<'b, i32>,
        w: Option<&'a CudaView<'b, T>>,
        d: usize,
    ) -> Self {
        let n = labels.len();
        Rows { x, labels, w, n, d }
    }
}

/// The per-chunk sums and masses of the chunks that `rows` covers (⌈n / chunk⌉ of them,
/// the last possibly short), written to `partial` (G × K × D) and `masses` (G × K) from
/// chunk `first` on. A chunk's sum is formed in the same order wherever its points are
/// stored, so shards that start at chunk boundaries give the partials of the whole.
/// With weights in `rows`, the masses are [`Masses::Weights`] and the sums of w·x.
///
/// # Errors
/// [`Error::InvalidArgument`] for more clusters than the kernel's grid takes, or masses
/// of the other kind; [`Error::ShapeMismatch`] for views too short; driver errors.
pub fn accumulate_chunks<T: CudaElement>(
    gpu: &Gpu,
    plan: &Plan,
    rows: Rows<'_, '_, T>,
    k: usize,
    partial: &mut CudaSlice<T>,
    masses: &mut Masses<T>,
    first: usize,
) -> Result<()> {
    let Rows { x, labels, w, n, d } = rows;
    let chunks = n.div_ceil(plan.chunk);
    if n == 0 || d == 0 {
        return Ok(());
    }
    let masses_len = match &*masses {
        Masses::Counts(m) => m.len(),
        Masses::Weights(m) => m.len(),
    };
    if w.is_some() != matches!(masses, Masses::Weights(_)) {
        return Err(Error::invalid(
            "kmeans",
            "sample weights and the kind of masses of the update differ",
        ));
    }
    if x.len() < n * d
        || labels.len() < n
        || w.is_some_and(|w| w.len() < n)
        || partial.len() < (first + chunks) * k * d
        || masses_len < (first + chunks) * k
    {
        return Err(Error::shape(
            "kmeans",
            format!("{n} points of {d} dimensions in {chunks} chunks: views too short"),
        ));
    }
    let (gy, gz) =
        match plan.chunk_sums::<T>(k, d, chunks, gpu.shared_memory_optin()?, gpu.sm_count()?) {
            ChunkSums::WholeRows { smem } => {
                return accumulate_rows(gpu, plan, rows, k, partial, masses, first, smem)
            }
            ChunkSums::Ranges { clusters, dims } => (clusters, dims),
        };
    if gy > 65535 || gz > 65535 {
        return Err(Error::invalid(
            "kmeans",
            format!("k = {k}, D = {d}: too many clusters for the update kernel"),
        ));
    }
    let (ni, di, ki) = (
        dim_i32("kmeans", n)?,
        dim_i32("kmeans", d)?,
        dim_i32("kmeans", k)?,
    );
    let (chunk, kb, db) = (plan.chunk as i32, plan.kb as i32, plan.db as i32);
    let which = if w.is_some() { "_weighted" } else { "" };
    let (f, name) = kernel(
        gpu,
        format!("kmeans_accumulate_partials{which}_{}", T::SUFFIX),
    )?;
    let mut partial = partial.slice_mut(first * k * d..);
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; x, labels);
    if let Some(w) = w {
        push_args!(b; w);
    }
    push_args!(b; &ni, &di, &ki, &chunk, &kb, &db, &mut partial);
    push_masses!(b; masses, first * k);
    // SAFETY: (x, labels, [w,] n, d, k, chunk, kb, db, partial, masses): grid (chunks,
    // ⌈k/kb⌉, ⌈d/db⌉) with chunks·chunk ≥ n; x holds n×d, labels n values in [0, k)
    // (written by an assignment), w n; partial holds chunks×k×d and the masses chunks×k
    // from chunk `first` on (checked above), ints, or T with weights (checked above);
    // the dynamic shared memory is 8·kb·(db·size_of T + size of a mass) bytes ≤ 40 KB,
    // as the kernel lays it out.
    let grid = (chunks as u32, gy as u32, gz as u32);
    unsafe { go(b, &name, cfg(grid, plan.smem::<T>())) }
}

/// `accumulate_chunks` by `km_accumulate_rows` (D ≤ 32, `smem` ≤ the device's opt-in
/// limit bytes of shared memory for its one block per chunk), the views checked by the
/// caller.
#[allow(clippy::too_many_arguments)]
fn accumulate_rows<T: CudaElement>(
    gpu: &Gpu,
    plan: &Plan,
    rows: Rows<'_, '_, T>,
    k: usize,
    partial: &mut CudaSlice<T>,
    masses: &mut Masses<T>,
    first: usize,
    smem: usize,
) -> Result<()> {
    let Rows { x, labels, w, n, d } = rows;
    let chunks = n.div_ceil(plan.chunk);
    let (ni, di, ki) = (
        dim_i32("kmeans", n)?,
        dim_i32("kmeans", d)?,
        dim_i32("kmeans", k)?,
    );
    let chunk = plan.chunk as i32;
    let which = if w.is_some() { "_weighted" } else { "" };
    let (f, name) = kernel(gpu, format!("kmeans_accumulate_rows{which}_{}", T::SUFFIX))?;
    gpu.grant_shared_memory(&f, &name)?;
    let mut partial = partial.slice_mut(first * k * d..);
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; x, labels);
    if let Some(w) = w {
        push_args!(b; w);
    }
    push_args!(b; &ni, &di, &ki, &chunk, &mut partial);
    push_masses!(b; masses, first * k);
    // SAFETY: (x, labels, [w,] n, d, k, chunk, partial, masses): one block per chunk,
    // chunks·chunk ≥ n; x holds n×d (d ≤ 32), labels n (values outside [0, k) are
    // skipped), w n; partial holds chunks×k×d and the masses chunks×k from chunk `first`
    // on (checked by accumulate_chunks), ints, or T with weights (checked there); the
    // dynamic shared memory, 8·(k·(d·size_of T + size of a mass) + 32·size_of T) bytes
    // as the kernel lays it out, is granted above.
    unsafe { go(b, &name, cfg((chunks as u32, 1, 1), smem as u32)) }
}

/// Moves each centroid to the sum of the `plan.g` chunk partials divided by the sum of
/// the masses, adding them in chunk order; a centroid with no points (of no weight)
/// stays.
///
/// # Errors
/// Driver errors.
pub fn finalize<T: CudaElement>(
    gpu: &Gpu,
    plan: &Plan,
    partial: &CudaSlice<T>,
    masses: &Masses<T>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    let (g, k, d) = (
        dim_i32("kmeans", plan.g)?,
        dim_i32("kmeans", c.rows)?,
        dim_i32("kmeans", c.cols)?,
    );
    let grid = (blocks(c.len(), 32), 1, 1);
    let which = match masses {
        Masses::Counts(_) => "",
        Masses::Weights(_) => "_weighted",
    };
    let (f, name) = kernel(gpu, format!("kmeans_finalize{which}_{}", T::SUFFIX))?;
    let mut b = gpu.stream().launch_builder(&f);
    push_args!(b; partial);
    match masses {
        Masses::Counts(m) => push_args!(b; m),
        Masses::Weights(m) => push_args!(b; m),
    }
    push_args!(b; &g, &k, &d, &mut c.data);
    // SAFETY: (const T* partial, const int*/const T* masses, int g, int k, int d, T* c):
    // one block per 32 of the k×d centroid coordinates, guarded by k·d; partial holds
    // g×k×d, the masses g×k (of the kernel's type: the entry point follows the kind).
    unsafe { go(b, &name, cfg(grid, 0)) }
}
