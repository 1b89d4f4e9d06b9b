//! What the integration tests share: running the built binary, the check of a failure,
//! and a temporary folder of `.npy` files.
// Each test target uses its own part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ndarray::{array, Array2};
use ndarray_npy::{read_npy, write_npy};

pub fn ndgpu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndgpu"))
        .args(args)
        .env_remove("NDGPU_BACKEND")
        .output()
        .expect("the binary runs")
}

/// `ndgpu run <args> --backend <backend> --json`, expected to succeed: its summary.
pub fn run_json(backend: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--backend", backend, "--json"]);
    let out = ndgpu(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{all:?} failed: {stderr}");
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// Expects exit code `code` and exactly one stderr line, `error: ...` containing
/// `needle`, with no panic.
pub fn fails(args: &[&str], code: i32, needle: &str) {
    let out = ndgpu(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: not one line: {stderr}");
    assert!(lines[0].starts_with("error: "), "{args:?}: {stderr}");
    assert!(
        lines[0].contains(needle),
        "{args:?}: {needle:?} not in {stderr}"
    );
}

/// A temporary folder for a test's inputs and outputs.
pub struct Dir(tempfile::TempDir);

impl Dir {
    pub fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    /// Writes an array and returns its path as a string.
    pub fn put<A, D>(&self, name: &str, a: &ndarray::Array<A, D>) -> String
    where
        A: ndarray_npy::WritableElement,
        D: ndarray::Dimension,
    {
        let p = self.path(name);
        write_npy(&p, a).unwrap();
        s(&p)
    }
    /// The path of `name` as a string.
    pub fn out(&self, name: &str) -> String {
        s(&self.path(name))
    }
    /// Reads the f64 matrix `name`.
    pub fn read(&self, name: &str) -> Array2<f64> {
        read_npy(self.path(name)).unwrap()
    }
}

pub fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Same shape, and every element within `tol`.
pub fn close(a: &Array2<f64>, b: &Array2<f64>, tol: f64) -> bool {
    a.dim() == b.dim() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

/// Two obvious clusters: four points near (0, 0), four near (10, 10).
pub fn two_clusters() -> Array2<f64> {
    array![
        [0.0, 0.0],
        [0.0, 1.0],
        [1.0, 0.0],
        [1.0, 1.0],
        [10.0, 10.0],
        [10.0, 11.0],
        [11.0, 10.0],
        [11.0, 11.0]
    ]
}
