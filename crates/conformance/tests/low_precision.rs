//! The tolerances must not be stricter than the error analysis: a backend that does
//! everything in its element type, the way a GPU kernel does (f32 accumulation, the
//! expanded distance form `‖x‖² − 2x·c + ‖c‖²`, centroid sums in f32, a right-looking
//! Cholesky in f32, LU and Householder QR in f32 with their factors column-major as
//! LAPACK's), is correct and must pass every case.

use ndarray::{Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis};
use ndgpu_conformance::{assert_chains, failed_cases, host_memory_of, run_family, Sizes};
use ndgpu_core::backend::{self, Here, HostStorage};
use ndgpu_core::{
    ArgOp, Assignment, Backend, CholeskyFactor, ClusterKernels, Element, Error, FactorLayout,
    FactorizeKernels, Family, Gemm, Indices, LuFactor, MatMulKernels, Matrix, Place, Points,
    QrFactor, Reduce, ReduceKernels, ReduceOp, Result, Trans, Transpose, TransposeKernels,
    Triangular, Variants,
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

/// Solves `M·X = Y` in place in `T` (Y in, X out), M triangular with entries `m(i, k)`: lower when
/// `forward`, upper otherwise; ones on the diagonal when `unit`.
fn substitute<T: Element>(
    x: &mut ArrayViewMut2<T>,
    forward: bool,
    unit: bool,
    m: impl Fn(usize, usize) -> T,
) {
    let n = x.nrows();
    for c in 0..x.ncols() {
        for step in 0..n {
            let i = if forward { step } else { n - 1 - step };
            let done = if forward { 0..i } else { i + 1..n };
            let s = seq_sum(done.map(|k| m(i, k) * x[[k, c]]));
            let r = x[[i, c]] - s;
            x[[i, c]] = if unit { r } else { r / m(i, i) };
        }
    }
}

/// A factor computed as the m×n `w`, stored column-major (resident n×m), as LAPACK's;
/// NaN or ±Inf in it is `NonFinite` naming the entry.
fn packed<T: Element>(op: &'static str, w: &Array2<T>) -> Result<Matrix<T>> {
    ndgpu_core::check::finite(op, "A", &w.view())?;
    Ok(backend::host_matrix(
        w.t().as_standard_layout().into_owned(),
    ))
}

/// A column-major factor's m×n matrix.
fn unpacked<'a, T: Element>(op: &'static str, m: &'a Matrix<T>) -> Result<ArrayView2<'a, T>> {
    Ok(HERE.host_view(op, "factor", m)?.reversed_axes())
}

/// `Y ← (I − τ·v·vᵀ)·Y` in `T` on rows j.. of `y`, v[0] = 1 and v[1..] = `v`.
fn reflect<T: Element>(y: &mut ArrayViewMut2<T>, j: usize, v: &[T], tau: T) {
    for c in 0..y.ncols() {
        let s = y[[j, c]] + seq_sum(v.iter().enumerate().map(|(t, &vt)| vt * y[[j + 1 + t, c]]));
        let f = tau * s;
        y[[j, c]] = y[[j, c]] - f;
        for (t, &vt) in v.iter().enumerate() {
            y[[j + 1 + t, c]] = y[[j + 1 + t, c]] - f * vt;
        }
    }
}

/// `op(Q)·Y` in `T` from a column-major QR factor.
fn apply_q<T: Element>(f: &QrFactor<T>, trans: Trans, y: &mut ArrayViewMut2<T>) -> Result<()> {
    let qr = unpacked("qr_apply", f.packed())?;
    let tau = HERE.host_view("qr_apply", "tau", f.tau())?;
    let k = tau.len();
    let order: Vec<usize> = match trans {
        Trans::No => (0..k).rev().collect(),
        Trans::Yes => (0..k).collect(),
    };
    for j in order {
        let v: Vec<T> = qr.column(j).iter().skip(j + 1).copied().collect();
        reflect(y, j, &v, tau[[j, 0]]);
    }
    Ok(())
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

    fn trsm_unchecked(&self, a: &Matrix<T>, tri: Triangular, b: &mut Matrix<T>) -> Result<()> {
        let a = HERE.host_view("solve_triangular", "A", a)?;
        if let Some(pivot) = (0..a.nrows()).find(|&i| !tri.unit && a[[i, i]] == T::zero()) {
            return Err(Error::Singular {
                op: "solve_triangular",
                pivot,
            });
        }
        let at = |i: usize, k: usize| match tri.trans {
            Trans::No => a[[i, k]],
            Trans::Yes => a[[k, i]],
        };
        substitute(&mut view_mut("B", b)?, tri.forward(), tri.unit, at);
        Ok(())
    }

    /// Right-looking, as LAPACK's `getf2`, in `T`.
    fn lu_unchecked(&self, a: Matrix<T>) -> Result<LuFactor<T>> {
        let mut w = HERE.host_view("lu", "A", &a)?.to_owned();
        let (m, n) = w.dim();
        let mut pivots = Vec::new();
        for j in 0..m.min(n) {
            let mut p = j;
            for i in j + 1..m {
                if w[[i, j]].abs() > w[[p, j]].abs() {
                    p = i;
                }
            }
            pivots.push(p);
            if w[[p, j]] == T::zero() {
                continue;
            }
            for c in 0..n {
                w.swap([j, c], [p, c]);
            }
            for i in j + 1..m {
                let l = w[[i, j]] / w[[j, j]];
                w[[i, j]] = l;
                for c in j + 1..n {
                    w[[i, c]] = w[[i, c]] - l * w[[j, c]];
                }
            }
        }
        let zero = (0..pivots.len()).find(|&i| w[[i, i]] == T::zero());
        let ipiv = backend::indices(pivots.len(), HostStorage { data: pivots });
        let lu = packed("lu", &w)?;
        Ok(backend::lu_factor(
            lu,
            ipiv,
            FactorLayout::ColMajor,
            (m, n),
            zero,
        ))
    }

    fn lu_solve_unchecked(&self, f: &LuFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        let lu = unpacked("lu_solve", f.packed())?;
        let piv = &HERE
            .indices::<HostStorage<usize>>("lu_solve", "pivots", f.pivots())?
            .data;
        let mut x = view_mut("B", b)?;
        let swap = |x: &mut ArrayViewMut2<T>, i: usize, p: usize| {
            for c in 0..x.ncols() {
                x.swap([i, c], [p, c]);
            }
        };
        let at = |i: usize, k: usize| lu[[i, k]];
        let tr = |i: usize, k: usize| lu[[k, i]];
        match trans {
            Trans::No => {
                piv.iter()
                    .enumerate()
                    .for_each(|(i, &p)| swap(&mut x, i, p));
                substitute(&mut x, true, true, at);
                substitute(&mut x, false, false, at);
            }
            Trans::Yes => {
                substitute(&mut x, true, false, tr);
                substitute(&mut x, false, true, tr);
                piv.iter()
                    .enumerate()
                    .rev()
                    .for_each(|(i, &p)| swap(&mut x, i, p));
            }
        }
        Ok(())
    }

    /// Householder, as LAPACK's `geqr2`, in `T` (norms as square roots of sums of
    /// squares, as a GPU kernel forms them).
    fn qr_unchecked(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        let mut w = HERE.host_view("qr", "A", &a)?.to_owned();
        let (m, n) = w.dim();
        let k = m.min(n);
        let mut tau = Array2::zeros((k, 1));
        for j in 0..k {
            let alpha = w[[j, j]];
            let below = seq_sum((j + 1..m).map(|i| w[[i, j]] * w[[i, j]]));
            if below == T::zero() {
                continue;
            }
            let norm = (alpha * alpha + below).sqrt();
            let beta = if alpha >= T::zero() { -norm } else { norm };
            for i in j + 1..m {
                w[[i, j]] = w[[i, j]] / (alpha - beta);
            }
            w[[j, j]] = beta;
            tau[[j, 0]] = (beta - alpha) / beta;
            let v: Vec<T> = (j + 1..m).map(|i| w[[i, j]]).collect();
            let mut rest = w.slice_mut(ndarray::s![.., j + 1..]);
            reflect(&mut rest, j, &v, tau[[j, 0]]);
        }
        let qr = packed("qr", &w)?;
        Ok(backend::qr_factor(
            qr,
            backend::host_matrix(tau),
            FactorLayout::ColMajor,
            (m, n),
        ))
    }

    fn qr_apply_unchecked(&self, f: &QrFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        apply_q(f, trans, &mut view_mut("B", b)?)
    }

    fn qr_solve_unchecked(&self, f: &QrFactor<T>, mut b: Matrix<T>) -> Result<Matrix<T>> {
        let (m, n) = f.dim();
        let qr = unpacked("lstsq", f.packed())?;
        backend::full_rank("lstsq", &qr.diag().to_vec(), (m, n))?;
        apply_q(f, Trans::Yes, &mut view_mut("B", &mut b)?)?;
        let y = HERE.host_view("lstsq", "B", &b)?;
        let mut x = y.slice(ndarray::s![..n, ..]).to_owned();
        substitute(&mut x.view_mut(), false, false, |i, k| qr[[i, k]]);
        Ok(backend::host_matrix(x))
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
        let x = HERE.host_view("kmeans", "X", x)?;
        let c = HERE.host_view("kmeans", "C", c)?;
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
