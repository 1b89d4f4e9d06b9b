//! GPU tests of the reductions: conformance for every variant, every op against an f64
//! host reference (error-analysis tolerance for sums, exact for min/max and indices),
//! NaN and tie rules, axis reductions on odd shapes, empty inputs and errors, and the
//! bitwise reproducibility of the default.
//! Run on a GPU machine with `cargo test -p ndgpu-cuda --test gpu_reduce -- --ignored`.

use ndarray::{Array1, Array2, ArrayView1, Axis};
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{tolerance, ArgOp, Backend, Element, Error, Family, Reduce, ReduceOp};
use ndgpu_cuda::ops::reduce::{self, VARIANTS};
use ndgpu_cuda::{CudaBackend, CudaElement, Gpu};

/// SplitMix64: deterministic values in [-1, 1) without a rand dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    fn vec<T: Element>(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| T::from_f64(self.next())).collect()
    }
}

fn backend() -> CudaBackend {
    CudaBackend::new(0).expect("a CUDA device")
}

const LENGTHS: &[usize] = &[1, 2, 3, 5, 31, 1023, 4097, 100_003, (1 << 20) + 7];

// ---- host references -------------------------------------------------------------------

/// (Σ f(x), Σ |f(x)|) in f64.
fn ref_sum<T: Element>(x: &[T], f: impl Fn(usize) -> f64) -> (f64, f64) {
    (0..x.len()).fold((0.0, 0.0), |(s, a), i| (s + f(i), a + f(i).abs()))
}

/// NumPy's rules: the first NaN, else the first extreme.
fn ref_arg<T: Element>(x: &[T], op: ArgOp) -> usize {
    if let Some(i) = x.iter().position(|v| v.is_nan()) {
        return i;
    }
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        let better = match op {
            ArgOp::ArgMin => v < x[best],
            ArgOp::ArgMax => v > x[best],
        };
        if better {
            best = i;
        }
    }
    best
}

fn ref_value<T: Element>(x: &[T], op: ReduceOp) -> (f64, f64) {
    match op {
        ReduceOp::Sum => ref_sum(x, |i| x[i].as_f64()),
        ReduceOp::SumSq => ref_sum(x, |i| x[i].as_f64() * x[i].as_f64()),
        ReduceOp::Min => (x[ref_arg(x, ArgOp::ArgMin)].as_f64(), 0.0),
        ReduceOp::Max => (x[ref_arg(x, ArgOp::ArgMax)].as_f64(), 0.0),
    }
}

/// Sums within n·ε·Σ|terms|; min/max exact (NaN matches NaN).
fn assert_close<T: Element>(what: &str, got: T, (want, abs): (f64, f64), n: usize, exact: bool) {
    let g = got.as_f64();
    if want.is_nan() || g.is_nan() {
        assert!(
            want.is_nan() && g.is_nan(),
            "{what}: got {g}, expected {want}"
        );
        return;
    }
    if want.is_infinite() || g.is_infinite() {
        assert_eq!(g, want, "{what}");
        return;
    }
    let bound = if exact {
        0.0
    } else {
        tolerance::sum::<T>(n) * abs
    };
    assert!(
        (g - want).abs() <= bound,
        "{what}: got {g}, expected {want} (error {:e} > bound {bound:e})",
        (g - want).abs()
    );
}

