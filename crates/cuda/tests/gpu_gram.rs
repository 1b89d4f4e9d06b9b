//! Tests of the M·Mᵀ ladder through the trait: the default kernels and every variant
//! against `kernels/gram.cu`; conformance for every variant; every variant against an
//! f64 reference (error-analysis bound) on odd shapes, exactly symmetric; outputs over
//! memory poisoned with NaN; the gram of a product that stays on the device; empty
//! shapes and errors; run-to-run reproducibility.
//!
//! Only the check of the default kernels against the source needs no device; the rest
//! are ignored without one. Run them on a GPU machine with
//! `cargo test -p ndgpu-cuda --test gpu_gram -- --ignored`.

mod common;

use common::{assert_unknown_variant_refused, backend, every_variant, GRAM, ODD};
use ndarray::{Array2, ArrayView2};
use ndgpu_conformance::data::Rng;
use ndgpu_conformance::Sizes;
use ndgpu_core::{Backend, Family, Gemm, Gram, MatMul, Matrix, Memory, Trans};
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::CudaElement;

common::kernel_source_tests!(GRAM);
common::conformance_test!(conformance_every_variant, Family::Gram);

/// Asserts that `got` is within the bound of `m·mᵀ` in f64 and exactly symmetric.
fn assert_gram<T: CudaElement>(what: &str, m: ArrayView2<T>, got: ArrayView2<T>) {
    let g = Gemm::new().tb(Trans::Yes);
    common::assert_within(what, got, &common::gemm_reference(&g, m, m, None));
    for ((i, j), v) in got.indexed_iter() {
        let (v, w) = (v.as_f64(), got[[j, i]].as_f64());
        assert!(
            v.to_bits() == w.to_bits(),
            "{what}: not symmetric: C[{i}][{j}] = {v:e}, C[{j}][{i}] = {w:e}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn odd_shapes_every_variant_exactly_symmetric() {
    let mut b = backend();
    let mut rng = Rng::new(5);
    let mut shapes: Vec<(usize, usize)> = Vec::new();
    for &n in ODD {
        for k in [1, 7, 33, 128, 257] {
            shapes.push((n, k));
        }
    }
    shapes.extend([(1000, 1000), (384, 17), (256, 256)]);
    let sizes = Sizes::from_env(Sizes::Medium);
    shapes.retain(|&(n, k)| sizes.admits(&[n, k]));
    for (n, k) in shapes {
        let m32 = rng.matrix::<f32>(n, k);
        let m64 = rng.matrix::<f64>(n, k);
        every_variant(&mut b, Family::Gram, |b, v| {
            let g = b.gram(m32.view()).unwrap();
            assert_gram(&format!("{v} f32 n={n} k={k}"), m32.view(), g.view());
            let g = b.gram(m64.view()).unwrap();
            assert_gram(&format!("{v} f64 n={n} k={k}"), m64.view(), g.view());
        });
    }
}

/// `gram_dev` of `dm` over poisoned memory (the trait's gram makes its own output).
fn gram_over_nan<T: CudaElement>(b: &CudaBackend, dm: &Matrix<T>) -> Array2<T> {
    common::poison_next_result::<T>(b, dm.rows(), dm.rows());
    let g = b.gram_dev(dm).unwrap();
    b.download(&g).unwrap()
}

/// The resident gram of every variant over NaN-poisoned memory: every element must be
/// written, within the bound and symmetric.
fn poisoned<T: CudaElement>(b: &mut CudaBackend, rng: &mut Rng, n: usize, k: usize) {
    let m = rng.matrix::<T>(n, k);
    let dm = b.upload(m.view()).unwrap();
    every_variant(b, Family::Gram, |b, v| {
        let got = gram_over_nan(b, &dm);
        let what = format!("{v} {} n={n} k={k} over NaN", T::SUFFIX);
        assert_gram(&what, m.view(), got.view());
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_poisoned_output_is_fully_written() {
    let mut b = backend();
    let mut rng = Rng::new(19);
    let sizes = Sizes::from_env(Sizes::Medium);
    for (n, k) in [(1, 1), (7, 65), (129, 33), (257, 130), (384, 16), (1000, 3)] {
        if !sizes.admits(&[n, k]) {
            continue;
        }
        poisoned::<f32>(&mut b, &mut rng, n, k);
        poisoned::<f64>(&mut b, &mut rng, n, k);
    }
}

/// On resident data with the current gram variant: the gram of a product that never
/// leaves the device, checked against the f64 gram of the downloaded product.
fn resident<T: CudaElement>(b: &CudaBackend, rng: &mut Rng) {
    let a = rng.matrix::<T>(257, 100);
    let bm = rng.matrix::<T>(100, 129);
    let (da, db) = (b.upload(a.view()).unwrap(), b.upload(bm.view()).unwrap());
    let dc = b.matmul_dev(&da, &db).unwrap();
    let dg = b.gram_dev(&dc).unwrap();
    assert_eq!(dg.dim(), (257, 257));
    let c = b.download(&dc).unwrap();
    let g = b.download(&dg).unwrap();
    let what = format!("{} {} gram(A·B)", b.variant(Family::Gram), T::SUFFIX);
    assert_gram(&what, c.view(), g.view());
}

common::every_variant_test!(
    resident_gram_of_a_product_every_variant,
    Family::Gram,
    resident,
    seed 23
);

#[test]
#[ignore = "needs a CUDA device"]
fn empty_shapes_and_names() {
    let mut b = backend();
    let g = b.gram(Array2::<f32>::ones((0, 3)).view()).unwrap();
    assert_eq!(g.dim(), (0, 0));
    let g = b.gram(Array2::<f64>::ones((4, 0)).view()).unwrap();
    assert_eq!(g, Array2::zeros((4, 4)));
    // K = 0 on resident data over NaN-poisoned memory: zeros, for every variant.
    let dm = b.upload(Array2::<f32>::ones((3, 0)).view()).unwrap();
    every_variant(&mut b, Family::Gram, |b, v| {
        assert_eq!(gram_over_nan(b, &dm), Array2::zeros((3, 3)), "{v}");
    });
    assert_unknown_variant_refused(&mut b, Family::Gram, "no_such");
    let g = b.gram(Array2::<f32>::ones((3, 2)).view()).unwrap();
    assert_eq!(g, Array2::from_elem((3, 3), 2.0));
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_is_bitwise_reproducible() {
    let mut b = backend();
    let mut rng = Rng::new(29);
    // More than one k-tile and an edge tile each way, at either size.
    let (n, k) = match Sizes::from_env(Sizes::Medium) {
        Sizes::Medium => (333, 517),
        Sizes::Small => (133, 259),
    };
    let m = rng.matrix::<f32>(n, k);
    let dm = b.upload(m.view()).unwrap();
    every_variant(&mut b, Family::Gram, |b, v| {
        common::assert_same_every_run(v, 3, || b.download(&b.gram_dev(&dm).unwrap()).unwrap());
    });
}
