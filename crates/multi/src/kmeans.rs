//! k-means over the ranks. Each rank assigns its points against its copy of the
//! centroids. The update sums the points of each chunk of the one-device plan
//! ([`Plan`]) on the rank where the chunk starts (a chunk that runs past the rank's last
//! row is first assembled there from the next ranks; with sample weights, split as X
//! is, the weights too), gathers every chunk's sums (and counts or weights) on
//! every rank with NCCL, and has each rank add them in chunk order: the sums, hence the
//! centroids, are bitwise those of one device.

use cudarc::driver::{CudaSlice, CudaViewMut};
use ndgpu_core::{Assignment, ClusterKernels, Indices, Matrix, Points, Result};
use ndgpu_cuda_runtime::kmeans::{accumulate_chunks, finalize, Masses, Plan, Rows};
use ndgpu_cuda_runtime::IndexStorage;

use crate::layout::{split, unlike, Layout};
use crate::{MultiBackend, MultiElement};

impl MultiBackend {
    /// The labels of rank r as its device buffer.
    fn rank_labels<'a>(&self, r: usize, i: &'a Indices) -> Result<&'a CudaSlice<i32>> {
        let gpu = &self.ranks[r].gpu;
        gpu.here(self.name)
            .indices::<IndexStorage>("kmeans", "labels", i)?
            .labels()
    }
}

impl<T: MultiElement> ClusterKernels<T> for MultiBackend {
    fn assign_unchecked(&self, p: Points<T>, c: &Matrix<T>, l: &mut Indices) -> Result<Assignment> {
        let (x, w, labels) = (p.x, p.weights, l);
        let offsets = split(x.rows(), self.ranks.len());
        let xs = self.rows_on("kmeans", x, &offsets)?;
        // The sample weights split as X is.
        let ws = w.map(|w| self.rows_on("kmeans", w, &offsets)).transpose()?;
        let cs = self.everywhere("kmeans", c)?;
        let ls = self
            .here()
            .indices_mut::<crate::layout::SpreadIndices>("kmeans", "labels", labels)?;
        if ls.offsets != offsets {
            return Err(unlike("kmeans", "X", "the labels"));
        }
        let parts: Vec<&mut Indices> = ls.parts.iter_mut().collect();
        let found = self.each_with(parts, |r, rank, l| {
            if xs[r].get().rows() == 0 && r > 0 {
                return Ok(Assignment::default());
            }
            let w = ws.as_ref().map(|ws| ws[r].get());
            rank.ops::<T>()
                .assign_weighted_dev(xs[r].get(), cs[r].get(), w, l)
        })?;
        Ok(found
            .into_iter()
            .fold(Assignment::default(), |a, b| Assignment {
                changed: a.changed + b.changed,
                inertia: a.inertia + b.inertia,
            }))
    }

