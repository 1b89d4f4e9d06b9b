//! Reductions over the ranks: each rank reduces its rows; whole-matrix and per-column
//! results are combined on the host in rank order (which is row order), per-row
//! results stay where their rows are.

use ndarray::{Array2, Axis};
use ndgpu_core::backend;
use ndgpu_core::{ArgOp, Element, Indices, Matrix, Memory, Ops, ReduceKernels, ReduceOp, Result};
use ndgpu_cuda_runtime::{driver, DeviceIndices};

use crate::layout::{split, Part};
use crate::{MultiBackend, MultiElement};

/// `a` then `b` under `op`, with NumPy's NaN policy for min and max.
fn combine<T: Element>(op: ReduceOp, a: T, b: T) -> T {
    match op {
        ReduceOp::Sum | ReduceOp::SumSq => a + b,
        _ if a.is_nan() => a,
        _ if b.is_nan() => b,
        ReduceOp::Min => a.min(b),
        ReduceOp::Max => a.max(b),
    }
}

/// The value reduction whose extreme an index reduction names.
fn value_op(op: ArgOp) -> ReduceOp {
    match op {
        ArgOp::ArgMin => ReduceOp::Min,
        ArgOp::ArgMax => ReduceOp::Max,
    }
}

/// Whether `v` (from a later rank) beats `best` (from an earlier one) under `op`: a
/// first NaN always wins, and ties go to the earlier rank.
fn beats<T: Element>(op: ArgOp, v: T, best: T) -> bool {
    if best.is_nan() {
        return false;
    }
    v.is_nan()
        || match op {
            ArgOp::ArgMin => v < best,
            ArgOp::ArgMax => v > best,
        }
}

impl MultiBackend {
    /// `a`'s rows split over the ranks (a replicated `a` gives each rank its block).
    fn split_rows<'a, T: MultiElement>(
        &self,
        op: &'static str,
        a: &'a Matrix<T>,
    ) -> Result<(Vec<usize>, Vec<Part<'a, T>>)> {
        let offsets = split(a.rows(), self.ranks.len());
        let parts = self.rows_on(op, a, &offsets)?;
        Ok((offsets, parts))
    }

    /// `f(r, ops of rank r, part r)` on every rank whose part has rows; `None` for the
    /// others.
    fn each_part<T: MultiElement, R: Send>(
        &self,
        parts: &[Part<'_, T>],
        f: impl Fn(usize, &dyn Ops<T>, &Matrix<T>) -> Result<R> + Sync,
    ) -> Result<Vec<Option<R>>> {
        self.each(|r, rank| {
            let p = parts[r].get();
            match p.rows() {
                0 => Ok(None),
                _ => f(r, rank.ops::<T>(), p).map(Some),
            }
        })
    }

    /// Indices on the ranks from the host, split like `len` rows.
    fn indices_from_host(&self, all: &[i64]) -> Result<Indices> {
        let offsets = split(all.len(), self.ranks.len());
        let mut parts = Vec::with_capacity(self.ranks.len());
        for (r, rank) in self.ranks.iter().enumerate() {
            let mine = &all[Self::rows_of(&offsets, r)];
            // The buffer holds at least one index, as every index buffer does.
            let host: Vec<i64> = if mine.is_empty() {
                vec![0]
            } else {
                mine.to_vec()
            };
            let data = rank
                .gpu
                .stream()
                .clone_htod(&host)
                .map_err(|e| driver("copying indices to the device", e))?;
            parts.push(backend::indices(
                mine.len(),
                rank.gpu.indices(DeviceIndices::I64(data)),
            ));
        }
        Ok(self.wrap_indices(offsets, parts))
    }
}

