//! GPU tests of the transpose ladder through the trait: the default kernels and every
//! variant against `kernels/transpose.cu`; conformance for every variant; exact
//! results on odd shapes (and on more row tiles than the grid has rows) over memory
//! poisoned with NaN; strided inputs through the host form; errors, and resident copies.
//!
//! Only the check of the default kernels against the source needs no device; the rest
//! are ignored without one. Run them on a GPU machine with
//! `cargo test -p ndgpu-cuda --test gpu_transpose -- --ignored`.

use std::collections::HashSet;

use ndarray::{array, s, Array2};
use ndgpu_conformance::data::Rng;
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{Backend, Error, Family, Matrix, Memory, Transpose};
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::kernels::KernelFile;
use ndgpu_cuda_runtime::CudaElement;

fn backend() -> CudaBackend {
    CudaBackend::new(0).expect("a CUDA device")
}

const ODD_SHAPES: &[(usize, usize)] = &[
    (1, 1),
    (1, 777),
    (777, 1),
    (33, 65),
    (64, 64),
    (65, 63),
    (1000, 999),
    (4097, 3),
    (3, 4097),
    (2050, 3000),
];

/// The technique the default variant's `transpose_` kernels name, after checking that
/// they are its f32 and f64 kernels and nothing else.
fn default_technique() -> String {
    let kernels: Vec<&str> = ndgpu_cuda::default_kernels()
        .into_iter()
        .filter(|k| k.starts_with("transpose_"))
        .collect();
    let technique = kernels
        .first()
        .and_then(|k| k.strip_prefix("transpose_"))
        .and_then(|k| k.strip_suffix("_f32"))
        .unwrap_or_else(|| {
            panic!("default transpose kernels {kernels:?}: no transpose_<variant>_f32 first")
        });
    let want = [
        format!("transpose_{technique}_f32"),
        format!("transpose_{technique}_f64"),
    ];
    assert_eq!(kernels, want, "default transpose kernels");
    technique.to_string()
}

/// Asserts that transpose.cu defines `transpose_{technique}_{f32,f64}`.
fn assert_in_source(technique: &str) {
    assert!(
        KernelFile::Transpose
            .source()
            .contains(&format!("NDGPU_TRANSPOSE({technique},")),
        "no transpose_{technique}_{{f32,f64}} entry points in transpose.cu"
    );
}

#[test]
fn default_kernels_are_one_variant_in_both_dtypes_and_in_the_source() {
    assert_in_source(&default_technique());
}

#[test]
#[ignore = "needs a CUDA device"]
fn variant_names_are_unique_and_every_variant_is_in_the_source() {
    let variants = backend().variants(Family::Transpose);
    let unique: HashSet<_> = variants.iter().collect();
    assert_eq!(
        unique.len(),
        variants.len(),
        "duplicate variant in {variants:?}"
    );
    for v in &variants {
        assert_in_source(v);
    }
    assert_eq!(default_technique(), variants[0], "the default variant");
}

/// `transpose_dev` with the current variant, over poisoned memory: every element must
/// be written, and equal to the input's bit for bit. The trait's transpose makes its
/// own output, so the NaN goes where that output will most likely be: a NaN matrix of
/// its size freed just before, whose memory the stream-ordered allocator hands back to
/// the next allocation of that size on the same stream.
fn check_exact<T: CudaElement>(b: &CudaBackend, rows: usize, cols: usize, rng: &mut Rng) {
    let variant = b.variant(Family::Transpose);
    let a = rng.matrix::<T>(rows, cols);
    let d = b.upload(a.view()).unwrap();
    drop(
        b.upload(Array2::from_elem((cols, rows), T::nan()).view())
            .unwrap(),
    );
    let out = b.transpose_dev(&d).unwrap();
    assert_eq!(out.dim(), (cols, rows));
    let got = b.download(&out).unwrap();
    assert_eq!(got.dim(), (cols, rows));
    for ((i, j), v) in got.indexed_iter() {
        // Compared as f64 bit patterns: exact, and a NaN never equals a finite input.
        assert!(
            v.as_f64().to_bits() == a[[j, i]].as_f64().to_bits(),
            "{variant} {}: {rows}x{cols}: out[{i}][{j}] = {v}, expected {}",
            T::SUFFIX,
            a[[j, i]]
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_passes_the_conformance_cases() {
    let mut b = backend();
    for v in b.variants(Family::Transpose) {
        b.set_variant(Family::Transpose, v).unwrap();
        assert_family(&b, Family::Transpose, Sizes::from_env(Sizes::Medium));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_is_exact_on_odd_shapes() {
    let mut b = backend();
    let mut rng = Rng::new(1);
    for v in b.variants(Family::Transpose) {
        b.set_variant(Family::Transpose, v).unwrap();
        for &(r, c) in ODD_SHAPES {
            check_exact::<f32>(&b, r, c, &mut rng);
            check_exact::<f64>(&b, r, c, &mut rng);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn more_row_tiles_than_grid_rows_are_walked_by_the_loop() {
    // 70000 rows: naive needs 8750 blocks of 8 rows (fits), the tiled variants fit too;
    // 600000 × 2 needs 75000 naive blocks in y (> 65535), so the grid-stride loop runs.
    let mut b = backend();
    let mut rng = Rng::new(2);
    for v in b.variants(Family::Transpose) {
        b.set_variant(Family::Transpose, v).unwrap();
        check_exact::<f32>(&b, 600_000, 2, &mut rng);
        check_exact::<f64>(&b, 70_000, 5, &mut rng);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn strided_and_transposed_views_through_the_trait() {
    let mut b = backend();
    let mut rng = Rng::new(3);
    let a = rng.matrix::<f64>(70, 90);
    let views = [
        a.view(),
        a.t(),
        a.slice(s![3..60;2, 1..88;3]),
        a.slice(s![..;-1, ..]),
    ];
    for v in b.variants(Family::Transpose) {
        b.set_variant(Family::Transpose, v).unwrap();
        for view in &views {
            let got = b.transpose(view.view()).unwrap();
            assert_eq!(got, view.t(), "{v}");
        }
        let empty = Array2::<f32>::zeros((0, 5));
        let got = b.transpose(empty.view()).unwrap();
        assert_eq!(got.dim(), (5, 0));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn bad_arguments_give_errors() {
    let mut b = backend();
    // An unknown variant is refused and leaves the current one selected.
    let before = b.variant(Family::Transpose);
    let err = b.set_variant(Family::Transpose, "sideways").unwrap_err();
    assert!(matches!(err, Error::UnknownVariant { .. }), "{err}");
    assert_eq!(b.variant(Family::Transpose), before);
    let x = Array2::from_shape_fn((3, 4), |(i, j)| (4 * i + j) as f32);
    let a = b.upload(x.view()).unwrap();
    assert_eq!(b.download(&b.transpose_dev(&a).unwrap()).unwrap(), x.t());

    // Resident copies: exact into a destination of the same shape, refused into one of
    // another shape (even with as many elements).
    let row = array![[1.0f32, 2.0, 3.0]];
    let src = b.upload(row.view()).unwrap();
    let mut dst: Matrix<f32> = b.alloc(1, 3).unwrap();
    b.copy_into(&src, &mut dst).unwrap();
    assert_eq!(b.download(&dst).unwrap(), row);
    for (r, c) in [(1, 4), (3, 1)] {
        let mut wrong: Matrix<f32> = b.alloc(r, c).unwrap();
        let err = b.copy_into(&src, &mut wrong).unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch { .. }), "{r}x{c}: {err}");
    }
}
