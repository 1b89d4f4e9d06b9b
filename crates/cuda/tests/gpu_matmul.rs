//! Tests of the GEMM ladder through the trait: the default kernels and every variant
//! against `kernels/matmul.cu`; conformance for every variant; every variant against an
//! f64 reference (error-analysis bound) on odd shapes and all four transpose pairs;
//! outputs poisoned with NaN (β = 0); chains of products on resident matrices; empty
//! shapes and errors; run-to-run reproducibility.
//!
//! Only the check of the default kernels against the source needs no device; the rest
//! are ignored without one. Run them on a GPU machine with
//! `cargo test -p ndgpu-cuda --test gpu_matmul -- --ignored`.

mod common;

use common::{
    assert_unknown_variant_refused, assert_within, backend, every_variant, gemm_reference, MATMUL,
    ODD,
};
use ndarray::{Array2, ArrayView2};
use ndgpu_conformance::compare::product_tolerance;
use ndgpu_conformance::data::Rng;
use ndgpu_conformance::Sizes;
use ndgpu_core::{tolerance, Backend, DType, Error, Family, Gemm, MatMul, Matrix, Memory, Trans};
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::CudaElement;

const TRANS: [(Trans, Trans); 4] = [
    (Trans::No, Trans::No),
    (Trans::No, Trans::Yes),
    (Trans::Yes, Trans::No),
    (Trans::Yes, Trans::Yes),
];

common::kernel_source_tests!(MATMUL);

/// An operand that is `rows × cols` after `t` is applied.
fn operand<T: CudaElement>(rng: &mut Rng, t: Trans, rows: usize, cols: usize) -> Array2<T> {
    match t {
        Trans::No => rng.matrix(rows, cols),
        Trans::Yes => rng.matrix(cols, rows),
    }
}

common::conformance_test!(conformance_every_variant, Family::MatMul);

/// Asserts that `got` is within the bound of the f64 reference (its IEEE bound for
/// inner dimension `k`) rescaled to the precision the selected variant declares.
fn assert_product<T: CudaElement>(
    b: &CudaBackend,
    what: &str,
    got: ArrayView2<T>,
    (want, bound): &(Array2<f64>, Array2<f64>),
    k: usize,
) {
    let scale = product_tolerance::<T>(k, b.precision(Family::MatMul)) / tolerance::gemm::<T>(k);
    assert_within(what, got, &(want.clone(), bound * scale));
}

/// Asserts for every variant that `run`, with it selected, gives a result within the
/// bound of the f64 reference (inner dimension `k`); a failure names the variant, then
/// `what`.
fn every_variant_within<T: CudaElement>(
    b: &mut CudaBackend,
    what: &str,
    reference: &(Array2<f64>, Array2<f64>),
    k: usize,
    mut run: impl FnMut(&CudaBackend) -> Array2<T>,
) {
    every_variant(b, Family::MatMul, |b, v| {
        assert_product(b, &format!("{v} {what}"), run(b).view(), reference, k);
    });
}

