//! k-means end to end, as a user gets it: through `Box<dyn Backend>` from host arrays
//! (upload, seeding, 20 Lloyd iterations, download of centroids and labels), and the
//! resident steps alone.
//!
//! ```text
//! cargo run --release -p ndgpu --example kmeans -- [BACKEND[/KMEANS_VARIANT]...]
//! ```
//! prints a table and writes `kmeans.csv` into `$OUT` (or the current folder). Host-clock
//! figures (`end to end`) are medians of 5 runs after one untimed run; device figures
//! (`resident`) medians of 20 runs timed with CUDA events. f32; 20 iterations exactly
//! (no centroid-shift test, tol = 0; change_tol = 0, max_iter = 20, on data without
//! cluster structure) so that every backend does the same work.
//! `crates/shootout/peer/kmeans.py` times PyTorch and scikit-learn on the same shapes.

use std::io::Write;

use ndgpu::ndarray::{s, Array2};
use ndgpu::{backend, backend_with, Backend, Cluster, Family, Init, KMeansConfig};

mod common;
use common::{median, points, timed_reps, wall_reps};

const ITERATIONS: usize = 20;

type Row<'a> = &'a mut dyn FnMut(&str, (f64, f64, f64), usize);

fn end_to_end(b: &dyn Backend, x: &Array2<f32>, k: usize, row: Row<'_>) -> ndgpu::Result<()> {
    let start = x.slice(s![..k, ..]).mapv(f64::from);
    let base = KMeansConfig::new(k).tol(0.0).max_iter(ITERATIONS);
    for (what, init) in [
        ("k-means++ + 20 iterations", Init::KMeansPlusPlus),
        ("k-means|| + 20 iterations", Init::kmeans_parallel()),
        ("given init, 20 iterations", Init::Given(start.clone())),
    ] {
        let config = base.clone().init(init);
        let mut iterations = 0;
        let t = wall_reps(5, &mut || {
            let r = Cluster::<f32>::kmeans(b, x.view(), &config)?;
            iterations = r.iterations;
            Ok(())
        })?;
        row(&format!("end to end: {what}"), t, iterations);
    }
    // Where the time of the given-init fit goes, on the host clock.
    let config = base.init(Init::Given(start));
    let (mut up, mut fit, mut down) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..6 {
        let t0 = std::time::Instant::now();
        let dx = b.upload(x.view())?;
        b.synchronize()?;
        let t1 = std::time::Instant::now();
        let f = Cluster::<f32>::kmeans_dev(b, &dx, &config)?;
        let t2 = std::time::Instant::now();
        b.download(&f.centroids)?;
        b.download_indices(&f.labels)?;
        let t3 = std::time::Instant::now();
        let ms = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e3;
        up.push(ms(t0, t1));
        fit.push(ms(t1, t2));
        down.push(ms(t2, t3));
    }
    // The first round warms up, as wall_reps' untimed run does.
    row(
        "given init, part: upload of X (host clock)",
        median(up.split_off(1)),
        0,
    );
    row(
        "given init, part: 20 iterations (host clock)",
        median(fit.split_off(1)),
        ITERATIONS,
    );
    row(
        "given init, part: download of centroids and labels",
        median(down.split_off(1)),
        0,
    );
    Ok(())
}

fn resident(
    b: &dyn Backend,
    x: &Array2<f32>,
    k: usize,
    row: Row<'_>,
    seeding: bool,
) -> ndgpu::Result<()> {
    let (n, d) = x.dim();
    let dx = b.upload(x.view())?;
    if seeding {
        for init in [Init::KMeansPlusPlus, Init::kmeans_parallel()] {
            let config = KMeansConfig::new(k).init(init);
            let t = timed_reps(b, 5, &mut || {
                Cluster::<f32>::seed_dev(b, &dx, &config).map(drop)
            })?;
            row(&format!("resident: seeding {}", config.init.name()), t, 0);
        }
        let t = timed_reps(b, 5, &mut || b.upload(x.view()).map(drop))?;
        row("upload of X", t, 0);
    }
    let mut c = b.upload(x.slice(s![..k, ..]))?;
    let mut labels = b.unlabeled(n)?;
    let t = timed_reps(b, 20, &mut || {
        b.assign_dev(&dx, &c, &mut labels)?;
        Cluster::<f32>::update_dev(b, &dx, &labels, &mut c)
    })?;
    row(&format!("resident: one iteration, D={d} K={k}"), t, 1);
    let t = timed_reps(b, 20, &mut || b.assign_dev(&dx, &c, &mut labels).map(drop))?;
    row(&format!("resident: assignment alone, D={d} K={k}"), t, 1);
    Ok(())
}

/// The `cuda` backend's two exact assignments side by side (the same labels, bit for
/// bit): where the tensor-core pre-pass pays.
fn crossover(x: &[&Array2<f32>], row: Row<'_>) -> ndgpu::Result<()> {
    for x in x {
        let (n, d) = x.dim();
        for k in [16, 128, 512, 1024] {
            for variant in ["fused", "tensor_core"] {
                let b = backend_with("cuda", &[(Family::KMeans, variant)])?;
                let dx = b.upload(x.view())?;
                let c = b.upload(x.slice(s![..k, ..]))?;
                let mut labels = b.unlabeled(n)?;
                let t = timed_reps(&*b, 20, &mut || {
                    b.assign_dev(&dx, &c, &mut labels).map(drop)
                })?;
                row(
                    &format!("crossover: assignment, D={d} K={k}, {variant}"),
                    t,
                    1,
                );
            }
        }
    }
    Ok(())
}

fn main() -> ndgpu::Result<()> {
    let names: Vec<String> = std::env::args().skip(1).collect();
    let names = if names.is_empty() {
        ["cuda", "cublas"].map(String::from).to_vec()
    } else {
        names
    };
    let out = std::env::var("OUT").unwrap_or_else(|_| ".".into());
    let mut csv = std::fs::File::create(format!("{out}/kmeans.csv")).expect("a writable folder");
    writeln!(csv, "backend,workload,median_ms,min_ms,max_ms,iterations").unwrap();
    let n = 1 << 20;
    // Uniform in a box (one "centre"): no cluster structure, so Lloyd's iteration still
    // moves points after 20 steps, as on hard real data.
    let small = points(n, 32, 1);
    let large = points(n, 128, 1);
    println!("| backend | workload (N = 2^20, f32) | median ms | min–max ms | iterations |");
    println!("|---|---|---:|---:|---:|");
    for name in &names {
        let b = match name.split_once('/') {
            Some((bname, variant)) => backend_with(bname, &[(Family::KMeans, variant)])?,
            None => backend(name)?,
        };
        let mut row = |what: &str, (med, lo, hi): (f64, f64, f64), iterations: usize| {
            println!("| {name} | {what} | {med:.3} | {lo:.3}–{hi:.3} | {iterations} |");
            writeln!(csv, "{name},{what},{med:.4},{lo:.4},{hi:.4},{iterations}").unwrap();
        };
        end_to_end(&*b, &small, 128, &mut row)?;
        resident(&*b, &small, 128, &mut row, true)?;
        resident(&*b, &large, 1024, &mut row, false)?;
        if name == "cuda" {
            crossover(&[&small, &large], &mut row)?;
        }
    }
    Ok(())
}
