//! Each `run` operation, generic over the element type: read the inputs, time the
//! backend call, hand the results to the [`Report`].

use std::path::Path;
use std::time::Instant;

use ndarray::{Array0, Array1, Axis};
use ndgpu::{ArgOp, Element, Init, KMeansConfig, Ops, ReduceOp, Trans};
use serde_json::Value;

use crate::args::ReduceArg;
use crate::check;
use crate::error::{Failure, Result};
use crate::npy::{self, read_matrix, read_operand, read_vector, Vector};
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
    /// A is symmetric positive definite: Cholesky, not LU.
    pub pos: bool,
    /// The first input is the Cholesky factor L (with `pos` only).
    pub factor: bool,
}

/// What every `run` operation works with: the backend, the summary, and where the
/// result goes (`-o`, or the `--out-dir` folder of lu and qr; `None`: printed).
pub struct Ctx<'a, B: ?Sized> {
    pub b: &'a B,
    pub rep: &'a mut Report,
    pub out: Option<&'a Path>,
}

/// Runs `f`, recording its wall time (device work included: every backend call
/// returns host arrays, so it has finished when the call returns).
pub(crate) fn timed<R>(rep: &mut Report, f: impl FnOnce() -> ndgpu::Result<R>) -> Result<R> {
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

pub fn matmul<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, g: &Gemm) -> Result<()> {
    let Ctx { b, rep, out } = cx;
    let beta = match (g.c, g.beta) {
        (Some(_), None) => {
            return Err(Failure::usage(
                "matmul: C was given without --beta (its weight)",
            ))
        }
        (_, beta) => beta.unwrap_or(0.0),
    };
    // NumPy's matmul: a 1-D A is a row, a 1-D B a column, and that axis is dropped from
    // the result; transposing a 1-D array leaves it as it is.
    let (a, a_vec) = read_operand::<T>(g.a, Vector::Row)?;
    let (bm, b_vec) = read_operand::<T>(g.b, Vector::Column)?;
    let result_vec = a_vec != b_vec;
    let c = match g.c {
        None => None,
        Some(p) => {
            let side = if a_vec { Vector::Row } else { Vector::Column };
            let (c, c_vec) = read_operand::<T>(p, side)?;
            // No broadcasting: C has the result's shape, rank included.
            let rank = 2 - usize::from(a_vec) - usize::from(b_vec);
            if c_vec != result_vec || rank == 0 {
                return Err(Failure::failed(format!(
                    "matmul: {}: C must have the result's rank ({rank}), it has rank {}",
                    p.display(),
                    2 - usize::from(c_vec)
                )));
            }
            Some((c, c_vec))
        }
    };
    rep.shape("a", &shape_of(&a, a_vec));
    rep.shape("b", &shape_of(&bm, b_vec));
    if let Some((c, c_vec)) = &c {
        rep.shape("c", &shape_of(c, *c_vec));
    }
    let (ta, tb) = (g.trans_a && !a_vec, g.trans_b && !b_vec);
    let operand = |m: &ndarray::Array2<T>, vector, trans| check::Operand {
        dim: m.dim(),
        vector,
        trans,
    };
    let c_shape = c.as_ref().map(|(c, c_vec)| shape_of(c, *c_vec));
    check::matmul(
        operand(&a, a_vec, ta),
        operand(&bm, b_vec, tb),
        c_shape.as_deref(),
    )?;
    rep.field("alpha", g.alpha);
    rep.field("beta", beta);
    rep.field("trans_a", ta);
    rep.field("trans_b", tb);
    let params = ndgpu::Gemm::new()
        .alpha(T::from_f64(g.alpha))
        .beta(T::from_f64(beta))
        .ta(trans(ta))
        .tb(trans(tb));
    let r = timed(rep, || {
        b.gemm(
            params,
            a.view(),
            bm.view(),
            c.as_ref().map(|(c, _)| c.view()),
        )
    })?;
    match (a_vec, b_vec) {
        (true, true) => scalar(rep, r[[0, 0]], out),
        (true, false) => rep.deliver("output", &r.row(0).to_owned(), out, "-o"),
        (false, true) => rep.deliver("output", &r.column(0).to_owned(), out, "-o"),
        (false, false) => rep.deliver("output", &r, out, "-o"),
    }
}

