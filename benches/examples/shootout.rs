//! The shootout without the CLI (which offers it as `ndgpu shootout`):
//!
//! ```sh
//! cargo run --release -p ndgpu-benches --example shootout -- \
//!     [--quick] [--transfers] [--f64] [--ops matmul,sum] [--backends cuda,cublas] \
//!     [--variants tiled,naive] [--sizes 256,512] [--reps 20] [--out shootout]
//! ```

use std::process::ExitCode;

use ndgpu_benches::{run_dtype, write_reports, Op, ShootoutOptions};
use ndgpu_core::DType;

fn list(v: Option<String>) -> Vec<String> {
    v.map(|s| s.split(',').map(str::to_string).collect())
        .unwrap_or_default()
}

fn parse() -> Result<(ShootoutOptions, DType), String> {
    let mut opts = ShootoutOptions::default();
    let mut dtype = DType::F32;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--quick" => opts.quick = true,
            "--transfers" => opts.transfers = true,
            "--f64" => dtype = DType::F64,
            "--ops" => {
                opts.ops = list(Some(value()?))
                    .iter()
                    .map(|s| s.parse::<Op>())
                    .collect::<Result<_, _>>()?
            }
            "--backends" => opts.backends = list(Some(value()?)),
            "--variants" => opts.variants = Some(list(Some(value()?))),
            "--sizes" => {
                let sizes = list(Some(value()?))
                    .iter()
                    .map(|s| s.parse::<usize>().map_err(|e| format!("--sizes {s}: {e}")))
                    .collect::<Result<_, _>>()?;
                opts.sizes = Some(sizes);
            }
            "--reps" => opts.reps = value()?.parse().map_err(|e| format!("--reps: {e}"))?,
            "--out" => opts.out_dir = value()?.into(),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok((opts, dtype))
}

fn main() -> ExitCode {
    let (opts, dtype) = match parse() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("shootout: {e}");
            return ExitCode::from(2);
        }
    };
    let started = std::time::Instant::now();
    let rows = match run_dtype(&opts, dtype) {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("shootout: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = write_reports(&rows, &opts.out_dir) {
        eprintln!(
            "shootout: writing the reports into {}: {e}",
            opts.out_dir.display()
        );
        return ExitCode::FAILURE;
    }
    eprintln!(
        "shootout: {} rows in {:.0} s; reports in {}",
        rows.len(),
        started.elapsed().as_secs_f64(),
        opts.out_dir.display()
    );
    ExitCode::SUCCESS
}
