//! `ndgpu run kmeans` as a scikit-learn user spells it: `--n-clusters` and
//! `--random-state`, `tol` on the centroid shift, the labels-change rule as
//! `--change-tol`, and a warning (exit 0) when a fit leaves clusters empty.

mod common;

use std::process::Output;

use common::{ndgpu, two_clusters, Dir};
use ndarray::array;
use serde_json::Value;

/// `ndgpu run kmeans <args> --backend cpu`.
fn kmeans(args: &[&str]) -> Output {
    let mut all = vec!["run", "kmeans"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--backend", "cpu"]);
    ndgpu(&all)
}

/// Its stderr, as text.
fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `kmeans <args> --json`, expected to succeed: the summary and the stderr.
fn json(args: &[&str]) -> (Value, String) {
    let mut all = args.to_vec();
    all.push("--json");
    let out = kmeans(&all);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    let v = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    (v, err)
}

/// Expects the parser's refusal: exit 2, `needle` on stderr, no panic.
fn refused(args: &[&str], needle: &str) {
    let out = kmeans(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {needle:?} not in {err}");
}

/// The clusters `labels` (an N-vector file) gives no point, of `0..k`.
fn unused(labels: &str, k: usize) -> Vec<usize> {
    let l: ndarray::Array1<i64> = ndarray_npy::read_npy(labels).unwrap();
    (0..k)
        .filter(|&j| !l.iter().any(|&v| v == j as i64))
        .collect()
}

#[test]
fn n_clusters_and_random_state_are_k_and_seed() {
    let d = Dir::new();
    let x = d.put("x.npy", &two_clusters());
    let (a, _) = json(&[
        &x,
        "--k",
        "2",
        "--seed",
        "7",
        "--centroids",
        &d.out("a.npy"),
    ]);
    let (b, _) = json(&[
        &x,
        "--n-clusters",
        "2",
        "--random-state",
        "7",
        "--centroids",
        &d.out("b.npy"),
    ]);
    assert_eq!((&b["k"], &b["seed"]), (&Value::from(2), &Value::from(7)));
    assert_eq!(a["cluster_sizes"], b["cluster_sizes"]);
    assert_eq!(a["inertia"], b["inertia"]);
    assert_eq!(d.read("a.npy"), d.read("b.npy"));
    // A different seed is passed on as well.
    let (c, _) = json(&[&x, "--n-clusters", "2", "--random-state", "8"]);
    assert_eq!(c["seed"], 8);
}

#[test]
fn defaults_are_scikit_learns_and_the_options_reach_the_fit() {
    let d = Dir::new();
    let x = d.put("x.npy", &two_clusters());
    let (v, err) = json(&[&x, "--k", "2"]);
    assert_eq!(v["tol"], 1e-4);
    assert_eq!(v["change_tol"], 0.0);
    assert_eq!(v["max_iter"], 300);
    assert_eq!(v["empty_clusters"], serde_json::json!([]));
    assert!(!err.contains("warning"), "{err}");
    // change-tol 1 stops after the first assignment, whatever else is set.
    let (v, _) = json(&[&x, "--k", "2", "--change-tol", "1", "--tol", "0"]);
    assert_eq!(
        (v["iterations"].as_u64(), v["converged"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(v["change_tol"], 1.0);
    // A tol every update meets stops after the first update and one more assignment.
    let (v, _) = json(&[&x, "--k", "2", "--tol", "1e9"]);
    assert_eq!(
        (v["iterations"].as_u64(), v["converged"].as_bool()),
        (Some(2), Some(true))
    );
    let (v, _) = json(&[&x, "--k", "2", "--max-iter", "1"]);
    assert_eq!(v["iterations"], 1);
}

#[test]
fn fewer_distinct_points_than_k_warn_and_succeed() {
    let d = Dir::new();
    // Two distinct points, twice each: k = 3 leaves one cluster empty.
    let x = d.put(
        "x.npy",
        &array![[0.0, 1.0], [2.0, 3.0], [0.0, 1.0], [2.0, 3.0]],
    );
    for init in ["k-means++", "random"] {
        let labels = d.out(&format!("labels-{init}.npy"));
        let (v, err) = json(&[&x, "--n-clusters", "3", "--init", init, "-o", &labels]);
        let empty = unused(&labels, 3);
        assert_eq!(empty.len(), 1, "{init}: {v}");
        assert_eq!(v["empty_clusters"], serde_json::json!(empty), "{init}: {v}");
        let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
        assert_eq!(warnings.len(), 1, "{init}: {err}");
        let w = warnings[0];
        for needle in [
            "2 distinct clusters found, fewer than k = 3".to_string(),
            format!("cluster {} is empty", empty[0]),
            "repeating cluster".to_string(),
            "duplicate points".to_string(),
        ] {
            assert!(w.contains(&needle), "{init}: {needle:?} not in {w}");
        }
    }
    // The text summary warns the same way, with exit 0.
    let out = kmeans(&[&x, "--k", "3"]);
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert_eq!(err.matches("warning: ").count(), 1, "{err}");
}

#[test]
fn out_of_range_tolerances_and_the_old_option_are_refused() {
    let d = Dir::new();
    let x = d.put("x.npy", &two_clusters());
    refused(&[&x, "--k", "2", "--shift-tol", "0.1"], "--shift-tol");
    refused(&[&x, "--k", "2", "--tol=-1"], "--tol");
    refused(&[&x, "--k", "2", "--tol", "nan"], "--tol");
    refused(&[&x, "--k", "2", "--tol", "inf"], "--tol");
    refused(&[&x, "--k", "2", "--change-tol", "1.5"], "--change-tol");
    refused(&[&x, "--k", "2", "--change-tol=-0.1"], "--change-tol");
    refused(&[&x, "--n-clusters", "0"], "--k");
}

#[test]
fn help_speaks_scikit_learn() {
    let out = ndgpu(&["run", "kmeans", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "n_clusters",
        "random_state",
        "scikit-learn's tol",
        "--change-tol",
        "strict convergence",
        "300",
        "warning",
    ] {
        assert!(help.contains(needle), "{needle:?} not in {help}");
    }
    assert!(!help.contains("--shift-tol"), "{help}");
}
