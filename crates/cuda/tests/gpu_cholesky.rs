//! GPU tests of the Cholesky ladder: conformance for every variant, LAPACK's residual
//! ratio over sizes around the block edges, the exact first failing pivot (with no NaN
//! left on the device), solves, and the errors.
//! Run on a GPU machine with `cargo test -p ndgpu-cuda --test gpu_cholesky -- --ignored`.

use ndarray::{Array2, ArrayView2};
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{tolerance, Backend, Element, Error, Factorize, Family};
use ndgpu_cpu::CpuBackend;
use ndgpu_cuda::ops::cholesky::{self, VARIANTS};
use ndgpu_cuda::{CudaBackend, CudaElement};

const SIZES: &[usize] = &[1, 2, 31, 64, 65, 127, 200, 513, 1000];

fn backend() -> CudaBackend {
    CudaBackend::new(0).expect("a CUDA device")
}

fn with_variant(variant: &str) -> CudaBackend {
    let mut b = backend();
    b.set_variant(Family::Cholesky, variant).unwrap();
    b
}

fn uniform(rng: &mut SplitMix64) -> f64 {
    2.0 * rng.next_f64() - 1.0
}

/// A well-conditioned SPD matrix, M·Mᵀ/n + I with M uniform in [-1, 1), rounded to T.
fn spd<T: Element>(rng: &mut SplitMix64, n: usize) -> Array2<T> {
    let m = Array2::from_shape_simple_fn((n, n), || uniform(rng));
    let a = m.dot(&m.t()) / n as f64 + Array2::<f64>::eye(n);
    a.mapv(T::from_f64)
}

fn to_f64<T: Element>(a: ArrayView2<T>) -> Array2<f64> {
    a.mapv(|x| x.as_f64())
}

