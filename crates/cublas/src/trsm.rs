//! Triangular solves through cuBLAS TRSM, and the one right-side TRSM that every solve
//! of this crate runs on the buffer of a row-major right-hand side.
//!
//! **From the right, in place.** A row-major r×c buffer read column-major (leading
//! dimension c) is the c×r transpose. So the row-major n×nrhs B that `op(T)·X = B`
//! overwrites is, to cuBLAS, the nrhs×n matrix Bᵀ with leading dimension nrhs, and
//!
//! ```text
//! op(T)·X = B  ⟺  Xᵀ·op(T)ᵀ = Bᵀ
//! ```
//!
//! is one TRSM with side = RIGHT (m = nrhs, n = n, ldb = nrhs) on B's own buffer: no
//! copy of B and no transpose, where `trsm` with side = LEFT would need B column-major.
//!
//! **Which triangle, which op.** cuBLAS reads the row-major n×n A's buffer as M = Aᵀ
//! (lda = n). The lower triangle of A is, transposed, the upper triangle of M (and the
//! other way round), the diagonal shared: the `uplo` triangle T of A is `T = Tcᵀ` with
//! Tc the *other* triangle of M. Then
//!
//! ```text
//! op = N:  op(T)ᵀ = Tᵀ = Tc     → cuBLAS uplo flipped, op N
//! op = T:  op(T)ᵀ = T  = Tcᵀ    → cuBLAS uplo flipped, op T
//! ```
//!
//! uplo flips, op and diag are kept ([`right_side`]; checked on the host against a
//! dense solve in this module's tests).
//!
//! **A zero on the diagonal.** cuBLAS divides by it and carries ±Inf and NaN on. When
//! the diagonal is read (`unit` false), it is brought back first (a strided cuBLAS COPY
//! of its n entries into a small buffer, read back: the one synchronisation of the
//! solve, moving n elements where a scan of A would read n²): a zero is
//! [`Error::Singular`] and B is untouched. With a unit diagonal nothing waits.

use cudarc::cublas::sys::{cublasDiagType_t, cublasFillMode_t, cublasSideMode_t};
use cudarc::driver::CudaSlice;
use ndgpu_core::backend;
use ndgpu_core::{Error, Matrix, Result, Trans, Triangular, Uplo, Variant};

use crate::layout::op;
use crate::{error, i64_of, ptr, ptr_mut, BlasElement, CublasBackend};

/// The op, in errors.
const OP: &str = "solve_triangular";

/// Variants, default first.
pub const VARIANTS: &[Variant] = &[Variant::new(
    "trsm",
    "cuBLAS STRSM/DTRSM (64-bit interface) with side = RIGHT on B's row-major buffer in \
     place (read column-major it is Bᵀ: op(T)·X = B is Xᵀ·op(T)ᵀ = Bᵀ), the triangle \
     flipped (A's buffer read column-major is Aᵀ): no copy, no transpose",
)];

/// What every variant shares.
pub const NOTE: &str = "a diagonal that is read (unit = false) is read back first to \
    refuse a zero (Error::Singular, B untouched): one synchronisation; with a unit diagonal \
    the solve is queued and nothing waits. B is not looked at: NaN or ±Inf in a column of B \
    gives NaN or ±Inf in that column of X.";

/// The other triangle.
pub(crate) fn flip(u: Uplo) -> Uplo {
    match u {
        Uplo::Lower => Uplo::Upper,
        Uplo::Upper => Uplo::Lower,
    }
}

/// The other op.
pub(crate) fn flip_trans(t: Trans) -> Trans {
    match t {
        Trans::No => Trans::Yes,
        Trans::Yes => Trans::No,
    }
}

/// The right-side TRSM on B's buffer that solves the row-major `op(T)·X = B`, T the
/// triangle `tri` of A: the triangle of M = Aᵀ (A's buffer read column-major) that
/// cuBLAS reads, with its op and diagonal (see the module's derivation).
pub(crate) fn right_side(tri: Triangular) -> Triangular {
    Triangular {
        uplo: flip(tri.uplo),
        ..tri
    }
}

