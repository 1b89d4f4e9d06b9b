//! proptest strategies for the proptest suites of every backend: shapes (0, 1, primes,
//! non-multiples of 32 and 64), memory layouts, values, and whole operands of each
//! family.
//!
//! ```
//! use ndgpu_conformance::strategies;
//! use ndgpu_core::Transpose;
//! use proptest::prelude::*;
//! use proptest::test_runner::TestRunner;
//!
//! let cpu = ndgpu_cpu::CpuBackend::new();
//! let mut runner = TestRunner::new(strategies::seeded(ProptestConfig::with_cases(8)));
//! runner
//!     .run(&strategies::laid_matrix::<f32>(strategies::dim()), |a| {
//!         let t = cpu.transpose(a.view()).unwrap();
//!         prop_assert_eq!(cpu.transpose(t.view()).unwrap(), a.view());
//!         Ok(())
//!     })
//!     .unwrap();
//! ```

use ndarray::Array2;
use ndgpu_core::{Element, Gemm, Init, KMeansConfig, Trans};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{FileFailurePersistence, RngAlgorithm, RngSeed};
use std::io::Write;
use std::sync::OnceLock;

use crate::data::{blobs, uniform_points, Laid, Layout, Rng};

/// The environment variable that fixes the seed of every proptest run:
/// `NDGPU_PROPTEST_SEED=<u64> cargo test …` draws exactly the cases of the run that
/// printed that seed.
pub const SEED_ENV: &str = "NDGPU_PROPTEST_SEED";

/// The seed when [`SEED_ENV`] is unset and `CI=true`: a CI run draws the same cases
/// every time.
pub const CI_SEED: u64 = 0x5EED_0001;

/// The seed of this process's proptest runs: [`SEED_ENV`] when set, else [`CI_SEED`]
/// when `CI=true`, else a fresh random one. Chosen once per test binary and printed
/// once to stderr (past the test harness's capture, so a CI log shows it).
///
/// # Panics
/// When [`SEED_ENV`] is set but not a u64.
pub fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        let env = std::env::var(SEED_ENV).ok();
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        let (seed, why) = choose_seed(env.as_deref(), ci, random_seed);
        // Straight to stderr: the test harness captures only the print macros.
        let _ = writeln!(
            std::io::stderr(),
            "proptest seed {seed} ({why}); replay with {SEED_ENV}={seed}"
        );
        seed
    })
}

/// The seed and why: `env` (the variable's value), else [`CI_SEED`] on CI, else
/// `random()`.
fn choose_seed(env: Option<&str>, ci: bool, random: fn() -> u64) -> (u64, &'static str) {
    match env {
        Some(v) => match v.trim().parse() {
            Ok(s) => (s, "from NDGPU_PROPTEST_SEED"),
            Err(_) => panic!("{SEED_ENV}={v:?} is not a u64"),
        },
        None if ci => (CI_SEED, "CI=true"),
        None => (random(), "random"),
    }
}

/// A seed from the standard library's per-process random hasher keys and the clock.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(nanos);
    h.finish()
}

/// `config` drawing from [`seed`]: what every proptest of the workspace runs under.
pub fn seeded(config: ProptestConfig) -> ProptestConfig {
    ProptestConfig {
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed()),
        ..config
    }
}

/// A [`seeded`] proptest configuration with `cases` cases whose failing seeds are saved
/// to (and replayed from) `path`, relative to the package root where `cargo test` runs
/// tests, e.g. `"proptest-regressions/prop_products.txt"`. (proptest's default cannot
/// place the file for tests in `tests/` of a workspace member.) Commit those files: a
/// saved case runs first, whatever the seed.
pub fn config(cases: u32, path: &'static str) -> ProptestConfig {
    seeded(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(path))),
        ..ProptestConfig::with_cases(cases)
    })
}

/// Dimensions worth testing: primes and non-multiples of 32 and 64 around tile edges.
pub const INTERESTING_DIMS: [usize; 14] = [2, 3, 7, 13, 31, 32, 33, 63, 64, 65, 97, 100, 127, 129];

/// A dimension: 0, 1, one of [`INTERESTING_DIMS`], or anything up to 48.
pub fn dim() -> impl Strategy<Value = usize> + Clone {
    prop_oneof![
        1 => Just(0usize),
        1 => Just(1usize),
        3 => select(INTERESTING_DIMS.to_vec()),
        3 => 0..=48usize,
    ]
}

