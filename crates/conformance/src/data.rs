//! Seeded test data and memory layouts.
//!
//! Everything here is deterministic for a given seed ([`SplitMix64`] behaves the same
//! on every platform), so a failing case can be rerun exactly.

use ndarray::{s, Array2, ArrayView2, ShapeBuilder};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::Element;

/// A seeded generator of test values.
#[derive(Debug, Clone)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(SplitMix64::new(seed))
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.0.next_f64()
    }

    /// Uniform in `[-1, 1)`, never exactly zero (so no matrix is all zeros and no
    /// relative bound degenerates).
    pub fn value(&mut self) -> f64 {
        loop {
            let v = self.uniform(-1.0, 1.0);
            if v != 0.0 {
                return v;
            }
        }
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.0.next_f64(); // in (0, 1]: the log is finite
        let u2 = self.0.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Uniform index below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    /// An `rows × cols` matrix of [`Rng::value`]s rounded to `T`.
    pub fn matrix<T: Element>(&mut self, rows: usize, cols: usize) -> Array2<T> {
        Array2::from_shape_simple_fn((rows, cols), || T::from_f64(self.value()))
    }
}

/// How a logical matrix is laid out in memory when handed to a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Row-major, contiguous.
    C,
    /// Column-major, contiguous.
    F,
    /// The transpose (`.t()`) of a C-ordered array of the transposed shape.
    Transposed,
    /// Every other row, columns from 1 (`.slice(s![..;2, 1..])`), of a larger array
    /// whose skipped elements are NaN: reading them shows up as NaN in the result.
    Strided,
    /// Rows and columns reversed (`.slice(s![..;-1, ..;-1])`): negative strides.
    Reversed,
}

impl Layout {
    /// Every layout.
    pub const ALL: [Layout; 5] = [
        Layout::C,
        Layout::F,
        Layout::Transposed,
        Layout::Strided,
        Layout::Reversed,
    ];

    /// The layout `i` steps along [`Layout::ALL`] (wrapping), to cycle layouts over
    /// cases without taking every combination.
    pub fn nth(i: usize) -> Layout {
        Layout::ALL[i % Layout::ALL.len()]
    }

    /// Short name for case descriptions.
    pub fn name(self) -> &'static str {
        match self {
            Layout::C => "C",
            Layout::F => "F",
            Layout::Transposed => "T",
            Layout::Strided => "strided",
            Layout::Reversed => "reversed",
        }
    }
}

/// A matrix stored in a given [`Layout`]; [`Laid::view`] shows the logical matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Laid<T> {
    storage: Array2<T>,
    layout: Layout,
}

impl<T: Element> Laid<T> {
    /// Stores `a` (logical contents) in `layout`.
    pub fn new(a: &Array2<T>, layout: Layout) -> Self {
        let (m, n) = a.dim();
        let storage = match layout {
            Layout::C => a.as_standard_layout().into_owned(),
            Layout::F => {
                let col_major: Vec<T> = a.t().iter().copied().collect();
                Array2::from_shape_vec((m, n).f(), col_major).expect("m·n elements")
            }
            Layout::Transposed => a.t().as_standard_layout().into_owned(),
            Layout::Strided => {
                let mut big = Array2::from_elem((2 * m, n + 1), T::nan());
                big.slice_mut(s![..;2, 1..]).assign(a);
                big
            }
            Layout::Reversed => {
                let mut st = Array2::zeros((m, n));
                st.slice_mut(s![..;-1, ..;-1]).assign(a);
                st
            }
        };
        Laid { storage, layout }
    }

    /// The logical matrix, in this layout.
    pub fn view(&self) -> ArrayView2<'_, T> {
        match self.layout {
            Layout::C | Layout::F => self.storage.view(),
            Layout::Transposed => self.storage.t(),
            Layout::Strided => self.storage.slice(s![..;2, 1..]),
            Layout::Reversed => self.storage.slice(s![..;-1, ..;-1]),
        }
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The logical shape.
    pub fn dim(&self) -> (usize, usize) {
        self.view().dim()
    }
}