fn norm1(a: &Array2<f64>) -> f64 {
    a.columns()
        .into_iter()
        .map(|c| c.iter().map(|x| x.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// LAPACK's xPOT01 ratio ‖A − L·Lᵀ‖₁ / (n·ε·‖A‖₁), in f64.
fn cholesky_ratio<T: Element>(a: &Array2<T>, l: &Array2<T>) -> f64 {
    let (a, l) = (to_f64(a.view()), to_f64(l.view()));
    let n = a.nrows();
    norm1(&(&a - &l.dot(&l.t()))) / (n as f64 * T::EPS * norm1(&a))
}

/// LAPACK's xPOT02 ratio ‖B − A·X‖₁ / (n·ε·‖A‖₁·‖X‖₁), in f64.
fn solve_ratio<T: Element>(a: &Array2<T>, x: &Array2<T>, b: &Array2<T>) -> f64 {
    let (a, x, b) = (to_f64(a.view()), to_f64(x.view()), to_f64(b.view()));
    let n = a.nrows();
    norm1(&(&b - &a.dot(&x))) / (n as f64 * T::EPS * norm1(&a) * norm1(&x))
}

/// NaN in the strict upper triangle: it must never be read.
fn poison_upper<T: Element>(a: &Array2<T>) -> Array2<T> {
    Array2::from_shape_fn(a.dim(), |(i, j)| if j > i { T::nan() } else { a[[i, j]] })
}

/// An SPD matrix of order n whose leading minors are positive up to order p and whose
/// pivot p is about −½·max(Σₖ L[p][k]², 1), far below the rounding of any dtype.
fn indefinite_at<T: Element>(rng: &mut SplitMix64, n: usize, p: usize) -> Array2<T> {
    let mut a = spd::<T>(rng, n);
    let l = CpuBackend::new().cholesky(to_f64(a.view()).view()).unwrap();
    let taken: f64 = (0..p).map(|k| l[[p, k]] * l[[p, k]]).sum();
    a[[p, p]] = T::from_f64(taken - 0.5 * taken.max(1.0));
    a
}

#[test]
#[ignore = "needs a CUDA device"]
fn conformance_every_variant() {
    let mut b = backend();
    for v in b.variants(Family::Cholesky) {
        b.set_variant(Family::Cholesky, v).unwrap();
        assert_family(&b, Family::Cholesky, Sizes::from_env(Sizes::Medium));
    }
}

fn residuals<T: CudaElement>(variant: &str) {
    let b = with_variant(variant);
    let mut rng = SplitMix64::new(4);
    let sizes = Sizes::from_env(Sizes::Medium);
    for &n in SIZES {
        if !sizes.admits(&[n]) {
            continue;
        }
        let a = spd::<T>(&mut rng, n);
        let l = b.cholesky(poison_upper(&a).view()).unwrap();
        assert_eq!(l.dim(), (n, n));
        for ((i, j), x) in l.indexed_iter() {
            assert!(
                x.is_finite(),
                "{variant} {} n={n}: L[{i},{j}] = {x}",
                T::SUFFIX
            );
            if j > i {
                assert!(
                    *x == T::zero(),
                    "{variant} {} n={n}: L[{i},{j}] = {x} above the diagonal",
                    T::SUFFIX
                );
            }
        }
        let r = cholesky_ratio(&a, &l);
        assert!(
            r <= tolerance::CHOLESKY_RATIO,
            "{variant} {} n={n}: ‖A − L·Lᵀ‖₁/(n·ε·‖A‖₁) = {r:.3e}",
            T::SUFFIX
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn residual_ratio_every_variant_and_size() {
    for v in VARIANTS {
        residuals::<f32>(v);
        residuals::<f64>(v);
    }
}

fn pivots<T: CudaElement>(variant: &str) {
    let b = with_variant(variant);
    let mut rng = SplitMix64::new(5);
    // p = 0, p = n−1, the first and a middle column of the blocked variant's second
    // block (64..127), a later block, and 1×1.
    for (n, p) in [
        (100, 0),
        (100, 99),
        (200, 64),
        (200, 100),
        (513, 300),
        (65, 64),
        (1, 0),
    ] {
        if !Sizes::from_env(Sizes::Medium).admits(&[n]) {
            continue;
        }
        let a = indefinite_at::<T>(&mut rng, n, p);
        match b.cholesky(a.view()) {
            Err(Error::NotPositiveDefinite { pivot, value }) => {
                assert_eq!(
                    pivot,
                    p,
                    "{variant} {} n={n}: wrong pivot (value {value})",
                    T::SUFFIX
                );
                assert!(
                    value < 0.0,
                    "{variant} {} n={n}: pivot value {value}",
                    T::SUFFIX
                );
            }
            other => panic!("{variant} {} n={n} p={p}: {other:?}", T::SUFFIX),
        }
        // On the device: the same error, and nothing non-finite left in the matrix.
        let gpu = b.gpu();
        let mut d = gpu.upload(poison_upper(&a).view()).unwrap();
        let err = cholesky::cholesky(gpu, variant, &mut d).unwrap_err();
        assert!(
            matches!(err, Error::NotPositiveDefinite { pivot, .. } if pivot == p),
            "{err}"
        );
        let left = gpu.download(&d).unwrap();
        assert!(
            left.iter().all(|x| x.is_finite()),
            "{variant} {} n={n} p={p}: non-finite values left on the device",
            T::SUFFIX
        );
    }
    // An exact zero pivot.
    let ones = Array2::from_elem((2, 2), T::one());
    assert!(matches!(
        b.cholesky(ones.view()),
        Err(Error::NotPositiveDefinite { pivot: 1, .. })
    ));
}

#[test]
#[ignore = "needs a CUDA device"]
fn first_failing_pivot_every_variant() {
    for v in VARIANTS {
        pivots::<f32>(v);
        pivots::<f64>(v);
    }
}

fn solves<T: CudaElement>() {
    let b = backend();
    let mut rng = SplitMix64::new(6);
    for (n, nrhs) in [
        (1, 1),
        (2, 3),
        (64, 1),
        (65, 70),
        (200, 7),
        (513, 3),
        (1000, 130),
    ] {
        if !Sizes::from_env(Sizes::Medium).admits(&[n, nrhs]) {
            continue;
        }
        let a = spd::<T>(&mut rng, n);
        let l = b.cholesky(a.view()).unwrap();
        let rhs = Array2::from_shape_simple_fn((n, nrhs), || T::from_f64(uniform(&mut rng)));
        let x = b
            .cholesky_solve(poison_upper(&l).view(), rhs.view())
            .unwrap();
        assert_eq!(x.dim(), (n, nrhs));
        let r = solve_ratio(&a, &x, &rhs);
        assert!(
            r <= tolerance::SOLVE_RATIO,
            "{} n={n} nrhs={nrhs}: ‖B − A·X‖₁/(n·ε·‖A‖₁·‖X‖₁) = {r:.3e}",
            T::SUFFIX
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn solve_residual() {
    solves::<f32>();
    solves::<f64>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn errors_and_empty_shapes() {
    let b = backend();
    let empty = Array2::<f32>::zeros((0, 0));
    assert_eq!(b.cholesky(empty.view()).unwrap().dim(), (0, 0));
    let rect = Array2::<f64>::zeros((3, 2));
    assert!(matches!(
        b.cholesky(rect.view()),
        Err(Error::NotSquare { .. })
    ));
    let mut nan = Array2::<f32>::eye(4);
    nan[[2, 1]] = f32::NAN;
    assert!(matches!(
        b.cholesky(nan.view()),
        Err(Error::NonFinite { .. })
    ));
    let l = Array2::<f64>::eye(3);
    let wrong = Array2::<f64>::zeros((2, 1));
    assert!(matches!(
        b.cholesky_solve(l.view(), wrong.view()),
        Err(Error::ShapeMismatch { .. })
    ));
    let none = Array2::<f64>::zeros((3, 0));
    assert_eq!(
        b.cholesky_solve(l.view(), none.view()).unwrap().dim(),
        (3, 0)
    );
    let mut d = b.gpu().upload(l.view()).unwrap();
    assert!(matches!(
        cholesky::cholesky(b.gpu(), "nope", &mut d),
        Err(Error::UnknownVariant { .. })
    ));
}
