//! Host inputs of every case, from the conformance suite's generators of large inputs
//! (deterministic for a seed on every machine and for every backend, filled on every
//! core because the largest cases hold 2²⁸ elements).

use ndarray::{Array1, Array2};
use ndgpu_conformance::data::{cyclic_blobs, dominant_spd, uniform_matrix, uniform_vec};
use ndgpu_core::{Element, Ops, Result};

use crate::cases::{Op, Reduction, KMEANS_D, KMEANS_K, PCA_COMPONENTS};
use crate::shape::Shape;

/// The host inputs of one case.
#[derive(Debug, Clone)]
pub enum Inputs<T> {
    /// `C = A·B`, A m×k and B k×n, entries uniform in [-1, 1).
    Gemm {
        /// Left factor.
        a: Array2<T>,
        /// Right factor.
        b: Array2<T>,
    },
    /// `M·Mᵀ`, M m×k uniform in [-1, 1).
    Gram {
        /// The matrix.
        m: Array2<T>,
    },
    /// `Aᵀ`, A n×n uniform in [-1, 1).
    Transpose {
        /// The matrix.
        a: Array2<T>,
    },
    /// A reduction of a matrix uniform in [-1, 1), whole or along an axis (a ladder's
    /// sum of n elements: one row of n, reduced whole).
    Reduce {
        /// The matrix.
        x: Array2<T>,
        /// What is computed.
        reduction: Reduction,
        /// The axis reduced along; `None`: every element.
        axis: Option<usize>,
    },
    /// `Σ x·y`, both uniform in [-1, 1).
    Dot {
        /// First vector.
        x: Array1<T>,
        /// Second vector.
        y: Array1<T>,
    },
    /// Cholesky of a symmetric, strictly diagonally dominant matrix with diagonal n:
    /// off-diagonal entries uniform in [-1, 1), so by Gershgorin every eigenvalue is
    /// above 1 and the matrix is SPD for every n.
    Cholesky {
        /// The SPD matrix (both triangles filled).
        a: Array2<T>,
    },
    /// A solve with a given factor: L lower triangular with n on the diagonal and
    /// entries uniform in [-1, 1) below it (strictly diagonally dominant, so L and
    /// A = L·Lᵀ are well conditioned at every n); B n×n uniform in [-1, 1).
    Solve {
        /// The factor.
        l: Array2<T>,
        /// The right-hand sides.
        b: Array2<T>,
    },
    /// One Lloyd iteration: N points in K = 128 blobs of D = 32 dimensions (point i in
    /// blob i mod K, centres uniform in [-10, 10)ᴰ, noise uniform in [-1, 1)ᴰ), and
    /// as starting centroids the first K points (one per blob).
    KMeans {
        /// The points, N × D.
        x: Array2<T>,
        /// The starting centroids, K × D.
        centroids: Array2<T>,
    },
    /// `M·Mᵀ`, its factor, and the solve with n right-hand sides: M n×n uniform in
    /// [-1, 1) plus 2√n on the diagonal, so that its singular values lie within about
    /// [0.85√n, 3.2√n] (those of the random part are below 1.16√n) and `M·Mᵀ` is
    /// positive definite with a condition number under 15 at every n; B n×n uniform.
    Chain {
        /// The matrix whose Gram matrix is factored.
        m: Array2<T>,
        /// The right-hand sides.
        b: Array2<T>,
    },
    /// An upload and a download: n elements uniform in [-1, 1), as rows of 4096 (or one
    /// row when n is no multiple of 4096).
    Transfer {
        /// The host array.
        x: Array2<T>,
    },
    /// LU of A n×n uniform in [-1, 1) plus n on the diagonal (strictly diagonally
    /// dominant by columns, so nonsingular and well conditioned at every n).
    Lu {
        /// The matrix.
        a: Array2<T>,
    },
    /// `A·X = B` with A's LU factor: A as [`Inputs::Lu`]'s, B n×n uniform in [-1, 1).
    LuSolve {
        /// The matrix (factored outside the timed region).
        a: Array2<T>,
        /// The right-hand sides.
        b: Array2<T>,
    },
    /// QR of A m×n uniform in [-1, 1).
    Qr {
        /// The matrix.
        a: Array2<T>,
    },
    /// Least squares: A m×n uniform in [-1, 1) plus 2√n on its diagonal (a square
    /// uniform matrix alone can come within the rank test's tolerance; with the shift its
    /// singular values lie above about 0.85√n, and a tall one's are about √(m/3)), b m×1
    /// uniform in [-1, 1).
    Lstsq {
        /// The matrix.
        a: Array2<T>,
        /// The right-hand side.
        b: Array2<T>,
    },
    /// `L·X = B`: L lower triangular with n on the diagonal and entries uniform in
    /// [-1, 1) below it (zeros above; as [`Inputs::Solve`]'s factor), B n×n uniform.
    Trsm {
        /// The triangular matrix.
        a: Array2<T>,
        /// The right-hand sides.
        b: Array2<T>,
    },
    /// `eigh` of a symmetric A n×n: its lower triangle uniform in [-1, 1), mirrored
    /// (both triangles filled; eigenvalues spread over about [-√n·1.15, √n·1.15]).
    Eigh {
        /// The symmetric matrix.
        a: Array2<T>,
    },
    /// The reduced SVD of A m×n uniform in [-1, 1).
    Svd {
        /// The matrix.
        a: Array2<T>,
    },
    /// A PCA fit to `k` components of X m×d: column j uniform in [-1, 1) times
    /// 1/√(j + 1), plus a mean uniform in [-1, 1) (so the variances of the features
    /// decrease, the leading components are distinct, and the centring matters).
    Pca {
        /// The data, samples × features.
        x: Array2<T>,
        /// The components kept: min(m, d, [`PCA_COMPONENTS`]).
        k: usize,
    },
}