/// Every whole-array op of every variant on `x` (and `y` for dot) against the host.
fn check_whole<T: CudaElement>(gpu: &Gpu, x: &[T], y: &[T], label: &str) {
    let n = x.len();
    let dx = gpu.upload_slice("test", x).unwrap();
    let dy = gpu.upload_slice("test", y).unwrap();
    for v in VARIANTS {
        for op in ReduceOp::ALL {
            let got = reduce::reduce(gpu, v, op, &dx, n).unwrap();
            let exact = matches!(op, ReduceOp::Min | ReduceOp::Max);
            let what = format!("{v} {} {label} n={n} {}", op.name(), T::SUFFIX);
            assert_close(&what, got, ref_value(x, op), n, exact);
        }
        for op in ArgOp::ALL {
            let got = reduce::arg_reduce(gpu, v, op, &dx, n).unwrap();
            let want = ref_arg(x, op);
            assert_eq!(got, want, "{v} {} {label} n={n} {}", op.name(), T::SUFFIX);
        }
        let got = reduce::dot(gpu, v, &dx, &dy, n).unwrap();
        let want = ref_sum(x, |i| x[i].as_f64() * y[i].as_f64());
        assert_close(
            &format!("{v} dot {label} n={n} {}", T::SUFFIX),
            got,
            want,
            n,
            false,
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_passes_the_conformance_cases() {
    let mut b = backend();
    assert_eq!(b.variants(Family::Reduce), VARIANTS);
    for v in b.variants(Family::Reduce) {
        b.set_variant(Family::Reduce, v).unwrap();
        assert_family(&b, Family::Reduce, Sizes::from_env(Sizes::Medium));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_and_op_matches_the_host_on_odd_lengths() {
    let b = backend();
    let mut rng = Rng(10);
    for &n in LENGTHS {
        let (x, y) = (rng.vec::<f32>(n), rng.vec::<f32>(n));
        check_whole(b.gpu(), &x, &y, "random");
        let (x, y) = (rng.vec::<f64>(n), rng.vec::<f64>(n));
        check_whole(b.gpu(), &x, &y, "random");
    }
}

/// NaN anywhere: sums and min/max give NaN, arg ops the first NaN — also when the
/// NaNs sit in different blocks, in the unvectorised tail, or at index 0.
#[test]
#[ignore = "needs a CUDA device"]
fn nan_propagates_and_arg_ops_find_the_first_nan() {
    let b = backend();
    let mut rng = Rng(11);
    let n = 100_003;
    for nans in [
        vec![70_001, 90_000],
        vec![n - 1],
        vec![0, 5],
        vec![2047, 2048],
    ] {
        let mut x = rng.vec::<f32>(n);
        let y = rng.vec::<f32>(n);
        for &k in &nans {
            x[k] = f32::NAN;
        }
        check_whole(b.gpu(), &x, &y, &format!("NaN at {nans:?}"));
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let y64: Vec<f64> = y.iter().map(|&v| v as f64).collect();
        check_whole(b.gpu(), &x64, &y64, &format!("NaN at {nans:?}"));
    }
}

/// Ties go to the lowest index wherever the copies sit (blocks, tail, vector lanes);
/// ±0 tie; ±inf elements beat the identities only by index.
#[test]
#[ignore = "needs a CUDA device"]
fn ties_go_to_the_lowest_index() {
    let b = backend();
    let mut rng = Rng(12);
    let n = (1 << 20) + 7;
    let mut x = rng.vec::<f64>(n);
    let y = rng.vec::<f64>(n);
    for k in [999_999, 5, 300_000, n - 1] {
        x[k] = -5.0;
    }
    for k in [777_777, 12, 13, 1_048_580] {
        x[k] = 5.0;
    }
    check_whole(b.gpu(), &x, &y, "ties");
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let y32: Vec<f32> = y.iter().map(|&v| v as f32).collect();
    check_whole(b.gpu(), &x32, &y32, "ties");

    let mut zeros = vec![0.0f32; 4099];
    zeros[3] = -0.0;
    check_whole(b.gpu(), &zeros, &zeros, "signed zeros");
    check_whole(b.gpu(), &vec![7.0f64; 3001], &vec![1.0; 3001], "all equal");
    let mut inf = vec![f32::INFINITY; 1025];
    check_whole(b.gpu(), &inf, &inf, "all +inf");
    inf[1000] = f32::NEG_INFINITY;
    check_whole(b.gpu(), &inf, &inf, "+inf and -inf");
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_default_is_bitwise_reproducible() {
    let b = backend();
    let gpu = b.gpu();
    let mut rng = Rng(13);
    let n = 1 << 22;
    let x = rng.vec::<f32>(n);
    let y = rng.vec::<f32>(n);
    let dx = gpu.upload_slice("test", &x).unwrap();
    let dy = gpu.upload_slice("test", &y).unwrap();
    let default = b.variant(Family::Reduce);
    assert_eq!(default, VARIANTS[0]);
    let first_sum = reduce::reduce(gpu, default, ReduceOp::Sum, &dx, n).unwrap();
    let first_sq = reduce::reduce(gpu, default, ReduceOp::SumSq, &dx, n).unwrap();
    let first_dot = reduce::dot(gpu, default, &dx, &dy, n).unwrap();
    for _ in 0..20 {
        let sum = reduce::reduce(gpu, default, ReduceOp::Sum, &dx, n).unwrap();
        let sq = reduce::reduce(gpu, default, ReduceOp::SumSq, &dx, n).unwrap();
        let dot = reduce::dot(gpu, default, &dx, &dy, n).unwrap();
        assert_eq!(sum.to_bits(), first_sum.to_bits());
        assert_eq!(sq.to_bits(), first_sq.to_bits());
        assert_eq!(dot.to_bits(), first_dot.to_bits());
    }
    // The trait path (upload, same kernels) gives the same bits.
    let m = Array2::from_shape_vec((1 << 11, 1 << 11), x.clone()).unwrap();
    assert_eq!(
        b.reduce(ReduceOp::Sum, m.view()).unwrap().to_bits(),
        first_sum.to_bits()
    );
    // The other reproducible variants too (all but dot_atomic).
    for v in VARIANTS.iter().filter(|&&v| v != "dot_atomic") {
        let s0 = reduce::reduce(gpu, v, ReduceOp::Sum, &dx, n).unwrap();
        for _ in 0..3 {
            let s = reduce::reduce(gpu, v, ReduceOp::Sum, &dx, n).unwrap();
            assert_eq!(s.to_bits(), s0.to_bits(), "{v}");
        }
    }
}

// ---- along an axis ------------------------------------------------------------------------

/// Shapes for every kernel path: row groups of every width (1 to 32 lanes), blocks per
/// row with one and with several column chunks, one and several row chunks per column.
const AXIS_SHAPES: &[(usize, usize)] = &[
    (1, 1),
    (777, 1),
    (300, 2),
    (4097, 3),
    (999, 7),
    (50_000, 16),
    (33, 65),
    (1, 777),
    (1000, 999),
    (3, 1024),
    (3, 4097),
    (5, 70_001),
    (2, 100_000),
    (100_000, 3),
    (20_000, 40),
];

fn check_axis<T: CudaElement>(b: &CudaBackend, a: &Array2<T>, label: &str) {
    for axis in [Axis(0), Axis(1)] {
        let lanes: Vec<Vec<T>> = a.lanes(axis).into_iter().map(|l| l.to_vec()).collect();
        for op in ReduceOp::ALL {
            let got = b.reduce_axis(op, a.view(), axis).unwrap();
            assert_eq!(got.len(), lanes.len());
            for (k, lane) in lanes.iter().enumerate() {
                let what = format!(
                    "{} axis {} {label} {:?} lane {k} {}",
                    op.name(),
                    axis.index(),
                    a.dim(),
                    T::SUFFIX
                );
                let exact = matches!(op, ReduceOp::Min | ReduceOp::Max);
                assert_close(&what, got[k], ref_value(lane, op), lane.len(), exact);
            }
        }
        for op in ArgOp::ALL {
            let got = b.arg_reduce_axis(op, a.view(), axis).unwrap();
            let want: Array1<usize> = lanes.iter().map(|l| ref_arg(l, op)).collect();
            assert_eq!(
                got,
                want,
                "{} axis {} {label} {:?}",
                op.name(),
                axis.index(),
                a.dim()
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn axis_reductions_match_the_host_on_odd_shapes() {
    let b = backend();
    let mut rng = Rng(14);
    for &(r, c) in AXIS_SHAPES {
        let a = Array2::from_shape_vec((r, c), rng.vec::<f32>(r * c)).unwrap();
        check_axis(&b, &a, "random");
        let a = Array2::from_shape_vec((r, c), rng.vec::<f64>(r * c)).unwrap();
        check_axis(&b, &a, "random");
    }
    // Strided input: the trait uploads it row-major first.
    let a = Array2::from_shape_vec((300, 200), rng.vec::<f64>(60_000)).unwrap();
    check_axis(&b, &a.t().to_owned(), "transposed");
}

#[test]
#[ignore = "needs a CUDA device"]
fn axis_reductions_follow_the_nan_and_tie_rules() {
    let b = backend();
    let mut rng = Rng(15);
    for &(r, c) in &[(33usize, 65usize), (5, 70_001), (100_000, 3)] {
        let mut a = Array2::from_shape_vec((r, c), rng.vec::<f32>(r * c)).unwrap();
        // Row 1 / column 1: two NaNs; row 2 / column 2: tied extremes.
        a[[1, c - 1]] = f32::NAN;
        a[[r - 1, 1]] = f32::NAN;
        a[[r - 1, c - 1]] = f32::NAN;
        for &(i, j) in &[(2, 0), (2, c - 1), (0, 2), (r - 1, 2)] {
            a[[i, j.min(c - 1)]] = -9.0;
        }
        check_axis(&b, &a, "NaN and ties");
        check_axis(&b, &a.mapv(|v| v as f64), "NaN and ties");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn row_norms_for_kmeans() {
    // reduce_axis(SumSq, Axis(1)) on resident data, as k-means calls it.
    let b = backend();
    let gpu = b.gpu();
    let mut rng = Rng(16);
    let a = Array2::from_shape_vec((513, 37), rng.vec::<f32>(513 * 37)).unwrap();
    let d = gpu.upload(a.view()).unwrap();
    let mut out = gpu.alloc::<f32>("test", 513).unwrap();
    reduce::reduce_axis(gpu, ReduceOp::SumSq, &d, Axis(1), &mut out).unwrap();
    let got = gpu.download_slice(&out, 513).unwrap();
    for (i, row) in a.rows().into_iter().enumerate() {
        let r: Vec<f32> = row.to_vec();
        assert_close(
            "row norm",
            got[i],
            ref_value(&r, ReduceOp::SumSq),
            37,
            false,
        );
    }
}

// ---- empty inputs and errors ------------------------------------------------------------------

#[test]
#[ignore = "needs a CUDA device"]
fn empty_inputs_and_bad_arguments() {
    let b = backend();
    let gpu = b.gpu();
    let e = Array2::<f32>::zeros((0, 3));
    assert_eq!(b.reduce(ReduceOp::Sum, e.view()).unwrap(), 0.0);
    assert_eq!(b.reduce(ReduceOp::SumSq, e.view()).unwrap(), 0.0);
    for op in [ReduceOp::Min, ReduceOp::Max] {
        assert!(matches!(b.reduce(op, e.view()), Err(Error::Empty { .. })));
        assert!(matches!(
            b.reduce_axis(op, e.view(), Axis(0)),
            Err(Error::Empty { .. })
        ));
        assert_eq!(b.reduce_axis(op, e.view(), Axis(1)).unwrap().len(), 0);
    }
    for op in ArgOp::ALL {
        assert!(matches!(
            b.arg_reduce(op, e.view()),
            Err(Error::Empty { .. })
        ));
        assert!(matches!(
            b.arg_reduce_axis(op, e.view(), Axis(0)),
            Err(Error::Empty { .. })
        ));
        assert_eq!(b.arg_reduce_axis(op, e.view(), Axis(1)).unwrap().len(), 0);
    }
    assert_eq!(
        b.reduce_axis(ReduceOp::Sum, e.view(), Axis(0)).unwrap(),
        Array1::<f32>::zeros(3)
    );
    assert!(matches!(
        b.reduce_axis(ReduceOp::Sum, e.view(), Axis(2)),
        Err(Error::InvalidArgument { .. })
    ));
    let x = [1.0f64, 2.0];
    let y = [1.0f64];
    assert!(matches!(
        b.dot(ArrayView1::from(&x[..]), ArrayView1::from(&y[..])),
        Err(Error::ShapeMismatch { .. })
    ));
    assert_eq!(
        b.dot(ArrayView1::from(&x[..0]), ArrayView1::from(&y[..0]))
            .unwrap(),
        0.0
    );
    assert_eq!(
        b.dot(ArrayView1::from(&x[..]), ArrayView1::from(&x[..]))
            .unwrap(),
        5.0
    );

    // Device level.
    let d = gpu.upload_slice("test", &[3.0f32, 1.0, 2.0]).unwrap();
    assert!(matches!(
        reduce::reduce(gpu, "sideways", ReduceOp::Sum, &d, 3),
        Err(Error::UnknownVariant { .. })
    ));
    assert!(matches!(
        reduce::reduce(gpu, VARIANTS[0], ReduceOp::Sum, &d, 4),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        reduce::reduce(gpu, VARIANTS[0], ReduceOp::Min, &d, 0),
        Err(Error::Empty { .. })
    ));
    assert_eq!(
        reduce::reduce(gpu, VARIANTS[0], ReduceOp::Sum, &d, 0).unwrap(),
        0.0
    );
    assert_eq!(
        reduce::reduce(gpu, VARIANTS[0], ReduceOp::Sum, &d, 2).unwrap(),
        4.0
    );
    assert_eq!(
        reduce::arg_reduce(gpu, VARIANTS[0], ArgOp::ArgMin, &d, 3).unwrap(),
        1
    );
    let m = gpu.upload(Array2::<f32>::ones((4, 5)).view()).unwrap();
    let mut short = gpu.alloc::<f32>("test", 4).unwrap();
    assert!(matches!(
        reduce::reduce_axis(gpu, ReduceOp::Sum, &m, Axis(0), &mut short),
        Err(Error::ShapeMismatch { .. })
    ));
    reduce::reduce_axis(gpu, ReduceOp::Sum, &m, Axis(1), &mut short).unwrap();
    assert_eq!(gpu.download_slice(&short, 4).unwrap(), vec![5.0; 4]);
}
