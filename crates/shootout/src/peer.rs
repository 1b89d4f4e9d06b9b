//! The peers: the same ops, shapes and dtype timed through PyTorch on the same GPU, or
//! through NumPy on the host, by `crates/shootout/peer/peer.py` and the factorizations'
//! `peer_linalg.py` and the spectra's `peer_spectra.py` beside it (embedded here, written
//! to a temporary folder and run with
//! `python3`, or the Python that `NDGPU_PYTHON` names), measured the shootout's way.
//! Where Python or the library is missing, the shootout goes on without it and says so:
//! on stderr, and in its report, where a [`missing`](Peer::missing) row per op stands
//! for the column that is not there, with the reason and how to get it.

use std::process::Command;

use ndgpu_core::DType;

use crate::cases::Op;
use crate::row::{Row, Status, PEERS};
use crate::shape::Shape;
use crate::timing::Stats;

/// The environment variable naming the Python that runs the peers (default `python3`).
pub const PYTHON_ENV: &str = "NDGPU_PYTHON";

/// The variant of a peer's row that stands for a column that is not there: the peer
/// could not run here (its reason says why, and how to get it).
pub const MISSING: &str = "missing";

/// The Python that runs the peers: `NDGPU_PYTHON` if set and not empty, else `python3`.
pub fn python() -> String {
    std::env::var(PYTHON_ENV)
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "python3".to_string())
}

/// Whether `row` stands for a peer that could not run ([`Peer::missing`]).
pub fn is_missing(row: &Row) -> bool {
    PEERS.contains(&row.backend.as_str())
        && row.variant == MISSING
        && matches!(row.status, Status::Skipped(_))
}

/// A library the shootout compares with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// PyTorch on the GPU, beside the GPU backends.
    Torch,
    /// NumPy (SciPy for the chain's solves, LU and the triangular solve) on the host,
    /// beside the host backends.
    Numpy,
}

