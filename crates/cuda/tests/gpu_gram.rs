//! Tests of the M·Mᵀ ladder through the trait: the default kernels and every variant
//! against `kernels/gram.cu`; conformance for every variant; every variant against an
//! f64 reference (error-analysis bound) on odd shapes, exactly symmetric; outputs over
//! memory poisoned with NaN; the gram of a product that stays on the device; empty
//! shapes and errors; run-to-run reproducibility (all but the atomics-based stripe
//! rungs); the stripe rungs' row limit, met and exceeded.
//!
//! Only the check of the default kernels against the source needs no device; the rest
//! are ignored without one. Run them on a GPU machine with
//! `cargo test -p ndgpu-cuda --test gpu_gram -- --ignored`.

mod common;

use common::{assert_unknown_variant_refused, backend, every_variant, GRAM, ODD};
use ndarray::{Array2, ArrayView2};
use ndgpu_conformance::compare::product_tolerance;
use ndgpu_conformance::data::Rng;
use ndgpu_conformance::Sizes;
use ndgpu_core::{tolerance, Backend, DType, Error, Family, Gemm, MatMul, Matrix, Memory, Trans};
use ndgpu_cuda::{gram_row_limit, CudaBackend};
use ndgpu_cuda_runtime::CudaElement;

common::kernel_source_tests!(GRAM);
common::conformance_test!(conformance_every_variant, Family::Gram);

/// Asserts that `got` is within the bound of `m·mᵀ` in f64 (its IEEE bound rescaled to the
/// precision `b`'s gram variant declares) and exactly symmetric.
fn assert_gram<T: CudaElement>(b: &CudaBackend, what: &str, m: ArrayView2<T>, got: ArrayView2<T>) {
    let g = Gemm::new().tb(Trans::Yes);
    let k = m.ncols();
    let (want, bound) = common::gemm_reference(&g, m, m, None);
    let scale = product_tolerance::<T>(k, b.precision(Family::Gram)) / tolerance::gemm::<T>(k);
    common::assert_within(what, got, &(want, bound * scale));
    for ((i, j), v) in got.indexed_iter() {
        let (v, w) = (v.as_f64(), got[[j, i]].as_f64());
        assert!(
            v.to_bits() == w.to_bits(),
            "{what}: not symmetric: C[{i}][{j}] = {v:e}, C[{j}][{i}] = {w:e}"
        );
    }
}

/// The variants whose partial sums are added with atomics: not bitwise reproducible.
const ATOMIC: [&str; 2] = ["stripes", "stripes_transposed"];

/// Asserts that `r` is the row-limit error of variant `v` for an n×k M.
fn assert_row_limit_error<T>(r: ndgpu_core::Result<T>, v: &str, n: usize, k: usize) {
    let limit = gram_row_limit(v).expect("a variant with a row limit");
    match r {
        Err(e @ Error::InvalidArgument { .. }) => {
            let msg = e.to_string();
            for part in [format!("{limit} rows"), format!("{n}x{k}"), v.to_string()] {
                assert!(msg.contains(&part), "{v}: {msg:?} does not name {part:?}");
            }
        }
        Err(e) => panic!("{v} n={n} k={k}: expected the row-limit error, got {e}"),
        Ok(_) => panic!("{v} n={n} k={k}: beyond the row limit {limit}, yet no error"),
    }
}

/// `m·mᵀ` with the selected variant `v`, or, where m has more rows than `v` takes, the
/// asserted row-limit error and `None`.
fn gram_within_limit<T: CudaElement>(
    b: &CudaBackend,
    v: &str,
    m: ArrayView2<T>,
) -> Option<Array2<T>> {
    let (n, k) = m.dim();
    if gram_row_limit(v).is_some_and(|l| n > l) {
        assert_row_limit_error(b.gram(m), v, n, k);
        return None;
    }
    Some(b.gram(m).unwrap())
}

