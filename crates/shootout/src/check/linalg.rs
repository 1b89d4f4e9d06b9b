//! The references of LU, its solve, QR, least squares and the triangular solve: LAPACK's
//! test ratios, in f64 on every core, on sampled columns (every column up to
//! [`FULL_CHECK_MAX_N`]), each at most LAPACK's threshold of 30 (times the allowance of
//! [`tolerance::cholesky_ratio`] for variants whose products round to TF32):
//!
//! | op | ratio of each checked column j | LAPACK's test |
//! |---|---|---|
//! | lu | ‖(P·A − L·U)ⱼ‖₁ / (n·ε·‖A‖₁), and every \|Lᵢⱼ\| ≤ 1 | xGET01 |
//! | lu_solve, trsm | ‖bⱼ − A·xⱼ‖₁ / (n·ε·‖A‖₁·‖xⱼ‖₁) | xGET02, xTRT02 |
//! | qr | ‖(A − Q·R)ⱼ‖₁ / (m·ε·‖A‖₁) and ‖(I − Qᵀ·Q)ⱼ‖₁ / (m·ε) | xQRT01 |
//! | lstsq | ‖Aᵀ·(b − A·x)‖₁ / (m·ε·‖A‖∞·(‖b‖₁ + ‖A‖₁·‖x‖₁)) | xQRT17's form |
//!
//! These ratios scale with n·ε (m·ε): at the small check shapes they are tight, at the
//! largest timed shapes they catch gross errors only.

use std::borrow::Cow;

use ndarray::{Array2, ArrayView1, ArrayView2};
use ndgpu_conformance::compare::sampled::{
    dims, finite, norms, sample_lines, within, FULL_CHECK_MAX_N,
};
use ndgpu_conformance::par;
use ndgpu_core::{tolerance, Element, Precision};

use super::ratios::{sampled_orthogonality, worst};
use super::Output;
use crate::data::Inputs;

/// LAPACK's threshold on its test ratios.
const RATIO: f64 = 30.0;

/// What a correct result of LU, QR, least squares or a triangular solve satisfies.
pub(crate) enum Expect {
    /// LU: the columns of `P·A − L·U` checked, and ‖A‖₁.
    Lu { columns: Vec<usize>, norm1: f64 },
    /// `A·X = B` (LU's solve, and the triangular solve with A's lower triangle, the
    /// rest of A being zero): the columns of X checked, and ‖A‖₁.
    Solve { columns: Vec<usize>, norm1: f64 },
    /// QR: the columns of A (and of Q) checked, and ‖A‖₁.
    Qr {
        columns: Vec<usize>,
        q_columns: Vec<usize>,
        norm1: f64,
    },
    /// Least squares: ‖A‖₁ and ‖A‖∞.
    Lstsq { norm1: f64, norm_inf: f64 },
}

fn columns(n: usize) -> Vec<usize> {
    sample_lines(n, n <= FULL_CHECK_MAX_N)
}

impl Expect {
    /// The reference of `inputs`, one of LU's, its solve's, QR's, least squares' or the
    /// triangular solve's.
    ///
    /// # Panics
    /// For the inputs of another op.
    pub(crate) fn new<T: Element>(inputs: &Inputs<T>) -> Self {
        match inputs {
            Inputs::Lu { a } => Expect::Lu {
                columns: columns(a.ncols()),
                norm1: norms(a).0,
            },
            Inputs::LuSolve { a, b } | Inputs::Trsm { a, b } => Expect::Solve {
                columns: columns(b.ncols()),
                norm1: norms(a).0,
            },
            Inputs::Qr { a } => Expect::Qr {
                columns: columns(a.ncols()),
                q_columns: columns(a.nrows().min(a.ncols())),
                norm1: norms(a).0,
            },
            Inputs::Lstsq { a, .. } => {
                let (norm1, norm_inf) = norms(a);
                Expect::Lstsq { norm1, norm_inf }
            }
            _ => unreachable!("not the inputs of a factorization or a solve"),
        }
    }

