//! The one error type of ndgpu, grouped by kind.

use std::fmt;

/// Result alias used across ndgpu.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in an ndgpu call.
///
/// Input errors are raised identically by every backend (they come from the shared
/// checks in [`crate::check`]); backend errors carry the backend's own cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- bad input -------------------------------------------------------------
    /// Operand shapes do not fit together.
    #[error("{op}: shape mismatch: {detail}")]
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// Which shapes, and what was expected.
        detail: String,
    },
    /// The operation has no defined result on an empty input (min of nothing, ...).
    #[error("{op}: empty input ({rows}x{cols}) has no {op}")]
    Empty {
        /// The operation.
        op: &'static str,
        /// Rows of the input.
        rows: usize,
        /// Columns of the input.
        cols: usize,
    },
    /// A square matrix was required.
    #[error("{op}: matrix must be square, got {rows}x{cols}")]
    NotSquare {
        /// The operation.
        op: &'static str,
        /// Rows of the input.
        rows: usize,
        /// Columns of the input.
        cols: usize,
    },
    /// NaN or ±Inf in an input that the operation cannot take.
    #[error("{op}: input {what} holds a non-finite value ({value}) at {index:?}")]
    NonFinite {
        /// The operation.
        op: &'static str,
        /// Which input.
        what: &'static str,
        /// The offending value.
        value: f64,
        /// Its (row, column).
        index: (usize, usize),
    },
    /// Cholesky met a pivot that is not positive: the leading minor of order
    /// `pivot + 1` is not positive definite.
    #[error("cholesky: matrix is not positive definite: {}", pivot_text(*pivot, *value))]
    NotPositiveDefinite {
        /// 0-based index of the first failing pivot.
        pivot: usize,
        /// The value of the pivot (before the square root). Not finite when row `pivot`
        /// of the lower triangle holds NaN or ±Inf (reported this way by the resident
        /// forms, which do not look at the data on the host first) or the sums overflowed.
        value: f64,
    },
    /// A square matrix is singular: its LU factorization met an exactly zero pivot (the
    /// factor's `U[pivot, pivot]`), or a triangular matrix has a zero on its diagonal.
    #[error("{op}: matrix is singular: {}", singular_text(*pivot))]
    Singular {
        /// The operation.
        op: &'static str,
        /// 0-based index of the first zero pivot.
        pivot: usize,
    },
    /// A least-squares problem whose matrix does not have full column rank: column
    /// `column` of A is (to working precision) a combination of the columns before it.
    #[error(
        "{op}: A does not have full column rank: column {column} is a combination of the \
         columns before it (|R[{column},{column}]| = {}, at most {}); remove it, or \
         regularize",
        readable(*value),
        readable(*tol)
    )]
    RankDeficient {
        /// The operation.
        op: &'static str,
        /// 0-based index of the first dependent column.
        column: usize,
        /// |R[column, column]|.
        value: f64,
        /// The threshold: ε·max(m, n)·max |R[i, i]|, as NumPy's default `rcond`.
        tol: f64,
    },
    /// An iterative method (the Jacobi sweeps of an eigendecomposition or SVD, say) did
    /// not converge within its limit: no result is returned rather than an inaccurate one.
    #[error("{op}: {method} did not converge")]
    NoConvergence {
        /// The operation.
        op: &'static str,
        /// The method and its limit ("cyclic Jacobi, 60 sweeps", say).
        method: &'static str,
    },
    /// An argument out of its domain (k = 0, k > points, a tolerance outside [0, 1], ...).
    #[error("{op}: invalid argument: {detail}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// What is wrong.
        detail: String,
    },

    // ---- choosing a backend ------------------------------------------------------
    /// No backend of that name is compiled in.
    #[error("unknown backend '{name}' (compiled in: {known})")]
    UnknownBackend {
        /// The requested name.
        name: String,
        /// The names that exist, comma separated.
        known: String,
    },
    /// The backend exists but cannot run on this machine.
    #[error("backend '{backend}' is unavailable: {reason}")]
    Unavailable {
        /// The backend.
        backend: String,
        /// Why (no driver, no device, library missing, ...).
        reason: String,
    },
    /// The backend has no variant of that name for that operation family.
    #[error("backend '{backend}' has no {family} variant '{name}' (available: {available})")]
    UnknownVariant {
        /// The backend.
        backend: String,
        /// The operation family.
        family: Family,
        /// The requested variant.
        name: String,
        /// The variants that exist, comma separated.
        available: String,
    },

    /// The backend has not implemented this operation (yet): a family lands one
    /// backend at a time, and the others answer this until they have it.
    #[error("backend '{backend}' does not implement {op}")]
    Unsupported {
        /// The backend.
        backend: &'static str,
        /// The operation.
        op: &'static str,
    },

    // ---- resident arrays -----------------------------------------------------------
    /// A resident array handed to a backend that computes somewhere else (another
    /// device, another runtime, the host).
    #[error(
        "{op}: {what} lives in {found}, but backend '{backend}' computes in {expected}: \
         download it and upload it to '{backend}'"
    )]
    WrongPlace {
        /// The operation.
        op: &'static str,
        /// Which operand.
        what: &'static str,
        /// Where the array lives.
        found: crate::Place,
        /// The backend.
        backend: &'static str,
        /// Where the backend computes.
        expected: crate::Place,
    },

    // ---- device faults ----------------------------------------------------------
    /// The device could not allocate the memory the call needs.
    #[error(
        "out of device memory: {op} asked for {requested} bytes, {free} bytes free of {total}"
    )]
    OutOfMemory {
        /// The operation.
        op: &'static str,
        /// Bytes requested.
        requested: usize,
        /// Bytes free on the device when asked.
        free: usize,
        /// Total device memory.
        total: usize,
    },
    /// The host could not allocate a result. Only results whose size the input's bytes
    /// do not bound can meet this: the product of an m×0 and a 0×n matrix, the gram of
    /// an n×0 one, a sum along an axis of length 0.
    #[error("out of host memory: {op} needs {} for its result", host_bytes(*requested))]
    HostOutOfMemory {
        /// The operation.
        op: &'static str,
        /// Bytes requested; `None` when the count does not even fit in the address space.
        requested: Option<usize>,
    },
    /// Any other backend failure (driver, NVRTC, cuBLAS, cuSOLVER), with its cause.
    #[error("{backend}: {context}: {source}")]
    Backend {
        /// The backend.
        backend: &'static str,
        /// What it was doing.
        context: String,
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// Shorthand for [`Error::ShapeMismatch`].
    pub fn shape(op: &'static str, detail: impl Into<String>) -> Self {
        Error::ShapeMismatch {
            op,
            detail: detail.into(),
        }
    }
    /// [`Error::UnknownVariant`]: `backend` has no variant `name` of `family`, only
    /// `available`.
    pub fn unknown_variant(backend: &str, family: Family, name: &str, available: &[&str]) -> Self {
        Error::UnknownVariant {
            backend: backend.into(),
            family,
            name: name.into(),
            available: available.join(", "),
        }
    }
    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(op: &'static str, detail: impl Into<String>) -> Self {
        Error::InvalidArgument {
            op,
            detail: detail.into(),
        }
    }
    /// The same error, as raised by `op`: an allocation made for an operation (by
    /// [`Memory::alloc`](crate::Memory::alloc), say) names the operation rather than
    /// the allocation. Other errors are returned as they are.
    pub fn for_op(self, op: &'static str) -> Self {
        match self {
            Error::HostOutOfMemory { requested, .. } => Error::HostOutOfMemory { op, requested },
            Error::OutOfMemory {
                requested,
                free,
                total,
                ..
            } => Error::OutOfMemory {
                op,
                requested,
                free,
                total,
            },
            other => other,
        }
    }

    /// Wraps a backend error with context.
    pub fn backend(
        backend: &'static str,
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Error::Backend {
            backend,
            context: context.into(),
            source: source.into(),
        }
    }
}