fn fill(u: Uplo) -> cublasFillMode_t {
    match u {
        Uplo::Lower => cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
        Uplo::Upper => cublasFillMode_t::CUBLAS_FILL_MODE_UPPER,
    }
}

fn diag(unit: bool) -> cublasDiagType_t {
    if unit {
        cublasDiagType_t::CUBLAS_DIAG_UNIT
    } else {
        cublasDiagType_t::CUBLAS_DIAG_NON_UNIT
    }
}

impl CublasBackend {
    /// The `count` entries `stride` apart from the start of `a`, read back (a matrix's
    /// diagonal: stride = row length + 1; cuBLAS COPY into a small buffer): one
    /// synchronisation, and n elements moved instead of the whole matrix.
    pub(crate) fn read_diagonal<T: BlasElement>(
        &self,
        op: &'static str,
        a: &CudaSlice<T>,
        stride: usize,
        count: usize,
    ) -> Result<Vec<T>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let gpu = &self.gpu;
        let mut d = gpu.alloc::<T>(op, count)?;
        {
            let (pa, pd) = (ptr(gpu, a), ptr_mut(gpu, &mut d));
            let h = self.blas()?;
            // SAFETY: callers pass an `a` holding (count − 1)·stride + 1 elements or
            // more; d holds count.
            let status = unsafe { T::copy(h.raw, i64_of(count), pa, i64_of(stride), pd, 1) };
            error::cublas(status, "reading a diagonal (copy)")?;
        }
        gpu.download_slice(&d, count)
    }

    /// One TRSM from the right, queued: `X·op(Tc) = B` in place on `b`, read column-major
    /// as `rows`×n with leading dimension `rows`, where Tc is the triangle `t` (as cuBLAS
    /// reads it: of the column-major n×n matrix at the start of `a`, leading dimension
    /// `lda` ≥ n).
    pub(crate) fn trsm_right<T: BlasElement>(
        &self,
        (a, lda): (&CudaSlice<T>, usize),
        t: Triangular,
        b: &mut CudaSlice<T>,
        (rows, n): (usize, usize),
        doing: &str,
    ) -> Result<()> {
        if rows == 0 || n == 0 {
            return Ok(());
        }
        let gpu = &self.gpu;
        let (pa, pb) = (ptr(gpu, a), ptr_mut(gpu, b));
        let h = self.blas()?;
        // SAFETY: callers pass an `a` holding lda·(n − 1) + n elements or more (an n×n
        // matrix with leading dimension lda ≥ n) and a `b` holding rows·n (rows×n with
        // leading dimension rows): the shapes of a right-side solve with an n×n
        // triangle, in place on b.
        let status = unsafe {
            T::trsm(
                h.raw,
                cublasSideMode_t::CUBLAS_SIDE_RIGHT,
                fill(t.uplo),
                op(t.trans),
                diag(t.unit),
                i64_of(rows),
                i64_of(n),
                &T::one(),
                pa,
                i64_of(lda),
                pb,
                i64_of(rows),
            )
        };
        error::cublas(status, doing)
    }

    /// `op(T)·X = B` in place on the row-major n×nrhs `b`, T the triangle `tri` of the
    /// square `a` (checked by the caller, as b's n rows).
    pub(crate) fn solve_triangular_kernel<T: BlasElement>(
        &self,
        (a, tri, b): (&Matrix<T>, Triangular, &mut Matrix<T>),
    ) -> Result<()> {
        let op = OP;
        let gpu = &self.gpu;
        let da = gpu.dm(self.here(), op, "A", a)?;
        let db = gpu.dm_mut(self.here(), op, "B", b)?;
        let n = da.rows;
        if db.is_empty() || n == 0 {
            return Ok(());
        }
        if !tri.unit {
            let diag = self.read_diagonal(op, &da.data, n + 1, n)?;
            if let Some(pivot) = backend::first_zero_diagonal(&diag) {
                return Err(Error::Singular { op, pivot });
            }
        }
        let nrhs = db.cols;
        self.trsm_right(
            (&da.data, n),
            right_side(tri),
            &mut db.data,
            (nrhs, n),
            "solve_triangular (trsm)",
        )
    }
}