/// The shape of an operand as the file has it: a vector read as a row or a column is
/// reported 1-D.
pub(crate) fn shape_of<T>(m: &ndarray::Array2<T>, vector: bool) -> Vec<usize> {
    if vector {
        vec![m.len()]
    } else {
        m.shape().to_vec()
    }
}

/// The operations of one matrix that give one matrix.
#[derive(Debug, Clone, Copy)]
pub enum Unary {
    Gram,
    Transpose,
    Cholesky,
    Inv,
}

/// Runs an operation of one matrix that gives one matrix (the input is reported as `m`
/// for gram, `a` otherwise, the names of their `ndgpu run` arguments).
pub fn unary<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, op: Unary, path: &Path) -> Result<()> {
    let Ctx { b, rep, out } = cx;
    if let Unary::Transpose = op {
        // NumPy: the transpose of a 1-D array is the array itself.
        let (m, vector) = read_operand::<T>(path, Vector::Row)?;
        if vector {
            let v = m.row(0).to_owned();
            rep.shape("a", v.shape());
            return rep.deliver("output", &v, out, "-o");
        }
    }
    let m = read_matrix::<T>(path, false)?;
    rep.shape(if matches!(op, Unary::Gram) { "m" } else { "a" }, m.shape());
    let r = timed(rep, || match op {
        Unary::Gram => b.gram(m.view()),
        Unary::Transpose => b.transpose(m.view()),
        Unary::Cholesky => b.cholesky(m.view()),
        Unary::Inv => b.inv(m.view()),
    })?;
    rep.deliver("output", &r, out, "-o")
}

pub fn reduce<T: Float, B: ?Sized + Ops<T>>(
    cx: Ctx<B>,
    a: &Path,
    (op, axis): (ReduceArg, Option<i8>),
) -> Result<()> {
    let Ctx { b, rep, out } = cx;
    // A vector is reduced as a 1×n row: the whole-array results (and the flat index of
    // argmin/argmax) are the vector's.
    let (a, vector) = read_operand::<T>(a, Vector::Row)?;
    rep.shape("a", &shape_of(&a, vector));
    // Negative axes count from the last, as NumPy's.
    let (axis, axis_field) = match (axis, vector) {
        (None, _) => (None, None),
        // The one axis of a vector: a reduction along it is the whole-array one (NumPy
        // gives a 0-d result too).
        (Some(0 | -1), true) => (None, Some(0)),
        (Some(ax), true) => {
            return Err(Failure::usage(format!(
                "--axis {ax} is out of range for a 1-D array (its only axis is 0, or -1)"
            )))
        }
        (Some(ax), false) => {
            let ax = ax.rem_euclid(2) as usize;
            (Some(ax), Some(ax))
        }
    };
    // The mean is the sum over the count (`Reduce::mean`).
    let mean = op == ReduceArg::Mean;
    let value_op = match op {
        ReduceArg::Sum | ReduceArg::Mean => Ok(ReduceOp::Sum),
        ReduceArg::Sumsq => Ok(ReduceOp::SumSq),
        ReduceArg::Min => Ok(ReduceOp::Min),
        ReduceArg::Max => Ok(ReduceOp::Max),
        ReduceArg::Argmin => Err(ArgOp::ArgMin),
        ReduceArg::Argmax => Err(ArgOp::ArgMax),
    };
    let name = match value_op {
        _ if mean => "mean",
        Ok(v) => v.name(),
        Err(g) => g.name(),
    };
    rep.field("reduction", name);
    rep.field("axis", axis_field.map_or(Value::Null, Value::from));
    let v = a.view();
    match (value_op, axis) {
        (Ok(_), None) if mean => {
            let x = timed(rep, || b.mean(v))?;
            scalar(rep, x, out)
        }
        (Ok(_), Some(ax)) if mean => {
            let r = timed(rep, || b.mean_axis(v, Axis(ax)))?;
            rep.deliver("output", &r, out, "-o")
        }
        (Ok(op), None) => {
            let x = timed(rep, || b.reduce(op, v))?;
            scalar(rep, x, out)
        }
        (Err(op), None) => {
            let i = timed(rep, || b.arg_reduce(op, v))?;
            rep.field("result", i);
            if vector {
                rep.line(i.to_string());
            } else {
                // Not empty (the backend said so), so ncols > 0.
                let (row, col) = (i / a.ncols().max(1), i % a.ncols().max(1));
                rep.field("row", row);
                rep.field("col", col);
                rep.line(format!("{i} (row {row}, column {col})"));
            }
            deliver_opt(rep, &Array0::from_elem((), i as i64), out)
        }
        (Ok(op), Some(ax)) => {
            let r = timed(rep, || b.reduce_axis(op, v, Axis(ax)))?;
            rep.deliver("output", &r, out, "-o")
        }
        (Err(op), Some(ax)) => {
            let r = timed(rep, || b.arg_reduce_axis(op, v, Axis(ax)))?;
            rep.deliver("output", &indices(&r), out, "-o")
        }
    }
}

