//! `ndgpu run <op>`: opens the backend, settles the element type, hands the operation
//! to its generic implementation in `ops.rs`, then prints the summary.

use std::path::Path;

use ndarray::{Array, Dimension};
use ndgpu::{Backend, DType, Family};
use serde_json::{json, Map, Value};

use crate::args::{Common, DTypeArg, Op};
use crate::error::{emit, Failure, Result};
use crate::npy;
use crate::ops::{self, Solve};

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

/// What a run prints: the JSON summary, or text (printed results and written files).
pub struct Report {
    json: bool,
    fields: Map<String, Value>,
    shapes: Map<String, Value>,
    written: Map<String, Value>,
    text: String,
}

impl Report {
    fn new(json: bool) -> Self {
        Report {
            json,
            fields: Map::new(),
            shapes: Map::new(),
            written: Map::new(),
            text: String::new(),
        }
    }

    /// Records the shape of an input or output under its name.
    pub fn shape(&mut self, name: &str, shape: &[usize]) {
        self.shapes.insert(name.into(), json!(shape));
    }

    /// Records an op-specific field (seconds, inertia, the scalar of a reduction).
    pub fn field(&mut self, name: &str, value: impl Into<Value>) {
        self.fields.insert(name.into(), value.into());
    }

    /// Prints a scalar result as text (JSON has it as a field).
    pub fn line(&mut self, text: impl AsRef<str>) {
        if !self.json {
            self.text.push_str(text.as_ref());
            self.text.push('\n');
        }
    }

    /// Writes `array` to `path`, or else prints it (as text, or as nested JSON lists
    /// under `name`).
    pub fn deliver<A, D>(
        &mut self,
        name: &str,
        array: &Array<A, D>,
        path: Option<&Path>,
    ) -> Result<()>
    where
        A: ndarray_npy::WritableElement + Copy + Into<Value> + std::fmt::Display,
        D: Dimension,
    {
        self.shape(name, array.shape());
        match path {
            Some(p) => {
                npy::write(p, array)?;
                self.written
                    .insert(name.into(), json!(p.display().to_string()));
                self.line(format!(
                    "wrote {name} {} to {}",
                    npy::fmt_shape(array.shape()),
                    p.display()
                ));
            }
            None if self.json => {
                self.fields
                    .insert(name.into(), nested(array.view().into_dyn()));
            }
            None => {
                self.line(format!(
                    "{name} {}:\n{array}",
                    npy::fmt_shape(array.shape())
                ));
                // ndarray abbreviates beyond 500 elements; say so rather than mislead.
                if array.len() > 500 {
                    self.line("(abbreviated: -o writes every element)");
                }
            }
        }
        Ok(())
    }

    fn finish(mut self, op: &str, b: &dyn Backend, family: Family, dtype: DType) {
        let variant = b.variant(family);
        if self.json {
            let mut out = Map::new();
            out.insert("op".into(), json!(op));
            out.insert("backend".into(), json!(b.name()));
            out.insert("variant".into(), json!(variant));
            out.insert("dtype".into(), json!(dtype.name()));
            out.insert("shapes".into(), Value::Object(self.shapes));
            out.insert("outputs".into(), Value::Object(self.written));
            out.append(&mut self.fields);
            let text = serde_json::to_string(&Value::Object(out)).unwrap_or_default();
            emit(&format!("{text}\n"));
        } else {
            let secs = self
                .fields
                .get("seconds")
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            let head = format!(
                "{op} on {} ({family} variant {variant}), {dtype}, {secs:.6} s\n",
                b.name()
            );
            emit(&(head + &self.text));
        }
    }
}

/// An array of any rank as nested JSON lists (NaN and ±Inf become null).
fn nested<A: Copy + Into<Value>>(a: ndarray::ArrayViewD<A>) -> Value {
    if a.ndim() == 0 {
        return a.iter().next().map_or(Value::Null, |&x| x.into());
    }
    Value::Array(a.outer_iter().map(nested).collect())
}
