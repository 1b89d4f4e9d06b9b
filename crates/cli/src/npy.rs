//! Reading and writing `.npy` files with clear errors.
//!
//! ndarray-npy does the reading, but it sizes its buffer from the header before it
//! checks the file, so a garbage header could ask for terabytes. The header is parsed
//! here first and checked against the file's length, dtype and rank; only a file that
//! passes is handed over.

use std::fs::File;
use std::io::{IsTerminal, Read, Seek, SeekFrom};
use std::path::Path;

use ndarray::{Array1, Array2, ArrayBase, Data, Dimension};
use ndarray_npy::{ReadableElement, WritableElement};
use ndgpu::DType;
use num_traits::ToPrimitive;

use crate::error::{Failure, Result};
use py_literal::Value;
use stored::read_as;

/// The longest header read, in bytes: NumPy's default `max_header_size`.
const MAX_HEADER_LEN: u64 = 10_000;

/// The most parser steps one header may take (pest's call limit, for every pest
/// parser in the process: here py_literal, in this module and inside ndarray-npy's
/// reader). py_literal's grammar re-parses a bracketed value when it backtracks, two
/// to four times per level of nesting, so its work grows exponentially with the depth:
/// a few dozen nested `[` in a short header keep it busy for a minute. The budget is
/// far above what real headers need (a float array's, one with NumPy's most
/// dimensions, a large structured dtype: the tests check they fit) and stops a hostile
/// one quickly (docs/testing.md, fuzzing).
const MAX_PARSE_STEPS: usize = 1_000_000;

mod stored;

pub use stored::Stored;

/// Header fields of a `.npy` file that the tool cares about.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The float type the file computes in unless `--dtype` says otherwise: f32 for an
    /// f32 file, f64 for any other (integers and bool become f64, as in `numpy.linalg`).
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// What the file stores.
    pub stored: Stored,
    /// Column-major data.
    pub fortran_order: bool,
}

/// Reads and checks the header of `path`: magic, version, a dtype the tool reads (a
/// float, integer or bool one) and a data section exactly as long as the shape says.
pub fn header(path: &Path) -> Result<Header> {
    let name = path.display();
    let bad = |what: String| Failure::usage(format!("{name}: not a valid .npy file: {what}"));
    let mut file =
        File::open(path).map_err(|e| Failure::usage(format!("cannot read {name}: {e}")))?;
    let file_len = file
        .metadata()
        .map_err(|e| Failure::usage(format!("cannot read {name}: {e}")))?
        .len();
    let mut prefix = [0u8; 12];
    let got = read_up_to(&mut file, &mut prefix)
        .map_err(|e| Failure::usage(format!("cannot read {name}: {e}")))?;
    if got < 10 || &prefix[..6] != b"\x93NUMPY" {
        return Err(bad("it does not start with the .npy magic string".into()));
    }
    // The format has versions 1.0, 2.0 and 3.0.
    let (len_bytes, header_len) = match (prefix[6], prefix[7], got) {
        (1, 0, _) => (2, u16::from_le_bytes([prefix[8], prefix[9]]) as u64),
        (2 | 3, 0, 12) => (
            4,
            u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]) as u64,
        ),
        (2 | 3, 0, _) => return Err(bad("truncated inside the header".into())),
        (major, _, _) => {
            return Err(bad(format!(
                "unsupported format version {major}.{}",
                prefix[7]
            )))
        }
    };
    // NumPy's reader refuses longer headers by default (`max_header_size`) for the same
    // reason: a float array's header is about a hundred bytes, and a parser fed megabytes
    // of header is a way to stall the reader.
    if header_len > MAX_HEADER_LEN {
        return Err(bad(format!(
            "the header is {header_len} bytes long; headers over {MAX_HEADER_LEN} bytes are refused, as NumPy refuses them"
        )));
    }
    let data_start = 8 + len_bytes + header_len;
    if data_start > file_len {
        return Err(bad(format!(
            "truncated: the header says it is {header_len} bytes long but the file has {file_len} bytes"
        )));
    }
    // The length is now known to be within the file, so this allocation is bounded.
    let mut text = vec![0u8; header_len as usize];
    file.seek(SeekFrom::Start(8 + len_bytes))
        .and_then(|_| file.read_exact(&mut text))
        .map_err(|e| Failure::usage(format!("cannot read {name}: {e}")))?;
    let (stored, shape, fortran_order) = parse_header(&text, prefix[6]).map_err(|e| match e {
        HeaderError::Invalid(what) => bad(what),
        HeaderError::Unsupported(what) => Failure::usage(format!("{name}: {what}")),
    })?;
    // ndarray needs the product of the non-zero lengths to fit in isize, in bytes too,
    // even when another length is 0.
    let overflows = || bad(format!("shape {} overflows", fmt_shape(&shape)));
    shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(stored.size(), |acc, &d| acc.checked_mul(d as u64))
        .filter(|&bytes| bytes <= isize::MAX as u64)
        .ok_or_else(overflows)?;
    let dtype = stored.name();
    let expected = shape
        .iter()
        .try_fold(stored.size(), |acc, &d| acc.checked_mul(d as u64))
        .ok_or_else(overflows)?;
    let actual = file_len - data_start;
    if actual < expected {
        return Err(bad(format!(
            "truncated: shape {} of {dtype} needs {expected} bytes of data, the file has {actual}",
            fmt_shape(&shape)
        )));
    }
    if actual > expected {
        return Err(bad(format!(
            "{} bytes after the data of shape {} of {dtype}",
            actual - expected,
            fmt_shape(&shape)
        )));
    }
    Ok(Header {
        dtype: stored.float(),
        shape,
        stored,
        fortran_order,
    })
}

