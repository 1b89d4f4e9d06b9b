//! Tests of the GEMM ladder: conformance for every variant; every variant against an f64
//! reference (error-analysis bound) on odd shapes and all four transpose pairs; outputs
//! poisoned with NaN; the device-level function on resident data; empty shapes and
//! errors; run-to-run reproducibility. Run on a GPU machine with
//! `cargo test -p ndgpu-cuda --test gpu_matmul -- --ignored`.

use std::collections::HashSet;

use ndarray::{Array2, ArrayView2};
use ndgpu_conformance::compare::{describe_ratio, gemm_bound, gemm_f64, max_ratio};
use ndgpu_conformance::data::Rng;
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{Backend, Error, Family, MatMul, Trans};
use ndgpu_cuda::kernels::KernelFile;
use ndgpu_cuda::ops::matmul::{self, DEFAULT_KERNELS, VARIANTS};
use ndgpu_cuda::{CudaBackend, CudaElement, DeviceMatrix, Gpu};

type Dm<T> = DeviceMatrix<T>;

const ODD: &[usize] = &[1, 7, 33, 65, 127, 129, 255, 257, 1000];
const TRANS: [(Trans, Trans); 4] = [
    (Trans::No, Trans::No),
    (Trans::No, Trans::Yes),
    (Trans::Yes, Trans::No),
    (Trans::Yes, Trans::Yes),
];

fn backend() -> CudaBackend {
    CudaBackend::new(0).expect("a CUDA device")
}

/// An operand that is `rows × cols` after `t` is applied.
fn operand<T: CudaElement>(rng: &mut Rng, t: Trans, rows: usize, cols: usize) -> Array2<T> {
    match t {
        Trans::No => rng.matrix(rows, cols),
        Trans::Yes => rng.matrix(cols, rows),
    }
}

/// Asserts that `got` is within the gemm bound of the f64 reference (NaN fails).
fn assert_close<T: CudaElement>(
    what: &str,
    got: ArrayView2<T>,
    want: &Array2<f64>,
    bound: &Array2<f64>,
) {
    let worst = max_ratio(got, want.view(), bound.view());
    assert!(
        worst.0 <= 1.0 && (worst.1.is_some() || got.is_empty()),
        "{}",
        describe_ratio(what, got, want.view(), worst)
    );
}

/// The f64 reference of `alpha·op(A)·op(B) + beta·C` and its elementwise bound.
fn reference<T: CudaElement>(
    alpha: T,
    (a, ta): (ArrayView2<T>, Trans),
    (b, tb): (ArrayView2<T>, Trans),
    beta: T,
    c: Option<ArrayView2<T>>,
) -> (Array2<f64>, Array2<f64>) {
    (
        gemm_f64(alpha, a, ta, b, tb, beta, c),
        gemm_bound(alpha, a, ta, b, tb, beta, c),
    )
}

fn up<T: CudaElement>(gpu: &Gpu, x: &Array2<T>) -> DeviceMatrix<T> {
    gpu.upload(x.view()).unwrap()
}

/// Device-level `C ← alpha·A·B + beta·C` (no transposes).
fn nn<T: CudaElement>(gpu: &Gpu, v: &str, alpha: T, a: &Dm<T>, b: &Dm<T>, beta: T, c: &mut Dm<T>) {
    matmul::gemm(gpu, v, alpha, a, Trans::No, b, Trans::No, beta, c).unwrap();
}

#[test]
fn variant_names_are_unique_and_every_kernel_is_in_the_source() {
    let unique: HashSet<_> = VARIANTS.iter().collect();
    assert_eq!(
        unique.len(),
        VARIANTS.len(),
        "duplicate variant in {VARIANTS:?}"
    );
    let src = KernelFile::MatMul.source();
    for v in VARIANTS {
        assert!(
            src.contains(&format!("GEMM_ENTRIES({v},")),
            "no gemm_{v}_{{f32,f64}} entry points in matmul.cu"
        );
    }
    let want: Vec<String> = ["f32", "f64"]
        .iter()
        .map(|s| format!("gemm_{}_{s}", VARIANTS[0]))
        .collect();
    assert_eq!(DEFAULT_KERNELS, want.as_slice());
}

#[test]
#[ignore = "needs a CUDA device"]
fn conformance_every_variant() {
    let mut b = backend();
    for v in b.variants(Family::MatMul) {
        b.set_variant(Family::MatMul, v).unwrap();
        assert_family(&b, Family::MatMul, Sizes::from_env(Sizes::Medium));
    }
}

