use super::*;

/// `dir` (and the process) under the temporary folder, for the reports.
fn temp_out(dir: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{dir}-{}", std::process::id()))
}

fn cpu_options(dir: &str) -> ShootoutOptions {
    ShootoutOptions {
        // One small size for every op keeps this test fast in CI.
        sizes: Some(vec![160.into()]),
        backends: vec!["cpu".into()],
        out_dir: temp_out(dir),
        reps: 3,
        progress: false,
        // The rows of the backend alone, whether or not this machine has numpy.
        peer: false,
        ..ShootoutOptions::default()
    }
}

#[test]
fn cpu_run_measures_every_op() {
    let opts = cpu_options("ndgpu-shootout-cpu");
    let rows = run(&opts).unwrap();
    assert_eq!(rows.len(), Op::LADDERS.len());
    for (row, op) in rows.iter().zip(Op::LADDERS) {
        assert_eq!(row.shape, op.shape(160));
        assert_eq!(row.op, op);
        assert_eq!(row.status, Status::Ok, "{row:?}");
        assert_eq!(row.backend, "cpu");
        assert!(row.rate > 0.0 && row.rate.is_finite(), "{row:?}");
        assert!(
            row.min_s <= row.median_s && row.median_s <= row.max_s,
            "{row:?}"
        );
        assert!((2..=3).contains(&row.reps), "{row:?}");
        // No vendor and no ceiling on the host.
        assert_eq!((row.vs_vendor, row.of_ceiling), (None, None));
    }
    write_reports(&rows, &opts.out_dir).unwrap();
    for op in Op::LADDERS {
        assert!(opts.out_dir.join(format!("{op}.svg")).exists(), "{op}");
    }
    std::fs::remove_dir_all(&opts.out_dir).unwrap();
}

#[test]
fn unknown_backends_are_errors() {
    let opts = ShootoutOptions {
        backends: vec!["tpu".into()],
        ..cpu_options("unused")
    };
    let err = run(&opts).unwrap_err();
    assert!(err.to_string().contains("unknown backend 'tpu'"), "{err}");
}

#[test]
fn gpu_backends_asked_for_without_a_gpu_are_unavailable() {
    if ndgpu_cuda_runtime::probe().is_ok() {
        // There is a GPU: then the backend must open (the ignored test below times it).
        assert!(
            ndgpu::backend("cuda").is_ok(),
            "probe succeeded but the device did not open"
        );
        return;
    }
    let opts = ShootoutOptions {
        backends: vec!["cuda".into()],
        ..cpu_options("unused")
    };
    let err = run(&opts).unwrap_err();
    assert!(
        matches!(err, ndgpu_core::Error::Unavailable { .. }),
        "{err}"
    );
}

#[test]
fn kmeans_sizes_below_k_are_left_out() {
    let opts = ShootoutOptions {
        ops: vec![Op::KMeans],
        sizes: Some(vec![0.into(), 100.into()]),
        ..cpu_options("unused")
    };
    assert!(run(&opts).unwrap().is_empty());
}