    /// Checks `out` of `inputs` from a variant that computes with `math`.
    pub(crate) fn check<T: Element>(
        &self,
        inputs: &Inputs<T>,
        out: &Output<T>,
        math: Precision,
    ) -> Result<(), String> {
        let limit = RATIO * tolerance::cholesky_ratio::<T>(math) / tolerance::CHOLESKY_RATIO;
        match (self, inputs, out) {
            (Expect::Lu { columns, norm1 }, Inputs::Lu { a }, out) => {
                let (packed, perm) = lu_of(out, a.nrows())?;
                check_lu(a, &packed, &perm, columns, (*norm1, limit))
            }
            (Expect::Solve { columns, norm1 }, Inputs::LuSolve { a, b }, Output::Matrix(x))
            | (Expect::Solve { columns, norm1 }, Inputs::Trsm { a, b }, Output::Matrix(x)) => {
                dims(x, b.dim())?;
                finite(x)?;
                check_solve(a, b, x, columns, (*norm1, limit))
            }
            (
                Expect::Qr {
                    columns,
                    q_columns,
                    norm1,
                },
                Inputs::Qr { a },
                Output::Qr { q, r },
            ) => check_qr(a, q, r, (columns, q_columns), (*norm1, limit)),
            (Expect::Lstsq { norm1, norm_inf }, Inputs::Lstsq { a, b }, Output::Matrix(x)) => {
                dims(x, (a.ncols(), 1))?;
                finite(x)?;
                check_lstsq(a, b, x, (*norm1, *norm_inf), limit)
            }
            _ => Err("the result has the wrong kind for this operation".into()),
        }
    }
}

/// The packed factor and the permutation (`perm[r]`: the row of A in row r of P·A) of
/// an LU result of an n×n matrix, in either form.
fn lu_of<T: Element>(
    out: &Output<T>,
    n: usize,
) -> Result<(Cow<'_, Array2<T>>, Vec<usize>), String> {
    match out {
        Output::Lu { packed, pivots } => {
            if pivots.len() != n {
                return Err(format!("{} pivots, expected {n}", pivots.len()));
            }
            let mut perm: Vec<usize> = (0..n).collect();
            for (i, &p) in pivots.iter().enumerate() {
                if p < i || p >= n {
                    return Err(format!("pivot {i} is {p}, outside {i}..{n}"));
                }
                perm.swap(i, p);
            }
            Ok((Cow::Borrowed(packed), perm))
        }
        Output::Plu { p, l, u } => {
            for (what, m) in [("P", p), ("L", l), ("U", u)] {
                dims(m, (n, n)).map_err(|e| format!("{what}: {e}"))?;
            }
            let mut perm = vec![usize::MAX; n];
            for ((src, r), v) in p.indexed_iter() {
                let v = v.as_f64();
                if v == 1.0 && perm[r] == usize::MAX {
                    perm[r] = src;
                } else if v != 0.0 {
                    return Err(format!("P is no permutation: P[{src}, {r}] = {v}"));
                }
            }
            let mut seen = vec![false; n];
            for (r, &src) in perm.iter().enumerate() {
                if src == usize::MAX || std::mem::replace(&mut seen[src], true) {
                    return Err(format!("P is no permutation (at its column {r})"));
                }
            }
            for ((i, j), v) in l.indexed_iter() {
                let want = if i == j { 1.0 } else { 0.0 };
                if j >= i && v.as_f64() != want {
                    return Err(format!("L[{i}, {j}] = {v}, not unit lower triangular"));
                }
            }
            let packed = Array2::from_shape_fn((n, n), |(i, j)| match j < i {
                true => l[[i, j]],
                false => u[[i, j]],
            });
            Ok((Cow::Owned(packed), perm))
        }
        _ => Err("the result has the wrong kind for LU".into()),
    }
}

fn col<T: Element>(m: ArrayView2<T>, j: usize) -> Vec<f64> {
    m.column(j).iter().map(|v| v.as_f64()).collect()
}

fn dot<T: Element>(row: ArrayView1<T>, x: &[f64]) -> f64 {
    row.iter().zip(x).map(|(a, b)| a.as_f64() * b).sum()
}

fn check_lu<T: Element>(
    a: &Array2<T>,
    packed: &Array2<T>,
    perm: &[usize],
    columns: &[usize],
    (norm1, limit): (f64, f64),
) -> Result<(), String> {
    dims(packed, a.dim())?;
    finite(packed)?;
    let n = a.nrows();
    // Partial pivoting keeps every multiplier within 1 (up to the division's rounding).
    let bound = 1.0 + 64.0 * T::EPS;
    for ((i, j), v) in packed.indexed_iter() {
        if j < i && !within(v.as_f64().abs(), bound) {
            return Err(format!(
                "L[{i}, {j}] = {v}: above 1, so not partial pivoting"
            ));
        }
    }
    let packed = packed.as_standard_layout();
    let scale = n as f64 * T::EPS * norm1;
    let ratios = par::map(columns, |&j| {
        let u = col(packed.view(), j);
        let resid: f64 = (0..n)
            .map(|i| {
                // (L·U)ᵢⱼ: L's row i below the diagonal times U's column j, plus Uᵢⱼ
                // (Lᵢᵢ = 1) where i ≤ j.
                let k = i.min(j + 1);
                let lu = dot(packed.row(i).slice(ndarray::s![..k]), &u[..k])
                    + if i <= j { u[i] } else { 0.0 };
                (a[[perm[i], j]].as_f64() - lu).abs()
            })
            .sum();
        (j, resid / scale)
    });
    worst(ratios, limit, "‖(P·A − L·U)ⱼ‖₁/(n·ε·‖A‖₁)")
}

