//! What a newcomer meets in a first hour without a GPU: NaN passed through or refused
//! as `--help` says, integer files converted, a pipe closed early, errors in the terms
//! of the command line, `run --help`, `verify` of a missing backend, a 1-D transpose,
//! the mean, f32 digits in JSON, and `ndgpu random` to make inputs.

use std::io::Read;
use std::process::{Command, Stdio};

use ndarray::{array, Array0, Array1, Array2, Axis};
use ndarray_npy::read_npy;
use serde_json::Value;

use common::{fails, ndgpu, Dir};

mod common;

fn run_cpu<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--backend", "cpu"]);
    all
}

/// Runs the command, expects success; returns stdout and stderr.
fn ok(args: &[&str]) -> (String, String) {
    let out = ndgpu(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    serde_json::from_str(&ok(&all).0).expect("stdout is JSON")
}

#[test]
fn nan_passes_through_matmul_and_is_refused_by_the_factorizations() {
    let d = Dir::new();
    // In the lower triangle, which cholesky reads.
    let a = d.put("a.npy", &array![[1.0f64, 0.0], [f64::NAN, 1.0]]);
    let o = d.out("o.npy");
    ok(&run_cpu(&["matmul", &a, &a, "-o", &o]));
    let r: Array2<f64> = read_npy(&o).unwrap();
    assert!(r.iter().any(|x| x.is_nan()), "{r}");
    for op in ["gram", "transpose"] {
        ok(&run_cpu(&[op, &a, "-o", &o]));
        let r: Array2<f64> = read_npy(&o).unwrap();
        assert!(r.iter().any(|x| x.is_nan()), "{op}: {r}");
    }
    ok(&run_cpu(&["reduce", &a, "--op", "sum", "-o", &o]));
    let r: Array0<f64> = read_npy(&o).unwrap();
    assert!(r[()].is_nan());
    let b = d.put("b.npy", &array![1.0f64, 2.0]);
    for args in [
        vec!["cholesky", a.as_str()],
        vec!["solve", a.as_str(), b.as_str()],
        vec!["inv", a.as_str()],
    ] {
        fails(&run_cpu(&args), 1, "non-finite");
    }
    // --help says so.
    let help = String::from_utf8(ndgpu(&["--help"]).stdout).unwrap();
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("NaN and Inf pass through matmul, gram, transpose, reduce and dot"),
        "{help}"
    );
    assert!(
        flat.contains("NaN or Inf in the input of cholesky, solve"),
        "{help}"
    );
}

#[test]
fn integer_and_bool_inputs_are_converted_with_a_note() {
    let d = Dir::new();
    // What np.arange(6).reshape(2, 3) makes: int64.
    let ints = Array2::from_shape_fn((2, 3), |(i, j)| (3 * i + j) as i64);
    let a = d.put("a.npy", &ints);
    let o = d.out("o.npy");
    let (stdout, stderr) = ok(&run_cpu(&["gram", &a, "-o", &o, "--json"]));
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["dtype"], "f64");
    let notes: Vec<&str> = stderr.lines().collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].starts_with(&format!("note: converting {a} from int64 to f64")),
        "{stderr}"
    );
    let f = ints.mapv(|x| x as f64);
    let r: Array2<f64> = read_npy(&o).unwrap();
    assert_eq!(r, f.dot(&f.t()));
    // The same file twice: one note.
    let (_, stderr) = ok(&run_cpu(&["matmul", &a, &a, "--trans-b", "-o", &o]));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // --dtype f32 is obeyed; bool and uint8 are read too.
    let flags = d.put("f.npy", &array![[true, false], [true, true]]);
    let (stdout, stderr) = ok(&run_cpu(&[
        "reduce", &flags, "--op", "sum", "--dtype", "f32", "--json",
    ]));
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (v["dtype"].as_str(), v["result"].as_f64()),
        (Some("f32"), Some(3.0))
    );
    assert!(
        stderr.contains("from bool to f32 (--dtype f32)"),
        "{stderr}"
    );
    let bytes = d.put("u.npy", &array![1u8, 2, 250]);
    let v = json(&run_cpu(&["reduce", &bytes, "--op", "max"]));
    assert_eq!(v["result"].as_f64(), Some(250.0));
    // Complex and strings are refused, with a clear error.
    let c = d.out("c.npy");
    std::fs::write(
        &c,
        ndgpu_cli::npy::raw_file(
            "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }",
            &[0; 16],
        ),
    )
    .unwrap();
    fails(&run_cpu(&["reduce", &c, "--op", "sum"]), 2, "complex128");
    let u = d.out("u3.npy");
    std::fs::write(
        &u,
        ndgpu_cli::npy::raw_file(
            "{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }",
            &[0; 4],
        ),
    )
    .unwrap();
    fails(
        &run_cpu(&["reduce", &u, "--op", "sum"]),
        2,
        "string and object ones are refused",
    );
}