/// One case through the trait for every variant: inputs and reference computed once.
fn trait_case<T: CudaElement>(
    b: &mut CudaBackend,
    rng: &mut Rng,
    (m, n, k): (usize, usize, usize),
    (ta, tb): (Trans, Trans),
    (alpha, beta): (f64, f64),
) {
    let a = operand::<T>(rng, ta, m, k);
    let bm = operand::<T>(rng, tb, k, n);
    let c = rng.matrix::<T>(m, n);
    let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
    let c_arg = (beta != T::zero()).then_some(c.view());
    let (want, bound) = reference(alpha, (a.view(), ta), (bm.view(), tb), beta, c_arg);
    for v in VARIANTS {
        b.set_variant(Family::MatMul, v).unwrap();
        let got = b.gemm(alpha, a.view(), ta, bm.view(), tb, beta, c_arg);
        let what = format!(
            "{v} {} m={m} n={n} k={k} {ta:?}/{tb:?} {alpha} {beta}",
            T::SUFFIX
        );
        assert_close(&what, got.unwrap().view(), &want, &bound);
    }
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
    let sizes = Sizes::from_env(Sizes::Medium);
    shapes.retain(|&(m, n, k)| sizes.admits(&[m, n, k]));
    let nn = (Trans::No, Trans::No);
    for &s in &shapes {
        trait_case::<f32>(&mut b, &mut rng, s, nn, (1.0, 0.0));
        trait_case::<f64>(&mut b, &mut rng, s, nn, (-1.5, 0.5));
    }
    for s in [(33, 65, 127), (129, 1, 257), (255, 7, 129), (257, 255, 65)] {
        for t in TRANS {
            trait_case::<f32>(&mut b, &mut rng, s, t, (-1.5, 0.5));
            trait_case::<f64>(&mut b, &mut rng, s, t, (1.0, 0.0));
        }
    }
}

