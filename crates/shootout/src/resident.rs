//! A case resident on one backend: its inputs uploaded once (in several copies that the
//! timed runs rotate through, so that a small case is not timed from a warm L2), each
//! op run through the resident forms of the traits, and the pristine inputs that the
//! in-place ops (Cholesky, LU, QR, the triangular solve, a k-means step) are reset from
//! between runs, outside the timed region.

mod cases;
mod linalg;
mod spectra;

pub use cases::Cases;

use ndarray::{Array2, Axis};
use ndgpu_core::{
    Assignment, CholeskyFactor, Element, Error, Gemm, Indices, Matrix, Ops, Precision, Result,
};

use crate::cases::{Op, Reduction};
use crate::check::{Output, Reference};
use crate::data::{HostBuf, Inputs};
use crate::selection::copy_source;
use crate::shape::Shape;

/// What one run returned.
#[derive(Debug, Clone, Copy)]
pub enum Ran<T> {
    /// Its result is in the set's output.
    Done,
    /// A reduction's value.
    Scalar(T),
    /// A whole arg reduction's index.
    Index(usize),
    /// A k-means step's assignment.
    Assign(Assignment),
}

enum Set<T> {
    Gemm {
        a: Matrix<T>,
        b: Matrix<T>,
        c: Matrix<T>,
    },
    Gram {
        m: Matrix<T>,
        out: Option<Matrix<T>>,
    },
    Transpose {
        a: Matrix<T>,
        out: Option<Matrix<T>>,
    },
    /// A reduction, whole (the value comes back) or along an axis (into `out`, or `idx`
    /// for an arg reduction).
    Reduce {
        x: Matrix<T>,
        reduction: Reduction,
        axis: Option<usize>,
        out: Option<Matrix<T>>,
        idx: Option<Indices>,
    },
    Dot {
        x: Matrix<T>,
        y: Matrix<T>,
    },
    /// Factored in place by each run (taken out and given back); reset before the next.
    Cholesky {
        a: Option<Matrix<T>>,
    },
    KMeans {
        x: Matrix<T>,
        c: Matrix<T>,
        labels: Indices,
    },
    /// The bandwidth ceiling: a device copy of as many bytes as the op moves.
    Copy {
        src: Matrix<T>,
        dst: Matrix<T>,
    },
    /// A solve with a given factor L into a new X.
    Solve(IntoX<CholeskyFactor<T>, T>),
    /// Gram of M, Cholesky, solve; the solution kept for the check.
    Chain(IntoX<Matrix<T>, T>),
    /// An upload of a host array into a resident matrix and the download of what
    /// arrived into a second host array, all three made once (the `+transfers` row
    /// times `upload` and `download` into new arrays).
    Transfer {
        host: HostBuf<T>,
        dev: Matrix<T>,
        back: HostBuf<T>,
    },
    /// The ceiling of transfers: pinned host memory to the device and back.
    Pinned {
        gpu: std::sync::Arc<ndgpu_cuda_runtime::Gpu>,
        pair: ndgpu_cuda_runtime::PinnedPair,
    },
    /// LU, its solve, QR, least squares, the triangular solve.
    Lin(linalg::Lin<T>),
    /// eigh, the SVD, PCA.
    Spectra(spectra::Spectra<T>),
}

/// A solve of a resident B with `by` (a factor, or the matrix that each run factors)
/// into a new X, kept for the check.
struct IntoX<F, T> {
    by: F,
    b: Matrix<T>,
    x: Option<Matrix<T>>,
}

impl<F, T: Element> IntoX<F, T> {
    /// `by` with B uploaded; no X yet.
    fn upload(ops: &dyn Ops<T>, by: F, b: &Array2<T>) -> Result<Self> {
        Ok(IntoX {
            by,
            b: ops.upload(b.view())?,
            x: None,
        })
    }
}

/// The resident buffers of one case on one backend.
pub struct Case<T> {
    op: Op,
    shape: Shape,
    sets: Vec<Set<T>>,
    /// Cholesky's, LU's and QR's A, the triangular solve's B, or k-means' starting
    /// centroids.
    pristine: Option<Matrix<T>>,
    /// The transfer's host arrays are the backend's own ([`Memory::host_array`]).
    ///
    /// [`Memory::host_array`]: ndgpu_core::Memory::host_array
    pinned: bool,
}