/// A dimension of at least 1 (for operations that need a point or a pivot).
pub fn dim_nonzero() -> impl Strategy<Value = usize> + Clone {
    dim().prop_map(|d| d.max(1))
}

/// Any [`Layout`].
pub fn layout() -> impl Strategy<Value = Layout> + Clone {
    select(Layout::ALL.to_vec())
}

/// Either `Trans`.
pub fn trans() -> impl Strategy<Value = Trans> + Clone {
    select(vec![Trans::No, Trans::Yes])
}

/// A value: mostly uniform in [-1, 1), sometimes larger, sometimes a small integer
/// (so exact ties and zeros occur too).
pub fn value<T: Element>() -> impl Strategy<Value = T> + Clone {
    prop_oneof![
        8 => -1.0f64..1.0,
        1 => -1.0e3f64..1.0e3,
        1 => (-4i32..=4).prop_map(f64::from),
    ]
    .prop_map(T::from_f64)
}

/// A `rows × cols` matrix of [`value`]s.
pub fn matrix<T: Element>(rows: usize, cols: usize) -> impl Strategy<Value = Array2<T>> {
    proptest::collection::vec(value::<T>(), rows * cols)
        .prop_map(move |v| Array2::from_shape_vec((rows, cols), v).expect("rows·cols values"))
}

/// A `rows × cols` matrix in any layout.
pub fn laid<T: Element>(rows: usize, cols: usize) -> impl Strategy<Value = Laid<T>> {
    (matrix::<T>(rows, cols), layout()).prop_map(|(a, l)| Laid::new(&a, l))
}

/// A matrix in any layout, each side drawn from `dims`.
pub fn laid_matrix<T: Element>(
    dims: impl Strategy<Value = usize> + Clone,
) -> impl Strategy<Value = Laid<T>> {
    (dims.clone(), dims).prop_flat_map(|(m, n)| laid::<T>(m, n))
}

/// The operands of one `gemm` call.
#[derive(Debug, Clone)]
pub struct GemmCase<T> {
    /// α, β and the transposes.
    pub g: Gemm<T>,
    /// A as stored (op(A) is m×k).
    pub a: Laid<T>,
    /// B as stored (op(B) is k×n).
    pub b: Laid<T>,
    /// C (m×n); always present when β ≠ 0; NaN-filled in some cases with β = 0.
    pub c: Option<Laid<T>>,
}

impl<T: Element> GemmCase<T> {
    /// (m, n, k).
    pub fn mnk(&self) -> (usize, usize, usize) {
        let (m, k) = self.g.ta.apply(self.a.view()).dim();
        let n = self.g.tb.apply(self.b.view()).ncols();
        (m, n, k)
    }
}

/// A `gemm` call with m, n, k from `dims`, any `Trans` pair and layouts, and α/β from
/// (1, 0), (1, 0) over a NaN C, (−1.5, 0.5), (0.5, −2), (2, 1), (0, 1).
pub fn gemm_case<T: Element>(
    dims: impl Strategy<Value = usize> + Clone,
) -> impl Strategy<Value = GemmCase<T>> {
    let scales = select(vec![
        (1.0, 0.0, None),
        (1.0, 0.0, Some(true)),
        (-1.5, 0.5, Some(false)),
        (0.5, -2.0, Some(false)),
        (2.0, 1.0, Some(false)),
        (0.0, 1.0, Some(false)),
    ]);
    (dims.clone(), dims.clone(), dims, trans(), trans(), scales).prop_flat_map(
        |(m, n, k, ta, tb, (alpha, beta, c_kind))| {
            let a_dim = if ta == Trans::No { (m, k) } else { (k, m) };
            let b_dim = if tb == Trans::No { (k, n) } else { (n, k) };
            let c = match c_kind {
                None => Just(None).boxed(),
                Some(true) => layout()
                    .prop_map(move |l| Some(Laid::new(&Array2::from_elem((m, n), T::nan()), l)))
                    .boxed(),
                Some(false) => laid::<T>(m, n).prop_map(Some).boxed(),
            };
            (laid::<T>(a_dim.0, a_dim.1), laid::<T>(b_dim.0, b_dim.1), c).prop_map(
                move |(a, b, c)| GemmCase {
                    g: Gemm::new()
                        .alpha(T::from_f64(alpha))
                        .ta(ta)
                        .tb(tb)
                        .beta(T::from_f64(beta)),
                    a,
                    b,
                    c,
                },
            )
        },
    )
}

