//! Runs the built `ndgpu` binary on temporary `.npy` files and checks what it prints,
//! what it writes, and how it fails.

use std::path::Path;
use std::process::{Command, Output};

use ndarray::{array, Array0, Array1, Array2, Array3};
use ndarray_npy::read_npy;
use ndgpu_cli::npy::raw_file;

use common::{close, fails, ndgpu, s, two_clusters, Dir};
use serde_json::Value;

mod common;

/// Runs and expects success; returns stdout.
fn ok(args: &[&str]) -> String {
    let out = ndgpu(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs with `--json` appended and parses stdout.
fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    serde_json::from_str(&ok(&all)).expect("stdout is JSON")
}

/// `ndgpu run <args> --backend cpu`, the command line most tests run.
fn on_cpu<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--backend", "cpu"]);
    all
}

/// [`ok`] of `ndgpu run <args> --backend cpu`.
fn cpu_ok(args: &[&str]) -> String {
    ok(&on_cpu(args))
}

/// [`json`] of `ndgpu run <args> --backend cpu`.
fn cpu_json(args: &[&str]) -> Value {
    json(&on_cpu(args))
}

/// `ndgpu run <args> --backend cpu`, expected to succeed: its output (`-o -` writes a
/// .npy to its stdout).
fn cpu_out(args: &[&str]) -> Output {
    let out = ndgpu(&on_cpu(args));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    out
}

/// [`fails`] of `ndgpu run <args> --backend cpu`.
fn cpu_fails(args: &[&str], code: i32, needle: &str) {
    fails(&on_cpu(args), code, needle)
}

/// The entry of the backend `name` in the list of `info --json`.
fn backend<'a>(info: &'a Value, name: &str) -> &'a Value {
    let list = info["backends"].as_array().unwrap();
    list.iter().find(|b| b["name"] == name).unwrap()
}

fn read2(p: &str) -> Array2<f64> {
    read_npy(p).unwrap()
}

/// The SPD matrix A = L·Lᵀ of a known integer factor L.
fn spd() -> (Array2<f64>, Array2<f64>) {
    let l = array![[2.0, 0.0, 0.0], [6.0, 1.0, 0.0], [-8.0, 5.0, 3.0]];
    (l.dot(&l.t()), l)
}

