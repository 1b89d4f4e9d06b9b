//! Any bytes as a `.npy` file: the CLI's readers return a value or one clear error,
//! never a panic, an abort or an allocation sized by a header the file cannot back.
//! When the header is accepted, the readers agree with it.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ndgpu_cli::npy;

/// One scratch file per fuzzing process.
fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("ndgpu-fuzz-npy-{}.npy", std::process::id()))
    })
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(path, data).expect("the scratch file can be written");
    let header = npy::header(path);
    let m32 = npy::read_matrix::<f32>(path, false);
    let m64 = npy::read_matrix::<f64>(path, true);
    let v32 = npy::read_vector::<f32>(path);
    let any = npy::read_matrix_f64(path);
    let Ok(h) = header else {
        // A file whose header is refused is refused by every reader.
        assert!(m32.is_err() && m64.is_err() && v32.is_err() && any.is_err());
        return;
    };
    // An accepted header was checked against the file's length, so reading the
    // matching dtype and rank succeeds and gives exactly the header's shape.
    match (h.dtype, h.shape.as_slice()) {
        (ndgpu_cli::DType::F32, &[r, c]) => {
            assert_eq!(m32.expect("f32 matrix").dim(), (r, c));
            assert_eq!(any.expect("as f64").dim(), (r, c));
        }
        (ndgpu_cli::DType::F32, &[n]) => assert_eq!(v32.expect("f32 vector").len(), n),
        (ndgpu_cli::DType::F64, &[r, c]) => {
            assert_eq!(m64.expect("f64 matrix").dim(), (r, c));
            assert_eq!(any.expect("f64").dim(), (r, c));
        }
        (ndgpu_cli::DType::F64, &[n]) => assert_eq!(m64.expect("f64 column").dim(), (n, 1)),
        _ => assert!(m32.is_err() && v32.is_err()),
    }
});
