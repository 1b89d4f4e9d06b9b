//! Where the rows of a group's arrays are: split by rows over the ranks, or a full copy
//! on every rank; and the moves between the two, by peer copies and NCCL.

use std::ops::Range;

use cudarc::driver::{CudaView, CudaViewMut, DeviceRepr};
use ndgpu_core::backend::{self, Here, Storage};
use ndgpu_core::{check, Element, Error, Indices, Matrix, Ops, Place, Result};
use ndgpu_cuda_runtime::{driver, DeviceMatrix};

use crate::{MultiBackend, MultiElement};

/// How a group's matrix is laid out over its ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// Rank r holds rows `offsets[r]..offsets[r + 1]` (what uploads, allocations and the
    /// results of operations get: [`split`] of the rows).
    Rows(Vec<usize>),
    /// Every rank holds the whole matrix (k-means centroids).
    Replicated,
}

/// The row offsets of `rows` rows over `ranks` ranks: as even as can be, the first ranks
/// taking one more row. They depend on the two counts only, so arrays with the same
/// number of rows are split alike.
pub fn split(rows: usize, ranks: usize) -> Vec<usize> {
    (0..=ranks).map(|r| rows * r / ranks).collect()
}

/// The storage of a group's matrix: one matrix per rank, of that rank's device.
#[derive(Debug)]
pub(crate) struct Spread<T> {
    pub place: Place,
    pub layout: Layout,
    pub parts: Vec<Matrix<T>>,
}

impl<T: Element> Storage for Spread<T> {
    fn place(&self) -> Place {
        self.place
    }
}

/// The storage of a group's indices: split like the rows they index.
#[derive(Debug)]
pub(crate) struct SpreadIndices {
    pub place: Place,
    pub offsets: Vec<usize>,
    pub parts: Vec<Indices>,
}

impl Storage for SpreadIndices {
    fn place(&self) -> Place {
        self.place
    }
}

/// A rank's matrix: one of an array's own parts, or a temporary made for one operation.
pub(crate) enum Part<'a, T> {
    Borrowed(&'a Matrix<T>),
    Owned(Matrix<T>),
}

impl<T> Part<'_, T> {
    pub fn get(&self) -> &Matrix<T> {
        match self {
            Part::Borrowed(m) => m,
            Part::Owned(m) => m,
        }
    }
}

impl MultiBackend {
    pub(crate) fn here(&self) -> Here {
        Here {
            backend: self.name,
            place: self.place,
        }
    }

