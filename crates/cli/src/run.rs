//! `ndgpu run <op>`: opens the backend, settles the element type, hands the operation
//! to its generic implementation in `ops.rs`, then prints the summary.

use std::path::Path;

use ndgpu::{Backend, DType, Family};

use crate::args::{AssumeA, Common, DTypeArg, Op, QrModeArg};
use crate::error::{note, Failure, Result};
use crate::linalg::{self, TriangularSolve};
use crate::npy;
use crate::ops::{self, Ctx, Solve, Unary};
use crate::report::Report;
use crate::spectra;

/// What `run` needs to know of an operation before running it.
struct Described<'a> {
    name: &'static str,
    /// The family whose variant `--variant` selects.
    family: Family,
    common: &'a Common,
    /// The data inputs, whose dtypes settle the element type (not k-means' --init and
    /// --sample-weight files, which are converted to it whatever their dtype).
    inputs: Vec<&'a Path>,
    /// The output paths given explicitly.
    outputs: Vec<&'a Path>,
}

fn describe(op: &Op) -> Described<'_> {
    let (name, family) = match op {
        Op::Matmul { .. } => ("matmul", Family::MatMul),
        Op::Gram { .. } => ("gram", Family::Gram),
        Op::Transpose { .. } => ("transpose", Family::Transpose),
        Op::Reduce { .. } => ("reduce", Family::Reduce),
        Op::Dot { .. } => ("dot", Family::Reduce),
        Op::Cholesky { .. } => ("cholesky", Family::Cholesky),
        Op::Solve {
            assume_a, factor, ..
        } if is_pos(*assume_a, *factor) => ("solve", Family::Cholesky),
        Op::Solve { .. } => ("solve", Family::Lu),
        Op::Lu(_) => ("lu", Family::Lu),
        Op::Qr(_) => ("qr", Family::Qr),
        Op::Lstsq(_) => ("lstsq", Family::Qr),
        Op::Eigh(_) => ("eigh", Family::Spectra),
        Op::Svd(_) => ("svd", Family::Spectra),
        Op::Pca(_) => ("pca", Family::Spectra),
        Op::Det(_) => ("det", Family::Lu),
        Op::Inv(_) => ("inv", Family::Lu),
        Op::SolveTriangular(_) => ("solve_triangular", Family::Trsm),
        Op::Kmeans { .. } => ("kmeans", Family::KMeans),
        Op::Predict { .. } => ("predict", Family::KMeans),
    };
    let inputs: Vec<&Path> = match op {
        Op::Matmul { a, b, c, .. } => [Some(a.as_path()), Some(b), c.as_deref()]
            .into_iter()
            .flatten()
            .collect(),
        Op::Gram { m, .. } => vec![m],
        Op::Transpose { a, .. } | Op::Reduce { a, .. } | Op::Cholesky { a, .. } => vec![a],
        Op::Dot { x, y, .. } => vec![x, y],
        Op::Solve { a, b, .. } => vec![a, b],
        Op::Lu(x) => vec![&x.a],
        Op::Qr(x) => vec![&x.a],
        Op::Eigh(x) => vec![&x.a],
        Op::Svd(x) => vec![&x.a],
        Op::Pca(x) => vec![&x.x],
        Op::Det(x) | Op::Inv(x) => vec![&x.a],
        Op::Lstsq(x) => vec![&x.a, &x.b],
        Op::SolveTriangular(x) => vec![&x.a, &x.b],
        Op::Kmeans { x, .. } => vec![x],
        Op::Predict { x, centroids, .. } => vec![x, centroids],
    };
    let (common, outputs) = match op {
        Op::Kmeans {
            common,
            centroids,
            labels,
            ..
        } => (common, vec![centroids.as_deref(), labels.as_deref()]),
        // Files in a folder: never stdout.
        Op::Lu(x) => (&x.common, vec![]),
        Op::Qr(x) => (&x.common, vec![]),
        Op::Eigh(x) => (&x.common, vec![]),
        Op::Svd(x) => (&x.common, vec![]),
        Op::Pca(x) => (&x.common, vec![]),
        Op::Lstsq(x) => (&x.common, vec![x.out.output.as_deref()]),
        Op::Det(x) | Op::Inv(x) => (&x.common, vec![x.out.output.as_deref()]),
        Op::SolveTriangular(x) => (&x.common, vec![x.out.output.as_deref()]),
        Op::Matmul { common, out, .. }
        | Op::Gram { common, out, .. }
        | Op::Transpose { common, out, .. }
        | Op::Reduce { common, out, .. }
        | Op::Dot { common, out, .. }
        | Op::Cholesky { common, out, .. }
        | Op::Solve { common, out, .. }
        | Op::Predict { common, out, .. } => (common, vec![out.output.as_deref()]),
    };
    Described {
        name,
        family,
        common,
        inputs,
        outputs: outputs.into_iter().flatten().collect(),
    }
}

