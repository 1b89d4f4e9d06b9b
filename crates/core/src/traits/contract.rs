//! The contract itself, tested: a backend with no families answers `Unsupported`, and
//! the family traits' checks run before any kernel is reached.

use ndarray::{array, Array2, Axis};

use crate::backend::Here;
use crate::{
    ArgOp, Backend, CholeskyFactor, Element, Error, Factorize, Gemm, Indices, MatMul,
    MatMulKernels, Matrix, Memory, Place, Reduce, ReduceKernels, ReduceOp, Result, Transpose,
    Variants,
};

const BARE: Here = Here {
    backend: "bare",
    place: Place::Host,
};

/// Memory and nothing else.
struct Bare(Variants);
crate::impl_host_memory!(Bare, BARE);
impl<T: Element> super::Kernels<T> for Bare {}
impl Backend for Bare {
    fn description(&self) -> String {
        "memory only".into()
    }
    fn variant_table(&self) -> &Variants {
        &self.0
    }
    fn variant_table_mut(&mut self) -> &mut Variants {
        &mut self.0
    }
}

/// Kernels that must never run: every call reaching one is a bug of the contract.
struct Tripwire;
const TRIP: Here = Here {
    backend: "tripwire",
    place: Place::Host,
};
crate::impl_host_memory!(Tripwire, TRIP);
crate::impl_kernels!(Tripwire, Element: matmul, reduce);
impl<T: Element> MatMulKernels<T> for Tripwire {
    fn gemm_unchecked(&self, _: Gemm<T>, ab: [&Matrix<T>; 2], _: &mut Matrix<T>) -> Result<()> {
        let [_, _] = ab;
        panic!("gemm kernel reached")
    }
    fn gram_unchecked(&self, _: &Matrix<T>) -> Result<Matrix<T>> {
        panic!("gram kernel reached")
    }
}
impl<T: Element> ReduceKernels<T> for Tripwire {
    fn reduce_unchecked(&self, _: ReduceOp, _: &Matrix<T>) -> Result<T> {
        panic!("reduce kernel reached")
    }
    fn reduce_axis_unchecked(&self, _: ReduceOp, _: &Matrix<T>, _: Axis) -> Result<Matrix<T>> {
        panic!("reduce kernel reached")
    }
    fn arg_reduce_unchecked(&self, _: ArgOp, _: &Matrix<T>) -> Result<usize> {
        panic!("arg kernel reached")
    }
    fn arg_reduce_axis_unchecked(&self, _: ArgOp, _: &Matrix<T>, _: Axis) -> Result<Indices> {
        panic!("arg kernel reached")
    }
    fn dot_unchecked(&self, _: &Matrix<T>, _: &Matrix<T>) -> Result<T> {
        panic!("dot kernel reached")
    }
}

fn unsupported(r: Result<impl std::fmt::Debug>, op: &str) {
    match r {
        Err(Error::Unsupported {
            backend: "bare",
            op: o,
        }) if o == op => {}
        other => panic!("{op}: expected Unsupported from bare, got {other:?}"),
    }
}

#[test]
fn a_backend_without_a_family_answers_unsupported_naming_it_and_the_operation() {
    let b = Bare(Variants::new("bare", vec![]));
    let a = array![[1.0f64, 2.0], [2.0, 5.0]];
    unsupported(b.matmul(a.view(), a.view()), "gemm");
    unsupported(b.gram(a.view()), "gram");
    unsupported(b.transpose(a.view()), "transpose");
    unsupported(b.reduce(ReduceOp::Sum, a.view()), "sum");
    unsupported(b.cholesky(a.view()), "cholesky");
    let e = b.cholesky(a.view()).unwrap_err().to_string();
    assert_eq!(e, "backend 'bare' does not implement cholesky");
    // Memory works without any family.
    let m = b.upload(a.view()).unwrap();
    assert_eq!(b.download(&m).unwrap(), a);
    let boxed: Box<dyn Backend> = Box::new(b);
    unsupported(
        crate::Cluster::<f32>::predict(
            boxed.as_ref(),
            Array2::zeros((2, 2)).view(),
            Array2::zeros((1, 2)).view(),
        ),
        "kmeans",
    );
}

#[test]
fn shapes_are_checked_before_any_kernel_runs() {
    let t = Tripwire;
    let (a, b) = (Array2::<f32>::zeros((2, 3)), Array2::<f32>::zeros((2, 3)));
    let (da, db) = (t.upload(a.view()).unwrap(), t.upload(b.view()).unwrap());
    let mut c = t.alloc(2, 2).unwrap();
    assert!(matches!(
        t.gemm_dev(Gemm::new(), &da, &db, &mut c),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        t.matmul(a.view(), b.view()),
        Err(Error::ShapeMismatch { .. })
    ));
    let empty = t.upload(Array2::<f32>::zeros((0, 3)).view()).unwrap();
    assert!(matches!(
        t.reduce_dev(ReduceOp::Min, &empty),
        Err(Error::Empty { .. })
    ));
    assert!(matches!(
        t.arg_reduce_dev(ArgOp::ArgMax, &empty),
        Err(Error::Empty { .. })
    ));
    assert!(matches!(
        t.reduce_axis_dev(ReduceOp::Max, &empty, Axis(0)),
        Err(Error::Empty { .. })
    ));
    assert!(matches!(
        t.reduce_axis_dev(ReduceOp::Sum, &da, Axis(2)),
        Err(Error::InvalidArgument { .. })
    ));
    let v = t.upload(Array2::<f32>::zeros((1, 4)).view()).unwrap();
    assert!(matches!(
        t.dot_dev(&da, &v),
        Err(Error::ShapeMismatch { .. })
    ));
    // A family the tripwire lacks is Unsupported, not a shape check of another's.
    let square = t.upload(Array2::<f32>::eye(2).view()).unwrap();
    assert!(matches!(
        t.cholesky_dev(&square),
        Err(Error::Unsupported { op: "cholesky", .. })
    ));
    assert!(matches!(t.cholesky_dev(&da), Err(Error::NotSquare { .. })));
    let l: CholeskyFactor<f32> =
        crate::backend::cholesky_factor(t.upload(Array2::<f32>::eye(2).view()).unwrap());
    let mut rhs = t.upload(Array2::<f32>::zeros((3, 1)).view()).unwrap();
    assert!(matches!(
        t.cholesky_solve_in_place_dev(&l, &mut rhs),
        Err(Error::ShapeMismatch { .. })
    ));
}
