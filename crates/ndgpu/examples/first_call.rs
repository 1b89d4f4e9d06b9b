//! The first call of a process, as a user meets it: opening a GPU backend by name, an
//! upload of a 4096² f32 matrix, one GEMM of it by itself on the device (its kernels
//! compiled, or loaded from the on-disk kernel cache, on the way), then the same GEMM
//! again.
//!
//! ```text
//! cargo run --release -p ndgpu --example first_call -- cuda
//! ```
//! One backend per process (the first call is once per process). Run it twice with the
//! same `NDGPU_CACHE_DIR`: the first run fills the cache, the second is the warm case.
//! Host clock; each GEMM is followed by a synchronisation.

use std::time::Instant;

use ndgpu::ndarray::Array2;

const N: usize = 4096;

fn main() -> ndgpu::Result<()> {
    let name = std::env::args().nth(1).unwrap_or_else(|| "cuda".into());
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let b = ndgpu::backend(&name)?;
    let open = ms(t);
    let host = Array2::<f32>::from_shape_fn((N, N), |(i, j)| ((i * 7 + j * 3) % 13) as f32);
    let t = Instant::now();
    let a = b.upload(host.view())?;
    b.synchronize()?;
    let upload = ms(t);
    let t = Instant::now();
    let c = b.matmul_dev(&a, &a)?;
    b.synchronize()?;
    let first = ms(t);
    drop(c);
    let t = Instant::now();
    let c = b.matmul_dev(&a, &a)?;
    b.synchronize()?;
    let second = ms(t);
    drop(c);
    println!(
        "{name}: open {open:.1} ms, upload {upload:.1} ms, first {N}² GEMM {first:.1} ms, \
         open + first GEMM {:.1} ms, second GEMM {second:.1} ms",
        open + first
    );
    Ok(())
}