/// Calls `ops::$f::<T, _>` (or `$module::$f`) with `T` the element type chosen at run
/// time.
macro_rules! by_dtype {
    ($dtype:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        by_dtype!($dtype, $f($($arg),*), ops)
    };
    ($dtype:expr, $f:ident ( $($arg:expr),* $(,)? ), $module:ident) => {
        match $dtype {
            DType::F32 => $module::$f::<f32, _>($($arg),*),
            DType::F64 => $module::$f::<f64, _>($($arg),*),
        }
    };
}

/// Whether `solve` goes through Cholesky: `--assume-a pos`, or a factor given.
fn is_pos(assume_a: Option<AssumeA>, factor: bool) -> bool {
    assume_a == Some(AssumeA::Pos) || (assume_a.is_none() && factor)
}

pub fn run(op: Op) -> Result<()> {
    let Described {
        name,
        family: fam,
        common,
        inputs,
        outputs,
    } = describe(&op);
    npy::check_stdout(&outputs)?;
    let dtype = element_type(common, &inputs)?;
    let backend = open(common, fam)?;
    let b: &dyn Backend = &*backend;
    let mut rep = Report::new(common.json);
    // The context of an operation writing to `$out`.
    macro_rules! cx {
        ($out:expr) => {
            Ctx {
                b,
                rep: &mut rep,
                out: $out,
            }
        };
    }
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
            by_dtype!(dtype, matmul(cx!(out.output.as_deref()), &gemm))
        }
        Op::Gram { m: a, out, .. } | Op::Transpose { a, out, .. } | Op::Cholesky { a, out, .. } => {
            let which = match &op {
                Op::Gram { .. } => Unary::Gram,
                Op::Transpose { .. } => Unary::Transpose,
                _ => Unary::Cholesky,
            };
            by_dtype!(dtype, unary(cx!(out.output.as_deref()), which, a))
        }
        Op::Reduce {
            a, op, axis, out, ..
        } => {
            by_dtype!(dtype, reduce(cx!(out.output.as_deref()), a, (*op, *axis)))
        }
        Op::Dot { x, y, out, .. } => {
            by_dtype!(dtype, dot(cx!(out.output.as_deref()), x, y))
        }
        Op::Solve {
            a,
            b: bp,
            assume_a,
            factor,
            out,
            ..
        } => {
            if *factor && *assume_a == Some(AssumeA::Gen) {
                return Err(Failure::usage(
                    "solve: --factor gives a Cholesky factor, which goes with --assume-a pos, \
                     not gen",
                ));
            }
            let s = Solve {
                a,
                b: bp,
                pos: is_pos(*assume_a, *factor),
                factor: *factor,
            };
            by_dtype!(dtype, solve(cx!(out.output.as_deref()), &s))
        }
        Op::Lu(x) => by_dtype!(dtype, lu(cx!(x.out.out_dir.as_deref()), &x.a), linalg),
        Op::Qr(x) => {
            let complete = x.mode == QrModeArg::Complete;
            let dir = x.out.out_dir.as_deref();
            by_dtype!(dtype, qr(cx!(dir), &x.a, complete), linalg)
        }
        Op::Eigh(x) => {
            let dir = x.out.out_dir.as_deref();
            by_dtype!(dtype, eigh(cx!(dir), &x.a, x.upper), spectra)
        }
        Op::Svd(x) => {
            let dir = x.out.out_dir.as_deref();
            by_dtype!(dtype, svd(cx!(dir), (&x.a, x.full_matrices)), spectra)
        }
        Op::Pca(x) => by_dtype!(dtype, pca(cx!(x.out.out_dir.as_deref()), x), spectra),
        Op::Lstsq(x) => {
            let out = x.out.output.as_deref();
            by_dtype!(dtype, lstsq(cx!(out), &x.a, &x.b), linalg)
        }
        Op::Det(x) => by_dtype!(dtype, det(cx!(x.out.output.as_deref()), &x.a), linalg),
        Op::Inv(x) => {
            let out = x.out.output.as_deref();
            by_dtype!(dtype, unary(cx!(out), Unary::Inv, &x.a))
        }
        Op::SolveTriangular(x) => {
            let s = TriangularSolve {
                a: &x.a,
                b: &x.b,
                lower: x.lower,
                trans: x.trans,
                unit: x.unit_diagonal,
            };
            let out = x.out.output.as_deref();
            by_dtype!(dtype, solve_triangular(cx!(out), &s), linalg)
        }
        Op::Kmeans {
            x,
            k,
            seed,
            tol,
            change_tol,
            max_iter,
            init,
            n_init,
            sample_weight,
            out_dir,
            centroids,
            labels,
            ..
        } => {
            let mut cfg = ops::kmeans_config(*k, *seed, *tol, *max_iter, init)?
                .change_tol(*change_tol)
                .n_init(*n_init);
            cfg.sample_weight = sample_weight
                .as_deref()
                .map(npy::read_vector::<f64>)
                .transpose()?;
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
                kmeans(cx!(l_path.as_deref()), x, &cfg, c_path.as_deref())
            )
        }
        Op::Predict {
            x, centroids, out, ..
        } => {
            by_dtype!(dtype, predict(cx!(out.output.as_deref()), x, centroids))
        }
    }
    .map_err(|f| f.in_op(name))?;
    rep.finish(name, b, fam, dtype)
}

