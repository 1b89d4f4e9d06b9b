//! Householder QR (faer's blocked `qr_in_place`), products with Q, and least squares.
//!
//! **FactorLayout: column-major** ([`FactorLayout::ColMajor`]). Householder reflections work on
//! columns, and faer's QR runs fastest on column-major data; a resident row-major n×m
//! buffer read column-major *is* the m×n matrix in column-major order. So A is
//! transposed once (the backend's parallel tiled transpose) into that buffer, and faer
//! factors it there in place: the factor's resident matrix is n×m.
//!
//! **The factor:** `R` on and above the diagonal (LAPACK's, with the same signs:
//! `R[j, j] = −sign(x₀)·‖x‖`), the Householder vectors below it (unit leading entry
//! not stored), and in `tau` faer's block-Householder factors: a `bs`×k matrix (k =
//! min(m, n), `bs` faer's recommended block size for m×n) whose blocks of `bs` columns
//! hold the upper triangular `T` of each block of reflections, `H₀·…·H_{b−1} =
//! I − V·T⁻¹·Vᵀ` (faer's convention: `T`'s diagonal is 1/τ of LAPACK, ∞ for an
//! identity reflection). [`qr_apply_unchecked`](ndgpu_core::FactorizeKernels::qr_apply_unchecked)
//! and `lstsq` apply Q or Qᵀ block by block with GEMMs, never forming Q.
//!
//! **Rank:** faer's QR leaves a column whose part below the current row is negligible
//! (at most 16·(m − j)·ε times its norm) without a reflection of its own, and the next
//! column's reflection takes that row: R stays upper triangular, `A ≈ Q·R` to working
//! precision, and such a column's `R[j, j]` is that negligible part (or zero), which
//! `lstsq`'s rank test ([`ndgpu_core::backend::full_rank`]) names. For a matrix of full
//! column rank (all `lstsq` accepts) this is plain Householder QR, as LAPACK's `geqrf`.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj,
    apply_block_householder_sequence_transpose_on_the_left_in_place_scratch,
    apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj,
};
use faer::linalg::qr::no_pivoting::factor::{
    qr_in_place, qr_in_place_scratch, recommended_block_size,
};
use faer::linalg::triangular_solve::solve_upper_triangular_in_place;
use faer::{Conj, MatRef};
use ndgpu_core::backend::{self, full_rank, HostStorage};
use ndgpu_core::{Error, FactorLayout, Matrix, QrFactor, Result, Trans, TransposeKernels};

use crate::lu::finite_input;
use crate::{mat, mat_mut, par, FaerBackend, FaerElement, HERE};

/// The op of the products with Q, in errors.
const APPLY_OP: &str = "qr_apply";
/// The op of least squares.
const SOLVE_OP: &str = "lstsq";

/// The factor's Householder vectors (below R, column-major m×n) and its block factors
/// (`bs`×k), once the factor is known to be this backend's.
fn parts<'a, T: FaerElement>(
    op: &'static str,
    f: &'a QrFactor<T>,
) -> Result<(MatRef<'a, T>, MatRef<'a, T>)> {
    let (m, n) = f.dim();
    let k = m.min(n);
    let bs = recommended_block_size::<T>(m, n);
    if f.layout() != FactorLayout::ColMajor || f.tau().dim() != (bs, k) {
        return Err(Error::invalid(
            op,
            format!(
                "the QR factor was not made by backend 'faer' (its Q is stored in another \
                 form): factor it with the backend that applies it (tau is {:?}, {:?})",
                f.tau().dim(),
                f.layout()
            ),
        ));
    }
    let s: &HostStorage<T> = HERE.matrix(op, "QR", f.packed())?;
    let h: &HostStorage<T> = HERE.matrix(op, "tau", f.tau())?;
    Ok((
        MatRef::from_column_major_slice(&s.data, m, n),
        mat(&h.data, bs, k),
    ))
}

