//! The suite must catch faults: a backend that is the CPU reference with one bug
//! injected must fail at least one case of the family concerned (and the reference
//! without a fault must pass them all). Each fault is a mistake a GPU implementation
//! could plausibly make.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use ndgpu_conformance::compare::gemm_bound;
use ndgpu_conformance::{run_family, Sizes};
use ndgpu_core::{
    tolerance, ArgOp, Backend, Cluster, Element, Error, Factorize, Family, KMeansConfig,
    KMeansResult, MatMul, Reduce, ReduceOp, Result, Trans, Transpose,
};
use ndgpu_cpu::CpuBackend;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// One element of a product off by three times its tolerance.
    GemmBeyondTolerance,
    /// `beta = 0` still reads C (0·NaN = NaN).
    GemmReadsCWhenBetaZero,
    /// Inner-dimension mismatch not detected for transposed operands.
    GemmNoShapeCheck,
    /// One element of the Gram matrix one ulp off its mirror.
    GramNotSymmetric,
    /// The last element lost for shapes that are not multiples of 32.
    TransposeDropsEdge,
    /// Ties go to the highest index.
    ArgLastTie,
    /// NaN skipped by min/max (fmin/fmax semantics).
    MinMaxSkipNan,
    /// A sum off by three times its tolerance.
    SumBeyondTolerance,
    /// The min of nothing is 0 instead of an error.
    EmptyMinIsZero,
    /// Dot silently truncates to the shorter operand.
    DotTruncates,
    /// Garbage left above the diagonal of L.
    CholeskyUpperNotZero,
    /// The pivot reported one too late.
    CholeskyPivotOffByOne,
    /// The upper triangle read instead of the lower one.
    CholeskyReadsUpper,
    /// The solve stops after the forward substitution.
    SolveForwardOnly,
    /// One point labelled with the next centroid.
    KMeansWrongLabel,
    /// The inertia history reversed (so it increases).
    KMeansHistoryReversed,
    /// Ties in predict go to the highest index.
    PredictLastTie,
}

struct Faulty {
    cpu: CpuBackend,
    fault: Fault,
}

impl<T: Element> MatMul<T> for Faulty {
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
        let (op_a, op_b) = (ta.apply(a), tb.apply(b));
        if self.fault == Fault::GemmNoShapeCheck && ta == Trans::Yes && op_a.ncols() != op_b.nrows()
        {
            return Ok(Array2::zeros((op_a.nrows(), op_b.ncols())));
        }
        let mut r = self.cpu.gemm(alpha, a, ta, b, tb, beta, c)?;
        match self.fault {
            Fault::GemmBeyondTolerance if !r.is_empty() => {
                let bound = gemm_bound(alpha, a, ta, b, tb, beta, c);
                let (i, j) = (r.nrows() - 1, r.ncols() - 1);
                r[[i, j]] = T::from_f64(r[[i, j]].as_f64() + 3.0 * bound[[i, j]].max(1e-30));
            }
            Fault::GemmReadsCWhenBetaZero if beta == T::zero() => {
                if let Some(c) = c {
                    r.zip_mut_with(&c, |x, &c| *x += beta * c);
                }
            }
            _ => {}
        }
        Ok(r)
    }

    fn gram(&self, m: ArrayView2<T>) -> Result<Array2<T>> {
        let mut g = self.cpu.gram(m)?;
        if self.fault == Fault::GramNotSymmetric && g.nrows() > 1 {
            let x = g[[0, 1]].as_f64();
            g[[0, 1]] = T::from_f64(x + x.abs() * T::EPS);
        }
        Ok(g)
    }
}

impl<T: Element> Transpose<T> for Faulty {
    fn transpose(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        let mut t = self.cpu.transpose(a)?;
        let (r, c) = t.dim();
        if self.fault == Fault::TransposeDropsEdge && r % 32 != 0 && c > 0 {
            t[[r - 1, c - 1]] = T::zero();
        }
        Ok(t)
    }
}