/// A random symmetric positive-definite `n × n` matrix `B·Bᵀ + n·I` (B random),
/// formed in f64, rounded to `T` and exactly symmetric. Its eigenvalues lie in
/// `[n, n + ‖B‖²]`, so it is well conditioned and stays definite after rounding.
pub fn spd<T: Element>(rng: &mut Rng, n: usize) -> Array2<T> {
    let b: Array2<f64> = rng.matrix(n, n);
    let g = b.dot(&b.t());
    Array2::from_shape_fn((n, n), |(i, j)| {
        let v = g[[i.max(j), i.min(j)]] + if i == j { n as f64 } else { 0.0 };
        T::from_f64(v)
    })
}

/// A symmetric positive definite matrix of order `n` whose 2-norm condition number is
/// `cond`: Q·diag(σ)·Qᵀ with σ falling from 1 to 1/cond in geometric steps (LAPACK's
/// DLATMS mode 3) and Q orthogonal (modified Gram–Schmidt, twice, on a random matrix),
/// formed in f64 and rounded to `T`, which moves the eigenvalues by up to about
/// n·ε_T·‖A‖₂.
pub fn spd_with_condition<T: Element>(rng: &mut Rng, n: usize, cond: f64) -> Array2<T> {
    let mut q: Array2<f64> = rng.matrix(n, n);
    for _ in 0..2 {
        for j in 0..n {
            for i in 0..j {
                let qi = q.column(i).to_owned();
                let r = qi.dot(&q.column(j));
                q.column_mut(j).scaled_add(-r, &qi);
            }
            let norm = q.column(j).dot(&q.column(j)).sqrt();
            q.column_mut(j).mapv_inplace(|x| x / norm);
        }
    }
    let sigma = |k: usize| cond.powf(-(k as f64) / (n.max(2) - 1) as f64);
    let qs = Array2::from_shape_fn((n, n), |(i, k)| q[[i, k]] * sigma(k));
    let a = qs.dot(&q.t());
    Array2::from_shape_fn((n, n), |(i, j)| T::from_f64(a[[i.max(j), i.min(j)]]))
}

/// Consecutive rejected centres after which [`blobs`] starts its placement over.
const MAX_MISSES: usize = 10_000;

/// `k` well-separated Gaussian blobs of `per_blob` points each in `d` dimensions:
/// centres at least `12·√d + 20` apart in a box of side `~40·k`, unit standard
/// deviation. Returns the points (blob after blob) and each point's blob.
pub fn blobs<T: Element>(
    rng: &mut Rng,
    k: usize,
    per_blob: usize,
    d: usize,
) -> (Array2<T>, Vec<usize>) {
    let sep = 12.0 * (d as f64).sqrt() + 20.0;
    let half = 20.0 * k as f64 + sep;
    let mut centres: Vec<Vec<f64>> = Vec::with_capacity(k);
    let mut misses = 0;
    while centres.len() < k {
        let c: Vec<f64> = (0..d).map(|_| rng.uniform(-half, half)).collect();
        let far = centres.iter().all(|o| {
            let d2: f64 = o.iter().zip(&c).map(|(a, b)| (a - b) * (a - b)).sum();
            d2 >= sep * sep
        });
        // The box leaves room for k centres, so rejection usually ends quickly; d = 0
        // has only one point and cannot separate anything, so it takes what it gets.
        if far || d == 0 {
            centres.push(c);
            misses = 0;
        } else {
            misses += 1;
        }
        // Random placement can jam (in one dimension, centres dropped at random fill
        // about three quarters of the room there is): after a long run of misses, start
        // over. Draws that never jam are unchanged.
        if misses == MAX_MISSES {
            centres.clear();
            misses = 0;
        }
    }
    let n = k * per_blob;
    let mut blob = Vec::with_capacity(n);
    let x = Array2::from_shape_fn((n, d), |(i, c)| {
        if c == 0 {
            blob.push(i / per_blob);
        }
        T::from_f64(centres[i / per_blob][c] + rng.normal())
    });
    if d == 0 {
        blob = (0..n).map(|i| i / per_blob).collect();
    }
    (x, blob)
}

