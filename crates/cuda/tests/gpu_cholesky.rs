//! GPU tests of the Cholesky ladder on resident data: conformance for every variant,
//! LAPACK's residual ratio over sizes around the block edges (only the lower triangle
//! read, the input of `cholesky_dev` left as it was, in place giving the same bits),
//! the exact first failing pivot (also for NaN and Inf in the lower triangle), solves
//! (resident, in place and host forms agreeing bit for bit), empty shapes and errors.
//! Run on a GPU machine with `cargo test -p ndgpu-cuda --test gpu_cholesky -- --ignored`.

mod common;

use common::{assert_holds, backend, poison_upper, random, same_bits, with_variant};
use ndarray::Array2;
use ndgpu_conformance::compare::{cholesky_ratio, solve_ratio, to_f64};
use ndgpu_conformance::Sizes;
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{tolerance, Backend, Element, Error, Factorize, Family, Memory};
use ndgpu_cpu::CpuBackend;
use ndgpu_cuda_runtime::CudaElement;

const SIZES: &[usize] = &[1, 2, 31, 64, 65, 127, 200, 513, 1000];

/// (n, p) for a matrix of order n whose pivot p is the first to fail: p = 0, p = n−1,
/// the first and a middle column of the blocked variant's second block (64..127), a
/// later block, and 1×1.
const PIVOTS: &[(usize, usize)] = &[
    (100, 0),
    (100, 99),
    (200, 64),
    (200, 100),
    (513, 300),
    (65, 64),
    (1, 0),
];

/// (n, nrhs) for the solves.
const SOLVES: &[(usize, usize)] = &[
    (1, 1),
    (2, 3),
    (64, 1),
    (65, 70),
    (200, 7),
    (513, 3),
    (1000, 130),
];

