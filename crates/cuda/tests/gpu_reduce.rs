//! GPU tests of the reductions on resident data: conformance for every variant, every op
//! of every variant against an f64 host reference (error-analysis tolerance for sums,
//! exact for min/max and indices), NaN and tie rules, axis reductions on odd shapes
//! (keepdims results, the host forms giving the same bits), squared row norms, empty
//! inputs and errors, and the bitwise reproducibility of the default.
//! Run on a GPU machine with `cargo test -p ndgpu-cuda --test gpu_reduce -- --ignored`.

mod common;

use common::{backend, every_variant, random, same_bits, values};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use ndgpu_conformance::compare::sum_ratio;
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{
    ArgOp, Backend, Device, Element, Error, Family, Matrix, Memory, Reduce, ReduceOp,
};
use ndgpu_cpu::CpuBackend;
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::CudaElement;

/// A slice as a 1×n matrix: the trait's vectors.
fn row<T>(x: &[T]) -> ArrayView2<'_, T> {
    ArrayView2::from_shape((1, x.len()), x).expect("a 1×n view")
}

/// The elements of a downloaded matrix in row-major order.
fn flat<T: Element>(m: &Array2<T>) -> Vec<T> {
    m.iter().copied().collect()
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

/// (value, Σ|terms|); the second is 0 for min/max, which makes [`assert_close`] exact.
fn ref_value<T: Element>(x: &[T], op: ReduceOp) -> (f64, f64) {
    match op {
        ReduceOp::Sum => ref_sum(x, |i| x[i].as_f64()),
        ReduceOp::SumSq => ref_sum(x, |i| x[i].as_f64() * x[i].as_f64()),
        ReduceOp::Min => (x[ref_arg(x, ArgOp::ArgMin)].as_f64(), 0.0),
        ReduceOp::Max => (x[ref_arg(x, ArgOp::ArgMax)].as_f64(), 0.0),
    }
}

/// Within `tolerance::sum(n)·Σ|terms|` of the reference (NaN matches NaN, infinities
/// match exactly).
fn assert_close<T: Element>(what: &str, got: T, (want, abs): (f64, f64), n: usize) {
    let r = sum_ratio(got, want, n, abs);
    assert!(
        r <= 1.0,
        "{what}: got {}, expected {want} (error/tolerance {r:.3e})",
        got.as_f64()
    );
}

/// Every whole-matrix op of every variant on `x` (and `y` for dot), resident as 1×n
/// matrices, against the host. Leaves the default variant selected.
fn check_whole<T: CudaElement>(b: &mut CudaBackend, x: &[T], y: &[T], label: &str) {
    let n = x.len();
    let dx = b.upload(row(x)).unwrap();
    let dy = b.upload(row(y)).unwrap();
    every_variant(b, Family::Reduce, |b, v| {
        for op in ReduceOp::ALL {
            let got = b.reduce_dev(op, &dx).unwrap();
            let what = format!("{v} {} {label} n={n} {}", op.name(), T::SUFFIX);
            assert_close(&what, got, ref_value(x, op), n);
        }
        for op in ArgOp::ALL {
            let got = b.arg_reduce_dev(op, &dx).unwrap();
            let want = ref_arg(x, op);
            assert_eq!(got, want, "{v} {} {label} n={n} {}", op.name(), T::SUFFIX);
        }
        let got = b.dot_dev(&dx, &dy).unwrap();
        let want = ref_sum(x, |i| x[i].as_f64() * y[i].as_f64());
        assert_close(
            &format!("{v} dot {label} n={n} {}", T::SUFFIX),
            got,
            want,
            n,
        );
    });
    let default = b.variants(Family::Reduce)[0];
    b.set_variant(Family::Reduce, default).unwrap();
}

common::conformance_test!(every_variant_passes_the_conformance_cases, Family::Reduce);

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_and_op_matches_the_host_on_odd_lengths() {
    let mut b = backend();
    let mut rng = SplitMix64::new(10);
    for &n in LENGTHS {
        let (x, y) = (values::<f32>(&mut rng, n), values::<f32>(&mut rng, n));
        check_whole(&mut b, &x, &y, "random");
        let (x, y) = (values::<f64>(&mut rng, n), values::<f64>(&mut rng, n));
        check_whole(&mut b, &x, &y, "random");
    }
}

/// NaN anywhere: sums and min/max give NaN, arg ops the first NaN — also when the
/// NaNs sit in different blocks, in the unvectorised tail, or at index 0.
#[test]
#[ignore = "needs a CUDA device"]
fn nan_propagates_and_arg_ops_find_the_first_nan() {
    let mut b = backend();
    let mut rng = SplitMix64::new(11);
    let n = 100_003;
    for nans in [
        vec![70_001, 90_000],
        vec![n - 1],
        vec![0, 5],
        vec![2047, 2048],
    ] {
        let mut x = values::<f32>(&mut rng, n);
        let y = values::<f32>(&mut rng, n);
        for &k in &nans {
            x[k] = f32::NAN;
        }
        check_whole(&mut b, &x, &y, &format!("NaN at {nans:?}"));
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let y64: Vec<f64> = y.iter().map(|&v| v as f64).collect();
        check_whole(&mut b, &x64, &y64, &format!("NaN at {nans:?}"));
    }
}

/// Ties go to the lowest index wherever the copies sit (blocks, tail, vector lanes);
/// ±0 tie; ±inf elements beat the identities only by index.
#[test]
#[ignore = "needs a CUDA device"]
fn ties_go_to_the_lowest_index() {
    let mut b = backend();
    let mut rng = SplitMix64::new(12);
    let n = (1 << 20) + 7;
    let mut x = values::<f64>(&mut rng, n);
    let y = values::<f64>(&mut rng, n);
    for k in [999_999, 5, 300_000, n - 1] {
        x[k] = -5.0;
    }
    for k in [777_777, 12, 13, 1_048_580] {
        x[k] = 5.0;
    }
    check_whole(&mut b, &x, &y, "ties");
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let y32: Vec<f32> = y.iter().map(|&v| v as f32).collect();
    check_whole(&mut b, &x32, &y32, "ties");

    let mut zeros = vec![0.0f32; 4099];
    zeros[3] = -0.0;
    check_whole(&mut b, &zeros, &zeros, "signed zeros");
    check_whole(&mut b, &vec![7.0f64; 3001], &vec![1.0; 3001], "all equal");
    let mut inf = vec![f32::INFINITY; 1025];
    check_whole(&mut b, &inf, &inf, "all +inf");
    inf[1000] = f32::NEG_INFINITY;
    check_whole(&mut b, &inf, &inf, "+inf and -inf");
}

/// Sum, sum of squares and dot of the current variant, as bits.
fn sum_bits(b: &CudaBackend, x: &Matrix<f32>, y: &Matrix<f32>) -> [u32; 3] {
    [
        b.reduce_dev(ReduceOp::Sum, x).unwrap().to_bits(),
        b.reduce_dev(ReduceOp::SumSq, x).unwrap().to_bits(),
        b.dot_dev(x, y).unwrap().to_bits(),
    ]
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_default_is_bitwise_reproducible() {
    let mut b = backend();
    let variants = b.variants(Family::Reduce);
    assert_eq!(
        b.variant(Family::Reduce),
        variants[0],
        "the default is first"
    );
    // The one variant left out of the repeat below must exist under that name.
    assert!(variants.contains(&"dot_atomic"), "{variants:?}");
    let mut rng = SplitMix64::new(13);
    let n = 1 << 22;
    let x = values::<f32>(&mut rng, n);
    let y = values::<f32>(&mut rng, n);
    let dx = b.upload(row(&x)).unwrap();
    let dy = b.upload(row(&y)).unwrap();
    let first = sum_bits(&b, &dx, &dy);
    for _ in 0..20 {
        assert_eq!(sum_bits(&b, &dx, &dy), first);
    }
    // Whole-matrix reductions see the elements in row-major order whatever the shape,
    // and the host forms run the same kernels: the same bits.
    let side = 1 << 11;
    let sx = b
        .upload(ArrayView2::from_shape((side, side), &x[..]).unwrap())
        .unwrap();
    let sy = b
        .upload(ArrayView2::from_shape((side, side), &y[..]).unwrap())
        .unwrap();
    assert_eq!(sum_bits(&b, &sx, &sy), first, "{side}x{side}");
    assert_eq!(
        b.reduce(ReduceOp::Sum, row(&x)).unwrap().to_bits(),
        first[0]
    );
    assert_eq!(
        b.dot(ArrayView1::from(&x[..]), ArrayView1::from(&y[..]))
            .unwrap()
            .to_bits(),
        first[2]
    );
    // The other reproducible variants too (all but dot_atomic).
    every_variant(&mut b, Family::Reduce, |b, v| {
        if v != "dot_atomic" {
            let s0 = sum_bits(b, &dx, &dy);
            for _ in 0..3 {
                assert_eq!(sum_bits(b, &dx, &dy), s0, "{v}");
            }
        }
    });
}

// ---- along an axis ------------------------------------------------------------------------

/// Shapes for every kernel path: row groups of every width (1 to 32 lanes), rows of whole
/// 16-byte vectors (1 to 32 lanes of vector loads, each lane one or several; a grid that
/// strides), blocks per
/// row with one and with several column chunks, one and several row chunks per column,
/// a thread per vector of columns for up to 64 rows.
const AXIS_SHAPES: &[(usize, usize)] = &[
    (1, 1),
    (777, 1),
    (300, 2),
    (4097, 3),
    (999, 7),
    (50_000, 16),
    (2_001, 4),
    (513, 8),
    (20_000, 32),
    (33, 65),
    (1, 777),
    (1000, 999),
    (3, 1024),
    (3, 4097),
    (5, 70_001),
    (2, 100_000),
    (100_000, 3),
    (20_000, 40),
    (100_003, 4),
    (70_001, 8),
    (4_097, 128),
    (5_000, 1_024),
    (3_001, 2_000),
    (16, 262_144),
    (64, 1_000),
    (65, 1_000),
];

/// Every op along both axes of a resident `a` against the host reference: keepdims
/// shapes, values per lane; the host forms give the same bits and indices.
fn check_axis<T: CudaElement>(b: &CudaBackend, a: &Array2<T>, label: &str) {
    let da = b.upload(a.view()).unwrap();
    for axis in [Axis(0), Axis(1)] {
        let lanes: Vec<Vec<T>> = a.lanes(axis).into_iter().map(|l| l.to_vec()).collect();
        let keepdims = if axis.index() == 0 {
            (1, a.ncols())
        } else {
            (a.nrows(), 1)
        };
        let ctx = format!("axis {} {label} {:?} {}", axis.index(), a.dim(), T::SUFFIX);
        for op in ReduceOp::ALL {
            let r = b.reduce_axis_dev(op, &da, axis).unwrap();
            assert_eq!(r.dim(), keepdims, "{} {ctx}", op.name());
            let got = flat(&b.download(&r).unwrap());
            for (k, lane) in lanes.iter().enumerate() {
                let what = format!("{} {ctx} lane {k}", op.name());
                assert_close(&what, got[k], ref_value(lane, op), lane.len());
            }
            let host = b.reduce_axis(op, a.view(), axis).unwrap();
            assert!(
                same_bits(&host, &ArrayView1::from(&got)),
                "{} {ctx}: host form",
                op.name()
            );
        }
        for op in ArgOp::ALL {
            let i = b.arg_reduce_axis_dev(op, &da, axis).unwrap();
            assert_eq!(i.len(), lanes.len(), "{} {ctx}", op.name());
            let got = b.download_indices(&i).unwrap();
            let want: Array1<usize> = lanes.iter().map(|l| ref_arg(l, op)).collect();
            assert_eq!(got, want, "{} {ctx}", op.name());
            let host = b.arg_reduce_axis(op, a.view(), axis).unwrap();
            assert_eq!(host, got, "{} {ctx}: host form", op.name());
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn axis_reductions_match_the_host_on_odd_shapes() {
    let b = backend();
    let mut rng = SplitMix64::new(14);
    for &(r, c) in AXIS_SHAPES {
        let a = random::<f32>(&mut rng, r, c);
        check_axis(&b, &a, "random");
        let a = random::<f64>(&mut rng, r, c);
        check_axis(&b, &a, "random");
    }
    // Column-major input: the upload makes it row-major first.
    let a = random::<f64>(&mut rng, 300, 200);
    check_axis(&b, &a.t().to_owned(), "transposed");
}

#[test]
#[ignore = "needs a CUDA device"]
fn axis_reductions_follow_the_nan_and_tie_rules() {
    let b = backend();
    let mut rng = SplitMix64::new(15);
    for &(r, c) in &[
        (33usize, 65usize),
        (5, 70_001),
        (100_000, 3),
        (10_001, 16),
        (3_001, 32),
        (16, 4_000),
    ] {
        let mut a = random::<f32>(&mut rng, r, c);
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
fn squared_row_norms() {
    // SumSq along Axis(1): one value per row, left resident as a rows×1 matrix.
    let b = backend();
    let mut rng = SplitMix64::new(16);
    let a = random::<f32>(&mut rng, 513, 37);
    let d = b.upload(a.view()).unwrap();
    let norms = b.reduce_axis_dev(ReduceOp::SumSq, &d, Axis(1)).unwrap();
    assert_eq!(norms.dim(), (513, 1));
    let got = flat(&b.download(&norms).unwrap());
    for (i, r) in a.rows().into_iter().enumerate() {
        let r = r.to_vec();
        assert_close("row norm", got[i], ref_value(&r, ReduceOp::SumSq), 37);
    }
}

// ---- empty inputs and errors ------------------------------------------------------------------

#[test]
#[ignore = "needs a CUDA device"]
fn empty_inputs_and_bad_arguments() {
    let mut b = backend();
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

    // Resident forms: the same rules without the host checks in front.
    let de = b.upload(e.view()).unwrap();
    assert_eq!(b.reduce_dev(ReduceOp::Sum, &de).unwrap(), 0.0);
    assert_eq!(b.reduce_dev(ReduceOp::SumSq, &de).unwrap(), 0.0);
    assert_eq!(b.dot_dev(&de, &de).unwrap(), 0.0);
    for op in [ReduceOp::Min, ReduceOp::Max] {
        assert!(matches!(b.reduce_dev(op, &de), Err(Error::Empty { .. })));
        assert!(matches!(
            b.reduce_axis_dev(op, &de, Axis(0)),
            Err(Error::Empty { .. })
        ));
        assert_eq!(b.reduce_axis_dev(op, &de, Axis(1)).unwrap().dim(), (0, 1));
    }
    for op in ArgOp::ALL {
        assert!(matches!(
            b.arg_reduce_dev(op, &de),
            Err(Error::Empty { .. })
        ));
        assert!(matches!(
            b.arg_reduce_axis_dev(op, &de, Axis(0)),
            Err(Error::Empty { .. })
        ));
        assert_eq!(b.arg_reduce_axis_dev(op, &de, Axis(1)).unwrap().len(), 0);
    }
    let sums = b.reduce_axis_dev(ReduceOp::Sum, &de, Axis(0)).unwrap();
    assert_eq!(b.download(&sums).unwrap(), Array2::<f32>::zeros((1, 3)));
    assert!(matches!(
        b.reduce_axis_dev(ReduceOp::Sum, &de, Axis(2)),
        Err(Error::InvalidArgument { .. })
    ));

    let d = b.upload(row(&[3.0f32, 1.0, 2.0])).unwrap();
    assert_eq!(b.reduce_dev(ReduceOp::Sum, &d).unwrap(), 6.0);
    assert_eq!(b.arg_reduce_dev(ArgOp::ArgMin, &d).unwrap(), 1);
    // dot wants equal shapes, not just equal lengths.
    let column = b
        .upload(ArrayView2::from_shape((3, 1), &[3.0f32, 1.0, 2.0][..]).unwrap())
        .unwrap();
    assert!(matches!(
        b.dot_dev(&d, &column),
        Err(Error::ShapeMismatch { .. })
    ));
    let m = b.upload(Array2::<f32>::ones((4, 5)).view()).unwrap();
    let per_row = b.reduce_axis_dev(ReduceOp::Sum, &m, Axis(1)).unwrap();
    assert_eq!(
        b.download(&per_row).unwrap(),
        Array2::from_elem((4, 1), 5.0)
    );
    let per_col = b.reduce_axis_dev(ReduceOp::Sum, &m, Axis(0)).unwrap();
    assert_eq!(
        b.download(&per_col).unwrap(),
        Array2::from_elem((1, 5), 4.0)
    );

    // A matrix resident elsewhere is refused, not read.
    let cpu = CpuBackend::new();
    let on_host = cpu.upload(row(&[1.0f32, 2.0])).unwrap();
    assert!(matches!(
        b.reduce_dev(ReduceOp::Sum, &on_host),
        Err(Error::WrongPlace { .. })
    ));

    common::assert_unknown_variant_refused(&mut b, Family::Reduce, "sideways");
}
