//! GPU tests of the transpose ladder through the trait: the default kernels and every
//! variant against `kernels/transpose.cu`; conformance for every variant; exact
//! results on odd shapes (and on more row tiles than the grid has rows) over memory
//! poisoned with NaN; strided inputs through the host form; errors, and resident copies.
//!
//! Only the check of the default kernels against the source needs no device; the rest
//! are ignored without one. Run them on a GPU machine with
//! `cargo test -p ndgpu-cuda --test gpu_transpose -- --ignored`.

mod common;

use common::{assert_unknown_variant_refused, backend, every_variant, TRANSPOSE};
use ndarray::{array, s, Array2};
use ndgpu_conformance::data::Rng;
use ndgpu_core::{Backend, Error, Family, Matrix, Memory, Transpose};
use ndgpu_cuda::CudaBackend;
use ndgpu_cuda_runtime::CudaElement;

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

common::kernel_source_tests!(TRANSPOSE);

/// `transpose_dev` with the current variant, over poisoned memory: every element must
/// be written, and equal to the input's bit for bit.
fn check_exact<T: CudaElement>(b: &CudaBackend, rows: usize, cols: usize, rng: &mut Rng) {
    let variant = b.variant(Family::Transpose);
    let a = rng.matrix::<T>(rows, cols);
    let d = b.upload(a.view()).unwrap();
    common::poison_next_result::<T>(b, cols, rows);
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

/// [`check_exact`] on every variant, of an f32 and then an f64 matrix for each pair of
/// shapes in turn, the data drawn from one generator seeded with `seed`.
fn exact_every_variant(seed: u64, shapes: &[[(usize, usize); 2]]) {
    let mut rng = Rng::new(seed);
    every_variant(&mut backend(), Family::Transpose, |b, _| {
        for &[(r32, c32), (r64, c64)] in shapes {
            check_exact::<f32>(b, r32, c32, &mut rng);
            check_exact::<f64>(b, r64, c64, &mut rng);
        }
    });
}

common::conformance_test!(
    every_variant_passes_the_conformance_cases,
    Family::Transpose
);

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_is_exact_on_odd_shapes() {
    let shapes: Vec<_> = ODD_SHAPES.iter().map(|&s| [s, s]).collect();
    exact_every_variant(1, &shapes);
}

#[test]
#[ignore = "needs a CUDA device"]
fn more_row_tiles_than_grid_rows_are_walked_by_the_loop() {
    // 70000 rows: naive needs 8750 blocks of 8 rows (fits), the tiled variants fit too;
    // 600000 × 2 needs 75000 naive blocks in y (> 65535), so the grid-stride loop runs.
    exact_every_variant(2, &[[(600_000, 2), (70_000, 5)]]);
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
    every_variant(&mut b, Family::Transpose, |b, v| {
        for view in &views {
            let got = b.transpose(view.view()).unwrap();
            assert_eq!(got, view.t(), "{v}");
        }
        let empty = Array2::<f32>::zeros((0, 5));
        let got = b.transpose(empty.view()).unwrap();
        assert_eq!(got.dim(), (5, 0));
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn bad_arguments_give_errors() {
    let mut b = backend();
    assert_unknown_variant_refused(&mut b, Family::Transpose, "sideways");
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
