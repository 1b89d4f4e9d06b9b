//! `ndgpu shootout`: the backend comparison of ndgpu-shootout, from the command line.

use std::io::Write;

use ndgpu::DType;
use ndgpu_shootout::{Op, ShootoutOptions, Size, Status, Suite};

use crate::args::{DTypeArg, ShootoutArgs, SuiteArg};
use crate::error::{Failure, Result};

pub fn shootout(args: &ShootoutArgs) -> Result<()> {
    let ops = args
        .ops
        .iter()
        .map(|s| s.parse::<Op>().map_err(Failure::usage))
        .collect::<Result<Vec<_>>>()?;
    if args.reps == 0 {
        return Err(Failure::usage("--reps must be at least 1"));
    }
    // A size is a ladder's n or a shape's dimensions (`1048576x32`), as `Size` parses
    // them, whether the argument holds numbers or text.
    let sizes = args
        .sizes
        .as_ref()
        .map(|v| {
            v.iter()
                .map(|s| s.to_string().parse::<Size>().map_err(Failure::usage))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    if sizes.iter().flatten().any(|s| !s.positive()) {
        return Err(Failure::usage("--sizes must be positive"));
    }
    let suite = match args.suite {
        SuiteArg::Ladders => Suite::Ladders,
        SuiteArg::Shapes => Suite::Shapes,
    };
    if suite == Suite::Shapes {
        if args.sizes.is_some() {
            return Err(Failure::usage(
                "--sizes is for the ladders: --suite shapes runs its own shapes",
            ));
        }
        let of_suite = suite.ops();
        if let Some(op) = ops.iter().find(|op| !of_suite.contains(op)) {
            let names: Vec<&str> = of_suite.iter().map(|o| o.name()).collect();
            return Err(Failure::usage(format!(
                "--suite shapes has no {op} cases (its ops: {})",
                names.join(", ")
            )));
        }
    }
    let opts = ShootoutOptions {
        ops,
        suite,
        sizes,
        backends: args.backends.clone(),
        variants: args.variants.clone(),
        out_dir: args.out.clone(),
        quick: args.quick,
        reps: args.reps,
        progress: !args.quiet,
        transfers: args.transfers,
        peer: !args.no_peer,
    };
    let dtype = match args.dtype {
        DTypeArg::F32 => DType::F32,
        DTypeArg::F64 => DType::F64,
    };
    let rows =
        ndgpu_shootout::run_dtype(&opts, dtype).map_err(|e| Failure::failed(e.to_string()))?;
    ndgpu_shootout::write_reports(&rows, &args.out)
        .map_err(|e| Failure::failed(format!("writing reports to {}: {e}", args.out.display())))?;
    let failed = rows
        .iter()
        .filter(|r| matches!(r.status, Status::Failed(_)))
        .count();
    // Not eprintln!, which panics when stderr cannot be written.
    let _ = writeln!(
        std::io::stderr().lock(),
        "reports written to {}",
        args.out.display()
    );
    if failed > 0 {
        return Err(Failure::failed(format!(
            "{failed} variant(s) failed their correctness check before timing"
        )));
    }
    Ok(())
}
