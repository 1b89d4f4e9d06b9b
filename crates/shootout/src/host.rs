//! The ndarray-level trait call of a case: what the CPU backend is timed on, and what
//! the GPU backends are timed on "with transfers" (upload, kernels, download).

use ndarray::Axis;
use ndgpu_core::{Element, Init, KMeansConfig, Ops, ReduceOp, Result};

use crate::check::Output;
use crate::data::Inputs;

/// Runs the case `inputs` through `backend`'s trait methods.
///
/// k-means runs `KMeans::kmeans` with the case's centroids as the given start and
/// `max_iter = 1`: that is one assignment step (the iteration stops after it, before
/// any update), so its result is checked as such.
///
/// # Errors
/// Those of the backend.
pub fn call<T: Element, B: Ops<T> + ?Sized>(backend: &B, inputs: &Inputs<T>) -> Result<Output<T>> {
    Ok(match inputs {
        Inputs::Gemm { a, b } => Output::Matrix(backend.matmul(a.view(), b.view())?),
        Inputs::Gram { m } => Output::Matrix(backend.gram(m.view())?),
        Inputs::Transpose { a } => Output::Matrix(backend.transpose(a.view())?),
        Inputs::Sum { x } => {
            Output::Scalar(backend.reduce(ReduceOp::Sum, x.view().insert_axis(Axis(0)))?)
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::Op;
    use crate::check::Reference;
    use ndgpu_cpu::CpuBackend;

    /// The CPU backend passes every check at a small size: the checks and the trait
    /// calls agree on what each op means.
    #[test]
    fn cpu_results_pass_the_checks() {
        let cpu = CpuBackend::new();
        for op in Op::ALL {
            let n = match op {
                Op::Sum | Op::Dot | Op::Transfer => 1000,
                Op::KMeans => 300,
                _ => 33,
            };
            let inputs = Inputs::<f32>::generate(op, n, 9);
            let out = call(&cpu, &inputs).unwrap();
            Reference::new(&inputs)
                .check(&out)
                .unwrap_or_else(|e| panic!("{op}: {e}"));
        }
    }
}