fn check_solve<T: Element>(
    a: &Array2<T>,
    b: &Array2<T>,
    x: &Array2<T>,
    columns: &[usize],
    (norm1, limit): (f64, f64),
) -> Result<(), String> {
    let n = a.nrows();
    let a = a.as_standard_layout();
    let ratios = par::map(columns, |&j| {
        let xj = col(x.view(), j);
        let resid: f64 = (0..n)
            .map(|i| (b[[i, j]].as_f64() - dot(a.row(i), &xj)).abs())
            .sum();
        let xnorm: f64 = xj.iter().map(|v| v.abs()).sum();
        (j, resid / (n as f64 * T::EPS * norm1 * xnorm))
    });
    worst(ratios, limit, "‖bⱼ − A·xⱼ‖₁/(n·ε·‖A‖₁·‖xⱼ‖₁)")
}

fn check_qr<T: Element>(
    a: &Array2<T>,
    q: &Array2<T>,
    r: &Array2<T>,
    (columns, q_columns): (&[usize], &[usize]),
    (norm1, limit): (f64, f64),
) -> Result<(), String> {
    let (m, n) = a.dim();
    let k = m.min(n);
    dims(q, (m, k)).map_err(|e| format!("Q: {e}"))?;
    dims(r, (k, n)).map_err(|e| format!("R: {e}"))?;
    finite(q)?;
    finite(r)?;
    if let Some(((i, j), v)) = r
        .indexed_iter()
        .find(|((i, j), v)| j < i && **v != T::zero())
    {
        return Err(format!("R[{i}, {j}] = {v}: not upper triangular"));
    }
    let q = q.as_standard_layout();
    let eps_m = m as f64 * T::EPS;
    let ratios = par::map(columns, |&j| {
        let rj: Vec<f64> = (0..k.min(j + 1)).map(|p| r[[p, j]].as_f64()).collect();
        let resid: f64 = (0..m)
            .map(|i| {
                let qr = dot(q.row(i).slice(ndarray::s![..rj.len()]), &rj);
                (a[[i, j]].as_f64() - qr).abs()
            })
            .sum();
        (j, resid / (eps_m * norm1))
    });
    worst(ratios, limit, "‖(A − Q·R)ⱼ‖₁/(m·ε·‖A‖₁)")?;
    let ratios = sampled_orthogonality(q.view(), q_columns);
    worst(ratios, limit, "‖(I − Qᵀ·Q)ⱼ‖₁/(m·ε)")
}

