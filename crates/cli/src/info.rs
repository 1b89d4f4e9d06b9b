//! `ndgpu info`: what each compiled-in backend is, whether it can run here and why
//! not, its variants per family (default first, with the precision of those that do
//! not compute in IEEE arithmetic) and its notes.
//! The GPU backends' variants are listed also where they cannot open.

use ndgpu::{BackendInfo, Family, Precision};
use serde_json::{json, Map, Value};

use crate::error::{emit, Result};

pub fn info(json_out: bool) -> Result<()> {
    let all = ndgpu::backends();
    if json_out {
        let list: Vec<Value> = all.iter().map(to_json).collect();
        let text = serde_json::to_string_pretty(&json!({ "backends": list })).unwrap_or_default();
        emit(&format!("{text}\n"))
    } else {
        emit(&all.iter().map(to_text).collect::<Vec<_>>().join("\n"))
    }
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
