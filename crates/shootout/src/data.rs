//! Host inputs of every case, generated deterministically from a seed (the same case
//! gets the same numbers on every machine and for every backend), in parallel because
//! the largest cases hold 2²⁸ elements.

use ndarray::{Array1, Array2};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{Element, Ops, Result};

use crate::cases::{Op, KMEANS_D, KMEANS_K};

/// The host inputs of one case.
#[derive(Debug, Clone)]
pub enum Inputs<T> {
    /// `C = A·B`, both n×n, entries uniform in [-1, 1).
    Gemm {
        /// Left factor.
        a: Array2<T>,
        /// Right factor.
        b: Array2<T>,
    },
    /// `M·Mᵀ`, M n×n uniform in [-1, 1).
    Gram {
        /// The matrix.
        m: Array2<T>,
    },
    /// `Aᵀ`, A n×n uniform in [-1, 1).
    Transpose {
        /// The matrix.
        a: Array2<T>,
    },
    /// `Σ x`, uniform in [-1, 1).
    Sum {
        /// The vector.
        x: Array1<T>,
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
}

impl<T: Element> Inputs<T> {
    /// The inputs of `op` at size `n` from `seed`.
    pub fn generate(op: Op, n: usize, seed: u64) -> Inputs<T> {
        let seed = seed ^ (op as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        match op {
            Op::Matmul => Inputs::Gemm {
                a: uniform_matrix(n, n, seed, 1.0),
                b: uniform_matrix(n, n, seed.wrapping_add(1), 1.0),
            },
            Op::Gram => Inputs::Gram {
                m: uniform_matrix(n, n, seed, 1.0),
            },
            Op::Transpose => Inputs::Transpose {
                a: uniform_matrix(n, n, seed, 1.0),
            },
            Op::Sum => Inputs::Sum {
                x: Array1::from(uniform_vec(n, seed, 1.0)),
            },
            Op::Dot => Inputs::Dot {
                x: Array1::from(uniform_vec(n, seed, 1.0)),
                y: Array1::from(uniform_vec(n, seed.wrapping_add(1), 1.0)),
            },
            Op::Cholesky => Inputs::Cholesky {
                a: spd_matrix(n, seed),
            },
            Op::Solve => {
                let mut l: Array2<T> = uniform_matrix(n, n, seed, 1.0);
                for ((i, j), v) in l.indexed_iter_mut() {
                    if j > i {
                        *v = T::zero();
                    } else if j == i {
                        *v = T::from_f64(n as f64);
                    }
                }
                Inputs::Solve {
                    l,
                    b: uniform_matrix(n, n, seed.wrapping_add(1), 1.0),
                }
            }
            Op::KMeans => {
                let (x, centroids) = blobs(n.max(KMEANS_K), seed);
                Inputs::KMeans { x, centroids }
            }
            Op::Chain => {
                let mut m: Array2<T> = uniform_matrix(n, n, seed, 1.0);
                let shift = T::from_f64(2.0 * (n as f64).sqrt());
                m.diag_mut().mapv_inplace(|d| d + shift);
                Inputs::Chain {
                    m,
                    b: uniform_matrix(n, n, seed.wrapping_add(1), 1.0),
                }
            }
            Op::Transfer => {
                let cols = if n.is_multiple_of(4096) { 4096 } else { n };
                Inputs::Transfer {
                    x: uniform_matrix(n / cols.max(1), cols, seed, 1.0),
                }
            }
        }
    }

    /// Bytes of host memory the inputs hold.
    pub fn bytes(&self) -> usize {
        let s = std::mem::size_of::<T>();
        s * match self {
            Inputs::Gemm { a, b } => a.len() + b.len(),
            Inputs::Gram { m } => m.len(),
            Inputs::Transpose { a } | Inputs::Cholesky { a } => a.len(),
            Inputs::Sum { x } => x.len(),
            Inputs::Dot { x, y } => x.len() + y.len(),
            Inputs::KMeans { x, centroids } => x.len() + centroids.len(),
            Inputs::Chain { m, b } | Inputs::Solve { l: m, b } => m.len() + b.len(),
            Inputs::Transfer { x } => x.len(),
        }
    }
}

/// Elements per independently seeded chunk: the numbers do not depend on the number
/// of threads that fill them.
const CHUNK: usize = 1 << 16;

/// `len` values uniform in [-scale, scale) (chunk c seeded by `seed` and c).
pub fn uniform_vec<T: Element>(len: usize, seed: u64, scale: f64) -> Vec<T> {
    let mut v = vec![T::zero(); len];
    crate::par::chunks(&mut v, CHUNK, |c, chunk| {
        let mut rng = SplitMix64::new(seed ^ (c as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
        for x in chunk {
            *x = T::from_f64((2.0 * rng.next_f64() - 1.0) * scale);
        }
    });
    v
}

/// A rows×cols matrix of values uniform in [-scale, scale).
pub fn uniform_matrix<T: Element>(rows: usize, cols: usize, seed: u64, scale: f64) -> Array2<T> {
    Array2::from_shape_vec((rows, cols), uniform_vec(rows * cols, seed, scale))
        .expect("length matches shape")
}

/// The value in [-1, 1) of the unordered pair {i, j}: symmetric by construction.
fn pair_value(seed: u64, i: usize, j: usize) -> f64 {
    let (lo, hi) = if i <= j { (i, j) } else { (j, i) };
    let key = ((hi as u64) << 32) ^ lo as u64;
    let mut rng = SplitMix64::new(seed ^ key.wrapping_mul(0xA24B_AED4_963E_E407));
    2.0 * rng.next_f64() - 1.0
}

/// The SPD matrix of [`Inputs::Cholesky`].
pub fn spd_matrix<T: Element>(n: usize, seed: u64) -> Array2<T> {
    let mut v = vec![T::zero(); n * n];
    // Whole rows per chunk, so that a chunk knows its row indices.
    let rows_per_chunk = (CHUNK / n.max(1)).max(1);
    crate::par::chunks(&mut v, rows_per_chunk * n, |c, chunk| {
        for (r, row) in chunk.chunks_mut(n).enumerate() {
            let i = c * rows_per_chunk + r;
            for (j, x) in row.iter_mut().enumerate() {
                let value = if i == j {
                    n as f64
                } else {
                    pair_value(seed, i, j)
                };
                *x = T::from_f64(value);
            }
        }
    });
    Array2::from_shape_vec((n, n), v).expect("length matches shape")
}

/// The points and starting centroids of [`Inputs::KMeans`].
pub fn blobs<T: Element>(n: usize, seed: u64) -> (Array2<T>, Array2<T>) {
    let centres: Vec<f64> = uniform_vec(KMEANS_K * KMEANS_D, seed, 10.0);
    let noise: Vec<f64> = uniform_vec(n * KMEANS_D, seed.wrapping_add(7), 1.0);
    let x = Array2::from_shape_fn((n, KMEANS_D), |(i, d)| {
        T::from_f64(centres[(i % KMEANS_K) * KMEANS_D + d] + noise[i * KMEANS_D + d])
    });
    let k = KMEANS_K.min(n);
    let centroids = x.slice(ndarray::s![..k, ..]).to_owned();
    (x, centroids)
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
    fn uniform_values_are_deterministic_and_in_range() {
        let a: Vec<f32> = uniform_vec(3 * CHUNK + 5, 42, 1.0);
        let b: Vec<f32> = uniform_vec(3 * CHUNK + 5, 42, 1.0);
        assert_eq!(a, b);
        assert!(a.iter().all(|x| (-1.0..1.0).contains(x)));
        let mean = a.iter().map(|&x| x as f64).sum::<f64>() / a.len() as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        let c: Vec<f32> = uniform_vec(100, 43, 1.0);
        assert_ne!(&a[..100], &c[..]);
    }

    #[test]
    fn spd_matrix_is_symmetric_and_diagonally_dominant() {
        let n = 37;
        let a: Array2<f64> = spd_matrix(n, 5);
        for i in 0..n {
            let off: f64 = (0..n).filter(|&j| j != i).map(|j| a[[i, j]].abs()).sum();
            assert!(a[[i, i]] > off, "row {i}");
            for j in 0..n {
                assert_eq!(a[[i, j]], a[[j, i]]);
            }
        }
        // Chunking by rows must not change the values (CHUNK / n rows per chunk).
        let big: Array2<f32> = spd_matrix(300, 5);
        assert_eq!(big[[299, 3]], big[[3, 299]]);
        assert_eq!(big[[299, 299]], 300.0);
    }

    #[test]
    fn blobs_start_with_one_centroid_per_blob() {
        let (x, c): (Array2<f32>, Array2<f32>) = blobs(1000, 3);
        assert_eq!(x.dim(), (1000, KMEANS_D));
        assert_eq!(c.dim(), (KMEANS_K, KMEANS_D));
        assert_eq!(c.row(5), x.row(5));
        // Point 5 + K is in the same blob as centroid 5: within the noise box.
        let d: f32 = (0..KMEANS_D)
            .map(|j| (x[[5 + KMEANS_K, j]] - c[[5, j]]).abs())
            .fold(0.0, f32::max);
        assert!(d < 2.0, "{d}");
    }

    #[test]
    fn inputs_have_the_case_shapes() {
        match Inputs::<f32>::generate(Op::Dot, 1000, 1) {
            Inputs::Dot { x, y } => {
                assert_eq!((x.len(), y.len()), (1000, 1000));
                assert_ne!(x, y);
            }
            other => panic!("{other:?}"),
        }
        let g = Inputs::<f64>::generate(Op::Matmul, 16, 1);
        assert_eq!(g.bytes(), 2 * 16 * 16 * 8);
    }
}
