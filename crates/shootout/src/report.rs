//! The shootout's reports: per op, a Markdown table of its ladder (rates per size, with
//! the ratio to the vendor) and one of its other shapes (a line per shape and variant),
//! a CSV of every row, and one SVG figure per op of its ladder.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::cases::Op;
use crate::format::{format_rate, lines_of, pow2_style, size_label};
use crate::row::{Row, Status, COPY, VENDOR};
use crate::shape::Shape;

/// Writes the reports of `rows` into `out_dir` (created if missing): the tables on
/// stdout and in `shootout.md`, every row in `shootout.csv`, one figure per op with rows
/// at a ladder's shapes in `<op>.svg` (rate against size; the other shapes are in the
/// tables only).
///
/// # Errors
/// Any I/O error (including a figure that cannot be drawn).
pub fn write_reports(rows: &[Row], out_dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(out_dir)?;
    let md = markdown(rows);
    print!("{md}");
    std::fs::write(out_dir.join("shootout.md"), &md)?;
    std::fs::write(out_dir.join("shootout.csv"), csv(rows))?;
    for op in ops_in(rows) {
        let of_op: Vec<&Row> = rows
            .iter()
            .filter(|r| r.op == op && r.size().is_some())
            .collect();
        if !of_op.is_empty() {
            crate::plot::write_svg(op, &of_op, &out_dir.join(format!("{}.svg", op.name())))?;
        }
    }
    Ok(())
}

/// The ops present in `rows`, in report order.
fn ops_in(rows: &[Row]) -> Vec<Op> {
    Op::ALL
        .into_iter()
        .filter(|op| rows.iter().any(|r| r.op == *op))
        .collect()
}

/// Every op's table, with a header saying what is counted and how it was timed.
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from("# ndgpu shootout\n\n");
    let on_gpu = rows.iter().any(|r| r.device != crate::runner::HOST);
    let clock = match on_gpu {
        true => "with CUDA events on a GPU, with the wall clock on the host",
        false => "with the wall clock (the arrays live in host memory)",
    };
    let transfers = match on_gpu {
        true => {
            " `+transfers` rows time the ndarray-level call (upload, kernels, download) \
             with the wall clock, as are the transfer rows."
        }
        false => "",
    };
    let _ = writeln!(
        s,
        "Median of the timed runs. Rows time the resident forms of the operations, on \
         arrays already where the backend computes, through `&dyn Backend`: {clock}.\
         {transfers} Every variant's result was checked before it was timed; a wrong one \
         is listed as failed, never timed."
    );
    // A peer that could not run: said once, at the top, with its reason and the way
    // to get it, instead of a column that silently is not there.
    let mut missing: Vec<&Row> = Vec::new();
    for r in rows.iter().filter(|r| crate::peer::is_missing(r)) {
        if !missing.iter().any(|m| m.backend == r.backend) {
            missing.push(r);
        }
    }
    for r in missing {
        let _ = writeln!(
            s,
            "\n**No `{}` column**: {}.",
            r.backend,
            r.status.reason().unwrap_or("it could not run here")
        );
    }
    for op in ops_in(rows) {
        let of_op: Vec<&Row> = rows
            .iter()
            .filter(|r| r.op == op && !crate::peer::is_missing(r))
            .collect();
        if of_op.is_empty() {
            continue;
        }
        s.push('\n');
        s.push_str(&op_table(op, &of_op));
    }
    s
}

/// Whether a table has a ceiling column: the GPU's peak or a device copy. The host has
/// no ceiling (its roofline is not measured), so a table of host rows alone has none.
fn has_ceiling(rows: &[&Row]) -> bool {
    rows.iter()
        .any(|r| r.ceiling.is_some() || r.device != crate::runner::HOST)
}

/// Said under a table without a ceiling column.
const NO_CEILING: &str = "No ceiling column: the ceiling is a GPU's roofline (the peak \
    rate of the unit a row can use, or a device copy of the same bytes), which the \
    shootout does not measure for CPUs.";