/// An n×n matrix uniform in [-1, 1) with `diag` added to its diagonal.
fn shifted<T: Element>(n: usize, seed: u64, diag: f64) -> Array2<T> {
    let mut m: Array2<T> = uniform_matrix(n, n, seed, 1.0);
    let shift = T::from_f64(diag);
    m.diag_mut().mapv_inplace(|d| d + shift);
    m
}

/// An n×n symmetric matrix: its lower triangle uniform in [-1, 1), mirrored.
fn symmetric<T: Element>(n: usize, seed: u64) -> Array2<T> {
    let mut a: Array2<T> = uniform_matrix(n, n, seed, 1.0);
    for i in 0..n {
        for j in i + 1..n {
            a[[i, j]] = a[[j, i]];
        }
    }
    a
}

/// m×d data whose column j is uniform in [-1, 1) times 1/√(j + 1), plus a mean per
/// column uniform in [-1, 1).
fn features<T: Element>(m: usize, d: usize, seed: u64) -> Array2<T> {
    let mut x: Array2<T> = uniform_matrix(m, d, seed, 1.0);
    let mean = uniform_vec::<T>(d, seed.wrapping_add(1), 1.0);
    for mut row in x.rows_mut() {
        for (j, v) in row.iter_mut().enumerate() {
            let scaled = v.as_f64() / ((j + 1) as f64).sqrt() + mean[j].as_f64();
            *v = T::from_f64(scaled);
        }
    }
    x
}

/// L lower triangular with n on the diagonal and entries uniform in [-1, 1) below it.
fn dominant_lower<T: Element>(n: usize, seed: u64) -> Array2<T> {
    let mut l: Array2<T> = uniform_matrix(n, n, seed, 1.0);
    for ((i, j), v) in l.indexed_iter_mut() {
        if j > i {
            *v = T::zero();
        } else if j == i {
            *v = T::from_f64(n as f64);
        }
    }
    l
}