impl<T: Element> Case<T> {
    /// Uploads `inputs` of `op` at `shape` to `ops` in `copies` sets; with `ceiling`, the sets are
    /// those of the copy ceiling instead; with `pinned`, a transfer's host arrays are the
    /// backend's own.
    ///
    /// # Errors
    /// Out of memory; device errors.
    pub fn new(
        ops: &dyn Ops<T>,
        (op, shape): (Op, Shape),
        inputs: &Inputs<T>,
        copies: usize,
        (ceiling, pinned): (bool, bool),
    ) -> Result<Self> {
        let mut case = Case {
            op,
            shape,
            sets: Vec::new(),
            pristine: None,
            pinned,
        };
        for _ in 0..copies.max(1) {
            let set = match ceiling {
                true => case.copy_set(ops, inputs)?,
                false => case.upload(ops, inputs)?,
            };
            case.sets.push(set);
        }
        Ok(case)
    }

    /// How many sets the runs rotate through.
    pub fn copies(&self) -> usize {
        self.sets.len()
    }

    /// Whether each run must be preceded by [`Case::prepare`] (in-place ops).
    pub fn needs_prepare(&self) -> bool {
        match self.sets.first() {
            Some(Set::Lin(l)) => l.in_place(),
            _ => matches!(self.op, Op::Cholesky | Op::KMeans),
        }
    }

    fn copy_set(&self, ops: &dyn Ops<T>, inputs: &Inputs<T>) -> Result<Set<T>> {
        if let Inputs::Transfer { x } = inputs {
            let gpu = ndgpu_cuda_runtime::Gpu::shared(0)?;
            let pair = gpu.pinned_pair(x.len() * std::mem::size_of::<T>())?;
            return Ok(Set::Pinned { gpu, pair });
        }
        let src = copy_source(self.op, self.shape, inputs)
            .ok_or_else(|| Error::invalid("shootout", "no copy ceiling for this op"))?;
        let src = ndarray::ArrayView2::from_shape((1, src.len()), src).expect("one row");
        Ok(Set::Copy {
            src: ops.upload(src)?,
            dst: ops.alloc(1, src.len())?,
        })
    }

    fn upload(&mut self, ops: &dyn Ops<T>, inputs: &Inputs<T>) -> Result<Set<T>> {
        let row = |v: &ndarray::Array1<T>| ops.upload(v.view().insert_axis(Axis(0)));
        Ok(match inputs {
            Inputs::Gemm { a, b } => Set::Gemm {
                a: ops.upload(a.view())?,
                b: ops.upload(b.view())?,
                c: ops.zeros(a.nrows(), b.ncols())?,
            },
            Inputs::Gram { m } => Set::Gram {
                m: ops.upload(m.view())?,
                out: None,
            },
            Inputs::Transpose { a } => Set::Transpose {
                a: ops.upload(a.view())?,
                out: None,
            },
            Inputs::Reduce { x, reduction, axis } => Set::Reduce {
                x: ops.upload(x.view())?,
                reduction: *reduction,
                axis: *axis,
                out: None,
                idx: None,
            },
            Inputs::Dot { x, y } => Set::Dot {
                x: row(x)?,
                y: row(y)?,
            },
            Inputs::Cholesky { a } => {
                if self.pristine.is_none() {
                    self.pristine = Some(ops.upload(a.view())?);
                }
                Set::Cholesky {
                    a: Some(ops.upload(a.view())?),
                }
            }
            Inputs::KMeans { x, centroids } => {
                if self.pristine.is_none() {
                    self.pristine = Some(ops.upload(centroids.view())?);
                }
                Set::KMeans {
                    x: ops.upload(x.view())?,
                    c: ops.upload(centroids.view())?,
                    labels: ops.unlabeled(x.nrows())?,
                }
            }
            Inputs::Solve { l, b } => {
                Set::Solve(IntoX::upload(ops, ops.factor_from_lower(l.view())?, b)?)
            }
            Inputs::Chain { m, b } => Set::Chain(IntoX::upload(ops, ops.upload(m.view())?, b)?),
            Inputs::Transfer { x } => Set::Transfer {
                host: HostBuf::of(ops, x, self.pinned)?,
                dev: ops.alloc(x.nrows(), x.ncols())?,
                back: HostBuf::of(ops, &Array2::zeros(x.dim()), self.pinned)?,
            },
            other => match spectra::Spectra::upload(ops, other)? {
                Some(s) => Set::Spectra(s),
                None => Set::Lin(linalg::Lin::upload(ops, other, &mut self.pristine)?),
            },
        })
    }

