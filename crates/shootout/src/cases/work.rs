//! The work of one run of an op (FLOPs or bytes), and how it is counted.

use super::{Op, KMEANS_D, KMEANS_K};
use crate::shape::Shape;
use ndgpu_core::{Pca, PcaSolver};

impl Op {
    /// The work of one run at `shape` with elements of `elem_bytes` bytes: FLOPs for
    /// compute-bound ops, bytes moved for bandwidth-bound ones (see
    /// [`Op::work_formula`]).
    ///
    /// # Panics
    /// For a shape the op does not take ([`Op::takes`]).
    pub fn work(self, shape: Shape, elem_bytes: usize) -> f64 {
        let s = elem_bytes as f64;
        let f = |x: usize| x as f64;
        let kd = (KMEANS_K * KMEANS_D) as f64;
        match (self, shape) {
            (Op::Matmul, Shape::Gemm { m, n, k }) => 2.0 * f(m) * f(n) * f(k),
            (Op::Gram, Shape::Gram { m, k }) => 2.0 * f(m) * f(m) * f(k),
            (Op::Transpose, Shape::Square(n)) => 2.0 * f(n) * f(n) * s,
            (Op::Cholesky, Shape::Square(n)) => f(n).powi(3) / 3.0,
            (Op::Solve | Op::LuSolve, Shape::Square(n)) => 2.0 * f(n).powi(3),
            (Op::Lu, Shape::Square(n)) => 2.0 * f(n).powi(3) / 3.0,
            (Op::Trsm, Shape::Square(n)) => f(n).powi(3),
            (Op::Eigh, Shape::Square(n)) => eigh_flops(f(n)),
            (Op::Svd, Shape::Rect { m, n }) => svd_flops(f(m), f(n)),
            (Op::Pca, Shape::Rect { m, n: d }) => match Pca::solver(m, d) {
                // Xcᵀ·Xc counted as a GEMM, then the d×d eigendecomposition.
                PcaSolver::CovarianceEigh => 2.0 * f(m) * f(d) * f(d) + eigh_flops(f(d)),
                PcaSolver::Svd => svd_flops(f(m), f(d)),
            },
            (Op::Qr | Op::Lstsq, Shape::Rect { m, n }) => {
                // LAPACK's count of geqrf (LAWN 41): 2·m·n² − 2n³/3 for m ≥ n.
                let (big, small) = (f(m.max(n)), f(m.min(n)));
                let qr = 2.0 * big * small * small - 2.0 * small.powi(3) / 3.0;
                match self {
                    // Qᵀ·b (ormqr: 4mn − 2n²) and R⁻¹ of it (n²).
                    Op::Lstsq => qr + 4.0 * f(m) * f(n) - f(n) * f(n),
                    _ => qr,
                }
            }
            (Op::Chain, Shape::Square(n)) => {
                2.0 * f(n).powi(3) + f(n).powi(3) / 3.0 + 2.0 * f(n).powi(3)
            }
            (Op::Sum | Op::SumSq | Op::Argmax, Shape::Matrix { rows, cols, axis }) => {
                let kept = match axis {
                    None => 0,
                    Some(0) => cols,
                    Some(_) => rows,
                };
                let out = if self == Op::Argmax { 8.0 } else { s };
                f(rows) * f(cols) * s + f(kept) * out
            }
            (Op::Dot | Op::Transfer, Shape::Vector(n)) => 2.0 * f(n) * s,
            (Op::KMeans, Shape::Points(n)) => 2.0 * f(n) * kd,
            (op, shape) => panic!("{op} does not take the shape {shape:?}"),
        }
    }

