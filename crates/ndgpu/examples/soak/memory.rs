//! The soak's memory readings: host RSS and device memory in use, and the check that
//! neither grew after the baseline.

use ndgpu::{Backend, Place};

/// Growth below this many MiB always passes: what a percentage of a small baseline
/// (a host backend's RSS of a few tens of MiB) cannot tell from noise, such as one more
/// allocator arena or pool chunk.
pub const SLACK_MIB: u64 = 8;

/// Bytes in use at one moment; `None` where not known.
#[derive(Clone, Copy, Default)]
pub struct Reading {
    /// This process's resident set (`VmRSS` of /proc/self/status).
    pub host: Option<u64>,
    /// Device memory in use (total − free) on the CUDA device the backend computes
    /// on, after its pool gave back what it caches; every process's use counts.
    pub device: Option<u64>,
}

impl Reading {
    pub fn now(b: &dyn Backend) -> Reading {
        Reading {
            host: rss(),
            device: device_used(b),
        }
    }
}

/// This process's resident set in bytes, where there is one.
fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Bytes of device memory in use on the device `b` computes on (none on the host or a
/// group of devices), read after the runtime gave back what its pool caches: the
/// pool's size follows the traffic of the moment, and the injected out-of-memory fault
/// empties it, so only memory held counts.
fn device_used(b: &dyn Backend) -> Option<u64> {
    let Place::Cuda { device, .. } = b.place() else {
        return None;
    };
    // The runtime that backends opened by name on this device share: the backend's.
    let gpu = ndgpu_cuda_runtime::Gpu::shared(device).ok()?;
    gpu.release_cached().ok()?;
    let (free, total) = gpu.mem_info().ok()?;
    Some((total - free) as u64)
}

/// Prints the readings of host and device memory at the start, at the baseline (after
/// the warm-up) and at the end; returns a line for each that grew from the baseline to
/// the end by more than `pct` percent and more than [`SLACK_MIB`].
pub fn check(start: Reading, base: Reading, end: Reading, pct: f64) -> Vec<String> {
    let mut failures = Vec::new();
    let kinds = [
        ("host RSS", start.host, base.host, end.host),
        (
            "device memory in use",
            start.device,
            base.device,
            end.device,
        ),
    ];
    for (what, start, base, end) in kinds {
        let (Some(start), Some(base), Some(end)) = (start, base, end) else {
            println!("{what}: not reported by this backend");
            continue;
        };
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        let growth = end as f64 / base.max(1) as f64 * 100.0 - 100.0;
        println!(
            "{what}: {:.1} MiB at the start, {:.1} MiB at the baseline, {:.1} MiB at the end \
             ({growth:+.1}% from the baseline)",
            mib(start),
            mib(base),
            mib(end)
        );
        let allowed = (base as f64 * pct / 100.0).max(f64::from(1 << 20) * SLACK_MIB as f64);
        if end as f64 - base as f64 > allowed {
            failures.push(format!(
                "{what} grew from {:.1} MiB at the baseline to {:.1} MiB at the end \
                 ({growth:+.1}%; bound {pct}% or {SLACK_MIB} MiB, whichever is larger)",
                mib(base),
                mib(end)
            ));
        }
    }
    failures
}