    /// Resets set `i` (outside the timed region): Cholesky's matrix, k-means'
    /// centroids, and what LU, QR and the triangular solve work on in place, from their
    /// pristine copies.
    ///
    /// # Errors
    /// Device errors.
    pub fn prepare(&mut self, ops: &dyn Ops<T>, i: usize) -> Result<()> {
        let i = i % self.sets.len();
        match (&mut self.sets[i], &self.pristine) {
            (Set::Cholesky { a: Some(a) }, Some(p)) | (Set::KMeans { c: a, .. }, Some(p)) => {
                ops.copy_into(p, a)
            }
            (Set::Lin(l), Some(p)) => l.prepare(ops, p),
            _ => Ok(()),
        }
    }

    /// Before the checked run: set 0 reset, its output cleared (so that a variant which
    /// writes nothing cannot pass with an earlier result), its labels unassigned.
    ///
    /// # Errors
    /// Device errors.
    pub fn fresh(&mut self, ops: &dyn Ops<T>) -> Result<()> {
        self.prepare(ops, 0)?;
        match &mut self.sets[0] {
            Set::Gemm { c, .. } => *c = ops.zeros(c.rows(), c.cols())?,
            Set::Copy { dst, .. } => *dst = ops.zeros(1, dst.cols())?,
            Set::KMeans { labels, .. } => *labels = ops.unlabeled(labels.len())?,
            Set::Reduce { out, idx, .. } => (*out, *idx) = (None, None),
            Set::Lin(l) => l.clear(),
            Set::Spectra(s) => s.clear(),
            _ => {}
        }
        Ok(())
    }

    /// Queues one run on set `i` (reductions wait for their value).
    ///
    /// # Errors
    /// Those of the backend.
    pub fn run(&mut self, ops: &dyn Ops<T>, i: usize) -> Result<Ran<T>> {
        let i = i % self.sets.len();
        Ok(match &mut self.sets[i] {
            Set::Gemm { a, b, c } => {
                ops.gemm_dev(Gemm::new(), a, b, c)?;
                Ran::Done
            }
            Set::Gram { m, out } => {
                *out = Some(ops.gram_dev(m)?);
                Ran::Done
            }
            Set::Transpose { a, out } => {
                *out = Some(ops.transpose_dev(a)?);
                Ran::Done
            }
            Set::Reduce {
                x,
                reduction,
                axis,
                out,
                idx,
            } => match (*reduction, axis.map(Axis)) {
                (Reduction::Value(op), None) => Ran::Scalar(ops.reduce_dev(op, x)?),
                (Reduction::Arg(op), None) => Ran::Index(ops.arg_reduce_dev(op, x)?),
                (Reduction::Value(op), Some(a)) => {
                    *out = Some(ops.reduce_axis_dev(op, x, a)?);
                    Ran::Done
                }
                (Reduction::Arg(op), Some(a)) => {
                    *idx = Some(ops.arg_reduce_axis_dev(op, x, a)?);
                    Ran::Done
                }
            },
            Set::Dot { x, y } => Ran::Scalar(ops.dot_dev(x, y)?),
            Set::Cholesky { a } => {
                let m = a
                    .take()
                    .ok_or_else(|| Error::invalid("shootout", "the matrix was lost"))?;
                *a = Some(ops.cholesky_in_place_dev(m)?.into_l());
                Ran::Done
            }
            Set::KMeans { x, c, labels } => {
                let assignment = ops.assign_dev(x, c, labels)?;
                ops.update_dev(x, labels, c)?;
                Ran::Assign(assignment)
            }
            Set::Copy { src, dst } => {
                ops.copy_into(src, dst)?;
                Ran::Done
            }
            Set::Solve(s) => {
                s.x = Some(ops.cholesky_solve_dev(&s.by, &s.b)?);
                Ran::Done
            }
            Set::Chain(s) => {
                let g = ops.gram_dev(&s.by)?;
                let l = ops.cholesky_in_place_dev(g)?;
                s.x = Some(ops.cholesky_solve_dev(&l, &s.b)?);
                Ran::Done
            }
            Set::Transfer { host, dev, back } => {
                ops.upload_into(host.view(), dev)?;
                ops.download_into(dev, back.view_mut())?;
                Ran::Done
            }
            Set::Pinned { gpu, pair } => {
                gpu.pinned_round_trip(pair)?;
                Ran::Done
            }
            Set::Lin(l) => {
                l.run(ops)?;
                Ran::Done
            }
            Set::Spectra(s) => {
                s.run(ops)?;
                Ran::Done
            }
        })
    }

