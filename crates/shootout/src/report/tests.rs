use std::path::PathBuf;

use super::*;
use crate::row::test_row;
use crate::shape::Shape;
use ndgpu_core::DType;

const DEVICE: &str = "Test GPU";

/// A row at `shape` timed at `secs` (and 10% either side).
fn at(op: Op, shape: Shape, backend: &str, variant: &str, default: bool, secs: f64) -> Row {
    test_row(op, shape, backend, variant, default, DEVICE).timed_at(&[secs, secs * 1.1, secs * 0.9])
}

/// A default variant's row at the ladder's size `size`.
fn row(op: Op, backend: &str, variant: &str, size: usize, secs: f64) -> Row {
    at(op, op.shape(size), backend, variant, true, secs)
}

/// Asserts that `text` holds every one of `needles`.
fn assert_contains(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} not in:\n{text}");
    }
}

/// An empty folder of this name (and the process) under the temporary folder.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn sample() -> Vec<Row> {
    let mut rows = vec![
        row(Op::Matmul, "cuda", "tiled", 256, 1e-3)
            .with_ceiling(Some((60_000.0, "FP32 FMA, CUDA cores"))),
        row(Op::Matmul, "cuda", "tiled", 512, 4e-3)
            .with_ceiling(Some((60_000.0, "FP32 FMA, CUDA cores"))),
        row(Op::Matmul, VENDOR, "sgemm", 256, 5e-4)
            .with_ceiling(Some((60_000.0, "FP32 FMA, CUDA cores"))),
        row(Op::Matmul, VENDOR, "sgemm", 512, 2e-3)
            .with_ceiling(Some((60_000.0, "FP32 FMA, CUDA cores"))),
        test_row(
            Op::Matmul,
            Op::Matmul.shape(256),
            "cuda",
            "broken",
            false,
            DEVICE,
        )
        .failed("C[0, 1] = 3, reference 2, error 1 above the bound 1e-5"),
        row(Op::Sum, "cuda", "tree", 1 << 20, 2e-5),
        row(Op::Sum, COPY, "d2d", 1 << 20, 1e-5),
        test_row(
            Op::Sum,
            Op::Sum.shape(1 << 22),
            "cuda",
            "naive",
            false,
            DEVICE,
        )
        .skipped("too slow, \"predicted\" 20 s"),
    ];
    crate::row::annotate(&mut rows);
    rows
}

#[test]
fn markdown_tables_per_op() {
    let md = markdown(&sample());
    assert_contains(
        &md,
        &[
            "## matmul (f32, Test GPU)",
            "## sum (f32, Test GPU)",
            "2n³ FLOPs",
            "| backend/variant | 256 | 512 | best of ceiling |",
            // 2·256³ FLOPs in 1 ms = 33.6 GFLOP/s, half of the vendor's.
            "| cuda/tiled | 33.6 (0.50×) ±10.0% | 67.1 (0.50×) ±10.0% |",
            "| cublas/sgemm | 67.1 ±",
            "| cuda/broken | FAILED |  |",
            "- cuda/broken at 256: failed: C[0, 1] = 3",
            "(SMs × FLOPs per SM and clock × the clock attribute): 60000 GFLOP/s (FP32 FMA, CUDA cores).",
            // The sum at half the copy's rate.
            "| backend/variant | 2²⁰ | 2²² | best of ceiling |",
            "| cuda/tree | 210 ±",
            "|  | 50.0% |",
            "skipped: too slow",
        ],
    );
}

#[test]
fn csv_has_every_row_and_quotes_reasons() {
    let rows = sample();
    let text = csv(&rows);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], CSV_HEADER);
    assert_eq!(lines.len(), rows.len() + 1);
    let columns = CSV_HEADER.split(',').count();
    assert_eq!(columns, 23);
    assert!(lines[1].starts_with("matmul,cuda,tiled,true,f32,256,false,ok,3,1,1e-3,"));
    // The vendor ratio of the first row.
    assert!(
        lines[1].contains(",GFLOP/s,5e-1,6e4,\"FP32 FMA, CUDA cores\","),
        "{}",
        lines[1]
    );
    // A reason with commas and quotes is one quoted field.
    let skipped = lines.last().unwrap();
    assert!(
        skipped.ends_with(",\"too slow, \"\"predicted\"\" 20 s\",1×4194304,"),
        "{skipped}"
    );
    assert!(lines[1].ends_with(",,256×256×256,"), "{}", lines[1]);
    // Unmeasured numbers are empty.
    assert!(skipped.contains(",skipped,0,0,,,,,GB/s,,,,"), "{skipped}");
}

