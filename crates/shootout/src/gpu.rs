//! The GPU's ceilings and cache, which turn rates into fractions of the peak and decide
//! how many copies of a case's inputs the timed runs rotate through.

use cudarc::driver::sys::CUdevice_attribute as Attr;
use ndgpu_core::{DType, Error, Precision, Result};
use ndgpu_cuda_runtime::Gpu;

use crate::cases::{Op, KMEANS_D, KMEANS_K};
use crate::shape::Shape;

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
    /// The architecture (`sm_90`), which the ceilings' table is keyed by.
    pub arch: String,
}

/// FLOPs per SM and clock of each unit (dense: no structured sparsity), per
/// architecture, from NVIDIA's architecture whitepapers.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PerClock {
    fp32: f64,
    fp64: f64,
    fp64_tensor: f64,
    tf32_tensor: f64,
}

fn per_clock(arch: &str) -> Option<PerClock> {
    match arch {
        // A100: 64 FP32 and 32 FP64 lanes per SM.
        "sm_80" => Some(PerClock {
            fp32: 128.0,
            fp64: 64.0,
            fp64_tensor: 128.0,
            tf32_tensor: 1024.0,
        }),
        // H100, H200: 128 FP32 and 64 FP64 lanes per SM, tensor cores twice the
        // A100's per SM and clock.
        "sm_90" => Some(PerClock {
            fp32: 256.0,
            fp64: 128.0,
            fp64_tensor: 256.0,
            tf32_tensor: 2048.0,
        }),
        _ => None,
    }
}

/// A compute ceiling: the peak rate of one unit of the device.
#[derive(Debug, Clone, PartialEq)]
pub struct Peak {
    /// GFLOP/s.
    pub gflops: f64,
    /// Which unit and precision (for the reports).
    pub of: String,
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
            arch: gpu.arch().to_string(),
        })
    }

    /// The ceiling of a compute-bound op in `dtype` computed with `math`: the FP32 FMA
    /// rate of the CUDA cores for f32 (the TF32 tensor-core rate for a variant that
    /// rounds its operands to TF32, a third of it for 3xTF32's three products); for f64 the FP64 tensor-core rate, the device's f64 peak, which the
    /// vendor's DGEMM reaches (the CUDA cores' rate is named beside it). SMs × FLOPs per
    /// SM and clock × the clock attribute; `None` for an architecture not in the table.
    pub fn peak(&self, dtype: DType, math: Precision) -> Option<Peak> {
        let pc = per_clock(&self.arch)?;
        let rate = |per: f64| self.sms as f64 * per * self.clock_khz as f64 * 1e-6;
        Some(match (dtype, math) {
            (DType::F32, Precision::Ieee) => Peak {
                gflops: rate(pc.fp32),
                of: "FP32 FMA, CUDA cores".into(),
            },
            (DType::F32, Precision::Tf32) => Peak {
                gflops: rate(pc.tf32_tensor),
                of: "TF32, tensor cores".into(),
            },
            (DType::F32, Precision::Tf32x3) => Peak {
                gflops: rate(pc.tf32_tensor) / 3.0,
                of: "3xTF32: a third of the TF32 tensor-core rate".into(),
            },
            (DType::F64, _) => Peak {
                gflops: rate(pc.fp64_tensor),
                of: format!(
                    "FP64, tensor cores; the CUDA cores alone: {} GFLOP/s",
                    crate::format::format_rate(rate(pc.fp64))
                ),
            },
        })
    }

    /// How many copies of a case's buffers to rotate through so that consecutive runs
    /// do not find their inputs in L2: enough to span twice the L2 (at most 64), one
    /// when a single set is already larger than the L2.
    pub fn rotation(&self, set_bytes: usize) -> usize {
        rotation(set_bytes, self.l2_bytes)
    }
}

