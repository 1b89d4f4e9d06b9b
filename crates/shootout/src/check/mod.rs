//! Correctness checks run on every variant before it is timed: a variant whose result
//! is wrong is reported as failed and never timed.
//!
//! A [`Reference`] is prepared once per case (host work in f64, shared by every
//! variant) and then checks each variant's result with the conformance suite's
//! comparisons (`ndgpu_conformance::compare`): small cases in full (every element of a
//! product against its error bound, LAPACK's ratio `‖A − L·Lᵀ‖₁ / (n·ε·‖A‖₁)` over
//! every column for Cholesky), large ones (where an f64 host GEMM would take minutes)
//! on sampled rows, columns and elements with the same bounds. Every result must also
//! be finite everywhere. LU, QR, least squares and the triangular solve are checked
//! with LAPACK's test ratios on sampled columns (`check/linalg.rs`); eigh, the SVD and
//! PCA with the conformance suite's ratios, on sampled columns above
//! [`FULL_CHECK_MAX_N`] (`check/spectra.rs`).

use ndarray::{Array1, Array2};
use ndgpu_conformance::compare::sampled::{
    self, dims, finite, norms, residual, sample_lines, within, Entry, FULL_CHECK_MAX_N,
};
use ndgpu_conformance::compare::{check_step, product_tolerance};
use ndgpu_core::{tolerance, Element, PcaFit, Precision};

use crate::data::Inputs;

mod linalg;
mod ratios;
mod reduce;
mod spectra;

pub use sampled::copy;

/// The result of one run, on the host.
#[derive(Debug, Clone)]
pub enum Output<T> {
    /// A matrix result (product, transpose, Cholesky factor; only the lower triangle
    /// of a factor is read).
    Matrix(Array2<T>),
    /// A reduction's value.
    Scalar(T),
    /// The flat (row-major) index of a whole arg reduction.
    Index(usize),
    /// The indices of an arg reduction along an axis.
    Indices(Vec<usize>),
    /// One k-means step.
    KMeans {
        /// Centroids after the step.
        centroids: Array2<T>,
        /// Label of each point, for the centroids before the update.
        labels: Vec<i64>,
        /// Points whose label changed (all of them: they start unlabelled), if reported.
        changed: Option<usize>,
        /// Σ‖xᵢ − c_labelᵢ‖².
        inertia: f64,
        /// Whether the centroids were moved to their points' means (a Lloyd iteration)
        /// or left alone (an assignment step only).
        updated: bool,
    },
    /// An LU factor as LAPACK's `getrf` leaves it (the resident form).
    Lu {
        /// L (unit diagonal, not stored) below the diagonal and U on and above it,
        /// row-major.
        packed: Array2<T>,
        /// The row swaps: row i was swapped with row `pivots[i]`, for i in order.
        pivots: Vec<usize>,
    },
    /// `A = P·L·U` unpacked (the ndarray-level `lu`).
    Plu {
        /// The permutation matrix.
        p: Array2<T>,
        /// Unit lower triangular.
        l: Array2<T>,
        /// Upper triangular.
        u: Array2<T>,
    },
    /// `A = Q·R`, reduced: Q m×k with orthonormal columns, R k×n upper triangular
    /// (k = min(m, n)). The resident form's Q is the factor applied to the first k
    /// columns of the identity, by the backend.
    Qr {
        /// The orthonormal factor.
        q: Array2<T>,
        /// The triangular factor.
        r: Array2<T>,
    },
    /// `A = V·diag(w)·Vᵀ`: w ascending, V's columns the eigenvectors.
    Eigh {
        /// The eigenvalues.
        w: Array1<T>,
        /// The eigenvectors.
        v: Array2<T>,
    },
    /// The reduced SVD `A = U·diag(s)·Vt`.
    Svd {
        /// U, m×k.
        u: Array2<T>,
        /// The singular values, descending.
        s: Array1<T>,
        /// Vt, k×n.
        vt: Array2<T>,
    },
    /// A PCA fit.
    Pca(PcaFit<T>),
}

