//! A case on the device: its buffers (in several copies that the timed runs rotate
//! through, so that a small case is not timed from a warm L2), how each implementation
//! runs on them, and the pristine inputs that in-place ops are reset from between runs.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DriverError};
use ndarray::Axis;
use ndgpu_core::{Error, ReduceOp, Result, Trans};
use ndgpu_cublas::{Assignment, BlasElement, CublasBackend, KMeansDevice};
use ndgpu_cuda::ops::{cholesky, gram, kmeans, matmul, reduce, transpose};
use ndgpu_cuda::{DeviceMatrix, Gpu};

use crate::cases::Op;
use crate::check::Output;
use crate::data::Inputs;

/// What runs a case on the device.
#[derive(Clone, Copy)]
pub enum Impl<'a> {
    /// A variant of the hand-written backend (`ndgpu_cuda::ops`).
    Cuda(&'a str),
    /// The vendor backend, with the variant selected on it.
    Vendor(&'a CublasBackend),
    /// The bandwidth ceiling: `ndgpu_cuda::ops::transpose::copy` of the op's bytes.
    Copy,
}

/// What one run returned.
#[derive(Debug, Clone, Copy)]
pub enum Ran<T> {
    /// Its result is in the set's output buffer.
    Done,
    /// A reduction's value.
    Scalar(T),
    /// A k-means step's assignment.
    Assign(Assignment),
}

enum Set<T> {
    Gemm {
        a: DeviceMatrix<T>,
        b: DeviceMatrix<T>,
        c: DeviceMatrix<T>,
    },
    Gram {
        m: DeviceMatrix<T>,
        out: DeviceMatrix<T>,
    },
    Transpose {
        a: DeviceMatrix<T>,
        out: DeviceMatrix<T>,
    },
    Sum {
        x: DeviceMatrix<T>,
    },
    Dot {
        x: DeviceMatrix<T>,
        y: DeviceMatrix<T>,
    },
    /// Overwritten by each run; reset from the pristine matrix before the next.
    Cholesky {
        a: DeviceMatrix<T>,
    },
    KMeans {
        x: DeviceMatrix<T>,
        c: DeviceMatrix<T>,
        labels: CudaSlice<i32>,
    },
}

fn drv(what: &str, e: DriverError) -> Error {
    Error::backend("cuda", what.to_string(), format!("{e:?}"))
}

/// Elements the copy ceiling moves for `op` at size `n`: as many bytes, read plus
/// written, as the op moves (`Op::work` / (2 · element size)).
pub fn copy_len(op: Op, n: usize) -> usize {
    match op {
        Op::Transpose => n * n,
        Op::Sum => n / 2,
        Op::Dot => n,
        _ => 0,
    }
}

/// The host elements the copy ceiling of `inputs` moves (what its result must equal).
pub fn copy_source<T>(inputs: &Inputs<T>) -> Option<&[T]> {
    match inputs {
        Inputs::Transpose { a } => a.as_slice(),
        Inputs::Sum { x } => x.as_slice().map(|s| &s[..copy_len(Op::Sum, s.len())]),
        Inputs::Dot { x, .. } => x.as_slice(),
        _ => None,
    }
}

/// The device buffers of one case.
pub struct DeviceCase<T> {
    op: Op,
    gpu: Arc<Gpu>,
    sets: Vec<Set<T>>,
    /// Cholesky's A, or k-means' starting centroids.
    pristine: Option<DeviceMatrix<T>>,
    /// k-means' starting labels (all −1).
    pristine_labels: Option<CudaSlice<i32>>,
    copy_dst: Vec<CudaSlice<T>>,
    vendor_kmeans: Vec<KMeansDevice<T>>,
}

impl<T: BlasElement> DeviceCase<T> {
    /// Uploads `inputs` of `op` once and clones them on the device into `copies` sets.
    ///
    /// # Errors
    /// Out of device memory; driver errors.
    pub fn new(gpu: &Arc<Gpu>, op: Op, inputs: &Inputs<T>, copies: usize) -> Result<Self> {
        let mut case = DeviceCase {
            op,
            gpu: gpu.clone(),
            sets: Vec::new(),
            pristine: None,
            pristine_labels: None,
            copy_dst: Vec::new(),
            vendor_kmeans: Vec::new(),
        };
        let first = case.upload(inputs)?;
        for _ in 1..copies.max(1) {
            let copy = case.clone_set(&first)?;
            case.sets.push(copy);
        }
        case.sets.insert(0, first);
        Ok(case)
    }

    /// How many sets the runs rotate through.
    pub fn copies(&self) -> usize {
        self.sets.len()
    }

    /// Whether each run must be preceded by [`DeviceCase::prepare`] (in-place ops).
    pub fn needs_prepare(&self) -> bool {
        matches!(self.op, Op::Cholesky | Op::KMeans)
    }

    fn upload(&mut self, inputs: &Inputs<T>) -> Result<Set<T>> {
        let g = &self.gpu;
        let row = |v: &ndarray::Array1<T>| g.upload(v.view().insert_axis(Axis(0)));
        Ok(match inputs {
            Inputs::Gemm { a, b } => Set::Gemm {
                a: g.upload(a.view())?,
                b: g.upload(b.view())?,
                c: g.alloc_matrix("shootout", a.nrows(), b.ncols())?,
            },
            Inputs::Gram { m } => Set::Gram {
                m: g.upload(m.view())?,
                out: g.alloc_matrix("shootout", m.nrows(), m.nrows())?,
            },
            Inputs::Transpose { a } => Set::Transpose {
                a: g.upload(a.view())?,
                out: g.alloc_matrix("shootout", a.ncols(), a.nrows())?,
            },
            Inputs::Sum { x } => Set::Sum { x: row(x)? },
            Inputs::Dot { x, y } => Set::Dot {
                x: row(x)?,
                y: row(y)?,
            },
            Inputs::Cholesky { a } => {
                let pristine = g.upload(a.view())?;
                let set = Set::Cholesky {
                    a: self.clone_matrix(&pristine)?,
                };
                self.pristine = Some(pristine);
                set
            }
            Inputs::KMeans { x, centroids } => {
                let pristine = g.upload(centroids.view())?;
                let labels = g
                    .stream()
                    .clone_htod(&vec![-1i32; x.nrows()])
                    .map_err(|e| drv("uploading the labels", e))?;
                let set = Set::KMeans {
                    x: g.upload(x.view())?,
                    c: self.clone_matrix(&pristine)?,
                    labels: self.clone_labels(&labels)?,
                };
                self.pristine = Some(pristine);
                self.pristine_labels = Some(labels);
                set
            }
        })
    }

    fn clone_matrix(&self, m: &DeviceMatrix<T>) -> Result<DeviceMatrix<T>> {
        let mut out = self.gpu.alloc_matrix("shootout", m.rows, m.cols)?;
        self.gpu
            .stream()
            .memcpy_dtod(&m.data, &mut out.data)
            .map_err(|e| drv("copying on the device", e))?;
        Ok(out)
    }

    fn clone_labels(&self, l: &CudaSlice<i32>) -> Result<CudaSlice<i32>> {
        self.gpu
            .stream()
            .clone_dtod(l)
            .map_err(|e| drv("copying labels on the device", e))
    }

    fn clone_set(&self, s: &Set<T>) -> Result<Set<T>> {
        let m = |x: &DeviceMatrix<T>| self.clone_matrix(x);
        let fresh = |x: &DeviceMatrix<T>| self.gpu.alloc_matrix("shootout", x.rows, x.cols);
        Ok(match s {
            Set::Gemm { a, b, c } => Set::Gemm {
                a: m(a)?,
                b: m(b)?,
                c: fresh(c)?,
            },
            Set::Gram { m: x, out } => Set::Gram {
                m: m(x)?,
                out: fresh(out)?,
            },
            Set::Transpose { a, out } => Set::Transpose {
                a: m(a)?,
                out: fresh(out)?,
            },
            Set::Sum { x } => Set::Sum { x: m(x)? },
            Set::Dot { x, y } => Set::Dot { x: m(x)?, y: m(y)? },
            Set::Cholesky { a } => Set::Cholesky { a: fresh(a)? },
            Set::KMeans { x, c, labels } => Set::KMeans {
                x: m(x)?,
                c: fresh(c)?,
                labels: self.clone_labels(labels)?,
            },
        })
    }

    /// Resets set `i` for `imp` (outside the timed region): Cholesky's matrix and
    /// k-means' centroids and labels from their pristine copies. Also creates, on first
    /// use, the vendor's k-means state and the copy's destinations.
    ///
    /// # Errors
    /// Out of device memory; driver errors; cuBLAS errors.
    pub fn prepare(&mut self, imp: Impl<'_>, i: usize) -> Result<()> {
        let i = i % self.sets.len();
        if matches!(imp, Impl::Copy) && self.copy_dst.is_empty() {
            let len = copy_len(self.op, self.sets_len_hint());
            for _ in 0..self.sets.len() {
                let dst = self.gpu.alloc::<T>("copy", len)?;
                self.copy_dst.push(dst);
            }
        }
        if let (Impl::Vendor(v), true) = (imp, self.op == Op::KMeans) {
            if self.vendor_kmeans.is_empty() {
                for s in 0..self.sets.len() {
                    let Set::KMeans { x, c, .. } = &self.sets[s] else {
                        unreachable!("k-means sets")
                    };
                    let state = v.kmeans_device(self.clone_matrix(x)?, self.clone_matrix(c)?)?;
                    self.vendor_kmeans.push(state);
                }
            }
        }
        let stream = self.gpu.stream().clone();
        let reset = |from: &DeviceMatrix<T>, to: &mut DeviceMatrix<T>| {
            stream
                .memcpy_dtod(&from.data, &mut to.data)
                .map_err(|e| drv("resetting the input", e))
        };
        let reset_labels = |from: &CudaSlice<i32>, to: &mut CudaSlice<i32>| {
            stream
                .memcpy_dtod(from, to)
                .map_err(|e| drv("resetting the labels", e))
        };
        match (&mut self.sets[i], &self.pristine, &self.pristine_labels) {
            (Set::Cholesky { a }, Some(p), _) => reset(p, a)?,
            (Set::KMeans { c, labels, .. }, Some(p), Some(pl)) => match imp {
                Impl::Vendor(_) => {
                    let s = &mut self.vendor_kmeans[i];
                    reset(p, &mut s.centroids)?;
                    reset_labels(pl, &mut s.labels)?;
                }
                _ => {
                    reset(p, c)?;
                    reset_labels(pl, labels)?;
                }
            },
            _ => {}
        }
        Ok(())
    }

    /// Zeroes set 0's output before the checked run, so that a variant which writes
    /// nothing cannot pass with an earlier variant's result. (In-place ops are reset
    /// by [`DeviceCase::prepare`] instead; reductions return their value.)
    ///
    /// # Errors
    /// Driver errors.
    pub fn poison(&mut self, imp: Impl<'_>) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let out = match (imp, &mut self.sets[0]) {
            (Impl::Copy, _) => self.copy_dst.first_mut(),
            (
                _,
                Set::Gemm { c: m, .. } | Set::Gram { out: m, .. } | Set::Transpose { out: m, .. },
            ) => Some(&mut m.data),
            _ => None,
        };
        if let Some(out) = out {
            stream
                .memset_zeros(out)
                .map_err(|e| drv("clearing the output", e))?;
        }
        Ok(())
    }

    /// The size n of the case, from its first set.
    fn sets_len_hint(&self) -> usize {
        match &self.sets[0] {
            Set::Transpose { a, .. } => a.rows,
            Set::Sum { x } | Set::Dot { x, .. } => x.cols,
            _ => 0,
        }
    }

    /// Queues one run of `imp` on set `i` (reductions wait for their value).
    ///
    /// # Errors
    /// Those of the implementation.
    pub fn launch(&mut self, imp: Impl<'_>, i: usize) -> Result<Ran<T>> {
        let i = i % self.sets.len();
        let g = &*self.gpu;
        let (one, zero) = (T::one(), T::zero());
        if let Impl::Copy = imp {
            let len = copy_len(self.op, self.sets_len_hint());
            let src = match &self.sets[i] {
                Set::Transpose { a, .. } => &a.data,
                Set::Sum { x } | Set::Dot { x, .. } => &x.data,
                _ => return Err(Error::invalid("copy", "no copy ceiling for this op")),
            };
            transpose::copy(g, src, &mut self.copy_dst[i], len)?;
            return Ok(Ran::Done);
        }
        Ok(match (&mut self.sets[i], imp) {
            (Set::Gemm { a, b, c }, Impl::Cuda(v)) => {
                matmul::gemm(g, v, one, a, Trans::No, b, Trans::No, zero, c)?;
                Ran::Done
            }
            (Set::Gemm { a, b, c }, Impl::Vendor(vb)) => {
                vb.gemm_device(one, a, Trans::No, b, Trans::No, zero, c)?;
                Ran::Done
            }
            (Set::Gram { m, out }, Impl::Cuda(v)) => {
                gram::gram(g, v, m, out)?;
                Ran::Done
            }
            (Set::Gram { m, out }, Impl::Vendor(vb)) => {
                vb.gram_device(m, out)?;
                Ran::Done
            }
            (Set::Transpose { a, out }, Impl::Cuda(v)) => {
                transpose::transpose(g, v, a, out)?;
                Ran::Done
            }
            (Set::Transpose { a, out }, Impl::Vendor(vb)) => {
                vb.transpose_device(a, out)?;
                Ran::Done
            }
            (Set::Sum { x }, Impl::Cuda(v)) => {
                Ran::Scalar(reduce::reduce(g, v, ReduceOp::Sum, &x.data, x.len())?)
            }
            (Set::Sum { x }, Impl::Vendor(vb)) => Ran::Scalar(vb.sum_device(x)?),
            (Set::Dot { x, y }, Impl::Cuda(v)) => {
                Ran::Scalar(reduce::dot(g, v, &x.data, &y.data, x.len())?)
            }
            (Set::Dot { x, y }, Impl::Vendor(vb)) => {
                Ran::Scalar(vb.dot_device(&x.data, &y.data, x.len())?)
            }
            (Set::Cholesky { a }, Impl::Cuda(v)) => {
                cholesky::cholesky(g, v, a)?;
                Ran::Done
            }
            (Set::Cholesky { a }, Impl::Vendor(vb)) => {
                vb.potrf_device(a)?;
                Ran::Done
            }
            (Set::KMeans { x, c, labels }, Impl::Cuda(v)) => {
                Ran::Assign(kmeans::iterate(g, v, x, c, labels)?)
            }
            (Set::KMeans { .. }, Impl::Vendor(vb)) => {
                let s = &mut self.vendor_kmeans[i];
                let assignment = vb.kmeans_assign(s)?;
                vb.kmeans_update(s)?;
                Ran::Assign(assignment)
            }
            (_, Impl::Copy) => unreachable!("handled above"),
        })
    }

    /// The result of the last run on set 0 (`ran` is what that run returned).
    ///
    /// # Errors
    /// Driver errors.
    pub fn output(&self, imp: Impl<'_>, ran: Ran<T>) -> Result<Output<T>> {
        let g = &self.gpu;
        Ok(match (&self.sets[0], ran) {
            (Set::Gemm { c: m, .. }, _)
            | (Set::Gram { out: m, .. }, _)
            | (Set::Transpose { out: m, .. }, _)
            | (Set::Cholesky { a: m }, _) => Output::Matrix(g.download(m)?),
            (Set::Sum { .. } | Set::Dot { .. }, Ran::Scalar(v)) => Output::Scalar(v),
            (Set::KMeans { x, c, labels }, Ran::Assign(a)) => {
                let (c, labels) = match imp {
                    Impl::Vendor(_) => (
                        &self.vendor_kmeans[0].centroids,
                        &self.vendor_kmeans[0].labels,
                    ),
                    _ => (c, labels),
                };
                let mut host = vec![0i32; x.rows];
                g.stream()
                    .memcpy_dtoh(&labels.slice(0..x.rows), host.as_mut_slice())
                    .map_err(|e| drv("downloading the labels", e))?;
                // Downloading the centroids waits for the stream, labels included.
                let centroids = g.download(c)?;
                Output::KMeans {
                    centroids,
                    labels: host.into_iter().map(i64::from).collect(),
                    changed: Some(a.changed),
                    inertia: a.inertia,
                    updated: true,
                }
            }
            _ => return Err(Error::invalid("shootout", "the run returned no result")),
        })
    }

    /// What the copy wrote into set 0's destination.
    ///
    /// # Errors
    /// Driver errors.
    pub fn copied(&self) -> Result<Vec<T>> {
        let len = copy_len(self.op, self.sets_len_hint());
        self.gpu.download_slice(&self.copy_dst[0], len)
    }
}