#[test]
#[ignore = "needs a CUDA device"]
fn odd_shapes_every_variant_exactly_symmetric() {
    let mut b = backend();
    let mut rng = Rng::new(5);
    let mut shapes: Vec<(usize, usize)> = Vec::new();
    for &n in ODD {
        for k in [1, 7, 33, 128, 257] {
            shapes.push((n, k));
        }
    }
    shapes.extend([(1000, 1000), (384, 17), (256, 256)]);
    let sizes = Sizes::from_env(Sizes::Medium);
    shapes.retain(|&(n, k)| sizes.admits(&[n, k]));
    for (n, k) in shapes {
        let m32 = rng.matrix::<f32>(n, k);
        let m64 = rng.matrix::<f64>(n, k);
        every_variant(&mut b, Family::Gram, |b, v| {
            if let Some(g) = gram_within_limit(b, v, m32.view()) {
                assert_gram(b, &format!("{v} f32 n={n} k={k}"), m32.view(), g.view());
            }
            if let Some(g) = gram_within_limit(b, v, m64.view()) {
                assert_gram(b, &format!("{v} f64 n={n} k={k}"), m64.view(), g.view());
            }
        });
    }
}

/// `gram_dev` of `dm` over poisoned memory (the trait's gram makes its own output).
fn gram_over_nan<T: CudaElement>(b: &CudaBackend, dm: &Matrix<T>) -> Array2<T> {
    common::poison_next_result::<T>(b, dm.rows(), dm.rows());
    let g = b.gram_dev(dm).unwrap();
    b.download(&g).unwrap()
}

