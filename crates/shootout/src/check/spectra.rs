//! The references of the spectra: LAPACK's test ratios, in f64, from the conformance
//! suite (`ndgpu_conformance::compare`) where every column is checked (no dimension
//! above [`FULL_CHECK_MAX_N`]), else the same ratios on sampled columns:
//!
//! | op | ratios | LAPACK's test |
//! |---|---|---|
//! | eigh | ‖A·V − V·diag(w)‖₁ / (n·ε·‖A‖₁), ‖VᵀV − I‖₁ / (n·ε); w ascending | xSYT21 |
//! | svd | ‖A − U·diag(s)·Vt‖₁ / (max(m, n)·ε·‖A‖₁), ‖UᵀU − I‖₁ / (m·ε), ‖Vt·Vtᵀ − I‖₁ / (n·ε); s descending, ≥ 0 | xBDT01 |
//! | pca | ‖Xcᵀ·Xc·pᵢ − sᵢ²·pᵢ‖₁ / (√d·2(m + d)·ε·‖Xc‖²_F) per component, its rows orthonormal, s descending, the mean, and the variances against the f64 covariance's eigenvalues (Weyl) | the conformance suite's PCA bounds |
//!
//! Each ratio is held to the tolerance of [`ndgpu_core::tolerance`] for the variant's
//! precision (30 for IEEE arithmetic). PCA's variances are compared with a reference
//! where the f64 covariance costs at most [`PCA_REFERENCE_WORK`] multiply-adds; its
//! residuals alone do not tell the leading components from others.

use ndarray::{Array1, Array2};
use ndgpu_conformance::compare::sampled::{
    dims, finite, norms, sample_lines, within, FULL_CHECK_MAX_N,
};
use ndgpu_conformance::compare::{eigh_ratio, orthogonality_ratio, svd_ratio};
use ndgpu_conformance::par;
use ndgpu_core::{tolerance, Element, Factorize, PcaFit, Precision};

use super::ratios::{sampled_orthogonality, worst};
use super::Output;
use crate::data::Inputs;

/// The largest m·d² for which the PCA reference forms the f64 covariance.
pub const PCA_REFERENCE_WORK: usize = 1 << 32;

/// What a correct eigendecomposition, SVD or PCA satisfies.
pub(crate) enum Expect {
    /// eigh: ‖A‖₁, and the columns checked (all of them: the conformance ratios).
    Eigh { norm1: f64, full: bool },
    /// svd: ‖A‖₁, and whether every column is checked.
    Svd { norm1: f64, full: bool },
    /// pca: the feature means and ‖Xc‖²_F in f64, and the squared singular values of
    /// Xc, descending, where the reference is cheap enough.
    Pca {
        mean: Array1<f64>,
        frobenius2: f64,
        squares: Option<Vec<f64>>,
    },
}

/// Fails with `what = ratio` when `ratio` is above `limit` (NaN included).
fn bounded(what: &str, ratio: f64, limit: f64) -> Result<(), String> {
    match within(ratio, limit) {
        true => Ok(()),
        false => Err(format!("{what} = {ratio:.3e}, above {limit:.3e}")),
    }
}

/// Fails unless `v` is ordered (`ascending`, else descending), naming the first pair.
fn ordered<T: Element>(v: &Array1<T>, ascending: bool, what: &str) -> Result<(), String> {
    for i in 1..v.len() {
        let (a, b) = (v[i - 1].as_f64(), v[i].as_f64());
        if (ascending && a > b) || (!ascending && a < b) {
            return Err(format!(
                "{what}[{}] = {a}, {what}[{i}] = {b}: out of order",
                i - 1
            ));
        }
    }
    Ok(())
}

impl Expect {
    /// The reference of `inputs`, those of eigh, svd or pca.
    ///
    /// # Panics
    /// For the inputs of another op.
    pub(crate) fn new<T: Element>(inputs: &Inputs<T>) -> Self {
        match inputs {
            Inputs::Eigh { a } => Expect::Eigh {
                norm1: norms(a).0,
                full: a.nrows() <= FULL_CHECK_MAX_N,
            },
            Inputs::Svd { a } => Expect::Svd {
                norm1: norms(a).0,
                full: a.nrows().max(a.ncols()) <= FULL_CHECK_MAX_N,
            },
            Inputs::Pca { x, .. } => pca_reference(x),
            _ => unreachable!("not the inputs of a spectrum"),
        }
    }
}

