//! `ndgpu`: backend info, every operation on `.npy` files, and conformance checks.
//! The tool itself lives in the library (`ndgpu_cli::main_with`).

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(ndgpu_cli::main_with(std::env::args_os()))
}
