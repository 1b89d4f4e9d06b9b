//! What `ndgpu run` prints: the JSON summary, or text (printed results and written
//! files).

use std::io::Write;
use std::path::Path;

use ndarray::{Array, Dimension};
use ndgpu::{Backend, DType, Family};
use serde_json::{json, Map, Value};

use crate::error::{emit, Result};
use crate::npy;

/// What a run prints: the JSON summary, or text (printed results and written files).
pub struct Report {
    json: bool,
    fields: Map<String, Value>,
    shapes: Map<String, Value>,
    written: Map<String, Value>,
    text: String,
    /// An output went to stdout, so the summary goes to stderr.
    stdout_taken: bool,
}

impl Report {
    pub fn new(json: bool) -> Self {
        Report {
            json,
            fields: Map::new(),
            shapes: Map::new(),
            written: Map::new(),
            text: String::new(),
            stdout_taken: false,
        }
    }

    /// Whether the summary is JSON.
    pub fn is_json(&self) -> bool {
        self.json
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
    /// under `name`). `option` names the option that writes it, for the hint under an
    /// abbreviated print.
    pub fn deliver<A, D>(
        &mut self,
        name: &str,
        array: &Array<A, D>,
        path: Option<&Path>,
        option: &str,
    ) -> Result<()>
    where
        A: ndarray_npy::WritableElement + Copy + Into<Value> + std::fmt::Display,
        D: Dimension,
    {
        self.shape(name, array.shape());
        match path {
            Some(p) => {
                let stdout = npy::is_stdout(p);
                self.stdout_taken |= stdout;
                npy::write(p, array)?;
                let to = if stdout {
                    "stdout".to_string()
                } else {
                    p.display().to_string()
                };
                self.line(format!(
                    "wrote {name} {} to {to}",
                    npy::fmt_shape(array.shape())
                ));
                self.written.insert(name.into(), json!(to));
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
                    self.line(format!("(abbreviated: {option} writes every element)"));
                }
            }
        }
        Ok(())
    }

    /// Prints the summary: on stdout, or on stderr when an output took stdout.
    pub fn finish(mut self, op: &str, b: &dyn Backend, family: Family, dtype: DType) -> Result<()> {
        let variant = b.variant(family);
        let stderr = self.stdout_taken;
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
            say(stderr, &format!("{text}\n"))
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
            say(stderr, &(head + &self.text))
        }
    }
}

/// Prints the summary on stdout, or on stderr when an output took stdout.
fn say(stderr: bool, text: &str) -> Result<()> {
    if stderr {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
        Ok(())
    } else {
        emit(text)
    }
}

/// An array of any rank as nested JSON lists (NaN and ±Inf become null).
fn nested<A: Copy + Into<Value> + std::fmt::Display>(a: ndarray::ArrayViewD<A>) -> Value {
    if a.ndim() == 0 {
        return a.iter().next().map_or(Value::Null, |&x| number(x));
    }
    Value::Array(a.outer_iter().map(nested).collect())
}

/// A number as JSON, with the shortest digits that give it back in its own type: an
/// f32 as `0.1`, not as the f64 it widens to (`0.10000000149011612`). Integers as they
/// are; NaN and ±Inf as null.
pub fn number<A: Copy + Into<Value> + std::fmt::Display>(x: A) -> Value {
    let v: Value = x.into();
    if !v.is_f64() {
        return v;
    }
    // Display gives the shortest digits that round-trip in A's own type; read as f64,
    // they print the same.
    match x.to_string().parse::<f64>() {
        Ok(shortest) => Value::from(shortest),
        Err(_) => v,
    }
}