/// A well-conditioned SPD matrix, M·Mᵀ/n + I with M uniform in [-1, 1), rounded to T.
fn spd<T: Element>(rng: &mut SplitMix64, n: usize) -> Array2<T> {
    let m = random::<f64>(rng, n, n);
    let a = m.dot(&m.t()) / n as f64 + Array2::<f64>::eye(n);
    a.mapv(T::from_f64)
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

common::conformance_test!(conformance_every_variant, Family::Cholesky);

fn residuals<T: CudaElement>(variant: &str) {
    let b = with_variant(Family::Cholesky, variant);
    let mut rng = SplitMix64::new(4);
    let sizes = Sizes::from_env(Sizes::Medium);
    for &n in SIZES {
        if !sizes.admits(&[n]) {
            continue;
        }
        let what = format!("{variant} {} n={n}", T::SUFFIX);
        let a = spd::<T>(&mut rng, n);
        let poisoned = poison_upper(&a);
        let da = b.upload(poisoned.view()).unwrap();
        let f = b.cholesky_dev(&da).unwrap();
        assert_eq!(f.order(), n, "{what}");
        let l = b.download(f.l()).unwrap();
        assert_eq!(l.dim(), (n, n), "{what}");
        for ((i, j), x) in l.indexed_iter() {
            assert!(x.is_finite(), "{what}: L[{i},{j}] = {x}");
            if j > i {
                assert!(
                    *x == T::zero(),
                    "{what}: L[{i},{j}] = {x} above the diagonal"
                );
            }
        }
        let r = cholesky_ratio(a.view(), l.view());
        assert!(
            r <= tolerance::cholesky_ratio::<T>(b.precision(Family::Cholesky)),
            "{what}: ‖A − L·Lᵀ‖₁/(n·ε·‖A‖₁) = {r:.3e}"
        );
        assert_holds(
            &b,
            &da,
            &poisoned,
            &format!("{what}: cholesky_dev changed its input"),
        );
        let g = b.cholesky_in_place_dev(da).unwrap();
        assert_holds(&b, g.l(), &l, &format!("{what}: in place gave other bits"));
    }
}

common::every_variant_test!(
    residual_ratio_every_variant_and_size,
    Family::Cholesky,
    residuals
);

fn pivots<T: CudaElement>(variant: &str) {
    let b = with_variant(Family::Cholesky, variant);
    let mut rng = SplitMix64::new(5);
    for &(n, p) in PIVOTS {
        if !Sizes::from_env(Sizes::Medium).admits(&[n]) {
            continue;
        }
        let what = format!("{variant} {} n={n} p={p}", T::SUFFIX);
        let a = indefinite_at::<T>(&mut rng, n, p);
        match b.cholesky(a.view()) {
            Err(Error::NotPositiveDefinite { pivot, value }) => {
                assert_eq!(pivot, p, "{what}: wrong pivot (value {value})");
                assert!(value < 0.0, "{what}: pivot value {value}");
            }
            other => panic!("{what}: {other:?}"),
        }
        // Resident: the same pivot, and a failed cholesky_dev leaves its input usable.
        let poisoned = poison_upper(&a);
        let da = b.upload(poisoned.view()).unwrap();
        let err = b.cholesky_dev(&da).unwrap_err();
        assert!(
            matches!(err, Error::NotPositiveDefinite { pivot, value } if pivot == p && value < 0.0),
            "{what}: {err}"
        );
        assert_holds(&b, &da, &poisoned, &format!("{what}: the input changed"));
        let err = b.cholesky_in_place_dev(da).unwrap_err();
        assert!(
            matches!(err, Error::NotPositiveDefinite { pivot, .. } if pivot == p),
            "{what}: in place: {err}"
        );
    }
    // An exact zero pivot.
    let ones = Array2::from_elem((2, 2), T::one());
    assert!(matches!(
        b.cholesky(ones.view()),
        Err(Error::NotPositiveDefinite { pivot: 1, .. })
    ));
    // Resident data is not checked on the host: a non-finite entry of row 2 fails
    // pivot 2 with a non-finite value.
    for (at, bad) in [((2, 1), T::nan()), ((2, 2), T::infinity())] {
        let mut e = Array2::<T>::eye(4);
        e[at] = bad;
        match b.cholesky_in_place_dev(b.upload(e.view()).unwrap()) {
            Err(Error::NotPositiveDefinite { pivot: 2, value }) if !value.is_finite() => {}
            other => panic!("{variant} {} {bad} at {at:?}: {other:?}", T::SUFFIX),
        }
    }
}

common::every_variant_test!(first_failing_pivot_every_variant, Family::Cholesky, pivots);

fn solves<T: CudaElement>() {
    let b = backend();
    let mut rng = SplitMix64::new(6);
    for &(n, nrhs) in SOLVES {
        if !Sizes::from_env(Sizes::Medium).admits(&[n, nrhs]) {
            continue;
        }
        let what = format!("{} n={n} nrhs={nrhs}", T::SUFFIX);
        let a = spd::<T>(&mut rng, n);
        let f = b
            .cholesky_in_place_dev(b.upload(a.view()).unwrap())
            .unwrap();
        let rhs = random::<T>(&mut rng, n, nrhs);
        let drhs = b.upload(rhs.view()).unwrap();
        let dx = b.cholesky_solve_dev(&f, &drhs).unwrap();
        assert_eq!(dx.dim(), (n, nrhs), "{what}");
        let x = b.download(&dx).unwrap();
        let r = solve_ratio(a.view(), x.view(), rhs.view());
        assert!(
            r <= tolerance::SOLVE_RATIO,
            "{what}: ‖B − A·X‖₁/(n·ε·‖A‖₁·‖X‖₁) = {r:.3e}"
        );
        assert_holds(
            &b,
            &drhs,
            &rhs,
            &format!("{what}: cholesky_solve_dev changed B"),
        );
        // The same kernels in place, and from a host factor whose upper triangle is
        // never read: the same bits.
        let mut inplace = drhs;
        b.cholesky_solve_in_place_dev(&f, &mut inplace).unwrap();
        assert_holds(&b, &inplace, &x, &format!("{what}: in place"));
        let l = b.download(f.l()).unwrap();
        let host = b
            .cholesky_solve(poison_upper(&l).view(), rhs.view())
            .unwrap();
        assert!(same_bits(&host, &x), "{what}: host form");
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
    let mut b = backend();
    let empty = Array2::<f32>::zeros((0, 0));
    assert_eq!(b.cholesky(empty.view()).unwrap().dim(), (0, 0));
    let f = b.cholesky_dev(&b.upload(empty.view()).unwrap()).unwrap();
    assert_eq!(f.order(), 0);
    let rect = Array2::<f64>::zeros((3, 2));
    assert!(matches!(
        b.cholesky(rect.view()),
        Err(Error::NotSquare { .. })
    ));
    let drect = b.upload(rect.view()).unwrap();
    assert!(matches!(
        b.cholesky_dev(&drect),
        Err(Error::NotSquare { .. })
    ));
    assert!(matches!(
        b.cholesky_in_place_dev(drect),
        Err(Error::NotSquare { .. })
    ));
    // The host form checks for NaN first (resident data: see the pivot test).
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
    let mut zero_diagonal = l.clone();
    zero_diagonal[[1, 1]] = 0.0;
    assert!(matches!(
        b.factor_from_lower(zero_diagonal.view()),
        Err(Error::NonFinite { .. })
    ));

    let f = b.factor_from_lower(l.view()).unwrap();
    let mut dwrong = b.upload(wrong.view()).unwrap();
    assert!(matches!(
        b.cholesky_solve_dev(&f, &dwrong),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        b.cholesky_solve_in_place_dev(&f, &mut dwrong),
        Err(Error::ShapeMismatch { .. })
    ));
    let dnone = b.cholesky_solve_dev(&f, &b.upload(none.view()).unwrap());
    assert_eq!(dnone.unwrap().dim(), (3, 0));
    // A resident solve does not look at B: NaN in a column of B stays in that column of
    // X, the other columns are solved as ever, and nothing waits for the device.
    let mut rhs = Array2::<f64>::ones((3, 2));
    rhs[[1, 1]] = f64::NAN;
    let mut drhs = b.upload(rhs.view()).unwrap();
    b.cholesky_solve_in_place_dev(&f, &mut drhs).unwrap();
    let x = b.download(&drhs).unwrap();
    assert!(x.column(0).iter().all(|v| v.is_finite()), "{x}");
    assert!(x.column(1).iter().any(|v| v.is_nan()), "{x}");

    // A factor resident elsewhere is refused, not read.
    let cpu = CpuBackend::new();
    let on_host = cpu.factor_from_lower(l.view()).unwrap();
    let ones = b.upload(Array2::<f64>::ones((3, 1)).view()).unwrap();
    assert!(matches!(
        b.cholesky_solve_dev(&on_host, &ones),
        Err(Error::WrongPlace { .. })
    ));

    common::assert_unknown_variant_refused(&mut b, Family::Cholesky, "nope");
}