/// A scalar result: printed, a JSON field, and a 0-d `.npy` if asked for.
pub(crate) fn scalar<T: Float>(rep: &mut Report, x: T, out: Option<&Path>) -> Result<()> {
    rep.field("result", crate::report::number(x));
    rep.line(x.to_string());
    deliver_opt(rep, &Array0::from_elem((), x), out)
}

/// Writes a scalar's 0-d array only when a path was given (it is already printed).
fn deliver_opt<A>(rep: &mut Report, a: &Array0<A>, out: Option<&Path>) -> Result<()>
where
    A: ndarray_npy::WritableElement + Copy + Into<Value> + std::fmt::Display,
{
    match out {
        Some(p) => rep.deliver("output", a, Some(p), "-o"),
        None => Ok(()),
    }
}

/// Indices as int64, the dtype NumPy uses for them.
fn indices(a: &Array1<usize>) -> Array1<i64> {
    a.mapv(|i| i as i64)
}

pub fn dot<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, x: &Path, y: &Path) -> Result<()> {
    let Ctx { b, rep, out } = cx;
    let x = read_vector::<T>(x)?;
    let y = read_vector::<T>(y)?;
    rep.shape("x", x.shape());
    rep.shape("y", y.shape());
    check::dot(x.len(), y.len())?;
    let r = timed(rep, || b.dot(x.view(), y.view()))?;
    scalar(rep, r, out)
}

pub fn solve<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, s: &Solve) -> Result<()> {
    let Ctx { b, rep, out } = cx;
    let a = read_matrix::<T>(s.a, false)?;
    let (rhs, vector) = read_operand::<T>(s.b, Vector::Column)?;
    rep.shape(if s.factor { "l" } else { "a" }, a.shape());
    rep.shape("b", &shape_of(&rhs, vector));
    rep.field("assume_a", if s.pos { "pos" } else { "gen" });
    if s.pos {
        rep.field("factor_given", s.factor);
    }
    let x = timed(rep, || match (s.pos, s.factor) {
        (false, _) => b.solve(a.view(), rhs.view()),
        (true, true) => b.cholesky_solve(a.view(), rhs.view()),
        (true, false) => b.cholesky_solve(b.cholesky(a.view())?.view(), rhs.view()),
    })?;
    deliver_solution(rep, x, vector, out)
}

/// Writes (or prints) a solution X with the rank of its right-hand side: 1-D when B
/// was.
pub(crate) fn deliver_solution<T: Float>(
    rep: &mut Report,
    x: ndarray::Array2<T>,
    vector: bool,
    out: Option<&Path>,
) -> Result<()> {
    if vector {
        rep.deliver("output", &x.column(0).to_owned(), out, "-o")
    } else {
        rep.deliver("output", &x, out, "-o")
    }
}

