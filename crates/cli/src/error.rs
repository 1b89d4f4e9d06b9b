//! How a command fails: one line of text and an exit code. Every error the tool can
//! meet is mapped to one of these, so nothing panics on bad input.

use std::fmt;
use std::io::Write;

/// Exit code of usage and I/O errors: bad arguments, unknown backend or variant
/// names, a file that cannot be read as a `.npy` of numbers or cannot be written, a
/// failed write to stdout.
pub const USAGE: u8 = 2;
/// Exit code of an operation that refused its input (shapes that do not fit, NaN or
/// Inf, not positive definite, singular, rank deficient, k larger than the number of
/// points), of a backend that cannot run here or failed, and of verification
/// mismatches.
pub const FAILED: u8 = 1;

/// The exit codes as `--help` and the README state them.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  success. NaN and Inf pass through matmul, gram, transpose, reduce and dot as in
     NumPy: a NaN in the input gives NaN in the output, and exit code 0
  1  the operation refused its input: shapes that do not fit; NaN or Inf in the input
     of cholesky, solve, lu, qr, lstsq, det, inv, solve_triangular, kmeans or predict
     (these refuse it, where NumPy would return NaN or raise); a matrix that is not
     positive definite, a singular one (solve, inv, solve_triangular), one without
     full column rank (lstsq); k larger than the number of points. Also: the backend
     cannot run here or failed, or `verify` found a mismatch
  2  usage or I/O: bad arguments, unknown backend or variant names, a file that cannot
     be read as a .npy of numbers (float, integer and bool files are read; complex,
     string and object ones are refused) or cannot be written, a failed or truncated
     write to stdout (`-o -` into a pipe closed early)";

/// A failed command: what to print after `error: `, and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
    /// The library operation that raised it, whose name starts the message (`gemm: `),
    /// for [`Failure::in_op`].
    pub op: Option<&'static str>,
}

pub type Result<T, E = Failure> = std::result::Result<T, E>;

impl Failure {
    /// A usage or I/O error (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: USAGE,
            message: message.into(),
            op: None,
        }
    }

    /// An operation that refused its input, or a verification failure (exit code 1).
    pub fn failed(message: impl Into<String>) -> Self {
        Failure {
            code: FAILED,
            message: message.into(),
            op: None,
        }
    }

    /// The failure as the command `name` tells it: a library error raised by an
    /// operation of another name (`gemm` inside matmul, `cholesky` inside
    /// `solve --assume-a pos`) names the command the user ran instead.
    pub fn in_op(mut self, name: &str) -> Self {
        if let Some(op) = self.op.take().filter(|&op| op != name) {
            if let Some(rest) = self.message.strip_prefix(&format!("{op}: ")) {
                self.message = format!("{name}: {rest}");
            }
        }
        self
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
            // Names on the command line that do not exist.
            E::UnknownBackend { .. } | E::UnknownVariant { .. } => USAGE,
            // The data (shapes, values, k against N) or the machine said no. The
            // arguments whose range does not depend on the data (k, tol, max_iter) are
            // checked by the parser, so an InvalidArgument here is about the data.
            _ => FAILED,
        };
        // The operation whose name starts the message, where the error has one.
        let op = match &e {
            E::ShapeMismatch { op, .. }
            | E::Empty { op, .. }
            | E::NotSquare { op, .. }
            | E::NonFinite { op, .. }
            | E::Singular { op, .. }
            | E::RankDeficient { op, .. }
            | E::InvalidArgument { op, .. } => Some(*op),
            E::NotPositiveDefinite { .. } => Some("cholesky"),
            _ => None,
        };
        Failure {
            code,
            message: e.to_string(),
            op,
        }
    }
}

/// Writes to stdout. A closed pipe (`ndgpu info | head -1`) ends the output quietly
/// instead of panicking as `print!` would; any other failure (a full disk) is an error,
/// or a script would take a truncated result for a good one.
pub fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    stdout_result(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// The outcome of a write to stdout: a closed pipe is fine (the reader has what it
/// wanted), anything else an I/O error.
pub fn stdout_result(r: std::io::Result<()>) -> Result<()> {
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::usage(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// Writes `note: <text>` as one line to stderr: something the tool did that the user
/// did not spell out (a dtype conversion).
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "note: {text}");
}

/// Writes `error: <message>` as one line to stderr.
pub fn report(failure: &Failure) {
    let _ = writeln!(std::io::stderr().lock(), "error: {failure}");
}
