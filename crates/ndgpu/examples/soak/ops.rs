//! The soak's operations: one call of a randomly chosen operation at a random size on
//! the backend under test, and, when asked, its check against the reference (the
//! definition in f64, or the CPU backend) with the project's tolerances. Each call also
//! reports its work (a count of the multiply-adds or elements it handles), from which
//! the tallies put it in a size class.

use std::time::Instant;

use ndgpu::ndarray::{Array2, ArrayView2, Axis};
use ndgpu::{
    ArgOp, Backend, BackendElement, CpuBackend, DType, Element, Family, Gemm, KMeansConfig,
    ReduceOp, Trans,
};
use ndgpu_conformance::compare::{
    check_predict_agrees, cholesky_ratio, gemm_bound, gemm_f64, max_ratio, norm1, ratio,
    solve_ratio, sum_ratio, to_f64,
};
use ndgpu_conformance::data::{blobs, spd, Rng};
use ndgpu_conformance::{failed_cases, run_chains, Sizes};
use ndgpu_core::tolerance;

/// The operations of the mix, in the order their names are reported.
pub const OPS: [&str; 9] = [
    "gemm",
    "gram",
    "transpose",
    "reduce",
    "cholesky+solve",
    "lu solve",
    "lstsq",
    "kmeans",
    "chain",
];

/// What one call gave: `Err` describes a failure (an error, or a result beyond its
/// tolerance).
pub type Outcome = std::result::Result<(), String>;

/// One call to make: operation `op` (an index into [`OPS`]) on `backend`, checked
/// (with `cpu` as the reference where one is needed) when `check`.
pub struct Call<'a> {
    pub backend: &'a dyn Backend,
    pub cpu: &'a CpuBackend,
    pub op: usize,
    pub check: bool,
}

/// What one call measured: the seconds of the backend's calls (not of drawing the
/// inputs or checking), and its work: multiply-adds for the products, factorizations,
/// solves and k-means (one distance pass), elements for transpose and reductions, 1
/// for a chain (its sizes are fixed).
#[derive(Clone, Copy, Default)]
pub struct Measure {
    pub secs: f64,
    pub work: f64,
}

