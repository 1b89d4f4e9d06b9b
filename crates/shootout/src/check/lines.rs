//! The f64 host work behind the product and Cholesky checks: which rows, columns and
//! elements are compared, their exact values and bounds.

use ndarray::{Array2, ArrayView1, ArrayView2};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::Element;

/// Random elements checked besides the sampled rows and columns of a large product.
const RANDOM_ELEMENTS: usize = 1024;

/// One element of a product with its exact value and `(|A|·|B|)ᵢⱼ`, which times the
/// relative tolerance is its error bound.
#[derive(Debug, Clone, Copy, Default)]
pub struct Entry {
    i: usize,
    j: usize,
    exact: f64,
    mag: f64,
}

/// The rows (or columns) of an n×n result that are checked: all of them when `full`,
/// else both ends, both sides of the middle, and two pseudo-random ones (every tile
/// size divides n/2 for the power-of-two sizes, so the middle pair straddles a tile
/// edge).
pub fn sample_lines(n: usize, full: bool) -> Vec<usize> {
    if full || n <= 8 {
        return (0..n).collect();
    }
    let mut rng = SplitMix64::new(n as u64);
    let mut v = vec![
        0,
        1,
        n / 2 - 1,
        n / 2,
        n - 2,
        n - 1,
        rng.below(n),
        rng.below(n),
    ];
    v.sort_unstable();
    v.dedup();
    v
}

/// `Σ aₖ·bₖ` and `Σ |aₖ·bₖ|` in f64.
fn dot_mag<T: Element>(a: ArrayView1<T>, b: ArrayView1<T>) -> (f64, f64) {
    a.iter().zip(b).fold((0.0, 0.0), |(s, m), (x, y)| {
        let t = x.as_f64() * y.as_f64();
        (s + t, m + t.abs())
    })
}

/// The checked elements of `C = A·B` given `A` (m×k) and `Bᵀ` (n×k): every element of
/// small products; sampled rows and columns and random elements of large ones.
pub fn product_entries<T: Element>(a: ArrayView2<T>, bt: ArrayView2<T>) -> Vec<Entry> {
    let (m, n) = (a.nrows(), bt.nrows());
    // Contiguous rows make each element one streaming dot product.
    let a = a.as_standard_layout();
    let bt = bt.as_standard_layout();
    let full = m.max(n).max(a.ncols()) <= super::FULL_CHECK_MAX_N;
    let mut at: Vec<(usize, usize)> = Vec::new();
    if full {
        at.extend((0..m).flat_map(|i| (0..n).map(move |j| (i, j))));
    } else {
        for i in sample_lines(m, false) {
            at.extend((0..n).map(|j| (i, j)));
        }
        for j in sample_lines(n, false) {
            at.extend((0..m).map(|i| (i, j)));
        }
        let mut rng = SplitMix64::new(0xE1E);
        at.extend((0..RANDOM_ELEMENTS).map(|_| (rng.below(m), rng.below(n))));
    }
    crate::par::map(&at, |&(i, j)| {
        let (exact, mag) = dot_mag(a.row(i), bt.row(j));
        Entry { i, j, exact, mag }
    })
}

/// Compares `c` with the entries: each within `tol · (|A|·|B|)ᵢⱼ`.
pub fn check_entries<T: Element>(c: &Array2<T>, entries: &[Entry], tol: f64) -> Result<(), String> {
    for e in entries {
        let got = c[[e.i, e.j]].as_f64();
        let err = (got - e.exact).abs();
        let bound = tol * e.mag;
        if !super::within(err, bound) {
            return Err(format!(
                "C[{}, {}] = {got:e}, reference {:e}: error {err:e} above the bound {bound:e}",
                e.i, e.j, e.exact
            ));
        }
    }
    Ok(())
}

/// Checks the factor `l` (lower triangle; the rest is ignored) of `a`: a finite lower
/// triangle with a positive diagonal, and each listed column of `A − L·Lᵀ` with a
/// 1-norm of at most `limit`.
pub fn check_cholesky<T: Element>(
    a: &Array2<T>,
    l: &Array2<T>,
    columns: &[usize],
    limit: f64,
) -> Result<(), String> {
    let n = a.nrows();
    for i in 0..n {
        for j in 0..=i {
            let v = l[[i, j]];
            if !v.is_finite() || (i == j && v <= T::zero()) {
                return Err(format!("L[{i}, {j}] = {v}"));
            }
        }
    }
    let l = l.as_standard_layout();
    let norms = crate::par::map(columns, |&j| {
        let lj = l.row(j);
        (0..n)
            .map(|i| {
                // (L·Lᵀ)ᵢⱼ = Σₖ Lᵢₖ·Lⱼₖ over k ≤ min(i, j): the lower triangle only.
                let kmax = i.min(j) + 1;
                let li = l.row(i);
                let llt: f64 = (0..kmax).map(|k| li[k].as_f64() * lj[k].as_f64()).sum();
                (a[[i, j]].as_f64() - llt).abs()
            })
            .sum::<f64>()
    });
    let worst = columns
        .iter()
        .zip(&norms)
        .max_by(|x, y| x.1.total_cmp(y.1))
        .map(|(&j, &r)| (j, r));
    match worst {
        Some((j, r)) if !super::within(r, limit) => {
            let ratio = r / limit * ndgpu_core::tolerance::CHOLESKY_RATIO;
            Err(format!(
                "column {j} of A − L·Lᵀ has 1-norm {r:.3e}: ratio to n·ε·‖A‖₁ {ratio:.3e} \
                 above {}",
                ndgpu_core::tolerance::CHOLESKY_RATIO
            ))
        }
        _ => Ok(()),
    }
}
