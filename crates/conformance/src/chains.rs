//! Resident chains: several operations in a row on arrays that never leave the backend,
//! as a user keeps data on a GPU. Every intermediate is downloaded only at the end and
//! checked against the definition applied to the *downloaded* previous stage, with that
//! operation's own bound (the one the precision of its family's selected variant
//! promises: IEEE, TF32 or 3xTF32), so a chain passes exactly when each step is right
//! given what it was handed.
//!
//! - products to a solve: `P = A·B`, `G = P·Pᵀ + s·I` (gram, then a gemm adding `s·I`),
//!   `L = cholesky(G)`, `X = solve(L, R)`, then `Σ X²` and the column sums of X;
//! - k-means to predict: a fit on resident points, then `predict_dev` with the fitted
//!   centroids gives the fit's labels (the labels are those of the nearest returned
//!   centroid), and the steps match the CPU reference.

use ndarray::{Array2, Axis};
use ndgpu_core::{
    tolerance, Backend, BackendElement, Cluster, DType, Element, Family, Gemm, Init, KMeansConfig,
    Ops, Precision, ReduceOp,
};
use ndgpu_cpu::CpuBackend;

use crate::compare::{
    abs_sum, centroid_ratio, cholesky_ratio, describe_ratio, gemm_bound, gemm_f64, max_ratio,
    product_tolerance, solve_ratio, sum_ratio, to_f64,
};
use crate::data::{blobs, Rng};
use crate::report::{Recorder, Verdict};
use crate::{failed_cases, CaseReport, Sizes};

/// Runs both chains for f32 and f64 on `backend` (its current variants).
pub fn run_chains(backend: &dyn Backend, sizes: Sizes, seed: u64) -> Vec<CaseReport> {
    let mut out = Vec::new();
    out.extend(chains::<f32>(backend, sizes, seed));
    out.extend(chains::<f64>(backend, sizes, seed));
    out
}

/// [`run_chains`], panicking with every failing case listed.
pub fn assert_chains(backend: &dyn Backend, sizes: Sizes) {
    let failed = failed_cases(&run_chains(backend, sizes, 0xC4A1));
    assert!(
        failed.is_empty(),
        "{} failing chain(s):\n{}",
        failed.len(),
        failed.join("\n")
    );
}

fn chains<T: BackendElement>(backend: &dyn Backend, sizes: Sizes, seed: u64) -> Vec<CaseReport> {
    let ops = T::ops(backend);
    let variants = Family::ALL
        .iter()
        .map(|&f| format!("{f}={}", backend.variant(f)))
        .collect::<Vec<_>>()
        .join(" ");
    // Each step is held to the bound of its family's selected variant's precision.
    let precisions = Precisions {
        matmul: backend.precision(Family::MatMul),
        gram: backend.precision(Family::Gram),
        cholesky: backend.precision(Family::Cholesky),
    };
    let mut rec = Recorder::new(Family::MatMul, &variants, precisions.matmul, T::DTYPE);
    let mut rng = Rng::new(seed ^ if T::DTYPE == DType::F32 { 1 } else { 2 });
    let shapes: &[(usize, usize, usize)] = match sizes {
        Sizes::Small => &[(1, 1, 1), (33, 17, 5), (65, 130, 31)],
        Sizes::Medium => &[(33, 17, 5), (257, 300, 129), (600, 512, 200)],
    };
    for &(n, k, nrhs) in shapes {
        rec.case(
            format!("chain gemm→gram→cholesky→solve→reduce n={n} k={k} nrhs={nrhs}"),
            |v| products_to_solve(ops, &mut rng, (n, k, nrhs), precisions, v),
        );
    }
    let kmeans = backend.precision(Family::KMeans);
    let mut rec_k = Recorder::new(Family::KMeans, &variants, kmeans, T::DTYPE);
    let points: &[usize] = match sizes {
        Sizes::Small => &[60, 301],
        Sizes::Medium => &[301, 5000],
    };
    for &n in points {
        rec_k.case(
            format!("chain kmeans_dev→predict_dev N={n} k=5 d=4"),
            |v| kmeans_to_predict(ops, &mut rng, n, v),
        );
    }
    let mut reports = rec.reports;
    reports.extend(rec_k.reports);
    reports
}

/// The precisions of the selected variants of the families a chain of products runs.
#[derive(Clone, Copy, Debug)]
struct Precisions {
    matmul: Precision,
    gram: Precision,
    cholesky: Precision,
}

/// The bound of a product of inner dimension `k` in `precision` over the IEEE one that
/// [`gemm_bound`] gives.
fn rescale<T: Element>(k: usize, precision: Precision) -> f64 {
    product_tolerance::<T>(k, precision) / tolerance::gemm::<T>(k)
}

