//! Whole command lines of `ndgpu run` on the CPU backend, with `.npy` inputs that are
//! well formed, damaged, lying about their shape or plain garbage, and options both
//! sensible and odd. Every command must end with exit code 0, 1 or 2: never a panic,
//! an abort, a hang (the sizes are small) or an unbounded allocation. A command that
//! succeeds and writes an output writes a `.npy` file that reads back. Inputs the
//! fuzzer found are kept in fuzz/seeds/cli_run/ and replayed by every run.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use ndgpu_cli::npy;

/// An input file.
#[derive(Arbitrary, Debug)]
enum Input {
    /// A `.npy` file built from these fields, then possibly damaged.
    Npy {
        f64: bool,
        big_endian: bool,
        fortran: bool,
        /// Each dimension is taken modulo 24, so every computation stays small.
        shape: Vec<u8>,
        /// The values, repeated as needed; special values come from the bit patterns.
        values: Vec<u32>,
        /// The shape the header claims instead of the real one.
        lie: Option<Vec<u16>>,
        /// Bytes cut from the end.
        cut: u8,
        /// Bytes appended after the data.
        extra: Vec<u8>,
        /// Bytes overwritten: (offset, value).
        edits: Vec<(u16, u8)>,
    },
    /// Arbitrary bytes.
    Raw(Vec<u8>),
    /// A path where there is no file.
    Missing,
}

/// The reductions `--op` names.
const REDUCE_OPS: [&str; 6] = ["sum", "sumsq", "min", "max", "argmin", "argmax"];

#[derive(Arbitrary, Debug)]
enum Op {
    Matmul {
        trans_a: bool,
        trans_b: bool,
        alpha: i8,
        beta: Option<i8>,
        with_c: bool,
    },
    Gram,
    Transpose,
    Reduce {
        /// Which of [`REDUCE_OPS`], scaled as `arbitrary` picks an enum's variant (so
        /// the saved inputs decode as they did when this was an enum).
        op: u32,
        axis: Option<u8>,
    },
    Dot,
    Cholesky,
    Solve {
        factor: bool,
    },
    Kmeans {
        k: u8,
        seed: u8,
        tol: i8,
        max_iter: u8,
        random_init: bool,
        centroids: bool,
    },
    Predict,
}

/// Options added to every command, sensible or not.
#[derive(Arbitrary, Debug)]
struct Options {
    dtype: Option<bool>,
    variant: Option<String>,
    json: bool,
    output: bool,
    /// Raw extra arguments, to reach clap's own error paths.
    extra: Vec<String>,
}

#[derive(Arbitrary, Debug)]
struct Case {
    op: Op,
    inputs: [Input; 3],
    options: Options,
}

fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("ndgpu-fuzz-cli-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("the scratch folder can be made");
        d
    })
}

/// The bytes of a `.npy` file (format 1.0) with this header and data.
fn npy_bytes(descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let fortran = if fortran { "True" } else { "False" };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}");
    ndgpu_cli::npy::raw_file(&dict, data)
}

fn write_input(input: &Input, path: &Path) {
    let bytes = match input {
        Input::Missing => {
            let _ = std::fs::remove_file(path);
            return;
        }
        Input::Raw(bytes) => bytes.clone(),
        Input::Npy {
            f64,
            big_endian,
            fortran,
            shape,
            values,
            lie,
            cut,
            extra,
            edits,
        } => {
            let shape: Vec<usize> = shape.iter().take(3).map(|&d| usize::from(d % 24)).collect();
            let n: usize = shape.iter().product();
            let mut data = Vec::new();
            for i in 0..n {
                let bits = values
                    .get(i % values.len().max(1))
                    .copied()
                    .unwrap_or(i as u32);
                // Mostly ordinary numbers; the raw bit pattern (NaN, ±Inf, subnormals)
                // when the top bits say so.
                let v = if bits >> 28 == 0xF {
                    f32::from_bits(bits)
                } else {
                    (bits % 2001) as f32 / 100.0 - 10.0
                };
                match (f64, big_endian) {
                    (false, false) => data.extend_from_slice(&v.to_le_bytes()),
                    (false, true) => data.extend_from_slice(&v.to_be_bytes()),
                    (true, false) => data.extend_from_slice(&f64::from(v).to_le_bytes()),
                    (true, true) => data.extend_from_slice(&f64::from(v).to_be_bytes()),
                }
            }
            let descr = format!(
                "{}f{}",
                if *big_endian { '>' } else { '<' },
                if *f64 { 8 } else { 4 }
            );
            let claimed: Vec<usize> = match lie {
                Some(l) => l.iter().take(4).map(|&d| usize::from(d)).collect(),
                None => shape,
            };
            let mut bytes = npy_bytes(&descr, *fortran, &claimed, &data);
            bytes.truncate(bytes.len().saturating_sub(usize::from(*cut)));
            bytes.extend_from_slice(extra);
            for &(at, b) in edits {
                if !bytes.is_empty() {
                    let i = usize::from(at) % bytes.len();
                    bytes[i] = b;
                }
            }
            bytes
        }
    };
    std::fs::write(path, bytes).expect("the scratch file can be written");
}

