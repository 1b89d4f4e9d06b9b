//! Properties of Cholesky and the reductions on random shapes and layouts: LAPACK's
//! scaled residuals, the first failing pivot, sums within the error bound, exact
//! extremes and indices with NumPy's NaN policy.

use ndarray::{Array2, ArrayView2, Axis};
use ndgpu_conformance::compare::{cholesky_ratio, solve_ratio, sum_ratio};
use ndgpu_conformance::data::{Laid, Layout};
use ndgpu_conformance::strategies::{config, dim, dim_nonzero, layout, matrix, spd};
use ndgpu_core::{tolerance, ArgOp, Element, Error, Factorize, Reduce, ReduceOp};
use ndgpu_cpu::CpuBackend;
use proptest::prelude::*;

fn cholesky_residuals<T: Element>(a: ArrayView2<T>, b: ArrayView2<T>) -> Result<(), TestCaseError> {
    let cpu = CpuBackend::new();
    let l = cpu.cholesky(a).unwrap();
    let n = a.nrows();
    prop_assert_eq!(l.dim(), (n, n));
    for ((i, j), v) in l.indexed_iter() {
        prop_assert!(j <= i || *v == T::zero(), "L[{}, {}] = {}", i, j, v);
    }
    let r = cholesky_ratio(a, l.view());
    prop_assert!(r <= tolerance::CHOLESKY_RATIO, "factor ratio {}", r);
    let x = cpu.cholesky_solve(l.view(), b).unwrap();
    let r = solve_ratio(a, x.view(), b);
    prop_assert!(r <= tolerance::SOLVE_RATIO, "solve ratio {}", r);
    Ok(())
}

/// A matrix whose leading p×p block is SPD and whose pivot p is negative.
fn first_pivot<T: Element>(a: &Laid<T>, p: usize) -> Result<(), TestCaseError> {
    let mut m = a.view().to_owned();
    let p = p % m.nrows();
    m[[p, p]] = -m[[p, p]].abs();
    match CpuBackend::new().cholesky(m.view()) {
        Err(Error::NotPositiveDefinite { pivot, value }) => {
            prop_assert_eq!(pivot, p);
            prop_assert!(value < 0.0);
        }
        other => prop_assert!(
            false,
            "expected NotPositiveDefinite at {}, got {:?}",
            p,
            other
        ),
    }
    Ok(())
}

/// SPD matrix of order n in any layout, with a right-hand side of 0–5 columns.
fn spd_and_rhs<T: Element>() -> impl Strategy<Value = (Laid<T>, Laid<T>)> {
    spd::<T>(dim()).prop_flat_map(|a| {
        let n = a.dim().0;
        (
            Just(a),
            (0..=5usize).prop_flat_map(move |k| matrix::<T>(n, k)),
            layout(),
        )
            .prop_map(|(a, b, l)| (a, Laid::new(&b, l)))
    })
}

/// A matrix in any layout with NaN at up to three random places (or none).
fn with_nans<T: Element>() -> impl Strategy<Value = Laid<T>> {
    (dim(), dim())
        .prop_flat_map(|(m, n)| {
            let cells = (m * n).max(1);
            (
                matrix::<T>(m, n),
                prop::collection::vec(0..cells, 0..=3),
                layout(),
                any::<bool>(),
            )
        })
        .prop_map(|(mut a, nans, l, use_nans)| {
            let (rows, n) = (a.nrows(), a.ncols().max(1));
            if use_nans && !a.is_empty() {
                for c in nans {
                    a[[(c / n) % rows, c % n]] = T::nan();
                }
            }
            Laid::new(&a, l)
        })
}

fn is_empty_err<V>(r: &Result<V, Error>) -> bool {
    matches!(r, Err(Error::Empty { .. }))
}

/// The first NaN, else the first extreme, of a sequence (the documented policy).
fn first_of(op: ArgOp, x: &[f64]) -> Option<usize> {
    if let Some(i) = x.iter().position(|v| v.is_nan()) {
        return Some(i);
    }
    (0..x.len()).reduce(|best, i| match op {
        ArgOp::ArgMin if x[i] < x[best] => i,
        ArgOp::ArgMax if x[i] > x[best] => i,
        _ => best,
    })
}

