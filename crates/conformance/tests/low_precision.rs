//! The tolerances must not be stricter than the error analysis: a backend that does
//! everything in its element type, the way a GPU kernel does (f32 accumulation, the
//! expanded distance form `‖x‖² − 2x·c + ‖c‖²`, centroid sums in f32, a right-looking
//! Cholesky in f32), is correct and must pass every case.

use ndarray::{Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis};
use ndgpu_conformance::{assert_chains, failed_cases, host_memory_of, run_family, Sizes};
use ndgpu_core::backend::{self, Here, HostStorage};
use ndgpu_core::{
    ArgOp, Assignment, Backend, CholeskyFactor, ClusterKernels, Element, Error, FactorizeKernels,
    Family, Gemm, Indices, MatMulKernels, Matrix, Place, Points, Reduce, ReduceKernels, ReduceOp,
    Result, Transpose, TransposeKernels, Variants,
};
use ndgpu_cpu::CpuBackend;

/// Computes in `T` throughout; only the exact operations (transpose, min/max, arg
/// reductions) and memory are borrowed from the reference.
struct InT(CpuBackend);

host_memory_of!(InT, 0, "in-t");

const HERE: Here = Here {
    backend: "in-t",
    place: Place::Host,
};

/// A host operand as a mutable view.
fn view_mut<'a, T: Element>(
    what: &'static str,
    m: &'a mut Matrix<T>,
) -> Result<ArrayViewMut2<'a, T>> {
    let dim = m.dim();
    let s: &mut HostStorage<T> = HERE.matrix_mut("in-t", what, m)?;
    Ok(ArrayViewMut2::from_shape(dim, &mut s.data).expect("rows × cols"))
}

/// Sequential sum in `T` (the worst order for rounding).
fn seq_sum<T: Element>(it: impl Iterator<Item = T>) -> T {
    it.fold(T::zero(), |s, x| s + x)
}

impl<T: Element> MatMulKernels<T> for InT {
    fn gemm_unchecked(&self, g: Gemm<T>, ab: [&Matrix<T>; 2], c: &mut Matrix<T>) -> Result<()> {
        let [a, b] = ab;
        let a = HERE.host_view("gemm", "A", a)?;
        let b = HERE.host_view("gemm", "B", b)?;
        let ab = g.ta.apply(a).dot(&g.tb.apply(b));
        let mut c = view_mut("C", c)?;
        c.zip_mut_with(&ab, |c, &p| {
            *c = match g.beta != T::zero() {
                true => g.alpha * p + g.beta * *c,
                false => g.alpha * p,
            }
        });
        Ok(())
    }

    fn gram_unchecked(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        let m = HERE.host_view("gram", "M", m)?;
        let g = m.dot(&m.t());
        let n = m.nrows();
        Ok(backend::host_matrix(Array2::from_shape_fn(
            (n, n),
            |(i, j)| g[[i.max(j), i.min(j)]],
        )))
    }
}

impl<T: Element> TransposeKernels<T> for InT {
    fn transpose_unchecked(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        self.0.transpose_dev(a)
    }
}

