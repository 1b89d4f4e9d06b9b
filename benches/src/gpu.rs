//! The GPU's ceilings and cache, which turn rates into fractions of the peak and decide
//! how many copies of a case's inputs the timed runs rotate through.

use cudarc::driver::sys::CUdevice_attribute as Attr;
use ndgpu_core::{DType, Error, Result};
use ndgpu_cuda_runtime::Gpu;

use crate::cases::{Op, KMEANS_D, KMEANS_K};

/// What the ceilings are computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    /// The device's name.
    pub name: String,
    /// Streaming multiprocessors.
    pub sms: usize,
    /// The SM clock in kHz (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`, the boost clock).
    pub clock_khz: u64,
    /// L2 cache bytes.
    pub l2_bytes: usize,
}

/// Peak non-tensor FLOP rate in GFLOP/s: SMs × lanes × 2 (an FMA is two FLOPs) ×
/// clock, with 128 FP32 lanes or 64 FP64 lanes per SM (Hopper; the H200's figures are
/// in docs/performance.md).
pub fn peak_gflops(sms: usize, clock_khz: u64, dtype: DType) -> f64 {
    let lanes = match dtype {
        DType::F32 => 128.0,
        DType::F64 => 64.0,
    };
    sms as f64 * lanes * 2.0 * clock_khz as f64 * 1e3 * 1e-9
}

impl DeviceInfo {
    /// Reads the attributes of device 0 (through the runtime the GPU backends share).
    ///
    /// # Errors
    /// [`Error::Unavailable`] without a usable GPU; driver errors.
    pub fn query() -> Result<DeviceInfo> {
        let gpu = Gpu::shared(0)?;
        let attr = |a: Attr, what: &str| {
            gpu.context().attribute(a).map_err(|e| {
                Error::backend("cuda", format!("reading the {what}"), format!("{e:?}"))
            })
        };
        Ok(DeviceInfo {
            name: gpu.name().to_string(),
            sms: gpu.sm_count()?,
            clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock rate")?.max(0) as u64,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size")?.max(0) as usize,
        })
    }

    /// The peak FLOP rate for `dtype`, GFLOP/s.
    pub fn peak_gflops(&self, dtype: DType) -> f64 {
        peak_gflops(self.sms, self.clock_khz, dtype)
    }

    /// How many copies of a case's buffers to rotate through so that consecutive runs
    /// do not find their inputs in L2: enough to span twice the L2 (at most 64), one
    /// when a single set is already larger than the L2.
    pub fn rotation(&self, set_bytes: usize) -> usize {
        rotation(set_bytes, self.l2_bytes)
    }
}

/// Bytes one run of `op` at size `n` reads and writes (elements of `elem_bytes`): what
/// decides whether its buffers fit in L2.
pub fn traffic(op: Op, n: usize, elem_bytes: usize) -> usize {
    let points = n * KMEANS_D + KMEANS_K * KMEANS_D;
    match op {
        Op::Matmul => 3 * n * n * elem_bytes,
        Op::Gram | Op::Transpose => 2 * n * n * elem_bytes,
        Op::Sum => n * elem_bytes,
        Op::Dot => 2 * n * elem_bytes,
        Op::Cholesky => n * n * elem_bytes,
        // The points and centroids, and the labels (i32).
        Op::KMeans => points * elem_bytes + 4 * n,
        // The chain's G, L and X are n×n; a transfer is never rotated (too large, and
        // it moves host memory).
        Op::Chain => 4 * n * n * elem_bytes,
        Op::Transfer => usize::MAX,
    }
}

/// See [`DeviceInfo::rotation`].
pub fn rotation(set_bytes: usize, l2_bytes: usize) -> usize {
    if set_bytes == 0 || set_bytes >= l2_bytes {
        1
    } else {
        (2 * l2_bytes).div_ceil(set_bytes).clamp(1, 64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h200_peaks() {
        // 132 SMs at 1980 MHz.
        let f32_peak = peak_gflops(132, 1_980_000, DType::F32);
        assert!((f32_peak - 66_908.16).abs() < 0.01, "{f32_peak}");
        let f64_peak = peak_gflops(132, 1_980_000, DType::F64);
        assert!((f64_peak - f32_peak / 2.0).abs() < 1e-9);
    }

    #[test]
    fn traffic_of_a_run() {
        assert_eq!(traffic(Op::Matmul, 256, 4), 3 * 256 * 256 * 4);
        assert_eq!(traffic(Op::Dot, 1 << 20, 8), 16 << 20);
        assert_eq!(traffic(Op::KMeans, 1000, 4), (1000 + 128) * 32 * 4 + 4000);
    }

    #[test]
    fn rotation_spans_twice_the_l2() {
        let l2 = 60 << 20;
        assert_eq!(rotation(1 << 30, l2), 1);
        assert_eq!(rotation(l2, l2), 1);
        assert_eq!(rotation(l2 / 2, l2), 4);
        assert_eq!(rotation(40 << 20, l2), 3);
        assert_eq!(rotation(1024, l2), 64);
        assert_eq!(rotation(0, l2), 1);
    }
}