/// The dictionary of a header: `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`
/// then a newline, ASCII in format versions 1 and 2, UTF-8 in 3. Parsed with the Python
/// literal grammar that ndarray-npy's reader uses (py_literal), and checked at least as
/// strictly as that reader checks it: a header accepted here is one the reader
/// accepts. Returns the stored type, the shape and whether the order is Fortran's.
fn parse_header(text: &[u8], major: u8) -> Result<(Stored, Vec<usize>, bool), HeaderError> {
    use HeaderError::{Invalid, Unsupported};
    let Some((b'\n', body)) = text.split_last() else {
        return Err(Invalid("the header does not end with a newline".into()));
    };
    let body = std::str::from_utf8(body).map_err(|_| Invalid("the header is not text".into()))?;
    if major < 3 && !body.is_ascii() {
        return Err(Invalid(format!(
            "the header of a version {major} file is not ASCII"
        )));
    }
    bound_parser_work();
    let dict: Value = body
        .parse()
        .map_err(|_| Invalid("cannot parse the header".into()))?;
    let Some(entries) = dict.as_dict() else {
        return Err(Invalid("the header is not a dictionary".into()));
    };
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    for (key, value) in entries {
        let (slot, ok) = match key.as_string().map(String::as_str) {
            Some("descr") => (&mut descr, true),
            Some("fortran_order") => (&mut fortran_order, value.as_boolean().is_some()),
            Some("shape") => (&mut shape, dims(value).is_some()),
            _ => return Err(Invalid(format!("unknown key {key} in the header"))),
        };
        if !ok {
            return Err(Invalid(format!("{key} has the value {value}")));
        }
        if slot.replace(value).is_some() {
            return Err(Invalid(format!(
                "the key {key} appears twice in the header"
            )));
        }
    }
    let (Some(descr), Some(fortran_order), Some(shape)) = (descr, fortran_order, shape) else {
        return Err(Invalid(
            "the header needs the keys 'descr', 'fortran_order' and 'shape'".into(),
        ));
    };
    let stored = match descr.as_string().map(String::as_str) {
        Some(d) => Stored::from_descr(d).ok_or_else(|| {
            Unsupported(format!(
                "holds {}, which the tool does not read: it reads float32, float64, \
                 integer and bool arrays (complex, float16, string and object ones are \
                 refused)",
                describe_descr(d)
            ))
        })?,
        None if descr.as_list().is_some() => {
            return Err(Unsupported("structured dtypes are not supported".into()))
        }
        None => return Err(Invalid(format!("'descr' has the value {descr}"))),
    };
    let fortran_order = fortran_order.as_boolean().unwrap_or(false);
    Ok((stored, dims(shape).unwrap_or_default(), fortran_order))
}

/// Why a header was refused: it is not a valid header, or it is one of a kind the tool
/// does not read.
enum HeaderError {
    Invalid(String),
    Unsupported(String),
}

/// Sets pest's call limit to [`MAX_PARSE_STEPS`], once per process, before the first
/// header is parsed. Setting it is what bounds the time a hostile header can take: the
/// limit makes the parse fail instead of backtracking on.
fn bound_parser_work() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| pest::set_call_limit(std::num::NonZeroUsize::new(MAX_PARSE_STEPS)));
}

/// A shape: a tuple of non-negative integers that fit in `usize`.
fn dims(value: &Value) -> Option<Vec<usize>> {
    value
        .as_tuple()?
        .iter()
        .map(|d| d.as_integer()?.to_usize())
        .collect()
}

/// `read` that stops at the end of the file instead of failing.
fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// A readable name for a NumPy type descriptor (`'<i8' (int64)`).
fn describe_descr(descr: &str) -> String {
    let body = descr.trim_start_matches(['<', '>', '|', '=']);
    let (kind, bytes) = body.split_at(body.len().min(1));
    let bits = bytes.parse::<u32>().ok().map(|b| b * 8);
    let family = match kind {
        "f" => Some("float"),
        "i" => Some("int"),
        "u" => Some("uint"),
        "c" => Some("complex"),
        "b" => Some("bool"),
        _ => None,
    };
    match (family, bits) {
        (Some("bool"), _) => format!("dtype '{descr}' (bool)"),
        (Some(f), Some(b)) => format!("dtype '{descr}' ({f}{b})"),
        _ => format!("dtype '{descr}'"),
    }
}