impl<T: MultiElement> ReduceKernels<T> for MultiBackend {
    fn reduce_unchecked(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T> {
        let (_, parts) = self.split_rows(op.name(), a)?;
        if a.is_empty() {
            return self.ranks[0].ops::<T>().reduce_dev(op, parts[0].get());
        }
        let vals = self.each_part(&parts, |_, ops, p| ops.reduce_dev(op, p))?;
        let mut vals = vals.into_iter().flatten();
        let first = vals
            .next()
            .expect("a non-empty matrix has a non-empty part");
        Ok(vals.fold(first, |acc, v| combine(op, acc, v)))
    }

    fn reduce_axis_unchecked(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>> {
        let (offsets, parts) = self.split_rows(op.name(), a)?;
        if axis == Axis(1) {
            let out =
                self.each(|r, rank| rank.ops::<T>().reduce_axis_dev(op, parts[r].get(), axis))?;
            return Ok(self.wrap((a.rows(), 1), crate::Layout::Rows(offsets), out));
        }
        // One value per column: each rank's, combined here in row order.
        let cols = a.cols();
        // With no rows at all every part is skipped: the sums are the zeros below.
        let partial = self.each_part(&parts, |_, ops, p| {
            ops.download(&ops.reduce_axis_dev(op, p, axis)?)
        })?;
        let mut total: Option<Array2<T>> = None;
        for p in partial.into_iter().flatten() {
            total = Some(match total {
                None => p,
                Some(t) => ndarray::Zip::from(&t)
                    .and(&p)
                    .map_collect(|&x, &y| combine(op, x, y)),
            });
        }
        let total = total.unwrap_or_else(|| Array2::zeros((1, cols)));
        self.upload(total.view())
    }

    fn arg_reduce_unchecked(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize> {
        let (offsets, parts) = self.split_rows(op.name(), a)?;
        if a.is_empty() {
            return self.ranks[0].ops::<T>().arg_reduce_dev(op, parts[0].get());
        }
        let found = self.each_part(&parts, |r, ops, p| {
            let v = ops.reduce_dev(value_op(op), p)?;
            let i = ops.arg_reduce_dev(op, p)?;
            Ok((v, i + offsets[r] * a.cols()))
        })?;
        let mut best: Option<(T, usize)> = None;
        for (v, i) in found.into_iter().flatten() {
            if best.is_none_or(|(b, _)| beats(op, v, b)) {
                best = Some((v, i));
            }
        }
        Ok(best.expect("a non-empty matrix has a non-empty part").1)
    }

    fn arg_reduce_axis_unchecked(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices> {
        let (offsets, parts) = self.split_rows(op.name(), a)?;
        if axis == Axis(1) {
            let out = self.each(|r, rank| {
                rank.ops::<T>()
                    .arg_reduce_axis_dev(op, parts[r].get(), axis)
            })?;
            return Ok(self.wrap_indices(offsets, out));
        }
        let cols = a.cols();
        let found = self.each_part(&parts, |r, ops, p| {
            let v = ops.download(&ops.reduce_axis_dev(value_op(op), p, axis)?)?;
            let i = ops.download_indices(&ops.arg_reduce_axis_dev(op, p, axis)?)?;
            Ok((v, i, offsets[r]))
        })?;
        let mut best: Vec<Option<(T, usize)>> = vec![None; cols];
        for (v, i, at) in found.into_iter().flatten() {
            for j in 0..cols {
                let (vj, ij) = (v[[0, j]], i[j] + at);
                if best[j].is_none_or(|(b, _)| beats(op, vj, b)) {
                    best[j] = Some((vj, ij));
                }
            }
        }
        let all: Vec<i64> = best
            .into_iter()
            .map(|b| b.map_or(0, |(_, i)| i as i64))
            .collect();
        self.indices_from_host(&all)
    }

    fn dot_unchecked(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T> {
        let (_, xs) = self.split_rows("dot", x)?;
        let (_, ys) = self.split_rows("dot", y)?;
        if x.is_empty() {
            return self.ranks[0].ops::<T>().dot_dev(xs[0].get(), ys[0].get());
        }
        let vals = self.each(|r, rank| {
            if xs[r].get().is_empty() {
                return Ok(None);
            }
            rank.ops::<T>().dot_dev(xs[r].get(), ys[r].get()).map(Some)
        })?;
        let mut vals = vals.into_iter().flatten();
        let first = vals
            .next()
            .expect("a non-empty matrix has a non-empty part");
        Ok(vals.fold(first, |acc, v| acc + v))
    }
}
