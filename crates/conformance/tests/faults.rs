//! The suite must catch faults: a backend that is the CPU reference with one bug
//! injected into its kernels (what a backend implements) must fail at least one case of
//! the family concerned (and the reference without a fault must pass them all). Each
//! fault is a mistake a GPU implementation could plausibly make. Shape and emptiness
//! checks are not a backend's to get wrong: the family traits run them in core before
//! any kernel (core's `contract` tests show a kernel is never reached with bad shapes).

use ndarray::Axis;
use ndgpu_conformance::compare::gemm_bound;
use ndgpu_conformance::{failed_cases, host_memory_of, run_family, Sizes};
use ndgpu_core::backend::{self, Here, HostStorage};
use ndgpu_core::{
    tolerance, ArgOp, Assignment, Backend, CholeskyFactor, Cluster, ClusterKernels, Device,
    Element, Error, Factorize, FactorizeKernels, Family, Gemm, Indices, LuFactor, MatMul,
    MatMulKernels, Matrix, Memory, Place, Points, QrFactor, Reduce, ReduceKernels, ReduceOp,
    Result, Trans, Transpose, TransposeKernels, Triangular, Variants,
};
use ndgpu_cpu::CpuBackend;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// One element of a product off by three times its tolerance.
    GemmBeyondTolerance,
    /// `beta = 0` still reads C (0·NaN = NaN).
    GemmReadsCWhenBetaZero,
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
    /// The inertia of an assignment reported half as large again.
    KMeansInertiaOff,
    /// Ties in an assignment go to the highest index.
    PredictLastTie,
    /// A centroid with no points moved anyway.
    UpdateMovesEmpty,
    /// The update takes the plain mean, whatever the sample weights.
    UpdateIgnoresWeights,
    /// The inertia is unweighted, whatever the sample weights.
    InertiaIgnoresWeights,
    /// A transposed triangle solved as is.
    TrsmIgnoresTrans,
    /// A unit diagonal read all the same.
    TrsmReadsDiagonal,
    /// The zero on the diagonal reported one too late.
    TrsmPivotOffByOne,
    /// The first row swap left out of the factor.
    LuDropsFirstSwap,
    /// An exactly zero pivot not recorded.
    LuMissesZeroPivot,
    /// Aᵀ·X = B solved as A·X = B.
    LuSolveIgnoresTrans,
    /// Every τ of the reflections 0.1% too large.
    QrTauOff,
    /// Qᵀ applied for Q, and Q for Qᵀ.
    QrApplyTransposed,
    /// The dependent column reported one too late.
    LstsqColumnOffByOne,
}

struct Faulty {
    cpu: CpuBackend,
    fault: Fault,
}

host_memory_of!(Faulty, cpu, "faulty");

const HERE: Here = Here {
    backend: "faulty",
    place: Place::Host,
};

/// A host matrix's storage, to plant a fault in a result.
fn data<T: Element>(m: &mut Matrix<T>) -> &mut Vec<T> {
    &mut HERE
        .matrix_mut::<HostStorage<T>, T>("fault", "result", m)
        .expect("a host matrix")
        .data
}

impl<T: Element> MatMulKernels<T> for Faulty {
    fn gemm_unchecked(&self, g: Gemm<T>, ab: [&Matrix<T>; 2], c: &mut Matrix<T>) -> Result<()> {
        let [a, b] = ab;
        let (av, bv) = (
            HERE.host_view("gemm", "A", a)?,
            HERE.host_view("gemm", "B", b)?,
        );
        let before = HERE.host_view("gemm", "C", c)?.to_owned();
        self.cpu.gemm_dev(g, a, b, c)?;
        let cols = c.cols();
        let out = data(c);
        match self.fault {
            Fault::GemmBeyondTolerance if !out.is_empty() => {
                let bound = gemm_bound(&g, av, bv, Some(before.view()));
                let last = out.len() - 1;
                let b = bound[[last / cols, last % cols]].max(1e-30);
                out[last] = T::from_f64(out[last].as_f64() + 3.0 * b);
            }
            Fault::GemmReadsCWhenBetaZero if g.beta == T::zero() => {
                out.iter_mut()
                    .zip(before.iter())
                    .for_each(|(x, &c)| *x += g.beta * c);
            }
            _ => {}
        }
        Ok(())
    }