fn op_table(op: Op, rows: &[&Row]) -> String {
    let mut s = String::new();
    let first = rows[0];
    let (ladder, others): (Vec<&Row>, Vec<&Row>) = rows.iter().partition(|r| r.size().is_some());
    let mut refs: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.is_vendor()) {
        let name = if r.backend == VENDOR {
            format!("`{VENDOR}`'s default variant")
        } else {
            format!("`{}`", r.backend)
        };
        if !refs.contains(&name) {
            refs.push(name);
        }
    }
    let vendor = match refs.len() {
        0 => String::new(),
        1 => format!("; in brackets the ratio to {}", refs[0]),
        _ => format!(
            "; in brackets the ratio to the best vendor figure at that size, the faster of {}",
            refs.join(" and ")
        ),
    };
    let _ = writeln!(
        s,
        "## {op} ({}, {})\n\nWork: {}. Rates in {}{vendor}; ± half the range (min to max) \
         of the timed runs, relative to the median.",
        first.dtype,
        first.device,
        match others.is_empty() {
            true => op.work_formula(),
            false => op.shape_formula(),
        },
        first.unit
    );
    let mut peaks: Vec<(&str, f64)> = Vec::new();
    for r in rows.iter().filter(|r| r.backend != COPY) {
        if let Some(c) = r.ceiling {
            if !peaks.iter().any(|p| p.0 == r.ceiling_of) {
                peaks.push((&r.ceiling_of, c));
            }
        }
    }
    if op == Op::Transfer && rows.iter().any(|r| r.backend == COPY) {
        let _ = writeln!(
            s,
            "Ceiling: `{COPY}/pinned`, the same bytes from page-locked host memory to the \
             device and back, the DMA engines alone (no packing, no page faults), timed in \
             the same run."
        );
    } else if op.bandwidth_bound() && rows.iter().any(|r| r.backend == COPY) {
        let _ = writeln!(
            s,
            "Ceiling: `{COPY}/d2d`, a device-to-device copy of the same bytes timed in \
             the same run (it reads and writes; a stream that only reads can beat it by \
             a few percent)."
        );
    } else if !peaks.is_empty() {
        let list: Vec<String> = peaks
            .iter()
            .map(|(of, c)| format!("{} GFLOP/s ({of})", format_rate(*c)))
            .collect();
        let _ = writeln!(
            s,
            "Ceiling, the peak of the unit a row can use (SMs × FLOPs per SM and clock × \
             the clock attribute): {}.",
            list.join("; ")
        );
    }
    if !has_ceiling(rows) {
        let _ = writeln!(s, "{NO_CEILING}");
    }
    if let Some(note) = op_note(op) {
        let _ = writeln!(s, "{note}");
    }
    if rows.iter().any(|r| r.backend == VENDOR) {
        if let Some(note) = vendor_note(op) {
            let _ = writeln!(s, "{note}");
        }
    }
    let along_an_axis = |r: &&Row| matches!(r.shape, Shape::Matrix { axis: Some(_), .. });
    if rows.iter().any(|r| r.backend == "cuda" && along_an_axis(r)) {
        let _ = writeln!(
            s,
            "Along an axis, `cuda` runs the same kernels under every variant, picked by \
             the shape (per row: vector loads, a group of lanes per row, or blocks on \
             chunks of a long row; per column: a thread per vector of columns, or threads \
             over columns, in row chunks when the columns are few), so its variants' \
             lines differ there by noise only."
        );
    }
    let mut problems = Vec::new();
    if !ladder.is_empty() {
        s.push_str(&ladder_table(&ladder, &mut problems));
    }
    if !others.is_empty() {
        s.push_str(&shapes::table(&others, &mut problems));
    }
    if !problems.is_empty() {
        s.push('\n');
        for p in problems {
            let _ = writeln!(s, "- {p}");
        }
    }
    s
}