fn args(case: &Case, files: &[String; 3], out: &Path) -> Vec<String> {
    let mut a: Vec<String> = vec!["ndgpu".into(), "run".into()];
    let [f0, f1, f2] = files;
    let mut push = |s: &str| a.push(s.to_string());
    match &case.op {
        Op::Matmul {
            trans_a,
            trans_b,
            alpha,
            beta,
            with_c,
        } => {
            push("matmul");
            push(f0);
            push(f1);
            if *with_c {
                push(f2);
            }
            if *trans_a {
                push("--trans-a");
            }
            if *trans_b {
                push("--trans-b");
            }
            push(&format!("--alpha={}", f64::from(*alpha) / 4.0));
            if let Some(b) = beta {
                push(&format!("--beta={}", f64::from(*b) / 4.0));
            }
        }
        Op::Gram => {
            push("gram");
            push(f0);
        }
        Op::Transpose => {
            push("transpose");
            push(f0);
        }
        Op::Reduce { op, axis } => {
            push("reduce");
            push(f0);
            let name = REDUCE_OPS[((u64::from(*op) * REDUCE_OPS.len() as u64) >> 32) as usize];
            push(&format!("--op={name}"));
            if let Some(x) = axis {
                push(&format!("--axis={}", x % 3));
            }
        }
        Op::Dot => {
            push("dot");
            push(f0);
            push(f1);
        }
        Op::Cholesky => {
            push("cholesky");
            push(f0);
        }
        Op::Solve { factor } => {
            push("solve");
            push(f0);
            push(f1);
            if *factor {
                push("--factor");
            }
        }
        Op::Kmeans {
            k,
            seed,
            tol,
            max_iter,
            random_init,
            centroids,
        } => {
            push("kmeans");
            push(f0);
            push(&format!("--k={}", k % 30));
            push(&format!("--seed={seed}"));
            push(&format!("--change-tol={}", f64::from(*tol) / 100.0));
            push(&format!("--max-iter={}", max_iter % 20));
            if *random_init {
                push("--init=random");
            }
            if *centroids {
                push(&format!("--centroids={}", out.display()));
            }
        }
        Op::Predict => {
            push("predict");
            push(f0);
            push(f1);
        }
    }
    a.push("--backend=cpu".into());
    let o = &case.options;
    if let Some(f64) = o.dtype {
        a.push(format!("--dtype={}", if f64 { "f64" } else { "f32" }));
    }
    if let Some(v) = &o.variant {
        a.push(format!("--variant={v}"));
    }
    if o.json {
        a.push("--json".into());
    }
    let writes_output = !matches!(case.op, Op::Kmeans { .. });
    if o.output && writes_output {
        a.push(format!("--output={}", out.display()));
    }
    a.extend(o.extra.iter().take(3).cloned());
    a
}

fuzz_target!(|case: Case| {
    let dir = scratch();
    let files: [String; 3] =
        std::array::from_fn(|i| dir.join(format!("in{i}.npy")).display().to_string());
    for (input, path) in case.inputs.iter().zip(&files) {
        write_input(input, Path::new(path));
    }
    // A file of a few bytes can claim a dimension of any length when another is 0,
    // and some results are sized by it alone (the gram of an n×0 matrix is n×n). Up to
    // 4096 such results stay small; from 2⁴⁰ up no machine can hold them, and the tool
    // must refuse them (HostOutOfMemory), which the fuzzer checks. In between, whether
    // the result fits is a question about the machine, not the tool: not run.
    let machine_sized = files.iter().any(|f| {
        npy::header(Path::new(f)).is_ok_and(|h| h.shape.iter().any(|&d| d > 4096 && d < 1 << 40))
    });
    if machine_sized {
        return;
    }
    let out = dir.join("out.npy");
    let _ = std::fs::remove_file(&out);
    let argv = args(&case, &files, &out);
    let code = ndgpu_cli::main_with(&argv);
    assert!(code <= 2, "exit code {code} for {argv:?}");
    if code == 0 && out.exists() {
        assert!(reads_back(&out), "unreadable output of {argv:?}");
    }
});

/// What the tool wrote reads back as a `.npy` file of a dtype it writes: f32 or f64
/// values, or int64 indices (argmin, argmax, k-means labels), of any rank. (The tool's
/// own readers take float matrices and vectors only, so they are no test for an index
/// or a 0-d result: this oracle used them, and the fuzzer found an argmax it refused.)
fn reads_back(path: &Path) -> bool {
    use ndarray::ArrayD;
    use ndarray_npy::read_npy;
    read_npy::<_, ArrayD<f32>>(path).is_ok()
        || read_npy::<_, ArrayD<f64>>(path).is_ok()
        || read_npy::<_, ArrayD<i64>>(path).is_ok()
}
