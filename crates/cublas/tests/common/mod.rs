//! Host references and helpers shared by the GPU tests.
#![allow(dead_code)]

use ndarray::{Array1, Array2, ArrayView2, Axis};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{tolerance, ArgOp, Element, Reduce, ReduceOp, Trans};
use ndgpu_cublas::{BlasElement, CublasBackend};

/// The backend on device 0, or a panic saying what is missing.
pub fn backend() -> CublasBackend {
    CublasBackend::new(0)
        .unwrap_or_else(|e| panic!("these tests need a CUDA device with cuBLAS and cuSOLVER: {e}"))
}

/// Deterministic values in [-1, 1).
pub fn random<T: Element>(shape: (usize, usize), seed: u64) -> Array2<T> {
    let mut rng = SplitMix64::new(seed);
    Array2::from_shape_simple_fn(shape, || T::from_f64(2.0 * rng.next_f64() - 1.0))
}

/// The shape to store so that op(X) is `shape`.
pub fn op_shape(shape: (usize, usize), t: Trans) -> (usize, usize) {
    match t {
        Trans::No => shape,
        Trans::Yes => (shape.1, shape.0),
    }
}

/// `alpha·op(A)·op(B) + beta·C` in f64, and the error scale
/// `|alpha|·|op(A)|·|op(B)| + |beta|·|C|` of each element.
pub fn host_gemm<T: Element>(
    alpha: T,
    a: ArrayView2<T>,
    ta: Trans,
    b: ArrayView2<T>,
    tb: Trans,
    beta: T,
    c: ArrayView2<T>,
) -> (Array2<f64>, Array2<f64>) {
    let a = ta.apply(a).mapv(|v| v.as_f64());
    let b = tb.apply(b).mapv(|v| v.as_f64());
    let (alpha, beta) = (alpha.as_f64(), beta.as_f64());
    let value = a.dot(&b) * alpha;
    let mut scale = a.mapv(f64::abs).dot(&b.mapv(f64::abs)) * alpha.abs();
    let value = if beta != 0.0 {
        let c = c.mapv(|v| v.as_f64());
        scale = scale + c.mapv(f64::abs) * beta.abs();
        value + c * beta
    } else {
        value
    };
    (value, scale)
}

/// `|got − want| ≤ rel·scale` element by element (a zero scale demands equality).
pub fn assert_close<T: Element>(
    got: &Array2<T>,
    want: &Array2<f64>,
    scale: &Array2<f64>,
    rel: f64,
    what: &str,
) {
    assert_eq!(got.dim(), want.dim(), "{what}: shape");
    for ((idx, g), (w, s)) in got.indexed_iter().zip(want.iter().zip(scale.iter())) {
        let err = (g.as_f64() - w).abs();
        assert!(
            err <= rel * s,
            "{what} at {idx:?}: got {g}, want {w}, error {err:e} > bound {:e}",
            rel * s
        );
    }
}

/// Sums, sums of squares, dot, min/max and arg reductions against the host.
pub fn check_reductions<T: BlasElement>(b: &CublasBackend, a: &Array2<T>) {
    let f = a.mapv(|v| v.as_f64());
    let n = a.len();
    let within = |got: T, want: f64, scale: f64, terms: usize, what: &str| {
        let err = (got.as_f64() - want).abs();
        let bound = tolerance::sum::<T>(terms) * scale;
        assert!(
            err <= bound,
            "{what} of {:?}: got {got}, want {want}, error {err:e} > {bound:e}",
            a.dim()
        );
    };
    let abs_sum = f.mapv(f64::abs).sum();
    let sq = f.mapv(|v| v * v);
    within(
        b.reduce(ReduceOp::Sum, a.view()).unwrap(),
        f.sum(),
        abs_sum,
        n,
        "sum",
    );
    within(
        b.reduce(ReduceOp::SumSq, a.view()).unwrap(),
        sq.sum(),
        sq.sum(),
        n,
        "sumsq",
    );
    for axis in [Axis(0), Axis(1)] {
        let len = a.len_of(axis);
        let s: Array1<T> = b.reduce_axis(ReduceOp::Sum, a.view(), axis).unwrap();
        let q: Array1<T> = b.reduce_axis(ReduceOp::SumSq, a.view(), axis).unwrap();
        let (ws, wa, wq) = (
            f.sum_axis(axis),
            f.mapv(f64::abs).sum_axis(axis),
            sq.sum_axis(axis),
        );
        assert_eq!(s.len(), ws.len());
        for i in 0..s.len() {
            within(s[i], ws[i], wa[i], len, &format!("sum along {axis:?}"));
            within(q[i], wq[i], wq[i], len, &format!("sumsq along {axis:?}"));
        }
    }
    if n == 0 {
        return;
    }
    let flat: Vec<T> = a.iter().copied().collect();
    let x = ndarray::ArrayView1::from(&flat[..]);
    let rev: Vec<T> = flat.iter().rev().copied().collect();
    let y = ndarray::ArrayView1::from(&rev[..]);
    let prod: Vec<f64> = flat
        .iter()
        .zip(&rev)
        .map(|(p, q)| p.as_f64() * q.as_f64())
        .collect();
    let dot = b.dot(x, y).unwrap();
    within(
        dot,
        prod.iter().sum(),
        prod.iter().map(|v| v.abs()).sum(),
        n,
        "dot",
    );
    // Min and max are exact; the first index of the extreme value.
    let (mut imin, mut imax) = (0, 0);
    for (i, v) in flat.iter().enumerate() {
        if *v < flat[imin] {
            imin = i;
        }
        if *v > flat[imax] {
            imax = i;
        }
    }
    assert_eq!(b.reduce(ReduceOp::Min, a.view()).unwrap(), flat[imin]);
    assert_eq!(b.reduce(ReduceOp::Max, a.view()).unwrap(), flat[imax]);
    assert_eq!(b.arg_reduce(ArgOp::ArgMin, a.view()).unwrap(), imin);
    assert_eq!(b.arg_reduce(ArgOp::ArgMax, a.view()).unwrap(), imax);
}

/// A symmetric positive-definite n×n matrix: M·Mᵀ/n + I, computed in f64.
pub fn spd<T: Element>(n: usize, seed: u64) -> Array2<T> {
    let m = random::<f64>((n, n), seed);
    let a = m.dot(&m.t()) / n.max(1) as f64 + Array2::<f64>::eye(n);
    a.mapv(T::from_f64)
}

/// The 1-norm (largest column sum of absolute values) of an f64 matrix.
pub fn one_norm(a: &Array2<f64>) -> f64 {
    a.mapv(f64::abs)
        .sum_axis(Axis(0))
        .iter()
        .fold(0.0, |m, &v| m.max(v))
}
