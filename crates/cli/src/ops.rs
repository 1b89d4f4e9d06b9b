//! Each `run` operation, generic over the element type: read the inputs, time the
//! backend call, hand the results to the [`Report`].

use std::path::Path;
use std::time::Instant;

use ndarray::{Array0, Array1, Axis};
use ndgpu::{ArgOp, Element, Init, KMeansConfig, Ops, ReduceOp, Trans};
use serde_json::Value;

use crate::args::ReduceArg;
use crate::error::{Failure, Result};
use crate::npy::{self, read_matrix, read_vector};
use crate::report::Report;

/// The element types the tool reads and writes: `f32` and `f64`.
pub trait Float:
    Element + ndarray_npy::ReadableElement + ndarray_npy::WritableElement + Into<Value>
{
}
impl<T> Float for T where
    T: Element + ndarray_npy::ReadableElement + ndarray_npy::WritableElement + Into<Value>
{
}

/// The inputs and options of `run matmul`.
pub struct Gemm<'a> {
    pub a: &'a Path,
    pub b: &'a Path,
    pub c: Option<&'a Path>,
    pub trans_a: bool,
    pub trans_b: bool,
    pub alpha: f64,
    pub beta: Option<f64>,
}

/// The inputs of `run solve`.
pub struct Solve<'a> {
    pub a: &'a Path,
    pub b: &'a Path,
    pub factor: bool,
}

/// Runs `f`, recording its wall time (device work included: every backend call
/// returns host arrays, so it has finished when the call returns).
fn timed<R>(rep: &mut Report, f: impl FnOnce() -> ndgpu::Result<R>) -> Result<R> {
    let start = Instant::now();
    let r = f()?;
    rep.field("seconds", start.elapsed().as_secs_f64());
    Ok(r)
}

fn trans(yes: bool) -> Trans {
    if yes {
        Trans::Yes
    } else {
        Trans::No
    }
}

pub fn matmul<T: Float, B: ?Sized + Ops<T>>(
    b: &B,
    g: &Gemm,
    out: Option<&Path>,
    rep: &mut Report,
) -> Result<()> {
    let beta = match (g.c, g.beta) {
        (Some(_), None) => {
            return Err(Failure::usage(
                "matmul: C was given without --beta (its weight)",
            ))
        }
        (_, beta) => beta.unwrap_or(0.0),
    };
    let a = read_matrix::<T>(g.a, false)?;
    let bm = read_matrix::<T>(g.b, false)?;
    let c = g.c.map(|p| read_matrix::<T>(p, false)).transpose()?;
    rep.shape("a", a.shape());
    rep.shape("b", bm.shape());
    if let Some(c) = &c {
        rep.shape("c", c.shape());
    }
    rep.field("alpha", g.alpha);
    rep.field("beta", beta);
    rep.field("trans_a", g.trans_a);
    rep.field("trans_b", g.trans_b);
    let params = ndgpu::Gemm::new()
        .alpha(T::from_f64(g.alpha))
        .beta(T::from_f64(beta))
        .ta(trans(g.trans_a))
        .tb(trans(g.trans_b));
    let r = timed(rep, || {
        b.gemm(params, a.view(), bm.view(), c.as_ref().map(|c| c.view()))
    })?;
    rep.deliver("output", &r, out)
}

/// An operation of one matrix that gives one matrix: the input is reported under `key`.
fn one_matrix<T: Float>(
    key: &str,
    path: &Path,
    out: Option<&Path>,
    rep: &mut Report,
    op: impl FnOnce(ndarray::ArrayView2<T>) -> ndgpu::Result<ndarray::Array2<T>>,
) -> Result<()> {
    let m = read_matrix::<T>(path, false)?;
    rep.shape(key, m.shape());
    let r = timed(rep, || op(m.view()))?;
    rep.deliver("output", &r, out)
}

pub fn gram<T: Float, B: ?Sized + Ops<T>>(
    b: &B,
    m: &Path,
    out: Option<&Path>,
    rep: &mut Report,
) -> Result<()> {
    one_matrix("m", m, out, rep, |m| b.gram(m))
}

pub fn transpose<T: Float, B: ?Sized + Ops<T>>(
    b: &B,
    a: &Path,
    out: Option<&Path>,
    rep: &mut Report,
) -> Result<()> {
    one_matrix("a", a, out, rep, |a| b.transpose(a))
}

pub fn reduce<T: Float, B: ?Sized + Ops<T>>(
    b: &B,
    a: &Path,
    op: ReduceArg,
    axis: Option<u8>,
    out: Option<&Path>,
    rep: &mut Report,
) -> Result<()> {
    let a = read_matrix::<T>(a, false)?;
    rep.shape("a", a.shape());
    let value_op = match op {
        ReduceArg::Sum => Ok(ReduceOp::Sum),
        ReduceArg::Sumsq => Ok(ReduceOp::SumSq),
        ReduceArg::Min => Ok(ReduceOp::Min),
        ReduceArg::Max => Ok(ReduceOp::Max),
        ReduceArg::Argmin => Err(ArgOp::ArgMin),
        ReduceArg::Argmax => Err(ArgOp::ArgMax),
    };
    let name = match value_op {
        Ok(v) => v.name(),
        Err(g) => g.name(),
    };
    rep.field("reduction", name);
    rep.field("axis", axis.map_or(Value::Null, Value::from));
    let v = a.view();
    match (value_op, axis) {
        (Ok(op), None) => {
            let x = timed(rep, || b.reduce(op, v))?;
            scalar(rep, x, out)
        }
        (Err(op), None) => {
            let i = timed(rep, || b.arg_reduce(op, v))?;
            // Not empty (the backend said so), so ncols > 0.
            let (row, col) = (i / a.ncols().max(1), i % a.ncols().max(1));
            rep.field("result", i);
            rep.field("row", row);
            rep.field("col", col);
            rep.line(format!("{i} (row {row}, column {col})"));
            deliver_opt(rep, &Array0::from_elem((), i as i64), out)
        }
        (Ok(op), Some(ax)) => {
            let r = timed(rep, || b.reduce_axis(op, v, Axis(ax.into())))?;
            rep.deliver("output", &r, out)
        }
        (Err(op), Some(ax)) => {
            let r = timed(rep, || b.arg_reduce_axis(op, v, Axis(ax.into())))?;
            rep.deliver("output", &indices(&r), out)
        }
    }
}

