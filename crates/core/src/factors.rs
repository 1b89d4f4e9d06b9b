//! The factors of LU and QR: resident, in the layout their backend computes in, and the
//! host-side arithmetic on them (unpacking, determinants, rank).

use std::fmt;

use ndarray::{Array2, ArrayView2};

use crate::{Element, Error, Indices, Matrix, Place, Result};

/// How a factor's packed m×n matrix is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FactorLayout {
    /// Row-major, as every [`Matrix`]: the resident matrix is m×n.
    RowMajor,
    /// Column-major, LAPACK's order (the vendor's solvers read and write it): the
    /// resident matrix is n×m, the transpose.
    ColMajor,
}

/// The LU factorization `P·A = L·U` of an m×n matrix with partial pivoting, as LAPACK's
/// `getrf` leaves it: `L` (m×k, unit diagonal, not stored) below the diagonal and `U`
/// (k×n) on and above it, packed in one m×n matrix (k = min(m, n)), and the row swaps:
/// for i in 0..k in order, row i was swapped with row `pivots[i]` ≥ i. Every |Lᵢⱼ| ≤ 1.
///
/// Made only by [`Factorize`](crate::Factorize), so a solve cannot be handed an
/// arbitrary matrix as its factor. An exactly singular square matrix still factors
/// (its `U` has a zero on the diagonal, no NaN anywhere); solves and the inverse then
/// refuse it with [`Error::Singular`], and its determinant is 0.
pub struct LuFactor<T> {
    pub(crate) packed: Matrix<T>,
    pub(crate) pivots: Indices,
    pub(crate) layout: FactorLayout,
    pub(crate) dim: (usize, usize),
    pub(crate) zero_pivot: Option<usize>,
}

/// The Householder QR factorization `A = Q·R` of an m×n matrix, as LAPACK's `geqrf`
/// leaves it: `R` (k×n, k = min(m, n)) on and above the diagonal of the packed m×n
/// matrix; below it and in `tau`, the backend's representation of the orthogonal `Q`
/// (m×m), which [`Factorize::qr_apply_in_place_dev`](crate::Factorize::qr_apply_in_place_dev)
/// applies without forming it. On every backend Q is a product of Householder
/// reflections and `R`'s diagonal carries the signs they give.
pub struct QrFactor<T> {
    pub(crate) packed: Matrix<T>,
    pub(crate) tau: Matrix<T>,
    pub(crate) layout: FactorLayout,
    pub(crate) dim: (usize, usize),
}

macro_rules! factor_common {
    ($t:ident) => {
        impl<T: Element> $t<T> {
            /// `(m, n)` of the matrix factored.
            pub fn dim(&self) -> (usize, usize) {
                self.dim
            }
            /// The packed factor, in [`Self::layout`].
            pub fn packed(&self) -> &Matrix<T> {
                &self.packed
            }
            /// How [`Self::packed`] is stored.
            pub fn layout(&self) -> FactorLayout {
                self.layout
            }
            /// Where it lives.
            pub fn place(&self) -> Place {
                self.packed.place()
            }
        }
        impl<T> fmt::Debug for $t<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "{}({:?}, {:?})",
                    stringify!($t),
                    self.packed,
                    self.layout
                )
            }
        }
    };
}
factor_common!(LuFactor);
factor_common!(QrFactor);

impl<T: Element> LuFactor<T> {
    /// The row swaps (min(m, n) of them).
    pub fn pivots(&self) -> &Indices {
        &self.pivots
    }
    /// The first exactly zero pivot `U[p, p]`, if any: the matrix is singular.
    pub fn zero_pivot(&self) -> Option<usize> {
        self.zero_pivot
    }
}

impl<T: Element> QrFactor<T> {
    /// The backend's scalars of the reflections (LAPACK's `tau` on the vendor's and the
    /// reference backends).
    pub fn tau(&self) -> &Matrix<T> {
        &self.tau
    }
}

/// The packed factor read back as a row-major m×n array, whatever its layout.
pub(crate) fn row_major<T: Element>(packed: Array2<T>, layout: FactorLayout) -> Array2<T> {
    match layout {
        FactorLayout::RowMajor => packed,
        FactorLayout::ColMajor => packed.reversed_axes().as_standard_layout().into_owned(),
    }
}

/// The first exactly zero entry on the diagonal of a packed factor.
pub fn first_zero_diagonal<T: Element>(diag: &[T]) -> Option<usize> {
    diag.iter().position(|&d| d == T::zero())
}