/// `B ← op(Q)·B` for a row-major m×nrhs B.
fn apply<T: FaerElement>(
    basis: MatRef<'_, T>,
    h: MatRef<'_, T>,
    trans: Trans,
    b: &mut [T],
    nrhs: usize,
) {
    let m = basis.nrows();
    let bs = h.nrows();
    let x = mat_mut(b, m, nrhs);
    match trans {
        Trans::No => {
            let mut mem = MemBuffer::new(
                apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, nrhs),
            );
            apply_block_householder_sequence_on_the_left_in_place_with_conj(
                basis,
                h,
                Conj::No,
                x,
                par(),
                MemStack::new(&mut mem),
            );
        }
        Trans::Yes => {
            let mut mem = MemBuffer::new(
                apply_block_householder_sequence_transpose_on_the_left_in_place_scratch::<T>(
                    m, bs, nrhs,
                ),
            );
            apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj(
                basis,
                h,
                Conj::No,
                x,
                par(),
                MemStack::new(&mut mem),
            );
        }
    }
}

impl FaerBackend {
    /// [`FactorizeKernels::qr_unchecked`](ndgpu_core::FactorizeKernels::qr_unchecked):
    /// checks A on the host, transposes it to column-major and factors it there.
    pub(crate) fn qr_kernel<T: FaerElement>(&self, a: Matrix<T>) -> Result<QrFactor<T>> {
        let (m, n) = a.dim();
        let s: &HostStorage<T> = HERE.matrix("qr", "A", &a)?;
        finite_input("qr", "A", &s.data, (m, n))?;
        // The row-major n×m Aᵀ is A column-major.
        let mut packed = self.transpose_unchecked(&a)?;
        drop(a);
        let k = m.min(n);
        let bs = recommended_block_size::<T>(m, n);
        let mut h = vec![T::zero(); bs * k];
        let s: &mut HostStorage<T> = HERE.matrix_mut("qr", "A", &mut packed)?;
        let qr = faer::MatMut::from_column_major_slice_mut(&mut s.data, m, n);
        let params = Default::default();
        let mut mem = MemBuffer::new(qr_in_place_scratch::<T>(m, n, bs, par(), params));
        qr_in_place(
            qr,
            mat_mut(&mut h, bs, k),
            par(),
            MemStack::new(&mut mem),
            params,
        );
        // Finite input can still overflow: never a non-finite factor. (The buffer is
        // the factor's transpose: the entry is named by its row and column.)
        if let Err(Error::NonFinite {
            value,
            index: (j, i),
            ..
        }) = finite_input("qr", "A", &s.data, (n, m))
        {
            return Err(Error::NonFinite {
                op: "qr",
                what: "A (its factor overflowed)",
                value,
                index: (i, j),
            });
        }
        let tau = backend::matrix(bs, k, HostStorage { data: h });
        Ok(backend::qr_factor(
            packed,
            tau,
            FactorLayout::ColMajor,
            (m, n),
        ))
    }

    /// [`FactorizeKernels::qr_apply_unchecked`](ndgpu_core::FactorizeKernels::qr_apply_unchecked).
    pub(crate) fn qr_apply_kernel<T: FaerElement>(
        &self,
        (f, trans): (&QrFactor<T>, Trans),
        b: &mut Matrix<T>,
    ) -> Result<()> {
        let op = APPLY_OP;
        let (basis, h) = parts(op, f)?;
        let nrhs = b.cols();
        let s: &mut HostStorage<T> = HERE.matrix_mut(op, "B", b)?;
        apply(basis, h, trans, &mut s.data, nrhs);
        Ok(())
    }

