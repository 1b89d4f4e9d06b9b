//! The `ndgpu` command-line tool as a library: [`main_with`] runs one command line and
//! returns its exit code, so that the binary, the tests and the fuzz targets (in
//! `fuzz/`) all go through the same path. The modules are the tool's internals, not a
//! stable API; [`npy`] is public for the fuzz targets.
//!
//! Every failure ends as one `error: ` line on stderr and exit code 2 (usage and
//! input errors) or 1 (computation failures, verification mismatches).

mod args;
pub mod error;
mod info;
pub mod npy;
mod ops;
mod report;
mod run;
mod shootout;
mod verify;

use std::ffi::OsString;

pub use ndgpu::DType;

use clap::error::ErrorKind;
use clap::Parser;

use args::{Cli, Command};
use error::{report, Failure};

/// Runs one command line (`args[0]` is the program's name) and returns its exit code:
/// 0, 1 (a computation failed) or 2 (bad usage or input). Output goes to stdout and
/// stderr as the binary's would.
pub fn main_with<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    let result = match cli.command {
        Command::Info { json } => {
            info::info(json);
            Ok(())
        }
        Command::Run { op } => run::run(op),
        Command::Verify(v) => verify::verify(&v),
        Command::Shootout(s) => shootout::shootout(&s),
    };
    match result {
        Ok(()) => 0,
        Err(f) => {
            report(&f);
            f.code
        }
    }
}

/// Help and version go out as clap writes them; a usage error becomes one line
/// (clap's message and its hints, without the usage block).
fn clap_exit(e: clap::Error) -> u8 {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            u8::try_from(e.exit_code()).unwrap_or(error::USAGE)
        }
        _ => {
            let text = e.render().to_string();
            let message: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty())
                .collect();
            let message = message.join(" ");
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            report(&Failure::usage(format!("{message} (see --help)")));
            error::USAGE
        }
    }
}