/// Checks `out` of `inputs` against `expect`, from a variant that computes with `math`.
pub(crate) fn check<T: Element>(
    expect: &Expect,
    (inputs, out): (&Inputs<T>, &Output<T>),
    math: Precision,
) -> Result<(), String> {
    let orth = tolerance::orthogonality_ratio::<T>(math);
    match (expect, inputs, out) {
        (&Expect::Eigh { norm1, full }, Inputs::Eigh { a }, Output::Eigh { w, v }) => {
            let n = a.nrows();
            dims(v, (n, n)).map_err(|e| format!("V: {e}"))?;
            if w.len() != n {
                return Err(format!("{} eigenvalues, expected {n}", w.len()));
            }
            finite(v)?;
            finite(&w.clone().insert_axis(ndarray::Axis(1)))?;
            ordered(w, true, "w")?;
            let limit = tolerance::eigh_ratio::<T>(math);
            let what = "‖A·V − V·diag(w)‖₁/(n·ε·‖A‖₁)";
            if full {
                bounded(what, eigh_ratio(a.view(), w.view(), v.view()), limit)?;
                return bounded("‖VᵀV − I‖₁/(n·ε)", orthogonality_ratio(v.view()), orth);
            }
            let columns = sample_lines(n, false);
            let a = a.as_standard_layout();
            let ratios = par::map(&columns, |&j| {
                let (vj, wj) = (v.column(j), w[j].as_f64());
                let resid: f64 = (0..n)
                    .map(|i| {
                        let av: f64 = a
                            .row(i)
                            .iter()
                            .zip(vj)
                            .map(|(x, y)| x.as_f64() * y.as_f64())
                            .sum();
                        (av - wj * vj[i].as_f64()).abs()
                    })
                    .sum();
                (j, resid / (n as f64 * T::EPS * norm1))
            });
            worst(ratios, limit, what)?;
            worst(
                sampled_orthogonality(v.view(), &columns),
                orth,
                "‖(VᵀV − I)ⱼ‖₁/(n·ε)",
            )
        }
        (&Expect::Svd { norm1, full }, Inputs::Svd { a }, Output::Svd { u, s, vt }) => {
            check_svd(a, (u, s, vt), (norm1, full), math)
        }
        (
            Expect::Pca {
                mean,
                frobenius2,
                squares,
            },
            Inputs::Pca { x, k },
            Output::Pca(fit),
        ) => check_pca(x, *k, fit, (mean, *frobenius2, squares.as_deref()), math),
        _ => Err("the result has the wrong kind for this operation".into()),
    }
}

fn check_svd<T: Element>(
    a: &Array2<T>,
    (u, s, vt): (&Array2<T>, &Array1<T>, &Array2<T>),
    (norm1, full): (f64, bool),
    math: Precision,
) -> Result<(), String> {
    let (m, n) = a.dim();
    let k = m.min(n);
    dims(u, (m, k)).map_err(|e| format!("U: {e}"))?;
    dims(vt, (k, n)).map_err(|e| format!("Vt: {e}"))?;
    if s.len() != k {
        return Err(format!("{} singular values, expected {k}", s.len()));
    }
    finite(u)?;
    finite(vt)?;
    ordered(s, false, "s")?;
    if let Some((i, v)) = s
        .iter()
        .enumerate()
        .find(|(_, v)| !within(-v.as_f64(), 0.0))
    {
        return Err(format!("s[{i}] = {v}: not a singular value"));
    }
    let limit = tolerance::svd_ratio::<T>(math);
    let orth = tolerance::orthogonality_ratio::<T>(math);
    let what = "‖A − U·diag(s)·Vt‖₁/(max(m, n)·ε·‖A‖₁)";
    if full {
        bounded(
            what,
            svd_ratio(a.view(), u.view(), s.view(), vt.view()),
            limit,
        )?;
        bounded("‖UᵀU − I‖₁/(m·ε)", orthogonality_ratio(u.view()), orth)?;
        return bounded("‖Vt·Vtᵀ − I‖₁/(n·ε)", orthogonality_ratio(vt.t()), orth);
    }
    let u = u.as_standard_layout();
    let columns = sample_lines(n, n <= FULL_CHECK_MAX_N);
    let scale = m.max(n) as f64 * T::EPS * norm1;
    let ratios = par::map(&columns, |&j| {
        let sv: Vec<f64> = (0..k)
            .map(|p| s[p].as_f64() * vt[[p, j]].as_f64())
            .collect();
        let resid: f64 = (0..m)
            .map(|i| {
                let usv: f64 = u.row(i).iter().zip(&sv).map(|(x, y)| x.as_f64() * y).sum();
                (a[[i, j]].as_f64() - usv).abs()
            })
            .sum();
        (j, resid / scale)
    });
    worst(ratios, limit, what)?;
    let u_columns = sample_lines(k, k <= FULL_CHECK_MAX_N);
    worst(
        sampled_orthogonality(u.view(), &u_columns),
        orth,
        "‖(UᵀU − I)ⱼ‖₁/(m·ε)",
    )?;
    worst(
        sampled_orthogonality(vt.t(), &u_columns),
        orth,
        "‖(Vt·Vtᵀ − I)ⱼ‖₁/(n·ε)",
    )
}