/// A symmetric positive-definite matrix `B·Bᵀ + n·I` (B of [`value`]s scaled into
/// [-1, 1]), order from `dims`, in any layout.
pub fn spd<T: Element>(dims: impl Strategy<Value = usize>) -> impl Strategy<Value = Laid<T>> {
    dims.prop_flat_map(|n| (matrix::<f64>(n, n), layout()))
        .prop_map(|(b, l)| {
            let n = b.nrows();
            let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let b = b / scale;
            let g = b.dot(&b.t());
            let a = Array2::from_shape_fn((n, n), |(i, j)| {
                T::from_f64(g[[i.max(j), i.min(j)]] + if i == j { n as f64 } else { 0.0 })
            });
            Laid::new(&a, l)
        })
}

/// A k-means problem: points (uniform or blobs, from a seeded generator) in any
/// layout, and a configuration with k ≤ N, k-means++ or random starts.
#[derive(Debug, Clone)]
pub struct KMeansCase<T> {
    /// The points, N × d.
    pub x: Laid<T>,
    /// The configuration.
    pub config: KMeansConfig,
}

/// A [`KMeansCase`] with 1 ≤ N ≤ `max_n`, 1 ≤ d ≤ 9, 1 ≤ k ≤ min(N, 12).
pub fn kmeans_case<T: Element>(max_n: usize) -> impl Strategy<Value = KMeansCase<T>> {
    let max_n = max_n.max(1);
    (
        1..=max_n,
        1..=9usize,
        any::<u64>(),
        any::<bool>(),
        layout(),
        any::<bool>(),
    )
        .prop_flat_map(|(n, d, seed, blobbed, l, plus_plus)| {
            (1..=n.min(12)).prop_map(move |k| {
                let mut rng = Rng::new(seed);
                let x = if blobbed && n >= k {
                    let (x, _) = blobs::<T>(&mut rng, k, n / k, d);
                    x
                } else {
                    uniform_points::<T>(&mut rng, n, d)
                };
                let init = if plus_plus {
                    Init::KMeansPlusPlus
                } else {
                    Init::Random
                };
                KMeansCase {
                    x: Laid::new(&x, l),
                    config: KMeansConfig::new(k).init(init).seed(seed),
                }
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    /// The cases a runner of `config` draws from [`matrix`] strategies.
    fn draws(config: ProptestConfig) -> Vec<Array2<f64>> {
        let mut runner = TestRunner::new(config);
        let strategy = (0..=6usize, 0..=6usize).prop_flat_map(|(r, c)| matrix::<f64>(r, c));
        (0..16)
            .map(|_| strategy.new_tree(&mut runner).unwrap().current())
            .collect()
    }

    fn fixed(seed: u64) -> ProptestConfig {
        ProptestConfig {
            rng_algorithm: RngAlgorithm::ChaCha,
            rng_seed: RngSeed::Fixed(seed),
            ..ProptestConfig::with_cases(16)
        }
    }

    #[test]
    fn one_seed_draws_the_same_cases() {
        assert_eq!(draws(fixed(7)), draws(fixed(7)));
        assert_ne!(draws(fixed(7)), draws(fixed(8)));
        // The process's seed, whatever chose it, is the one `seeded` runs under.
        let s = seeded(ProptestConfig::with_cases(16));
        assert_eq!(s.rng_seed, RngSeed::Fixed(seed()));
        assert_eq!(
            draws(seeded(ProptestConfig::default())),
            draws(fixed(seed()))
        );
    }

    #[test]
    fn the_variable_then_ci_then_random_choose_the_seed() {
        let never = || -> u64 { unreachable!() };
        assert_eq!(choose_seed(Some(" 42 "), true, never).0, 42);
        assert_eq!(choose_seed(None, true, never).0, CI_SEED);
        assert_eq!(choose_seed(None, false, || 9), (9, "random"));
        let bad = std::panic::catch_unwind(|| choose_seed(Some("x"), false, || 0));
        assert!(bad.is_err());
    }
}