#[test]
fn info_lists_every_backend_with_status() {
    let text = ok(&["info"]);
    assert!(text.contains("cpu: available"), "{text}");
    let v = json(&["info"]);
    let list = v["backends"].as_array().unwrap();
    let names: Vec<&str> = list.iter().map(|b| b["name"].as_str().unwrap()).collect();
    for expected in ["cpu", "cuda", "cublas"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    for b in list {
        if b["available"].as_bool().unwrap() {
            assert!(!b["description"].as_str().unwrap().is_empty(), "{b}");
            // Every family lists its default among its variants.
            let variants = b["variants"].as_object().unwrap();
            assert_eq!(variants.len(), ndgpu::Family::ALL.len(), "{b}");
            for v in variants.values() {
                let all = v["all"].as_array().unwrap();
                assert_eq!(&v["default"], &all[0], "{b}");
            }
        } else {
            assert!(!b["reason"].as_str().unwrap().is_empty(), "{b}");
            let line = format!("{}: unavailable: ", b["name"].as_str().unwrap());
            assert!(text.contains(&line), "{text}");
        }
    }
    let cpu = backend(&v, "cpu");
    assert_eq!(cpu["available"], true);
    // What `auto` picks comes first, and the backends that run here before the others.
    let auto = v["auto"].as_str().unwrap();
    assert!(text.starts_with(&format!("auto picks: {auto} (")), "{text}");
    assert_eq!(backend(&v, auto)["available"], true);
    let available: Vec<bool> = list
        .iter()
        .map(|b| b["available"].as_bool().unwrap())
        .collect();
    assert!(available.windows(2).all(|w| w[0] >= w[1]), "{available:?}");
}

#[test]
fn matmul_and_gemm() {
    let d = Dir::new();
    let a = d.put("a.npy", &array![[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    let b = d.put("b.npy", &array![[7.0f64, 8.0, 9.0], [10.0, 11.0, 12.0]]);
    let c = d.out("c.npy");
    let v = cpu_json(&["matmul", &a, &b, "-o", &c]);
    assert_eq!(v["op"], "matmul");
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["dtype"], "f64");
    assert!(v["variant"].is_string());
    assert!(v["seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(v["shapes"]["output"], serde_json::json!([3, 3]));
    let expected = array![[27.0, 30.0, 33.0], [61.0, 68.0, 75.0], [95.0, 106.0, 117.0]];
    assert_eq!(read2(&c), expected);

    // 2·Aᵀ·Aᵀ' style: alpha, beta, both transposes and a C input.
    let at = d.put("at.npy", &array![[1.0f64, 3.0, 5.0], [2.0, 4.0, 6.0]]);
    let bt = d.put("bt.npy", &array![[7.0f64, 10.0], [8.0, 11.0], [9.0, 12.0]]);
    let c0 = d.put("c0.npy", &Array2::<f64>::ones((3, 3)));
    let g = d.out("g.npy");
    let args = [
        "matmul",
        &at,
        &bt,
        &c0,
        "--trans-a",
        "--trans-b",
        "--alpha",
        "2",
        "--beta",
        "-1",
        "-o",
        &g,
    ];
    let v = cpu_json(&args);
    assert_eq!(v["alpha"], 2.0);
    assert_eq!(v["beta"], -1.0);
    assert_eq!(read2(&g), expected.mapv(|x| 2.0 * x - 1.0));

    // f32 in, f32 out; without -o the JSON carries the result.
    let a32 = d.put("a32.npy", &array![[1.0f32, 2.0], [3.0, 4.0]]);
    let v = cpu_json(&["matmul", &a32, &a32]);
    assert_eq!(v["dtype"], "f32");
    assert_eq!(v["output"], serde_json::json!([[7.0, 10.0], [15.0, 22.0]]));
    let o32 = d.out("o32.npy");
    cpu_ok(&["matmul", &a32, &a32, "-o", &o32]);
    let r: Array2<f32> = read_npy(&o32).unwrap();
    assert_eq!(r, array![[7.0f32, 10.0], [15.0, 22.0]]);
}

#[test]
fn gram_transpose_and_text_output() {
    let d = Dir::new();
    let m = array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let mp = d.put("m.npy", &m);
    let g = d.out("g.npy");
    let v = cpu_json(&["gram", &mp, "-o", &g]);
    assert_eq!(v["op"], "gram");
    assert_eq!(read2(&g), array![[14.0, 32.0], [32.0, 77.0]]);
    let t = d.out("t.npy");
    cpu_json(&["transpose", &mp, "-o", &t]);
    assert_eq!(read2(&t), m.t().to_owned());
    // A Fortran-ordered file reads as the same matrix.
    let fp = d.put("f.npy", &m.clone().reversed_axes());
    cpu_json(&["transpose", &fp, "-o", &t]);
    assert_eq!(read2(&t), m);
    // Without -o and --json the result is printed.
    let text = cpu_ok(&["transpose", &mp]);
    assert!(text.contains("transpose on cpu"), "{text}");
    // A 1-D array is its own transpose, as in NumPy.
    let v = d.put("v.npy", &array![1.0f64, 2.0, 3.0]);
    let out = cpu_out(&["transpose", &v, "-o", "-"]);
    let r: Array1<f64> = parse_npy(&out.stdout);
    assert_eq!(r, array![1.0, 2.0, 3.0]);
    assert!(text.contains("[[1, 4],"), "{text}");
}

#[test]
fn reductions_whole_and_per_axis() {
    let d = Dir::new();
    let a = d.put("a.npy", &array![[3.0f64, -1.0, 4.0], [1.0, 5.0, -9.0]]);
    let v = cpu_json(&["reduce", &a, "--op", "sum"]);
    assert_eq!(v["result"], 3.0);
    let o = d.out("sumsq.npy");
    let v = cpu_json(&["reduce", &a, "--op", "sumsq", "-o", &o]);
    assert_eq!(v["result"], 133.0);
    let r: Array0<f64> = read_npy(&o).unwrap();
    assert_eq!(r[()], 133.0);
    assert_eq!(
        cpu_ok(&["reduce", &a, "--op", "max"]).lines().nth(1),
        Some("5")
    );
    let v = cpu_json(&["reduce", &a, "--op", "argmin"]);
    assert_eq!(
        (v["result"].as_u64(), v["row"].as_u64(), v["col"].as_u64()),
        (Some(5), Some(1), Some(2))
    );
    let o = d.out("min0.npy");
    cpu_json(&["reduce", &a, "--op", "min", "--axis", "0", "-o", &o]);
    let r: Array1<f64> = read_npy(&o).unwrap();
    assert_eq!(r, array![1.0, -1.0, -9.0]);
    let o = d.out("argmax1.npy");
    cpu_json(&["reduce", &a, "--op", "argmax", "--axis", "1", "-o", &o]);
    let r: Array1<i64> = read_npy(&o).unwrap();
    assert_eq!(r, array![2i64, 1]);
}

#[test]
fn dot_of_vectors() {
    let d = Dir::new();
    let x = d.put("x.npy", &array![1.0f32, 2.0, 3.0]);
    let y = d.put("y.npy", &array![4.0f32, 5.0, 6.0]);
    let o = d.out("dot.npy");
    let v = cpu_json(&["dot", &x, &y, "-o", &o]);
    assert_eq!(v["result"], 32.0);
    assert_eq!(v["dtype"], "f32");
    let r: Array0<f32> = read_npy(&o).unwrap();
    assert_eq!(r[()], 32.0);
    // Big-endian data is read as such.
    let be = d.path("be.npy");
    let data: Vec<u8> = [1.5f64, -2.0]
        .iter()
        .flat_map(|x| x.to_be_bytes())
        .collect();
    let dict = "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }";
    std::fs::write(&be, raw_file(dict, &data)).unwrap();
    let v = cpu_json(&["dot", &s(&be), &s(&be)]);
    assert_eq!(v["result"], 6.25);
}

#[test]
fn cholesky_and_solve() {
    let d = Dir::new();
    let (a, l) = spd();
    let ap = d.put("a.npy", &a);
    let lo = d.out("l.npy");
    cpu_json(&["cholesky", &ap, "-o", &lo]);
    assert!(close(&read2(&lo), &l, 1e-12), "{}", read2(&lo));

    let x = array![[1.0f64, -2.0], [2.0, 0.5], [3.0, 4.0]];
    let bp = d.put("b.npy", &a.dot(&x));
    let xo = d.out("x.npy");
    cpu_json(&["solve", &ap, &bp, "-o", &xo]);
    assert!(close(&read2(&xo), &x, 1e-9), "{}", read2(&xo));

    // With the factor given, and a 1-D right-hand side (X is 1-D too).
    let lp = d.put("lf.npy", &l);
    let b1 = d.put("b1.npy", &a.dot(&x.column(0)));
    let x1 = d.out("x1.npy");
    let v = cpu_json(&["solve", &lp, &b1, "--factor", "-o", &x1]);
    assert_eq!(v["shapes"]["output"], serde_json::json!([3]));
    let r: Array1<f64> = read_npy(&x1).unwrap();
    assert!(
        r.iter().zip(x.column(0)).all(|(p, q)| (p - q).abs() < 1e-9),
        "{r}"
    );
}

/// `run kmeans` with k = 2 and seed 3 on the file `x` (of [`two_clusters`]), with
/// `outputs` (options naming where results go) added; its JSON summary.
fn two_clusters_k2(x: &str, outputs: &[&str]) -> Value {
    let mut args = vec!["kmeans", x, "--k", "2", "--seed", "3"];
    args.extend_from_slice(outputs);
    cpu_json(&args)
}

#[test]
fn kmeans_and_predict() {
    let d = Dir::new();
    let x = d.put("x.npy", &two_clusters());
    let out = d.path("km");
    let v = two_clusters_k2(&x, &["--out-dir", &s(&out)]);
    assert_eq!(v["converged"], true);
    assert_eq!(v["inertia"], 4.0);
    assert!(v["iterations"].as_u64().unwrap() >= 1);
    let labels: Array1<i64> = read_npy(out.join("labels.npy")).unwrap();
    let c: Array2<f64> = read_npy(out.join("centroids.npy")).unwrap();
    assert_eq!(&labels.as_slice().unwrap()[..4], &[labels[0]; 4]);
    assert_eq!(&labels.as_slice().unwrap()[4..], &[labels[4]; 4]);
    assert_ne!(labels[0], labels[4]);
    let first = labels[0] as usize;
    assert_eq!(c.row(first), array![0.5, 0.5]);
    assert_eq!(c.row(1 - first), array![10.5, 10.5]);

    // Given starting centroids (f32 file for f64 data is fine: they are converted).
    let init = d.put("init.npy", &array![[10.0f32, 10.0], [0.0, 0.0]]);
    let (cp, lp) = (d.out("c.npy"), d.out("l.npy"));
    cpu_json(&[
        "kmeans",
        &x,
        "--k",
        "2",
        "--init",
        &init,
        "--centroids",
        &cp,
        "--labels",
        &lp,
    ]);
    let labels: Array1<i64> = read_npy(&lp).unwrap();
    assert_eq!(labels, array![1i64, 1, 1, 1, 0, 0, 0, 0]);
    assert_eq!(read2(&cp), array![[10.5, 10.5], [0.5, 0.5]]);

    let q = d.put("q.npy", &array![[9.0f64, 9.0], [-1.0, 2.0]]);
    let po = d.out("p.npy");
    cpu_json(&["predict", &q, &cp, "-o", &po]);
    let p: Array1<i64> = read_npy(&po).unwrap();
    assert_eq!(p, array![0i64, 1]);
}

#[test]
fn kmeans_sample_weight() {
    let d = Dir::new();
    let x = d.put("x.npy", &two_clusters());
    // (0, 0) of weight 0 and (1, 1) of weight 3 (an f32 file for f64 data: converted):
    // the first centroid is (3·(1, 1) + (0, 1) + (1, 0)) / 5 = (0.8, 0.8), and the
    // inertia 0.68 + 0.68 + 3·0.08 + 4·0.5 = 3.6 (to f64 rounding).
    let w = d.put("w.npy", &array![0.0f32, 1.0, 1.0, 3.0, 1.0, 1.0, 1.0, 1.0]);
    let cp = d.out("c.npy");
    let v = two_clusters_k2(&x, &["--sample-weight", &w, "--centroids", &cp]);
    let inertia = v["inertia"].as_f64().unwrap();
    assert!((inertia - 3.6).abs() < 1e-12, "{v}");
    let c = read2(&cp);
    let near = |r: usize, p: f64| c.row(r).iter().all(|v| (v - p).abs() < 1e-15);
    assert!(
        (near(0, 0.8) && near(1, 10.5)) || (near(1, 0.8) && near(0, 10.5)),
        "{c}"
    );
    // Refused weights: exit code 1, naming the problem.
    let neg = d.put(
        "neg.npy",
        &array![1.0f64, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    );
    cpu_fails(
        &["kmeans", &x, "--k", "2", "--sample-weight", &neg],
        1,
        "negative",
    );
    let short = d.put("short.npy", &array![1.0f64, 1.0]);
    cpu_fails(
        &["kmeans", &x, "--k", "2", "--sample-weight", &short],
        1,
        "2 sample weights",
    );
    cpu_fails(
        &[
            "kmeans",
            &x,
            "--k",
            "2",
            "--sample-weight",
            "nosuchfile.npy",
        ],
        2,
        "nosuchfile",
    );
}

#[test]
fn verify_cpu_small_prints_a_table() {
    let out = ndgpu(&["verify", "--backends", "cpu", "--sizes", "small"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("backend"), "{stdout}");
    for family in [
        "matmul",
        "gram",
        "transpose",
        "reduce",
        "cholesky",
        "kmeans",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("cpu") && l.contains(family)),
            "{stdout}"
        );
    }
}

#[test]
fn bad_input_is_one_error_line() {
    let d = Dir::new();
    let a = d.put("a.npy", &array![[1.0f64, 2.0], [3.0, 4.0]]);
    let b3 = d.put("b3.npy", &Array2::<f64>::zeros((3, 2)));
    let complex = d.out("c.npy");
    std::fs::write(
        &complex,
        ndgpu_cli::npy::raw_file(
            "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
            &[0; 16],
        ),
    )
    .unwrap();
    let cube = d.put("cube.npy", &Array3::<f64>::zeros((2, 2, 2)));
    let vec = d.put("v.npy", &array![1.0f64, 2.0]);
    let missing = d.out("missing.npy");

    // Files that cannot be read as arrays of numbers, or written: usage or I/O (2).
    cpu_fails(&["matmul", &missing, &a], 2, "cannot read");
    cpu_fails(&["matmul", &complex, &a], 2, "complex64");
    cpu_fails(&["matmul", &a, &a, &a], 2, "--beta");
    let under_a_file = format!("{a}/out.npy");
    cpu_fails(&["gram", &a, "-o", &under_a_file], 2, "cannot create");
    // Arrays whose rank or shape the operation cannot take: refused input (1).
    cpu_fails(&["matmul", &cube, &a], 1, "rank 3");
    cpu_fails(&["matmul", &vec, &cube], 1, "rank 3");
    cpu_fails(&["gram", &vec], 1, "rank 1");
    cpu_fails(&["dot", &a, &a], 1, "expected a vector");
    cpu_fails(&["matmul", &a, &b3], 1, "inner dimensions");
    cpu_fails(&["cholesky", &b3], 1, "square");

    // Truncated data, a garbage file, and a header that promises far more than is there.
    let bytes = std::fs::read(&a).unwrap();
    let trunc = d.path("trunc.npy");
    std::fs::write(&trunc, &bytes[..bytes.len() - 5]).unwrap();
    cpu_fails(&["gram", &s(&trunc)], 2, "truncated");
    let garbage = d.path("garbage.npy");
    std::fs::write(&garbage, b"this is not an npy file at all").unwrap();
    cpu_fails(&["gram", &s(&garbage)], 2, "magic");
    let huge = d.path("huge.npy");
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000, 100000000), }";
    std::fs::write(&huge, raw_file(dict, &[0u8; 32])).unwrap();
    cpu_fails(&["gram", &s(&huge)], 2, "truncated");
    let structured = d.path("structured.npy");
    let dict = "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2, 2), }";
    std::fs::write(&structured, raw_file(dict, &[0u8; 32])).unwrap();
    cpu_fails(&["gram", &s(&structured)], 2, "structured");
    let half = d.path("half.npy");
    std::fs::write(&half, &bytes[..9]).unwrap();
    cpu_fails(&["gram", &s(&half)], 2, "not a valid .npy");

    // NaN where the operation cannot take it, and a matrix that is not SPD: refused
    // input (1), both.
    let nan = d.put("nan.npy", &array![[1.0f64, 0.0], [f64::NAN, 1.0]]);
    cpu_fails(&["cholesky", &nan], 1, "non-finite");
    cpu_fails(&["kmeans", &nan, "--k", "1"], 1, "non-finite");
    // The products, the transpose and the reductions pass NaN through, as NumPy does
    // (the exit-code table says so).
    for op in [
        &["gram", &nan][..],
        &["transpose", &nan],
        &["reduce", &nan, "--op", "sum"],
    ] {
        let mut args = op.to_vec();
        args.extend(["-o", "-"]);
        let out = ndgpu(&on_cpu(&args));
        assert!(out.status.success(), "{op:?}");
        let r: ndarray::ArrayD<f64> = parse_npy(&out.stdout);
        assert!(r.iter().any(|v| v.is_nan()), "{op:?}: NaN passed through");
    }
    let indefinite = d.put("ind.npy", &array![[1.0f64, 2.0], [2.0, 1.0]]);
    cpu_fails(&["cholesky", &indefinite], 1, "pivot 1");
    cpu_fails(
        &["solve", &indefinite, &vec, "--assume-a", "pos"],
        1,
        "pivot",
    );

    // k, tol, change_tol and max_iter: out of range whatever the data is a bad argument
    // (2); k larger than the data is refused input (1).
    cpu_fails(&["kmeans", &a, "--k", "0"], 2, "--k");
    cpu_fails(
        &["kmeans", &a, "--k", "1", "--change-tol", "2"],
        2,
        "--change-tol",
    );
    cpu_fails(&["kmeans", &a, "--k", "1", "--tol=-1"], 2, "--tol");
    cpu_fails(
        &["kmeans", &a, "--k", "1", "--max-iter", "0"],
        2,
        "--max-iter",
    );
    cpu_fails(
        &["kmeans", &a, "--k", "3"],
        1,
        "larger than the number of points",
    );
    cpu_fails(
        &["kmeans", &a, "--k", "1", "--init", "nosuchfile.npy"],
        2,
        "--init",
    );

    // Backends and variants: `run gram A` with these options.
    let gram = |options: &[&'static str]| [&["run", "gram", a.as_str()][..], options].concat();
    ok(&gram(&["--backend", "cpu", "--precision", "ieee"]));
    for (options, code, needle) in [
        (&["--backend", "nosuch"][..], 2, "unknown backend 'nosuch'"),
        (
            &["--backend", "cpu", "--variant", "nosuch"],
            2,
            "available:",
        ),
        (
            &["--backend", "cpu", "--precision", "3xtf32"],
            1,
            "no 3xtf32 variant of gram",
        ),
        (
            &["--backend", "cpu", "--precision", "tf32", "--variant", "x"],
            2,
            "cannot be used with",
        ),
    ] {
        fails(&gram(options), code, needle);
    }
    let info = json(&["info"]);
    for b in info["backends"].as_array().unwrap() {
        if b["available"] == false {
            let name = b["name"].as_str().unwrap();
            fails(&["run", "gram", &a, "--backend", name], 1, "unavailable");
        }
    }

    // Usage errors from the parser are one line too.
    cpu_fails(&["reduce", &a, "--op", "median"], 2, "median");
    cpu_fails(&["reduce", &a, "--op", "sum", "--axis", "2"], 2, "--axis");
    fails(&["verify", "--backends", "nosuch"], 2, "unknown backend");
}

/// Runs with the environment variable `NDGPU_BACKEND` set to `value`.
fn ndgpu_env(args: &[&str], value: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndgpu"))
        .args(args)
        .env("NDGPU_BACKEND", value)
        .output()
        .expect("the binary runs")
}

/// Runs with stdout going to `stdout` (a file or a device).
fn ndgpu_to(args: &[&str], stdout: std::fs::File) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndgpu"))
        .args(args)
        .env_remove("NDGPU_BACKEND")
        .stdout(stdout)
        .output()
        .expect("the binary runs")
}

/// Runs and expects success; returns stdout and stderr.
fn ok_with_stderr(args: &[&str]) -> (String, String) {
    let out = ndgpu(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

/// A .npy held in memory, as `-o -` writes it.
fn parse_npy<A, D>(bytes: &[u8]) -> ndarray::Array<A, D>
where
    A: ndarray_npy::ReadableElement,
    D: ndarray::Dimension,
{
    use ndarray_npy::ReadNpyExt;
    ndarray::Array::<A, D>::read_npy(bytes).expect("stdout is a .npy")
}

#[test]
fn kmeans_o_writes_the_labels() {
    let d = Dir::new();
    let x = d.put("x.npy", &two_clusters());
    let km = d.out("km.npy");
    let v = two_clusters_k2(&x, &["-o", &km]);
    let labels: Array1<i64> = read_npy(&km).unwrap();
    assert_eq!(labels.len(), 8);
    assert_eq!(v["outputs"]["labels"], km.as_str());
    // The centroids were not asked for in a file: the summary has them.
    assert_eq!(v["shapes"]["centroids"], serde_json::json!([2, 2]));
    assert!(v["centroids"].is_array(), "{v}");
    // --output is the same option, as for the other operations.
    let km2 = d.out("km2.npy");
    two_clusters_k2(&x, &["--output", &km2]);
    let again: Array1<i64> = read_npy(&km2).unwrap();
    assert_eq!(again, labels);
    // Printed labels too many to show name the options that write them, -o among them.
    let many = Array2::from_shape_fn((600, 2), |(i, j)| ((i * 7 + j * 3) % 50) as f64);
    let xm = d.put("many.npy", &many);
    let text = cpu_ok(&["kmeans", &xm, "--k", "3"]);
    assert!(
        text.contains("(abbreviated: -o (--labels) or --out-dir writes every element)"),
        "{text}"
    );
    let written = d.out("many_labels.npy");
    cpu_ok(&["kmeans", &xm, "--k", "3", "-o", &written]);
    let labels: Array1<i64> = read_npy(&written).unwrap();
    assert_eq!(labels.len(), 600);
}

#[test]
fn dtype_converts_and_mixed_inputs_promote() {
    let d = Dir::new();
    let a32 = d.put("a32.npy", &array![[1.0f32, 2.0], [3.0, 4.0]]);
    let a64 = d.put("a64.npy", &array![[1.0f64, 0.0], [0.0, 2.0]]);
    // --dtype f64 on an f32 file: converted, with one note on stderr.
    let o = d.out("o.npy");
    let (_, stderr) = ok_with_stderr(&on_cpu(&["matmul", &a32, &a32, "--dtype", "f64", "-o", &o]));
    let notes: Vec<&str> = stderr.lines().collect();
    // One note per file, though it is given twice.
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].starts_with(&format!("note: converting {a32} from f32 to f64")),
        "{stderr}"
    );
    assert_eq!(read2(&o), array![[7.0, 10.0], [15.0, 22.0]]);
    // Mixed f32 and f64: promoted to f64, a note for the f32 input only.
    let (stdout, stderr) = ok_with_stderr(&on_cpu(&["matmul", &a32, &a64, "-o", &o, "--json"]));
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["dtype"], "f64");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("note: converting {a32} from f32 to f64")),
        "{stderr}"
    );
    assert!(stderr.contains("promote"), "{stderr}");
    assert_eq!(read2(&o), array![[1.0, 4.0], [3.0, 8.0]]);
    // --dtype f32 on f64 files: converted down.
    let (stdout, stderr) = ok_with_stderr(&on_cpu(&[
        "gram", &a64, "--dtype", "f32", "-o", &o, "--json",
    ]));
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["dtype"], "f32");
    assert!(stderr.contains("from f64 to f32"), "{stderr}");
    let r: Array2<f32> = read_npy(&o).unwrap();
    assert_eq!(r, array![[1.0f32, 0.0], [0.0, 4.0]]);
    // The same dtype throughout: nothing to say.
    let (_, stderr) = ok_with_stderr(&on_cpu(&["gram", &a32]));
    assert_eq!(stderr, "");
}

