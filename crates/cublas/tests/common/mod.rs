//! Backends, variant loops, seeded data and host checks shared by the GPU tests.
#![allow(dead_code)]

use ndarray::{Array1, Array2, ArrayView2, Axis};
use ndgpu_conformance::compare::{describe_ratio, max_ratio, sum_ratio};
use ndgpu_conformance::data::Rng;
use ndgpu_core::{ArgOp, Backend, Device, Element, Family, Memory, Reduce, ReduceOp};
use ndgpu_cublas::{BlasElement, CublasBackend};
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::Gpu;

/// The vendor backend on device 0, or a panic saying what is missing.
pub fn backend() -> CublasBackend {
    CublasBackend::new(0)
        .unwrap_or_else(|e| panic!("these tests need a CUDA device with cuBLAS and cuSOLVER: {e}"))
}

/// The hand-written backend on device 0: the same shared runtime as [`backend`].
pub fn cuda() -> CudaBackend {
    CudaBackend::new(0).unwrap_or_else(|e| panic!("these tests need a CUDA device: {e}"))
}

/// Selects each variant of `family` on `b` in turn, checking that there is one at
/// least and that each selection takes, and runs `check` with it.
pub fn every_variant(
    b: &mut CublasBackend,
    family: Family,
    mut check: impl FnMut(&CublasBackend, &'static str),
) {
    let variants = b.variants(family);
    assert!(!variants.is_empty(), "no {family:?} variant");
    for v in variants {
        b.set_variant(family, v).unwrap();
        assert_eq!(b.variant(family), v);
        check(b, v);
    }
}

/// A test of `$check::<f32>` and then `$check::<f64>` on one backend (not every test
/// file uses it).
#[allow(unused_macros)]
macro_rules! both_dtypes_test {
    ($name:ident, $check:ident) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            // `&mut b` coerces to `&b` for the checks that only read it.
            let mut b = $crate::common::backend();
            $check::<f32>(&mut b);
            $check::<f64>(&mut b);
        }
    };
}
#[allow(unused_imports)]
pub(crate) use both_dtypes_test;

/// Seeded values in [-1, 1), never zero.
pub fn random<T: Element>(shape: (usize, usize), seed: u64) -> Array2<T> {
    Rng::new(seed).matrix(shape.0, shape.1)
}

/// A seeded symmetric positive-definite n×n matrix, well conditioned.
pub fn spd<T: Element>(n: usize, seed: u64) -> Array2<T> {
    ndgpu_conformance::data::spd(&mut Rng::new(seed), n)
}

/// `a` with NaN in its strict upper triangle, which a Cholesky must not read.
pub fn poison_upper<T: Element>(a: &Array2<T>) -> Array2<T> {
    Array2::from_shape_fn(a.dim(), |(r, c)| if c > r { T::nan() } else { a[[r, c]] })
}

/// Panics, naming the worst element, unless every `|got − want| ≤ bound`.
pub fn assert_within<T: Element>(
    what: &str,
    got: ArrayView2<T>,
    want: ArrayView2<f64>,
    bound: ArrayView2<f64>,
) {
    let worst = max_ratio(got, want, bound);
    assert!(
        worst.0 <= 1.0 && got.dim() == want.dim(),
        "{}",
        describe_ratio(what, got, want, worst)
    );
}

/// Whether two arrays hold the same values to the bit.
pub fn same_bits<T: Element>(a: &Array2<T>, b: &Array2<T>) -> bool {
    a.dim() == b.dim()
        && a.iter()
            .zip(b.iter())
            .all(|(x, y)| x.as_f64().to_bits() == y.as_f64().to_bits())
}

/// The first index of the smallest (`ArgMin`) or largest value of a lane.
pub fn first_extreme<T: Element>(lane: impl Iterator<Item = T>, op: ArgOp) -> usize {
    let mut best: Option<(usize, T)> = None;
    for (i, v) in lane.enumerate() {
        let better = match (best, op) {
            (None, _) => true,
            (Some((_, b)), ArgOp::ArgMin) => v < b,
            (Some((_, b)), ArgOp::ArgMax) => v > b,
        };
        if better {
            best = Some((i, v));
        }
    }
    best.map_or(0, |(i, _)| i)
}