/// The operation families; each backend may offer several variants of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// General matrix product (`gemm`, `matmul`).
    MatMul,
    /// The symmetric product M·Mᵀ (`gram`).
    Gram,
    /// Out-of-place transpose.
    Transpose,
    /// Whole-array reductions and dot products.
    Reduce,
    /// Cholesky factorization and solve.
    Cholesky,
    /// k-means clustering.
    KMeans,
    /// Triangular solves with many right-hand sides (`solve_triangular`).
    Trsm,
    /// LU factorization with partial pivoting, and its solves.
    Lu,
    /// Householder QR factorization, its products with Q, and least squares.
    Qr,
    /// The symmetric eigendecomposition (`eigh`) and the SVD, and PCA on them.
    Spectra,
}

impl Family {
    /// Every family, in a fixed order.
    pub const ALL: [Family; 10] = [
        Family::MatMul,
        Family::Gram,
        Family::Transpose,
        Family::Reduce,
        Family::Cholesky,
        Family::KMeans,
        Family::Trsm,
        Family::Lu,
        Family::Qr,
        Family::Spectra,
    ];

    /// The lowercase name used by the CLI (`matmul`, `gram`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Family::MatMul => "matmul",
            Family::Gram => "gram",
            Family::Transpose => "transpose",
            Family::Reduce => "reduce",
            Family::Cholesky => "cholesky",
            Family::KMeans => "kmeans",
            Family::Trsm => "trsm",
            Family::Lu => "lu",
            Family::Qr => "qr",
            Family::Spectra => "spectra",
        }
    }

    /// Parses [`Family::name`].
    pub fn from_name(s: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == s)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn pivot_text(pivot: usize, value: f64) -> String {
    if value.is_finite() {
        format!(
            "pivot {pivot} (0-based) is {}, so the leading minor of order {} is not positive \
             definite",
            readable(value),
            pivot + 1
        )
    } else {
        format!(
            "pivot {pivot} (0-based) is {value}: row {pivot} of the lower triangle holds NaN \
             or ±Inf, or the factorization overflowed"
        )
    }
}