/// The table of a ladder: a line per backend/variant, a column per size.
fn ladder_table(rows: &[&Row], problems: &mut Vec<String>) -> String {
    let mut s = String::new();
    let mut sizes: Vec<usize> = rows.iter().filter_map(|r| r.size()).collect();
    sizes.sort_unstable();
    sizes.dedup();
    s.push_str("\n| backend/variant |");
    let pow2 = pow2_style(&sizes);
    for n in &sizes {
        let _ = write!(s, " {} |", size_label(*n as f64, pow2));
    }
    let ceiling = has_ceiling(rows);
    s.push_str(if ceiling {
        " best of ceiling |\n|---|"
    } else {
        "\n|---|"
    });
    s.push_str(&"---:|".repeat(sizes.len() + usize::from(ceiling)));
    s.push('\n');
    for line in lines_of(rows) {
        let _ = write!(s, "| {} |", line[0].label());
        for n in &sizes {
            let cell = match line.iter().find(|r| r.size() == Some(*n)) {
                None => String::new(),
                Some(r) => match &r.status {
                    Status::Ok => {
                        let spread = match r.median_s > 0.0 {
                            true => 50.0 * (r.max_s - r.min_s) / r.median_s,
                            false => 0.0,
                        };
                        match r.vs_vendor {
                            Some(v) if !r.is_best_vendor => {
                                format!("{} ({v:.2}×) ±{spread:.1}%", format_rate(r.rate))
                            }
                            _ => format!("{} ±{spread:.1}%", format_rate(r.rate)),
                        }
                    }
                    Status::Failed(why) => {
                        problems.push(format!("{} at {n}: failed: {why}", r.label()));
                        "FAILED".into()
                    }
                    Status::Skipped(why) => {
                        problems.push(format!("{} at {n}: skipped: {why}", r.label()));
                        "skipped".into()
                    }
                },
            };
            let _ = write!(s, " {cell} |");
        }
        let best = line
            .iter()
            .filter_map(|r| r.of_ceiling)
            .fold(None, |b: Option<f64>, v| Some(b.map_or(v, |b| b.max(v))));
        match (ceiling, best) {
            (false, _) => s.push('\n'),
            (true, Some(b)) => {
                let _ = writeln!(s, " {:.1}% |", 100.0 * b);
            }
            // A host line beside GPU lines: the host has no ceiling.
            (true, None) if line[0].device == crate::runner::HOST => s.push_str(" — |\n"),
            (true, None) => s.push_str("  |\n"),
        }
    }
    s
}

/// What else a reader of an op's table needs to know.
fn op_note(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::Gram => {
            "A kernel that computes one triangle does half the counted work, so its \
             GEMM-equivalent rate can reach twice the peak."
        }
        Op::Sum | Op::SumSq | Op::Argmax | Op::Dot => {
            "The whole reductions return their value to the host, so on a GPU each run \
             includes a device-to-host copy and a synchronization: small sizes are bound \
             by that latency. Reductions along an axis keep their result on the device."
        }
        Op::Cholesky => {
            "Each run factors a fresh copy of the matrix, restored outside the timed \
             region (so it starts from L2 at small sizes)."
        }
        Op::Solve => {
            "The factor is given (uploaded once, outside the timed region); each run \
             solves into a new X, as `torch.cholesky_solve` does. `+transfers` rows take \
             L and B from the host and return X."
        }
        Op::Lu => {
            "Each run factors a fresh copy of A (uniform plus n on the diagonal), made \
             outside the timed region, in place: the packed factor and the pivots, as \
             `getrf` and `torch.linalg.lu_factor`. `+transfers` rows call `lu`, which also \
             unpacks P, L and U on the host."
        }
        Op::LuSolve => {
            "A's factor is made once, outside the timed region; each run solves with n \
             right-hand sides into a new X, as `torch.linalg.lu_solve` does. `+transfers` \
             rows call `solve` with A and B from the host, which factors A too (2n³/3 \
             more FLOPs than counted)."
        }
        Op::Qr => {
            "Each run factors a fresh copy of A, made outside the timed region, in place: \
             R and the Householder reflectors, Q not formed (`geqrf`, `torch.geqrf`, \
             NumPy's `qr(mode='raw')`). `+transfers` rows call `qr` (reduced), which also \
             forms Q."
        }
        Op::Lstsq => {
            "One right-hand side; each run factors a copy of A (A is kept) and solves into \
             a new x. PyTorch runs `torch.linalg.lstsq` with the `gels` driver (QR), NumPy \
             `numpy.linalg.lstsq` (LAPACK's `gelsd`, through the SVD: more work than \
             counted)."
        }
        Op::Trsm => {
            "Each run solves B in place with A's lower triangle (`trsm`: left, lower, no \
             transpose); B is restored from a pristine copy outside the timed region. \
             PyTorch's `solve_triangular` writes a new X."
        }
        Op::Eigh => {
            "A symmetric A (uniform in [-1, 1), its lower triangle mirrored), eigenvalues \
             and eigenvectors; each run decomposes the resident A into a new w and V \
             (`eigh_dev`; `torch.linalg.eigh`, `numpy.linalg.eigh`). `+transfers` rows \
             call `eigh` on the host array."
        }
        Op::Svd => {
            "The reduced SVD with U and Vt of A uniform in [-1, 1); each run decomposes the \
             resident A into new U, s and Vt (`svd_dev`; `torch.linalg.svd` and \
             `numpy.linalg.svd` with full_matrices=False). `+transfers` rows call `svd` on \
             the host array."
        }
        Op::Pca => {
            "A fit of m×d data (uniform, column j scaled by 1/√(j + 1) and shifted) to \
             min(m, d, 8) components; each run fits the resident X (`Pca::fit_dev`: the \
             centring, the gram and eigh or the SVD where X lives, the small results \
             downloaded). `+transfers` rows call `Pca::fit` on the host array. PyTorch's rows \
             are `torch.pca_lowrank(q=8)` (randomized: an approximation, not the exact fit) \
             and the exact `torch.linalg.svd` of the centred X; NumPy's the \
             `numpy.linalg.svd` of the centred X and scikit-learn's `PCA` with its default \
             solver."
        }
        Op::KMeans => {
            "Rows run one Lloyd iteration (assignment and centroid update) on resident \
             points, centroids and labels; `+transfers` rows run the ndarray-level k-means \
             with max_iter = 1, which is one assignment step (plus the transfers)."
        }
        Op::Chain => {
            "M·Mᵀ, its Cholesky factor and the solve with n right-hand sides, with each \
             family's default variant, on resident data: nothing crosses the bus. The \
             `+transfers` rows make the same three calls with host arrays, so the data \
             crosses the bus at every step."
        }
        Op::Transfer => {
            "One upload of a C-ordered host array into a resident matrix and one download \
             into a host array, all made before the timed runs (`upload_into`, \
             `download_into`): `pageable` rows from and into ordinary ndarrays (through \
             the pinned staging ring), `pinned` rows from and into the backend's \
             `host_array`s (pinned: one copy each way). The `+transfers` rows make new \
             ordinary arrays each time (`upload`, `download`: what a first call pays, \
             page faults of the fresh host array included). Wall clock, host packing \
             included."
        }
        Op::Matmul | Op::Transpose => return None,
    })
}

