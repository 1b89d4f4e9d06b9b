//! The tolerances must not be stricter than the error analysis: a backend that does
//! everything in its element type, the way a GPU kernel does (f32 accumulation, the
//! expanded distance form `‖x‖² − 2x·c + ‖c‖²`, centroid sums in f32, a right-looking
//! Cholesky in f32), is correct and must pass every case.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use ndgpu_conformance::{run_family, Sizes};
use ndgpu_core::{
    check, kmeans::init_centroids, ArgOp, Backend, Cluster, Element, Error, Factorize, Family,
    KMeansConfig, KMeansResult, MatMul, Reduce, ReduceOp, Result, Trans, Transpose,
};
use ndgpu_cpu::CpuBackend;

/// Computes in `T` throughout; only the exact operations (transpose, min/max, arg
/// reductions) are borrowed from the reference.
struct InT(CpuBackend);

/// Sequential sum in `T` (the worst order for rounding).
fn seq_sum<T: Element>(it: impl Iterator<Item = T>) -> T {
    it.fold(T::zero(), |s, x| s + x)
}

impl<T: Element> MatMul<T> for InT {
    fn gemm(
        &self,
        alpha: T,
        a: ArrayView2<T>,
        ta: Trans,
        b: ArrayView2<T>,
        tb: Trans,
        beta: T,
        c: Option<ArrayView2<T>>,
    ) -> Result<Array2<T>> {
        let (m, n, _) = check::gemm(a, ta, b, tb, beta, c.as_ref())?;
        let ab = ta.apply(a).dot(&tb.apply(b));
        Ok(Array2::from_shape_fn((m, n), |ix| match c {
            Some(c) if beta != T::zero() => alpha * ab[ix] + beta * c[ix],
            _ => alpha * ab[ix],
        }))
    }
    fn gram(&self, m: ArrayView2<T>) -> Result<Array2<T>> {
        let g = m.dot(&m.t());
        let n = m.nrows();
        Ok(Array2::from_shape_fn((n, n), |(i, j)| {
            g[[i.max(j), i.min(j)]]
        }))
    }
}

impl<T: Element> Transpose<T> for InT {
    fn transpose(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        self.0.transpose(a)
    }
}

impl<T: Element> Reduce<T> for InT {
    fn reduce(&self, op: ReduceOp, a: ArrayView2<T>) -> Result<T> {
        match op {
            ReduceOp::Sum => Ok(seq_sum(a.iter().copied())),
            ReduceOp::SumSq => Ok(seq_sum(a.iter().map(|&x| x * x))),
            _ => self.0.reduce(op, a),
        }
    }
    fn reduce_axis(&self, op: ReduceOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<T>> {
        match op {
            ReduceOp::Sum | ReduceOp::SumSq => {
                check::axis(op.name(), &a, axis, false)?;
                let sq = op == ReduceOp::SumSq;
                Ok(a.lanes(axis)
                    .into_iter()
                    .map(|l| seq_sum(l.iter().map(|&x| if sq { x * x } else { x })))
                    .collect())
            }
            _ => self.0.reduce_axis(op, a, axis),
        }
    }
    fn arg_reduce(&self, op: ArgOp, a: ArrayView2<T>) -> Result<usize> {
        self.0.arg_reduce(op, a)
    }
    fn arg_reduce_axis(&self, op: ArgOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<usize>> {
        self.0.arg_reduce_axis(op, a, axis)
    }
    fn dot(&self, x: ArrayView1<T>, y: ArrayView1<T>) -> Result<T> {
        check::dot(&x, &y)?;
        Ok(seq_sum(x.iter().zip(y.iter()).map(|(&a, &b)| a * b)))
    }
}

impl<T: Element> Factorize<T> for InT {
    /// Right-looking: after each pivot, the trailing lower triangle is updated in `T`.
    fn cholesky(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        let n = check::cholesky(&a)?;
        let mut w =
            Array2::from_shape_fn((n, n), |(i, j)| if j <= i { a[[i, j]] } else { T::zero() });
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
        Ok(w)
    }
    fn cholesky_solve(&self, l: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        let (n, nrhs) = check::cholesky_solve(&l, &b)?;
        let mut x = b.to_owned();
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
        Ok(x.as_standard_layout().into_owned())
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

impl<T: Element> Cluster<T> for InT {
    fn kmeans(&self, x: ArrayView2<T>, config: &KMeansConfig) -> Result<KMeansResult<T>> {
        let mut c = init_centroids(x, config)?;
        let (n, d) = x.dim();
        let mut labels = Array1::from_elem(n, usize::MAX);
        let mut history = Vec::new();
        let mut converged = false;
        loop {
            let mut changed = 0;
            let mut inertia = 0.0;
            for (i, l) in labels.iter_mut().enumerate() {
                let (j, dist) = nearest(x.row(i), c.view());
                changed += usize::from(*l != j);
                *l = j;
                inertia += dist.as_f64();
            }
            history.push(inertia);
            if changed as f64 <= config.tol * n as f64 {
                converged = true;
                break;
            }
            if history.len() >= config.max_iter {
                break;
            }
            let mut sums = Array2::<T>::zeros((config.k, d));
            let mut counts = vec![0usize; config.k];
            for (i, &l) in labels.iter().enumerate() {
                counts[l] += 1;
                let mut row = sums.row_mut(l);
                row += &x.row(i);
            }
            for (j, &count) in counts.iter().enumerate() {
                if count > 0 {
                    let mean = &sums.row(j) / T::from_f64(count as f64);
                    c.row_mut(j).assign(&mean);
                }
            }
        }
        Ok(KMeansResult {
            centroids: c,
            labels,
            inertia: *history.last().expect("one step"),
            iterations: history.len(),
            converged,
            inertia_history: history,
        })
    }
    fn predict(&self, x: ArrayView2<T>, centroids: ArrayView2<T>) -> Result<Array1<usize>> {
        check::predict(&x, &centroids)?;
        Ok(x.rows()
            .into_iter()
            .map(|r| nearest(r, centroids).0)
            .collect())
    }
}

impl Backend for InT {
    fn name(&self) -> &'static str {
        "in-t"
    }
    fn description(&self) -> String {
        "everything in the element type".into()
    }
    fn variants(&self, family: Family) -> Vec<&'static str> {
        self.0.variants(family)
    }
    fn variant(&self, family: Family) -> &'static str {
        self.0.variant(family)
    }
    fn set_variant(&mut self, family: Family, name: &str) -> Result<()> {
        self.0.set_variant(family, name)
    }
}

#[test]
fn a_correct_low_precision_backend_passes_everything() {
    let backend = InT(CpuBackend::new());
    for seed in [1, 2] {
        for family in Family::ALL {
            let reports = run_family(&backend, family, Sizes::Small, seed);
            let failed: Vec<String> = reports
                .iter()
                .filter(|r| !r.passed)
                .map(|r| format!("{} {}: {}", r.dtype, r.case, r.detail))
                .collect();
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
#[ignore = "slow in the test profile (~1 min): run with --ignored"]
fn a_correct_low_precision_backend_passes_medium_sizes() {
    let backend = InT(CpuBackend::new());
    for family in Family::ALL {
        let failed: Vec<String> = run_family(&backend, family, Sizes::Medium, 3)
            .iter()
            .filter(|r| !r.passed)
            .map(|r| format!("{} {}: {}", r.dtype, r.case, r.detail))
            .collect();
        assert!(failed.is_empty(), "{family}:\n{}", failed.join("\n"));
    }
}
