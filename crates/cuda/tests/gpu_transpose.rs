//! GPU tests of the transpose ladder: conformance for every variant, exact results on
//! odd shapes with a NaN-poisoned output, strided inputs through the trait, errors.
//! Run on a GPU machine with `cargo test -p ndgpu-cuda --test gpu_transpose -- --ignored`.

use ndarray::{s, Array2};
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{Backend, Error, Family, Transpose};
use ndgpu_cuda::ops::transpose::{self, VARIANTS};
use ndgpu_cuda::{CudaBackend, CudaElement, Gpu};

/// SplitMix64: deterministic values in [-1, 1) without a rand dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    fn matrix<T: CudaElement>(&mut self, rows: usize, cols: usize) -> Array2<T> {
        Array2::from_shape_simple_fn((rows, cols), || T::from_f64(self.next()))
    }
}

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

/// Device-level transpose into an output poisoned with NaN: every element must be
/// written, and equal to the input's bit for bit.
fn check_exact<T: CudaElement + Bits>(
    gpu: &Gpu,
    variant: &str,
    rows: usize,
    cols: usize,
    rng: &mut Rng,
) {
    let a = rng.matrix::<T>(rows, cols);
    let d = gpu.upload(a.view()).unwrap();
    let poison = Array2::<T>::from_elem((cols, rows), T::from_f64(f64::NAN));
    let mut out = gpu.upload(poison.view()).unwrap();
    transpose::transpose(gpu, variant, &d, &mut out).unwrap();
    let got = gpu.download(&out).unwrap();
    assert_eq!(got.dim(), (cols, rows));
    for ((i, j), v) in got.indexed_iter() {
        assert!(
            v.to_bits_u64() == a[[j, i]].to_bits_u64(),
            "{variant} {}: {rows}x{cols}: out[{i}][{j}] = {v}, expected {}",
            T::SUFFIX,
            a[[j, i]]
        );
    }
}

/// Bit patterns of both dtypes, for exact comparisons that also catch NaN.
trait Bits {
    fn to_bits_u64(self) -> u64;
}
impl Bits for f32 {
    fn to_bits_u64(self) -> u64 {
        self.to_bits() as u64
    }
}
impl Bits for f64 {
    fn to_bits_u64(self) -> u64 {
        self.to_bits()
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_passes_the_conformance_cases() {
    let mut b = backend();
    assert_eq!(b.variants(Family::Transpose), VARIANTS);
    for v in b.variants(Family::Transpose) {
        b.set_variant(Family::Transpose, v).unwrap();
        assert_family(&b, Family::Transpose, Sizes::from_env(Sizes::Medium));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_variant_is_exact_on_odd_shapes() {
    let b = backend();
    let mut rng = Rng(1);
    for v in VARIANTS {
        for &(r, c) in ODD_SHAPES {
            check_exact::<f32>(b.gpu(), v, r, c, &mut rng);
            check_exact::<f64>(b.gpu(), v, r, c, &mut rng);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn more_row_tiles_than_grid_rows_are_walked_by_the_loop() {
    // 70000 rows: naive needs 8750 blocks of 8 rows (fits), the tiled variants fit too;
    // 600000 × 2 needs 75000 naive blocks in y (> 65535), so the grid-stride loop runs.
    let b = backend();
    let mut rng = Rng(2);
    for v in VARIANTS {
        check_exact::<f32>(b.gpu(), v, 600_000, 2, &mut rng);
        check_exact::<f64>(b.gpu(), v, 70_000, 5, &mut rng);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn strided_and_transposed_views_through_the_trait() {
    let mut b = backend();
    let mut rng = Rng(3);
    let a = rng.matrix::<f64>(70, 90);
    let views = [
        a.view(),
        a.t(),
        a.slice(s![3..60;2, 1..88;3]),
        a.slice(s![..;-1, ..]),
    ];
    for v in VARIANTS {
        b.set_variant(Family::Transpose, v).unwrap();
        for view in &views {
            let got = Transpose::<f64>::transpose(&b, view.view()).unwrap();
            assert_eq!(got, view.t(), "{v}");
        }
        let empty = Array2::<f32>::zeros((0, 5));
        let got = Transpose::<f32>::transpose(&b, empty.view()).unwrap();
        assert_eq!(got.dim(), (5, 0));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn bad_arguments_give_errors() {
    let b = backend();
    let gpu = b.gpu();
    let a = gpu.upload(Array2::<f32>::ones((3, 4)).view()).unwrap();
    let mut wrong = gpu.alloc_matrix::<f32>("test", 3, 4).unwrap();
    let err = transpose::transpose(gpu, VARIANTS[0], &a, &mut wrong).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    let mut out = gpu.alloc_matrix::<f32>("test", 4, 3).unwrap();
    let err = transpose::transpose(gpu, "sideways", &a, &mut out).unwrap_err();
    assert!(matches!(err, Error::UnknownVariant { .. }), "{err}");

    let src = gpu.upload_slice("test", &[1.0f32, 2.0, 3.0]).unwrap();
    let mut dst = gpu.alloc::<f32>("test", 3).unwrap();
    transpose::copy(gpu, &src, &mut dst, 3).unwrap();
    assert_eq!(gpu.download_slice(&dst, 3).unwrap(), vec![1.0, 2.0, 3.0]);
    let err = transpose::copy(gpu, &src, &mut dst, 4).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
}