/// A scalar result: printed, a JSON field, and a 0-d `.npy` if asked for.
fn scalar<T: Float>(rep: &mut Report, x: T, out: Option<&Path>) -> Result<()> {
    rep.field("result", x);
    rep.line(x.to_string());
    deliver_opt(rep, &Array0::from_elem((), x), out)
}

/// Writes a scalar's 0-d array only when a path was given (it is already printed).
fn deliver_opt<A>(rep: &mut Report, a: &Array0<A>, out: Option<&Path>) -> Result<()>
where
    A: ndarray_npy::WritableElement + Copy + Into<Value> + std::fmt::Display,
{
    match out {
        Some(p) => rep.deliver("output", a, Some(p)),
        None => Ok(()),
    }
}

/// Indices as int64, the dtype NumPy uses for them.
fn indices(a: &Array1<usize>) -> Array1<i64> {
    a.mapv(|i| i as i64)
}

pub fn dot<T: Float, B: ?Sized + Ops<T>>(
    b: &B,
    x: &Path,
    y: &Path,
    out: Option<&Path>,
    rep: &mut Report,
) -> Result<()> {
    let x = read_vector::<T>(x)?;
    let y = read_vector::<T>(y)?;
    rep.shape("x", x.shape());
    rep.shape("y", y.shape());
    let r = timed(rep, || b.dot(x.view(), y.view()))?;
    scalar(rep, r, out)
}

pub fn cholesky<T: Float, B: ?Sized + Ops<T>>(
    b: &B,
    a: &Path,
    out: Option<&Path>,
    rep: &mut Report,
) -> Result<()> {
    one_matrix("a", a, out, rep, |a| b.cholesky(a))
}

pub fn solve<T: Float, B: ?Sized + Ops<T>>(
    b: &B,
    s: &Solve,
    out: Option<&Path>,
    rep: &mut Report,
) -> Result<()> {
    let a = read_matrix::<T>(s.a, false)?;
    let rhs = read_matrix::<T>(s.b, true)?;
    let vector = npy::header(s.b)?.shape.len() == 1;
    rep.shape(if s.factor { "l" } else { "a" }, a.shape());
    rep.shape(
        "b",
        if vector {
            &rhs.shape()[..1]
        } else {
            rhs.shape()
        },
    );
    rep.field("factor_given", s.factor);
    let x = timed(rep, || {
        if s.factor {
            b.cholesky_solve(a.view(), rhs.view())
        } else {
            b.cholesky_solve(b.cholesky(a.view())?.view(), rhs.view())
        }
    })?;
    if vector {
        rep.deliver("output", &x.column(0).to_owned(), out)
    } else {
        rep.deliver("output", &x, out)
    }
}

/// The k-means configuration from the command line; `init` is `kmeans++`, `random`
/// or a `.npy` file of starting centroids (either float dtype).
pub fn kmeans_config(
    k: usize,
    seed: u64,
    tol: f64,
    max_iter: usize,
    init: &str,
) -> Result<KMeansConfig> {
    let init = match init {
        "kmeans++" => Init::KMeansPlusPlus,
        "random" => Init::Random,
        path => Init::Given(npy::read_matrix_f64(Path::new(path)).map_err(|e| {
            Failure::usage(format!(
                "--init is not kmeans++ or random, and as a file: {}",
                e.message
            ))
        })?),
    };
    Ok(KMeansConfig::new(k)
        .seed(seed)
        .tol(tol)
        .max_iter(max_iter)
        .init(init))
}

pub fn kmeans<T: Float, B: ?Sized + Ops<T>>(
    b: &B,
    x: &Path,
    cfg: &KMeansConfig,
    centroids: Option<&Path>,
    labels: Option<&Path>,
    rep: &mut Report,
) -> Result<()> {
    let x = read_matrix::<T>(x, false)?;
    rep.shape("x", x.shape());
    rep.field("k", cfg.k);
    rep.field("seed", cfg.seed);
    rep.field("tol", cfg.tol);
    rep.field("max_iter", cfg.max_iter);
    let r = timed(rep, || b.kmeans(x.view(), cfg))?;
    rep.field("inertia", r.inertia);
    rep.field("iterations", r.iterations);
    rep.field("converged", r.converged);
    rep.line(format!(
        "inertia {}, {} iteration(s), {}",
        r.inertia,
        r.iterations,
        if r.converged {
            "converged"
        } else {
            "stopped at --max-iter"
        }
    ));
    rep.deliver("centroids", &r.centroids, centroids)?;
    rep.deliver("labels", &indices(&r.labels), labels)
}

pub fn predict<T: Float, B: ?Sized + Ops<T>>(
    b: &B,
    x: &Path,
    centroids: &Path,
    out: Option<&Path>,
    rep: &mut Report,
) -> Result<()> {
    let x = read_matrix::<T>(x, false)?;
    let c = read_matrix::<T>(centroids, false)?;
    rep.shape("x", x.shape());
    rep.shape("centroids", c.shape());
    let labels = timed(rep, || b.predict(x.view(), c.view()))?;
    rep.deliver("labels", &indices(&labels), out)
}
