//! `ndgpu`: backend info, every operation on `.npy` files, and conformance checks.
//!
//! Every failure ends as one `error: ` line on stderr and exit code 2 (usage and
//! input errors) or 1 (computation failures, verification mismatches).

mod args;
mod error;
mod info;
mod npy;
mod ops;
mod pydict;
mod run;
mod shootout;
mod verify;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use args::{Cli, Command};
use error::{report, Failure};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            report(&f);
            ExitCode::from(f.code)
        }
    }
}

/// Help and version go out as clap writes them; a usage error becomes one line
/// (clap's message and its hints, without the usage block).
fn clap_exit(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(error::USAGE))
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
            ExitCode::from(error::USAGE)
        }
    }
}
