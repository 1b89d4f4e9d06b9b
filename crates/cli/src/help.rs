//! The command tree with the help text that clap cannot derive: `ndgpu run --help`
//! lists every operation with its arguments and options, generated from the tree itself
//! so that it cannot drift from what the parser accepts.

use clap::{Arg, ArgAction, Command, CommandFactory};

use crate::args::Cli;
use crate::error::EXIT_CODES;

/// The options every operation of `run` takes (the `Common` group), listed once.
const COMMON: [&str; 5] = ["backend", "dtype", "variant", "precision", "json"];

/// `ndgpu`'s command tree, `run`'s help with the list of operations.
pub fn command() -> Command {
    let cmd = Cli::command();
    let ops = run_ops(&cmd);
    cmd.mut_subcommand("run", |run| run.after_help(format!("{ops}\n{EXIT_CODES}")))
}

/// Every operation of `run` with its usage: arguments, then options, `[...]` around
/// what may be left out.
fn run_ops(cli: &Command) -> String {
    let Some(run) = cli.find_subcommand("run") else {
        return String::new();
    };
    let mut text = String::from(
        "Operations, with their arguments and options (`ndgpu run OP --help` says what \
         each does):\n",
    );
    for op in run.get_subcommands() {
        let words: Vec<String> = op
            .get_arguments()
            .filter(|a| !a.is_hide_set() && !COMMON.contains(&a.get_id().as_str()))
            .filter(|a| !matches!(a.get_action(), ArgAction::Help | ArgAction::Version))
            .map(usage_word)
            .collect();
        text.push_str(&format!("  {} {}\n", op.get_name(), words.join(" ")));
    }
    text.push_str(
        "Every operation also takes --backend, --dtype, --variant, --precision and \
         --json.\n",
    );
    text
}

/// One argument as a usage line shows it: `A`, `[C]`, `--op <sum|sumsq|...>` (the
/// choices of an option that has a few), `[--trans-a]`, `[-o <PATH>]`.
fn usage_word(a: &Arg) -> String {
    let choices: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    let value = match a.get_value_names().and_then(|v| v.first()) {
        _ if !choices.is_empty() => choices.join("|"),
        Some(v) => v.to_string(),
        None => a.get_id().as_str().to_uppercase(),
    };
    let word = if a.is_positional() {
        value
    } else {
        let flag = match (a.get_short(), a.get_long()) {
            (Some(s), _) => format!("-{s}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => a.get_id().to_string(),
        };
        if a.get_action().takes_values() {
            format!("{flag} <{value}>")
        } else {
            flag
        }
    };
    if a.is_required_set() {
        word
    } else {
        format!("[{word}]")
    }
}
