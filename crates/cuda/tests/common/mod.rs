//! Backends, variant loops, seeded data and checks shared by the GPU test files, and
//! macros for the tests that every ladder has.
// Each test file is a crate of its own and uses only some of these; the macros carry
// their own allows.
#![allow(dead_code)]

use std::collections::HashSet;

use ndarray::{Array2, ArrayBase, ArrayView2, Data, Dimension};
use ndgpu_conformance::compare::{describe_ratio, gemm_bound, gemm_f64, max_ratio};
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{Backend, Element, Error, Family, Gemm, Matrix, Memory};
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::CudaElement;

/// Sizes on both sides of the tile edges.
pub const ODD: &[usize] = &[1, 7, 33, 65, 127, 129, 255, 257, 1000];

// ---- backends and variants ----------------------------------------------------------

/// The hand-written backend on device 0.
pub fn backend() -> CudaBackend {
    CudaBackend::new(0).expect("a CUDA device")
}

/// A backend of its own with `variant` selected for `family`.
pub fn with_variant(family: Family, variant: &str) -> CudaBackend {
    let mut b = backend();
    b.set_variant(family, variant).unwrap();
    b
}

/// The variants of `family`, the default first.
pub fn variants(family: Family) -> Vec<&'static str> {
    backend().variants(family)
}

/// Runs `check` with each variant of `family` selected on `b` in turn; the last one
/// stays selected.
pub fn every_variant(
    b: &mut CudaBackend,
    family: Family,
    mut check: impl FnMut(&CudaBackend, &'static str),
) {
    for v in b.variants(family) {
        b.set_variant(family, v).unwrap();
        check(b, v);
    }
}

/// The conformance cases of `family` on each of its variants.
pub fn assert_conformance_every_variant(family: Family) {
    every_variant(&mut backend(), family, |b, _| {
        assert_family(b, family, Sizes::from_env(Sizes::Medium));
    });
}

/// An unknown variant name is refused and leaves the current variant selected.
pub fn assert_unknown_variant_refused(b: &mut CudaBackend, family: Family, name: &str) {
    let before = b.variant(family);
    let e = b.set_variant(family, name).unwrap_err();
    assert!(matches!(e, Error::UnknownVariant { .. }), "{e}");
    assert_eq!(b.variant(family), before);
}

/// A ladder whose variants are named in its kernel files: each variant `v` has entry
/// points `{prefix}_{v}_{f32,f64}` (or only `_f32`, where the f64 kernel is another
/// rung's), defined in one of the files by a line `{entry}(v, ...)`.
pub struct Ladder {
    pub family: Family,
    pub files: &'static [KernelFile],
    pub prefix: &'static str,
    /// How a line that makes entry points begins: the technique is one of the macro's
    /// arguments on that line.
    pub entries: &'static [&'static str],
}

pub const MATMUL: Ladder = Ladder {
    family: Family::MatMul,
    files: &[KernelFile::MATMUL, KernelFile::WGMMA],
    prefix: "gemm",
    entries: &["NDGPU_F32_F64(", "NDGPU_WGMMA("],
};

pub const GRAM: Ladder = Ladder {
    family: Family::Gram,
    files: &[KernelFile::GRAM, KernelFile::WGMMA],
    prefix: "gram",
    entries: &["NDGPU_F32_F64(", "NDGPU_WGMMA_GRAM("],
};

pub const TRANSPOSE: Ladder = Ladder {
    family: Family::Transpose,
    files: &[KernelFile::TRANSPOSE],
    prefix: "transpose",
    entries: &["NDGPU_TRANSPOSE("],
};