enum Expect {
    /// Elements of a product with inner dimension `k`.
    Entries {
        shape: (usize, usize),
        k: usize,
        entries: Vec<Entry>,
        symmetric: bool,
    },
    /// The exact transpose of the input.
    Transpose,
    /// A reduction of a matrix, whole or along an axis.
    Reduce {
        lanes: reduce::Lanes,
        axis: Option<usize>,
    },
    /// A value within a bound.
    Scalar {
        what: &'static str,
        exact: f64,
        bound: f64,
    },
    /// Columns of `A − L·Lᵀ` against the variant's `cholesky_ratio` times `scale` =
    /// `n·ε·‖A‖₁`.
    Cholesky { columns: Vec<usize>, scale: f64 },
    /// A k-means step, checked against the inputs directly.
    KMeans,
    /// The solve of `M·Mᵀ·X = B` at the end of the chain: sampled columns of the
    /// residual against the backward error the three steps may add up to.
    Chain { columns: Vec<usize>, norm: f64 },
    /// Columns of X for [`residual`] with A = L·Lᵀ, and ‖L‖₁·‖L‖∞.
    Solve { columns: Vec<usize>, norm: f64 },
    /// The input itself, bit for bit (a transfer).
    Same,
    /// LU, QR, least squares, the triangular solve.
    Linalg(linalg::Expect),
    /// eigh, the SVD, PCA.
    Spectra(spectra::Expect),
}

/// What a correct result of one case looks like.
pub struct Reference<'a, T> {
    inputs: &'a Inputs<T>,
    expect: Expect,
}

impl<'a, T: Element> Reference<'a, T> {
    /// Prepares the checks of `inputs` (the f64 host work shared by every variant).
    pub fn new(inputs: &'a Inputs<T>) -> Self {
        let expect = match inputs {
            Inputs::Gemm { a, b } => Expect::Entries {
                shape: (a.nrows(), b.ncols()),
                k: a.ncols(),
                entries: sampled::product_entries(a.view(), b.t()),
                symmetric: false,
            },
            Inputs::Gram { m } => Expect::Entries {
                shape: (m.nrows(), m.nrows()),
                k: m.ncols(),
                // Bᵀ = (Mᵀ)ᵀ = M: rows of M against rows of M.
                entries: sampled::product_entries(m.view(), m.view()),
                symmetric: true,
            },
            Inputs::Transpose { .. } => Expect::Transpose,
            Inputs::Reduce { x, reduction, axis } => Expect::Reduce {
                lanes: reduce::Lanes::new(x, *reduction, *axis),
                axis: *axis,
            },
            Inputs::Dot { x, y } => {
                let (exact, mag) = sum_terms(x.iter().zip(y).map(|(a, b)| a.as_f64() * b.as_f64()));
                Expect::Scalar {
                    what: "dot",
                    exact,
                    bound: tolerance::sum::<T>(x.len()) * mag,
                }
            }
            Inputs::Cholesky { a } => {
                let n = a.nrows();
                // ‖A‖₁ is the largest column sum; A is symmetric, so rows will do.
                let norm1 = a
                    .rows()
                    .into_iter()
                    .map(|r| r.iter().map(|v| v.as_f64().abs()).sum::<f64>())
                    .fold(0.0, f64::max);
                Expect::Cholesky {
                    columns: sample_lines(n, n <= FULL_CHECK_MAX_N),
                    scale: n as f64 * T::EPS * norm1,
                }
            }
            Inputs::KMeans { .. } => Expect::KMeans,
            Inputs::Chain { m, .. } => {
                // ‖M‖₁·‖M‖∞ bounds ‖M·Mᵀ‖₁ and ‖|M|·|Mᵀ|‖₁, the scale of the gram's error.
                let (n1, ninf) = norms(m);
                Expect::Chain {
                    columns: sample_lines(m.nrows(), m.nrows() <= FULL_CHECK_MAX_N),
                    norm: n1 * ninf,
                }
            }
            Inputs::Solve { l, .. } => {
                let (n1, ninf) = norms(l);
                Expect::Solve {
                    columns: sample_lines(l.nrows(), l.nrows() <= FULL_CHECK_MAX_N),
                    norm: n1 * ninf,
                }
            }
            Inputs::Transfer { .. } => Expect::Same,
            Inputs::Eigh { .. } | Inputs::Svd { .. } | Inputs::Pca { .. } => {
                Expect::Spectra(spectra::Expect::new(inputs))
            }
            other => Expect::Linalg(linalg::Expect::new(other)),
        };
        Reference { inputs, expect }
    }

