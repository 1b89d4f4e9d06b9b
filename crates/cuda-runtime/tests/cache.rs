//! The on-disk kernel cache's file format and folder handling: no GPU, no NVRTC.

use std::ffi::OsString;
use std::path::PathBuf;

use ndgpu_cuda_runtime::cache::{self, Compiled, DiskCache, Invalid, Key};

fn entry() -> Compiled {
    Compiled {
        cubin: (0..=255u8).cycle().take(10_000).collect(),
        log: "ptxas info    : Used 40 registers".into(),
    }
}

fn key(text: &str) -> Key {
    Key::of([text.as_bytes()])
}

#[test]
fn an_entry_round_trips() {
    let bytes = cache::encode(&key("a"), &entry());
    assert_eq!(cache::decode(&key("a"), &bytes), Ok(entry()));
}

#[test]
fn an_entry_with_an_empty_log_round_trips() {
    let c = Compiled {
        log: String::new(),
        ..entry()
    };
    assert_eq!(
        cache::decode(&key("a"), &cache::encode(&key("a"), &c)),
        Ok(c)
    );
}

#[test]
fn the_entry_of_another_key_is_rejected() {
    let bytes = cache::encode(&key("a"), &entry());
    assert_eq!(cache::decode(&key("b"), &bytes), Err(Invalid::Key));
}

#[test]
fn keys_tell_their_parts_apart() {
    assert_ne!(Key::of([&b"ab"[..], b"c"]), Key::of([&b"a"[..], b"bc"]));
    assert_eq!(key("x"), key("x"));
    assert_eq!(key("x").hex().len(), 64);
}

#[test]
fn every_truncation_is_detected() {
    let bytes = cache::encode(&key("a"), &entry());
    for len in (0..bytes.len()).step_by(97).chain([bytes.len() - 1]) {
        let r = cache::decode(&key("a"), &bytes[..len]);
        assert!(r.is_err(), "a file cut to {len} bytes was accepted");
    }
    let r = cache::decode(&key("a"), &bytes[..bytes.len() - 1]);
    assert_eq!(r, Err(Invalid::Truncated));
}

#[test]
fn a_flipped_byte_anywhere_is_detected() {
    let bytes = cache::encode(&key("a"), &entry());
    for at in (0..bytes.len()).step_by(53) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        assert!(
            cache::decode(&key("a"), &bad).is_err(),
            "a flipped byte at {at} was accepted"
        );
    }
    let mut bad = bytes.clone();
    *bad.last_mut().unwrap() ^= 1;
    assert_eq!(cache::decode(&key("a"), &bad), Err(Invalid::Checksum));
    let mut longer = bytes;
    longer.push(0);
    assert_eq!(cache::decode(&key("a"), &longer), Err(Invalid::Truncated));
}

#[test]
fn a_foreign_file_is_rejected() {
    assert_eq!(cache::decode(&key("a"), b""), Err(Invalid::Truncated));
    assert_eq!(
        cache::decode(&key("a"), &[0x7f, b'E', b'L', b'F']),
        Err(Invalid::Magic)
    );
    let mut elf = vec![0x7f, b'E', b'L', b'F'];
    elf.resize(4096, 0);
    assert_eq!(cache::decode(&key("a"), &elf), Err(Invalid::Magic));
}

#[test]
fn a_store_is_loaded_and_a_miss_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let disk = DiskCache::new(dir.path().join("nested/kernels"));
    assert!(disk.load("matmul-sm_90", &key("a")).is_err());
    disk.store("matmul-sm_90", &key("a"), &entry()).unwrap();
    assert_eq!(disk.load("matmul-sm_90", &key("a")).unwrap(), entry());
    assert!(disk.load("matmul-sm_90", &key("b")).is_err());
    // Nothing but the entry is left in the folder.
    let files: Vec<_> = std::fs::read_dir(disk.dir()).unwrap().collect();
    assert_eq!(files.len(), 1);
}

#[test]
fn a_corrupt_file_is_ignored_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let disk = DiskCache::new(dir.path());
    let path = disk.path("qr-sm_90", &key("a"));
    disk.store("qr-sm_90", &key("a"), &entry()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = disk.load("qr-sm_90", &key("a")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    disk.store("qr-sm_90", &key("a"), &entry()).unwrap();
    assert_eq!(disk.load("qr-sm_90", &key("a")).unwrap(), entry());
}

#[test]
fn concurrent_writers_of_one_key_leave_a_valid_entry() {
    let dir = tempfile::tempdir().unwrap();
    let disk = DiskCache::new(dir.path());
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..20 {
                    disk.store("lu-sm_90", &key("a"), &entry()).unwrap();
                    // A reader between the writes sees a whole entry or none.
                    if let Ok(c) = disk.load("lu-sm_90", &key("a")) {
                        assert_eq!(c, entry());
                    }
                }
            });
        }
    });
    assert_eq!(disk.load("lu-sm_90", &key("a")).unwrap(), entry());
    let files: Vec<_> = std::fs::read_dir(disk.dir()).unwrap().collect();
    assert_eq!(files.len(), 1, "temporary files were left: {files:?}");
}

#[test]
fn an_unwritable_folder_is_an_error_value() {
    let dir = tempfile::tempdir().unwrap();
    // A folder below a plain file cannot be created, even by root.
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let disk = DiskCache::new(file.join("kernels"));
    assert!(disk.store("lu-sm_90", &key("a"), &entry()).is_err());
    assert!(disk.load("lu-sm_90", &key("a")).is_err());
}

#[test]
fn the_folder_follows_the_environment() {
    let os = |s: &str| Some(OsString::from(s));
    let folder = cache::folder_from;
    assert_eq!(
        folder(os("/c"), os("/x"), os("/h")),
        Some(PathBuf::from("/c"))
    );
    assert_eq!(folder(os("off"), os("/x"), os("/h")), None);
    assert_eq!(
        folder(None, os("/x"), os("/h")),
        Some(PathBuf::from("/x/ndgpu/kernels"))
    );
    assert_eq!(
        folder(os(""), os("relative"), os("/h")),
        Some(PathBuf::from("/h/.cache/ndgpu/kernels"))
    );
    assert_eq!(folder(None, None, None), None);
}