/// Makes `call` once in `T`, drawing its inputs from `rng`; sets `took`.
fn run<T: BackendElement>(call: &Call, rng: &mut Rng, took: &mut Measure) -> Outcome {
    let Call {
        backend: b,
        cpu,
        op,
        check,
    } = *call;
    let ops = T::ops(b);
    match OPS[op] {
        "gemm" => {
            let (m, n, k) = (dim(rng, 160), dim(rng, 160), dim(rng, 160));
            let g = Gemm::new()
                .alpha(T::from_f64(rng.uniform(-2.0, 2.0)))
                .beta(T::from_f64(if rng.below(2) == 0 { 0.0 } else { 0.5 }))
                .ta(if rng.below(2) == 0 {
                    Trans::No
                } else {
                    Trans::Yes
                })
                .tb(if rng.below(2) == 0 {
                    Trans::No
                } else {
                    Trans::Yes
                });
            let a: Array2<T> = rng.matrix(g.ta.dim((m, k)).0, g.ta.dim((m, k)).1);
            let bm: Array2<T> = rng.matrix(g.tb.dim((k, n)).0, g.tb.dim((k, n)).1);
            let c: Array2<T> = rng.matrix(m, n);
            took.work = (m * n * k) as f64;
            let got = timed(took, || ops.gemm(g, a.view(), bm.view(), Some(c.view())))?;
            if check {
                let want = gemm_f64(&g, a.view(), bm.view(), Some(c.view()));
                let scale = rescale::<T>(b, k, Family::MatMul);
                let bound = gemm_bound(&g, a.view(), bm.view(), Some(c.view())) * scale;
                within("gemm", max_ratio(got.view(), want.view(), bound.view()).0)?;
            }
        }
        "gram" => {
            let (n, k) = (dim(rng, 160), dim(rng, 160));
            let a: Array2<T> = rng.matrix(n, k);
            took.work = (n * n * k) as f64;
            let got = timed(took, || ops.gram(a.view()))?;
            if check {
                let g = Gemm::new().tb(Trans::Yes);
                let want = gemm_f64(&g, a.view(), a.view(), None);
                let scale = rescale::<T>(b, k, Family::Gram);
                let bound = gemm_bound(&g, a.view(), a.view(), None) * scale;
                within("gram", max_ratio(got.view(), want.view(), bound.view()).0)?;
            }
        }
        "transpose" => {
            let (r, c) = (dim(rng, 300), dim(rng, 300));
            let a: Array2<T> = rng.matrix(r, c);
            took.work = (r * c) as f64;
            let got = timed(took, || ops.transpose(a.view()))?;
            if check && got != a.t() {
                return Err("transpose: not the exact transpose".into());
            }
        }
        "reduce" => {
            let (r, c) = (dim(rng, 400), dim(rng, 400));
            let a: Array2<T> = rng.matrix(r, c);
            took.work = (r * c) as f64;
            let (sum, cols, arg) = timed(took, || {
                Ok((
                    ops.reduce(ReduceOp::Sum, a.view())?,
                    ops.reduce_axis(ReduceOp::Sum, a.view(), Axis(0))?,
                    ops.arg_reduce(ArgOp::ArgMax, a.view())?,
                ))
            })?;
            if check {
                let x = to_f64(a.view());
                let total = x.iter().map(|v| v.abs()).sum();
                within("sum", sum_ratio(sum, x.sum(), x.len(), total))?;
                for (j, c) in cols.iter().enumerate() {
                    let col = x.column(j);
                    let abs = col.iter().map(|v| v.abs()).sum();
                    within("column sum", sum_ratio(*c, col.sum(), col.len(), abs))?;
                }
                let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if x.iter().nth(arg) != Some(&max) {
                    return Err(format!("argmax: index {arg} does not hold the maximum"));
                }
            }
        }
        "cholesky+solve" => {
            let (n, nrhs) = (dim(rng, 160), dim(rng, 8));
            let a: Array2<T> = spd(rng, n);
            let r: Array2<T> = rng.matrix(n, nrhs);
            took.work = (n * n) as f64 * (n as f64 / 3.0 + nrhs as f64);
            let (l, x) = timed(took, || {
                let l = ops.cholesky(a.view())?;
                let x = ops.cholesky_solve(l.view(), r.view())?;
                Ok((l, x))
            })?;
            if check {
                let p = b.precision(Family::Cholesky);
                let cr = cholesky_ratio(a.view(), l.view());
                within("cholesky", cr / tolerance::cholesky_ratio::<T>(p))?;
                let sr = solve_ratio(a.view(), x.view(), r.view());
                within("cholesky solve", sr / tolerance::solve_ratio::<T>(p))?;
            }
        }
        "lu solve" | "lstsq" => {
            // A square system by LU, or an overdetermined one by QR.
            let lu = OPS[op] == "lu solve";
            let n = dim(rng, if lu { 160 } else { 80 });
            let m = if lu { n } else { n + rng.below(160) };
            let nrhs = dim(rng, 8);
            let a: Array2<T> = rng.matrix(m, n);
            let r: Array2<T> = rng.matrix(m, nrhs);
            let (a, r) = (a.view(), r.view());
            took.work =
                (m * n) as f64 * (if lu { 2.0 * n as f64 / 3.0 } else { n as f64 } + nrhs as f64);
            let x = timed(took, || if lu { ops.solve(a, r) } else { ops.lstsq(a, r) })?;
            if check {
                let (what, q, allowed) = if lu {
                    let p = b.precision(Family::Lu);
                    let q = general_solve_ratio(a, x.view(), r);
                    ("lu solve", q, tolerance::solve_ratio::<T>(p))
                } else {
                    let p = b.precision(Family::Qr);
                    let q = lstsq_ratio(a, x.view(), r);
                    ("lstsq", q, tolerance::lstsq_ratio::<T>(p))
                };
                within(what, q / allowed)?;
            }
        }
        "kmeans" => {
            let (k, d) = (dim(rng, 6), dim(rng, 6));
            let per_blob = 10 + rng.below(300);
            let (x, _) = blobs::<T>(rng, k, per_blob, d);
            let config = KMeansConfig::new(k).seed(rng.below(1 << 30) as u64);
            took.work = (x.nrows() * k * d) as f64;
            let fit = timed(took, || ops.kmeans(x.view(), &config))?;
            if check {
                let want = T::ops(cpu)
                    .predict(x.view(), fit.centroids.view())
                    .map_err(|e| e.to_string())?;
                check_predict_agrees(
                    x.view(),
                    fit.centroids.view(),
                    fit.labels.view(),
                    want.view(),
                )
                .map_err(|e| format!("kmeans: {e}"))?;
            }
        }
        "chain" => {
            // Resident chains (products to a solve, k-means to predict), always checked:
            // only this element type's half.
            let seed = rng.below(1 << 30) as u64;
            took.work = 1.0;
            let reports = timed(took, || Ok(run_chains(b, Sizes::Small, seed)))?;
            let mine = reports.iter().filter(|r| r.dtype == T::DTYPE);
            let failed = failed_cases(mine);
            if !failed.is_empty() {
                return Err(format!("chain: {}", failed.join("; ")));
            }
        }
        other => unreachable!("no operation {other}"),
    }
    Ok(())
}

