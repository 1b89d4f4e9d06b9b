//! The ndarray-level trait call of a case: what the CPU backend is timed on, and what
//! the GPU backends are timed on "with transfers" (upload, kernels, download).

use ndarray::Axis;
use ndgpu_core::{Element, Init, KMeansConfig, Ops, Pca, QrMode, Result, Triangular};

use crate::cases::Reduction;
use crate::check::Output;
use crate::data::Inputs;

/// Runs the case `inputs` through `backend`'s trait methods.
///
/// k-means runs `Cluster::kmeans` with the case's centroids as the given start and
/// `max_iter = 1`: that is one assignment step (the iteration stops after it, before
/// any update), so its result is checked as such. LU runs `lu` (P, L and U unpacked on
/// the host), its solve `solve` (which factors too: a host-level call cannot be handed
/// a factor), QR `qr` in the reduced mode (which also forms Q), least squares `lstsq`
/// and the triangular solve `solve_triangular` with the lower triangle; the spectra
/// `eigh`, `svd` (reduced) and `Pca::fit`.
///
/// # Errors
/// Those of the backend.
pub fn call<T: Element, B: Ops<T> + ?Sized>(backend: &B, inputs: &Inputs<T>) -> Result<Output<T>> {
    Ok(match inputs {
        Inputs::Gemm { a, b } => Output::Matrix(backend.matmul(a.view(), b.view())?),
        Inputs::Gram { m } => Output::Matrix(backend.gram(m.view())?),
        Inputs::Transpose { a } => Output::Matrix(backend.transpose(a.view())?),
        Inputs::Reduce { x, reduction, axis } => {
            let x = x.view();
            match (*reduction, axis.map(Axis)) {
                (Reduction::Value(op), None) => Output::Scalar(backend.reduce(op, x)?),
                (Reduction::Value(op), Some(a)) => {
                    let v = backend.reduce_axis(op, x, a)?;
                    // As the resident form keeps it: 1×cols along axis 0, rows×1 along 1.
                    Output::Matrix(match a.index() {
                        0 => v.insert_axis(Axis(0)),
                        _ => v.insert_axis(Axis(1)),
                    })
                }
                (Reduction::Arg(op), None) => Output::Index(backend.arg_reduce(op, x)?),
                (Reduction::Arg(op), Some(a)) => {
                    Output::Indices(backend.arg_reduce_axis(op, x, a)?.to_vec())
                }
            }
        }
        Inputs::Dot { x, y } => Output::Scalar(backend.dot(x.view(), y.view())?),
        Inputs::Cholesky { a } => Output::Matrix(backend.cholesky(a.view())?),
        Inputs::KMeans { x, centroids } => {
            let config = KMeansConfig::new(centroids.nrows())
                .max_iter(1)
                .init(Init::Given(centroids.mapv(|v| v.as_f64())));
            let r = backend.kmeans(x.view(), &config)?;
            Output::KMeans {
                centroids: r.centroids,
                labels: r.labels.iter().map(|&l| l as i64).collect(),
                changed: None,
                inertia: r.inertia,
                updated: false,
            }
        }
        // Each step a host-level call: the data crosses the bus between steps.
        Inputs::Chain { m, b } => {
            let l = backend.cholesky(backend.gram(m.view())?.view())?;
            Output::Matrix(backend.cholesky_solve(l.view(), b.view())?)
        }
        Inputs::Solve { l, b } => Output::Matrix(backend.cholesky_solve(l.view(), b.view())?),
        Inputs::Transfer { x } => Output::Matrix(backend.download(&backend.upload(x.view())?)?),
        Inputs::Lu { a } => {
            let (p, l, u) = backend.lu(a.view())?;
            Output::Plu { p, l, u }
        }
        Inputs::LuSolve { a, b } => Output::Matrix(backend.solve(a.view(), b.view())?),
        Inputs::Qr { a } => {
            let (q, r) = backend.qr(a.view(), QrMode::Reduced)?;
            Output::Qr { q, r }
        }
        Inputs::Lstsq { a, b } => Output::Matrix(backend.lstsq(a.view(), b.view())?),
        Inputs::Trsm { a, b } => {
            Output::Matrix(backend.solve_triangular(a.view(), b.view(), Triangular::lower())?)
        }
        Inputs::Eigh { a } => {
            let (w, v) = backend.eigh(a.view())?;
            Output::Eigh { w, v }
        }
        Inputs::Svd { a } => {
            let (u, s, vt) = backend.svd(a.view(), false)?;
            Output::Svd { u, s, vt }
        }
        Inputs::Pca { x, k } => Output::Pca(Pca::with_components(*k).fit(backend, x.view())?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::Op;
    use crate::check::Reference;
    use crate::shape::Shape;
    use ndgpu_cpu::CpuBackend;

    /// The CPU backend passes every check at a small size: the checks and the trait
    /// calls agree on what each op means.
    #[test]
    fn cpu_results_pass_the_checks() {
        let cpu = CpuBackend::new();
        for op in Op::ALL {
            let n = match op {
                Op::Sum | Op::SumSq | Op::Argmax | Op::Dot | Op::Transfer => 1000,
                Op::KMeans => 300,
                _ => 33,
            };
            let mut shapes = vec![op.shape(n)];
            if op.reduction().is_some() {
                shapes.extend([None, Some(0), Some(1)].map(|a| Shape::matrix(37, 29, a)));
            }
            if op == Op::Matmul {
                shapes.push(Shape::gemm(41, 7, 23));
            }
            if op == Op::Gram {
                shapes.extend([Shape::gram(41, 7), Shape::gram(5, 300)]);
            }
            if matches!(op, Op::Qr | Op::Lstsq | Op::Svd | Op::Pca) {
                shapes.extend([Shape::rect(41, 7), Shape::rect(300, 1)]);
            }
            if matches!(op, Op::Qr | Op::Svd | Op::Pca) {
                shapes.push(Shape::rect(7, 41));
            }
            for shape in shapes {
                let inputs = Inputs::<f32>::generate(op, shape, 9);
                let out = call(&cpu, &inputs).unwrap();
                Reference::new(&inputs)
                    .check(&out)
                    .unwrap_or_else(|e| panic!("{op} {shape}: {e}"));
            }
        }
    }
}
