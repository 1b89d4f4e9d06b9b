//! The `ndgpu` command-line tool as a library: [`main_with`] runs one command line and
//! returns its exit code, so that the binary, the tests and the fuzz targets (in
//! `fuzz/`) all go through the same path. The modules are the tool's internals, not a
//! stable API; [`npy`] is public for the fuzz targets.
//!
//! Every failure ends as one `error: ` line on stderr and exit code 1 (the operation
//! refused its input, the backend failed, a verification mismatch) or 2 (usage and I/O
//! errors); [`error::EXIT_CODES`] states them as `--help` does.

mod args;
mod check;
pub mod error;
mod help;
mod info;
mod linalg;
pub mod npy;
mod ops;
mod random;
mod report;
mod run;
mod shootout;
mod spectra;
mod verify;

use std::ffi::OsString;

pub use ndgpu::DType;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};

use args::{Cli, Command};
use error::{report, Failure};

/// Runs one command line (`args[0]` is the program's name) and returns its exit code:
/// 0, 1 (the operation refused its input) or 2 (bad usage or I/O). Output goes to
/// stdout and stderr as the binary's would.
pub fn main_with<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let parsed = help::command()
        .try_get_matches_from(&args)
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e, &args),
    };
    let result = match cli.command {
        Command::Info {
            variants_md: true, ..
        } => {
            print!("{}", ndgpu::variants_markdown());
            Ok(())
        }
        Command::Info {
            json, plan, dtype, ..
        } => info::info(json, &plan, dtype),
        Command::Run { op } => run::run(op),
        Command::Verify(v) => verify::verify(&v),
        Command::Shootout(s) => shootout::shootout(&s),
        Command::Random(r) => random::random(&r),
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
/// (clap's message and its hints, without the usage block). An operation's name given
/// as the command (`ndgpu matmul A.npy B.npy`) gets the `run` command line it meant.
fn clap_exit(e: clap::Error, args: &[OsString]) -> u8 {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            if let Err(f) = error::stdout_result(e.print()) {
                report(&f);
                return error::USAGE;
            }
            u8::try_from(e.exit_code()).unwrap_or(error::USAGE)
        }
        ErrorKind::InvalidSubcommand if is_op(args.get(1)) => {
            let meant: Vec<String> = args[1..].iter().map(shell_word).collect();
            report(&Failure::usage(format!(
                "unrecognized command '{}'; did you mean `ndgpu run {}`? (see --help)",
                args[1].to_string_lossy(),
                meant.join(" ")
            )));
            error::USAGE
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

/// Whether `word` names an operation of `ndgpu run`.
fn is_op(word: Option<&OsString>) -> bool {
    let Some(word) = word.and_then(|w| w.to_str()) else {
        return false;
    };
    Cli::command()
        .find_subcommand("run")
        .is_some_and(|run| run.find_subcommand(word).is_some())
}

/// An argument as it would be typed in a POSIX shell: as it is when it holds nothing the
/// shell would read, else in single quotes.
fn shell_word(arg: &OsString) -> String {
    let s = arg.to_string_lossy();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || "-_./=+,:@%^".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
