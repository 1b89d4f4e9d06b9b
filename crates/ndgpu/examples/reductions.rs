//! Per-axis reductions on tall-thin, short-wide and square matrices, against the
//! device's own copy of the same matrix (bytes read + written: the copy-bandwidth
//! ceiling), on resident data.
//!
//! ```text
//! cargo run --release -p ndgpu --example reductions -- [BACKEND...]
//! ```
//! prints a table and writes `reductions.csv` into `$OUT` (or the current folder).
//! Medians of 20 runs timed with CUDA events, after one untimed run. A reduction's bytes
//! are those read plus those written (per kept entry an f32, and for argmax an i64
//! index besides); its fraction of the copy rate is
//! the figure the every-size issue asks about (2²⁴ × 16 per row, ≥ 0.8).

use std::io::Write;

use ndgpu::ndarray::{Array2, Axis};
use ndgpu::{backend, ArgOp, Reduce, ReduceOp};

mod common;
use common::timed_reps;

fn main() -> ndgpu::Result<()> {
    let names: Vec<String> = std::env::args().skip(1).collect();
    let names = if names.is_empty() {
        vec!["cuda".to_string()]
    } else {
        names
    };
    let out = std::env::var("OUT").unwrap_or_else(|_| ".".into());
    let mut csv =
        std::fs::File::create(format!("{out}/reductions.csv")).expect("a writable folder");
    writeln!(
        csv,
        "backend,shape,op,axis,median_ms,min_ms,max_ms,gb_per_s,of_copy"
    )
    .unwrap();
    println!("| backend | shape (f32) | op | axis | median ms | GB/s | of copy |");
    println!("|---|---|---|---:|---:|---:|---:|");
    let shapes = [
        (1usize << 24, 16usize),
        (16, 1 << 24),
        (8192, 8192),
        (1 << 20, 32),
    ];
    for name in &names {
        let b = backend(name)?;
        for (rows, cols) in shapes {
            let x = Array2::from_shape_fn((rows, cols), |(i, j)| ((i * 31 + j * 7) % 97) as f32);
            let dx = b.upload(x.view())?;
            let mut dst = b.alloc(rows, cols)?;
            let bytes = (rows * cols * 4) as f64;
            let copy = timed_reps(&*b, 20, &mut || b.copy_into(&dx, &mut dst))?;
            let copy_rate = 2.0 * bytes / (copy.0 * 1e-3) / 1e9;
            // Bytes written per kept entry: the f32 values, and for arg ops the i64 indices.
            let mut row = |op: &str, axis: usize, t: (f64, f64, f64), written: usize| {
                let rate = (bytes + written as f64) / (t.0 * 1e-3) / 1e9;
                let shape = format!("{rows}x{cols}");
                println!(
                    "| {name} | {shape} | {op} | {axis} | {:.3} | {rate:.0} | {:.2} |",
                    t.0,
                    rate / copy_rate
                );
                writeln!(
                    csv,
                    "{name},{shape},{op},{axis},{:.4},{:.4},{:.4},{rate:.1},{:.3}",
                    t.0,
                    t.1,
                    t.2,
                    rate / copy_rate
                )
                .unwrap();
            };
            row("copy", 0, copy, rows * cols * 4);
            for axis in [0, 1] {
                let kept = if axis == 0 { cols } else { rows };
                let t = timed_reps(&*b, 20, &mut || {
                    Reduce::<f32>::reduce_axis_dev(&*b, ReduceOp::SumSq, &dx, Axis(axis)).map(drop)
                })?;
                row("sumsq", axis, t, kept * 4);
                let t = timed_reps(&*b, 20, &mut || {
                    Reduce::<f32>::arg_reduce_axis_dev(&*b, ArgOp::ArgMax, &dx, Axis(axis))
                        .map(drop)
                })?;
                row("argmax", axis, t, kept * 12);
            }
        }
    }
    Ok(())
}