    /// Seconds that `runs` runs take, from set `first` on (rotating): one timed region
    /// around all of them, or one around each when every run needs its input reset
    /// first, outside the timed region.
    ///
    /// # Errors
    /// Those of the runs.
    pub fn time_runs(&mut self, ops: &dyn Ops<T>, first: usize, runs: usize) -> Result<f64> {
        if self.op == Op::Transfer {
            // Host work (packing, page faults) is part of a transfer: the wall clock.
            let start = std::time::Instant::now();
            for i in first..first + runs {
                self.run(ops, i)?;
            }
            return Ok(start.elapsed().as_secs_f64());
        }
        if self.needs_prepare() {
            let mut total = 0.0;
            for i in first..first + runs {
                self.prepare(ops, i)?;
                total += ops.time(&mut || self.run(ops, i).map(drop))?;
            }
            return Ok(total);
        }
        ops.time(&mut || {
            for i in first..first + runs {
                self.run(ops, i)?;
            }
            Ok(())
        })
    }

    /// Runs set 0, freshly reset and its output cleared, and checks the result against
    /// `reference` (or, for the copy ceiling, against the bytes it copies,
    /// `copy_src`). `Ok(Err(why))` when the result is wrong.
    ///
    /// # Errors
    /// Those of the run.
    pub fn check(
        &mut self,
        ops: &dyn Ops<T>,
        reference: &Reference<T>,
        math: Precision,
        copy_src: Option<&[T]>,
    ) -> Result<std::result::Result<(), String>> {
        self.fresh(ops)?;
        let ran = self.run(ops, 0)?;
        let out = self.output(ops, ran)?;
        Ok(match (copy_src, &out, &self.sets[0]) {
            (_, _, Set::Pinned { gpu, pair }) => match gpu.pinned_intact(pair)? {
                true => Ok(()),
                false => Err("the pinned round trip changed the bytes".into()),
            },
            (Some(src), Output::Matrix(m), _) => {
                crate::check::copy(src, m.as_slice().unwrap_or(&[]))
            }
            _ => reference.check_with(&out, math),
        })
    }

    /// The result of the last run on set 0 (`ran` is what that run returned).
    ///
    /// # Errors
    /// Device errors; a run that left no result.
    pub fn output(&self, ops: &dyn Ops<T>, ran: Ran<T>) -> Result<Output<T>> {
        let none = || Error::invalid("shootout", "the run returned no result");
        let matrix = |m: &Option<Matrix<T>>| -> Result<Array2<T>> {
            ops.download(m.as_ref().ok_or_else(none)?)
        };
        Ok(match (&self.sets[0], ran) {
            (Set::Gemm { c: m, .. }, _) | (Set::Copy { dst: m, .. }, _) => {
                Output::Matrix(ops.download(m)?)
            }
            (Set::Gram { out, .. }, _)
            | (Set::Transpose { out, .. }, _)
            | (Set::Chain(IntoX { x: out, .. }), _)
            | (Set::Solve(IntoX { x: out, .. }), _) => Output::Matrix(matrix(out)?),
            (Set::Transfer { back, .. }, _) => Output::Matrix(back.view().to_owned()),
            (Set::Pinned { .. }, _) => Output::Scalar(T::zero()),
            (Set::Cholesky { a }, _) => Output::Matrix(matrix(a)?),
            (Set::Lin(l), _) => l.output(ops)?,
            (Set::Spectra(s), _) => s.output(ops)?,
            (Set::Reduce { .. } | Set::Dot { .. }, Ran::Scalar(v)) => Output::Scalar(v),
            (Set::Reduce { .. }, Ran::Index(i)) => Output::Index(i),
            (Set::Reduce { out: Some(m), .. }, _) => Output::Matrix(ops.download(m)?),
            (Set::Reduce { idx: Some(i), .. }, _) => {
                Output::Indices(ops.download_indices(i)?.to_vec())
            }
            (Set::KMeans { c, labels, .. }, Ran::Assign(a)) => Output::KMeans {
                centroids: ops.download(c)?,
                labels: ops
                    .download_indices(labels)?
                    .iter()
                    .map(|&l| l as i64)
                    .collect(),
                changed: Some(a.changed),
                inertia: a.inertia,
                updated: true,
            },
            _ => return Err(none()),
        })
    }
}