#[test]
fn one_d_arrays_as_numpy() {
    let d = Dir::new();
    let v = d.put("v.npy", &array![3.0f64, -1.0, 4.0]);
    // reduce of a vector: whole-vector results; axis 0 (or -1) is the whole vector.
    let r = cpu_json(&["reduce", &v, "--op", "sum"]);
    assert_eq!(r["result"], 6.0);
    assert_eq!(r["shapes"]["a"], serde_json::json!([3]));
    let r = cpu_json(&["reduce", &v, "--op", "argmax"]);
    assert_eq!(r["result"], 2);
    assert!(r.get("row").is_none(), "{r}");
    for axis in ["0", "-1"] {
        let o = d.out("min.npy");
        let r = cpu_json(&["reduce", &v, "--op", "min", "--axis", axis, "-o", &o]);
        assert_eq!(r["result"], -1.0);
        let m: Array0<f64> = read_npy(&o).unwrap();
        assert_eq!(m[()], -1.0);
    }
    cpu_fails(
        &["reduce", &v, "--op", "sum", "--axis", "1"],
        2,
        "out of range for a 1-D array",
    );

    // matmul: A·v is a vector, v·B too, v·w a scalar.
    let a = d.put("a.npy", &array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let w = d.put("w.npy", &array![1.0f64, 1.0]);
    let o = d.out("av.npy");
    let r = cpu_json(&["matmul", &a, &v, "-o", &o]);
    assert_eq!(r["shapes"]["output"], serde_json::json!([2]));
    let av: Array1<f64> = read_npy(&o).unwrap();
    assert_eq!(av, array![13.0, 31.0]);
    let o = d.out("wa.npy");
    cpu_json(&["matmul", &w, &a, "-o", &o]);
    let wa: Array1<f64> = read_npy(&o).unwrap();
    assert_eq!(wa, array![5.0, 7.0, 9.0]);
    let r = cpu_json(&["matmul", &v, &v]);
    assert_eq!(r["result"], 26.0);
    // A 1-D C goes with a 1-D result; transposing a vector leaves it as it is.
    let c = d.put("c.npy", &array![1.0f64, 2.0]);
    let o = d.out("gemv.npy");
    cpu_json(&["matmul", &a, &v, &c, "--beta", "-1", "--trans-b", "-o", &o]);
    let r: Array1<f64> = read_npy(&o).unwrap();
    assert_eq!(r, array![12.0, 29.0]);
    let c2 = d.put("c2.npy", &array![[1.0f64], [2.0]]);
    cpu_fails(
        &["matmul", &a, &v, &c2, "--beta", "1"],
        1,
        "the result's rank (1)",
    );
}

#[test]
fn negative_axes_count_from_the_last() {
    let d = Dir::new();
    let a = d.put("a.npy", &array![[3.0f64, -1.0, 4.0], [1.0, 5.0, -9.0]]);
    for (neg, pos) in [("-1", "1"), ("-2", "0")] {
        let with = |axis: &str| {
            let o = d.out(&format!("sum{axis}.npy"));
            let r = cpu_json(&["reduce", &a, "--op", "sum", "--axis", axis, "-o", &o]);
            let x: Array1<f64> = read_npy(&o).unwrap();
            (r["axis"].clone(), x)
        };
        assert_eq!(with(neg), with(pos));
    }
    let o = d.out("rows.npy");
    cpu_ok(&["reduce", &a, "--op", "max", "--axis=-1", "-o", &o]);
    let r: Array1<f64> = read_npy(&o).unwrap();
    assert_eq!(r, array![4.0, 5.0]);
    cpu_fails(&["reduce", &a, "--op", "sum", "--axis", "-3"], 2, "--axis");
}

#[test]
fn numpy_and_scikit_learn_spellings() {
    let d = Dir::new();
    let a = d.put("a.npy", &array![[1.0f32, 2.0], [3.0, 4.0]]);
    for name in ["float64", "f64"] {
        let v = cpu_json(&["gram", &a, "--dtype", name]);
        assert_eq!(v["dtype"], "f64");
    }
    let v = cpu_json(&["gram", &a, "--dtype", "float32"]);
    assert_eq!(v["dtype"], "f32");
    let x = d.put("x.npy", &two_clusters());
    let run = |init: &str| {
        let l = d.out(&format!("l{init}.npy"));
        let v = cpu_json(&[
            "kmeans", &x, "--k", "2", "--seed", "5", "--init", init, "-o", &l,
        ]);
        let labels: Array1<i64> = read_npy(&l).unwrap();
        (v["inertia"].clone(), labels)
    };
    assert_eq!(run("k-means++"), run("kmeans++"));
}

#[test]
fn op_name_as_command_hints_run() {
    fails(
        &["matmul", "A.npy", "B.npy"],
        2,
        "did you mean `ndgpu run matmul A.npy B.npy`?",
    );
    fails(
        &["kmeans", "X.npy", "--k", "3"],
        2,
        "`ndgpu run kmeans X.npy --k 3`",
    );
    // Not an operation: clap's own message.
    fails(&["nosuch"], 2, "unrecognized subcommand 'nosuch'");
}

#[test]
fn exit_codes_are_documented_and_consistent() {
    for args in [&["--help"][..], &["run", "--help"]] {
        let help = ok(args);
        assert!(help.contains("Exit codes:"), "{help}");
        assert!(
            help.contains("1  the operation refused its input"),
            "{help}"
        );
        assert!(help.contains("2  usage or I/O"), "{help}");
    }
    let d = Dir::new();
    let a = d.put("a.npy", &array![[1.0f64, 2.0], [3.0, 4.0]]);
    let b3 = d.put("b3.npy", &Array2::<f64>::zeros((3, 2)));
    let nan = d.put("nan.npy", &array![[1.0f64, 0.0], [f64::NAN, 1.0]]);
    let inf = d.put("inf.npy", &array![[1.0f64, f64::INFINITY], [0.0, 1.0]]);
    // 1: the operation refused its input.
    cpu_fails(&["cholesky", &a], 1, "not positive definite");
    cpu_fails(&["cholesky", &nan], 1, "non-finite");
    cpu_fails(&["kmeans", &inf, "--k", "1"], 1, "non-finite");
    cpu_fails(&["matmul", &a, &b3], 1, "shape mismatch");
    cpu_fails(&["kmeans", &a, "--k", "5"], 1, "larger than");
    // 2: usage or I/O.
    cpu_fails(&["cholesky", &d.out("missing.npy")], 2, "cannot read");
    cpu_fails(&["cholesky", &a, "--dtype", "f16"], 2, "f16");
    cpu_fails(&["kmeans", &a, "--k", "0"], 2, "at least 1");
    fails(
        &["run", "gram", &a, "--backend", "nosuch"],
        2,
        "unknown backend",
    );
}

#[test]
fn output_folder_is_created() {
    let d = Dir::new();
    let a = d.put("a.npy", &array![[1.0f64, 2.0], [3.0, 4.0]]);
    let o = d.path("new/nested/g.npy");
    cpu_ok(&["gram", &a, "-o", &s(&o)]);
    assert_eq!(read2(&s(&o)), array![[5.0, 11.0], [11.0, 25.0]]);
    let l = d.path("km/labels/l.npy");
    let c = d.path("km/centroids/c.npy");
    cpu_ok(&[
        "kmeans",
        &a,
        "--k",
        "1",
        "-o",
        &s(&l),
        "--centroids",
        &s(&c),
    ]);
    let labels: Array1<i64> = read_npy(&l).unwrap();
    assert_eq!(labels, array![0i64, 0]);
    assert_eq!(read2(&s(&c)), array![[2.0, 3.0]]);
}

#[test]
fn dash_o_writes_npy_to_stdout() {
    let d = Dir::new();
    let a = d.put("a.npy", &array![[1.0f64, 2.0], [3.0, 4.0]]);
    let out = cpu_out(&["gram", &a, "-o", "-"]);
    let g: Array2<f64> = parse_npy(&out.stdout);
    assert_eq!(g, array![[5.0, 11.0], [11.0, 25.0]]);
    // The summary goes to stderr, and no file named `-` appears.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("wrote output (2, 2) to stdout"), "{stderr}");
    assert!(!Path::new("-").exists());
    // JSON too, and a scalar as a 0-d array.
    let out = ndgpu(&on_cpu(&["reduce", &a, "--op", "sum", "-o", "-", "--json"]));
    assert!(out.status.success());
    let x: Array0<f64> = parse_npy(&out.stdout);
    assert_eq!(x[()], 10.0);
    let v: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["outputs"]["output"], "stdout");
    // k-means' labels; only one output can take stdout.
    let out = ndgpu(&on_cpu(&["kmeans", &a, "--k", "2", "-o", "-"]));
    assert!(out.status.success());
    let labels: Array1<i64> = parse_npy(&out.stdout);
    assert_eq!(labels.len(), 2);
    cpu_fails(
        &["kmeans", &a, "--k", "2", "-o", "-", "--centroids", "-"],
        2,
        "only one output can go to stdout",
    );
}

