//! The table of an op's shapes other than a ladder's: a line per shape and
//! backend/variant, which names both, in the order the shapes were run.

use std::fmt::Write as _;

use crate::format::{format_rate, format_time};
use crate::row::{Row, Status, COPY, PEERS};

/// The variant of a line, `(default)` after a backend's default (the name is the
/// variant that ran), then what it chose to run at this shape, where it chooses.
fn variant_label(r: &Row) -> String {
    let own = r.backend != COPY && !PEERS.contains(&r.backend.as_str());
    let label = match own && r.default_variant {
        true => format!("{} (default)", r.label()),
        false => r.label(),
    };
    match &r.plan {
        Some(plan) => format!("{label}: {plan}"),
        None => label,
    }
}

/// The table of `rows` (one op, shapes of no ladder); failures and skips go to
/// `problems`, as in the ladder's table.
pub(super) fn table(rows: &[&Row], problems: &mut Vec<String>) -> String {
    let mut s = String::new();
    let unit = rows[0].unit;
    let ceiling = super::has_ceiling(rows);
    let _ = writeln!(
        s,
        "\n| shape | backend/variant | {unit} | × best vendor | median | ± |{}\n\
         |---|---|---:|---:|---:|---:|{}",
        if ceiling { " of ceiling |" } else { "" },
        if ceiling { "---:|" } else { "" },
    );
    let mut shapes = Vec::new();
    for r in rows {
        if !shapes.contains(&r.shape) {
            shapes.push(r.shape);
        }
    }
    for shape in shapes {
        for r in rows.iter().filter(|r| r.shape == shape) {
            let label = variant_label(r);
            let cells = match &r.status {
                Status::Ok => {
                    let spread = match r.median_s > 0.0 {
                        true => format!("{:.1}%", 50.0 * (r.max_s - r.min_s) / r.median_s),
                        false => String::new(),
                    };
                    let vs = match (r.vs_vendor, r.is_best_vendor) {
                        (_, true) => "best".to_string(),
                        (Some(v), false) => format!("{v:.2}×"),
                        (None, false) => String::new(),
                    };
                    let of = match r.of_ceiling {
                        Some(c) => format!("{:.1}%", 100.0 * c),
                        None if r.device == crate::runner::HOST => "—".into(),
                        None => String::new(),
                    };
                    [format_rate(r.rate), vs, format_time(r.median_s), spread, of]
                }
                Status::Failed(why) | Status::Skipped(why) => {
                    let status = r.status.name();
                    problems.push(format!("{} at {shape}: {status}: {why}", r.label()));
                    let cell = match r.status {
                        Status::Failed(_) => "FAILED",
                        _ => "skipped",
                    };
                    [
                        cell.into(),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ]
                }
            };
            let cells = match ceiling {
                true => &cells[..],
                false => &cells[..4],
            };
            let _ = writeln!(s, "| {shape} | {label} | {} |", cells.join(" | "));
        }
    }
    s
}
