//! Tests of the M·Mᵀ ladder: conformance for every variant; every variant against an f64
//! reference (error-analysis bound) on odd shapes, exactly symmetric; outputs poisoned
//! with NaN; the device-level function on resident data; empty shapes and errors;
//! run-to-run reproducibility. Run on a GPU machine with
//! `cargo test -p ndgpu-cuda --test gpu_gram -- --ignored`.

use std::collections::HashSet;

use ndarray::{Array2, ArrayView2};
use ndgpu_conformance::compare::{describe_ratio, gemm_bound, gemm_f64, max_ratio};
use ndgpu_conformance::data::Rng;
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{Backend, Error, Family, MatMul, Trans};
use ndgpu_cuda::kernels::KernelFile;
use ndgpu_cuda::ops::gram::{self, DEFAULT_KERNELS, VARIANTS};
use ndgpu_cuda::ops::matmul;
use ndgpu_cuda::{CudaBackend, CudaElement, Gpu};

const ODD: &[usize] = &[1, 7, 33, 65, 127, 129, 255, 257, 1000];

fn backend() -> CudaBackend {
    CudaBackend::new(0).expect("a CUDA device")
}

/// Asserts that `got` is within the bound of `m·mᵀ` in f64 and exactly symmetric.
fn assert_gram<T: CudaElement>(what: &str, m: ArrayView2<T>, got: ArrayView2<T>) {
    let (one, zero) = (T::one(), T::zero());
    let want = gemm_f64(one, m, Trans::No, m, Trans::Yes, zero, None);
    let bound = gemm_bound(one, m, Trans::No, m, Trans::Yes, zero, None);
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

#[test]
fn variant_names_are_unique_and_every_kernel_is_in_the_source() {
    let unique: HashSet<_> = VARIANTS.iter().collect();
    assert_eq!(
        unique.len(),
        VARIANTS.len(),
        "duplicate variant in {VARIANTS:?}"
    );
    let src = KernelFile::Gram.source();
    for v in VARIANTS {
        assert!(
            src.contains(&format!("GRAM_ENTRIES({v},")),
            "no gram_{v}_{{f32,f64}} entry points in gram.cu"
        );
    }
    let want: Vec<String> = ["f32", "f64"]
        .iter()
        .map(|s| format!("gram_{}_{s}", VARIANTS[0]))
        .collect();
    assert_eq!(DEFAULT_KERNELS, want.as_slice());
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
        for v in VARIANTS {
            b.set_variant(Family::Gram, v).unwrap();
            let g = MatMul::<f32>::gram(&b, m32.view()).unwrap();
            assert_gram(&format!("{v} f32 n={n} k={k}"), m32.view(), g.view());
            let g = MatMul::<f64>::gram(&b, m64.view()).unwrap();
            assert_gram(&format!("{v} f64 n={n} k={k}"), m64.view(), g.view());
        }
    }
}