/// A reader that closes stdout before the whole .npy is written gets exit 2 and an
/// error that says the output is truncated, never a success.
#[test]
fn a_npy_cut_short_on_stdout_is_an_error() {
    use std::io::Read;
    let d = Dir::new();
    // 512×512 f64: 2 MiB, more than a pipe holds.
    let a = d.put("a.npy", &Array2::<f64>::ones((512, 512)));
    let mut child = Command::new(env!("CARGO_BIN_EXE_ndgpu"))
        .args(["run", "transpose", &a, "-o", "-", "--backend", "cpu"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("truncated"), "{stderr}");
    assert!(!stderr.contains("wrote output"), "{stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn write_errors_are_errors() {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full opens")
    };
    let d = Dir::new();
    let a = d.put("a.npy", &array![[1.0f64, 2.0], [3.0, 4.0]]);
    let cases: [&[&str]; 5] = [
        &["run", "gram", &a, "--backend", "cpu"],
        &["run", "gram", &a, "--json", "--backend", "cpu"],
        &["run", "gram", &a, "-o", "-", "--backend", "cpu"],
        &["info", "--json"],
        &["--help"],
    ];
    for args in cases {
        let out = ndgpu_to(args, full());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("error: cannot write to stdout")),
            "{args:?}: {stderr}"
        );
    }
    // A file on a full device.
    cpu_fails(
        &["gram", &a, "-o", "/dev/full"],
        2,
        "cannot write /dev/full",
    );
}

