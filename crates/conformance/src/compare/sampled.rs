//! Checks of results too large to compare in full with a host reference: products on
//! sampled rows, columns and elements, Cholesky factors and solves on sampled columns of
//! their residuals, each against the same bounds as the full comparisons (from
//! `ndgpu_core::tolerance`). Sampling can miss an error, but never rejects a correct
//! result. The f64 host work runs on every core ([`crate::par`]). Each check returns why
//! a result is wrong, naming the first offending element.

use ndarray::{Array2, ArrayView1, ArrayView2};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{tolerance, Element};

use crate::par;

/// Largest n for which products and Cholesky factors are checked in full.
pub const FULL_CHECK_MAX_N: usize = 512;

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
    let full = m.max(n).max(a.ncols()) <= FULL_CHECK_MAX_N;
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
    par::map(&at, |&(i, j)| {
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
        if !within(err, bound) {
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
    let norms = par::map(columns, |&j| {
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
        Some((j, r)) if !within(r, limit) => {
            let ratio = r / limit * tolerance::CHOLESKY_RATIO;
            Err(format!(
                "column {j} of A − L·Lᵀ has 1-norm {r:.3e}: ratio to n·ε·‖A‖₁ {ratio:.3e} \
                 above {}",
                tolerance::CHOLESKY_RATIO
            ))
        }
        _ => Ok(()),
    }
}

/// `(‖M‖₁, ‖M‖∞)` in f64.
pub fn norms<T: Element>(m: &Array2<T>) -> (f64, f64) {
    let abs = |f: &dyn Fn(usize) -> f64, n: usize| (0..n).map(f).fold(0.0, f64::max);
    (
        abs(
            &|j| m.column(j).iter().map(|v| v.as_f64().abs()).sum(),
            m.ncols(),
        ),
        abs(
            &|i| m.row(i).iter().map(|v| v.as_f64().abs()).sum(),
            m.nrows(),
        ),
    )
}

/// Checks columns of X solving `M·Mᵀ·X = B`:
/// `‖B − M·(Mᵀ·x)‖₁ / (n·ε·norm·‖x‖₁) ≤ limit` in f64, with `norm` = ‖M‖₁‖M‖∞ (which
/// bounds ‖M·Mᵀ‖₁, the norm LAPACK's ratio takes).
pub fn residual<T: Element>(
    m: &Array2<T>,
    b: &Array2<T>,
    x: &Array2<T>,
    columns: &[usize],
    norm: f64,
    limit: f64,
) -> Result<(), String> {
    let n = m.nrows();
    let m64 = m.mapv(|v| v.as_f64());
    for &j in columns {
        let xj = x.column(j).mapv(|v| v.as_f64());
        let r = b.column(j).mapv(|v| v.as_f64()) - m64.dot(&m64.t().dot(&xj));
        let scale = n as f64 * T::EPS * norm * xj.iter().map(|v| v.abs()).sum::<f64>();
        let ratio = r.iter().map(|v| v.abs()).sum::<f64>() / scale;
        if !within(ratio, limit) {
            return Err(format!(
                "column {j}: ‖B − M·Mᵀ·X‖₁/(n·ε·‖M‖₁‖M‖∞·‖X‖₁) = {ratio:.3e} > {limit}"
            ));
        }
    }
    Ok(())
}

/// Checks a copy: `dst` equals `src` exactly.
///
/// # Errors
/// The first differing element.
pub fn copy<T: Element>(src: &[T], dst: &[T]) -> Result<(), String> {
    if src.len() != dst.len() {
        return Err(format!(
            "copied {} elements, expected {}",
            dst.len(),
            src.len()
        ));
    }
    match src.iter().zip(dst).position(|(a, b)| a != b) {
        Some(i) => Err(format!("element {i} is {}, expected {}", dst[i], src[i])),
        None => Ok(()),
    }
}

/// `err ≤ bound`, and false when either is NaN: a NaN result never passes.
pub fn within(err: f64, bound: f64) -> bool {
    err <= bound
}

/// A result of the expected shape.
pub fn dims<T>(c: &Array2<T>, want: (usize, usize)) -> Result<(), String> {
    if c.dim() == want {
        Ok(())
    } else {
        Err(format!("result is {:?}, expected {want:?}", c.dim()))
    }
}

/// Every element finite.
pub fn finite<T: Element>(c: &Array2<T>) -> Result<(), String> {
    match c.indexed_iter().find(|(_, v)| !v.is_finite()) {
        Some(((i, j), v)) => Err(format!("[{i}, {j}] = {v}")),
        None => Ok(()),
    }
}

/// Bitwise symmetry: the trait promises an exactly symmetric M·Mᵀ, which is its own
/// transpose.
pub fn symmetric<T: Element>(c: &Array2<T>) -> Result<(), String> {
    transpose(c, c).map_err(|e| format!("not symmetric: {e}"))
}

/// `t` is exactly `aᵀ` (no input holds NaN).
pub fn transpose<T: Element>(a: &Array2<T>, t: &Array2<T>) -> Result<(), String> {
    let (r, c) = a.dim();
    dims(t, (c, r))?;
    // Tiles keep both the row-wise and the column-wise walk in cache.
    const TILE: usize = 64;
    for i0 in (0..r).step_by(TILE) {
        for j0 in (0..c).step_by(TILE) {
            for i in i0..(i0 + TILE).min(r) {
                for j in j0..(j0 + TILE).min(c) {
                    if a[[i, j]] != t[[j, i]] {
                        return Err(format!(
                            "out[{j}, {i}] = {}, expected {}",
                            t[[j, i]],
                            a[[i, j]]
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}