    /// [`FactorizeKernels::qr_solve_unchecked`](ndgpu_core::FactorizeKernels::qr_solve_unchecked):
    /// the rank test on R's diagonal, Qᵀ·B in place, then R's back substitution.
    pub(crate) fn qr_solve_kernel<T: FaerElement>(
        &self,
        f: &QrFactor<T>,
        mut b: Matrix<T>,
    ) -> Result<Matrix<T>> {
        let op = SOLVE_OP;
        let (m, n) = f.dim();
        let (basis, h) = parts(op, f)?;
        let diag: Vec<T> = (0..n).map(|j| basis[(j, j)]).collect();
        full_rank(op, &diag, (m, n))?;
        let nrhs = b.cols();
        let s: &mut HostStorage<T> = HERE.matrix_mut(op, "B", &mut b)?;
        apply(basis, h, Trans::Yes, &mut s.data, nrhs);
        // X = R⁻¹ times the first n rows of Qᵀ·B: the first n·nrhs entries, row-major.
        let mut x = std::mem::take(&mut s.data);
        x.truncate(n * nrhs);
        solve_upper_triangular_in_place(basis.get(..n, ..n), mat_mut(&mut x, n, nrhs), par());
        Ok(backend::matrix(n, nrhs, HostStorage { data: x }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rand;
    use ndarray::{array, s, Array2};
    use ndgpu_core::prelude::*;
    use ndgpu_core::QrMode;

    fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        assert_eq!(a.shape(), b.shape());
        a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
    }

    #[test]
    fn r_has_lapacks_signs_on_a_known_matrix() {
        let b = FaerBackend::new();
        // A = [[3, 1], [4, 2]]: the first reflection maps (3, 4) to (−5, 0).
        let (q, r) = b
            .qr(array![[3.0f64, 1.0], [4.0, 2.0]].view(), QrMode::Reduced)
            .unwrap();
        assert!((r[[0, 0]] + 5.0).abs() < 1e-14, "{r}");
        assert!((r[[0, 1]] + 11.0 / 5.0).abs() < 1e-14, "{r}");
        assert_eq!(r[[1, 0]], 0.0);
        assert!(max_diff(&q.dot(&r), &array![[3.0, 1.0], [4.0, 2.0]]) < 1e-14);
    }

    #[test]
    fn q_r_reproduce_a_in_both_modes_and_shapes() {
        let b = FaerBackend::new();
        for (m, n) in [(1, 1), (7, 3), (3, 7), (300, 40), (40, 300), (129, 129)] {
            let a = rand(m, n, (m * 31 + n) as u64);
            let k = m.min(n);
            for (mode, cols) in [(QrMode::Reduced, k), (QrMode::Complete, m)] {
                let (q, r) = b.qr(a.view(), mode).unwrap();
                assert_eq!((q.dim(), r.dim()), ((m, cols), (cols, n)));
                assert!(max_diff(&q.dot(&r), &a) < 1e-12, "{m}x{n} {mode:?}");
                assert!(max_diff(&q.t().dot(&q), &Array2::eye(cols)) < 1e-12);
                assert!((0..cols).all(|i| (0..i.min(n)).all(|j| r[[i, j]] == 0.0)));
            }
        }
    }

    #[test]
    fn lstsq_solves_a_consistent_tall_system_and_refuses_rank_deficiency() {
        let b = FaerBackend::new();
        let a = rand(500, 20, 1);
        let want = rand(20, 2, 2);
        let x = b.lstsq(a.view(), a.dot(&want).view()).unwrap();
        assert!(max_diff(&x, &want) < 1e-12);
        // The normal equations hold for an inconsistent B.
        let rhs = rand(500, 1, 3);
        let x = b.lstsq(a.view(), rhs.view()).unwrap();
        let grad = a.t().dot(&(a.dot(&x) - &rhs));
        assert!(grad.iter().all(|g| g.abs() < 1e-10));
        let mut d = a.clone();
        let c = d.column(3).to_owned() * 2.0 - d.column(1);
        d.slice_mut(s![.., 7]).assign(&c);
        match b.lstsq(d.view(), rhs.view()) {
            Err(Error::RankDeficient { column: 7, .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn applying_q_then_qt_is_the_identity() {
        let b = FaerBackend::new();
        let a = rand(90, 60, 5);
        let f = b.qr_dev(&b.upload(a.view()).unwrap()).unwrap();
        let x0 = rand(90, 4, 6);
        let mut x = b.upload(x0.view()).unwrap();
        b.qr_apply_in_place_dev(&f, Trans::Yes, &mut x).unwrap();
        b.qr_apply_in_place_dev(&f, Trans::No, &mut x).unwrap();
        assert!(max_diff(&b.download(&x).unwrap(), &x0) < 1e-13);
    }
}