    fn gram_unchecked(&self, m: &Matrix<T>) -> Result<Matrix<T>> {
        let mut g = self.cpu.gram_dev(m)?;
        if self.fault == Fault::GramNotSymmetric && g.rows() > 1 {
            let x = data(&mut g)[1].as_f64();
            data(&mut g)[1] = T::from_f64(x + x.abs() * T::EPS);
        }
        Ok(g)
    }
}

impl<T: Element> TransposeKernels<T> for Faulty {
    fn transpose_unchecked(&self, a: &Matrix<T>) -> Result<Matrix<T>> {
        let mut t = self.cpu.transpose_dev(a)?;
        let (r, c) = t.dim();
        if self.fault == Fault::TransposeDropsEdge && r % 32 != 0 && c > 0 {
            *data(&mut t).last_mut().expect("non-empty") = T::zero();
        }
        Ok(t)
    }
}

impl<T: Element> ReduceKernels<T> for Faulty {
    fn reduce_unchecked(&self, op: ReduceOp, a: &Matrix<T>) -> Result<T> {
        let v = HERE.host_view(op.name(), "A", a)?;
        match (self.fault, op) {
            (Fault::MinMaxSkipNan, _) if v.is_empty() => self.cpu.reduce_dev(op, a),
            (Fault::MinMaxSkipNan, ReduceOp::Min) => {
                Ok(v.iter().copied().fold(T::infinity(), T::min))
            }
            (Fault::MinMaxSkipNan, ReduceOp::Max) => {
                Ok(v.iter().copied().fold(T::neg_infinity(), T::max))
            }
            (Fault::SumBeyondTolerance, ReduceOp::Sum) => {
                let s = self.cpu.reduce_dev(op, a)?.as_f64();
                let abs: f64 = v.iter().map(|x| x.as_f64().abs()).sum();
                Ok(T::from_f64(s + 3.0 * tolerance::sum::<T>(v.len()) * abs))
            }
            _ => self.cpu.reduce_dev(op, a),
        }
    }
    fn reduce_axis_unchecked(&self, op: ReduceOp, a: &Matrix<T>, axis: Axis) -> Result<Matrix<T>> {
        self.cpu.reduce_axis_dev(op, a, axis)
    }
    fn arg_reduce_unchecked(&self, op: ArgOp, a: &Matrix<T>) -> Result<usize> {
        let v = HERE.host_view(op.name(), "A", a)?;
        if self.fault == Fault::ArgLastTie && op == ArgOp::ArgMax && !v.is_empty() {
            let v: Vec<T> = v.iter().copied().collect();
            let max = v.iter().copied().fold(T::neg_infinity(), T::max);
            return Ok(v.iter().rposition(|&x| x == max).unwrap_or(0));
        }
        self.cpu.arg_reduce_dev(op, a)
    }
    fn arg_reduce_axis_unchecked(&self, op: ArgOp, a: &Matrix<T>, axis: Axis) -> Result<Indices> {
        self.cpu.arg_reduce_axis_dev(op, a, axis)
    }
    fn dot_unchecked(&self, x: &Matrix<T>, y: &Matrix<T>) -> Result<T> {
        self.cpu.dot_dev(x, y)
    }
}