/// Host models of what the device calls compute, for checking the algebra without a GPU.
#[cfg(test)]
pub(crate) mod reference {
    use ndarray::{s, Array2, Axis};
    use ndgpu_core::{Trans, Triangular, Uplo};

    /// The triangle `uplo` of `m`, with ones on the diagonal if `unit`.
    pub fn triangle(m: &Array2<f64>, uplo: Uplo, unit: bool) -> Array2<f64> {
        Array2::from_shape_fn(m.dim(), |(i, j)| match (i == j, uplo) {
            (true, _) if unit => 1.0,
            (true, _) => m[[i, j]],
            (false, Uplo::Lower) if i > j => m[[i, j]],
            (false, Uplo::Upper) if i < j => m[[i, j]],
            _ => 0.0,
        })
    }

    /// `op(m)`.
    pub fn apply(t: Trans, m: Array2<f64>) -> Array2<f64> {
        match t {
            Trans::No => m,
            Trans::Yes => m.reversed_axes().as_standard_layout().into_owned(),
        }
    }

    /// X with `a·X = b`, by Gauss–Jordan elimination with partial pivoting on `[a | b]`.
    pub fn dense_solve(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
        let n = a.nrows();
        let mut ab = ndarray::concatenate(Axis(1), &[a.view(), b.view()]).expect("n rows");
        for c in 0..n {
            let p = (c..n)
                .max_by(|&i, &j| ab[[i, c]].abs().total_cmp(&ab[[j, c]].abs()))
                .unwrap();
            let pivot = ab.row(p).to_owned() / ab[[p, c]];
            let displaced = ab.row(c).to_owned();
            ab.row_mut(p).assign(&displaced);
            ab.row_mut(c).assign(&pivot);
            for r in (0..n).filter(|&r| r != c) {
                let f = ab[[r, c]];
                ab.row_mut(r).scaled_add(-f, &pivot);
            }
        }
        ab.slice(s![.., n..]).to_owned()
    }

    /// What a right-side TRSM with the triangle `t` of the column-major matrix `m` leaves
    /// in a row-major right-hand side `b`'s buffer: read column-major the buffer is bᵀ,
    /// the TRSM solves `Y·op(Tc) = bᵀ`, and Y read back row-major is
    /// `Yᵀ = op(Tc)⁻ᵀ·b`.
    pub fn right_trsm_on_buffer(m: &Array2<f64>, t: Triangular, b: &Array2<f64>) -> Array2<f64> {
        let w = apply(t.trans, triangle(m, t.uplo, t.unit));
        dense_solve(&w.t().to_owned(), b)
    }

    /// Small seeded values in [1, 2) or their negatives: well conditioned triangles.
    pub fn values(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        Array2::from_shape_fn((rows, cols), |_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let v = 1.0 + (s % 1000) as f64 / 1000.0;
            if s & 1024 == 0 {
                v
            } else {
                -v
            }
        })
    }

    /// The largest absolute difference.
    pub fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        assert_eq!(a.dim(), b.dim());
        a.iter()
            .zip(b.iter())
            .fold(0.0, |m, (x, y)| m.max((x - y).abs()))
    }
}

#[cfg(test)]
mod tests {
    use super::reference::*;
    use super::*;

    #[test]
    fn a_right_side_trsm_on_the_buffers_solves_the_row_major_system() {
        for n in 1..6 {
            for uplo in [Uplo::Lower, Uplo::Upper] {
                for trans in [Trans::No, Trans::Yes] {
                    for unit in [false, true] {
                        let tri = Triangular { uplo, trans, unit };
                        let a = values(n, n, n as u64);
                        let b = values(n, 3, 10 + n as u64);
                        let want = dense_solve(&apply(trans, triangle(&a, uplo, unit)), &b);
                        // A's buffer read column-major is Aᵀ.
                        let got = right_trsm_on_buffer(&a.t().to_owned(), right_side(tri), &b);
                        let d = max_diff(&got, &want);
                        assert!(d < 1e-9, "n = {n}, {tri:?}: off by {d}");
                    }
                }
            }
        }
    }
}