#[test]
fn backend_from_environment_is_named() {
    let d = Dir::new();
    let a = d.put("a.npy", &array![[1.0f64, 2.0], [3.0, 4.0]]);
    let out = ndgpu_env(&["run", "gram", &a], "foo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: NDGPU_BACKEND=foo"), "{stderr}");
    assert!(stderr.contains("unknown backend 'foo'"), "{stderr}");
    // The variable is followed when valid, and --backend overrides it.
    let out = ndgpu_env(&["run", "gram", &a, "--json"], "cpu");
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["backend"], "cpu");
    let out = ndgpu_env(&["run", "gram", &a, "--backend", "cpu"], "foo");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn info_lists_every_backends_variants_even_without_a_gpu() {
    let text = ok(&["info"]);
    let v = json(&["info"]);
    for b in v["backends"].as_array().unwrap() {
        let variants = b["variants"].as_object().unwrap();
        // Every family, whether or not the backend can open here.
        assert_eq!(variants.len(), ndgpu::Family::ALL.len(), "{b}");
        for (family, entry) in variants {
            let all = entry["all"].as_array().unwrap();
            assert!(!all.is_empty(), "{family}: {b}");
            assert_eq!(entry["default"], all[0], "{family}: {b}");
        }
    }
    let cuda = backend(&v, "cuda");
    let matmul = cuda["variants"]["matmul"]["all"].as_array().unwrap();
    assert!(matmul.iter().any(|n| n == "naive"), "{cuda}");
    // The tensor-core rungs declare their precision; every other rung is IEEE.
    assert_eq!(
        cuda["variants"]["matmul"]["precision"],
        serde_json::json!({
            "tensor_core": "tf32",
            "tensor_core_3x": "3xtf32",
            "wgmma": "tf32",
            "wgmma_3x": "3xtf32"
        })
    );
    assert!(text.contains("tensor_core_3x [3xtf32]"), "{text}");
    assert!(text.contains("variants (* = default"), "{text}");
    // The vendor's TF32 product is the variant that does not compute in IEEE f32.
    let cublas = backend(&v, "cublas");
    assert_eq!(
        cublas["variants"]["matmul"]["precision"],
        serde_json::json!({ "gemm_tf32": "tf32" })
    );
    assert!(text.contains("gemm_tf32 [tf32]"), "{text}");
}