impl<T: Element> ReduceKernels<T> for InT {
    fn reduce_unchecked(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T> {
        let v = HERE.host_view(op.name(), "A", a)?;
        match op {
            ReduceOp::Sum => Ok(seq_sum(v.iter().copied())),
            ReduceOp::SumSq => Ok(seq_sum(v.iter().map(|&x| x * x))),
            _ => self.0.reduce_dev(op, a),
        }
    }
    fn reduce_axis_unchecked(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>> {
        match op {
            ReduceOp::Sum | ReduceOp::SumSq => {
                let a = HERE.host_view(op.name(), "A", a)?;
                let kept = backend::kept(a.dim(), axis);
                let sq = op == ReduceOp::SumSq;
                let sums: Vec<T> = a
                    .lanes(axis)
                    .into_iter()
                    .map(|l| seq_sum(l.iter().map(|&x| if sq { x * x } else { x })))
                    .collect();
                let shape = if axis.index() == 0 {
                    (1, kept)
                } else {
                    (kept, 1)
                };
                Ok(backend::matrix(
                    shape.0,
                    shape.1,
                    HostStorage { data: sums },
                ))
            }
            _ => self.0.reduce_axis_dev(op, a, axis),
        }
    }
    fn arg_reduce_unchecked(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize> {
        self.0.arg_reduce_dev(op, a)
    }
    fn arg_reduce_axis_unchecked(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices> {
        self.0.arg_reduce_axis_dev(op, a, axis)
    }
    fn dot_unchecked(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T> {
        let (x, y) = (
            HERE.host_view("dot", "x", x)?,
            HERE.host_view("dot", "y", y)?,
        );
        Ok(seq_sum(x.iter().zip(y.iter()).map(|(&a, &b)| a * b)))
    }
}

impl<T: Element> FactorizeKernels<T> for InT {
    /// Right-looking: after each pivot, the trailing lower triangle is updated in `T`.
    fn cholesky_unchecked(&self, mut a: Matrix<T>) -> Result<CholeskyFactor<T>> {
        let n = a.rows();
        let mut w = view_mut("A", &mut a)?;
        for i in 0..n {
            for j in i + 1..n {
                w[[i, j]] = T::zero();
            }
        }
        for k in 0..n {
            let d = w[[k, k]];
            if !(d.is_finite() && d > T::zero()) {
                return Err(Error::NotPositiveDefinite {
                    pivot: k,
                    value: d.as_f64(),
                });
            }
            let r = d.sqrt();
            w[[k, k]] = r;
            for i in k + 1..n {
                w[[i, k]] = w[[i, k]] / r;
            }
            for j in k + 1..n {
                for i in j..n {
                    let u = w[[i, k]] * w[[j, k]];
                    w[[i, j]] = w[[i, j]] - u;
                }
            }
        }
        Ok(backend::cholesky_factor(a))
    }
    fn cholesky_solve_unchecked(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()> {
        let n = l.order();
        let (nrhs, l) = HERE.solve_inputs(l, b)?;
        let mut x = view_mut("B", b)?;
        for c in 0..nrhs {
            for i in 0..n {
                let s = seq_sum((0..i).map(|k| l[[i, k]] * x[[k, c]]));
                x[[i, c]] = (x[[i, c]] - s) / l[[i, i]];
            }
            for i in (0..n).rev() {
                let s = seq_sum((i + 1..n).map(|k| l[[k, i]] * x[[k, c]]));
                x[[i, c]] = (x[[i, c]] - s) / l[[i, i]];
            }
        }
        Ok(())
    }
}

/// Nearest centroid by the expanded form in `T`, and that (rounded) distance.
fn nearest<T: Element>(x: ArrayView1<T>, c: ArrayView2<T>) -> (usize, T) {
    let xx = seq_sum(x.iter().map(|&v| v * v));
    let mut best = (0, T::infinity());
    for (j, cj) in c.rows().into_iter().enumerate() {
        let cc = seq_sum(cj.iter().map(|&v| v * v));
        let xc = seq_sum(x.iter().zip(cj.iter()).map(|(&a, &b)| a * b));
        let d = xx - (xc + xc) + cc;
        if d < best.1 || j == 0 {
            best = (j, d);
        }
    }
    best
}

/// The sample weights as values (every one 1 without weights).
fn weights<T: Element>(n: usize, w: Option<&Matrix<T>>) -> Result<Vec<T>> {
    Ok(match w {
        None => vec![T::one(); n],
        Some(w) => HERE
            .host_view("kmeans", "weights", w)?
            .iter()
            .copied()
            .collect(),
    })
}

impl<T: Element> ClusterKernels<T> for InT {
    fn assign_unchecked(&self, p: Points<T>, c: &Matrix<T>, l: &mut Indices) -> Result<Assignment> {
        let (x, w, labels) = (p.x, p.weights, l);
        let (x, c) = (
            HERE.host_view("kmeans", "X", x)?,
            HERE.host_view("kmeans", "C", c)?,
        );
        let w = weights(x.nrows(), w)?;
        let labels: &mut HostStorage<usize> = HERE.indices_mut("kmeans", "labels", labels)?;
        let (mut changed, mut inertia) = (0, 0.0);
        for ((row, l), wi) in x.rows().into_iter().zip(labels.data.iter_mut()).zip(&w) {
            let (j, dist) = nearest(row, c);
            changed += usize::from(*l != j);
            *l = j;
            inertia += dist.as_f64() * wi.as_f64();
        }
        Ok(Assignment { changed, inertia })
    }
    fn update_unchecked(&self, p: Points<T>, labels: &Indices, c: &mut Matrix<T>) -> Result<()> {
        let (x, w) = (p.x, p.weights);
        let (k, d) = c.dim();
        let x = HERE.host_view("kmeans", "X", x)?;
        let w = weights(x.nrows(), w)?;
        let labels: &HostStorage<usize> = HERE.indices("kmeans", "labels", labels)?;
        let mut sums = Array2::<T>::zeros((k, d));
        let mut mass = vec![T::zero(); k];
        for ((row, &l), &wi) in x.rows().into_iter().zip(&labels.data).zip(&w) {
            // Weighted sums in T, as a GPU kernel forms them.
            mass[l] += wi;
            let mut s = sums.row_mut(l);
            s.zip_mut_with(&row, |s, &v| *s += wi * v);
        }
        let mut c = view_mut("centroids", c)?;
        for (j, &m) in mass.iter().enumerate() {
            if m > T::zero() {
                let mean = &sums.row(j) / m;
                c.row_mut(j).assign(&mean);
            }
        }
        Ok(())
    }
}

ndgpu_core::impl_kernels!(InT, Element: matmul, transpose, reduce, factorize, cluster);

impl Backend for InT {
    fn description(&self) -> String {
        "everything in the element type".into()
    }
    fn variant_table(&self) -> &Variants {
        self.0.variant_table()
    }
    fn variant_table_mut(&mut self) -> &mut Variants {
        self.0.variant_table_mut()
    }
}

#[test]
fn a_correct_low_precision_backend_passes_everything() {
    let backend = InT(CpuBackend::new());
    for seed in [1, 2] {
        for family in Family::ALL {
            let reports = run_family(&backend, family, Sizes::Small, seed);
            let failed = failed_cases(&reports);
            assert!(
                failed.is_empty(),
                "{family}, seed {seed}:\n{}",
                failed.join("\n")
            );
            let worst = reports.iter().map(|r| r.error_ratio).fold(0.0, f64::max);
            println!(
                "{family} seed {seed}: {} cases, worst error ratio {worst:.3}",
                reports.len()
            );
        }
    }
}

#[test]
fn a_correct_low_precision_backend_passes_the_chains() {
    assert_chains(&InT(CpuBackend::new()), Sizes::Small);
}

#[test]
#[ignore = "slow in the test profile (~1 min): run with --ignored"]
fn a_correct_low_precision_backend_passes_medium_sizes() {
    let backend = InT(CpuBackend::new());
    for family in Family::ALL {
        let failed = failed_cases(&run_family(&backend, family, Sizes::Medium, 3));
        assert!(failed.is_empty(), "{family}:\n{}", failed.join("\n"));
    }
}