impl<T: Element> Inputs<T> {
    /// The inputs of `op` at `shape` from `seed`.
    ///
    /// # Panics
    /// For a shape the op does not take ([`Op::takes`]).
    pub fn generate(op: Op, shape: Shape, seed: u64) -> Inputs<T> {
        assert!(op.takes(shape), "{op} does not take the shape {shape:?}");
        let seed = seed ^ (op as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let n = shape.dims()[0];
        match (op, shape) {
            (Op::Matmul, Shape::Gemm { m, n, k }) => Inputs::Gemm {
                a: uniform_matrix(m, k, seed, 1.0),
                b: uniform_matrix(k, n, seed.wrapping_add(1), 1.0),
            },
            (Op::Gram, Shape::Gram { m, k }) => Inputs::Gram {
                m: uniform_matrix(m, k, seed, 1.0),
            },
            (Op::Transpose, _) => Inputs::Transpose {
                a: uniform_matrix(n, n, seed, 1.0),
            },
            (_, Shape::Matrix { rows, cols, axis }) => Inputs::Reduce {
                x: uniform_matrix(rows, cols, seed, 1.0),
                reduction: op.reduction().expect("an op of matrices is a reduction"),
                axis,
            },
            (Op::Dot, _) => Inputs::Dot {
                x: Array1::from(uniform_vec(n, seed, 1.0)),
                y: Array1::from(uniform_vec(n, seed.wrapping_add(1), 1.0)),
            },
            (Op::Cholesky, _) => Inputs::Cholesky {
                a: dominant_spd(n, seed),
            },
            (Op::Solve, _) => Inputs::Solve {
                l: dominant_lower(n, seed),
                b: uniform_matrix(n, n, seed.wrapping_add(1), 1.0),
            },
            (Op::Trsm, _) => Inputs::Trsm {
                a: dominant_lower(n, seed),
                b: uniform_matrix(n, n, seed.wrapping_add(1), 1.0),
            },
            (Op::Lu, _) => Inputs::Lu {
                a: shifted(n, seed, n as f64),
            },
            (Op::LuSolve, _) => Inputs::LuSolve {
                a: shifted(n, seed, n as f64),
                b: uniform_matrix(n, n, seed.wrapping_add(1), 1.0),
            },
            (Op::Qr, Shape::Rect { m, n }) => Inputs::Qr {
                a: uniform_matrix(m, n, seed, 1.0),
            },
            (Op::Lstsq, Shape::Rect { m, n }) => {
                let mut a: Array2<T> = uniform_matrix(m, n, seed, 1.0);
                let shift = T::from_f64(2.0 * (n as f64).sqrt());
                a.diag_mut().mapv_inplace(|d| d + shift);
                Inputs::Lstsq {
                    a,
                    b: uniform_matrix(m, 1, seed.wrapping_add(1), 1.0),
                }
            }
            (Op::Eigh, _) => Inputs::Eigh {
                a: symmetric(n, seed),
            },
            (Op::Svd, Shape::Rect { m, n }) => Inputs::Svd {
                a: uniform_matrix(m, n, seed, 1.0),
            },
            (Op::Pca, Shape::Rect { m, n: d }) => Inputs::Pca {
                x: features(m, d, seed),
                k: d.min(m).min(PCA_COMPONENTS),
            },
            (Op::KMeans, _) => {
                let (x, centroids) = cyclic_blobs(n.max(KMEANS_K), KMEANS_K, KMEANS_D, seed);
                Inputs::KMeans { x, centroids }
            }
            (Op::Chain, _) => Inputs::Chain {
                m: shifted(n, seed, 2.0 * (n as f64).sqrt()),
                b: uniform_matrix(n, n, seed.wrapping_add(1), 1.0),
            },
            (Op::Transfer, _) => {
                let cols = if n.is_multiple_of(4096) { 4096 } else { n };
                Inputs::Transfer {
                    x: uniform_matrix(n / cols.max(1), cols, seed, 1.0),
                }
            }
            (op, shape) => unreachable!("{op} takes {shape:?}"),
        }
    }

    /// Bytes of host memory the inputs hold.
    pub fn bytes(&self) -> usize {
        let s = std::mem::size_of::<T>();
        s * match self {
            Inputs::Gemm { a, b } => a.len() + b.len(),
            Inputs::Gram { m } => m.len(),
            Inputs::Transpose { a } | Inputs::Cholesky { a } => a.len(),
            Inputs::Lu { a } | Inputs::Qr { a } => a.len(),
            Inputs::Eigh { a } | Inputs::Svd { a } | Inputs::Pca { x: a, .. } => a.len(),
            Inputs::LuSolve { a, b } | Inputs::Lstsq { a, b } | Inputs::Trsm { a, b } => {
                a.len() + b.len()
            }
            Inputs::Reduce { x, .. } => x.len(),
            Inputs::Dot { x, y } => x.len() + y.len(),
            Inputs::KMeans { x, centroids } => x.len() + centroids.len(),
            Inputs::Chain { m, b } | Inputs::Solve { l: m, b } => m.len() + b.len(),
            Inputs::Transfer { x } => x.len(),
        }
    }
}

/// A host array of the transfer op: an ordinary one or the backend's own.
pub enum HostBuf<T> {
    /// An ndarray in ordinary (pageable) memory.
    Pageable(Array2<T>),
    /// The backend's [`ndgpu_core::HostArray`] (pinned on a GPU).
    Pinned(ndgpu_core::HostArray<T>),
}

impl<T: Element> HostBuf<T> {
    /// A copy of `x`, in the backend's host array when `pinned`.
    pub(crate) fn of(ops: &dyn Ops<T>, x: &Array2<T>, pinned: bool) -> Result<Self> {
        Ok(match pinned {
            false => HostBuf::Pageable(x.clone()),
            true => {
                let mut h = ops.host_array(x.nrows(), x.ncols())?;
                h.view_mut().assign(x);
                HostBuf::Pinned(h)
            }
        })
    }