    /// How [`Op::work`] is counted, for the reports.
    pub fn work_formula(self) -> &'static str {
        match self {
            Op::Matmul => "2n³ FLOPs (n×n×n GEMM)",
            Op::Gram => {
                "2n³ GEMM-equivalent FLOPs (M·Mᵀ of an n×n M); the symmetric kernels \
                 compute only one triangle, so they do about half of that"
            }
            Op::Transpose => "2·n²·size bytes (each element read once and written once)",
            Op::Sum | Op::SumSq | Op::Argmax => "n·size bytes (each element read once)",
            Op::Dot => "2n·size bytes (each element of x and y read once)",
            Op::Cholesky => "n³/3 FLOPs (the leading term of the factorization)",
            Op::Solve => "2n³ FLOPs (two triangular solves with n right-hand sides)",
            Op::Lu => "2n³/3 FLOPs (getrf's count; the pivot search and the row swaps not counted)",
            Op::LuSolve => {
                "2n³ FLOPs (two triangular solves with n right-hand sides; the row swaps \
                 not counted)"
            }
            Op::Qr => "4n³/3 FLOPs (geqrf's 2·m·n² − 2n³/3 at m = n)",
            Op::Lstsq => {
                "4n³/3 + 3n² FLOPs (QR, then Qᵀ·b and the triangular solve with R: \
                 2·m·n² − 2n³/3 + 4·m·n − n² at m = n)"
            }
            Op::Trsm => "n³ FLOPs (a triangular solve with n right-hand sides)",
            Op::Eigh => {
                "9n³ FLOPs (Golub and Van Loan's count of the symmetric QR algorithm with \
                 eigenvectors; divide and conquer and Jacobi do other amounts)"
            }
            Op::Svd => {
                "22n³ FLOPs (Golub and Van Loan's count of the reduced SVD with U and V: \
                 the lesser of Golub–Reinsch's 14·m·n² + 8n³ and R-SVD's 6·m·n² + 20n³ at \
                 m = n)"
            }
            Op::Pca => {
                "22n³ FLOPs: the SVD of the centred n×n data (the path scikit-learn's \
                 svd_solver='auto' takes for it); the centring and the signs not counted"
            }
            Op::KMeans => {
                "2·N·K·D FLOPs with K = 128, D = 32: the distances' inner products only; \
                 the argmin (N·K compares) and the centroid update (N·D adds) are not counted"
            }
            Op::Chain => {
                "2n³ + n³/3 + 2n³ FLOPs: M·Mᵀ counted as a GEMM, the factorization's leading \
                 term, and two triangular solves with n right-hand sides"
            }
            Op::Transfer => "2·n·size bytes (each element crosses the bus once each way)",
        }
    }

    /// How [`Op::work`] is counted at any shape, for the reports' tables of shapes (the
    /// same numbers as [`Op::work_formula`] at a ladder's shapes).
    pub fn shape_formula(self) -> &'static str {
        match self {
            Op::Matmul => "2·m·n·k FLOPs (m×k×n: A m×k times B k×n)",
            Op::Gram => {
                "2·m²·k GEMM-equivalent FLOPs (M·Mᵀ of an m×k M); the symmetric kernels \
                 compute only one triangle, so they do about half of that"
            }
            Op::Sum | Op::SumSq => {
                "rows·cols·size bytes read, plus the result written along an axis \
                 (cols values for axis 0, rows for axis 1); a shape reads rows×cols for \
                 the whole matrix, rows×cols axis a along axis a"
            }
            Op::Argmax => {
                "rows·cols·size bytes read, plus the 8-byte indices written along an axis \
                 (cols for axis 0, rows for axis 1); a shape reads rows×cols for the whole \
                 matrix, rows×cols axis a along axis a"
            }
            Op::Qr => "2·m·n² − 2n³/3 FLOPs (geqrf's count, m×n with m ≥ n)",
            Op::Lstsq => {
                "2·m·n² − 2n³/3 + 4·m·n − n² FLOPs (geqrf's count of the m×n QR, then Qᵀ·b \
                 and the triangular solve with R, one right-hand side)"
            }
            Op::Svd => {
                "min(14·m·n² + 8n³, 6·m·n² + 20n³) FLOPs with m ≥ n the larger and the \
                 smaller dimension (Golub and Van Loan: Golub–Reinsch or R-SVD, with U and V)"
            }
            Op::Pca => {
                "for m×d data with d ≤ 1000 and m ≥ 10·d, 2·m·d² + 9d³ FLOPs (Xcᵀ·Xc \
                 counted as a GEMM, then eigh of the d×d covariance); otherwise the SVD's \
                 count of the centred m×d data; the centring and the signs not counted"
            }
            _ => self.work_formula(),
        }
    }
}

/// Golub and Van Loan's count of the symmetric QR algorithm with eigenvectors.
fn eigh_flops(n: f64) -> f64 {
    9.0 * n.powi(3)
}

/// Golub and Van Loan's count of the reduced SVD with U and V of an m×n matrix: the
/// lesser of Golub–Reinsch's and R-SVD's (with m the larger dimension).
fn svd_flops(m: f64, n: f64) -> f64 {
    let (big, small) = (m.max(n), m.min(n));
    let golub_reinsch = 14.0 * big * small * small + 8.0 * small.powi(3);
    let r_svd = 6.0 * big * small * small + 20.0 * small.powi(3);
    golub_reinsch.min(r_svd)
}
