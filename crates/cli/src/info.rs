//! `ndgpu info`: what each compiled-in backend is, whether it can run here and why
//! not, its variants per family (default first) and its notes.
//! The GPU backends' variants are listed also where they cannot open.

use ndgpu::BackendInfo;
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

fn to_text(b: &BackendInfo) -> String {
    let mut s = match &b.status {
        Ok(description) => format!("{}: available\n  {description}\n", b.name),
        Err(reason) => format!("{}: unavailable: {reason}\n", b.name),
    };
    if !b.variants.is_empty() {
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
    m.insert("notes".into(), json!(b.notes));
    Value::Object(m)
}