/// LU, its solve, QR, least squares and the triangular solve on the cpu backend at tiny
/// sizes, through `run` (the command line's path), with the NumPy peer when this machine
/// has one: a tall-skinny size is QR's and least squares', and the square ops leave it
/// out. A peer row is one the peer printed (never made up): timed, or failed or skipped
/// with its reason.
#[test]
fn cpu_run_measures_the_factorizations() {
    let ops = [Op::Lu, Op::LuSolve, Op::Qr, Op::Lstsq, Op::Trsm];
    let sizes: Vec<Size> = ["33", "300x7"].iter().map(|s| s.parse().unwrap()).collect();
    let opts = ShootoutOptions {
        ops: ops.to_vec(),
        sizes: Some(sizes),
        peer: true,
        ..cpu_options("ndgpu-shootout-linalg")
    };
    let rows = run(&opts).unwrap();
    let (ours, peers): (Vec<&Row>, Vec<&Row>) = rows.iter().partition(|r| r.backend == "cpu");
    let got: Vec<(Op, Shape)> = ours.iter().map(|r| (r.op, r.shape)).collect();
    let mut want = Vec::new();
    for op in ops {
        want.push((op, op.shape(33)));
        if matches!(op, Op::Qr | Op::Lstsq) {
            want.push((op, Shape::rect(300, 7)));
        }
    }
    assert_eq!(got, want);
    for row in &ours {
        assert_eq!(row.status, Status::Ok, "{row:?}");
        assert_eq!(row.variant, "reference");
        assert!(row.rate > 0.0 && row.rate.is_finite(), "{row:?}");
    }
    numpy_rows_are_printed(&peers);
    write_reports(&rows, &opts.out_dir).unwrap();
    let md = std::fs::read_to_string(opts.out_dir.join("shootout.md")).unwrap();
    for op in ops {
        assert!(md.contains(&format!("## {op} (f32")), "{op}: {md}");
    }
    assert!(md.contains("| 300×7 | cpu/reference (default) |"), "{md}");
    // Where NumPy cannot run here, the report says so, with the way to get it.
    match crate::peer::Peer::Numpy.probe() {
        Ok(_) => assert!(!md.contains("No `numpy` column"), "{md}"),
        Err(_) => assert!(
            md.contains("**No `numpy` column**") && md.contains("pip install numpy"),
            "{md}"
        ),
    }
    std::fs::remove_dir_all(&opts.out_dir).unwrap();
}