/// The PCA reference of `x`: the f64 means, ‖Xc‖²_F, and (where m·d² is at most
/// [`PCA_REFERENCE_WORK`]) the eigenvalues of the f64 covariance Xcᵀ·Xc, descending.
fn pca_reference<T: Element>(x: &Array2<T>) -> Expect {
    let (m, d) = x.dim();
    let xf = x.mapv(|v| v.as_f64());
    let mean = xf
        .mean_axis(ndarray::Axis(0))
        .unwrap_or_else(|| Array1::zeros(d));
    let xc = xf - &mean;
    let frobenius2 = xc.iter().map(|v| v * v).sum();
    let squares = (m.saturating_mul(d).saturating_mul(d) <= PCA_REFERENCE_WORK).then(|| {
        let cov = xc.t().dot(&xc);
        let w = ndgpu_cpu::CpuBackend::new()
            .eigvalsh(cov.view())
            .expect("the f64 covariance is symmetric and finite");
        w.iter().rev().map(|&v| v.max(0.0)).collect()
    });
    Expect::Pca {
        mean,
        frobenius2,
        squares,
    }
}

fn check_pca<T: Element>(
    x: &Array2<T>,
    k: usize,
    fit: &PcaFit<T>,
    (mean, frobenius2, squares): (&Array1<f64>, f64, Option<&[f64]>),
    math: Precision,
) -> Result<(), String> {
    let (m, d) = x.dim();
    let p = &fit.components;
    dims(p, (k, d)).map_err(|e| format!("components: {e}"))?;
    finite(p)?;
    let vectors = [
        ("singular values", &fit.singular_values, k),
        ("explained variances", &fit.explained_variance, k),
        ("means", &fit.mean, d),
    ];
    for (what, v, len) in vectors {
        if v.len() != len || v.iter().any(|x| !x.as_f64().is_finite()) {
            return Err(format!("{} {what}, expected {len} finite ones", v.len()));
        }
    }
    ordered(&fit.singular_values, false, "singular_values")?;
    for (j, (got, want)) in fit.mean.iter().zip(mean).enumerate() {
        let bound = 4.0 * T::EPS * want.abs().max(1.0);
        if (got.as_f64() - want).abs() > bound {
            return Err(format!("mean[{j}] = {got}, reference {want:e}"));
        }
    }
    let orth = tolerance::orthogonality_ratio::<T>(math);
    bounded("‖P·Pᵀ − I‖₁/(d·ε)", orthogonality_ratio(p.t()), orth)?;
    // An exact fit of data or a covariance within (m + d)·ε·‖Xc‖²_F (the conformance
    // suite's bound), s² rounded to T: the residual of each pair, and Weyl's bound on
    // each squared singular value.
    let e = 2.0 * (m + d) as f64 * T::EPS * frobenius2;
    let limit = tolerance::svd_ratio::<T>(math);
    let x = x.as_standard_layout();
    let rows: Vec<usize> = (0..k).collect();
    let ratios = par::map(&rows, |&i| {
        let pi: Vec<f64> = p.row(i).iter().map(|v| v.as_f64()).collect();
        let mut z = vec![0.0; d];
        for row in x.rows() {
            let xc = row.iter().zip(mean).map(|(v, mu)| v.as_f64() - mu);
            let y: f64 = xc.clone().zip(&pi).map(|(a, b)| a * b).sum();
            for (zj, a) in z.iter_mut().zip(xc) {
                *zj += a * y;
            }
        }
        let s2 = fit.singular_values[i].as_f64().powi(2);
        let resid: f64 = z.iter().zip(&pi).map(|(zj, pj)| (zj - s2 * pj).abs()).sum();
        (i, resid / ((d as f64).sqrt() * e))
    });
    worst(
        ratios,
        limit,
        "‖Xcᵀ·Xc·pᵢ − sᵢ²·pᵢ‖₁/(√d·2(m + d)·ε·‖Xc‖²_F)",
    )?;
    if let Some(want) = squares {
        for (i, (got, want)) in fit.singular_values.iter().zip(want).enumerate() {
            let err = (got.as_f64().powi(2) - want).abs();
            if !within(err, limit * e) {
                return Err(format!(
                    "singular_values[{i}]² = {:e}, reference {want:e}: error {err:e} above \
                     {:e} (Weyl's bound times {limit})",
                    got.as_f64().powi(2),
                    e
                ));
            }
        }
    }
    let var = |i: usize| fit.singular_values[i].as_f64().powi(2) / (m - 1) as f64;
    match (0..k)
        .find(|&i| (fit.explained_variance[i].as_f64() - var(i)).abs() > 8.0 * T::EPS * var(i))
    {
        Some(i) => Err(format!(
            "explained_variance[{i}] = {}, singular_values[{i}]²/(m − 1) = {:e}",
            fit.explained_variance[i],
            var(i)
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use ndgpu_cpu::CpuBackend;

    use crate::cases::Op;
    use crate::check::linalg::tests::{solved, wrong};
    use crate::check::{Output, Reference};
    use crate::data::Inputs;
    use crate::shape::Shape;

    #[test]
    fn spectra_pass_and_fail_as_they_should() {
        let eigh = |w, v| Output::Eigh { w, v };
        for shape in [Shape::Square(21), Shape::Square(520)] {
            let (inputs, out) = solved(Op::Eigh, shape);
            let Output::Eigh { w, v } = out else {
                unreachable!()
            };
            Reference::new(&inputs)
                .check(&eigh(w.clone(), v.clone()))
                .unwrap();
            let mut v_off = v.clone();
            v_off[[3, 1]] += 1e-6;
            wrong(&inputs, eigh(w.clone(), v_off), "‖A·V − V·diag(w)‖₁");
            let mut w_off = w.clone();
            w_off[0] -= 1e-3;
            wrong(&inputs, eigh(w_off, v.clone()), "‖A·V − V·diag(w)‖₁");
            let mut w_swapped = w;
            w_swapped.swap(0, 1);
            wrong(&inputs, eigh(w_swapped, v), "out of order");
        }
        for shape in [Shape::rect(41, 7), Shape::rect(7, 41), Shape::rect(700, 9)] {
            let (inputs, out) = solved(Op::Svd, shape);
            Reference::new(&inputs).check(&out).unwrap();
            let Output::Svd { u, s, vt } = out else {
                unreachable!()
            };
            let mut s_off = s.clone();
            s_off[1] *= 1.0 + 1e-6;
            let (u2, vt2) = (u.clone(), vt.clone());
            wrong(
                &inputs,
                Output::Svd {
                    u: u2,
                    s: s_off,
                    vt: vt2,
                },
                "‖A − U·diag(s)·Vt‖₁",
            );
            // U·diag(s) unchanged, but U no longer orthonormal.
            let (mut u2, mut s2) = (u.clone(), s.clone());
            u2.column_mut(0).mapv_inplace(|v| v * 2.0);
            s2[0] /= 2.0;
            let err = Reference::new(&inputs)
                .check(&Output::Svd {
                    u: u2,
                    s: s2,
                    vt: vt.clone(),
                })
                .unwrap_err();
            assert!(err.contains("UᵀU") || err.contains("out of order"), "{err}");
        }
    }

    #[test]
    fn pca_fits_pass_and_fail_as_they_should() {
        let cpu = CpuBackend::new();
        // The SVD path (square), the covariance path (tall), and fewer than 8 features.
        for shape in [
            Shape::rect(33, 33),
            Shape::rect(2000, 12),
            Shape::rect(50, 5),
        ] {
            let (inputs, out) = solved(Op::Pca, shape);
            Reference::new(&inputs).check(&out).unwrap();
            let Output::Pca(fit) = out else {
                unreachable!()
            };
            assert_eq!(fit.components.nrows(), shape.dims()[1].min(8));
            let mut swapped = fit.clone();
            swapped.singular_values.swap(0, 1);
            wrong(&inputs, Output::Pca(swapped), "out of order");
            let mut off = fit.clone();
            off.components[[1, 0]] += 1e-4;
            assert!(Reference::new(&inputs).check(&Output::Pca(off)).is_err());
            // A trailing pair instead of the leading one: residual and orthogonality
            // hold, only the reference's variances catch it.
            let mut last = fit.clone();
            let k = last.components.nrows();
            let (d, m) = (shape.dims()[1], shape.dims()[0]);
            if d > k {
                let (_, s, vt) =
                    ndgpu_core::Factorize::svd(&cpu, centred(&inputs).view(), false).unwrap();
                last.components.row_mut(k - 1).assign(&vt.row(d - 1));
                last.singular_values[k - 1] = s[d - 1];
                last.explained_variance[k - 1] = s[d - 1] * s[d - 1] / (m - 1) as f64;
                wrong(&inputs, Output::Pca(last), "reference");
            }
        }
    }

    fn centred(inputs: &Inputs<f64>) -> ndarray::Array2<f64> {
        let Inputs::Pca { x, .. } = inputs else {
            unreachable!()
        };
        let mean = x.mean_axis(ndarray::Axis(0)).unwrap();
        x - &mean
    }
}