    pub(crate) fn spread<'a, T: MultiElement>(
        &self,
        op: &'static str,
        what: &'static str,
        m: &'a Matrix<T>,
    ) -> Result<&'a Spread<T>> {
        self.here().matrix(op, what, m)
    }

    pub(crate) fn spread_mut<'a, T: MultiElement>(
        &self,
        op: &'static str,
        what: &'static str,
        m: &'a mut Matrix<T>,
    ) -> Result<&'a mut Spread<T>> {
        self.here().matrix_mut(op, what, m)
    }

    pub(crate) fn spread_indices<'a>(
        &self,
        op: &'static str,
        what: &'static str,
        i: &'a Indices,
    ) -> Result<&'a SpreadIndices> {
        self.here().indices(op, what, i)
    }

    /// The rows of rank r under `offsets`.
    pub(crate) fn rows_of(offsets: &[usize], r: usize) -> Range<usize> {
        offsets[r]..offsets[r + 1]
    }

    /// A group matrix around its parts.
    pub(crate) fn wrap<T: MultiElement>(
        &self,
        (rows, cols): (usize, usize),
        layout: Layout,
        parts: Vec<Matrix<T>>,
    ) -> Matrix<T> {
        backend::matrix(
            rows,
            cols,
            Spread {
                place: self.place,
                layout,
                parts,
            },
        )
    }

    /// Group indices around their parts.
    pub(crate) fn wrap_indices(&self, offsets: Vec<usize>, parts: Vec<Indices>) -> Indices {
        let len = *offsets.last().expect("offsets of at least one rank");
        backend::indices(
            len,
            SpreadIndices {
                place: self.place,
                offsets,
                parts,
            },
        )
    }

    /// The device matrix behind a part that rank r made.
    pub(crate) fn dm<'a, T: MultiElement>(
        &self,
        r: usize,
        m: &'a Matrix<T>,
    ) -> Result<&'a DeviceMatrix<T>> {
        let gpu = &self.ranks[r].gpu;
        gpu.dm(gpu.here(self.name), "multi", "a part", m)
    }

    pub(crate) fn dm_mut<'a, T: MultiElement>(
        &self,
        r: usize,
        m: &'a mut Matrix<T>,
    ) -> Result<&'a mut DeviceMatrix<T>> {
        let gpu = &self.ranks[r].gpu;
        gpu.dm_mut(gpu.here(self.name), "multi", "a part", m)
    }

    /// A new rows×cols matrix split by rows, of unspecified values.
    pub(crate) fn alloc_rows<T: MultiElement>(
        &self,
        op: &'static str,
        rows: usize,
        cols: usize,
    ) -> Result<Matrix<T>> {
        self.rows_matrix((rows, cols), |ops, n| {
            ops.alloc(n, cols).map_err(|e| e.for_op(op))
        })
    }

    /// A rows×cols matrix split by rows, rank r's part made by `part(ops, its rows)`.
    pub(crate) fn rows_matrix<T: MultiElement>(
        &self,
        (rows, cols): (usize, usize),
        part: impl Fn(&dyn Ops<T>, usize) -> Result<Matrix<T>>,
    ) -> Result<Matrix<T>> {
        let offsets = split(rows, self.ranks.len());
        let parts = self
            .ranks
            .iter()
            .enumerate()
            .map(|(r, rank)| part(rank.ops::<T>(), Self::rows_of(&offsets, r).len()))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.wrap((rows, cols), Layout::Rows(offsets), parts))
    }

    /// A new rows×cols matrix on rank r alone (a temporary).
    pub(crate) fn alloc_on<T: MultiElement>(
        &self,
        r: usize,
        op: &'static str,
        rows: usize,
        cols: usize,
    ) -> Result<Matrix<T>> {
        let gpu = &self.ranks[r].gpu;
        Ok(gpu.matrix(gpu.alloc_matrix(op, rows, cols)?))
    }

    /// Copies `src` (on rank `from`) into `dst` (on rank `to`, as long), on rank `to`'s
    /// stream; the source's stream then waits for the copy, so that it does not
    /// overwrite what is being read.
    pub(crate) fn copy_view<E: DeviceRepr>(
        &self,
        (from, src): (usize, &CudaView<'_, E>),
        (to, dst): (usize, &mut CudaViewMut<'_, E>),
    ) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        let (a, b) = (&self.ranks[from].gpu, &self.ranks[to].gpu);
        b.stream().memcpy_dtod(src, dst).map_err(|e| {
            driver(
                format!("copying from device {} to {}", a.ordinal(), b.ordinal()),
                e,
            )
        })?;
        if from != to {
            a.stream()
                .join(b.stream())
                .map_err(|e| driver("ordering a peer copy", e))?;
        }
        Ok(())
    }

    /// The whole of `m` on rank r: its own copy if replicated, else gathered.
    pub(crate) fn whole_on<'a, T: MultiElement>(
        &self,
        op: &'static str,
        r: usize,
        m: &'a Matrix<T>,
    ) -> Result<Part<'a, T>> {
        let s = self.spread(op, "an operand", m)?;
        let offsets = match &s.layout {
            Layout::Replicated => return Ok(Part::Borrowed(&s.parts[r])),
            Layout::Rows(_) if self.ranks.len() == 1 => return Ok(Part::Borrowed(&s.parts[0])),
            Layout::Rows(o) => o,
        };
        let cols = m.cols();
        let mut full = self.alloc_on::<T>(r, op, m.rows(), cols)?;
        {
            let dst = self.dm_mut(r, &mut full)?;
            for (q, part) in s.parts.iter().enumerate() {
                let rows = Self::rows_of(offsets, q);
                let src = self.dm(q, part)?.data.slice(0..rows.len() * cols);
                let mut at = dst.data.slice_mut(rows.start * cols..rows.end * cols);
                self.copy_view((q, &src), (r, &mut at))?;
            }
        }
        Ok(Part::Owned(full))
    }

    /// An owned copy of the whole of `m` on rank r.
    pub(crate) fn owned_on<T: MultiElement>(
        &self,
        op: &'static str,
        r: usize,
        m: &Matrix<T>,
    ) -> Result<Matrix<T>> {
        match self.whole_on(op, r, m)? {
            Part::Owned(m) => Ok(m),
            Part::Borrowed(m) => self.ranks[r].ops::<T>().copy(m),
        }
    }

    /// The whole of `m` on every rank: borrowed if replicated, else an all-gather.
    pub(crate) fn everywhere<'a, T: MultiElement>(
        &self,
        op: &'static str,
        m: &'a Matrix<T>,
    ) -> Result<Vec<Part<'a, T>>> {
        let s = self.spread(op, "an operand", m)?;
        let offsets = match &s.layout {
            Layout::Replicated => return Ok(s.parts.iter().map(Part::Borrowed).collect()),
            Layout::Rows(_) if self.ranks.len() == 1 => {
                return Ok(vec![Part::Borrowed(&s.parts[0])])
            }
            Layout::Rows(o) => o,
        };
        let (rows, cols) = m.dim();
        let mut fulls = Vec::with_capacity(self.ranks.len());
        for (r, part) in s.parts.iter().enumerate() {
            let mut full = self.alloc_on::<T>(r, op, rows, cols)?;
            let own = Self::rows_of(offsets, r);
            let dst = self.dm_mut(r, &mut full)?;
            let src = self.dm(r, part)?.data.slice(0..own.len() * cols);
            let mut at = dst.data.slice_mut(own.start * cols..own.end * cols);
            self.copy_view((r, &src), (r, &mut at))?;
            fulls.push(full);
        }
        let ranges: Vec<Range<usize>> = (0..self.ranks.len())
            .map(|r| {
                let own = Self::rows_of(offsets, r);
                own.start * cols..own.end * cols
            })
            .collect();
        let mut views = Vec::with_capacity(fulls.len());
        for (r, full) in fulls.iter_mut().enumerate() {
            let dm = self.dm_mut(r, full)?;
            let len = dm.len();
            views.push(dm.data.slice_mut(0..len));
        }
        self.comms.gather_pieces(&mut views, &ranges)?;
        drop(views);
        Ok(fulls.into_iter().map(Part::Owned).collect())
    }

    /// Rank r's rows of `m` under `offsets`: its own part if `m` is split so, else a copy
    /// of those rows from its whole copy.
    pub(crate) fn rows_on<'a, T: MultiElement>(
        &self,
        op: &'static str,
        m: &'a Matrix<T>,
        offsets: &[usize],
    ) -> Result<Vec<Part<'a, T>>> {
        let s = self.spread(op, "an operand", m)?;
        if s.layout == Layout::Rows(offsets.to_vec()) {
            return Ok(s.parts.iter().map(Part::Borrowed).collect());
        }
        let whole = self.everywhere(op, m)?;
        let cols = m.cols();
        let mut out = Vec::with_capacity(whole.len());
        for (r, w) in whole.iter().enumerate() {
            let rows = Self::rows_of(offsets, r);
            let mut part = self.alloc_on::<T>(r, op, rows.len(), cols)?;
            let src = self.dm(r, w.get())?;
            self.ranks[r].gpu.copy_region(
                (src, (rows.start, 0)),
                (self.dm_mut(r, &mut part)?, (0, 0)),
                (rows.len(), cols),
            )?;
            out.push(Part::Owned(part));
        }
        Ok(out)
    }

    /// Writes `whole` (the whole matrix, on rank r) into `dst`, in `dst`'s layout.
    pub(crate) fn scatter<T: MultiElement>(
        &self,
        r: usize,
        whole: &Matrix<T>,
        dst: &mut Matrix<T>,
    ) -> Result<()> {
        check::copy_dims("scatter", whole.dim(), dst.dim())?;
        let cols = dst.cols();
        let src = self.dm(r, whole)?;
        let s = self.spread_mut("scatter", "the result", dst)?;
        let layout = s.layout.clone();
        for (q, part) in s.parts.iter_mut().enumerate() {
            let rows = match &layout {
                Layout::Rows(o) => Self::rows_of(o, q),
                Layout::Replicated => 0..whole.rows(),
            };
            let dm = self.dm_mut(q, part)?;
            let from = src.data.slice(rows.start * cols..rows.end * cols);
            let mut at = dm.data.slice_mut(0..rows.len() * cols);
            self.copy_view((r, &from), (q, &mut at))?;
        }
        Ok(())
    }
}

/// A shape error for two operands that must be split alike but are not.
pub(crate) fn unlike(op: &'static str, a: &str, b: &str) -> Error {
    Error::shape(op, format!("{a} and {b} must have the same number of rows"))
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn splits_cover_the_rows_in_order_and_differ_by_at_most_one() {
        for ranks in 1..=8 {
            for rows in [0, 1, 2, 3, 7, 64, 1000, 1 << 27] {
                let o = split(rows, ranks);
                assert_eq!((o[0], o[ranks]), (0, rows));
                let sizes: Vec<usize> = o.windows(2).map(|w| w[1] - w[0]).collect();
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 1, "{rows} over {ranks}: {sizes:?}");
            }
        }
    }
}