    /// Checks one result of IEEE arithmetic in `T`.
    ///
    /// # Errors
    /// Why the result is wrong, naming the first offending element.
    pub fn check(&self, out: &Output<T>) -> Result<(), String> {
        self.check_with(out, Precision::Ieee)
    }

    /// Checks one result of a variant that computes with `math`.
    ///
    /// # Errors
    /// Why the result is wrong, naming the first offending element.
    pub fn check_with(&self, out: &Output<T>, math: Precision) -> Result<(), String> {
        match (&self.expect, self.inputs, out) {
            (
                Expect::Entries {
                    shape,
                    k,
                    entries,
                    symmetric,
                },
                _,
                Output::Matrix(c),
            ) => {
                dims(c, *shape)?;
                finite(c)?;
                if *symmetric {
                    sampled::symmetric(c)?;
                }
                sampled::check_entries(c, entries, product_tolerance::<T>(*k, math))
            }
            (Expect::Transpose, Inputs::Transpose { a }, Output::Matrix(t)) => {
                sampled::transpose(a, t)
            }
            (Expect::Reduce { lanes, axis }, _, out) => lanes.check(out, *axis),
            (Expect::Scalar { what, exact, bound }, _, Output::Scalar(s)) => {
                let got = s.as_f64();
                let err = (got - exact).abs();
                if within(err, *bound) {
                    Ok(())
                } else {
                    Err(format!(
                        "{what} is {got:e}, reference {exact:e}: error {err:e} above the bound {bound:e}"
                    ))
                }
            }
            (Expect::Cholesky { columns, scale }, Inputs::Cholesky { a }, Output::Matrix(l)) => {
                dims(l, a.dim())?;
                let limit = tolerance::cholesky_ratio::<T>(math) * scale;
                sampled::check_cholesky(a, l, columns, limit)
            }
            (
                Expect::KMeans,
                Inputs::KMeans { x, centroids: c0 },
                Output::KMeans {
                    centroids,
                    labels,
                    changed,
                    inertia,
                    updated,
                },
            ) => check_step(
                x.view(),
                c0.view(),
                centroids.view(),
                labels,
                *changed,
                *inertia,
                *updated,
            ),
            (Expect::Chain { columns, norm }, Inputs::Chain { m, b }, Output::Matrix(x)) => {
                dims(x, b.dim())?;
                finite(x)?;
                // Backward errors add up along the chain: the gram's (at most about
                // n·ε·‖|M|·|Mᵀ|‖₁), the factorization's and the solve's.
                let limit = tolerance::CHOLESKY_RATIO + tolerance::SOLVE_RATIO + 1.0;
                residual(m, b, x, columns, *norm, limit)
            }
            (Expect::Solve { columns, norm }, Inputs::Solve { l, b }, Output::Matrix(x)) => {
                dims(x, b.dim())?;
                finite(x)?;
                residual(l, b, x, columns, *norm, tolerance::SOLVE_RATIO)
            }
            (Expect::Same, Inputs::Transfer { x }, Output::Matrix(y)) => {
                dims(y, x.dim())?;
                copy(x.as_slice().unwrap_or(&[]), y.as_slice().unwrap_or(&[]))
            }
            (Expect::Linalg(e), inputs, out) => e.check(inputs, out, math),
            (Expect::Spectra(e), inputs, out) => spectra::check(e, (inputs, out), math),
            _ => Err("the result has the wrong kind for this operation".into()),
        }
    }
}

fn sum_terms(terms: impl Iterator<Item = f64>) -> (f64, f64) {
    terms.fold((0.0, 0.0), |(s, m), t| (s + t, m + t.abs()))
}

#[cfg(test)]
mod tests;