impl Peer {
    /// The backend name of its rows, and the script's `--lib`.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Torch => "torch",
            Peer::Numpy => "numpy",
        }
    }

    /// Its name as its users write it.
    pub fn title(self) -> &'static str {
        match self {
            Peer::Torch => "PyTorch",
            Peer::Numpy => "NumPy",
        }
    }

    /// How to get it where [`Peer::probe`] says it is missing.
    pub fn hint(self) -> String {
        let (install, it) = match self {
            Peer::Torch => ("a CUDA build of PyTorch (`pip install torch`)", "it is"),
            Peer::Numpy => (
                "NumPy and SciPy (`pip install numpy scipy`; SciPy times the LU, the \
                 triangular solve and the chain's solves)",
                "they are",
            ),
        };
        format!(
            "install {install} for `{}`, or set {PYTHON_ENV} to a Python where {it} \
             installed, and run the shootout again",
            python()
        )
    }

    /// The row that stands, in `op`'s table, for this peer's column when it could not
    /// run here: skipped at `shape` (the first of the op's shapes), `why` its reason.
    pub fn missing(self, op: Op, shape: Shape, dtype: DType, device: &str, why: &str) -> Row {
        Row::new(op, self.name(), MISSING, true, dtype, shape, false, device).skipped(why)
    }

    /// Its version if the peers' Python can use it here (torch: seeing a CUDA device),
    /// else why not.
    pub fn probe(self) -> Result<String, String> {
        let code = match self {
            Peer::Torch => {
                "import torch; assert torch.cuda.is_available(), 'no CUDA device'; \
                 print(torch.__version__)"
            }
            Peer::Numpy => "import numpy; print(numpy.__version__)",
        };
        let python = python();
        let out = Command::new(&python)
            .args(["-c", code])
            .output()
            .map_err(|e| format!("`{python}` could not be run: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err.lines().last().unwrap_or("the import failed");
            return Err(format!("`{python}` cannot use {}: {last}", self.name()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}

/// The peer script, as committed.
const SCRIPT: &str = include_str!("../peer/peer.py");
/// The module of its factorizations and solves, which it imports from its folder.
const LINALG: &str = include_str!("../peer/peer_linalg.py");
/// The module of its spectra (eigh, svd, pca), which it imports from its folder.
const SPECTRA: &str = include_str!("../peer/peer_spectra.py");

/// What the peer is asked to do.
pub struct Ask<'a> {
    /// Which peer.
    pub peer: Peer,
    /// The op.
    pub op: Op,
    /// Its shapes (passed as [`Shape::spec`]s, which the script's rows give back).
    pub shapes: &'a [Shape],
    /// The element type.
    pub dtype: DType,
    /// Most timed samples per shape.
    pub reps: usize,
    /// Seconds of timed runs per shape.
    pub budget_s: f64,
    /// A shape predicted slower than this per run is skipped.
    pub max_run_s: f64,
}

/// Runs the peer on `ask` and returns its rows (variant: the library's version, then
/// the way it ran where the op runs several ways, as PCA does), or why it could not run
/// at all.
pub fn run(ask: &Ask<'_>, version: &str) -> Result<Vec<Row>, String> {
    // One folder per call: calls from several threads must not remove each other's.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ndgpu-peer-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let script = dir.join("peer.py");
    std::fs::write(&script, SCRIPT).map_err(|e| format!("writing the peer script: {e}"))?;
    for (name, text) in [("peer_linalg.py", LINALG), ("peer_spectra.py", SPECTRA)] {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("writing the peer script: {e}"))?;
    }
    let shapes: Vec<String> = ask.shapes.iter().map(|s| s.spec()).collect();
    let out = Command::new(python())
        .arg(&script)
        .args(["--lib", ask.peer.name()])
        .args(["--op", ask.op.name(), "--shapes", &shapes.join(",")])
        .args(["--dtype", ask.dtype.name()])
        .args(["--reps", &ask.reps.to_string()])
        .args(["--budget", &ask.budget_s.to_string()])
        .args(["--max-run-s", &ask.max_run_s.to_string()])
        .output()
        .map_err(|e| format!("running the peer: {e}"))?;
    let _ = std::fs::remove_dir_all(&dir);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "the peer failed: {}",
            err.lines().last().unwrap_or("no message")
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| row_of(ask, version, l))
        .collect()
}

/// One JSON line of the peer as a row.
fn row_of(ask: &Ask<'_>, version: &str, line: &str) -> Result<Row, String> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("the peer printed {line:?}: {e}"))?;
    let num = |k: &str| v.get(k).and_then(|x| x.as_f64());
    let spec = v.get("shape").and_then(|s| s.as_str());
    let shape = ask
        .shapes
        .iter()
        .find(|s| Some(s.spec().as_str()) == spec)
        .copied()
        .ok_or_else(|| format!("the peer printed {line:?}: no shape asked for"))?;
    let device = v.get("device").and_then(|d| d.as_str()).unwrap_or("GPU");
    let variant = match v.get("variant").and_then(|w| w.as_str()) {
        Some(way) => format!("{version} {way}"),
        None => version.to_string(),
    };
    let row = Row::new(
        ask.op,
        ask.peer.name(),
        &variant,
        true,
        ask.dtype,
        shape,
        false,
        device,
    );
    let reason = v
        .get("reason")
        .and_then(|r| r.as_str())
        .unwrap_or("")
        .to_string();
    Ok(match v.get("status").and_then(|s| s.as_str()) {
        Some("ok") => {
            let stats = Stats {
                median: num("median_s").unwrap_or(f64::NAN),
                min: num("min_s").unwrap_or(f64::NAN),
                max: num("max_s").unwrap_or(f64::NAN),
                reps: num("reps").unwrap_or(0.0) as usize,
            };
            let batch = num("batch").unwrap_or(1.0) as usize;
            let work = ask.op.work(shape, ask.dtype.size());
            row.timed(stats, batch, work)
        }
        Some("skipped") => row.skipped(reason),
        _ => row.failed(reason),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::Status;

    fn ask() -> Ask<'static> {
        Ask {
            peer: Peer::Torch,
            op: Op::Chain,
            shapes: &[Shape::Square(64)],
            dtype: DType::F32,
            reps: 3,
            budget_s: 0.1,
            max_run_s: 1.0,
        }
    }

    #[test]
    fn peer_lines_become_rows() {
        let ok = r#"{"op": "chain", "shape": "64", "status": "ok", "median_s": 0.002, "min_s": 0.0019, "max_s": 0.003, "reps": 5, "batch": 1, "device": "NVIDIA H200", "torch": "2.11"}"#;
        let r = row_of(&ask(), "2.11", ok).unwrap();
        assert_eq!((r.backend.as_str(), r.variant.as_str()), ("torch", "2.11"));
        assert_eq!((r.median_s, r.reps, r.size()), (0.002, 5, Some(64)));
        assert!(r.rate > 0.0 && r.device == "NVIDIA H200");
        let bad =
            r#"{"op": "chain", "shape": "64", "status": "failed", "reason": "wrong result: x"}"#;
        let r = row_of(&ask(), "2.11", bad).unwrap();
        assert_eq!(r.status, Status::Failed("wrong result: x".into()));
        assert!(row_of(&ask(), "2.11", "not json").is_err());
        let other = r#"{"op": "chain", "shape": "128", "status": "ok"}"#;
        assert!(row_of(&ask(), "2.11", other).is_err());
    }

    #[test]
    fn a_way_of_the_peer_is_part_of_its_variant() {
        let shapes = [Shape::rect(1 << 20, 32)];
        let ask = Ask {
            op: Op::Pca,
            shapes: &shapes,
            ..ask()
        };
        let line = r#"{"shape": "1048576x32", "variant": "pca_lowrank (randomized)", "status": "ok", "median_s": 1e-3}"#;
        let r = row_of(&ask, "2.11", line).unwrap();
        assert_eq!(r.label(), "torch/2.11 pca_lowrank (randomized)");
        let plain = r#"{"shape": "1048576x32", "status": "ok", "median_s": 1e-3}"#;
        assert_eq!(row_of(&ask, "2.11", plain).unwrap().label(), "torch/2.11");
    }

    #[test]
    fn peer_rows_keep_their_shapes() {
        let shapes = [Shape::gemm(1 << 20, 32, 1024), Shape::gemm(64, 8192, 64)];
        let ask = Ask {
            op: Op::Matmul,
            shapes: &shapes,
            ..ask()
        };
        let line = r#"{"shape": "64x8192x64", "status": "ok", "median_s": 1e-4, "min_s": 1e-4, "max_s": 1e-4, "reps": 3, "batch": 4}"#;
        let r = row_of(&ask, "2.11", line).unwrap();
        assert_eq!((r.op, r.shape), (Op::Matmul, shapes[1]));
        // 2·64·64·8192 FLOPs in 0.1 ms.
        assert!((r.rate - 2.0 * 64.0 * 64.0 * 8192.0 / 1e-4 * 1e-9).abs() < 1e-9);
        let axis = [Shape::matrix(16, 1 << 24, Some(1))];
        let ask = Ask {
            op: Op::SumSq,
            shapes: &axis,
            ..ask
        };
        let line = r#"{"shape": "16x16777216@1", "status": "skipped", "reason": "too slow"}"#;
        assert_eq!(row_of(&ask, "2.11", line).unwrap().shape, axis[0]);
    }

    #[test]
    fn a_missing_peer_is_a_row_that_says_why_and_how_to_get_it() {
        let why = format!(
            "`python3` cannot use numpy: No module named 'numpy'; {}",
            Peer::Numpy.hint()
        );
        let r = Peer::Numpy.missing(Op::Matmul, Shape::Square(64), DType::F32, "host CPU", &why);
        assert!(is_missing(&r), "{r:?}");
        assert_eq!(r.label(), "numpy/missing");
        let reason = r.status.reason().unwrap();
        assert!(
            reason.contains("pip install numpy") && reason.contains(PYTHON_ENV),
            "{reason}"
        );
        // A peer's measured row, and a backend's skipped one, are not missing peers.
        let timed = row_of(
            &ask(),
            "2.11",
            r#"{"shape": "64", "status": "ok", "median_s": 1e-3}"#,
        );
        assert!(!is_missing(&timed.unwrap()));
        let skipped = Row::new(
            Op::Matmul,
            "cpu",
            MISSING,
            true,
            DType::F32,
            Shape::Square(64),
            false,
            "host CPU",
        )
        .skipped("x");
        assert!(!is_missing(&skipped));
    }

    #[test]
    fn the_script_is_the_committed_one() {
        assert!(SCRIPT.starts_with("#!/usr/bin/env python3"));
        assert!(SCRIPT.contains("import peer_linalg"));
        for op in Op::ALL {
            assert!(
                SCRIPT.contains(&format!("\"{}\"", op.name())),
                "{op} missing"
            );
        }
        for op in [Op::Lu, Op::LuSolve, Op::Qr, Op::Lstsq, Op::Trsm] {
            assert!(LINALG.contains(&format!("op == \"{}\"", op.name())), "{op}");
        }
        assert!(SCRIPT.contains("import peer_spectra"));
        for op in [Op::Eigh, Op::Svd, Op::Pca] {
            assert!(SPECTRA.contains(&format!("\"{}\"", op.name())), "{op}");
        }
        for peer in ["torch.linalg.eigh", "torch.linalg.svd", "torch.pca_lowrank"] {
            assert!(SPECTRA.contains(peer), "{peer}");
        }
        for peer in [
            "np.linalg.eigh",
            "np.linalg.svd",
            "PCA(n_components=components(x))",
        ] {
            assert!(SPECTRA.contains(peer), "{peer}");
        }
    }
}
