//! Bad input gives the documented error, never a panic, for every operation.

use ndarray::{array, Array1, Array2, ArrayView2, Axis};
use ndgpu_core::{
    ArgOp, Cluster, Error, Factorize, Gemm, Init, KMeansConfig, MatMul, Reduce, ReduceOp, Trans,
    Transpose,
};
use ndgpu_cpu::CpuBackend;

fn cpu() -> CpuBackend {
    CpuBackend::new()
}

#[test]
fn gemm_shape_errors() {
    let a = Array2::<f32>::ones((3, 4));
    let b = Array2::<f32>::ones((5, 2));
    let b42 = Array2::<f32>::ones((4, 2));
    let c = Array2::<f32>::ones((2, 2));
    let shape = |r: ndgpu_core::Result<Array2<f32>>| matches!(r, Err(Error::ShapeMismatch { .. }));
    assert!(shape(cpu().matmul(a.view(), b.view())));
    assert!(shape(cpu().gemm(
        Gemm::new().ta(Trans::Yes),
        a.view(),
        b42.view(),
        None
    )));
    assert!(shape(cpu().gemm(
        Gemm::new().beta(1.0),
        a.view(),
        b42.view(),
        None
    )));
    let r = cpu().gemm(Gemm::new().beta(1.0), a.view(), b42.view(), Some(c.view()));
    assert!(shape(r));
    // With β = 0 a C of any shape is ignored.
    let r = cpu().gemm(Gemm::new(), a.view(), b42.view(), Some(c.view()));
    assert_eq!(r.unwrap(), Array2::from_elem((3, 2), 4.0));
}

#[test]
fn empty_products_and_transposes() {
    let a = Array2::<f64>::zeros((0, 3));
    let b = Array2::<f64>::zeros((3, 4));
    assert_eq!(cpu().matmul(a.view(), b.view()).unwrap().dim(), (0, 4));
    // k = 0: the product is all zeros, plus β·C.
    let c = Array2::from_elem((4, 3), 2.0);
    let z = Array2::<f64>::zeros((4, 0));
    let w = Array2::<f64>::zeros((0, 3));
    let r = cpu().gemm(Gemm::new().beta(0.5), z.view(), w.view(), Some(c.view()));
    assert_eq!(r.unwrap(), Array2::from_elem((4, 3), 1.0));
    assert_eq!(cpu().gram(a.view()).unwrap().dim(), (0, 0));
    assert_eq!(cpu().gram(z.view()).unwrap(), Array2::zeros((4, 4)));
}

#[test]
fn reduce_errors() {
    let e = Array2::<f32>::zeros((0, 4));
    for op in [ReduceOp::Min, ReduceOp::Max] {
        assert!(matches!(
            cpu().reduce(op, e.view()),
            Err(Error::Empty { .. })
        ));
        assert!(matches!(
            cpu().reduce_axis(op, e.view(), Axis(0)),
            Err(Error::Empty { .. })
        ));
        assert_eq!(cpu().reduce_axis(op, e.view(), Axis(1)).unwrap().len(), 0);
    }
    for op in [ArgOp::ArgMin, ArgOp::ArgMax] {
        assert!(matches!(
            cpu().arg_reduce(op, e.view()),
            Err(Error::Empty { .. })
        ));
        let r = cpu().arg_reduce_axis(op, e.view(), Axis(0));
        assert!(matches!(r, Err(Error::Empty { .. })));
    }
    assert_eq!(cpu().reduce(ReduceOp::Sum, e.view()).unwrap(), 0.0);
    assert_eq!(cpu().reduce(ReduceOp::SumSq, e.view()).unwrap(), 0.0);
    assert_eq!(
        cpu().reduce_axis(ReduceOp::Sum, e.view(), Axis(0)).unwrap(),
        Array1::zeros(4)
    );
    let a = Array2::<f32>::ones((2, 2));
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument { .. });
    assert!(invalid(
        &cpu()
            .reduce_axis(ReduceOp::Sum, a.view(), Axis(2))
            .unwrap_err()
    ));
    assert!(invalid(
        &cpu()
            .arg_reduce_axis(ArgOp::ArgMax, a.view(), Axis(5))
            .unwrap_err()
    ));
    let (x, y) = (array![1.0f64, 2.0, 3.0], array![1.0f64, 2.0]);
    assert!(matches!(
        cpu().dot(x.view(), y.view()),
        Err(Error::ShapeMismatch { .. })
    ));
    let none = Array1::<f64>::zeros(0);
    assert_eq!(cpu().dot(none.view(), none.view()).unwrap(), 0.0);
}