fn check_lstsq<T: Element>(
    a: &Array2<T>,
    b: &Array2<T>,
    x: &Array2<T>,
    (norm1, norm_inf): (f64, f64),
    limit: f64,
) -> Result<(), String> {
    let (m, n) = a.dim();
    let a = a.as_standard_layout();
    let x = col(x.view(), 0);
    // Aᵀ·(b − A·x), one row of A at a time.
    let mut g = vec![0.0; n];
    for (i, row) in a.rows().into_iter().enumerate() {
        let r = b[[i, 0]].as_f64() - dot(row, &x);
        for (s, v) in g.iter_mut().zip(row) {
            *s += v.as_f64() * r;
        }
    }
    let bnorm: f64 = b.iter().map(|v| v.as_f64().abs()).sum();
    let xnorm: f64 = x.iter().map(|v| v.abs()).sum();
    let scale = m as f64 * T::EPS * norm_inf * (bnorm + norm1 * xnorm);
    let ratio = g.iter().map(|v| v.abs()).sum::<f64>() / scale;
    match within(ratio, limit) {
        true => Ok(()),
        false => Err(format!(
            "‖Aᵀ·(b − A·x)‖₁/(m·ε·‖A‖∞·(‖b‖₁ + ‖A‖₁·‖x‖₁)) = {ratio:.3e}, above {limit}"
        )),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use ndarray::Array2;
    use ndgpu_core::{Device, Factorize, Memory};
    use ndgpu_cpu::CpuBackend;

    use crate::cases::Op;
    use crate::check::{Output, Reference};
    use crate::data::Inputs;
    use crate::host::call;
    use crate::shape::Shape;

    /// The cpu backend's result of `op` at `shape`, and its reference.
    pub(in crate::check) fn solved(op: Op, shape: Shape) -> (Inputs<f64>, Output<f64>) {
        let inputs = Inputs::<f64>::generate(op, shape, 3);
        let out = call(&CpuBackend::new(), &inputs).unwrap();
        (inputs, out)
    }

    /// Fails unless the check of `out` fails, saying `needle`.
    pub(in crate::check) fn wrong(inputs: &Inputs<f64>, out: Output<f64>, needle: &str) {
        let err = Reference::new(inputs).check(&out).unwrap_err();
        assert!(err.contains(needle), "{needle}: {err}");
    }

    #[test]
    fn lu_factors_pass_and_fail_as_they_should() {
        let (inputs, out) = solved(Op::Lu, Shape::Square(21));
        let Inputs::Lu { a } = &inputs else {
            unreachable!()
        };
        Reference::new(&inputs).check(&out).unwrap();
        // The resident form: the packed factor and the row swaps.
        let cpu = CpuBackend::new();
        let f = cpu.lu_in_place_dev(cpu.upload(a.view()).unwrap()).unwrap();
        let packed = cpu.download(f.packed()).unwrap();
        let pivots = cpu.download_indices(f.pivots()).unwrap().to_vec();
        let lu = |packed: Array2<f64>, pivots: Vec<usize>| Output::Lu { packed, pivots };
        Reference::new(&inputs)
            .check(&lu(packed.clone(), pivots.clone()))
            .unwrap();
        let mut off = packed.clone();
        off[[20, 3]] *= 1.001;
        wrong(&inputs, lu(off, pivots.clone()), "(P·A − L·U)");
        let mut big = packed.clone();
        big[[20, 3]] = 1.5;
        wrong(&inputs, lu(big, pivots.clone()), "not partial pivoting");
        let mut swapped = pivots.clone();
        swapped[0] = 5;
        wrong(&inputs, lu(packed.clone(), swapped), "(P·A − L·U)");
        wrong(&inputs, lu(packed, vec![0; 3]), "3 pivots");
        let Output::Plu { mut p, l, u } = out else {
            unreachable!()
        };
        p.swap([0, 0], [1, 0]);
        wrong(&inputs, Output::Plu { p, l, u }, "no permutation");
    }

    #[test]
    fn qr_factors_pass_and_fail_as_they_should() {
        for shape in [Shape::rect(41, 7), Shape::rect(21, 21), Shape::rect(5, 9)] {
            let (inputs, out) = solved(Op::Qr, shape);
            Reference::new(&inputs).check(&out).unwrap();
            let Output::Qr { q, r } = out else {
                unreachable!()
            };
            let mut r_off = r.clone();
            r_off[[0, 4]] += 1e-3;
            wrong(
                &inputs,
                Output::Qr {
                    q: q.clone(),
                    r: r_off,
                },
                "(A − Q·R)",
            );
            // Q·R unchanged, but Q no longer orthonormal.
            let (mut q2, mut r2) = (q.clone(), r.clone());
            q2.column_mut(1).mapv_inplace(|v| v * 2.0);
            r2.row_mut(1).mapv_inplace(|v| v / 2.0);
            wrong(&inputs, Output::Qr { q: q2, r: r2 }, "(I − Qᵀ·Q)");
            let mut lower = r;
            lower[[1, 0]] = 1.0;
            wrong(&inputs, Output::Qr { q, r: lower }, "not upper triangular");
        }
    }

    #[test]
    fn solutions_pass_and_fail_as_they_should() {
        for (op, shape) in [
            (Op::LuSolve, Shape::Square(21)),
            (Op::Trsm, Shape::Square(21)),
            (Op::Lstsq, Shape::rect(41, 7)),
            (Op::Lstsq, Shape::rect(9, 9)),
        ] {
            let (inputs, out) = solved(op, shape);
            Reference::new(&inputs).check(&out).unwrap();
            let Output::Matrix(mut x) = out else {
                unreachable!()
            };
            x[[2, 0]] *= 1.0001;
            let needle = match op {
                Op::Lstsq => "‖Aᵀ·(b − A·x)‖₁",
                _ => "column 0",
            };
            wrong(&inputs, Output::Matrix(x.clone()), needle);
            x[[2, 0]] = f64::NAN;
            assert!(Reference::new(&inputs).check(&Output::Matrix(x)).is_err());
        }
    }
}