#[test]
fn kmeans_json_summarizes_labels() {
    let d = Dir::new();
    let x = d.put("x.npy", &two_clusters());
    let v = two_clusters_k2(&x, &[]);
    assert!(v.get("labels").is_none(), "{v}");
    assert_eq!(v["cluster_sizes"], serde_json::json!([4, 4]));
    assert_eq!(v["inertia"], 4.0);
    assert!(v["iterations"].as_u64().unwrap() >= 1);
    assert_eq!(v["shapes"]["labels"], serde_json::json!([8]));
    let note = v["labels_note"].as_str().unwrap();
    assert!(note.contains("-o") && note.contains("--out-dir"), "{note}");
    // Written labels are listed as an output, and the sizes are still there.
    let out = d.path("km");
    let v = two_clusters_k2(&x, &["--out-dir", &s(&out)]);
    assert!(v["outputs"]["labels"].is_string(), "{v}");
    assert!(v.get("labels_note").is_none(), "{v}");
    assert_eq!(v["cluster_sizes"], serde_json::json!([4, 4]));
}

#[test]
fn shootout_shape_suite_on_the_cpu_names_shapes_and_variants() {
    let d = Dir::new();
    let out = d.out("shapes");
    let args = [
        "shootout",
        "--suite",
        "shapes",
        "--backends",
        "cpu",
        "--ops",
        "matmul,gram,argmax",
        "--reps",
        "2",
        "--no-peer",
        "--quiet",
        "--out",
        &out,
    ];
    let stdout = ok(&args);
    // The tables are printed and written: a line per shape and variant.
    assert!(
        stdout.contains("| 4096×32×128 | cpu/reference (default) |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| 1024×16 | cpu/reference (default) |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| 16×65536 axis 1 | cpu/reference (default) |"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(d.path("shapes/shootout.md")).unwrap();
    assert_eq!(md, stdout);
    let csv = std::fs::read_to_string(d.path("shapes/shootout.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let shapes: Vec<&str> = rows.iter().map(|r| r[col("shape")]).collect();
    for want in [
        "64×64×64",
        "512×16×512",
        "16×512×16",
        "8×16384",
        "512×512",
        "65536×16 axis 0",
    ] {
        assert!(shapes.contains(&want), "{want}: {shapes:?}");
    }
    for r in &rows {
        assert_eq!(
            (r[col("variant")], r[col("status")]),
            ("reference", "ok"),
            "{r:?}"
        );
        assert!(r[col("rate")].parse::<f64>().unwrap() > 0.0, "{r:?}");
        // The ladder size where the shape is a ladder's (the squares of matmul and
        // gram), empty elsewhere.
        let dims: Vec<&str> = r[col("shape")].split('×').collect();
        let square = r[col("op")] != "argmax" && dims.iter().all(|d| *d == dims[0]);
        let size = if square { dims[0] } else { "" };
        assert_eq!(r[col("size")], size, "{r:?}");
    }
}

#[test]
fn shootout_suite_flag_is_checked() {
    let out = ndgpu(&["shootout", "--suite", "squares"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("invalid value 'squares'") && stderr.contains("shapes"),
        "{stderr}"
    );
    for (option, needle) in [
        (["--sizes", "64"], "--sizes is for the ladders"),
        (
            ["--ops", "matmul,cholesky"],
            "--suite shapes has no cholesky cases (its ops: matmul, gram, sum, sumsq, argmax)",
        ),
    ] {
        let suite = ["shootout", "--suite", "shapes"];
        fails(
            &[&suite[..], &option, &["--backends", "cpu"]].concat(),
            2,
            needle,
        );
    }
}

#[test]
fn info_plan_says_what_each_default_runs_at_a_shape_and_refuses_bad_specs() {
    let text = ok(&[
        "info",
        "--plan",
        "matmul=64x8192x64",
        "--plan",
        "kmeans=1048576x32x128",
    ]);
    assert!(text.contains("  plans (f32):"), "{text}");
    assert!(
        text.contains("    matmul 64×8192×64: reference: the same kernels at every shape"),
        "{text}"
    );
    let v = json(&["info", "--plan", "gram=32x1048576", "--dtype", "f64"]);
    let cpu = backend(&v, "cpu");
    assert_eq!(
        cpu["plans"]["gram 32×1048576"], "reference: the same kernels at every shape",
        "{cpu}"
    );
    fails(
        &["info", "--plan", "matmul=64x64"],
        2,
        "the wrong number of dimensions",
    );
    fails(
        &["info", "--plan", "reduce=64x64"],
        2,
        "the same kernels at every shape",
    );
    fails(&["info", "--plan", "gemm=1x2x3"], 2, "not a family");
    fails(&["info", "--plan", "gram=4xk"], 2, "not whole numbers");
    fails(&["info", "--plan", "gram"], 2, "no '='");
}