#[test]
fn cholesky_errors() {
    let r = cpu().cholesky(Array2::<f64>::ones((3, 5)).view());
    assert!(matches!(
        r,
        Err(Error::NotSquare {
            rows: 3,
            cols: 5,
            ..
        })
    ));
    let mut a = array![[4.0f32, 1.0, 0.0], [1.0, 4.0, 1.0], [0.0, 1.0, 4.0]];
    a[[2, 1]] = f32::NAN;
    assert!(matches!(
        cpu().cholesky(a.view()),
        Err(Error::NonFinite { index: (2, 1), .. })
    ));
    // NaN above the diagonal is never read.
    let b = array![[4.0f32, f32::NAN], [2.0, 5.0]];
    assert_eq!(
        cpu().cholesky(b.view()).unwrap(),
        array![[2.0, 0.0], [1.0, 2.0]]
    );
    // Indefinite at pivot 2: the leading 2×2 block is fine, the Schur complement is not.
    let c = array![[4.0f64, 2.0, 2.0], [2.0, 5.0, 1.0], [2.0, 1.0, 1.0]];
    match cpu().cholesky(c.view()) {
        Err(Error::NotPositiveDefinite { pivot, value }) => {
            assert_eq!(pivot, 2);
            assert!(value <= 0.0, "{value}");
        }
        other => panic!("expected pivot 2, got {other:?}"),
    }
    assert_eq!(
        cpu()
            .cholesky(Array2::<f64>::zeros((0, 0)).view())
            .unwrap()
            .dim(),
        (0, 0)
    );
}

#[test]
fn cholesky_solve_errors() {
    let l = array![[2.0f64, 0.0], [1.0, 2.0]];
    let b3 = Array2::<f64>::ones((3, 1));
    assert!(matches!(
        cpu().cholesky_solve(l.view(), b3.view()),
        Err(Error::ShapeMismatch { .. })
    ));
    let l23 = Array2::<f64>::ones((2, 3));
    let b2 = Array2::<f64>::ones((2, 1));
    assert!(matches!(
        cpu().cholesky_solve(l23.view(), b2.view()),
        Err(Error::NotSquare { .. })
    ));
    let mut bn = b2.clone();
    bn[[1, 0]] = f64::INFINITY;
    assert!(matches!(
        cpu().cholesky_solve(l.view(), bn.view()),
        Err(Error::NonFinite { .. })
    ));
    let singular = array![[2.0f64, 0.0], [1.0, 0.0]];
    let r = cpu().cholesky_solve(singular.view(), b2.view());
    assert!(matches!(r, Err(Error::NonFinite { index: (1, 1), .. })));
    let x = cpu()
        .cholesky_solve(l.view(), Array2::<f64>::zeros((2, 0)).view())
        .unwrap();
    assert_eq!(x.dim(), (2, 0));
}