#[test]
fn stdout_closed_early_is_an_error_without_a_wrote_line() {
    let d = Dir::new();
    // Far more than a pipe's buffer.
    let a = d.put("a.npy", &Array2::<f64>::zeros((600, 600)));
    let mut child = Command::new(env!("CARGO_BIN_EXE_ndgpu"))
        .args(run_cpu(&["transpose", &a, "-o", "-"]))
        .env_remove("NDGPU_BACKEND")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The read end is closed here, as `| head -c 100` closes it.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("wrote"), "{stderr}");
}

#[test]
fn errors_name_the_command_and_its_vectors() {
    let d = Dir::new();
    let v3 = d.put("v3.npy", &Array1::<f64>::ones(3));
    let v4 = d.put("v4.npy", &Array1::<f64>::ones(4));
    let m23 = d.put("m23.npy", &Array2::<f64>::ones((2, 3)));
    let m45 = d.put("m45.npy", &Array2::<f64>::ones((4, 5)));
    let vectors = "matmul: shape mismatch: vectors of lengths 3 and 4 do not match";
    fails(&run_cpu(&["matmul", &v3, &v4]), 1, vectors);
    fails(
        &run_cpu(&["dot", &v3, &v4]),
        1,
        "dot: shape mismatch: vectors of lengths 3 and 4 do not match",
    );
    fails(
        &run_cpu(&["matmul", &m23, &v4]),
        1,
        "A is 2x3 but B is a vector of length 4",
    );
    fails(
        &run_cpu(&["matmul", &v4, &m23]),
        1,
        "A is a vector of length 4 but B is 2x3",
    );
    fails(
        &run_cpu(&["matmul", &m23, &m45]),
        1,
        "A is 2x3 but B is 4x5: the inner dimensions 3 and 4 differ",
    );
    fails(
        &run_cpu(&["matmul", &m23, &m23, "--trans-b", "--trans-a"]),
        1,
        "Aᵀ is 3x2 but Bᵀ is 3x2",
    );
    let c = d.put("c.npy", &Array2::<f64>::ones((3, 3)));
    fails(
        &run_cpu(&["matmul", &m23, &m23, &c, "--trans-b", "--beta", "1"]),
        1,
        "C is 3x3 but the product is 2x2",
    );
    // solve --assume-a pos on a symmetric matrix that is not positive definite: the
    // error names solve, and its pivot (1 - 2·2 = -3) reads as -3.
    let a = d.put("a.npy", &array![[1.0f64, 2.0], [2.0, 1.0]]);
    let b = d.put("b.npy", &array![1.0f64, 1.0]);
    fails(
        &run_cpu(&["solve", &a, &b, "--assume-a", "pos"]),
        1,
        "solve: matrix is not positive definite: pivot 1 (0-based) is -3, so",
    );
    fails(
        &run_cpu(&["cholesky", &a]),
        1,
        "cholesky: matrix is not positive",
    );
}