/// eigh, svd and pca on both host backends, named (they are not in the default run):
/// every shape checked and timed, a wide SVD and a tall PCA (the covariance path)
/// included, and the NumPy peer's rows (one per way for pca) timed or saying why not.
#[test]
fn cpu_run_measures_the_spectra() {
    let ops = [Op::Eigh, Op::Svd, Op::Pca];
    let sizes: Vec<Size> = ["33", "7x41", "400x9"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let opts = ShootoutOptions {
        ops: ops.to_vec(),
        sizes: Some(sizes),
        backends: vec!["faer".into(), "cpu".into()],
        peer: true,
        ..cpu_options("ndgpu-shootout-spectra")
    };
    let rows = run(&opts).unwrap();
    let (ours, peers): (Vec<&Row>, Vec<&Row>) = rows
        .iter()
        .partition(|r| r.backend == "cpu" || r.backend == "faer");
    for op in ops {
        assert!(!Op::LADDERS.contains(&op), "{op}");
        let mut shapes = vec![op.shape(33)];
        if op != Op::Eigh {
            shapes.extend([Shape::rect(7, 41), Shape::rect(400, 9)]);
        }
        for shape in shapes {
            for backend in ["faer", "cpu"] {
                let row = ours
                    .iter()
                    .find(|r| (r.op, r.shape, r.backend.as_str()) == (op, shape, backend))
                    .unwrap_or_else(|| panic!("no {backend} row of {op} at {shape}"));
                assert_eq!(row.status, Status::Ok, "{row:?}");
                assert!(row.rate > 0.0 && row.rate.is_finite(), "{row:?}");
            }
        }
    }
    numpy_rows_are_printed(&peers);
    if crate::peer::Peer::Numpy.probe().is_ok() {
        // PCA's NumPy rows: the SVD of the centred X, and scikit-learn's (or why not).
        let ways: Vec<&str> = peers
            .iter()
            .filter(|r| r.op == Op::Pca && r.shape == Shape::rect(400, 9))
            .map(|r| r.variant.as_str())
            .collect();
        assert!(
            ways.iter().any(|v| v.ends_with("svd of centred X")),
            "{ways:?}"
        );
        assert!(ways.iter().any(|v| v.contains("sklearn PCA")), "{ways:?}");
    }
    write_reports(&rows, &opts.out_dir).unwrap();
    let md = std::fs::read_to_string(opts.out_dir.join("shootout.md")).unwrap();
    for op in ops {
        assert!(md.contains(&format!("## {op} (f32")), "{op}: {md}");
    }
    std::fs::remove_dir_all(&opts.out_dir).unwrap();
}

/// Every peer row of a host run is NumPy's, as it printed it: timed, or failed or
/// skipped with its reason.
fn numpy_rows_are_printed(peers: &[&Row]) {
    for row in peers {
        assert_eq!(row.backend, "numpy", "{row:?}");
        match &row.status {
            Status::Ok => assert!(row.rate > 0.0 && row.reps > 0, "{row:?}"),
            other => assert!(!other.reason().unwrap_or("").is_empty(), "{row:?}"),
        }
    }
}

/// The shape suite on the host: every shape of every op of the suite, checked and timed,
/// its rows named by shape and variant.
#[test]
fn cpu_shape_suite_measures_every_shape() {
    let opts = ShootoutOptions {
        suite: Suite::Shapes,
        sizes: None,
        reps: 2,
        ..cpu_options("ndgpu-shootout-shapes")
    };
    let rows = run(&opts).unwrap();
    let mut want = Vec::new();
    for op in Suite::Shapes.ops() {
        for shape in Suite::Shapes.shapes(op, Target::Cpu) {
            want.push((op, shape));
        }
    }
    let got: Vec<(Op, Shape)> = rows.iter().map(|r| (r.op, r.shape)).collect();
    assert_eq!(got, want);
    for row in &rows {
        assert_eq!(row.status, Status::Ok, "{row:?}");
        assert_eq!(
            (row.backend.as_str(), row.variant.as_str()),
            ("cpu", "reference")
        );
        assert!(row.default_variant);
        assert!(row.rate > 0.0 && row.rate.is_finite(), "{row:?}");
    }
    write_reports(&rows, &opts.out_dir).unwrap();
    let csv = std::fs::read_to_string(opts.out_dir.join("shootout.csv")).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.starts_with("matmul,cpu,reference,true,f32,,")
                && l.ends_with(",4096×32×128,")),
        "{csv}"
    );
    assert!(
        csv.lines().any(|l| l.ends_with(",16×65536 axis 1,")),
        "{csv}"
    );
    let md = std::fs::read_to_string(opts.out_dir.join("shootout.md")).unwrap();
    assert!(
        md.contains("| 4096×32×128 | cpu/reference (default) |"),
        "{md}"
    );
    assert!(
        md.contains("| 65536×16 axis 0 | cpu/reference (default) |"),
        "{md}"
    );
    // The squares keep their ladder's table and figure; on the host, without a ceiling
    // column (the ceiling is a GPU's).
    assert!(
        md.contains("| backend/variant | 64 | 128 | 256 |\n|---|---:|---:|---:|\n"),
        "{md}"
    );
    assert!(opts.out_dir.join("matmul.svg").exists());
    std::fs::remove_dir_all(&opts.out_dir).unwrap();
}

#[test]
fn the_shape_suite_refuses_sizes_and_ops_it_has_no_shapes_of() {
    let sizes = ShootoutOptions {
        suite: Suite::Shapes,
        ..cpu_options("unused")
    };
    let err = run(&sizes).unwrap_err().to_string();
    assert!(err.contains("sizes are for the ladders"), "{err}");
    let ops = ShootoutOptions {
        suite: Suite::Shapes,
        sizes: None,
        ops: vec![Op::Matmul, Op::Cholesky],
        ..cpu_options("unused")
    };
    let err = run(&ops).unwrap_err().to_string();
    assert!(err.contains("no cholesky cases"), "{err}");
}

/// The quick run on the GPU, 5 reps, its reports under `dir`.
fn quick_gpu_options(dir: &str) -> ShootoutOptions {
    ShootoutOptions {
        quick: true,
        reps: 5,
        out_dir: temp_out(dir),
        ..ShootoutOptions::default()
    }
}

/// Runs `opts` and asserts that no row is a problem by `bad` (listing those that are).
fn run_without_problems(opts: &ShootoutOptions, bad: impl Fn(&Row) -> bool) -> Vec<Row> {
    let rows = run(opts).unwrap();
    let problems: Vec<String> = rows
        .iter()
        .filter(|r| bad(r))
        .map(|r| format!("{} {} {}: {:?}", r.op, r.shape, r.label(), r.status))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    rows
}