#[test]
fn rates_are_formatted_to_three_digits() {
    assert_eq!(format_rate(12345.6), "12346");
    assert_eq!(format_rate(123.45), "123");
    assert_eq!(format_rate(12.345), "12.3");
    assert_eq!(format_rate(1.2345), "1.23");
    assert_eq!(format_rate(f64::NAN), "-");
}

#[test]
fn reports_are_written() {
    let dir = fresh_dir("ndgpu-shootout-test");
    write_reports(&sample(), &dir).unwrap();
    let md = std::fs::read_to_string(dir.join("shootout.md")).unwrap();
    assert!(md.starts_with("# ndgpu shootout"));
    let csv = std::fs::read_to_string(dir.join("shootout.csv")).unwrap();
    assert_eq!(csv.lines().count(), 9);
    for op in ["matmul", "sum"] {
        let svg = std::fs::read_to_string(dir.join(format!("{op}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("</svg>"), "{op}");
        assert!(svg.contains("(log scale)"), "{op}");
        assert!(
            svg.contains("cuda/tiled") || svg.contains("cuda/tree"),
            "{op}"
        );
        // At least one polyline per measured line.
        assert!(svg.matches("<polyline").count() >= 2, "{op}: {svg}");
    }
    assert!(!dir.join("gram.svg").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_vendors_routines_are_named_only_where_the_vendor_ran() {
    let host = vec![
        row(Op::Transpose, "faer", "faer", 256, 1e-5),
        row(Op::Sum, "cpu", "reference", 256, 1e-5),
    ];
    let md = markdown(&host);
    assert!(!md.contains("cuBLAS"), "{md}");
    let gpu = vec![
        row(Op::Transpose, VENDOR, "geam", 256, 1e-5),
        row(Op::Sum, VENDOR, "gemv", 256, 1e-5),
    ];
    assert_contains(&markdown(&gpu), &["cuBLAS GEAM", "cuBLAS GEMV"]);
}

#[test]
fn other_shapes_get_a_line_per_shape_and_variant() {
    let km = Shape::gemm(1 << 20, 32, 1024);
    let inner = Shape::gemm(64, 8192, 64);
    let mut rows = vec![
        row(Op::Matmul, "cuda", "split_k", 256, 1e-3),
        at(Op::Matmul, km, "cuda", "split_k", true, 2e-3),
        at(Op::Matmul, km, "cuda", "naive", false, 1e-1),
        at(Op::Matmul, km, VENDOR, "sgemm", true, 1e-3),
        at(Op::Matmul, inner, "cuda", "split_k", true, 1e-4)
            .planned(Some("K in 128 slices of 64 (C in 1 tile)".into())),
        test_row(Op::Matmul, inner, "cuda", "tiled", false, DEVICE).failed("C[0, 1] = 3"),
        at(Op::Matmul, km, "torch", "2.11", true, 4e-3),
    ];
    crate::row::annotate(&mut rows);
    let md = markdown(&rows);
    assert_contains(
        &md,
        &[
            // The square stays in its ladder's table; the other shapes get theirs.
            "| backend/variant | 256 | best of ceiling |",
            "| shape | backend/variant | GFLOP/s | × best vendor | median | ± | of ceiling |",
            "2·m·n·k FLOPs (m×k×n: A m×k times B k×n)",
            // 2·2^20·32·1024 FLOPs in 2 ms = 34360 GFLOP/s, half the vendor's.
            "| 1048576×32×1024 | cuda/split_k (default) | 34360 | 0.50× | 2.00 ms |",
            "| 1048576×32×1024 | cuda/naive | 687 | 0.01× |",
            "| 1048576×32×1024 | cublas/sgemm (default) | 68719 | best |",
            "| 1048576×32×1024 | torch/2.11 | 17180 | 0.25× |",
            "| 64×8192×64 | cuda/tiled | FAILED |",
            // What the default chose at that shape follows its name, and goes to the CSV.
            "| 64×8192×64 | cuda/split_k (default): K in 128 slices of 64 (C in 1 tile) |",
        ],
    );
    let table = csv(&rows);
    assert!(
        table.lines().any(|l| l.starts_with("matmul,cuda,split_k,")
            && l.ends_with(",64×8192×64,K in 128 slices of 64 (C in 1 tile)")),
        "{table}"
    );
    assert!(
        md.contains("- cuda/tiled at 64×8192×64: failed: C[0, 1] = 3"),
        "{md}"
    );
    // The lines of one shape stay together, in the order the shapes ran.
    let first_inner = md.find("| 64×8192×64 |").unwrap();
    assert!(
        md.rfind("| 1048576×32×1024 |").unwrap() < first_inner,
        "{md}"
    );
    let text = csv(&rows);
    assert!(
        text.lines()
            .any(|l| l.starts_with("matmul,cuda,naive,false,f32,,false,ok,")
                && l.ends_with(",1048576×32×1024,")),
        "{text}"
    );
}

#[test]
fn figures_are_drawn_for_ladders_only() {
    let dir = fresh_dir("ndgpu-shootout-shapes");
    let (wide, axis1) = (
        Shape::gemm(1024, 1024, 64),
        Shape::matrix(16, 1 << 20, Some(1)),
    );
    let rows = vec![
        row(Op::Matmul, "cuda", "split_k", 256, 1e-3),
        at(Op::Matmul, wide, "cuda", "split_k", true, 1e-3),
        at(Op::SumSq, axis1, "cuda", "shuffle", true, 1e-4),
    ];
    write_reports(&rows, &dir).unwrap();
    assert!(dir.join("matmul.svg").exists());
    assert!(!dir.join("sumsq.svg").exists());
    let md = std::fs::read_to_string(dir.join("shootout.md")).unwrap();
    assert_contains(
        &md,
        &[
            "| 16×1048576 axis 1 | cuda/shuffle (default) |",
            "Along an axis, `cuda` runs the same kernels",
        ],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A host row at the ladder's size `size`.
fn host(op: Op, backend: &str, variant: &str, size: usize, secs: f64) -> Row {
    test_row(
        op,
        op.shape(size),
        backend,
        variant,
        true,
        crate::runner::HOST,
    )
    .timed_at(&[secs, secs * 1.1, secs * 0.9])
}

#[test]
fn host_tables_have_no_ceiling_column_and_say_why() {
    let km = Shape::gemm(4096, 32, 128);
    let mut rows = vec![
        host(Op::Matmul, "faer", "faer", 64, 1e-5),
        host(Op::Matmul, "cpu", "reference", 64, 1e-4),
        test_row(
            Op::Matmul,
            km,
            "cpu",
            "reference",
            true,
            crate::runner::HOST,
        )
        .timed_at(&[1e-3]),
    ];
    crate::row::annotate(&mut rows);
    let md = markdown(&rows);
    assert_contains(
        &md,
        &[
            "| backend/variant | 64 |\n|---|---:|\n",
            "| faer/faer | ",
            "| shape | backend/variant | GFLOP/s | × best vendor | median | ± |\n|---|---|---:|---:|---:|---:|\n",
            "No ceiling column: the ceiling is a GPU's roofline",
        ],
    );
    assert!(!md.contains("of ceiling"), "{md}");
    // Every line of the ladder has as many cells as its header.
    for line in md
        .lines()
        .filter(|l| l.starts_with("| faer/") || l.starts_with("| cpu/"))
    {
        assert_eq!(line.matches(" |").count(), 2, "{line}");
    }
    // Beside GPU rows, the column stays, and a host line says it has no ceiling.
    let mut mixed = sample();
    mixed.push(host(Op::Matmul, "cpu", "reference", 256, 1e-1));
    crate::row::annotate(&mut mixed);
    let md = markdown(&mixed);
    assert_contains(
        &md,
        &["| backend/variant | 256 | 512 | best of ceiling |", " — |"],
    );
    assert!(!md.contains("No ceiling column"), "{md}");
}

#[test]
fn a_missing_peer_is_said_at_the_top_not_dropped_in_silence() {
    use crate::peer::Peer;
    let why = format!(
        "`python3` cannot use numpy: ModuleNotFoundError: No module named 'numpy'; {}",
        Peer::Numpy.hint()
    );
    let shape = Op::Matmul.shape(64);
    let rows = vec![
        host(Op::Matmul, "cpu", "reference", 64, 1e-4),
        Peer::Numpy.missing(Op::Matmul, shape, DType::F32, crate::runner::HOST, &why),
        host(Op::Sum, "cpu", "reference", 64, 1e-6),
        Peer::Numpy.missing(
            Op::Sum,
            Op::Sum.shape(64),
            DType::F32,
            crate::runner::HOST,
            &why,
        ),
    ];
    let md = markdown(&rows);
    assert_contains(
        &md,
        &[
            "**No `numpy` column**: `python3` cannot use numpy: ModuleNotFoundError",
            "pip install numpy",
            crate::peer::PYTHON_ENV,
        ],
    );
    // Said once, and no table line of its own.
    assert_eq!(md.matches("**No `numpy` column**").count(), 1, "{md}");
    assert!(!md.contains("| numpy/"), "{md}");
    // The CSV keeps the rows, with the reason.
    let text = csv(&rows);
    assert!(
        text.lines().any(
            |l| l.starts_with("matmul,numpy,missing,true,f32,64,false,skipped,")
                && l.contains("pip install numpy")
        ),
        "{text}"
    );
}