    pub(crate) fn view(&self) -> ndarray::ArrayView2<'_, T> {
        match self {
            HostBuf::Pageable(a) => a.view(),
            HostBuf::Pinned(h) => h.view(),
        }
    }

    pub(crate) fn view_mut(&mut self) -> ndarray::ArrayViewMut2<'_, T> {
        match self {
            HostBuf::Pageable(a) => a.view_mut(),
            HostBuf::Pinned(h) => h.view_mut(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_have_the_case_shapes() {
        match Inputs::<f32>::generate(Op::Dot, Op::Dot.shape(1000), 1) {
            Inputs::Dot { x, y } => {
                assert_eq!((x.len(), y.len()), (1000, 1000));
                assert_ne!(x, y);
            }
            other => panic!("{other:?}"),
        }
        let g = Inputs::<f64>::generate(Op::Matmul, Op::Matmul.shape(16), 1);
        assert_eq!(g.bytes(), 2 * 16 * 16 * 8);
        match Inputs::<f32>::generate(Op::Matmul, Shape::gemm(7, 3, 5), 1) {
            Inputs::Gemm { a, b } => assert_eq!((a.dim(), b.dim()), ((7, 3), (3, 5))),
            other => panic!("{other:?}"),
        }
        match Inputs::<f32>::generate(Op::Gram, Shape::gram(9, 4), 1) {
            Inputs::Gram { m } => assert_eq!(m.dim(), (9, 4)),
            other => panic!("{other:?}"),
        }
        match Inputs::<f32>::generate(Op::Argmax, Shape::matrix(5, 6, Some(1)), 1) {
            Inputs::Reduce { x, reduction, axis } => {
                assert_eq!((x.dim(), axis), ((5, 6), Some(1)));
                assert_eq!(reduction, Op::Argmax.reduction().unwrap());
            }
            other => panic!("{other:?}"),
        }
    }
}