impl<T: Element> FactorizeKernels<T> for Faulty {
    fn cholesky_unchecked(&self, mut a: Matrix<T>) -> Result<CholeskyFactor<T>> {
        let n = a.rows();
        match self.fault {
            Fault::CholeskyReadsUpper if a.rows() == a.cols() => {
                let t = HERE
                    .host_view("cholesky", "A", &a)?
                    .t()
                    .as_standard_layout()
                    .into_owned();
                data(&mut a).copy_from_slice(t.as_slice().expect("C order"));
                self.cpu.cholesky_in_place_dev(a)
            }
            Fault::CholeskyPivotOffByOne => match self.cpu.cholesky_in_place_dev(a) {
                Err(Error::NotPositiveDefinite { pivot, value }) => {
                    Err(Error::NotPositiveDefinite {
                        pivot: pivot + 1,
                        value,
                    })
                }
                other => other,
            },
            Fault::CholeskyUpperNotZero if n > 1 => {
                let mut l = self.cpu.cholesky_in_place_dev(a)?.into_l();
                data(&mut l)[1] = T::from_f64(1e-30);
                Ok(backend::cholesky_factor(l))
            }
            _ => self.cpu.cholesky_in_place_dev(a),
        }
    }
    fn cholesky_solve_unchecked(&self, l: &CholeskyFactor<T>, b: &mut Matrix<T>) -> Result<()> {
        self.cpu.cholesky_solve_in_place_dev(l, b)?;
        if self.fault == Fault::SolveForwardOnly && b.rows() == l.order() {
            // Undo the back substitution: multiply by Lᵀ, leaving only L·Y = B solved.
            let lv = HERE.host_view("solve", "L", l.l())?;
            let y = lv.t().dot(&HERE.host_view("solve", "X", b)?);
            data(b).copy_from_slice(y.as_standard_layout().as_slice().expect("C order"));
        }
        Ok(())
    }

    fn trsm_unchecked(&self, a: &Matrix<T>, tri: Triangular, b: &mut Matrix<T>) -> Result<()> {
        let tri = match self.fault {
            Fault::TrsmIgnoresTrans => tri.trans(Trans::No),
            Fault::TrsmReadsDiagonal => tri.unit(false),
            _ => tri,
        };
        match (
            self.fault,
            self.cpu.solve_triangular_in_place_dev(a, tri, b),
        ) {
            (Fault::TrsmPivotOffByOne, Err(Error::Singular { op, pivot })) => {
                Err(Error::Singular {
                    op,
                    pivot: pivot + 1,
                })
            }
            (_, r) => r,
        }
    }
    fn lu_unchecked(&self, a: Matrix<T>) -> Result<LuFactor<T>> {
        let f = self.cpu.lu_in_place_dev(a)?;
        let mut pivots = self.cpu.download_indices(f.pivots())?.to_vec();
        let zero_pivot = match self.fault {
            Fault::LuMissesZeroPivot => None,
            _ => f.zero_pivot(),
        };
        if self.fault == Fault::LuDropsFirstSwap && !pivots.is_empty() {
            pivots[0] = 0;
        }
        let pivots = backend::indices(pivots.len(), HostStorage { data: pivots });
        let packed = self.cpu.copy(f.packed())?;
        Ok(backend::lu_factor(
            packed,
            pivots,
            f.layout(),
            f.dim(),
            zero_pivot,
        ))
    }
    fn lu_solve_unchecked(&self, f: &LuFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        let trans = match self.fault {
            Fault::LuSolveIgnoresTrans => Trans::No,
            _ => trans,
        };
        self.cpu.lu_solve_in_place_dev(f, trans, b)
    }
    fn qr_unchecked(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        let f = self.cpu.qr_in_place_dev(a)?;
        let mut tau = self.cpu.copy(f.tau())?;
        if self.fault == Fault::QrTauOff {
            data(&mut tau)
                .iter_mut()
                .for_each(|t| *t = *t * T::from_f64(1.001));
        }
        let packed = self.cpu.copy(f.packed())?;
        Ok(backend::qr_factor(packed, tau, f.layout(), f.dim()))
    }
    fn qr_apply_unchecked(&self, f: &QrFactor<T>, trans: Trans, b: &mut Matrix<T>) -> Result<()> {
        let trans = match self.fault {
            Fault::QrApplyTransposed => trans.flip(),
            _ => trans,
        };
        self.cpu.qr_apply_in_place_dev(f, trans, b)
    }
    fn qr_solve_unchecked(&self, f: &QrFactor<T>, b: Matrix<T>) -> Result<Matrix<T>> {
        match (self.fault, self.cpu.qr_solve_unchecked(f, b)) {
            (
                Fault::LstsqColumnOffByOne,
                Err(Error::RankDeficient {
                    op,
                    column,
                    value,
                    tol,
                }),
            ) => {
                let column = column + 1;
                Err(Error::RankDeficient {
                    op,
                    column,
                    value,
                    tol,
                })
            }
            (_, r) => r,
        }
    }
}

