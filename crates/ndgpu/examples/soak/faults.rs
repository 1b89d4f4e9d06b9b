//! Faults the soak injects on one thread while the others run their mix: an allocation
//! far beyond the device's (or the host's) memory, which must be refused as out of
//! memory; and a panic in the closure `Device::time` runs, which must reach the caller
//! and leave the backend working.

use std::panic::{catch_unwind, panic_any, AssertUnwindSafe};

use ndgpu::ndarray::Array2;
use ndgpu::prelude::*;
use ndgpu::{CpuBackend, Error};
use ndgpu_conformance::data::Rng;

use crate::stats::Tally;

/// The payload of the injected panic; the hook of [`silence_injected_panics`] does not
/// print it.
const MARKER: &str = "soak: the injected panic in a `time` closure";

/// Rows and columns of the f32 matrix asked for: 2⁴² bytes (4 TiB), beyond one device's
/// memory and each device's share on a group of up to 8 (512 GiB), and beyond the host's
/// memory and swap, which the host backends refuse up front.
const HUGE: (usize, usize) = (1 << 20, 1 << 20);

/// Installs a panic hook that prints nothing for the injected panic and hands every
/// other panic to the hook that was there.
pub fn silence_injected_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let p = info.payload();
        let injected = p.downcast_ref::<&str>() == Some(&MARKER)
            || p.downcast_ref::<String>().is_some_and(|s| s == MARKER);
        if !injected {
            previous(info);
        }
    }));
}

/// Injects both faults on `b`, in place of one operation of the mix, and counts them in
/// `tally`: a fault not handled as required is a failure.
pub fn inject(b: &dyn Backend, cpu: &CpuBackend, rng: &mut Rng, tally: &mut Tally) {
    for (what, outcome) in [
        ("out of memory", out_of_memory(b)),
        ("panic in `time`", panic_in_time(b, cpu, rng)),
    ] {
        tally.faults_injected += 1;
        match outcome {
            Ok(()) => tally.faults_handled += 1,
            Err(e) => tally.fail(format!("thread 0: injected {what}: {e}")),
        }
    }
}

/// Asks for [`HUGE`]; anything but out of memory (device or host) is a failure.
fn out_of_memory(b: &dyn Backend) -> Result<(), String> {
    let (rows, cols) = HUGE;
    match Memory::<f32>::alloc(b, rows, cols) {
        Err(Error::OutOfMemory { .. } | Error::HostOutOfMemory { .. }) => Ok(()),
        Err(e) => Err(format!("expected out of memory, got: {e}")),
        Ok(_) => Err(format!("a {rows}×{cols} f32 matrix was allocated")),
    }
}

/// A panic in the closure `time` runs, after queuing a product: the panic must reach
/// the caller, and the backend must still compute a product exactly as the CPU
/// reference does (small integers: exact in every precision a variant computes in).
fn panic_in_time(b: &dyn Backend, cpu: &CpuBackend, rng: &mut Rng) -> Result<(), String> {
    let mut ints = |r, c| Array2::from_shape_fn((r, c), |_| rng.below(9) as f64 - 4.0);
    let (x, y) = (ints(7, 5), ints(5, 3));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        b.time(&mut || {
            b.matmul(x.view(), y.view())?;
            panic_any(MARKER)
        })
    }));
    if caught.is_ok() {
        return Err("the panic did not reach the caller of `time`".into());
    }
    let got = b
        .matmul(x.view(), y.view())
        .map_err(|e| format!("the backend fails after the panic: {e}"))?;
    let want = cpu.matmul(x.view(), y.view()).map_err(|e| e.to_string())?;
    if got != want {
        return Err(format!(
            "after the panic, a 7×5 by 5×3 product differs from the reference: \
             {got} instead of {want}"
        ));
    }
    Ok(())
}
