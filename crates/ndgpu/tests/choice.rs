//! Run-time backend choice. These run in CI, on a machine without a GPU: asking for a
//! GPU backend there must be an error value, never a panic.

use ndgpu::{backend, backends, Error, Family};

#[test]
fn cpu_is_always_available_and_listed() {
    let list = backends();
    let cpu = list.iter().find(|b| b.name == "cpu").expect("cpu listed");
    assert!(cpu.status.is_ok(), "{:?}", cpu.status);
    assert_eq!(backend("cpu").unwrap().name(), "cpu");
}

#[test]
fn every_listed_backend_opens_iff_it_is_available() {
    for info in backends() {
        match (backend(info.name), &info.status) {
            (Ok(b), Ok(_)) => assert_eq!(b.name(), info.name),
            (Err(Error::Unavailable { reason, .. }), Err(listed)) => assert_eq!(&reason, listed),
            (got, listed) => panic!(
                "{}: open gave {:?}, list says {listed:?}",
                info.name,
                got.map(|b| b.name())
            ),
        }
    }
}

#[test]
fn unknown_backend_is_an_error_naming_the_known_ones() {
    match backend("tpu") {
        Err(Error::UnknownBackend { name, known }) => {
            assert_eq!(name, "tpu");
            assert!(known.contains("cpu") && known.contains("auto"), "{known}");
        }
        other => panic!("expected UnknownBackend, got {:?}", other.map(|b| b.name())),
    }
}

#[test]
fn auto_picks_the_override_or_the_first_available_backend() {
    let b = backend("auto").expect("auto never fails without an override naming a missing backend");
    match std::env::var(ndgpu::BACKEND_ENV) {
        // A developer who sets NDGPU_BACKEND gets that backend from auto.
        Ok(forced) if !forced.is_empty() && forced != "auto" => assert_eq!(b.name(), forced),
        _ => {
            let available: Vec<_> = backends()
                .into_iter()
                .filter(|i| i.status.is_ok())
                .map(|i| i.name)
                .collect();
            assert_eq!(
                b.name(),
                available[0],
                "auto must pick the first available of {available:?}"
            );
        }
    }
}

#[test]
fn unknown_variant_is_an_error_listing_the_variants() {
    let mut b = backend("cpu").unwrap();
    match b.set_variant(Family::MatMul, "warp-speed") {
        Err(Error::UnknownVariant { available, .. }) => {
            assert!(available.contains(b.variant(Family::MatMul)))
        }
        other => panic!("expected UnknownVariant, got {other:?}"),
    }
}

/// The host backends have one variant per family (the reference's `reference`,
/// faer's `faer`), and selecting another is an error.
#[test]
fn host_backends_have_one_variant_per_family() {
    let mut hosts = vec![("cpu", "reference", "faer")];
    if cfg!(feature = "faer") {
        hosts.push(("faer", "faer", "reference"));
    }
    for (name, only, other) in hosts {
        let mut b = backend(name).unwrap();
        for f in Family::ALL {
            assert_eq!(b.variants(f), vec![only], "{name} {f:?}");
            assert_eq!(b.variant(f), only);
            b.set_variant(f, only).unwrap();
            assert!(b.set_variant(f, other).is_err(), "{name} accepted {other}");
        }
    }
}

/// Without a usable GPU a group is unavailable with the reason; with one, it opens over
/// the devices named, and a device that is not there is named.
#[test]
fn a_group_of_devices_opens_or_says_why_not() {
    let b = ndgpu::backend("cuda:0,1");
    if ndgpu_cuda_probe_fails() {
        match b {
            Err(Error::Unavailable { backend, .. }) => assert_eq!(backend, "cuda:0,1"),
            other => panic!("expected Unavailable, got {:?}", other.map(|b| b.name())),
        }
    } else {
        match b {
            Ok(b) => assert_eq!(b.name(), "cuda:0,1"),
            Err(Error::Unavailable { reason, .. }) => assert!(
                reason.contains("no device 1") || reason.contains("NCCL"),
                "{reason}"
            ),
            Err(e) => panic!("{e}"),
        }
    }
    assert!(matches!(
        ndgpu::backend("cuda:0,0"),
        Err(Error::InvalidArgument { .. })
    ));
}

fn ndgpu_cuda_probe_fails() -> bool {
    ndgpu::backends()
        .iter()
        .any(|i| i.name == "cuda" && i.status.is_err())
}

/// Precision is asked for by name; the backend's table says which variants give it (no
/// device needed to read the tables).
#[test]
fn variants_are_found_by_precision_and_a_missing_one_is_an_error() {
    use ndgpu::Precision;
    let cuda = ndgpu::CudaBackend::variant_table();
    assert_eq!(
        cuda.of_precision(Family::MatMul, Precision::Tf32),
        ["tensor_core", "wgmma"]
    );
    assert_eq!(
        cuda.of_precision(Family::MatMul, Precision::Tf32x3),
        ["tensor_core_3x", "wgmma_3x"]
    );
    assert_eq!(
        cuda.of_precision(Family::Gram, Precision::Tf32x3),
        ["tensor_core", "wgmma"]
    );
    let cublas = ndgpu::CublasBackend::variant_table();
    assert_eq!(
        cublas.of_precision(Family::MatMul, Precision::Tf32),
        ["gemm_tf32"]
    );

    let mut cpu = backend("cpu").unwrap();
    cpu.set_precision(Family::MatMul, Precision::Ieee).unwrap();
    assert_eq!(cpu.variant(Family::MatMul), cpu.variants(Family::MatMul)[0]);
    match cpu.set_precision(Family::MatMul, Precision::Tf32) {
        Err(Error::Unavailable { backend, reason }) => {
            assert_eq!(backend, "cpu");
            assert!(
                reason.contains("tf32") && reason.contains("matmul"),
                "{reason}"
            );
        }
        other => panic!("cpu tf32: {other:?}"),
    }
}