/// Device-level product into a NaN-poisoned C with beta = 0: every element must be
/// written and within the bound.
fn poisoned<T: CudaElement>(gpu: &Gpu, rng: &mut Rng, (m, n, k): (usize, usize, usize)) {
    let a = rng.matrix::<T>(m, k);
    let bm = rng.matrix::<T>(k, n);
    let (da, db) = (up(gpu, &a), up(gpu, &bm));
    let (alpha, zero) = (T::from_f64(0.75), T::zero());
    let (want, bound) = reference(
        alpha,
        (a.view(), Trans::No),
        (bm.view(), Trans::No),
        zero,
        None,
    );
    let nan = Array2::<T>::from_elem((m, n), T::nan());
    for v in VARIANTS {
        let mut dc = up(gpu, &nan);
        nn(gpu, v, alpha, &da, &db, zero, &mut dc);
        let got = gpu.download(&dc).unwrap();
        let what = format!("{v} {} m={m} n={n} k={k} over NaN", T::SUFFIX);
        assert_close(&what, got.view(), &want, &bound);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_poisoned_output_is_fully_written() {
    let b = backend();
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
        poisoned::<f32>(b.gpu(), &mut rng, s);
        poisoned::<f64>(b.gpu(), &mut rng, s);
    }
}

/// On resident data: C = A·B, then D ← alpha·op(C)·op(X) + beta·D for every transpose
/// pair (device-level transposes), each checked against the f64 product of the
/// downloaded operands.
fn resident<T: CudaElement>(gpu: &Gpu, rng: &mut Rng, variant: &str) {
    let (m, n, k) = (129, 65, 257);
    let a = rng.matrix::<T>(m, k);
    let bm = rng.matrix::<T>(k, n);
    let (da, db) = (up(gpu, &a), up(gpu, &bm));
    let mut dc = gpu.alloc_matrix("test", m, n).unwrap();
    let (one, zero) = (T::one(), T::zero());
    nn(gpu, variant, one, &da, &db, zero, &mut dc);
    let c = gpu.download(&dc).unwrap();
    let (want, bound) = reference(
        one,
        (a.view(), Trans::No),
        (bm.view(), Trans::No),
        zero,
        None,
    );
    assert_close(
        &format!("{variant} {} A·B", T::SUFFIX),
        c.view(),
        &want,
        &bound,
    );
    let (alpha, beta) = (T::from_f64(-0.5), T::from_f64(2.0));
    for (ta, tx) in TRANS {
        // op(C) is m×n or n×m; X is chosen so that op(X) has op(C)'s columns as rows.
        let (r, inner) = match ta {
            Trans::No => (m, n),
            Trans::Yes => (n, m),
        };
        let x = operand::<T>(rng, tx, inner, 33);
        let d0 = rng.matrix::<T>(r, 33);
        let (dx, mut dd) = (up(gpu, &x), up(gpu, &d0));
        matmul::gemm(gpu, variant, alpha, &dc, ta, &dx, tx, beta, &mut dd).unwrap();
        let got = gpu.download(&dd).unwrap();
        let (want, bound) = reference(alpha, (c.view(), ta), (x.view(), tx), beta, Some(d0.view()));
        let what = format!("{variant} {} op(C)·op(X) {ta:?}/{tx:?}", T::SUFFIX);
        assert_close(&what, got.view(), &want, &bound);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_level_on_resident_data_every_transpose_pair() {
    let b = backend();
    let mut rng = Rng::new(13);
    for v in VARIANTS {
        resident::<f32>(b.gpu(), &mut rng, v);
        resident::<f64>(b.gpu(), &mut rng, v);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn empty_shapes_and_zero_alpha() {
    let b = backend();
    let gpu = b.gpu();
    let a = Array2::<f32>::ones((3, 0));
    let bm = Array2::<f32>::ones((0, 4));
    let c = Array2::<f32>::from_elem((3, 4), 1.5);
    let no = Trans::No;
    // K = 0: beta·C, or zeros without reading C.
    let got = b.gemm(1.0, a.view(), no, bm.view(), no, 2.0, Some(c.view()));
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
    // Device level, K = 0 and alpha = 0, over NaN: zeros (beta = 0) or beta·C.
    let nan = Array2::<f32>::from_elem((3, 4), f32::NAN);
    let (da, db, mut dc) = (up(gpu, &a), up(gpu, &bm), up(gpu, &nan));
    nn(gpu, VARIANTS[0], 1.0, &da, &db, 0.0, &mut dc);
    assert_eq!(gpu.download(&dc).unwrap(), Array2::zeros((3, 4)));
    let x = Array2::<f32>::from_elem((3, 2), f32::INFINITY);
    let y = Array2::<f32>::ones((2, 4));
    let (dx, dy, mut dc) = (up(gpu, &x), up(gpu, &y), up(gpu, &c));
    nn(gpu, VARIANTS[0], 0.0, &dx, &dy, -2.0, &mut dc);
    assert_eq!(gpu.download(&dc).unwrap(), Array2::from_elem((3, 4), -3.0));
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
        let got = b.gemm(alpha, a, Trans::No, bm.view(), Trans::No, 2.0, Some(c.t()));
        let got = got.unwrap();
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
    let b = backend();
    let gpu = b.gpu();
    let (no, yes) = (Trans::No, Trans::Yes);
    let a = Array2::<f32>::ones((3, 4));
    let e = b.matmul(a.view(), a.view()).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let e = b.gemm(1.0, a.view(), no, a.view(), yes, 1.0, Some(a.view()));
    let e = e.unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let da = up(gpu, &a);
    let mut wrong = gpu.alloc_matrix::<f32>("test", 4, 4).unwrap();
    let e = matmul::gemm(gpu, VARIANTS[0], 1.0, &da, no, &da, yes, 0.0, &mut wrong);
    let e = e.unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let mut c = gpu.alloc_matrix::<f32>("test", 3, 3).unwrap();
    let e = matmul::gemm(gpu, "no_such", 1.0, &da, no, &da, yes, 0.0, &mut c).unwrap_err();
    assert!(matches!(e, Error::UnknownVariant { .. }), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_is_bitwise_reproducible() {
    let b = backend();
    let gpu = b.gpu();
    let mut rng = Rng::new(17);
    // More than one k-tile and an edge tile each way, at either size.
    let (m, n, k) = match Sizes::from_env(Sizes::Medium) {
        Sizes::Medium => (300, 259, 517),
        Sizes::Small => (130, 259, 100),
    };
    let a = rng.matrix::<f32>(m, k);
    let bm = rng.matrix::<f32>(k, n);
    let (da, db) = (up(gpu, &a), up(gpu, &bm));
    for v in VARIANTS {
        let mut runs = Vec::new();
        for _ in 0..3 {
            let mut dc = gpu.alloc_matrix("test", m, n).unwrap();
            nn(gpu, v, 1.0, &da, &db, 0.0, &mut dc);
            let c = gpu.download(&dc).unwrap();
            runs.push(c.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        }
        assert!(
            runs.windows(2).all(|w| w[0] == w[1]),
            "{v} differs between runs"
        );
    }
}
