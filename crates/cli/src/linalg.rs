//! The `run` operations of the factorizations past Cholesky, generic over the element
//! type: `lu`, `qr`, `lstsq`, `det` and `solve_triangular` (`solve` itself, LU or
//! Cholesky, and `inv`, an operation of one matrix, are in `ops.rs`).

use std::path::{Path, PathBuf};

use ndgpu::{Ops, QrMode, Trans, Triangular, Uplo};

use crate::error::{Failure, Result};
use crate::npy::{read_matrix, read_operand, Vector};
use crate::ops::{deliver_solution, scalar, shape_of, timed, Ctx, Float};

/// The paths of the named files in `dir`, which is created if missing; `None` each
/// without a folder (the results are then printed).
pub fn files_in<const N: usize>(
    dir: Option<&Path>,
    names: [&str; N],
) -> Result<[Option<PathBuf>; N]> {
    if let Some(d) = dir {
        std::fs::create_dir_all(d)
            .map_err(|e| Failure::usage(format!("cannot create {}: {e}", d.display())))?;
    }
    Ok(names.map(|n| dir.map(|d| d.join(n))))
}

/// `P, L, U` with `A = P·L·U`, into P.npy, L.npy and U.npy.
pub fn lu<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, a: &Path) -> Result<()> {
    let Ctx { b, rep, out: dir } = cx;
    let a = read_matrix::<T>(a, false)?;
    rep.shape("a", a.shape());
    let [p_path, l_path, u_path] = files_in(dir, ["P.npy", "L.npy", "U.npy"])?;
    let (p, l, u) = timed(rep, || b.lu(a.view()))?;
    rep.deliver("P", &p, p_path.as_deref(), "--out-dir")?;
    rep.deliver("L", &l, l_path.as_deref(), "--out-dir")?;
    rep.deliver("U", &u, u_path.as_deref(), "--out-dir")
}

/// `Q, R` with `A = Q·R`, into Q.npy and R.npy.
pub fn qr<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, a: &Path, complete: bool) -> Result<()> {
    let Ctx { b, rep, out: dir } = cx;
    let a = read_matrix::<T>(a, false)?;
    rep.shape("a", a.shape());
    let mode = if complete {
        QrMode::Complete
    } else {
        QrMode::Reduced
    };
    rep.field("mode", if complete { "complete" } else { "reduced" });
    let [q_path, r_path] = files_in(dir, ["Q.npy", "R.npy"])?;
    let (q, r) = timed(rep, || b.qr(a.view(), mode))?;
    rep.deliver("Q", &q, q_path.as_deref(), "--out-dir")?;
    rep.deliver("R", &r, r_path.as_deref(), "--out-dir")
}

/// Least squares through QR.
pub fn lstsq<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, a: &Path, rhs: &Path) -> Result<()> {
    let Ctx { b, rep, out } = cx;
    let a = read_matrix::<T>(a, false)?;
    let (rhs, vector) = read_operand::<T>(rhs, Vector::Column)?;
    rep.shape("a", a.shape());
    rep.shape("b", &shape_of(&rhs, vector));
    let x = timed(rep, || b.lstsq(a.view(), rhs.view()))?;
    deliver_solution(rep, x, vector, out)
}

/// det A, printed and written as a 0-d array.
pub fn det<T: Float, B: ?Sized + Ops<T>>(cx: Ctx<B>, a: &Path) -> Result<()> {
    let Ctx { b, rep, out } = cx;
    let a = read_matrix::<T>(a, false)?;
    rep.shape("a", a.shape());
    let d = timed(rep, || b.det(a.view()))?;
    // A singular A's det is 0, as NumPy prints it, not −0 (the sign of a zero pivot).
    let d = if d == T::zero() { T::zero() } else { d };
    scalar(rep, d, out)
}

/// The inputs and options of `run solve_triangular`.
pub struct TriangularSolve<'a> {
    /// A.
    pub a: &'a Path,
    /// B.
    pub b: &'a Path,
    /// The lower triangle (else the upper, SciPy's default).
    pub lower: bool,
    /// Solve with the transpose.
    pub trans: bool,
    /// The diagonal is taken as ones.
    pub unit: bool,
}

/// X with `op(T)·X = B`.
pub fn solve_triangular<T: Float, B: ?Sized + Ops<T>>(
    cx: Ctx<B>,
    s: &TriangularSolve,
) -> Result<()> {
    let Ctx { b, rep, out } = cx;
    let a = read_matrix::<T>(s.a, false)?;
    let (rhs, vector) = read_operand::<T>(s.b, Vector::Column)?;
    rep.shape("a", a.shape());
    rep.shape("b", &shape_of(&rhs, vector));
    rep.field("lower", s.lower);
    rep.field("trans", s.trans);
    rep.field("unit_diagonal", s.unit);
    let tri = Triangular {
        uplo: if s.lower { Uplo::Lower } else { Uplo::Upper },
        trans: if s.trans { Trans::Yes } else { Trans::No },
        unit: s.unit,
    };
    let x = timed(rep, || b.solve_triangular(a.view(), rhs.view(), tri))?;
    deliver_solution(rep, x, vector, out)
}
