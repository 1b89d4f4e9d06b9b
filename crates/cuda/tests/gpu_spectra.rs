//! GPU tests of the spectra ladder: the conformance cases on every variant, and
//! `block_jacobi` on tall matrices with graded columns (the singular values against the
//! CPU reference within Weyl's bound, LAPACK's reconstruction and orthogonality
//! ratios), on a rank-deficient one (that call runs `hybrid`), on a wide one, and NaN.
//! Run on a GPU machine with `cargo test -p ndgpu-cuda --test gpu_spectra -- --ignored`.

mod common;

use common::{random, with_variant};
use ndarray::{Array1, Array2};
use ndgpu_conformance::compare::{orthogonality_ratio, svd_ratio};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{tolerance, Element, Error, Factorize, Family};
use ndgpu_cpu::CpuBackend;
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::CudaElement;

common::conformance_test!(conformance_spectra_every_variant, Family::Spectra);

/// A GPU test named `$name` that runs `$f` in f32, then in f64.
macro_rules! in_both_types {
    ($(#[$doc:meta])* $name:ident, $f:ident) => {
        $(#[$doc])*
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            $f::<f32>();
            $f::<f64>();
        }
    };
}

/// An m×n matrix with entries in [−1, 1) and column j scaled by 10^(−5j/(n−1)): column
/// scales from 1 to 1e-5.
fn graded<T: Element>(rng: &mut SplitMix64, m: usize, n: usize) -> Array2<T> {
    let mut a = random::<f64>(rng, m, n);
    for (j, mut c) in a.columns_mut().into_iter().enumerate() {
        c *= 10f64.powf(-5.0 * j as f64 / (n - 1).max(1) as f64);
    }
    a.mapv(T::from_f64)
}

/// Checks the SVD of `a` by `b`: shapes, order, the singular values against the CPU
/// reference's within Weyl's bound `|σ̂ᵢ − σᵢ| ≤ ‖ΔA‖₂` with `‖ΔA‖₂ ≤ c·max(m, n)·ε·‖A‖₂`
/// (c = 30, ‖A‖₂ = σ₁), xBDT01's `‖A − U·S·Vt‖₁ / (max(m, n)·ε·‖A‖₁)` and the
/// orthogonality of U's columns and Vt's rows (‖QᵀQ − I‖₁/(m·ε)), each ≤ 30.
fn check_svd<T: CudaElement>(b: &CudaBackend, a: &Array2<T>, what: &str) {
    let (m, n) = a.dim();
    let k = m.min(n);
    let (u, s, vt) = b.svd(a.view(), false).unwrap();
    assert_eq!((u.dim(), s.len(), vt.dim()), ((m, k), k, (k, n)), "{what}");
    assert!(
        s.windows(2).into_iter().all(|w| w[0] >= w[1]) && s[k - 1] >= T::zero(),
        "{what}: {s}"
    );
    let want: Array1<T> = CpuBackend::new().svdvals(a.view()).unwrap();
    let worst = s
        .iter()
        .zip(&want)
        .map(|(g, w)| (g.as_f64() - w.as_f64()).abs())
        .fold(0.0f64, f64::max);
    let weyl = worst / (m.max(n) as f64 * T::EPS * want[0].as_f64());
    let rec = svd_ratio(a.view(), u.view(), s.view(), vt.view());
    let ou = orthogonality_ratio(u.view());
    let ov = orthogonality_ratio(vt.t());
    assert!(
        weyl <= tolerance::SPECTRUM_RATIO
            && rec <= tolerance::SVD_RATIO
            && ou <= tolerance::ORTHOGONALITY_RATIO
            && ov <= tolerance::ORTHOGONALITY_RATIO,
        "{what} {m}x{n} {}: Weyl {weyl}, reconstruction {rec}, U {ou}, V {ov}",
        T::SUFFIX
    );
    let values = b.svdvals(a.view()).unwrap();
    assert_eq!(values, s, "{what}: svdvals and svd agree");
}

fn tall_graded<T: CudaElement>() {
    let b = with_variant(Family::Spectra, "block_jacobi");
    let a = graded::<T>(&mut SplitMix64::new(21), 100_000, 32);
    check_svd(&b, &a, "block_jacobi, graded");
}

in_both_types!(
    /// block_jacobi on a 100000×32 matrix with column scales from 1 to 1e-5, in both types.
    block_jacobi_on_a_tall_graded_matrix,
    tall_graded
);

fn rank_deficient<T: CudaElement>() {
    let mut a = random::<T>(&mut SplitMix64::new(22), 20_000, 16);
    // Two columns repeated: rank 14, two singular values at rounding level.
    for (to, from) in [(7, 0), (15, 3)] {
        let c = a.column(from).to_owned();
        a.column_mut(to).assign(&c);
    }
    for v in ["auto", "block_jacobi"] {
        check_svd(&with_variant(Family::Spectra, v), &a, v);
    }
}

in_both_types!(
    /// A rank-deficient tall matrix: block_jacobi hands the call to hybrid, which is right.
    a_rank_deficient_tall_matrix_is_still_right,
    rank_deficient
);

fn wide<T: CudaElement>() {
    let a = graded::<T>(&mut SplitMix64::new(23), 5000, 24);
    let a = a.t().as_standard_layout().into_owned();
    for v in ["auto", "block_jacobi", "hybrid"] {
        check_svd(&with_variant(Family::Spectra, v), &a, v);
    }
}

in_both_types!(
    /// A wide 24×5000 matrix (block_jacobi works on Aᵀ and swaps U and V).
    a_wide_matrix_on_every_variant,
    wide
);

fn nan<T: CudaElement>() {
    let mut a = random::<T>(&mut SplitMix64::new(24), 3000, 8);
    a[[1234, 5]] = T::nan();
    let mut sym = random::<T>(&mut SplitMix64::new(25), 40, 40);
    sym[[30, 7]] = T::infinity();
    for v in ["auto", "block_jacobi", "hybrid"] {
        let b = with_variant(Family::Spectra, v);
        for (e, at) in [
            (b.svd(a.view(), false).unwrap_err(), (1234, 5)),
            (b.svdvals(a.view()).unwrap_err(), (1234, 5)),
            (b.eigh(sym.view()).unwrap_err(), (30, 7)),
        ] {
            assert!(
                matches!(e, Error::NonFinite { index, .. } if index == at),
                "{v} {}: {e}",
                T::SUFFIX
            );
        }
    }
}

in_both_types!(
    /// NaN or ±Inf is NonFinite naming the entry, on every variant (block_jacobi finds it
    /// in G and lets hybrid name it).
    nan_or_inf_is_non_finite_naming_the_entry,
    nan
);