    /// The deterministic update of the one-device backends, whatever k-means variant the
    /// ranks have selected (with sample weights: their weighted update, the weights split
    /// as X is).
    fn update_unchecked(&self, p: Points<T>, labels: &Indices, c: &mut Matrix<T>) -> Result<()> {
        let (x, w, centroids) = (p.x, p.weights, c);
        let ((n, d), k) = (x.dim(), centroids.rows());
        let ranks = self.ranks.len();
        let offsets = split(n, ranks);
        let xs = self.rows_on("kmeans", x, &offsets)?;
        let ws = w.map(|w| self.rows_on("kmeans", w, &offsets)).transpose()?;
        let weighted = ws.is_some();
        let ls = self.spread_indices("kmeans", "labels", labels)?;
        if ls.offsets != offsets {
            return Err(unlike("kmeans", "X", "the labels"));
        }
        if n == 0 || d == 0 {
            return Ok(());
        }
        let plan = Plan::new::<T>(n, k, d, weighted);
        let chunk = plan.chunk;
        // Rank r sums the chunks that start in its rows.
        let first = |r: usize| offsets[r].div_ceil(chunk);
        let pieces: Vec<_> = (0..ranks).map(|r| first(r)..first(r + 1)).collect();
        let mut partials = Vec::with_capacity(ranks);
        let mut counts = Vec::with_capacity(ranks);
        for (r, rank) in self.ranks.iter().enumerate() {
            let gpu = &rank.gpu;
            let mut partial = gpu.alloc::<T>("kmeans", plan.g * k * d)?;
            let mut masses = Masses::alloc(gpu, plan.g * k, weighted)?;
            let (c0, c1) = (pieces[r].start, pieces[r].end);
            // The sums of the chunks that `rows` covers, from chunk c on.
            let mut sum_from = |rows: Rows<'_, '_, T>, c: usize| {
                accumulate_chunks(gpu, &plan, rows, k, &mut partial, &mut masses, c)
            };
            if c0 < c1 {
                let (lo, hi) = (offsets[r], offsets[r + 1]);
                // Chunks wholly in these rows; the last may run past them.
                let whole_end = if (c1 * chunk).min(n) <= hi {
                    c1
                } else {
                    c1 - 1
                };
                let xr = self.dm(r, xs[r].get())?;
                let lr = self.rank_labels(r, &ls.parts[r])?;
                let wr = match &ws {
                    Some(ws) => Some(self.dm(r, ws[r].get())?),
                    None => None,
                };
                if c0 < whole_end {
                    let (s, e) = (c0 * chunk - lo, (whole_end * chunk).min(n) - lo);
                    let (xv, lv) = (xr.data.slice(s * d..e * d), lr.slice(s..e));
                    let wv = wr.map(|w| w.data.slice(s..e));
                    sum_from(Rows::new(&xv, &lv, wv.as_ref(), d), c0)?;
                }
                if whole_end < c1 {
                    let c = whole_end;
                    let (s, e) = (c * chunk, ((c + 1) * chunk).min(n));
                    let mut tx = gpu.alloc::<T>("kmeans", (e - s) * d)?;
                    let mut tl = gpu.alloc::<i32>("kmeans", e - s)?;
                    let mut tw = match weighted {
                        true => Some(gpu.alloc::<T>("kmeans", e - s)?),
                        false => None,
                    };
                    for q in r..ranks {
                        let (qs, qe) = (offsets[q].max(s), offsets[q + 1].min(e));
                        if qs >= qe {
                            continue;
                        }
                        let (xq, lq) =
                            (self.dm(q, xs[q].get())?, self.rank_labels(q, &ls.parts[q])?);
                        let base = offsets[q];
                        self.copy_view(
                            (q, &xq.data.slice((qs - base) * d..(qe - base) * d)),
                            (r, &mut tx.slice_mut((qs - s) * d..(qe - s) * d)),
                        )?;
                        self.copy_view(
                            (q, &lq.slice(qs - base..qe - base)),
                            (r, &mut tl.slice_mut(qs - s..qe - s)),
                        )?;
                        if let (Some(ws), Some(tw)) = (&ws, &mut tw) {
                            self.copy_view(
                                (
                                    q,
                                    &self.dm(q, ws[q].get())?.data.slice(qs - base..qe - base),
                                ),
                                (r, &mut tw.slice_mut(qs - s..qe - s)),
                            )?;
                        }
                    }
                    let (xv, lv) = (tx.slice(..), tl.slice(..));
                    let wv = tw.as_ref().map(|w| w.slice(..));
                    sum_from(Rows::new(&xv, &lv, wv.as_ref(), d), c)?;
                }
            }
            partials.push(partial);
            counts.push(masses);
        }
        if ranks > 1 {
            let scale =
                |m: usize| -> Vec<_> { pieces.iter().map(|p| p.start * m..p.end * m).collect() };
            let mut views: Vec<CudaViewMut<'_, T>> =
                partials.iter_mut().map(|p| p.slice_mut(..)).collect();
            self.comms.gather_pieces(&mut views, &scale(k * d))?;
            if weighted {
                let mut views: Vec<_> =
                    counts.iter_mut().filter_map(Masses::weights_view).collect();
                self.comms.gather_pieces(&mut views, &scale(k))?;
            } else {
                let mut views: Vec<_> = counts.iter_mut().filter_map(Masses::counts_view).collect();
                self.comms.gather_pieces(&mut views, &scale(k))?;
            }
        }
        let layout = self
            .spread("kmeans", "centroids", centroids)?
            .layout
            .clone();
        match layout {
            Layout::Replicated => {
                let cs = self.spread_mut("kmeans", "centroids", centroids)?;
                for (r, part) in cs.parts.iter_mut().enumerate() {
                    let c = self.dm_mut(r, part)?;
                    finalize(&self.ranks[r].gpu, &plan, &partials[r], &counts[r], c)?;
                }
                Ok(())
            }
            Layout::Rows(_) => {
                let mut whole = self.owned_on("kmeans", 0, centroids)?;
                let c = self.dm_mut(0, &mut whole)?;
                finalize(&self.ranks[0].gpu, &plan, &partials[0], &counts[0], c)?;
                self.scatter(0, &whole, centroids)
            }
        }
    }
}