impl Ladder {
    /// The technique the default variant's kernels name, after checking that they
    /// begin with its f32 and f64 kernels; a default may launch other kernels of its
    /// file too (split_k runs double_buffered where it does not split K, gram's stream_k
    /// reg_blocked where C's tiles fill whole waves), in pairs of both dtypes, and last
    /// kernels of f64 alone (the FP64 tensor-core ones).
    pub fn default_technique(&self) -> String {
        let p = self.prefix;
        let start = format!("{p}_");
        // The strided GEMM (launched by the Cholesky solve) is the default rung on blocks
        // of larger matrices, not a rung of the ladder.
        let kernels: Vec<&str> = ndgpu_cuda::default_kernels()
            .into_iter()
            .filter(|k| k.starts_with(&start) && !k.starts_with("gemm_strided_"))
            .collect();
        let technique = kernels
            .first()
            .and_then(|k| k.strip_prefix(&start))
            .and_then(|k| k.strip_suffix("_f32"))
            .unwrap_or_else(|| {
                panic!("default {p} kernels {kernels:?}: no {p}_<variant>_f32 first")
            });
        let want = [
            format!("{p}_{technique}_f32"),
            format!("{p}_{technique}_f64"),
        ];
        assert_eq!(kernels[..2], want, "default {p} kernels");
        // Each f32 kernel followed by its f64 twin; the kernels of f64 alone (the FP64
        // tensor-core ones) last.
        let mut rest = kernels.iter();
        while let Some(k) = rest.next() {
            match k.strip_suffix("_f32") {
                Some(base) => {
                    let twin = format!("{base}_f64");
                    assert_eq!(rest.next(), Some(&twin.as_str()), "{kernels:?}");
                }
                None => {
                    assert!(k.ends_with("_f64"), "{kernels:?}");
                    assert!(rest.all(|k| k.ends_with("_f64")), "{kernels:?}");
                    break;
                }
            }
        }
        technique.to_string()
    }

    /// Asserts that one of the kernel files defines `{prefix}_{technique}_*`.
    pub fn assert_in_source(&self, technique: &str) {
        let makes = |line: &str| {
            self.entries.iter().any(|e| {
                line.strip_prefix(e)
                    .is_some_and(|args| args.split([',', ')']).any(|a| a.trim() == technique))
            })
        };
        assert!(
            self.files.iter().any(|f| f.source().lines().any(makes)),
            "no {}_{technique}_* entry points in {:?}",
            self.prefix,
            self.files.iter().map(|f| f.file_name()).collect::<Vec<_>>()
        );
    }

    /// The variants have distinct names, each in the source, the default first.
    pub fn assert_variants_in_source(&self) {
        let variants = variants(self.family);
        let unique: HashSet<_> = variants.iter().collect();
        assert_eq!(
            unique.len(),
            variants.len(),
            "duplicate variant in {variants:?}"
        );
        for v in &variants {
            self.assert_in_source(v);
        }
        assert_eq!(self.default_technique(), variants[0], "the default variant");
    }
}

/// The tests of a [`Ladder`] against its kernel file: the default kernels (no device
/// needed), and the name of every variant.
#[allow(unused_macros)]
macro_rules! kernel_source_tests {
    ($ladder:expr) => {
        #[test]
        fn default_kernels_are_one_variant_in_both_dtypes_and_in_the_source() {
            $ladder.assert_in_source(&$ladder.default_technique());
        }

        #[test]
        #[ignore = "needs a CUDA device"]
        fn variant_names_are_unique_and_every_variant_is_in_the_source() {
            $ladder.assert_variants_in_source();
        }
    };
}
#[allow(unused_imports)]
pub(crate) use kernel_source_tests;

/// A test of the conformance cases of `$family` on every variant.
#[allow(unused_macros)]
macro_rules! conformance_test {
    ($name:ident, $family:expr) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            $crate::common::assert_conformance_every_variant($family);
        }
    };
}
#[allow(unused_imports)]
pub(crate) use conformance_test;

/// A test that runs `$check::<f32>` and then `$check::<f64>` for every variant of
/// `$family`. Without a seed each call is given the variant's name and makes its own
/// backend; with `seed N` the calls are given one backend, the variant selected, and
/// one `data::Rng::new(N)` that they all draw from in turn.
#[allow(unused_macros)]
macro_rules! every_variant_test {
    ($name:ident, $family:expr, $check:ident) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            for v in $crate::common::variants($family) {
                $check::<f32>(v);
                $check::<f64>(v);
            }
        }
    };
    ($name:ident, $family:expr, $check:ident, seed $seed:expr) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            let mut rng = ndgpu_conformance::data::Rng::new($seed);
            $crate::common::every_variant(&mut $crate::common::backend(), $family, |b, _| {
                $check::<f32>(b, &mut rng);
                $check::<f64>(b, &mut rng);
            });
        }
    };
}
#[allow(unused_imports)]
pub(crate) use every_variant_test;

