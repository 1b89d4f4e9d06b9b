//! `ndgpu random`: example inputs, so that the tool can be tried without NumPy. The
//! same seed gives the same file (a fixed generator, SplitMix64, not the system's).

use std::path::Path;

use clap::ValueEnum;
use ndarray::{Array, Array2, ArrayD, IxDyn};

use crate::args::{DTypeArg, KindArg, RandomArgs};
use crate::error::{Failure, Result};
use crate::npy;

/// The most elements a file may have: 2 GiB of f64.
const MAX_ELEMENTS: usize = 1 << 28;

pub fn random(args: &RandomArgs) -> Result<()> {
    npy::check_stdout(&[args.output.as_path()])?;
    let mut shape = parse_shape(&args.shape)?;
    let kind = args.kind;
    match (kind, shape.as_slice()) {
        (KindArg::Spd, &[n]) => shape = vec![n, n],
        (KindArg::Spd, &[r, c]) if r != c => {
            return Err(Failure::usage(format!(
                "random: an spd matrix is square, {r}x{c} is not (give N or NxN)"
            )))
        }
        (KindArg::Blobs, &[_]) => {
            return Err(Failure::usage(
                "random: blobs are points × dimensions: give ROWSxCOLS",
            ))
        }
        _ => {}
    }
    let mut rng = SplitMix64(args.seed);
    let f32 = args.dtype == DTypeArg::F32;
    let values: ArrayD<f64> = match (kind, shape.as_slice()) {
        (KindArg::Spd, &[n, _]) => spd(&mut rng, n).into_dyn(),
        (KindArg::Blobs, &[n, d]) => blobs(&mut rng, n, d, args.centers as usize).into_dyn(),
        (KindArg::Normal, _) => ArrayD::from_shape_simple_fn(IxDyn(&shape), || rng.normal()),
        _ => ArrayD::from_shape_simple_fn(IxDyn(&shape), || rng.uniform(f32)),
    };
    let path = args.output.as_path();
    if f32 {
        write(path, &values.mapv(|x| x as f32))?;
    } else {
        write(path, &values)?;
    }
    let to = if npy::is_stdout(path) {
        "stdout".to_string()
    } else {
        path.display().to_string()
    };
    let dtype = if f32 { "f32" } else { "f64" };
    let kind = kind
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string());
    let line = format!(
        "wrote {kind} {} {dtype} (seed {}) to {to}\n",
        npy::fmt_shape(&shape),
        args.seed
    );
    if npy::is_stdout(path) {
        eprint!("{line}");
        Ok(())
    } else {
        crate::error::emit(&line)
    }
}

fn write<A: ndarray_npy::WritableElement>(path: &Path, a: &ArrayD<A>) -> Result<()> {
    npy::write(path, a)
}

/// `ROWSxCOLS` (also with `×` or `,`) or `N`.
fn parse_shape(spec: &str) -> Result<Vec<usize>> {
    let bad = |why: &str| Failure::usage(format!("random: shape {spec:?}: {why}"));
    let dims = spec
        .split(['x', 'X', '×', ','])
        .map(|d| d.trim().parse::<usize>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| bad("give ROWSxCOLS (1000x64) or N, in whole numbers"))?;
    if dims.len() > 2 {
        return Err(bad("give ROWSxCOLS (1000x64) or N: at most 2 dimensions"));
    }
    match dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)) {
        Some(n) if n <= MAX_ELEMENTS => Ok(dims),
        _ => Err(bad(&format!("more than {MAX_ELEMENTS} elements"))),
    }
}

/// G·Gᵀ/n + I of an n×n standard normal G: symmetric (exactly), with eigenvalues at least
/// 1, so positive definite in f32 too.
fn spd(rng: &mut SplitMix64, n: usize) -> Array2<f64> {
    let g = Array2::from_shape_simple_fn((n, n), || rng.normal());
    let mut a = g.dot(&g.t()) / n.max(1) as f64 + Array2::<f64>::eye(n);
    for i in 0..n {
        for j in 0..i {
            a[[j, i]] = a[[i, j]];
        }
    }
    a
}

/// `n` points of `d` dimensions, each a centre (of `k`, drawn in [-10, 10)) plus
/// standard normal noise.
fn blobs(rng: &mut SplitMix64, n: usize, d: usize, k: usize) -> Array2<f64> {
    let centres = Array::from_shape_simple_fn((k, d), || 20.0 * rng.uniform(false) - 10.0);
    let mut x = Array2::zeros((n, d));
    for mut row in x.rows_mut() {
        let c = (rng.next() % k as u64) as usize;
        for (v, &m) in row.iter_mut().zip(centres.row(c)) {
            *v = m + rng.normal();
        }
    }
    x
}

/// SplitMix64 (Steele, Lea and Flood): small, fast, and the same stream everywhere.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), with f32's 24 bits when it is to be written as f32 (so that
    /// rounding cannot reach 1), else f64's 53.
    fn uniform(&mut self, f32: bool) -> f64 {
        let bits = if f32 { 24 } else { 53 };
        (self.next() >> (64 - bits)) as f64 / (1u64 << bits) as f64
    }

    /// Standard normal (Box–Muller; one of the pair).
    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(false); // (0, 1]: ln is finite
        let u2 = self.uniform(false);
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}