impl<T: Element> Reduce<T> for Faulty {
    fn reduce(&self, op: ReduceOp, a: ArrayView2<T>) -> Result<T> {
        match (self.fault, op) {
            (Fault::EmptyMinIsZero, ReduceOp::Min) if a.is_empty() => Ok(T::zero()),
            (Fault::MinMaxSkipNan, _) if a.is_empty() => self.cpu.reduce(op, a),
            (Fault::MinMaxSkipNan, ReduceOp::Min) => {
                Ok(a.iter().copied().fold(T::infinity(), T::min))
            }
            (Fault::MinMaxSkipNan, ReduceOp::Max) => {
                Ok(a.iter().copied().fold(T::neg_infinity(), T::max))
            }
            (Fault::SumBeyondTolerance, ReduceOp::Sum) => {
                let s = self.cpu.reduce(op, a)?.as_f64();
                let abs: f64 = a.iter().map(|v| v.as_f64().abs()).sum();
                Ok(T::from_f64(s + 3.0 * tolerance::sum::<T>(a.len()) * abs))
            }
            _ => self.cpu.reduce(op, a),
        }
    }
    fn reduce_axis(&self, op: ReduceOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<T>> {
        self.cpu.reduce_axis(op, a, axis)
    }
    fn arg_reduce(&self, op: ArgOp, a: ArrayView2<T>) -> Result<usize> {
        if self.fault == Fault::ArgLastTie && op == ArgOp::ArgMax && !a.is_empty() {
            let v: Vec<T> = a.iter().copied().collect();
            let max = v.iter().copied().fold(T::neg_infinity(), T::max);
            return Ok(v.iter().rposition(|&x| x == max).unwrap_or(0));
        }
        self.cpu.arg_reduce(op, a)
    }
    fn arg_reduce_axis(&self, op: ArgOp, a: ArrayView2<T>, axis: Axis) -> Result<Array1<usize>> {
        self.cpu.arg_reduce_axis(op, a, axis)
    }
    fn dot(&self, x: ArrayView1<T>, y: ArrayView1<T>) -> Result<T> {
        if self.fault == Fault::DotTruncates {
            let n = x.len().min(y.len());
            return self
                .cpu
                .dot(x.slice(ndarray::s![..n]), y.slice(ndarray::s![..n]));
        }
        self.cpu.dot(x, y)
    }
}

impl<T: Element> Factorize<T> for Faulty {
    fn cholesky(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        match self.fault {
            Fault::CholeskyReadsUpper => self.cpu.cholesky(a.t()),
            Fault::CholeskyPivotOffByOne => match self.cpu.cholesky(a) {
                Err(Error::NotPositiveDefinite { pivot, value }) => {
                    Err(Error::NotPositiveDefinite {
                        pivot: pivot + 1,
                        value,
                    })
                }
                other => other,
            },
            Fault::CholeskyUpperNotZero => {
                let mut l = self.cpu.cholesky(a)?;
                if l.nrows() > 1 {
                    l[[0, 1]] = T::from_f64(1e-30);
                }
                Ok(l)
            }
            _ => self.cpu.cholesky(a),
        }
    }
    fn cholesky_solve(&self, l: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
        if self.fault == Fault::SolveForwardOnly {
            // Solve L·Y = B only: pass a factor of L·Lᵀ's "square root" as identity-like.
            let x = self.cpu.cholesky_solve(l, b)?;
            let lower =
                Array2::from_shape_fn(l.dim(), |(i, j)| if j <= i { l[[i, j]] } else { T::zero() });
            return Ok(lower.t().dot(&x));
        }
        self.cpu.cholesky_solve(l, b)
    }
}

impl<T: Element> Cluster<T> for Faulty {
    fn kmeans(&self, x: ArrayView2<T>, config: &KMeansConfig) -> Result<KMeansResult<T>> {
        let mut r = self.cpu.kmeans(x, config)?;
        match self.fault {
            Fault::KMeansWrongLabel if config.k > 1 => r.labels[0] = (r.labels[0] + 1) % config.k,
            Fault::KMeansHistoryReversed => r.inertia_history.reverse(),
            _ => {}
        }
        Ok(r)
    }
    fn predict(&self, x: ArrayView2<T>, centroids: ArrayView2<T>) -> Result<Array1<usize>> {
        if self.fault == Fault::PredictLastTie {
            ndgpu_core::check::predict(&x, &centroids)?;
            return Ok(x
                .rows()
                .into_iter()
                .map(|p| {
                    let d: Vec<f64> = centroids
                        .rows()
                        .into_iter()
                        .map(|c| {
                            p.iter()
                                .zip(c)
                                .map(|(a, b)| (*a - *b).as_f64().powi(2))
                                .sum()
                        })
                        .collect();
                    let best = d.iter().copied().fold(f64::INFINITY, f64::min);
                    d.iter().rposition(|&v| v == best).unwrap_or(0)
                })
                .collect());
        }
        self.cpu.predict(x, centroids)
    }
}

impl Backend for Faulty {
    fn name(&self) -> &'static str {
        "faulty"
    }
    fn description(&self) -> String {
        format!("the cpu reference with {:?}", self.fault)
    }
    fn variants(&self, family: Family) -> Vec<&'static str> {
        self.cpu.variants(family)
    }
    fn variant(&self, family: Family) -> &'static str {
        self.cpu.variant(family)
    }
    fn set_variant(&mut self, family: Family, name: &str) -> Result<()> {
        self.cpu.set_variant(family, name)
    }
}

fn failures(fault: Fault, family: Family) -> Vec<String> {
    let backend = Faulty {
        cpu: CpuBackend::new(),
        fault,
    };
    run_family(&backend, family, Sizes::Small, 7)
        .into_iter()
        .filter(|r| !r.passed)
        .map(|r| format!("{} {}: {}", r.dtype, r.case, r.detail))
        .collect()
}

#[test]
fn the_reference_without_a_fault_passes() {
    for family in Family::ALL {
        let failed = failures(Fault::None, family);
        assert!(failed.is_empty(), "{family}: {failed:#?}");
    }
}

#[test]
fn every_injected_fault_is_caught() {
    use Fault::*;
    let faults = [
        (GemmBeyondTolerance, Family::MatMul),
        (GemmReadsCWhenBetaZero, Family::MatMul),
        (GemmNoShapeCheck, Family::MatMul),
        (GramNotSymmetric, Family::Gram),
        (TransposeDropsEdge, Family::Transpose),
        (ArgLastTie, Family::Reduce),
        (MinMaxSkipNan, Family::Reduce),
        (SumBeyondTolerance, Family::Reduce),
        (EmptyMinIsZero, Family::Reduce),
        (DotTruncates, Family::Reduce),
        (CholeskyUpperNotZero, Family::Cholesky),
        (CholeskyPivotOffByOne, Family::Cholesky),
        (CholeskyReadsUpper, Family::Cholesky),
        (SolveForwardOnly, Family::Cholesky),
        (KMeansWrongLabel, Family::KMeans),
        (KMeansHistoryReversed, Family::KMeans),
        (PredictLastTie, Family::KMeans),
    ];
    let mut missed = Vec::new();
    for (fault, family) in faults {
        let failed = failures(fault, family);
        if failed.is_empty() {
            missed.push(format!("{fault:?}"));
        } else {
            println!(
                "{fault:?}: {} failing case(s), e.g. {}",
                failed.len(),
                failed[0]
            );
        }
    }
    assert!(missed.is_empty(), "faults not caught: {missed:?}");
}