impl<T: Element> ClusterKernels<T> for Faulty {
    fn assign_unchecked(&self, p: Points<T>, c: &Matrix<T>, l: &mut Indices) -> Result<Assignment> {
        let (x, w, labels) = (p.x, p.weights, l);
        let w = w.filter(|_| self.fault != Fault::InertiaIgnoresWeights);
        let mut a = self.cpu.assign_weighted_dev(x, c, w, labels)?;
        let k = c.rows();
        let l = &mut HERE
            .indices_mut::<HostStorage<usize>>("kmeans", "labels", labels)?
            .data;
        match self.fault {
            Fault::KMeansWrongLabel if k > 1 && !l.is_empty() => l[0] = (l[0] + 1) % k,
            Fault::KMeansInertiaOff if a.inertia > 0.0 => a.inertia *= 1.5,
            Fault::PredictLastTie => {
                let (xv, cv) = (
                    HERE.host_view("kmeans", "X", x)?,
                    HERE.host_view("kmeans", "C", c)?,
                );
                for (p, label) in xv.rows().into_iter().zip(l.iter_mut()) {
                    let d: Vec<f64> = cv
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
                    *label = d.iter().rposition(|&v| v == best).unwrap_or(0);
                }
            }
            _ => {}
        }
        Ok(a)
    }
    fn update_unchecked(&self, p: Points<T>, labels: &Indices, c: &mut Matrix<T>) -> Result<()> {
        let (x, w) = (p.x, p.weights);
        let before = HERE.host_view("kmeans", "C", c)?.to_owned();
        let w = w.filter(|_| self.fault != Fault::UpdateIgnoresWeights);
        self.cpu.update_weighted_dev(x, labels, w, c)?;
        if self.fault == Fault::UpdateMovesEmpty {
            let l = &HERE
                .indices::<HostStorage<usize>>("kmeans", "labels", labels)?
                .data;
            let d = c.cols();
            for j in 0..c.rows() {
                if !l.contains(&j) {
                    let row = &mut data(c)[j * d..(j + 1) * d];
                    row.iter_mut()
                        .zip(before.row(j))
                        .for_each(|(v, &b)| *v = b + T::one());
                }
            }
        }
        Ok(())
    }
}

ndgpu_core::impl_kernels!(Faulty, Element: matmul, transpose, reduce, factorize, cluster);

impl Backend for Faulty {
    fn description(&self) -> String {
        format!("the cpu reference with {:?}", self.fault)
    }
    fn variant_table(&self) -> &Variants {
        self.cpu.variant_table()
    }
    fn variant_table_mut(&mut self) -> &mut Variants {
        self.cpu.variant_table_mut()
    }
}

fn failures(fault: Fault, family: Family) -> Vec<String> {
    let backend = Faulty {
        cpu: CpuBackend::new(),
        fault,
    };
    failed_cases(&run_family(&backend, family, Sizes::Small, 7))
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
        (GramNotSymmetric, Family::Gram),
        (TransposeDropsEdge, Family::Transpose),
        (ArgLastTie, Family::Reduce),
        (MinMaxSkipNan, Family::Reduce),
        (SumBeyondTolerance, Family::Reduce),
        (CholeskyUpperNotZero, Family::Cholesky),
        (CholeskyPivotOffByOne, Family::Cholesky),
        (CholeskyReadsUpper, Family::Cholesky),
        (SolveForwardOnly, Family::Cholesky),
        (KMeansWrongLabel, Family::KMeans),
        (KMeansInertiaOff, Family::KMeans),
        (PredictLastTie, Family::KMeans),
        (UpdateMovesEmpty, Family::KMeans),
        (UpdateIgnoresWeights, Family::KMeans),
        (InertiaIgnoresWeights, Family::KMeans),
        (TrsmIgnoresTrans, Family::Trsm),
        (TrsmReadsDiagonal, Family::Trsm),
        (TrsmPivotOffByOne, Family::Trsm),
        (LuDropsFirstSwap, Family::Lu),
        (LuMissesZeroPivot, Family::Lu),
        (LuSolveIgnoresTrans, Family::Lu),
        (QrTauOff, Family::Qr),
        (QrApplyTransposed, Family::Qr),
        (LstsqColumnOffByOne, Family::Qr),
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