/// Runs [`run`] in a random element type; returns its type with the outcome.
pub fn run_any(call: &Call, rng: &mut Rng, took: &mut Measure) -> (DType, Outcome) {
    if rng.below(2) == 0 {
        (DType::F32, run::<f32>(call, rng, took))
    } else {
        (DType::F64, run::<f64>(call, rng, took))
    }
}

/// Runs the backend's calls `f`, setting `took.secs` to their seconds; an error as text.
fn timed<R>(took: &mut Measure, f: impl FnOnce() -> ndgpu::Result<R>) -> Result<R, String> {
    let began = Instant::now();
    let out = f().map_err(|e| e.to_string());
    took.secs = began.elapsed().as_secs_f64();
    out
}

/// A size in 1..=`hi`.
fn dim(rng: &mut Rng, hi: usize) -> usize {
    1 + rng.below(hi)
}

/// `Ok` when a measured/allowed `ratio` is at most 1.
fn within(what: &str, ratio: f64) -> Outcome {
    if ratio <= 1.0 {
        Ok(())
    } else {
        Err(format!("{what}: error/tolerance = {ratio:.3e}"))
    }
}

/// The bound of a product in the precision the backend's selected variant of `family`
/// computes in, over the IEEE one that `gemm_bound` gives.
fn rescale<T: Element>(b: &dyn Backend, k: usize, family: Family) -> f64 {
    ndgpu_conformance::compare::product_tolerance::<T>(k, b.precision(family))
        / tolerance::gemm::<T>(k)
}

/// LAPACK's xGET02, the worst column: `‖bⱼ − A·xⱼ‖₁ / (n·ε·‖A‖₁·‖xⱼ‖₁)`.
fn general_solve_ratio<T: Element>(a: ArrayView2<T>, x: ArrayView2<T>, r: ArrayView2<T>) -> f64 {
    let (a, x, r) = (to_f64(a), to_f64(x), to_f64(r));
    let res = &r - &a.dot(&x);
    let (n, an) = (a.nrows() as f64, norm1(a.view()));
    (0..x.ncols())
        .map(|j| {
            let rj: f64 = res.column(j).iter().map(|v| v.abs()).sum();
            let xj: f64 = x.column(j).iter().map(|v| v.abs()).sum();
            ratio(rj, n * T::EPS * an * xj)
        })
        .fold(0.0, f64::max)
}

/// LAPACK's xQRT17: `‖Aᵀ·(B − A·X)‖₁ / (max(m, n, nrhs)·ε·‖A‖₁·max(‖B‖₁, ‖A‖₁‖X‖₁))`.
fn lstsq_ratio<T: Element>(a: ArrayView2<T>, x: ArrayView2<T>, r: ArrayView2<T>) -> f64 {
    let (a, x, r) = (to_f64(a), to_f64(x), to_f64(r));
    let res = a.t().dot(&(&r - &a.dot(&x)));
    let big = a.nrows().max(a.ncols()).max(x.ncols()) as f64;
    let an = norm1(a.view());
    let scale = norm1(r.view()).max(an * norm1(x.view()));
    ratio(norm1(res.view()), big * T::EPS * an * scale)
}
