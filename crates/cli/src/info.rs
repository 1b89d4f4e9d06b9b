//! `ndgpu info`: what each compiled-in backend is, whether it can run here and why
//! not, its variants per family (default first) and its notes.
//!
//! The facade lists a backend's variants only by opening it, so a GPU backend that
//! cannot open here has none listed; the output says so rather than leave an empty
//! list to read as "no variants".

use ndgpu::BackendInfo;
use serde_json::{json, Map, Value};

use crate::error::{emit, Result};

/// Why an unavailable backend lists no variants.
const NO_VARIANTS: &str = "not listed: a backend lists its variants only where it can \
                           open; `ndgpu info` on a machine where it is available lists them";

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

fn to_text(b: &BackendInfo) -> String {
    let mut s = match &b.status {
        Ok(description) => format!("{}: available\n  {description}\n", b.name),
        Err(reason) => format!("{}: unavailable: {reason}\n", b.name),
    };
    if b.variants.is_empty() {
        s.push_str(&format!("  variants: {NO_VARIANTS}\n"));
    } else {
        s.push_str("  variants (* = default):\n");
        let width = b
            .variants
            .iter()
            .map(|(f, _)| f.name().len())
            .max()
            .unwrap_or(0);
        for (family, names) in &b.variants {
            let listed: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    if i == 0 {
                        format!("{n}*")
                    } else {
                        n.to_string()
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
    for (family, names) in &b.variants {
        variants.insert(
            family.name().into(),
            json!({ "default": names.first(), "all": names }),
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
    if b.variants.is_empty() {
        m.insert("variants_note".into(), json!(NO_VARIANTS));
    }
    m.insert("notes".into(), json!(b.notes));
    Value::Object(m)
}
