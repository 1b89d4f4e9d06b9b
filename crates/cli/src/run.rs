//! `ndgpu run <op>`: opens the backend, settles the element type, hands the operation
//! to its generic implementation in `ops.rs`, then prints the summary.

use std::path::Path;

use ndgpu::{Backend, DType, Family};

use crate::args::{Common, DTypeArg, Op};
use crate::error::{Failure, Result};
use crate::npy;
use crate::ops::{self, Solve};
use crate::report::Report;

/// The operation's name, the family whose variant `--variant` selects, its common
/// options, and its first input (whose dtype is the default element type).
fn describe(op: &Op) -> (&'static str, Family, &Common, &Path) {
    match op {
        Op::Matmul { common, a, .. } => ("matmul", Family::MatMul, common, a),
        Op::Gram { common, m, .. } => ("gram", Family::Gram, common, m),
        Op::Transpose { common, a, .. } => ("transpose", Family::Transpose, common, a),
        Op::Reduce { common, a, .. } => ("reduce", Family::Reduce, common, a),
        Op::Dot { common, x, .. } => ("dot", Family::Reduce, common, x),
        Op::Cholesky { common, a, .. } => ("cholesky", Family::Cholesky, common, a),
        Op::Solve { common, a, .. } => ("solve", Family::Cholesky, common, a),
        Op::Kmeans { common, x, .. } => ("kmeans", Family::KMeans, common, x),
        Op::Predict { common, x, .. } => ("predict", Family::KMeans, common, x),
    }
}

/// Calls `ops::$f::<T, _>` with `T` the element type chosen at run time.
macro_rules! by_dtype {
    ($dtype:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        match $dtype {
            DType::F32 => ops::$f::<f32, _>($($arg),*),
            DType::F64 => ops::$f::<f64, _>($($arg),*),
        }
    };
}

pub fn run(op: Op) -> Result<()> {
    let (name, fam, common, first) = describe(&op);
    let dtype = element_type(common, first)?;
    let backend = open(common, fam)?;
    let b: &dyn Backend = &*backend;
    let mut rep = Report::new(common.json);
    match &op {
        Op::Matmul {
            a,
            b: bp,
            c,
            trans_a,
            trans_b,
            alpha,
            beta,
            out,
            ..
        } => {
            let gemm = ops::Gemm {
                a,
                b: bp,
                c: c.as_deref(),
                trans_a: *trans_a,
                trans_b: *trans_b,
                alpha: *alpha,
                beta: *beta,
            };
            by_dtype!(dtype, matmul(b, &gemm, out.output.as_deref(), &mut rep))
        }
        Op::Gram { m, out, .. } => by_dtype!(dtype, gram(b, m, out.output.as_deref(), &mut rep)),
        Op::Transpose { a, out, .. } => {
            by_dtype!(dtype, transpose(b, a, out.output.as_deref(), &mut rep))
        }
        Op::Reduce {
            a, op, axis, out, ..
        } => {
            by_dtype!(
                dtype,
                reduce(b, a, *op, *axis, out.output.as_deref(), &mut rep)
            )
        }
        Op::Dot { x, y, out, .. } => {
            by_dtype!(dtype, dot(b, x, y, out.output.as_deref(), &mut rep))
        }
        Op::Cholesky { a, out, .. } => {
            by_dtype!(dtype, cholesky(b, a, out.output.as_deref(), &mut rep))
        }
        Op::Solve {
            a,
            b: bp,
            factor,
            out,
            ..
        } => {
            let s = Solve {
                a,
                b: bp,
                factor: *factor,
            };
            by_dtype!(dtype, solve(b, &s, out.output.as_deref(), &mut rep))
        }
        Op::Kmeans {
            x,
            k,
            seed,
            tol,
            max_iter,
            init,
            out_dir,
            centroids,
            labels,
            ..
        } => {
            let cfg = ops::kmeans_config(*k, *seed, *tol, *max_iter, init)?;
            let dir = |file: &str| out_dir.as_ref().map(|d| d.join(file));
            if let Some(d) = out_dir {
                std::fs::create_dir_all(d)
                    .map_err(|e| Failure::usage(format!("cannot create {}: {e}", d.display())))?;
            }
            let c_path = centroids.clone().or_else(|| dir("centroids.npy"));
            let l_path = labels.clone().or_else(|| dir("labels.npy"));
            rep.field("init", init.as_str());
            by_dtype!(
                dtype,
                kmeans(b, x, &cfg, c_path.as_deref(), l_path.as_deref(), &mut rep)
            )
        }
        Op::Predict {
            x, centroids, out, ..
        } => {
            by_dtype!(
                dtype,
                predict(b, x, centroids, out.output.as_deref(), &mut rep)
            )
        }
    }?;
    rep.finish(name, b, fam, dtype);
    Ok(())
}

/// `--dtype`, or else the dtype of the first input.
fn element_type(common: &Common, first: &Path) -> Result<DType> {
    Ok(match common.dtype {
        Some(DTypeArg::F32) => DType::F32,
        Some(DTypeArg::F64) => DType::F64,
        None => npy::header(first)?.dtype,
    })
}

/// The backend named by `--backend`, with `--variant` selected for `family`.
pub fn open(common: &Common, family: Family) -> Result<Box<dyn Backend>> {
    let mut backend = ndgpu::backend(&common.backend)?;
    if let Some(v) = &common.variant {
        backend.set_variant(family, v)?;
    }
    Ok(backend)
}
