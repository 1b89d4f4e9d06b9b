//! What the examples share: timing and their data.

use ndgpu::ndarray::Array2;
use ndgpu::Backend;

/// (median, min, max).
pub fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// `f` timed `reps` times on the device (CUDA events), after one untimed run: (median,
/// min, max) in ms.
pub fn timed_reps(
    b: &dyn Backend,
    reps: usize,
    f: &mut dyn FnMut() -> ndgpu::Result<()>,
) -> ndgpu::Result<(f64, f64, f64)> {
    f()?;
    b.synchronize()?;
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        t.push(b.time(f)? * 1e3);
    }
    Ok(median(t))
}

/// `f` timed `reps` times on the host clock (it returns when its results are on the
/// host), after one untimed run: (median, min, max) in ms.
#[allow(dead_code)]
pub fn wall_reps(
    reps: usize,
    f: &mut dyn FnMut() -> ndgpu::Result<()>,
) -> ndgpu::Result<(f64, f64, f64)> {
    f()?;
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = std::time::Instant::now();
        f()?;
        t.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(t))
}

/// N points in D dimensions around K centres, filled by several threads.
#[allow(dead_code)]
pub fn points(n: usize, d: usize, k: usize) -> Array2<f32> {
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
