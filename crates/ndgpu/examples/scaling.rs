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
use ndgpu::{backend, Backend, Cluster, Gemm};

const REPS: usize = 7;

mod common;
use common::{points, timed_reps};

fn timed(
    b: &dyn Backend,
    f: &mut dyn FnMut() -> ndgpu::Result<()>,
) -> ndgpu::Result<(f64, f64, f64)> {
    timed_reps(b, REPS, f)
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
                Cluster::<f32>::update_dev(&*b, &dx, &labels, &mut c)
            })?;
            row("kmeans iteration 2^27x32 k=128 f32", t);
        }
    }
    Ok(())
}
