//! Runs everywhere, CI included: without a GPU or without the vendor libraries the
//! backend must answer with `Error::Unavailable`, never a panic.

use ndgpu_core::{Backend, Device, Error};
use ndgpu_cublas::CublasBackend;

#[test]
fn new_gives_a_backend_or_unavailable_and_never_panics() {
    match CublasBackend::new(0) {
        Ok(b) => {
            assert_eq!(b.name(), "cublas");
            let d = b.description();
            assert!(d.contains("cuBLAS") && d.contains("cuSOLVER"), "{d}");
        }
        Err(Error::Unavailable { backend, reason }) => {
            assert_eq!(backend, "cublas");
            assert!(!reason.is_empty(), "an Unavailable error must say why");
        }
        Err(other) => panic!("expected a backend or Error::Unavailable, got: {other}"),
    }
}

#[test]
fn versions_are_numbers_or_unavailable() {
    match ndgpu_cublas::versions() {
        Ok((cublas, cusolver)) => {
            for v in [&cublas, &cusolver] {
                let parts: Vec<&str> = v.split('.').collect();
                assert_eq!(parts.len(), 3, "{v}");
                assert!(parts.iter().all(|p| p.parse::<u32>().is_ok()), "{v}");
            }
        }
        Err(Error::Unavailable { backend, reason }) => {
            assert_eq!(backend, "cublas");
            assert!(
                reason.contains("cuBLAS") || reason.contains("cuSOLVER"),
                "{reason}"
            );
        }
        Err(other) => panic!("expected versions or Error::Unavailable, got: {other}"),
    }
}

#[test]
fn a_missing_library_is_named_in_the_probe() {
    // Either both libraries are usable, or the reason names the one that is not.
    if let Err(reason) = ndgpu_cublas::probe_libraries() {
        assert!(
            reason.contains("cuBLAS") || reason.contains("cuSOLVER"),
            "{reason}"
        );
    }
}

#[test]
fn versions_are_read_exactly_when_the_probe_passes() {
    match (ndgpu_cublas::probe_libraries(), ndgpu_cublas::versions()) {
        (Ok(()), Ok(_)) => {}
        (
            Err(reason),
            Err(Error::Unavailable {
                backend,
                reason: why,
            }),
        ) => {
            assert_eq!((backend.as_str(), why), ("cublas", reason));
        }
        (probe, versions) => panic!("the probe gave {probe:?} but versions {versions:?}"),
    }
}
