//! One device against a group of devices, on the two workloads of the multi-GPU issue:
//! a 16384² f32 GEMM (B gathered to every device inside the timed region) and one
//! k-means iteration (assignment + update) at N = 2²⁷, D = 32, K = 128 in f32, with the
//! centroids as the API's k-means keeps them (uploaded, so split by rows over a group).
//!
//! ```text
//! cargo run --release -p ndgpu --example scaling -- [BACKEND...]
//! ```
//! prints a table and writes `scaling.csv` into `$OUT` (or the current folder). Each
//! figure is the median of the timed runs (CUDA events on the first device, which waits
//! for the others), after one untimed run.

use std::io::Write;

use ndgpu::ndarray::Array2;
use ndgpu::{backend, Backend, Gemm, KMeans};

const REPS: usize = 7;

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn timed(
    b: &dyn Backend,
    f: &mut dyn FnMut() -> ndgpu::Result<()>,
) -> ndgpu::Result<(f64, f64, f64)> {
    f()?;
    b.synchronize()?;
    let mut t = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        t.push(b.time(f)? * 1e3);
    }
    Ok(median(t))
}

/// Points around K centres, filled by several threads (2²⁷ × 32 values).
fn points(n: usize, d: usize, k: usize) -> Array2<f32> {
    let mut x = Array2::<f32>::zeros((n, d));
    let threads = std::thread::available_parallelism().map_or(4, |p| p.get());
    let rows = n.div_ceil(threads);
    let slice = x.as_slice_mut().expect("C order");
    std::thread::scope(|s| {
        for (t, block) in slice.chunks_mut(rows * d).enumerate() {
            s.spawn(move || {
                let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ t as u64;
                for (e, v) in block.iter_mut().enumerate() {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let i = t * rows + e / d;
                    let centre = ((i * 7919 % k) as f32) * 4.0 - (e % d) as f32;
                    *v = centre + (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                }
            });
        }
    });
    x
}

fn main() -> ndgpu::Result<()> {
    let names: Vec<String> = std::env::args().skip(1).collect();
    let names = if names.is_empty() {
        ["cuda", "cuda:all", "cublas", "cublas:all"]
            .map(String::from)
            .to_vec()
    } else {
        names
    };
    let out = std::env::var("OUT").unwrap_or_else(|_| ".".into());
    let mut csv = std::fs::File::create(format!("{out}/scaling.csv")).expect("a writable folder");
    writeln!(csv, "backend,devices,workload,median_ms,min_ms,max_ms,runs").unwrap();
    let n = 16384;
    let a = Array2::from_shape_fn((n, n), |(i, j)| {
        ((i * 31 + j * 17) % 101) as f32 / 101.0 - 0.5
    });
    let (kn, kd, kk) = (1usize << 27, 32, 128);
    let x = points(kn, kd, kk);
    let start = x.slice(ndgpu::ndarray::s![..kk, ..]).to_owned();
    println!("| backend | devices | workload | median ms | min–max ms |");
    println!("|---|---:|---|---:|---:|");
    for name in &names {
        let b = backend(name)?;
        let devices = b
            .description()
            .split(" devices")
            .next()
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or(1);
        let mut row = |what: &str, (med, lo, hi): (f64, f64, f64)| {
            println!("| {name} | {devices} | {what} | {med:.3} | {lo:.3}–{hi:.3} |");
            writeln!(
                csv,
                "{name},{devices},{what},{med:.4},{lo:.4},{hi:.4},{REPS}"
            )
            .unwrap();
        };
        {
            let (da, db) = (b.upload(a.view())?, b.upload(a.view())?);
            let mut dc = b.alloc(n, n)?;
            let t = timed(&*b, &mut || b.gemm_dev(Gemm::new(), &da, &db, &mut dc))?;
            row("gemm 16384 f32", t);
        }
        {
            let dx = b.upload(x.view())?;
            let mut c = b.upload(start.view())?;
            let mut labels = b.unlabeled(kn)?;
            let t = timed(&*b, &mut || {
                b.assign_dev(&dx, &c, &mut labels)?;
                KMeans::<f32>::update_dev(&*b, &dx, &labels, &mut c)
            })?;
            row("kmeans iteration 2^27x32 k=128 f32", t);
        }
    }
    Ok(())
}