/// `n` points uniform in `[0, 1)^d`.
pub fn uniform_points<T: Element>(rng: &mut Rng, n: usize, d: usize) -> Array2<T> {
    Array2::from_shape_simple_fn((n, d), || T::from_f64(rng.uniform(0.0, 1.0)))
}

/// Elements per independently seeded chunk of the large generators below: the numbers
/// do not depend on the number of threads that fill them.
const CHUNK: usize = 1 << 16;

/// The generator of chunk `c` of a large array of `seed`.
fn chunk_rng(seed: u64, c: usize) -> Rng {
    Rng::new(seed ^ (c as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// `len` values uniform in `[-scale, scale)`, filled on every core (chunk c from
/// its own stream of `seed`): for inputs of up to 2²⁸ elements.
pub fn uniform_vec<T: Element>(len: usize, seed: u64, scale: f64) -> Vec<T> {
    let mut v = vec![T::zero(); len];
    crate::par::chunks(&mut v, CHUNK, |c, chunk| {
        let mut rng = chunk_rng(seed, c);
        for x in chunk {
            *x = T::from_f64(rng.uniform(-scale, scale));
        }
    });
    v
}

/// A `rows × cols` matrix of [`uniform_vec`] values.
pub fn uniform_matrix<T: Element>(rows: usize, cols: usize, seed: u64, scale: f64) -> Array2<T> {
    Array2::from_shape_vec((rows, cols), uniform_vec(rows * cols, seed, scale))
        .expect("length matches shape")
}

/// The value in `[-1, 1)` of the unordered pair {i, j}: symmetric by construction.
fn pair_value(seed: u64, i: usize, j: usize) -> f64 {
    let (lo, hi) = if i <= j { (i, j) } else { (j, i) };
    let key = ((hi as u64) << 32) ^ lo as u64;
    Rng::new(seed ^ key.wrapping_mul(0xA24B_AED4_963E_E407)).uniform(-1.0, 1.0)
}

/// An `n × n` symmetric positive-definite matrix for large n, in O(n²) on every core:
/// off-diagonal values in `[-1, 1)`, n on the diagonal (strictly diagonally dominant,
/// so definite), exactly symmetric.
pub fn dominant_spd<T: Element>(n: usize, seed: u64) -> Array2<T> {
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

/// `n` points in `d` dimensions around `k` centres uniform in `[-10, 10)^d`, point i
/// near centre i mod k (noise uniform in `[-1, 1)`), filled on every core; and the
/// first min(k, n) points as starting centroids, one per blob.
pub fn cyclic_blobs<T: Element>(n: usize, k: usize, d: usize, seed: u64) -> (Array2<T>, Array2<T>) {
    let centres: Vec<f64> = uniform_vec(k * d, seed, 10.0);
    let noise: Vec<f64> = uniform_vec(n * d, seed.wrapping_add(7), 1.0);
    let x = Array2::from_shape_fn((n, d), |(i, c)| {
        T::from_f64(centres[(i % k) * d + c] + noise[i * d + c])
    });
    let centroids = x.slice(s![..k.min(n), ..]).to_owned();
    (x, centroids)
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
    fn dominant_spd_is_symmetric_and_diagonally_dominant() {
        let n = 37;
        let a: Array2<f64> = dominant_spd(n, 5);
        for i in 0..n {
            let off: f64 = (0..n).filter(|&j| j != i).map(|j| a[[i, j]].abs()).sum();
            assert!(a[[i, i]] > off, "row {i}");
            for j in 0..n {
                assert_eq!(a[[i, j]], a[[j, i]]);
            }
        }
        // Chunking by rows must not change the values (CHUNK / n rows per chunk).
        let big: Array2<f32> = dominant_spd(300, 5);
        assert_eq!(big[[299, 3]], big[[3, 299]]);
        assert_eq!(big[[299, 299]], 300.0);
    }

    #[test]
    fn cyclic_blobs_start_with_one_centroid_per_blob() {
        let (k, d) = (128, 32);
        let (x, c): (Array2<f32>, Array2<f32>) = cyclic_blobs(1000, k, d, 3);
        assert_eq!((x.dim(), c.dim()), ((1000, d), (k, d)));
        assert_eq!(c.row(5), x.row(5));
        // Point 5 + k is in the same blob as centroid 5: within the noise box.
        let gap: f32 = (0..d)
            .map(|j| (x[[5 + k, j]] - c[[5, j]]).abs())
            .fold(0.0, f32::max);
        assert!(gap < 2.0, "{gap}");
    }

    /// Twelve blobs on a line jam random placement for some seeds (a CI run of the
    /// k-means property test hung in one): every seed must finish, with the centres
    /// (read back from the blob means, unit noise) well apart.
    #[test]
    fn blobs_in_one_dimension_never_jam() {
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let (x, blob) = blobs::<f64>(&mut rng, 12, 3, 1);
            assert_eq!((x.dim(), blob.len()), ((36, 1), 36));
            let mut means: Vec<f64> = (0..12)
                .map(|b| (0..3).map(|i| x[[3 * b + i, 0]]).sum::<f64>() / 3.0)
                .collect();
            means.sort_by(f64::total_cmp);
            // Centres 32 apart, means within a few standard deviations of them.
            assert!(
                means.windows(2).all(|w| w[1] - w[0] > 20.0),
                "seed {seed}: {means:?}"
            );
        }
    }

    #[test]
    fn every_layout_shows_the_same_matrix() {
        let mut rng = Rng::new(1);
        for (m, n) in [(0, 0), (0, 3), (3, 0), (1, 1), (4, 7)] {
            let a: Array2<f32> = rng.matrix(m, n);
            for layout in Layout::ALL {
                let laid = Laid::new(&a, layout);
                assert_eq!(laid.view(), a.view(), "{layout:?} {m}x{n}");
            }
        }
        let a: Array2<f64> = rng.matrix(3, 4);
        assert!(Laid::new(&a, Layout::F).view().t().is_standard_layout());
        assert!(!Laid::new(&a, Layout::Strided).view().is_standard_layout());
    }

    #[test]
    fn spd_is_symmetric() {
        let a: Array2<f32> = spd(&mut Rng::new(2), 9);
        assert_eq!(a, a.t());
    }

    /// The generator's spectrum, checked through what it promises: Aᵢⱼ = Σₖ σₖ·QᵢₖQⱼₖ,
    /// so trace(A) = Σσₖ and trace(A²) = ‖A‖²_F = Σσₖ².
    #[test]
    fn spd_with_condition_has_the_asked_spectrum() {
        let (n, cond) = (12, 1e6);
        let a: Array2<f64> = spd_with_condition(&mut Rng::new(3), n, cond);
        assert_eq!(a, a.t());
        let sigma: Vec<f64> = (0..n)
            .map(|k| cond.powf(-(k as f64) / (n - 1) as f64))
            .collect();
        let trace: f64 = a.diag().sum();
        let frob2: f64 = a.iter().map(|x| x * x).sum();
        let (want1, want2) = (
            sigma.iter().sum::<f64>(),
            sigma.iter().map(|s| s * s).sum::<f64>(),
        );
        assert!((trace - want1).abs() <= 1e-12 * want1, "{trace} vs {want1}");
        assert!((frob2 - want2).abs() <= 1e-12 * want2, "{frob2} vs {want2}");
    }
}