/// `--dtype`, or else f64 if any input is f64 or of an integer or bool dtype (which
/// `numpy.linalg` computes in float64), else f32: NumPy's promotion. Each input stored
/// in another dtype is converted when read; a note on stderr says so.
fn element_type(common: &Common, inputs: &[&Path]) -> Result<DType> {
    let headers = inputs
        .iter()
        .map(|p| Ok((*p, npy::header(p)?)))
        .collect::<Result<Vec<_>>>()?;
    let dtype = match common.dtype {
        Some(DTypeArg::F32) => DType::F32,
        Some(DTypeArg::F64) => DType::F64,
        None if headers.iter().any(|(_, h)| h.dtype == DType::F64) => DType::F64,
        None => DType::F32,
    };
    let mut noted: Vec<&Path> = Vec::new();
    for (path, h) in headers {
        // One note per file, also when it is given twice (`matmul A.npy A.npy`).
        if h.stored.name() == dtype.name() || noted.contains(&path) {
            continue;
        }
        noted.push(path);
        let why = match common.dtype {
            Some(_) => format!("--dtype {dtype}"),
            None if !h.stored.is_float() => {
                "integer and bool inputs become f64, as numpy.linalg converts them".into()
            }
            None => "mixed inputs promote to f64, as in NumPy".into(),
        };
        note(&format!(
            "converting {} from {} to {dtype} ({why})",
            path.display(),
            h.stored.name()
        ));
    }
    Ok(dtype)
}

/// The backend named by `--backend`, with `--variant` (or `--precision`) selected for
/// `family`. When
/// `auto` follows `NDGPU_BACKEND`, an error about that backend names the variable: the
/// command line does not show where the name came from.
pub fn open(common: &Common, family: Family) -> Result<Box<dyn Backend>> {
    let from_env = match std::env::var(ndgpu::BACKEND_ENV) {
        Ok(v) if common.backend == "auto" && !v.is_empty() && v != "auto" => Some(v),
        Err(std::env::VarError::NotUnicode(v)) if common.backend == "auto" => {
            return Err(Failure::usage(format!(
                "{}={} is not valid UTF-8 (it names the backend that --backend auto picks)",
                ndgpu::BACKEND_ENV,
                v.to_string_lossy()
            )))
        }
        _ => None,
    };
    let mut backend = ndgpu::backend(&common.backend).map_err(|e| {
        let mut f = Failure::from(e);
        if let Some(v) = &from_env {
            f.message = format!(
                "{}={v} (which --backend auto follows): {}",
                ndgpu::BACKEND_ENV,
                f.message
            );
        }
        f
    })?;
    if let Some(v) = &common.variant {
        backend.set_variant(family, v)?;
    }
    if let Some(p) = common.precision {
        backend.set_precision(family, p.into())?;
    }
    Ok(backend)
}