// ---- seeded data --------------------------------------------------------------------

/// Uniform in [-1, 1).
pub fn uniform(rng: &mut SplitMix64) -> f64 {
    2.0 * rng.next_f64() - 1.0
}

/// A `rows × cols` matrix of [`uniform`] values rounded to `T`, in row-major order.
pub fn random<T: Element>(rng: &mut SplitMix64, rows: usize, cols: usize) -> Array2<T> {
    Array2::from_shape_simple_fn((rows, cols), || T::from_f64(uniform(rng)))
}

/// `n` [`uniform`] values rounded to `T`.
pub fn values<T: Element>(rng: &mut SplitMix64, n: usize) -> Vec<T> {
    (0..n).map(|_| T::from_f64(uniform(rng))).collect()
}

/// NaN in the strict upper triangle: a Cholesky must never read it.
pub fn poison_upper<T: Element>(a: &Array2<T>) -> Array2<T> {
    Array2::from_shape_fn(a.dim(), |(i, j)| if j > i { T::nan() } else { a[[i, j]] })
}

/// Leaves NaN where the next `rows × cols` result will most likely be: a NaN matrix of
/// that size, freed at once, whose memory the stream-ordered allocator hands back to
/// the next allocation of that size on the same stream. For the operations that make
/// their own output: an element the kernel leaves unwritten then reads as NaN.
pub fn poison_next_result<T: CudaElement>(b: &CudaBackend, rows: usize, cols: usize) {
    drop(
        b.upload(Array2::from_elem((rows, cols), T::nan()).view())
            .unwrap(),
    );
}

// ---- checks -------------------------------------------------------------------------

/// Same shape and bits (so -0 differs from +0; NaN equals itself).
pub fn same_bits<T, A, B, D>(a: &ArrayBase<A, D>, b: &ArrayBase<B, D>) -> bool
where
    T: Element,
    A: Data<Elem = T>,
    B: Data<Elem = T>,
    D: Dimension,
{
    a.shape() == b.shape()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.as_f64().to_bits() == y.as_f64().to_bits())
}

/// Asserts that the resident `d` holds `want`: the same shape and bits.
pub fn assert_holds<T: CudaElement>(b: &CudaBackend, d: &Matrix<T>, want: &Array2<T>, what: &str) {
    assert!(same_bits(&b.download(d).unwrap(), want), "{what}");
}

/// Asserts that `run` gives the same shape and bits each of `times` times; returns the
/// first result.
pub fn assert_same_every_run<T: Element>(
    what: &str,
    times: usize,
    mut run: impl FnMut() -> Array2<T>,
) -> Array2<T> {
    let first = run();
    for _ in 1..times {
        assert!(same_bits(&run(), &first), "{what} differs between runs");
    }
    first
}

/// The f64 value of `g` applied to the operands, and its elementwise error bound.
pub fn gemm_reference<T: Element>(
    g: &Gemm<T>,
    a: ArrayView2<T>,
    b: ArrayView2<T>,
    c: Option<ArrayView2<T>>,
) -> (Array2<f64>, Array2<f64>) {
    (gemm_f64(g, a, b, c), gemm_bound(g, a, b, c))
}

/// Asserts that `got` is within the bound of the f64 reference everywhere (NaN fails),
/// naming the worst element otherwise.
pub fn assert_within<T: Element>(
    what: &str,
    got: ArrayView2<T>,
    (want, bound): &(Array2<f64>, Array2<f64>),
) {
    let worst = max_ratio(got, want.view(), bound.view());
    assert!(
        worst.0 <= 1.0 && (worst.1.is_some() || got.is_empty()),
        "{}",
        describe_ratio(what, got, want.view(), worst)
    );
}