/// One case through the host form for every variant: inputs and reference computed once.
fn host_case<T: CudaElement>(
    b: &mut CudaBackend,
    rng: &mut Rng,
    (m, n, k): (usize, usize, usize),
    (ta, tb): (Trans, Trans),
    (alpha, beta): (f64, f64),
) {
    let a = operand::<T>(rng, ta, m, k);
    let bm = operand::<T>(rng, tb, k, n);
    let c = rng.matrix::<T>(m, n);
    let g = Gemm::new()
        .alpha(T::from_f64(alpha))
        .beta(T::from_f64(beta))
        .ta(ta)
        .tb(tb);
    let c_arg = (g.beta != T::zero()).then_some(c.view());
    let want = gemm_reference(&g, a.view(), bm.view(), c_arg);
    let what = format!(
        "{} m={m} n={n} k={k} {ta:?}/{tb:?} {alpha} {beta}",
        T::SUFFIX
    );
    every_variant_within(b, &what, &want, k, |b| {
        b.gemm(g, a.view(), bm.view(), c_arg).unwrap()
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn odd_shapes_every_variant_against_f64_reference() {
    let mut b = backend();
    let mut rng = Rng::new(7);
    let mut shapes: Vec<(usize, usize, usize)> = ODD.iter().map(|&s| (s, s, s)).collect();
    shapes.extend([(1, 1000, 7), (1000, 1, 33), (7, 33, 1000), (129, 127, 255)]);
    shapes.extend([(257, 65, 129), (33, 257, 1), (127, 129, 1000), (130, 3, 5)]);
    shapes.extend([(5, 3, 130), (512, 384, 260)]);
    // The small rung's 64×64 tiles (at least as many as the SMs; the shapes above take
    // its 32×32 ones) under split_k's short-K rule.
    shapes.push((703, 770, 201));
    let sizes = Sizes::from_env(Sizes::Medium);
    shapes.retain(|&(m, n, k)| sizes.admits(&[m, n, k]));
    let nn = (Trans::No, Trans::No);
    for &s in &shapes {
        host_case::<f32>(&mut b, &mut rng, s, nn, (1.0, 0.0));
        host_case::<f64>(&mut b, &mut rng, s, nn, (-1.5, 0.5));
    }
    for s in [(33, 65, 127), (129, 1, 257), (255, 7, 129), (257, 255, 65)] {
        for t in TRANS {
            host_case::<f32>(&mut b, &mut rng, s, t, (-1.5, 0.5));
            host_case::<f64>(&mut b, &mut rng, s, t, (1.0, 0.0));
        }
    }
}

/// f64 `split_k` where it runs stream-K on the FP64 tensor cores: C's tiles a little
/// over one wave (all of them dealt out as parts) and a little over two (the first wave
/// one tile to a block beside the stream blocks), with edges of C, a K that is not a
/// whole number of K-tiles or of 16-byte chunks, and α and β not 1 and 0. The shapes are
/// found from this device's plans (its SM count sets the waves); each result must be
/// within the bound and the same bits run to run.
#[test]
#[ignore = "needs a CUDA device"]
fn f64_stream_k_parts_within_the_bound_and_reproducible() {
    let mut b = backend();
    let mut rng = Rng::new(23);
    b.set_variant(Family::MatMul, "split_k").unwrap();
    let plan = |b: &CudaBackend, mnk: [usize; 3]| b.plan(Family::MatMul, DType::F64, &mnk);
    // 1000 rows (8 tile rows, the last part empty); widths of 8 + 64·i columns.
    let find = |b: &CudaBackend, k: usize, data_parallel: bool| {
        (1..400)
            .map(|i| [1000, 8 + 64 * i, k])
            .find(|&mnk| {
                plan(b, mnk).is_some_and(|p| {
                    p.contains("stream-K") && p.contains("the other 0 ") != data_parallel
                })
            })
            .unwrap_or_else(|| panic!("no shape runs stream-K with k = {k}"))
    };
    let g = Gemm::new().alpha(-1.5).beta(0.5);
    for mnk in [find(&b, 999, false), find(&b, 1000, true)] {
        let [m, n, k] = mnk;
        let what = format!("split_k f64 {m}x{n}x{k}: {}", plan(&b, mnk).unwrap());
        println!("{what}");
        let a = rng.matrix::<f64>(m, k);
        let x = rng.matrix::<f64>(k, n);
        let c = rng.matrix::<f64>(m, n);
        let want = gemm_reference(&g, a.view(), x.view(), Some(c.view()));
        let (da, dx) = (b.upload(a.view()).unwrap(), b.upload(x.view()).unwrap());
        let got = common::assert_same_every_run(&what, 3, || {
            let mut dc = b.upload(c.view()).unwrap();
            b.gemm_dev(g, &da, &dx, &mut dc).unwrap();
            b.download(&dc).unwrap()
        });
        assert_product(&b, &what, got.view(), &want, k);
    }
}

/// A resident product into a NaN-poisoned C with β = 0, for every variant: every
/// element must be written and within the bound.
fn poisoned<T: CudaElement>(b: &mut CudaBackend, rng: &mut Rng, (m, n, k): (usize, usize, usize)) {
    let a = rng.matrix::<T>(m, k);
    let bm = rng.matrix::<T>(k, n);
    let (da, db) = (b.upload(a.view()).unwrap(), b.upload(bm.view()).unwrap());
    let g = Gemm::new().alpha(T::from_f64(0.75));
    let want = gemm_reference(&g, a.view(), bm.view(), None);
    let nan = Array2::<T>::from_elem((m, n), T::nan());
    let what = format!("{} m={m} n={n} k={k} over NaN", T::SUFFIX);
    every_variant_within(b, &what, &want, k, |b| {
        let mut dc = b.upload(nan.view()).unwrap();
        b.gemm_dev(g, &da, &db, &mut dc).unwrap();
        b.download(&dc).unwrap()
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_poisoned_output_is_fully_written() {
    let mut b = backend();
    let mut rng = Rng::new(11);
    for s in [
        (1, 1, 1),
        (7, 33, 65),
        (129, 257, 127),
        (1000, 255, 33),
        (128, 128, 16),
    ] {
        if !Sizes::from_env(Sizes::Medium).admits(&[s.0, s.1, s.2]) {
            continue;
        }
        poisoned::<f32>(&mut b, &mut rng, s);
        poisoned::<f64>(&mut b, &mut rng, s);
    }
}

/// On resident data with the current variant: C = A·B, then D ← α·op(C)·op(X) + β·D
/// for every transpose pair, C never leaving the device between the two; each result
/// checked against the f64 product of the downloaded operands.
fn resident<T: CudaElement>(b: &CudaBackend, rng: &mut Rng) {
    let v = b.variant(Family::MatMul);
    let (m, n, k) = (129, 65, 257);
    let a = rng.matrix::<T>(m, k);
    let bm = rng.matrix::<T>(k, n);
    let (da, db) = (b.upload(a.view()).unwrap(), b.upload(bm.view()).unwrap());
    let dc = b.matmul_dev(&da, &db).unwrap();
    let c = b.download(&dc).unwrap();
    let want = gemm_reference(&Gemm::new(), a.view(), bm.view(), None);
    assert_product(b, &format!("{v} {} A·B", T::SUFFIX), c.view(), &want, k);
    for (ta, tx) in TRANS {
        // op(C) is m×n or n×m; X is chosen so that op(X) has op(C)'s columns as rows.
        let (r, inner) = ta.dim((m, n));
        let x = operand::<T>(rng, tx, inner, 33);
        let d0 = rng.matrix::<T>(r, 33);
        let (dx, mut dd) = (b.upload(x.view()).unwrap(), b.upload(d0.view()).unwrap());
        let g = Gemm::new()
            .alpha(T::from_f64(-0.5))
            .beta(T::from_f64(2.0))
            .ta(ta)
            .tb(tx);
        b.gemm_dev(g, &dc, &dx, &mut dd).unwrap();
        let got = b.download(&dd).unwrap();
        let want = gemm_reference(&g, c.view(), x.view(), Some(d0.view()));
        let what = format!("{v} {} op(C)·op(X) {ta:?}/{tx:?}", T::SUFFIX);
        assert_product(b, &what, got.view(), &want, inner);
    }
}

common::every_variant_test!(
    resident_chain_every_variant_every_transpose_pair,
    Family::MatMul,
    resident,
    seed 13
);

#[test]
#[ignore = "needs a CUDA device"]
fn empty_shapes_and_zero_alpha() {
    let mut b = backend();
    let a = Array2::<f32>::ones((3, 0));
    let bm = Array2::<f32>::ones((0, 4));
    let c = Array2::<f32>::from_elem((3, 4), 1.5);
    // K = 0: beta·C, or zeros without reading C.
    let got = b.gemm(Gemm::new().beta(2.0), a.view(), bm.view(), Some(c.view()));
    assert_eq!(got.unwrap(), Array2::from_elem((3, 4), 3.0));
    assert_eq!(
        b.matmul(a.view(), bm.view()).unwrap(),
        Array2::zeros((3, 4))
    );
    // M = 0 or N = 0: empty results of the right shape.
    let (x, y) = (Array2::<f64>::ones((0, 5)), Array2::<f64>::ones((5, 2)));
    assert_eq!(b.matmul(x.view(), y.view()).unwrap().dim(), (0, 2));
    let (x, y) = (Array2::<f64>::ones((5, 3)), Array2::<f64>::ones((3, 0)));
    assert_eq!(b.matmul(x.view(), y.view()).unwrap().dim(), (5, 0));
    // Resident, K = 0 and alpha = 0 (with A infinite), over NaN: zeros (beta = 0) or
    // beta·C; neither reads A or B.
    let nan = Array2::<f32>::from_elem((3, 4), f32::NAN);
    let inf = Array2::<f32>::from_elem((3, 2), f32::INFINITY);
    let y = Array2::<f32>::ones((2, 4));
    every_variant(&mut b, Family::MatMul, |b, v| {
        let (da, db) = (b.upload(a.view()).unwrap(), b.upload(bm.view()).unwrap());
        let mut dc = b.upload(nan.view()).unwrap();
        b.gemm_dev(Gemm::new(), &da, &db, &mut dc).unwrap();
        assert_eq!(b.download(&dc).unwrap(), Array2::zeros((3, 4)), "{v}");
        let (dx, dy) = (b.upload(inf.view()).unwrap(), b.upload(y.view()).unwrap());
        let mut dc = b.upload(c.view()).unwrap();
        let g = Gemm::new().alpha(0.0).beta(-2.0);
        b.gemm_dev(g, &dx, &dy, &mut dc).unwrap();
        assert_eq!(
            b.download(&dc).unwrap(),
            Array2::from_elem((3, 4), -3.0),
            "{v}"
        );
    });
}

/// Regression: the K = 0 / alpha = 0 shortcut returned beta·C in C's own memory order.
#[test]
#[ignore = "needs a CUDA device"]
fn shortcut_result_is_c_ordered_for_any_layout_of_c() {
    let b = backend();
    let c = Array2::<f64>::from_shape_fn((4, 3), |(i, j)| (i * 3 + j) as f64);
    let a = Array2::<f64>::ones((3, 5));
    for (alpha, k) in [(1.0, 0), (0.0, 5)] {
        let a = a.slice(ndarray::s![.., ..k]);
        let bm = Array2::<f64>::ones((k, 4));
        let g = Gemm::new().alpha(alpha).beta(2.0);
        let got = b.gemm(g, a, bm.view(), Some(c.t())).unwrap();
        assert!(
            got.is_standard_layout(),
            "alpha={alpha} k={k}: not C-ordered"
        );
        assert_eq!(got, c.t().mapv(|x| 2.0 * x));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn bad_shapes_and_names_are_errors() {
    let mut b = backend();
    let yes = Trans::Yes;
    let a = Array2::<f32>::ones((3, 4));
    let e = b.matmul(a.view(), a.view()).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let g = Gemm::new().tb(yes).beta(1.0);
    let e = b.gemm(g, a.view(), a.view(), Some(a.view())).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // Resident: inner dimensions that differ, and a C of the wrong shape.
    let da = b.upload(a.view()).unwrap();
    let mut c: Matrix<f32> = b.alloc(3, 3).unwrap();
    let e = b.gemm_dev(Gemm::new(), &da, &da, &mut c).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let mut wrong: Matrix<f32> = b.alloc(4, 4).unwrap();
    let e = b.gemm_dev(Gemm::new().tb(yes), &da, &da, &mut wrong);
    let e = e.unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    assert_unknown_variant_refused(&mut b, Family::MatMul, "no_such");
    b.gemm_dev(Gemm::new().tb(yes), &da, &da, &mut c).unwrap();
    assert_eq!(b.download(&c).unwrap(), Array2::from_elem((3, 3), 4.0));
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_is_bitwise_reproducible() {
    let mut b = backend();
    let mut rng = Rng::new(17);
    // More than one k-tile and an edge tile each way, at either size.
    let (m, n, k) = match Sizes::from_env(Sizes::Medium) {
        Sizes::Medium => (300, 259, 517),
        Sizes::Small => (130, 259, 100),
    };
    let a = rng.matrix::<f32>(m, k);
    let bm = rng.matrix::<f32>(k, n);
    let (da, db) = (b.upload(a.view()).unwrap(), b.upload(bm.view()).unwrap());
    every_variant(&mut b, Family::MatMul, |b, v| {
        common::assert_same_every_run(v, 3, || {
            let mut dc = b.alloc(m, n).unwrap();
            b.gemm_dev(Gemm::new(), &da, &db, &mut dc).unwrap();
            b.download(&dc).unwrap()
        });
    });
}
