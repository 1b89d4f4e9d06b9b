//! How a command fails: one line of text and an exit code. Every error the tool can
//! meet is mapped to one of these, so nothing panics on bad input.

use std::fmt;
use std::io::Write;

/// Exit code of usage and input errors (bad file, wrong dtype or shape, unknown name).
pub const USAGE: u8 = 2;
/// Exit code of failures while computing (not positive definite, device faults) and of
/// verification mismatches.
pub const FAILED: u8 = 1;

/// A failed command: what to print after `error: `, and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

pub type Result<T, E = Failure> = std::result::Result<T, E>;

impl Failure {
    /// A usage or input error (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: USAGE,
            message: message.into(),
        }
    }

    /// A computation or verification failure (exit code 1).
    pub fn failed(message: impl Into<String>) -> Self {
        Failure {
            code: FAILED,
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line, whatever the cause carried (NVRTC logs, driver messages).
        let mut first = true;
        for line in self
            .message
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
        {
            if !first {
                f.write_str("; ")?;
            }
            f.write_str(line)?;
            first = false;
        }
        Ok(())
    }
}

impl From<ndgpu::Error> for Failure {
    fn from(e: ndgpu::Error) -> Self {
        use ndgpu::Error as E;
        let code = match e {
            E::ShapeMismatch { .. }
            | E::Empty { .. }
            | E::NotSquare { .. }
            | E::NonFinite { .. }
            | E::InvalidArgument { .. }
            | E::UnknownBackend { .. }
            | E::UnknownVariant { .. } => USAGE,
            // The input was well-formed; the factorization or the machine said no.
            _ => FAILED,
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

/// Writes to stdout. A closed pipe (`ndgpu info | head -1`) ends the output quietly
/// instead of panicking as `print!` would.
pub fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Writes `error: <message>` as one line to stderr.
pub fn report(failure: &Failure) {
    let _ = writeln!(std::io::stderr().lock(), "error: {failure}");
}