#[test]
fn kmeans_errors() {
    let x = array![
        [0.0f32, 0.0],
        [1.0, 0.0],
        [0.0, 1.0],
        [5.0, 5.0],
        [6.0, 5.0]
    ];
    let invalid = |c: KMeansConfig| {
        matches!(
            cpu().kmeans(x.view(), &c),
            Err(Error::InvalidArgument { .. })
        )
    };
    assert!(invalid(KMeansConfig::new(0)));
    assert!(invalid(KMeansConfig::new(6)));
    assert!(invalid(KMeansConfig::new(2).max_iter(0)));
    assert!(invalid(KMeansConfig::new(2).change_tol(2.0)));
    assert!(invalid(KMeansConfig::new(2).tol(-1.0)));
    assert!(invalid(KMeansConfig::new(2).tol(f64::NAN)));
    assert!(invalid(
        KMeansConfig::new(2).init(Init::Given(Array2::zeros((2, 3))))
    ));
    let mut bad = x.clone();
    bad[[3, 1]] = f32::NAN;
    let r = cpu().kmeans(bad.view(), &KMeansConfig::new(2));
    assert!(matches!(r, Err(Error::NonFinite { index: (3, 1), .. })));
    // k = N works: every point its own cluster, inertia 0.
    let r = cpu().kmeans(x.view(), &KMeansConfig::new(5)).unwrap();
    assert_eq!(r.inertia, 0.0);
    let mut labels = r.labels.to_vec();
    labels.sort_unstable();
    assert_eq!(labels, vec![0, 1, 2, 3, 4]);
}

#[test]
fn predict_errors() {
    let x = Array2::<f64>::ones((4, 3));
    let c = Array2::<f64>::zeros((2, 3));
    let invalid = cpu().predict(x.view(), Array2::<f64>::zeros((0, 3)).view());
    assert!(matches!(invalid, Err(Error::InvalidArgument { .. })));
    let shape = cpu().predict(x.view(), Array2::<f64>::zeros((2, 2)).view());
    assert!(matches!(shape, Err(Error::ShapeMismatch { .. })));
    let mut cn = c.clone();
    cn[[1, 2]] = f64::NAN;
    assert!(matches!(
        cpu().predict(x.view(), cn.view()),
        Err(Error::NonFinite { .. })
    ));
    let none = cpu()
        .predict(Array2::<f64>::zeros((0, 3)).view(), c.view())
        .unwrap();
    assert_eq!(none.len(), 0);
}

/// A matrix with no elements can still claim a huge dimension (a `.npy` file of 100
/// bytes can say 2⁶²×0). The results that such a dimension sizes, but no input bytes
/// bound, are refused with `HostOutOfMemory`: never an abort or a capacity panic.
#[test]
fn results_no_machine_can_hold_are_errors() {
    let cpu = cpu();
    // 2⁶²: every result this sizes overflows the address space, so the refusal does
    // not depend on the machine's memory or its overcommit policy.
    let huge = 1usize << 62;
    let tall = ArrayView2::<f32>::from_shape((huge, 0), &[]).unwrap();
    let wide = ArrayView2::<f32>::from_shape((0, huge), &[]).unwrap();
    let oom = |r: Result<(), Error>, op: &str| match r {
        Err(Error::HostOutOfMemory { op: got, .. }) => assert_eq!(got, op),
        other => panic!("{op}: expected HostOutOfMemory, got {other:?}"),
    };
    oom(cpu.gram(tall).map(drop), "gram");
    oom(cpu.matmul(tall, wide).map(drop), "gemm");
    oom(
        cpu.reduce_axis(ReduceOp::Sum, tall, Axis(1)).map(drop),
        "sum",
    );
    oom(
        cpu.reduce_axis(ReduceOp::SumSq, wide, Axis(0)).map(drop),
        "sumsq",
    );
    let config = KMeansConfig::new(1);
    oom(cpu.kmeans(tall, &config).map(drop), "kmeans");
    let c = ArrayView2::<f32>::from_shape((1, 0), &[]).unwrap();
    oom(cpu.predict(tall, c).map(drop), "predict");
    // Results the empty dimension does not size stay cheap and correct.
    assert_eq!(cpu.transpose(tall).unwrap().dim(), (0, huge));
    assert_eq!(cpu.reduce(ReduceOp::Sum, tall).unwrap(), 0.0);
}
