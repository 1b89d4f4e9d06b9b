//! Properties of the products and the transpose on random shapes (0, 1, primes,
//! non-multiples of 32) and layouts (C, F, transposed, strided, reversed), against a
//! naive triple loop in f64.

use ndarray::{Array2, ArrayView2};
use ndgpu_conformance::compare::{gemm_bound, max_ratio, product_tolerance};
use ndgpu_conformance::strategies::{config, dim, gemm_case, laid_matrix, GemmCase};
use ndgpu_core::{Element, Gemm, MatMul, Precision, Trans, Transpose};
use ndgpu_cpu::CpuBackend;
use proptest::prelude::*;

/// `alpha·op(A)·op(B) + beta·C` by the definition, in f64, one term at a time.
fn naive<T: Element>(case: &GemmCase<T>) -> Array2<f64> {
    let a = case.g.ta.apply(case.a.view());
    let b = case.g.tb.apply(case.b.view());
    let (m, n, k) = case.mnk();
    Array2::from_shape_fn((m, n), |(i, j)| {
        let mut s = 0.0;
        for p in 0..k {
            s += a[[i, p]].as_f64() * b[[p, j]].as_f64();
        }
        let c = match &case.c {
            Some(c) if case.g.beta != T::zero() => case.g.beta.as_f64() * c.view()[[i, j]].as_f64(),
            _ => 0.0,
        };
        case.g.alpha.as_f64() * s + c
    })
}

fn gemm_matches_naive<T: Element>(case: GemmCase<T>) -> Result<(), TestCaseError> {
    let cpu = CpuBackend::new();
    let c = case.c.as_ref().map(|c| c.view());
    let (a, b) = (case.a.view(), case.b.view());
    let got = cpu.gemm(case.g, a, b, c).unwrap();
    let (m, n, _) = case.mnk();
    prop_assert_eq!(got.dim(), (m, n));
    prop_assert!(got.is_standard_layout());
    let bound = gemm_bound(&case.g, a, b, c);
    let (ratio, at) = max_ratio(got.view(), naive(&case).view(), bound.view());
    prop_assert!(ratio <= 1.0, "error/tolerance {} at {:?}", ratio, at);
    Ok(())
}

fn gram_is_symmetric_a_at<T: Element>(m: ArrayView2<T>) -> Result<(), TestCaseError> {
    let cpu = CpuBackend::new();
    let g = cpu.gram(m).unwrap();
    let (n, k) = m.dim();
    prop_assert_eq!(g.dim(), (n, n));
    for i in 0..n {
        for j in 0..i {
            prop_assert_eq!(g[[i, j]].as_f64().to_bits(), g[[j, i]].as_f64().to_bits());
        }
    }
    let naive = Array2::from_shape_fn((n, n), |(i, j)| {
        (0..k)
            .map(|p| m[[i, p]].as_f64() * m[[j, p]].as_f64())
            .sum::<f64>()
    });
    let bound = Array2::from_shape_fn((n, n), |(i, j)| {
        let abs: f64 = (0..k)
            .map(|p| (m[[i, p]].as_f64() * m[[j, p]].as_f64()).abs())
            .sum();
        abs * product_tolerance::<T>(k, Precision::Ieee)
    });
    let (ratio, at) = max_ratio(g.view(), naive.view(), bound.view());
    prop_assert!(ratio <= 1.0, "error/tolerance {} at {:?}", ratio, at);
    // And gram is the product with the transpose, whichever route it takes.
    let via_gemm = cpu.gemm(Gemm::new().tb(Trans::Yes), m, m, None).unwrap();
    let (ratio, _) = max_ratio(via_gemm.view(), naive.view(), bound.view());
    prop_assert!(ratio <= 1.0);
    Ok(())
}

fn transpose_twice_is_identity<T: Element>(a: ArrayView2<T>) -> Result<(), TestCaseError> {
    let cpu = CpuBackend::new();
    let t = cpu.transpose(a).unwrap();
    prop_assert!(t.is_standard_layout());
    prop_assert_eq!(t.dim(), (a.ncols(), a.nrows()));
    for ((i, j), v) in t.indexed_iter() {
        prop_assert_eq!(*v, a[[j, i]]);
    }
    let back = cpu.transpose(t.view()).unwrap();
    prop_assert_eq!(back.view(), a);
    Ok(())
}

/// The proptests `$f32` and `$f64`: `$check` of `$arg`, drawn from `$strategy` for that
/// element type.
macro_rules! f32_and_f64 {
    ($($f32:ident, $f64:ident: $arg:ident in $strategy:ident => $check:expr;)*) => {
        proptest! {
            #![proptest_config(config(48, "proptest-regressions/prop_products.txt"))]
            $(
                #[test]
                fn $f32($arg in $strategy::<f32>(dim())) {
                    $check?;
                }

                #[test]
                fn $f64($arg in $strategy::<f64>(dim())) {
                    $check?;
                }
            )*
        }
    };
}

f32_and_f64! {
    gemm_f32, gemm_f64: case in gemm_case => gemm_matches_naive(case);
    gram_f32, gram_f64: m in laid_matrix => gram_is_symmetric_a_at(m.view());
    transpose_f32, transpose_f64: a in laid_matrix => transpose_twice_is_identity(a.view());
}