/// The resident gram of every variant over NaN-poisoned memory: every element must be
/// written, within the bound and symmetric.
fn poisoned<T: CudaElement>(b: &mut CudaBackend, rng: &mut Rng, n: usize, k: usize) {
    let m = rng.matrix::<T>(n, k);
    let dm = b.upload(m.view()).unwrap();
    every_variant(b, Family::Gram, |b, v| {
        if gram_row_limit(v).is_some_and(|l| n > l) {
            return; // the limit's error is asserted in odd_shapes and row_limit tests
        }
        let got = gram_over_nan(b, &dm);
        let what = format!("{v} {} n={n} k={k} over NaN", T::SUFFIX);
        assert_gram(b, &what, m.view(), got.view());
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_poisoned_output_is_fully_written() {
    let mut b = backend();
    let mut rng = Rng::new(19);
    let sizes = Sizes::from_env(Sizes::Medium);
    for (n, k) in [(1, 1), (7, 65), (129, 33), (257, 130), (384, 16), (1000, 3)] {
        if !sizes.admits(&[n, k]) {
            continue;
        }
        poisoned::<f32>(&mut b, &mut rng, n, k);
        poisoned::<f64>(&mut b, &mut rng, n, k);
    }
}

/// On resident data with the current gram variant: the gram of a product that never
/// leaves the device, checked against the f64 gram of the downloaded product.
fn resident<T: CudaElement>(b: &CudaBackend, rng: &mut Rng) {
    let a = rng.matrix::<T>(257, 100);
    let bm = rng.matrix::<T>(100, 129);
    let (da, db) = (b.upload(a.view()).unwrap(), b.upload(bm.view()).unwrap());
    let dc = b.matmul_dev(&da, &db).unwrap();
    let dg = b.gram_dev(&dc).unwrap();
    assert_eq!(dg.dim(), (257, 257));
    let c = b.download(&dc).unwrap();
    let g = b.download(&dg).unwrap();
    let what = format!("{} {} gram(A·B)", b.variant(Family::Gram), T::SUFFIX);
    assert_gram(b, &what, c.view(), g.view());
}

common::every_variant_test!(
    resident_gram_of_a_product_every_variant,
    Family::Gram,
    resident,
    seed 23
);

#[test]
#[ignore = "needs a CUDA device"]
fn empty_shapes_and_names() {
    let mut b = backend();
    let g = b.gram(Array2::<f32>::ones((0, 3)).view()).unwrap();
    assert_eq!(g.dim(), (0, 0));
    let g = b.gram(Array2::<f64>::ones((4, 0)).view()).unwrap();
    assert_eq!(g, Array2::zeros((4, 4)));
    // K = 0 on resident data over NaN-poisoned memory: zeros, for every variant.
    let dm = b.upload(Array2::<f32>::ones((3, 0)).view()).unwrap();
    every_variant(&mut b, Family::Gram, |b, v| {
        assert_eq!(gram_over_nan(b, &dm), Array2::zeros((3, 3)), "{v}");
    });
    assert_unknown_variant_refused(&mut b, Family::Gram, "no_such");
    let g = b.gram(Array2::<f32>::ones((3, 2)).view()).unwrap();
    assert_eq!(g, Array2::from_elem((3, 3), 2.0));
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_is_bitwise_reproducible() {
    let mut b = backend();
    let mut rng = Rng::new(29);
    // More than one k-tile and an edge tile each way, at either size.
    let (n, k) = match Sizes::from_env(Sizes::Medium) {
        Sizes::Medium => (333, 517),
        Sizes::Small => (133, 259),
    };
    let m = rng.matrix::<f32>(n, k);
    let dm = b.upload(m.view()).unwrap();
    let variants = b.variants(Family::Gram);
    for v in ATOMIC {
        assert!(variants.contains(&v), "{v} is not a variant: {variants:?}");
    }
    every_variant(&mut b, Family::Gram, |b, v| {
        if !ATOMIC.contains(&v) {
            common::assert_same_every_run(v, 3, || b.download(&b.gram_dev(&dm).unwrap()).unwrap());
        }
    });
}

/// At the row limit the stripe rungs are right and exactly symmetric (f32 and f64; at
/// medium sizes only, the instrumented small runs being too slow); one row beyond it they
/// refuse with an error naming the limit and the sizes, on host and resident inputs, and
/// the backend goes on working.
fn row_limit<T: CudaElement>(b: &CudaBackend, rng: &mut Rng) {
    let v = b.variant(Family::Gram);
    let Some(limit) = gram_row_limit(v) else {
        return;
    };
    // Several stripes, the last one partial (k is not a multiple of 8 or 4).
    let k = 37;
    if Sizes::from_env(Sizes::Medium).admits(&[limit, k]) {
        let m = rng.matrix::<T>(limit, k);
        let g = b.gram(m.view()).unwrap();
        let what = format!("{v} {} n={limit} k={k}", T::SUFFIX);
        assert_gram(b, &what, m.view(), g.view());
    }
    let over = rng.matrix::<T>(limit + 1, k);
    assert_row_limit_error(b.gram(over.view()), v, limit + 1, k);
    let dm = b.upload(over.view()).unwrap();
    assert_row_limit_error(b.gram_dev(&dm), v, limit + 1, k);
    // k = 0 is refused too: the limit is on the rows, whatever the product.
    let empty = Array2::<T>::zeros((limit + 1, 0));
    assert_row_limit_error(b.gram(empty.view()), v, limit + 1, 0);
    let small = rng.matrix::<T>(5, 3);
    let g = b.gram(small.view()).unwrap();
    assert_gram(
        b,
        &format!("{v} {} after the error", T::SUFFIX),
        small.view(),
        g.view(),
    );
}

common::every_variant_test!(
    stripe_rungs_take_up_to_1024_rows_and_refuse_more,
    Family::Gram,
    row_limit,
    seed 31
);

/// Where the default cuts K (stream-K over C's tiles, or the narrow kernel's slices), its
/// result is within the bound, exactly symmetric and the same bits run after run, in f32
/// and f64, beside reg_blocked (one block per tile) on the same M: short, wide M (the
/// narrow kernel at 1 and 32 rows, padded to 32, and at 33 and 64, padded to 64; one
/// stream-K tile over a long K at 130) and squares whose tiles leave a wave part empty
/// (on 132 SMs, 2048 has 136 tiles for 264 blocks, and a block's range meets two tiles;
/// 300 and 1100 have ragged edges).
#[test]
#[ignore = "needs a CUDA device"]
fn cuts_of_k_within_the_bound_symmetric_and_reproducible() {
    let mut b = backend();
    let mut rng = Rng::new(31);
    let (k, squares) = match Sizes::from_env(Sizes::Medium) {
        Sizes::Medium => (262_147, &[300, 1100, 2048][..]),
        Sizes::Small => (20_001, &[300][..]),
    };
    let short_wide = [1, 32, 33, 64, 130].map(|n| (n, k));
    let shapes = short_wide
        .iter()
        .copied()
        .chain(squares.iter().map(|&n| (n, n)));
    for (n, k) in shapes {
        let m32 = rng.matrix::<f32>(n, k);
        let m64 = rng.matrix::<f64>(n, k);
        if let Some(plan) = b.plan(Family::Gram, DType::F32, &[n, k]) {
            println!("{n}x{k}: {plan}");
        }
        for v in ["stream_k", "reg_blocked"] {
            b.set_variant(Family::Gram, v).unwrap();
            let g = b.gram(m32.view()).unwrap();
            assert_gram(&b, &format!("{v} f32 n={n} k={k}"), m32.view(), g.view());
            let g = b.gram(m64.view()).unwrap();
            assert_gram(&b, &format!("{v} f64 n={n} k={k}"), m64.view(), g.view());
            let dm = b.upload(m32.view()).unwrap();
            common::assert_same_every_run(v, 3, || b.download(&b.gram_dev(&dm).unwrap()).unwrap());
        }
    }
}

/// f64 `stream_k` where it runs stream-K on the FP64 tensor cores' blocks: C's blocks a
/// little over half a wave (all dealt out as parts) and a little over two waves (the
/// first wave one block each beside the stream blocks), each with an even K (the
/// diagonal tiles' left blocks paired) and an odd one (not paired; rows not whole
/// 16-byte chunks). The orders are found from this device's plans (its SM count sets
/// the waves); each result must be within the bound, exactly symmetric and the same bits
/// run to run.
#[test]
#[ignore = "needs a CUDA device"]
fn f64_stream_k_blocks_within_the_bound_symmetric_and_reproducible() {
    let mut b = backend();
    let mut rng = Rng::new(37);
    b.set_variant(Family::Gram, "stream_k").unwrap();
    let plan = |b: &CudaBackend, n: usize, k: usize| b.plan(Family::Gram, DType::F64, &[n, k]);
    let find = |b: &CudaBackend, from: usize, k: usize, data_parallel: bool| {
        (from..from + 4000)
            .step_by(50)
            .find(|&n| {
                [k, k + 1].iter().all(|&k| {
                    plan(b, n, k).is_some_and(|p| {
                        p.contains("stream-K: ") && p.contains("the other 0 ") != data_parallel
                    })
                })
            })
            .unwrap_or_else(|| {
                panic!("no order from {from} runs stream-K with k = {k} and {k} + 1")
            })
    };
    let (n1, n2) = (find(&b, 1000, 800, false), find(&b, 2500, 1000, true));
    for (n, k) in [(n1, 800), (n1, 801), (n2, 1000), (n2, 1001)] {
        let what = format!("stream_k f64 {n}x{k}: {}", plan(&b, n, k).unwrap());
        println!("{what}");
        let m = rng.matrix::<f64>(n, k);
        let dm = b.upload(m.view()).unwrap();
        let got = common::assert_same_every_run(&what, 3, || {
            b.download(&b.gram_dev(&dm).unwrap()).unwrap()
        });
        assert_gram(&b, &what, m.view(), got.view());
    }
}