/// `(3, 4)`, NumPy style.
pub fn fmt_shape(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Checks the header of `path` and reads it with ndarray-npy as a matrix of `T`, or as
/// a one-column matrix if it is 1-D and `column` is set. A file of another dtype (the
/// other float one, an integer one, bool) is converted (the caller says so: see
/// `run.rs`).
pub fn read_matrix<T: ReadableElement + ndgpu::Element>(
    path: &Path,
    column: bool,
) -> Result<Array2<T>> {
    let h = header(path)?;
    match h.shape.len() {
        2 => read_as(path, &h),
        1 if column => {
            let v: Array1<T> = read_as(path, &h)?;
            let n = v.len();
            Ok(v.into_shape_with_order((n, 1))
                .map_err(|e| Failure::usage(e.to_string()))?)
        }
        _ => Err(rank_error(
            path,
            &h,
            if column {
                "a matrix or a vector (rank 2 or 1)"
            } else {
                "a matrix (rank 2)"
            },
        )),
    }
}

/// As [`read_matrix`] for a 1-D array.
pub fn read_vector<T: ReadableElement + ndgpu::Element>(path: &Path) -> Result<Array1<T>> {
    let h = header(path)?;
    if h.shape.len() != 1 {
        return Err(rank_error(path, &h, "a vector (rank 1)"));
    }
    read_as(path, &h)
}

/// How [`read_operand`] shapes a 1-D array: as a 1×n row or an n×1 column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vector {
    Row,
    Column,
}

/// A matrix, or a 1-D array shaped as `vector` says; the flag tells which it was.
pub fn read_operand<T: ReadableElement + ndgpu::Element>(
    path: &Path,
    vector: Vector,
) -> Result<(Array2<T>, bool)> {
    let h = header(path)?;
    match h.shape.len() {
        2 => Ok((read_as(path, &h)?, false)),
        1 => {
            let v: Array1<T> = read_as(path, &h)?;
            let n = v.len();
            let shape = match vector {
                Vector::Row => (1, n),
                Vector::Column => (n, 1),
            };
            let m = v
                .into_shape_with_order(shape)
                .map_err(|e| Failure::usage(e.to_string()))?;
            Ok((m, true))
        }
        _ => Err(rank_error(path, &h, "a matrix or a vector (rank 2 or 1)")),
    }
}

/// Reads a matrix of any dtype the tool reads as f64 (for k-means starting centroids).
pub fn read_matrix_f64(path: &Path) -> Result<Array2<f64>> {
    read_matrix::<f64>(path, false)
}

/// A rank the operation cannot take: the input is refused (exit code 1), as a shape
/// that does not fit is.
fn rank_error(path: &Path, h: &Header, expected: &str) -> Failure {
    Failure::failed(format!(
        "{}: has rank {} (shape {}), expected {expected}",
        path.display(),
        h.shape.len(),
        fmt_shape(&h.shape)
    ))
}

fn read<T: ReadableElement, D: Dimension>(path: &Path) -> Result<ndarray::Array<T, D>> {
    ndarray_npy::read_npy(path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))
}

/// The bytes of a `.npy` file of format 1.0 with this header dictionary (padded with
/// spaces so that the data starts at a multiple of 64) and these data bytes, whatever
/// they say: the tests and fuzz targets make the files no writer would with it.
pub fn raw_file(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut header = dict.to_string();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// Whether an output path means stdout (`-o -`).
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// At most one output can be stdout (`-`), and a `.npy` is binary: not for a terminal.
pub(crate) fn check_stdout(outputs: &[&Path]) -> Result<()> {
    match outputs.iter().filter(|p| is_stdout(p)).count() {
        0 => Ok(()),
        1 if std::io::stdout().is_terminal() => Err(Failure::usage(
            "`-` writes a binary .npy to stdout, which is a terminal: redirect it or pipe it",
        )),
        1 => Ok(()),
        _ => Err(Failure::usage("only one output can go to stdout (`-`)")),
    }
}

/// Writes an array of any rank (0-d for scalars) to `path`, creating its folder if
/// missing (as `--out-dir` is created), or to stdout for `-`.
pub fn write<A, S, D>(path: &Path, array: &ArrayBase<S, D>) -> Result<()>
where
    A: WritableElement,
    S: Data<Elem = A>,
    D: Dimension,
{
    use ndarray_npy::{WriteNpyError, WriteNpyExt};
    if is_stdout(path) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        // A reader that closes early leaves a truncated .npy: unlike a text summary cut
        // short, that is a failure.
        let truncated = |e: &std::io::Error| e.kind() == std::io::ErrorKind::BrokenPipe;
        let written = match array.write_npy(&mut out) {
            Ok(()) => out.flush(),
            Err(WriteNpyError::Io(e)) => Err(e),
            Err(e) => return Err(Failure::usage(format!("cannot write to stdout: {e}"))),
        };
        return match written {
            Err(e) if truncated(&e) => Err(Failure::usage(
                "stdout was closed before the whole .npy was written: the output is truncated",
            )),
            r => crate::error::stdout_result(r),
        };
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    ndarray_npy::write_npy(path, array)
        .map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests;