/// What the vendor's rows of an op's table run, where it is not the obvious routine.
fn vendor_note(op: Op) -> Option<&'static str> {
    match op {
        Op::Sum | Op::SumSq | Op::Argmax | Op::Dot => Some(
            "The vendor's sum is cuBLAS GEMV and DOT against a vector of ones, its sum of \
             squares DOT(x, x) (strided-batched 1×1 GEMMs along an axis), its dot DOT; \
             cuBLAS has no argmax: its rows run the runtime's kernels.",
        ),
        Op::Transpose => Some("The vendor's transpose is cuBLAS GEAM with C = Aᵀ."),
        Op::Lu | Op::LuSolve | Op::Qr | Op::Lstsq => {
            Some("The vendor's rows run the `cublas` backend's factorizations, on cuSOLVER.")
        }
        Op::Trsm => Some("The vendor's rows run the `cublas` backend's triangular solve."),
        Op::Eigh | Op::Svd | Op::Pca => {
            Some("The vendor's rows run the `cublas` backend's spectra, on cuSOLVER.")
        }
        _ => None,
    }
}

/// Quotes a CSV field when it needs it.
fn field(v: &str) -> String {
    if v.contains([',', '"', '\n']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v:e}")
    } else {
        String::new()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}

/// Header of [`csv`].
pub const CSV_HEADER: &str = "op,backend,variant,default_variant,dtype,size,transfers,status,\
reps,batch,median_s,min_s,max_s,rate,unit,vs_vendor,ceiling,ceiling_of,of_ceiling,device,reason,\
shape,plan";

/// Every row as CSV (times in seconds, rates in `unit`, empty where not measured). `size`
/// is the ladder size of the row's shape (empty for the other shapes); `shape` its
/// label, m×k×n for a GEMM, m×k for the M of a gram, with the axis of a reduction (the
/// last column but one, so that the columns of earlier reports keep their places); `plan`
/// what the variant chose to run at that shape, where it chooses by shape.
pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        let cols = [
            r.op.name().to_string(),
            field(&r.backend),
            field(&r.variant),
            r.default_variant.to_string(),
            r.dtype.name().to_string(),
            r.size().map_or(String::new(), |n| n.to_string()),
            r.transfers.to_string(),
            r.status.name().to_string(),
            r.reps.to_string(),
            r.batch.to_string(),
            num(r.median_s),
            num(r.min_s),
            num(r.max_s),
            num(r.rate),
            r.unit.name().to_string(),
            opt(r.vs_vendor),
            opt(r.ceiling),
            field(&r.ceiling_of),
            opt(r.of_ceiling),
            field(&r.device),
            field(r.status.reason().unwrap_or("")),
            field(&r.shape.label()),
            field(r.plan.as_deref().unwrap_or("")),
        ];
        s.push_str(&cols.join(","));
        s.push('\n');
    }
    s
}

mod shapes;

#[cfg(test)]
mod tests;
