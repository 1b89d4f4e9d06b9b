//! Resident arrays across the GPU backends opened by name: the chains of the conformance
//! suite on every variant of every family, the two backends of a device sharing their
//! arrays, and arrays from another place refused with both places named. Run on a GPU
//! machine with `--include-ignored`.

use ndgpu::ndarray::Array2;
use ndgpu::{backend, Error, Family, ReduceOp};
use ndgpu_conformance::{assert_chains, Sizes};

#[test]
#[ignore = "needs a CUDA device"]
fn resident_chains_on_every_variant_of_both_gpu_backends() {
    for name in ["cuda", "cublas"] {
        let mut b = backend(name).expect("a CUDA device");
        assert_chains(&*b, Sizes::from_env(Sizes::Medium));
        for family in Family::ALL {
            let variants = b.variants(family);
            for &v in &variants[1..] {
                b.set_variant(family, v).unwrap();
                // Each step of a chain is held to its variant's precision (TF32, 3xTF32).
                assert_chains(&*b, Sizes::Small);
            }
            b.set_variant(family, variants[0]).unwrap();
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_backends_of_a_device_share_arrays_and_other_places_are_refused() {
    let (cuda, cublas, cpu) = (
        backend("cuda").expect("a CUDA device"),
        backend("cublas").expect("cuBLAS"),
        backend("cpu").unwrap(),
    );
    assert_eq!(cuda.place(), cublas.place());
    let a = Array2::from_shape_fn((70, 33), |(i, j)| (i as f32 - j as f32) / 10.0);
    let on_gpu = cuda.upload(a.view()).unwrap();
    let g = cublas.gram_dev(&on_gpu).unwrap();
    let back = cuda.download(&g).unwrap();
    assert_eq!(back, cublas.gram(a.view()).unwrap());
    let on_host = cpu.upload(a.view()).unwrap();
    match cuda.reduce_dev(ReduceOp::Sum, &on_host) {
        Err(e @ Error::WrongPlace { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("host memory") && text.contains("CUDA device"),
                "{text}"
            );
        }
        other => panic!("expected WrongPlace, got {other:?}"),
    }
    match cpu.gram_dev(&on_gpu) {
        Err(Error::WrongPlace {
            found, expected, ..
        }) => {
            assert_eq!((found, expected), (cuda.place(), cpu.place()));
        }
        other => panic!("expected WrongPlace, got {:?}", other.map(|m| m.dim())),
    }
}