/// The k-means configuration from the command line; `init` is `kmeans++` (or
/// scikit-learn's `k-means++`), `kmeans||` (or `k-means||`), `random` or a `.npy` file
/// of starting centroids (either float dtype).
pub fn kmeans_config(
    k: usize,
    seed: u64,
    tol: f64,
    max_iter: usize,
    init: &str,
) -> Result<KMeansConfig> {
    let init = match init {
        "kmeans++" | "k-means++" => Init::KMeansPlusPlus,
        "kmeans||" | "k-means||" => Init::kmeans_parallel(),
        "random" => Init::Random,
        path => Init::Given(npy::read_matrix_f64(Path::new(path)).map_err(|e| {
            Failure::usage(format!(
                "--init is not kmeans++, k-means++, kmeans||, k-means|| or random, and as a file: {}",
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

/// scikit-learn's warning when a fit leaves clusters empty: how many distinct clusters
/// were found, which are empty, and the centroid each of theirs repeats. `None` when
/// none is.
fn empty_clusters_warning<T: Float>(r: &ndgpu::KMeansResult<T>) -> Option<String> {
    let k = r.centroids.nrows();
    if r.empty_clusters.is_empty() {
        return None;
    }
    let each: Vec<String> = r
        .empty_clusters
        .iter()
        .map(|&e| {
            let same = (0..k).find(|&j| j != e && r.centroids.row(j) == r.centroids.row(e));
            match same {
                Some(j) => format!("cluster {e} is empty, its centroid repeating cluster {j}'s"),
                None => format!("cluster {e} is empty, its centroid where it was last moved"),
            }
        })
        .collect();
    Some(format!(
        "k-means: {} distinct clusters found, fewer than k = {k} ({}); possibly duplicate \
         points in X",
        k - r.empty_clusters.len(),
        each.join("; ")
    ))
}

/// k-means of the points in `x`: the centroids into `centroids`, the labels into the
/// context's output.
pub fn kmeans<T: Float, B: ?Sized + Ops<T>>(
    cx: Ctx<B>,
    x: &Path,
    cfg: &KMeansConfig,
    centroids: Option<&Path>,
) -> Result<()> {
    let Ctx {
        b,
        rep,
        out: labels,
    } = cx;
    let x = read_matrix::<T>(x, false)?;
    rep.shape("x", x.shape());
    rep.field("k", cfg.k);
    rep.field("seed", cfg.seed);
    rep.field("tol", cfg.tol);
    rep.field("change_tol", cfg.change_tol);
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
    let mut sizes = vec![0usize; cfg.k];
    for &l in &r.labels {
        if let Some(n) = sizes.get_mut(l) {
            *n += 1;
        }
    }
    rep.line(format!("cluster sizes: {sizes:?}"));
    rep.field("cluster_sizes", sizes);
    if let Some(text) = empty_clusters_warning(&r) {
        use std::io::Write as _;
        // Not eprintln!, which panics when stderr cannot be written.
        let _ = writeln!(std::io::stderr().lock(), "warning: {text}");
    }
    rep.field("empty_clusters", r.empty_clusters.clone());
    rep.deliver(
        "centroids",
        &r.centroids,
        centroids,
        "--centroids or --out-dir",
    )?;
    let labels_option = "-o (--labels) or --out-dir";
    match labels {
        // One label per point is too much for a JSON summary: the cluster sizes stand
        // for them.
        None if rep.is_json() => {
            rep.shape("labels", r.labels.shape());
            rep.field(
                "labels_note",
                format!("labels not printed: {labels_option} writes them"),
            );
            Ok(())
        }
        _ => rep.deliver("labels", &indices(&r.labels), labels, labels_option),
    }
}

pub fn predict<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, x: &Path, c: &Path) -> Result<()> {
    let Ctx { b, rep, out } = cx;
    let x = read_matrix::<T>(x, false)?;
    let c = read_matrix::<T>(c, false)?;
    rep.shape("x", x.shape());
    rep.shape("centroids", c.shape());
    let labels = timed(rep, || b.predict(x.view(), c.view()))?;
    rep.deliver("labels", &indices(&labels), out, "-o")
}