/// Bytes one run of `op` at `shape` reads and writes (elements of `elem_bytes`): what
/// decides whether its buffers fit in L2.
pub fn traffic(op: Op, shape: Shape, elem_bytes: usize) -> usize {
    let s = elem_bytes;
    match (op, shape) {
        (Op::Matmul, Shape::Gemm { m, n, k }) => (m * k + k * n + m * n) * s,
        (Op::Gram, Shape::Gram { m, k }) => (m * k + m * m) * s,
        (Op::Transpose, Shape::Square(n)) => 2 * n * n * s,
        (Op::Sum | Op::SumSq | Op::Argmax, _) => op.work(shape, s) as usize,
        (Op::Dot, Shape::Vector(n)) => 2 * n * s,
        (Op::Cholesky, Shape::Square(n)) => n * n * s,
        // L and B read, X written.
        (Op::Solve, Shape::Square(n)) => 3 * n * n * s,
        // A factored in place; A's factor and B read, X written; L read, B in place.
        (Op::Lu, Shape::Square(n)) => n * n * s,
        (Op::LuSolve, Shape::Square(n)) => 3 * n * n * s,
        (Op::Trsm, Shape::Square(n)) => 2 * n * n * s,
        // A factored in place; lstsq factors a copy of A.
        (Op::Qr, Shape::Rect { m, n }) => m * n * s,
        (Op::Lstsq, Shape::Rect { m, n }) => (2 * m * n + m + n) * s,
        // A read; w and V, or U, s and Vt written (k = min(m, n)); PCA's data read.
        (Op::Eigh, Shape::Square(n)) => (2 * n * n + n) * s,
        (Op::Svd, Shape::Rect { m, n }) => (m * n + (m + n + 1) * m.min(n)) * s,
        (Op::Pca, Shape::Rect { m, n }) => m * n * s,
        // The points and centroids, and the labels (i32).
        (Op::KMeans, Shape::Points(n)) => (n * KMEANS_D + KMEANS_K * KMEANS_D) * s + 4 * n,
        // The chain's G, L and X are n×n; a transfer is never rotated (too large, and
        // it moves host memory).
        (Op::Chain, Shape::Square(n)) => 4 * n * n * s,
        _ => usize::MAX,
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
        let h200 = DeviceInfo {
            name: "NVIDIA H200".into(),
            sms: 132,
            clock_khz: 1_980_000,
            l2_bytes: 60 << 20,
            arch: "sm_90".into(),
        };
        let close = |p: Option<Peak>, want: f64| {
            let got = p.expect("sm_90 is in the table").gflops;
            assert!((got - want).abs() < 0.01, "{got} vs {want}");
        };
        // 132 SMs × FLOPs per SM and clock × 1.98 GHz.
        close(h200.peak(DType::F32, Precision::Ieee), 66_908.16);
        close(h200.peak(DType::F32, Precision::Tf32), 535_265.28);
        close(h200.peak(DType::F32, Precision::Tf32x3), 535_265.28 / 3.0);
        close(h200.peak(DType::F64, Precision::Ieee), 66_908.16);
        let f64_peak = h200.peak(DType::F64, Precision::Ieee).unwrap();
        assert!(f64_peak.of.contains("33454 GFLOP/s"), "{}", f64_peak.of);
        let unknown = DeviceInfo {
            arch: "sm_120".into(),
            ..h200
        };
        assert_eq!(unknown.peak(DType::F32, Precision::Ieee), None);
    }

    #[test]
    fn traffic_of_a_run() {
        let at = |op: Op, n: usize, s: usize| traffic(op, op.shape(n), s);
        assert_eq!(at(Op::Matmul, 256, 4), 3 * 256 * 256 * 4);
        assert_eq!(at(Op::Gram, 256, 4), 2 * 256 * 256 * 4);
        assert_eq!(at(Op::Dot, 1 << 20, 8), 16 << 20);
        assert_eq!(at(Op::Sum, 1 << 20, 4), 4 << 20);
        assert_eq!(at(Op::KMeans, 1000, 4), (1000 + 128) * 32 * 4 + 4000);
        assert_eq!(at(Op::Transfer, 1000, 4), usize::MAX);
        // A, B and C of a rectangular GEMM; M and the m×m result of a gram.
        let km = Shape::gemm(1 << 20, 32, 128);
        assert_eq!(
            traffic(Op::Matmul, km, 4),
            ((1 << 20) * 32 + 32 * 128 + (1 << 20) * 128) * 4
        );
        assert_eq!(
            traffic(Op::Gram, Shape::gram(32, 1 << 20), 4),
            (32 * (1 << 20) + 32 * 32) * 4
        );
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
