//! Tests of the M·Mᵀ ladder through the trait: the default kernels and every variant
//! against `kernels/gram.cu`; conformance for every variant; every variant against an
//! f64 reference (error-analysis bound) on odd shapes, exactly symmetric; outputs over
//! memory poisoned with NaN; the gram of a product that stays on the device; empty
//! shapes and errors; run-to-run reproducibility.
//!
//! Only the check of the default kernels against the source needs no device; the rest
//! are ignored without one. Run them on a GPU machine with
//! `cargo test -p ndgpu-cuda --test gpu_gram -- --ignored`.

use std::collections::HashSet;

use ndarray::{Array2, ArrayView2};
use ndgpu_conformance::compare::{describe_ratio, gemm_bound, gemm_f64, max_ratio};
use ndgpu_conformance::data::Rng;
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{Backend, Error, Family, Gemm, Gram, MatMul, Matrix, Memory, Trans};
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::CudaElement;

const ODD: &[usize] = &[1, 7, 33, 65, 127, 129, 255, 257, 1000];

fn backend() -> CudaBackend {
    CudaBackend::new(0).expect("a CUDA device")
}

/// The technique the default variant's `gram_` kernels name, after checking that they
/// are its f32 and f64 kernels and nothing else.
fn default_technique() -> String {
    let gram: Vec<&str> = ndgpu_cuda::default_kernels()
        .into_iter()
        .filter(|k| k.starts_with("gram_"))
        .collect();
    let technique = gram
        .first()
        .and_then(|k| k.strip_prefix("gram_"))
        .and_then(|k| k.strip_suffix("_f32"))
        .unwrap_or_else(|| panic!("default gram kernels {gram:?}: no gram_<variant>_f32 first"));
    let want = [
        format!("gram_{technique}_f32"),
        format!("gram_{technique}_f64"),
    ];
    assert_eq!(gram, want, "default gram kernels");
    technique.to_string()
}

/// Asserts that gram.cu defines `gram_{technique}_{f32,f64}`.
fn assert_in_source(technique: &str) {
    assert!(
        KernelFile::Gram
            .source()
            .contains(&format!("GRAM_ENTRIES({technique},")),
        "no gram_{technique}_{{f32,f64}} entry points in gram.cu"
    );
}

#[test]
fn default_kernels_are_one_variant_in_both_dtypes_and_in_the_source() {
    assert_in_source(&default_technique());
}

#[test]
#[ignore = "needs a CUDA device"]
fn variant_names_are_unique_and_every_variant_is_in_the_source() {
    let variants = backend().variants(Family::Gram);
    let unique: HashSet<_> = variants.iter().collect();
    assert_eq!(
        unique.len(),
        variants.len(),
        "duplicate variant in {variants:?}"
    );
    for v in &variants {
        assert_in_source(v);
    }
    assert_eq!(default_technique(), variants[0], "the default variant");
}

/// Asserts that `got` is within the bound of `m·mᵀ` in f64 and exactly symmetric.
fn assert_gram<T: CudaElement>(what: &str, m: ArrayView2<T>, got: ArrayView2<T>) {
    let g = Gemm::new().tb(Trans::Yes);
    let want = gemm_f64(&g, m, m, None);
    let bound = gemm_bound(&g, m, m, None);
    let worst = max_ratio(got, want.view(), bound.view());
    assert!(
        worst.0 <= 1.0 && (worst.1.is_some() || got.is_empty()),
        "{}",
        describe_ratio(what, got, want.view(), worst)
    );
    for ((i, j), v) in got.indexed_iter() {
        let (v, w) = (v.as_f64(), got[[j, i]].as_f64());
        assert!(
            v.to_bits() == w.to_bits(),
            "{what}: not symmetric: C[{i}][{j}] = {v:e}, C[{j}][{i}] = {w:e}"
        );
    }
}

/// `gram_dev` of `dm` over poisoned memory. The trait's gram makes its own output, so
/// the NaN goes where that output will most likely be: an n×n NaN matrix freed just
/// before, whose memory the stream-ordered allocator hands back to the next allocation
/// of that size on the same stream. An element the kernel leaves unwritten then reads
/// as NaN.
fn gram_over_nan<T: CudaElement>(b: &CudaBackend, dm: &Matrix<T>) -> Array2<T> {
    let n = dm.rows();
    drop(
        b.upload(Array2::from_elem((n, n), T::nan()).view())
            .unwrap(),
    );
    let g = b.gram_dev(dm).unwrap();
    b.download(&g).unwrap()
}

#[test]
#[ignore = "needs a CUDA device"]
fn conformance_every_variant() {
    let mut b = backend();
    for v in b.variants(Family::Gram) {
        b.set_variant(Family::Gram, v).unwrap();
        assert_family(&b, Family::Gram, Sizes::from_env(Sizes::Medium));
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
        for v in b.variants(Family::Gram) {
            b.set_variant(Family::Gram, v).unwrap();
            let g = b.gram(m32.view()).unwrap();
            assert_gram(&format!("{v} f32 n={n} k={k}"), m32.view(), g.view());
            let g = b.gram(m64.view()).unwrap();
            assert_gram(&format!("{v} f64 n={n} k={k}"), m64.view(), g.view());
        }
    }
}

/// The resident gram of every variant over NaN-poisoned memory: every element must be
/// written, within the bound and symmetric.
fn poisoned<T: CudaElement>(b: &mut CudaBackend, rng: &mut Rng, n: usize, k: usize) {
    let m = rng.matrix::<T>(n, k);
    let dm = b.upload(m.view()).unwrap();
    for v in b.variants(Family::Gram) {
        b.set_variant(Family::Gram, v).unwrap();
        let got = gram_over_nan(b, &dm);
        let what = format!("{v} {} n={n} k={k} over NaN", T::SUFFIX);
        assert_gram(&what, m.view(), got.view());
    }
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

#[test]
#[ignore = "needs a CUDA device"]
fn resident_gram_of_a_product_every_variant() {
    let mut b = backend();
    let mut rng = Rng::new(23);
    for v in b.variants(Family::Gram) {
        b.set_variant(Family::Gram, v).unwrap();
        resident::<f32>(&b, &mut rng);
        resident::<f64>(&b, &mut rng);
    }
}

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
    for v in b.variants(Family::Gram) {
        b.set_variant(Family::Gram, v).unwrap();
        assert_eq!(gram_over_nan(&b, &dm), Array2::zeros((3, 3)), "{v}");
    }
    // An unknown variant is refused and leaves the current one selected.
    let before = b.variant(Family::Gram);
    let e = b.set_variant(Family::Gram, "no_such").unwrap_err();
    assert!(matches!(e, Error::UnknownVariant { .. }), "{e}");
    assert_eq!(b.variant(Family::Gram), before);
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
    for v in b.variants(Family::Gram) {
        b.set_variant(Family::Gram, v).unwrap();
        let mut runs = Vec::new();
        for _ in 0..3 {
            let g = b.download(&b.gram_dev(&dm).unwrap()).unwrap();
            runs.push(g.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        }
        assert!(
            runs.windows(2).all(|w| w[0] == w[1]),
            "{v} differs between runs"
        );
    }
}
