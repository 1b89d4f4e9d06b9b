use super::*;

fn cpu_options(dir: &str) -> ShootoutOptions {
    ShootoutOptions {
        // One small size for every op keeps this test fast in CI.
        sizes: Some(vec![160]),
        backends: vec!["cpu".into()],
        out_dir: std::env::temp_dir().join(format!("{dir}-{}", std::process::id())),
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
    assert_eq!(rows.len(), Op::ALL.len());
    for (row, op) in rows.iter().zip(Op::ALL) {
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
    for op in Op::ALL {
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
        sizes: Some(vec![0, 100]),
        ..cpu_options("unused")
    };
    assert!(run(&opts).unwrap().is_empty());
}

#[test]
#[ignore = "needs a CUDA device"]
fn quick_gpu_run_is_correct_and_positive() {
    let opts = ShootoutOptions {
        quick: true,
        transfers: true,
        reps: 5,
        out_dir: std::env::temp_dir().join(format!("ndgpu-shootout-gpu-{}", std::process::id())),
        ..ShootoutOptions::default()
    };
    let rows = run(&opts).unwrap();
    let problems: Vec<String> = rows
        .iter()
        .filter(|r| !(r.is_ok() && r.rate > 0.0 && r.rate.is_finite()))
        .map(|r| format!("{} {} {}: {:?}", r.op, r.size, r.label(), r.status))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for op in Op::ALL {
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