fn reductions_match_definitions<T: Element>(a: ArrayView2<T>) -> Result<(), TestCaseError> {
    let cpu = CpuBackend::new();
    let all: Vec<f64> = a.iter().map(|v| v.as_f64()).collect();
    // Whole matrix.
    let sum: f64 = all.iter().sum();
    let abs: f64 = all.iter().map(|v| v.abs()).sum();
    let got = cpu.reduce(ReduceOp::Sum, a).unwrap();
    prop_assert!(
        sum_ratio(got, sum, all.len(), abs) <= 1.0,
        "sum {} vs {}",
        got,
        sum
    );
    let sq: f64 = all.iter().map(|v| v * v).sum();
    let got = cpu.reduce(ReduceOp::SumSq, a).unwrap();
    prop_assert!(
        sum_ratio(got, sq, all.len(), sq) <= 1.0,
        "sumsq {} vs {}",
        got,
        sq
    );
    for op in ArgOp::ALL {
        let want = first_of(op, &all);
        let got = cpu.arg_reduce(op, a);
        match want {
            None => prop_assert!(is_empty_err(&got), "expected Empty"),
            Some(i) => prop_assert_eq!(got.unwrap(), i),
        }
        let value_op = if op == ArgOp::ArgMin {
            ReduceOp::Min
        } else {
            ReduceOp::Max
        };
        let got = cpu.reduce(value_op, a);
        match want {
            None => prop_assert!(is_empty_err(&got), "expected Empty"),
            Some(i) => {
                let g = got.unwrap().as_f64();
                prop_assert!(
                    g == all[i] || (g.is_nan() && all[i].is_nan()),
                    "{} vs {}",
                    g,
                    all[i]
                );
            }
        }
    }
    // Along each axis: per lane, the same definitions.
    for axis in [Axis(0), Axis(1)] {
        let lanes: Vec<Vec<f64>> = a
            .lanes(axis)
            .into_iter()
            .map(|l| l.iter().map(|v| v.as_f64()).collect())
            .collect();
        let sums = cpu.reduce_axis(ReduceOp::Sum, a, axis).unwrap();
        prop_assert_eq!(sums.len(), lanes.len());
        for (s, l) in sums.iter().zip(&lanes) {
            let abs: f64 = l.iter().map(|v| v.abs()).sum();
            prop_assert!(sum_ratio(*s, l.iter().sum(), l.len(), abs) <= 1.0);
        }
        for op in ArgOp::ALL {
            let got = cpu.arg_reduce_axis(op, a, axis);
            if lanes.iter().any(|l| l.is_empty()) {
                prop_assert!(is_empty_err(&got), "expected Empty");
            } else {
                let want: Vec<usize> = lanes.iter().map(|l| first_of(op, l).unwrap()).collect();
                prop_assert_eq!(got.unwrap().to_vec(), want);
            }
        }
    }
    Ok(())
}

fn dot_within_bound<T: Element>(x: Array2<T>, reversed: bool) -> Result<(), TestCaseError> {
    let cpu = CpuBackend::new();
    let (u, v) = (x.row(0), x.row(1));
    let v = if reversed {
        v.slice_move(ndarray::s![..;-1])
    } else {
        v
    };
    let terms: Vec<f64> = u
        .iter()
        .zip(v.iter())
        .map(|(a, b)| a.as_f64() * b.as_f64())
        .collect();
    let abs: f64 = terms.iter().map(|t| t.abs()).sum();
    let got = cpu.dot(u, v).unwrap();
    prop_assert!(sum_ratio(got, terms.iter().sum(), terms.len(), abs) <= 1.0);
    Ok(())
}

proptest! {
    #![proptest_config(config(48, "proptest-regressions/prop_linalg.txt"))]

    #[test]
    fn cholesky_f32((a, b) in spd_and_rhs::<f32>()) {
        cholesky_residuals(a.view(), b.view())?;
    }

    #[test]
    fn cholesky_f64((a, b) in spd_and_rhs::<f64>()) {
        cholesky_residuals(a.view(), b.view())?;
    }

    #[test]
    fn first_failing_pivot_f32(a in spd::<f32>(dim_nonzero()), p in any::<usize>()) {
        first_pivot(&a, p)?;
    }

    #[test]
    fn first_failing_pivot_f64(a in spd::<f64>(dim_nonzero()), p in any::<usize>()) {
        first_pivot(&a, p)?;
    }

    #[test]
    fn reductions_f32(a in with_nans::<f32>()) {
        reductions_match_definitions(a.view())?;
    }

    #[test]
    fn reductions_f64(a in with_nans::<f64>()) {
        reductions_match_definitions(a.view())?;
    }

    #[test]
    fn dot_f32(x in dim().prop_flat_map(|n| matrix::<f32>(2, n)), reversed in any::<bool>()) {
        dot_within_bound(x, reversed)?;
    }

    #[test]
    fn dot_f64(x in dim().prop_flat_map(|n| matrix::<f64>(2, n)), reversed in any::<bool>()) {
        dot_within_bound(x, reversed)?;
    }
}

#[test]
fn strided_layout_hides_nan_that_must_not_be_read() {
    // Layout::Strided surrounds the matrix with NaN: a reduction reading outside the
    // view would return NaN.
    let a = Laid::new(&Array2::from_elem((5, 7), 1.0f32), Layout::Strided);
    let cpu = CpuBackend::new();
    assert_eq!(cpu.reduce(ReduceOp::Sum, a.view()).unwrap(), 35.0);
    assert_eq!(cpu.reduce(ReduceOp::Max, a.view()).unwrap(), 1.0);
}
