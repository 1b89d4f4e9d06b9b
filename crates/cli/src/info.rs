//! `ndgpu info`: which backend `auto` picks here, then what each compiled-in backend is
//! (those that run here first), whether it can run here and why not, its variants per family (default first, with the precision of those that do
//! not compute in IEEE arithmetic) and its notes.
//! The GPU backends' variants are listed also where they cannot open. With `--plan`,
//! what each available backend's default variant runs at the shapes given
//! (`Backend::plan`).

use ndgpu::{BackendInfo, DType, Family, Precision};
use serde_json::{json, Map, Value};

use crate::args::DTypeArg;
use crate::error::{emit, Failure, Result};

pub fn info(json_out: bool, plan: &[String], dtype: DTypeArg) -> Result<()> {
    let shapes = plan
        .iter()
        .map(|s| parse_plan(s))
        .collect::<Result<Vec<_>>>()?;
    let dtype = match dtype {
        DTypeArg::F32 => DType::F32,
        DTypeArg::F64 => DType::F64,
    };
    // Those that run here first (in the order `auto` tries them), then the others.
    let mut all = ndgpu::backends();
    all.sort_by_key(|b| b.status.is_err());
    let auto = match ndgpu::backend("auto") {
        Ok(b) => b.name().to_string(),
        Err(e) => format!("none ({e})"),
    };
    let plans: Vec<Vec<(String, String)>> = all.iter().map(|b| plans(b, &shapes, dtype)).collect();
    let with_plans = all.iter().zip(&plans);
    if json_out {
        let list: Vec<Value> = with_plans
            .map(|(b, p)| json_with_plans(b, p, !shapes.is_empty()))
            .collect();
        let text = serde_json::to_string_pretty(&json!({ "auto": auto, "backends": list }))
            .unwrap_or_default();
        emit(&format!("{text}\n"))
    } else {
        let text: Vec<String> = with_plans
            .map(|(b, p)| text_with_plans(b, p, dtype))
            .collect();
        let head = format!(
            "auto picks: {auto} (what --backend auto, the default, runs here; NDGPU_BACKEND \
             overrides)\n\n"
        );
        emit(&(head + &text.join("\n")))
    }
}

/// [`to_json`] of a backend, with its `plans` where shapes were asked for.
fn json_with_plans(b: &BackendInfo, plans: &[(String, String)], asked: bool) -> Value {
    let mut v = to_json(b);
    if asked {
        let p: Map<String, Value> = plans.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        v["plans"] = Value::Object(p);
    }
    v
}

/// [`to_text`] of a backend, followed by its plans (for `dtype`) where it has any.
fn text_with_plans(b: &BackendInfo, plans: &[(String, String)], dtype: DType) -> String {
    let mut s = to_text(b);
    if !plans.is_empty() {
        s.push_str(&format!("  plans ({}):\n", dtype.name()));
        for (shape, plan) in plans {
            s.push_str(&format!("    {shape}: {plan}\n"));
        }
    }
    s
}

/// A `--plan` spec, FAMILY=DIMS: the family, the dimensions as `Backend::plan` takes
/// them, and the spec's own label (`matmul 64×8192×64`).
fn parse_plan(spec: &str) -> Result<(Family, Vec<usize>, String)> {
    let bad = |why: &str| {
        Failure::usage(format!(
            "--plan {spec:?}: {why} (FAMILY=DIMS: matmul=MxKxN, gram=NxK, kmeans=NxDxK)"
        ))
    };
    let (name, dims) = spec.split_once('=').ok_or_else(|| bad("no '='"))?;
    let family = Family::from_name(name).ok_or_else(|| bad("not a family"))?;
    let dims = dims
        .split(['x', '×'])
        .map(|d| d.trim().parse::<usize>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| bad("the dimensions are not whole numbers"))?;
    let dims = match (family, dims.as_slice()) {
        (Family::MatMul, &[m, k, n]) => vec![m, n, k],
        (Family::Gram, &[n, k]) => vec![n, k],
        (Family::KMeans, &[n, d, k]) => vec![n, d, k],
        (Family::MatMul | Family::Gram | Family::KMeans, _) => {
            return Err(bad("the wrong number of dimensions"))
        }
        _ => {
            return Err(bad(
                "this family's variants run the same kernels at every shape",
            ))
        }
    };
    let label = spec.split_once('=').map_or(spec, |p| p.1).replace('x', "×");
    Ok((family, dims, format!("{} {label}", family.name())))
}

/// What `b`'s default variants run at `shapes`: the plan, or that it runs the same
/// kernels at every shape. Empty where `b` cannot open here.
fn plans(
    b: &BackendInfo,
    shapes: &[(Family, Vec<usize>, String)],
    dtype: DType,
) -> Vec<(String, String)> {
    if shapes.is_empty() || b.status.is_err() {
        return Vec::new();
    }
    let Ok(backend) = ndgpu::backend(b.name) else {
        return Vec::new();
    };
    shapes
        .iter()
        .map(|(family, dims, label)| {
            let variant = backend.variant(*family);
            let plan = backend
                .plan(*family, dtype, dims)
                .unwrap_or_else(|| "the same kernels at every shape".into());
            (label.clone(), format!("{variant}: {plan}"))
        })
        .collect()
}

/// The families a backend lists variants for, with them, default first.
fn families(b: &BackendInfo) -> Vec<(Family, Vec<&'static str>)> {
    Family::ALL
        .iter()
        .map(|&f| (f, b.variants.list(f)))
        .filter(|(_, names)| !names.is_empty())
        .collect()
}

fn to_text(b: &BackendInfo) -> String {
    let mut s = match &b.status {
        Ok(description) => format!("{}: available\n  {description}\n", b.name),
        Err(reason) => format!("{}: unavailable: {reason}\n", b.name),
    };
    let families = families(b);
    if !families.is_empty() {
        s.push_str("  variants (* = default, [precision] where not IEEE):\n");
        let width = families
            .iter()
            .map(|(f, _)| f.name().len())
            .max()
            .unwrap_or(0);
        for (family, names) in &families {
            let listed: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let default = if i == 0 { "*" } else { "" };
                    match b.variants.precision_of(*family, n) {
                        Precision::Ieee => format!("{n}{default}"),
                        p => format!("{n}{default} [{}]", p.name()),
                    }
                })
                .collect();
            s.push_str(&format!(
                "    {:width$}  {}\n",
                family.name(),
                listed.join(", ")
            ));
        }
    }
    if !b.notes.is_empty() {
        s.push_str("  notes:\n");
        for note in &b.notes {
            s.push_str(&format!("    - {note}\n"));
        }
    }
    s
}

fn to_json(b: &BackendInfo) -> Value {
    let mut variants = Map::new();
    for (family, names) in families(b) {
        // The variants that do not compute in IEEE arithmetic, with their precision.
        let precision: Map<String, Value> = names
            .iter()
            .map(|&n| (n, b.variants.precision_of(family, n)))
            .filter(|&(_, p)| p != Precision::Ieee)
            .map(|(n, p)| (n.to_string(), json!(p.name())))
            .collect();
        variants.insert(
            family.name().into(),
            json!({ "default": names.first(), "all": names, "precision": precision }),
        );
    }
    let mut m = Map::new();
    m.insert("name".into(), json!(b.name));
    m.insert("available".into(), json!(b.status.is_ok()));
    match &b.status {
        Ok(d) => m.insert("description".into(), json!(d)),
        Err(r) => m.insert("reason".into(), json!(r)),
    };
    m.insert("variants".into(), Value::Object(variants));
    m.insert("notes".into(), json!(b.notes));
    Value::Object(m)
}
