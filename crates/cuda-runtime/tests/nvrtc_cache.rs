//! A kernel file compiled through the on-disk cache with the real NVRTC: the entry is
//! written, the next compile is served from it, a corrupt entry is compiled again and
//! replaced. Needs no GPU, only libnvrtc (`scripts/test` and `.ci/run` put it on
//! `LD_LIBRARY_PATH`); it fails rather than skips without it, as `crates/cuda/tests/nvrtc.rs`.

use ndgpu_cuda_runtime::cache::{Compiled, DiskCache};
use ndgpu_cuda_runtime::kernels::{self, KernelFile};

const FILE: KernelFile = KernelFile::TRIANGLE;
const ARCH: &str = "sm_90";
const NAME: &str = "triangle-sm_90";

#[test]
fn a_compiled_file_is_cached_on_disk_and_served_from_it() {
    let version = kernels::nvrtc_version().expect(
        "libnvrtc.so.13 not found: install it with `pip install --target DIR \
         nvidia-cuda-nvrtc==13.0.88` and put DIR/nvidia/cu13/lib on LD_LIBRARY_PATH",
    );
    let dir = tempfile::tempdir().unwrap();
    let disk = DiskCache::new(dir.path().join("kernels"));
    let key = kernels::cache_key(FILE, ARCH, version);

    let compiled = kernels::compile_with(FILE, ARCH, Some(&disk)).unwrap();
    assert!(!compiled.cubin.is_empty());
    assert_eq!(
        disk.load(NAME, &key).unwrap(),
        compiled,
        "no entry was written"
    );

    // The next compile reads the entry: a marked one under the same key comes back.
    let marked = Compiled {
        cubin: b"served from the cache".to_vec(),
        log: "marked".into(),
    };
    disk.store(NAME, &key, &marked).unwrap();
    assert_eq!(
        kernels::compile_with(FILE, ARCH, Some(&disk)).unwrap(),
        marked
    );

    // A corrupt entry is compiled again and replaced by a valid one.
    let path = disk.path(NAME, &key);
    let mut bytes = std::fs::read(&path).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let again = kernels::compile_with(FILE, ARCH, Some(&disk)).unwrap();
    assert_eq!(again.cubin, compiled.cubin);
    assert_eq!(disk.load(NAME, &key).unwrap(), again);

    // An unwritable folder leaves the compile as it is.
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let nowhere = DiskCache::new(file.join("kernels"));
    assert_eq!(
        kernels::compile_with(FILE, ARCH, Some(&nowhere))
            .unwrap()
            .cubin,
        compiled.cubin
    );
}

#[test]
fn the_key_changes_with_the_file_the_architecture_and_the_version() {
    let key = kernels::cache_key(FILE, ARCH, (13, 0));
    assert_eq!(key, kernels::cache_key(FILE, ARCH, (13, 0)));
    assert_ne!(key, kernels::cache_key(KernelFile::LU, ARCH, (13, 0)));
    assert_ne!(key, kernels::cache_key(FILE, "sm_80", (13, 0)));
    assert_ne!(key, kernels::cache_key(FILE, ARCH, (13, 1)));
}