#[test]
fn run_help_lists_every_operation_with_its_options() {
    let (help, _) = ok(&["run", "--help"]);
    for line in [
        "  matmul A B [C] [--trans-a] [--trans-b] [--alpha <ALPHA>] [--beta <BETA>] [-o <PATH>]",
        "  reduce A --op <sum|sumsq|mean|min|max|argmin|argmax> [--axis <AXIS>] [-o <PATH>]",
        "  solve A B [--assume-a <gen|pos>] [--factor] [-o <PATH>]",
        "  lu A [--out-dir <DIR>]",
    ] {
        assert!(help.lines().any(|l| l == line), "{line:?} not in {help}");
    }
    // Every operation the parser knows has its line (the names from the short list
    // clap prints under Commands).
    let commands = help
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_default();
    let ops: Vec<&str> = commands
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&op| op != "help")
        .collect();
    assert!(ops.len() >= 15, "{help}");
    for op in ops {
        let prefix = format!("  {op} ");
        assert!(help.lines().any(|l| l.starts_with(&prefix)), "{op}: {help}");
    }
    assert!(
        help.contains("Every operation also takes --backend"),
        "{help}"
    );
}

#[test]
fn verify_of_an_unavailable_backend_prints_only_the_error() {
    let (info, _) = ok(&["info", "--json"]);
    let v: Value = serde_json::from_str(&info).unwrap();
    let list = v["backends"].as_array().unwrap();
    let Some(missing) = list.iter().find(|b| b["available"] == false) else {
        return; // every backend runs here
    };
    let name = missing["name"].as_str().unwrap();
    let out = ndgpu(&["verify", "--backends", name]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    fails(&["verify", "--backends", name], 1, name);
    // info: the available backends first, and what auto picks.
    let available: Vec<bool> = list.iter().map(|b| b["available"] == true).collect();
    assert!(available.windows(2).all(|w| w[0] >= w[1]), "{available:?}");
    let (text, _) = ok(&["info"]);
    let auto = v["auto"].as_str().unwrap();
    assert!(text.starts_with(&format!("auto picks: {auto} ")), "{text}");
}

#[test]
fn transpose_of_a_vector_is_the_vector() {
    let d = Dir::new();
    let v = d.put("v.npy", &array![1.0f64, 2.0, 3.0]);
    let o = d.out("o.npy");
    ok(&run_cpu(&["transpose", &v, "-o", &o]));
    let r: Array1<f64> = read_npy(&o).unwrap();
    assert_eq!(r, array![1.0, 2.0, 3.0]);
}

#[test]
fn mean_whole_and_per_axis_in_both_dtypes() {
    let d = Dir::new();
    let m = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64 * 0.37 - 1.0);
    let o = d.out("o.npy");
    for dtype in ["f32", "f64"] {
        let a = if dtype == "f32" {
            d.put("a32.npy", &m.mapv(|x| x as f32))
        } else {
            d.put("a64.npy", &m)
        };
        let tol = if dtype == "f32" { 1e-5 } else { 1e-12 };
        let v = json(&run_cpu(&["reduce", &a, "--op", "mean"]));
        assert_eq!(v["dtype"], dtype);
        assert_eq!(v["reduction"], "mean");
        let want = m.sum() / m.len() as f64;
        let got = v["result"].as_f64().unwrap();
        assert!((got - want).abs() <= tol, "{dtype}: {got} vs {want}");
        for axis in [0usize, 1] {
            let ax = axis.to_string();
            ok(&run_cpu(&[
                "reduce", &a, "--op", "mean", "--axis", &ax, "-o", &o,
            ]));
            let got: Array1<f64> = if dtype == "f32" {
                read_npy::<_, Array1<f32>>(&o).unwrap().mapv(f64::from)
            } else {
                read_npy(&o).unwrap()
            };
            let want = m.mean_axis(Axis(axis)).unwrap();
            assert_eq!(got.len(), want.len());
            assert!(
                got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= tol),
                "{dtype} axis {axis}: {got} vs {want}"
            );
        }
    }
    // A vector: its one axis is the whole.
    let v = d.put("v.npy", &array![1.0f64, 2.0, 6.0]);
    let r = json(&run_cpu(&["reduce", &v, "--op", "mean", "--axis", "0"]));
    assert_eq!(r["result"].as_f64(), Some(3.0));
}