/// The first column of an m×n least-squares problem whose `|R[j, j]|` is at most
/// ε·max(m, n)·max |R[i, i]| (NumPy's default `rcond`): [`Error::RankDeficient`].
///
/// # Errors
/// [`Error::RankDeficient`].
pub fn full_rank<T: Element>(op: &'static str, diag: &[T], (m, n): (usize, usize)) -> Result<()> {
    let big = diag.iter().fold(0.0f64, |a, d| a.max(d.as_f64().abs()));
    let tol = T::EPS * m.max(n) as f64 * big;
    // NaN counts as dependent: it is not above the threshold.
    match diag.iter().position(|d| {
        let x = d.as_f64().abs();
        x.is_nan() || x <= tol
    }) {
        Some(column) => Err(Error::RankDeficient {
            op,
            column,
            value: diag[column].as_f64().abs(),
            tol,
        }),
        None => Ok(()),
    }
}

/// `(P, L, U)` with `A = P·L·U` (as `scipy.linalg.lu`) from a row-major packed factor
/// and its row swaps: P is m×m, L m×k with a unit diagonal, U k×n.
pub(crate) fn unpack_lu<T: Element>(
    lu: ArrayView2<T>,
    pivots: &[usize],
) -> (Array2<T>, Array2<T>, Array2<T>) {
    let (m, n) = lu.dim();
    let k = m.min(n);
    let l = Array2::from_shape_fn((m, k), |(i, j)| match i.cmp(&j) {
        std::cmp::Ordering::Greater => lu[[i, j]],
        std::cmp::Ordering::Equal => T::one(),
        std::cmp::Ordering::Less => T::zero(),
    });
    let u = Array2::from_shape_fn((k, n), |(i, j)| if j >= i { lu[[i, j]] } else { T::zero() });
    // perm[r] = the row of A that ended in row r of P·A.
    let mut perm: Vec<usize> = (0..m).collect();
    for (i, &p) in pivots.iter().enumerate() {
        perm.swap(i, p);
    }
    // A = Pᵀ·(L·U) with (P·A)[r] = A[perm[r]], so the returned P (= Pᵀ) has
    // P[perm[r], r] = 1.
    let mut p = Array2::zeros((m, m));
    for (r, &src) in perm.iter().enumerate() {
        p[[src, r]] = T::one();
    }
    (p, l, u)
}

/// `(sign, log|det|)` of a square matrix from its row-major packed LU factor and swaps,
/// in f64: sign 0 and log|det| = −∞ for a singular one (as `numpy.linalg.slogdet`).
pub(crate) fn slogdet<T: Element>(lu: ArrayView2<T>, pivots: &[usize]) -> (f64, f64) {
    let mut sign = 1.0f64;
    let mut log = 0.0f64;
    for (i, &p) in pivots.iter().enumerate() {
        let d = lu[[i, i]].as_f64();
        if d == 0.0 {
            return (0.0, f64::NEG_INFINITY);
        }
        if (p != i) != (d < 0.0) {
            sign = -sign;
        }
        log += d.abs().ln();
    }
    (sign, log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn unpacking_gives_a_equal_p_l_u() {
        // P·A = L·U for A = [[1, 2], [3, 4]]: swap rows, l = 1/3, u = [[3, 4], [0, 2/3]].
        let lu = array![[3.0, 4.0], [1.0 / 3.0, 2.0 - 4.0 / 3.0]];
        let (p, l, u) = unpack_lu(lu.view(), &[1, 1]);
        let a = p.dot(&l).dot(&u);
        let want: Array2<f64> = array![[1.0, 2.0], [3.0, 4.0]];
        assert!((a - want).iter().all(|e: &f64| e.abs() < 1e-15));
        let (s, log) = slogdet(lu.view(), &[1, 1]);
        assert!((s * log.exp() - -2.0f64).abs() < 1e-14, "{s} {log}");
    }

    #[test]
    fn rank_test_names_the_first_small_column() {
        assert!(full_rank::<f64>("lstsq", &[2.0, -1.0, 0.5], (10, 3)).is_ok());
        match full_rank::<f64>("lstsq", &[2.0, 1e-17, 0.0], (10, 3)) {
            Err(Error::RankDeficient { column: 1, .. }) => {}
            other => panic!("{other:?}"),
        }
        let nan = full_rank::<f32>("lstsq", &[1.0, f32::NAN], (2, 2));
        assert!(matches!(nan, Err(Error::RankDeficient { column: 1, .. })));
    }
}
