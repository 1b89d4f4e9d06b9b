//! The conformance suite on the faer backend: every family against the reference, at
//! small sizes and at medium ones (a few hundred to ~1000, where the blocked Cholesky
//! has several blocks and the products several of faer's tiles), and the resident
//! chains.

use ndgpu_conformance::{assert_chains, assert_family, Sizes};
use ndgpu_core::{Device, Family, Memory, Place};
use ndgpu_cpu::CpuBackend;
use ndgpu_faer::FaerBackend;

#[test]
fn every_family_at_small_sizes() {
    for family in Family::ALL {
        assert_family(&FaerBackend::new(), family, Sizes::Small);
    }
}

#[test]
fn products_and_cholesky_at_medium_sizes() {
    for family in [Family::MatMul, Family::Gram, Family::Cholesky] {
        assert_family(&FaerBackend::new(), family, Sizes::Medium);
    }
}

#[test]
fn reductions_transpose_and_kmeans_at_medium_sizes() {
    for family in [Family::Reduce, Family::Transpose, Family::KMeans] {
        assert_family(&FaerBackend::new(), family, Sizes::Medium);
    }
}

#[test]
fn resident_chains() {
    assert_chains(&FaerBackend::new(), Sizes::Small);
}

/// The host backends share their arrays: one's result is the other's operand.
#[test]
fn arrays_are_shared_with_the_reference() {
    let (fast, cpu) = (FaerBackend::new(), CpuBackend::new());
    assert_eq!(fast.place(), Place::Host);
    let a = ndarray::Array2::from_shape_fn((5, 3), |(i, j)| (i * 3 + j) as f64);
    let m = fast.upload(a.view()).unwrap();
    let g = ndgpu_core::MatMul::gram_dev(&cpu, &m).unwrap();
    assert_eq!(fast.download(&g).unwrap(), a.dot(&a.t()));
    assert_eq!(fast.name(), "faer");
}