/// Device-level gram into a NaN-poisoned output: every element must be written.
fn poisoned<T: CudaElement>(gpu: &Gpu, rng: &mut Rng, n: usize, k: usize) {
    let m = rng.matrix::<T>(n, k);
    let dm = gpu.upload(m.view()).unwrap();
    let nan = Array2::<T>::from_elem((n, n), T::nan());
    for v in VARIANTS {
        let mut out = gpu.upload(nan.view()).unwrap();
        gram::gram(gpu, v, &dm, &mut out).unwrap();
        let got = gpu.download(&out).unwrap();
        assert_gram(
            &format!("{v} {} n={n} k={k} over NaN", T::SUFFIX),
            m.view(),
            got.view(),
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_poisoned_output_is_fully_written() {
    let b = backend();
    let mut rng = Rng::new(19);
    let sizes = Sizes::from_env(Sizes::Medium);
    for (n, k) in [(1, 1), (7, 65), (129, 33), (257, 130), (384, 16), (1000, 3)] {
        if !sizes.admits(&[n, k]) {
            continue;
        }
        poisoned::<f32>(b.gpu(), &mut rng, n, k);
        poisoned::<f64>(b.gpu(), &mut rng, n, k);
    }
}

/// On resident data: the gram of a product computed on the device, checked against the
/// f64 gram of the downloaded product.
fn resident<T: CudaElement>(gpu: &Gpu, rng: &mut Rng, variant: &str) {
    let a = rng.matrix::<T>(257, 100);
    let bm = rng.matrix::<T>(100, 129);
    let (da, db) = (
        gpu.upload(a.view()).unwrap(),
        gpu.upload(bm.view()).unwrap(),
    );
    let mut dc = gpu.alloc_matrix("test", 257, 129).unwrap();
    let (one, zero) = (T::one(), T::zero());
    matmul::gemm(
        gpu,
        matmul::VARIANTS[0],
        one,
        &da,
        Trans::No,
        &db,
        Trans::No,
        zero,
        &mut dc,
    )
    .unwrap();
    let mut dg = gpu.alloc_matrix("test", 257, 257).unwrap();
    gram::gram(gpu, variant, &dc, &mut dg).unwrap();
    let c = gpu.download(&dc).unwrap();
    let g = gpu.download(&dg).unwrap();
    assert_gram(
        &format!("{variant} {} gram(A·B)", T::SUFFIX),
        c.view(),
        g.view(),
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_level_on_resident_data() {
    let b = backend();
    let mut rng = Rng::new(23);
    for v in VARIANTS {
        resident::<f32>(b.gpu(), &mut rng, v);
        resident::<f64>(b.gpu(), &mut rng, v);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn empty_shapes_bad_outputs_and_names() {
    let b = backend();
    let gpu = b.gpu();
    let g = MatMul::<f32>::gram(&b, Array2::<f32>::ones((0, 3)).view()).unwrap();
    assert_eq!(g.dim(), (0, 0));
    let g = MatMul::<f64>::gram(&b, Array2::<f64>::ones((4, 0)).view()).unwrap();
    assert_eq!(g, Array2::zeros((4, 4)));
    // K = 0 at the device level over NaN: zeros.
    let dm = gpu.upload(Array2::<f32>::ones((3, 0)).view()).unwrap();
    let mut out = gpu
        .upload(Array2::from_elem((3, 3), f32::NAN).view())
        .unwrap();
    gram::gram(gpu, VARIANTS[0], &dm, &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), Array2::zeros((3, 3)));
    let dm = gpu.upload(Array2::<f32>::ones((3, 2)).view()).unwrap();
    let mut wrong = gpu.alloc_matrix::<f32>("test", 3, 2).unwrap();
    let e = gram::gram(gpu, VARIANTS[0], &dm, &mut wrong).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let mut out = gpu.alloc_matrix::<f32>("test", 3, 3).unwrap();
    let e = gram::gram(gpu, "no_such", &dm, &mut out).unwrap_err();
    assert!(matches!(e, Error::UnknownVariant { .. }), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_is_bitwise_reproducible() {
    let b = backend();
    let gpu = b.gpu();
    let mut rng = Rng::new(29);
    // More than one k-tile and an edge tile each way, at either size.
    let (n, k) = match Sizes::from_env(Sizes::Medium) {
        Sizes::Medium => (333, 517),
        Sizes::Small => (133, 259),
    };
    let m = rng.matrix::<f32>(n, k);
    let dm = gpu.upload(m.view()).unwrap();
    for v in VARIANTS {
        let mut runs = Vec::new();
        for _ in 0..3 {
            let mut out = gpu.alloc_matrix("test", n, n).unwrap();
            gram::gram(gpu, v, &dm, &mut out).unwrap();
            let g = gpu.download(&out).unwrap();
            runs.push(g.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        }
        assert!(
            runs.windows(2).all(|w| w[0] == w[1]),
            "{v} differs between runs"
        );
    }
}