#[test]
fn json_prints_f32_with_f32_digits() {
    let d = Dir::new();
    let v = d.put("v.npy", &array![0.1f32, 0.2]);
    let r = json(&run_cpu(&["transpose", &v]));
    assert_eq!(r["output"], serde_json::json!([0.1, 0.2]));
    let r = json(&run_cpu(&["reduce", &v, "--op", "max"]));
    assert_eq!(r["result"], serde_json::json!(0.2));
    let (text, _) = ok(&[&run_cpu(&["reduce", &v, "--op", "min"])[..], &["--json"]].concat());
    assert!(text.contains("\"result\":0.1,"), "{text}");
    // f64 keeps its own shortest digits.
    let w = d.put("w.npy", &array![0.1f64 + 0.2]);
    let r = json(&run_cpu(&["transpose", &w]));
    assert_eq!(r["output"][0].as_f64(), Some(0.1 + 0.2));
}

#[test]
fn random_makes_inputs_of_the_shape_dtype_and_kind_asked_for() {
    let d = Dir::new();
    let a = d.out("a.npy");
    let (out, _) = ok(&["random", "4x3", "-o", &a, "--seed", "7"]);
    assert!(out.starts_with("wrote uniform (4, 3) f64"), "{out}");
    let m: Array2<f64> = read_npy(&a).unwrap();
    assert_eq!(m.dim(), (4, 3));
    assert!(m.iter().all(|&x| (0.0..1.0).contains(&x)), "{m}");
    // Deterministic for a seed, different for another.
    let b = d.out("b.npy");
    ok(&["random", "4x3", "-o", &b, "--seed", "7"]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    ok(&["random", "4x3", "-o", &b, "--seed", "8"]);
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // A vector, f32, normal.
    ok(&[
        "random", "5", "--kind", "normal", "--dtype", "f32", "-o", &b,
    ]);
    let v: Array1<f32> = read_npy(&b).unwrap();
    assert_eq!(v.len(), 5);
    assert!(v.iter().all(|x| x.is_finite()));
    // spd: cholesky and solve --assume-a pos take it, in both dtypes.
    for dtype in ["f32", "f64"] {
        let s = d.out(&format!("spd_{dtype}.npy"));
        ok(&["random", "6", "--kind", "spd", "--dtype", dtype, "-o", &s]);
        ok(&run_cpu(&["cholesky", &s]));
        let rhs = d.out("rhs.npy");
        ok(&["random", "6", "-o", &rhs, "--dtype", dtype]);
        ok(&run_cpu(&["solve", &s, &rhs, "--assume-a", "pos"]));
    }
    let s: Array2<f64> = read_npy(d.path("spd_f64.npy")).unwrap();
    assert_eq!(s, s.t());
    // blobs: k-means takes them.
    let x = d.out("x.npy");
    ok(&[
        "random",
        "60x2",
        "--kind",
        "blobs",
        "--centers",
        "3",
        "-o",
        &x,
    ]);
    let p: Array2<f64> = read_npy(&x).unwrap();
    assert_eq!(p.dim(), (60, 2));
    ok(&run_cpu(&["kmeans", &x, "--k", "3"]));
    // Shapes it cannot make.
    fails(&["random", "2x3", "--kind", "spd", "-o", &b], 2, "square");
    fails(
        &["random", "5", "--kind", "blobs", "-o", &b],
        2,
        "ROWSxCOLS",
    );
    fails(&["random", "2x3x4", "-o", &b], 2, "at most 2 dimensions");
    fails(&["random", "ax3", "-o", &b], 2, "whole numbers");
}