#[test]
#[ignore = "needs a CUDA device"]
fn quick_gpu_shape_suite_is_correct_and_positive() {
    let opts = ShootoutOptions {
        suite: Suite::Shapes,
        ..quick_gpu_options("ndgpu-shapes-gpu")
    };
    // Skips are allowed (a variant that refuses a shape by design, such as the stripes
    // grams beyond 1024 rows); a wrong result or an error is not.
    let rows = run_without_problems(&opts, |r| match r.status {
        Status::Ok => !(r.rate > 0.0 && r.rate.is_finite()),
        Status::Failed(_) => true,
        Status::Skipped(_) => false,
    });
    for op in Suite::Shapes.ops() {
        for shape in Suite::Shapes.shapes(op, Target::GpuQuick) {
            let ok = |b: &str| {
                rows.iter()
                    .any(|r| (r.op, r.shape, r.backend.as_str()) == (op, shape, b) && r.is_ok())
            };
            assert!(ok("cuda") && ok("cublas"), "{op} {shape}");
        }
    }
    write_reports(&rows, &opts.out_dir).unwrap();
    std::fs::remove_dir_all(&opts.out_dir).unwrap();
}

/// The spectra on the GPU backends, named: every row checked and timed, or skipped
/// with a reason (a backend without the op answers `Unsupported`, a failure).
#[test]
#[ignore = "needs a CUDA device"]
fn quick_gpu_run_checks_the_spectra() {
    let opts = ShootoutOptions {
        ops: vec![Op::Eigh, Op::Svd, Op::Pca],
        sizes: Some(
            ["256", "4096x32"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect(),
        ),
        ..quick_gpu_options("ndgpu-spectra-gpu")
    };
    let rows = run_without_problems(&opts, |r| match r.status {
        Status::Ok => !(r.rate > 0.0 && r.rate.is_finite()),
        Status::Failed(_) => true,
        Status::Skipped(_) => false,
    });
    for op in [Op::Eigh, Op::Svd, Op::Pca] {
        for b in ["cuda", "cublas"] {
            assert!(
                rows.iter()
                    .any(|r| r.op == op && r.backend == b && r.is_ok()),
                "{op} {b}"
            );
        }
    }
    std::fs::remove_dir_all(&opts.out_dir).ok();
}

#[test]
#[ignore = "needs a CUDA device"]
fn quick_gpu_run_is_correct_and_positive() {
    let opts = ShootoutOptions {
        transfers: true,
        ..quick_gpu_options("ndgpu-shootout-gpu")
    };
    let rows = run_without_problems(&opts, |r| {
        !(r.is_ok() && r.rate > 0.0 && r.rate.is_finite())
    });
    for op in Op::LADDERS {
        let of_op: Vec<&Row> = rows.iter().filter(|r| r.op == op).collect();
        assert!(
            of_op.iter().any(|r| r.backend == "cuda" && !r.transfers),
            "{op}"
        );
        assert!(
            of_op.iter().any(|r| r.backend == "cuda" && r.transfers),
            "{op}"
        );
        // One runtime moves the data for both GPU backends: the transfer op has its
        // rows under `cuda` only.
        if op == Op::Transfer {
            continue;
        }
        assert!(
            of_op
                .iter()
                .any(|r| r.backend == "cublas" && r.default_variant),
            "{op}"
        );
        assert_eq!(
            op.bandwidth_bound(),
            of_op.iter().any(|r| r.backend == "copy"),
            "{op}"
        );
        for r in of_op.iter().filter(|r| r.backend == "cuda") {
            assert!(r.vs_vendor.is_some_and(|v| v > 0.0), "{r:?}");
            assert!(r.of_ceiling.is_some_and(|v| v > 0.0), "{r:?}");
        }
    }
    write_reports(&rows, &opts.out_dir).unwrap();
    assert!(opts.out_dir.join("shootout.csv").exists());
    std::fs::remove_dir_all(&opts.out_dir).unwrap();
}