fn products_to_solve<T: Element>(
    b: &dyn Ops<T>,
    rng: &mut Rng,
    (n, k, nrhs): (usize, usize, usize),
    precisions: Precisions,
    v: &mut Verdict,
) {
    let a: Array2<T> = rng.matrix(n, k);
    let bm: Array2<T> = rng.matrix(k, k);
    let r: Array2<T> = rng.matrix(n, nrhs);
    // G = P·Pᵀ + s·I with s = k: positive definite, condition number about 1 + ‖P‖²/k.
    let s = T::from_f64(k as f64);
    let eye = Array2::<T>::eye(n);
    // The chain: nothing comes back to the host until it ends.
    let run = || -> ndgpu_core::Result<_> {
        let (da, db, deye, dr) = (
            b.upload(a.view())?,
            b.upload(bm.view())?,
            b.upload(eye.view())?,
            b.upload(r.view())?,
        );
        let p = b.matmul_dev(&da, &db)?;
        let mut g = b.gram_dev(&p)?;
        let gram_only = b.copy(&g)?;
        b.gemm_dev(Gemm::new().alpha(s).beta(T::one()), &deye, &deye, &mut g)?;
        let l = b.cholesky_dev(&g)?;
        let x = b.cholesky_solve_dev(&l, &dr)?;
        let sumsq = b.reduce_dev(ReduceOp::SumSq, &x)?;
        let colsums = b.reduce_axis_dev(ReduceOp::Sum, &x, Axis(0))?;
        Ok((
            b.download(&p)?,
            b.download(&gram_only)?,
            b.download(&g)?,
            b.download(l.l())?,
            b.download(&x)?,
            sumsq,
            b.download(&colsums)?,
        ))
    };
    let Some((p, gram, g, l, x, sumsq, colsums)) = v.ok(run()) else {
        return;
    };
    // Each stage against the definition applied to the stage before it, as downloaded.
    let plain = Gemm::<T>::new();
    let want = gemm_f64(&plain, a.view(), bm.view(), None);
    let bound = gemm_bound(&plain, a.view(), bm.view(), None) * rescale::<T>(k, precisions.matmul);
    let worst = max_ratio(p.view(), want.view(), bound.view());
    v.ratio(worst.0, || {
        describe_ratio("P = A·B", p.view(), want.view(), worst)
    });
    let gt = Gemm::<T>::new().tb(ndgpu_core::Trans::Yes);
    let want = gemm_f64(&gt, p.view(), p.view(), None);
    let bound = gemm_bound(&gt, p.view(), p.view(), None) * rescale::<T>(k, precisions.gram);
    let worst = max_ratio(gram.view(), want.view(), bound.view());
    v.ratio(worst.0, || {
        describe_ratio("P·Pᵀ", gram.view(), want.view(), worst)
    });
    v.require(gram == gram.t(), || "P·Pᵀ is not exactly symmetric".into());
    let shift = Gemm::new().alpha(s).beta(T::one());
    let want = gemm_f64(&shift, eye.view(), eye.view(), Some(gram.view()));
    let bound = gemm_bound(&shift, eye.view(), eye.view(), Some(gram.view()))
        * rescale::<T>(n, precisions.matmul);
    let worst = max_ratio(g.view(), want.view(), bound.view());
    v.ratio(worst.0, || {
        describe_ratio("G + s·I", g.view(), want.view(), worst)
    });
    let ratio = cholesky_ratio(g.view(), l.view());
    v.ratio(
        ratio / tolerance::cholesky_ratio::<T>(precisions.cholesky),
        || format!("cholesky of G: LAPACK ratio {ratio:.3e}"),
    );
    let upper = l.indexed_iter().any(|((i, j), x)| j > i && *x != T::zero());
    v.require(!upper, || "L is not lower triangular".into());
    let ratio = solve_ratio(g.view(), x.view(), r.view());
    v.ratio(ratio / tolerance::SOLVE_RATIO, || {
        format!("solve with L: LAPACK ratio {ratio:.3e}")
    });
    let x64 = to_f64(x.view());
    let want: f64 = x64.iter().map(|x| x * x).sum();
    let ratio = sum_ratio(sumsq, want, x.len(), want);
    v.ratio(ratio, || format!("Σ X²: got {sumsq}, expected {want:e}"));
    v.require(colsums.dim() == (1, nrhs), || {
        format!("column sums are {:?}, expected 1x{nrhs}", colsums.dim())
    });
    for (j, got) in colsums.iter().enumerate().take(nrhs) {
        let col = x64.column(j);
        let ratio = sum_ratio(*got, col.sum(), n, abs_sum(col.iter().copied()));
        v.ratio(ratio, || {
            format!("column sum {j}: got {got}, expected {:e}", col.sum())
        });
    }
}

fn kmeans_to_predict<T: Element>(b: &dyn Ops<T>, rng: &mut Rng, n: usize, v: &mut Verdict) {
    // n/5 points around each of 5 well-separated centres; the first point of each blob
    // starts its centroid.
    let (x, _) = blobs::<T>(rng, 5, n / 5, 4);
    let start = Array2::from_shape_fn((5, 4), |(j, c)| x[[j * (n / 5), c]].as_f64());
    let config = KMeansConfig::new(5).init(Init::Given(start)).max_iter(50);
    let run = || -> ndgpu_core::Result<_> {
        let dx = b.upload(x.view())?;
        let fit = b.kmeans_dev(&dx, &config)?;
        let again = b.predict_dev(&dx, &fit.centroids)?;
        Ok((
            b.download(&fit.centroids)?,
            b.download_indices(&fit.labels)?,
            b.download_indices(&again)?,
            fit.iterations,
            fit.converged,
        ))
    };
    let Some((centroids, labels, again, iterations, converged)) = v.ok(run()) else {
        return;
    };
    v.require(labels == again, || {
        "predict_dev with the fitted centroids disagrees with the fit's labels".into()
    });
    // Well-separated blobs from one point of each: the CPU reference takes the same steps.
    let cpu = CpuBackend::new().kmeans(x.view(), &config);
    if let Some(cpu) = v.ok(cpu) {
        v.require(labels == cpu.labels, || {
            "labels differ from the cpu reference".into()
        });
        v.require(
            iterations == cpu.iterations && converged == cpu.converged,
            || {
                format!(
                    "{iterations} iterations (converged {converged}), cpu {} ({})",
                    cpu.iterations, cpu.converged
                )
            },
        );
        let ratio = centroid_ratio(x.view(), centroids.view(), cpu.centroids.view());
        v.ratio(ratio, || {
            format!("centroids differ from the cpu's (error/tolerance {ratio:.3e})")
        });
    }
}