/// Every reduction of the resident forms on `a` (finite values) against the host: sums,
/// sums of squares and the dot product within `tolerance::sum`, min/max and the arg
/// reductions exact, per-axis results shaped as `keepdims`.
pub fn check_reductions<T: BlasElement>(b: &CublasBackend, a: &Array2<T>) {
    let da = b.upload(a.view()).unwrap();
    let f = a.mapv(|v| v.as_f64());
    let sq = f.mapv(|v| v * v);
    let n = a.len();
    let within = |got: T, want: f64, terms: usize, abs_total: f64, what: &str| {
        let r = sum_ratio(got, want, terms, abs_total);
        assert!(
            r <= 1.0,
            "{what} of {:?}: got {got}, want {want} (error/tolerance = {r:.3e})",
            a.dim()
        );
    };
    let abs_total = f.mapv(f64::abs).sum();
    within(
        b.reduce_dev(ReduceOp::Sum, &da).unwrap(),
        f.sum(),
        n,
        abs_total,
        "sum",
    );
    within(
        b.reduce_dev(ReduceOp::SumSq, &da).unwrap(),
        sq.sum(),
        n,
        sq.sum(),
        "sumsq",
    );
    for axis in [Axis(0), Axis(1)] {
        let kept = match axis {
            Axis(0) => (1, a.ncols()),
            _ => (a.nrows(), 1),
        };
        let len = a.len_of(axis);
        let s = b.reduce_axis_dev(ReduceOp::Sum, &da, axis).unwrap();
        let q = b.reduce_axis_dev(ReduceOp::SumSq, &da, axis).unwrap();
        assert_eq!((s.dim(), q.dim()), (kept, kept), "keepdims along {axis:?}");
        let (s, q) = (b.download(&s).unwrap(), b.download(&q).unwrap());
        let (ws, wa, wq) = (
            f.sum_axis(axis),
            f.mapv(f64::abs).sum_axis(axis),
            sq.sum_axis(axis),
        );
        for (i, (s, q)) in s.iter().zip(q.iter()).enumerate() {
            within(*s, ws[i], len, wa[i], &format!("sum along {axis:?}"));
            within(*q, wq[i], len, wq[i], &format!("sumsq along {axis:?}"));
        }
    }
    if n == 0 {
        return;
    }
    // The dot product of two matrices of a's shape: a, and a's elements in reverse.
    let mut flat: Vec<T> = a.iter().copied().collect();
    flat.reverse();
    let rev = Array2::from_shape_vec(a.dim(), flat).unwrap();
    let prod = &f * &rev.mapv(|v| v.as_f64());
    let dr = b.upload(rev.view()).unwrap();
    let abs_prod = prod.mapv(f64::abs).sum();
    within(b.dot_dev(&da, &dr).unwrap(), prod.sum(), n, abs_prod, "dot");
    // The host form of the same dot product, of two vectors.
    let (x, y): (Array1<T>, Array1<T>) =
        (a.iter().copied().collect(), rev.iter().copied().collect());
    within(
        b.dot(x.view(), y.view()).unwrap(),
        prod.sum(),
        n,
        abs_prod,
        "dot of vectors",
    );
    // Min and max are exact; arg reductions give the first index of the extreme value,
    // flat in row-major order for the whole matrix.
    let (imin, imax) = (
        first_extreme(a.iter().copied(), ArgOp::ArgMin),
        first_extreme(a.iter().copied(), ArgOp::ArgMax),
    );
    assert_eq!(b.reduce_dev(ReduceOp::Min, &da).unwrap(), x[imin]);
    assert_eq!(b.reduce_dev(ReduceOp::Max, &da).unwrap(), x[imax]);
    assert_eq!(b.arg_reduce_dev(ArgOp::ArgMin, &da).unwrap(), imin);
    assert_eq!(b.arg_reduce_dev(ArgOp::ArgMax, &da).unwrap(), imax);
    for op in ArgOp::ALL {
        for axis in [Axis(0), Axis(1)] {
            let i = b.arg_reduce_axis_dev(op, &da, axis).unwrap();
            let want: Vec<usize> = a
                .lanes(axis)
                .into_iter()
                .map(|lane| first_extreme(lane.iter().copied(), op))
                .collect();
            assert_eq!(
                b.download_indices(&i).unwrap().to_vec(),
                want,
                "{} along {axis:?} of {:?}",
                op.name(),
                a.dim()
            );
        }
    }
}

/// Host waits of `f`, run once to warm up (kernels compiled, pools filled) and then
/// counted.
pub fn waits_of<R>(gpu: &Gpu, b: &CublasBackend, mut f: impl FnMut() -> R) -> u64 {
    drop(f());
    b.synchronize().unwrap();
    let before = gpu.host_waits();
    let out = f();
    let waits = gpu.host_waits() - before;
    drop(out);
    waits
}