/// A number as a person reads it: plain digits (`-3`, `0.25`, `1234.5`) where they are
/// few, else scientific notation (`1.5e-7`, `2e20`); the shortest digits that round-trip.
fn readable(x: f64) -> String {
    let magnitude = x.abs();
    if magnitude == 0.0 || !x.is_finite() || (1e-4..1e16).contains(&magnitude) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

fn singular_text(pivot: usize) -> String {
    format!(
        "the pivot in row and column {pivot} (0-based) is exactly zero: A has no inverse, and \
         A·X = B no unique solution"
    )
}

fn host_bytes(requested: Option<usize>) -> String {
    match requested {
        Some(b) => format!("{b} bytes"),
        None => "more bytes than the address space holds".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_messages_are_readable() {
        assert_eq!(readable(-3.0), "-3");
        assert_eq!(readable(0.25), "0.25");
        assert_eq!(readable(1.5e-7), "1.5e-7");
        assert_eq!(readable(2e20), "2e20");
        assert_eq!(readable(0.0), "0");
        assert_eq!(readable(f64::NAN), "NaN");
        let e = Error::NotPositiveDefinite {
            pivot: 1,
            value: -3.0,
        };
        assert_eq!(
            e.to_string(),
            "cholesky: matrix is not positive definite: pivot 1 (0-based) is -3, so the \
             leading minor of order 2 is not positive definite"
        );
        let e = Error::RankDeficient {
            op: "lstsq",
            column: 2,
            value: 1.5e-17,
            tol: 4e-15,
        };
        assert!(e.to_string().contains("= 1.5e-17, at most 4e-15"), "{e}");
    }
}
