//! k-means ladder (report 000): Lloyd's iteration on the device.
//!
//! | variant | assignment | update |
//! |---|---|---|
//! | `tensor_core` (default) | f32: TF32 scores on tensor cores settle the points whose winner they prove; the near ties go to the fused kernel (same bits as `fused`); f64 and devices without TF32 `mma` run `fused` | as `fused` |
//! | `fused` | ‖c‖² − 2·x·c over 128×128 tiles in shared memory, fused with the argmin; no N×K matrix | per-chunk sums in shared memory, chunks added in a fixed order: bitwise reproducible |
//! | `atomic` | report 000: one thread per point, direct differences | report 000: atomicAdd of each point into the sums, a division kernel |
//!
//! The iteration is the one written once on [`Cluster`](ndgpu_core::Cluster); this backend gives its two
//! steps. The host reads two numbers back per assignment (points changed, inertia).
//! Seeding (k-means++, k-means‖) runs on the device: the runtime's `seed`.

mod launch;

use cudarc::driver::CudaSlice;
use ndgpu_core::{
    Assignment, Backend, ClusterKernels, DType, Error, Family, Indices, KMeansConfig, Matrix,
    Points, Result,
};
use ndgpu_cuda_runtime::kmeans::{read_stats, shift, update, ChunkSums, Masses, Plan};
use ndgpu_cuda_runtime::seed::seed;
use ndgpu_cuda_runtime::{CudaElement, DeviceMatrix, Gpu, IndexStorage};

use crate::CudaBackend;
use launch::{Ties, Workspace};

/// Variants, default (fastest measured) first.
pub const VARIANTS: &[ndgpu_core::Variant] = &[
    ndgpu_core::Variant::new(
        "tensor_core",
        "f32 scores on TF32 tensor cores (sm_80 and later) settle each point whose best \
         score is clear of the second by a proven error bound, and the fused kernel assigns \
         the rest: the same bits as fused; f64, and devices without TF32 mma, run fused",
    ),
    ndgpu_core::Variant::new(
        "fused",
        "distances ‖c‖² − 2·x·c fused with the argmin, inertia by direct differences for \
         the chosen centroid, centroid sums and statistics combined in a fixed order (the \
         order depends on N, K, D only)",
    ),
    ndgpu_core::Variant::new("atomic", "centroid sums with floating-point atomics")
        .not_reproducible(),
];

/// Kernels the default variant launches.
pub const DEFAULT_KERNELS: &[&str] = &[
    "kmeans_centroid_norms_f32",
    "kmeans_assign_tf32_f32",
    "kmeans_assign_tf32_small_f32",
    "kmeans_assign_fused_f32",
    "kmeans_assign_fused_list_f32",
    "kmeans_assign_fused_list_small_f32",
    "kmeans_point_stats_f32",
    "kmeans_point_stats_f64",
    "kmeans_accumulate_partials_f32",
    "kmeans_accumulate_rows_f32",
    "kmeans_finalize_f32",
    "kmeans_centroid_norms_f64",
    "kmeans_assign_fused_f64",
    "kmeans_accumulate_partials_f64",
    "kmeans_accumulate_rows_f64",
    "kmeans_finalize_f64",
    "kmeans_stats_sum_f64",
    // With sample weights.
    "kmeans_point_stats_weighted_f32",
    "kmeans_point_stats_weighted_f64",
    "kmeans_accumulate_partials_weighted_f32",
    "kmeans_accumulate_partials_weighted_f64",
    "kmeans_accumulate_rows_weighted_f32",
    "kmeans_accumulate_rows_weighted_f64",
    "kmeans_finalize_weighted_f32",
    "kmeans_finalize_weighted_f64",
];

/// Determinism and scope.
pub const NOTE: &str = "the iteration is the one written once on Cluster";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    TensorCore,
    Fused,
    Atomic,
}

/// What `variant` runs to assign n points of d dimensions to k centroids of `dtype` on a
/// device of `sms` SMs, `tc` where it has TF32 `mma`, whose blocks may be granted `optin`
/// bytes of shared memory (see `Backend::plan`): for `tensor_core`, which TF32 kernel (or
/// `fused` where it runs none), and for it and `fused` which kernel forms the update's
/// chunk sums (unweighted).
pub(crate) fn plan(
    variant: &str,
    dtype: DType,
    (tc, sms, optin): (bool, usize, usize),
    (n, d, k): (usize, usize, usize),
) -> Option<String> {
    let update = |chunk: usize, g: usize, sums: ChunkSums| match g {
        1 => format!("update: {sums}, one chunk"),
        _ => format!("update: {sums}, {g} chunks of {chunk} points"),
    };
    let update = match dtype {
        DType::F32 => {
            let p = Plan::new::<f32>(n, k, d, false);
            update(p.chunk, p.g, p.chunk_sums::<f32>(k, d, p.g, optin, sms))
        }
        DType::F64 => {
            let p = Plan::new::<f64>(n, k, d, false);
            update(p.chunk, p.g, p.chunk_sums::<f64>(k, d, p.g, optin, sms))
        }
    };
    let tiles = n.div_ceil(128);
    let assign = match variant {
        "fused" => "fused assignment".to_string(),
        "tensor_core" if dtype != DType::F32 || !tc => {
            "fused (no TF32 tensor cores for this type or device)".to_string()
        }
        "tensor_core" if launch::tf32_persistent(k, d) => {
            let blocks = launch::tf32_persistent_blocks(tiles, sms);
            format!("persistent TF32 kernel: {blocks} blocks over {tiles} tiles of 128 points")
        }
        "tensor_core" => format!("TF32 kernel: {tiles} blocks of 128 points"),
        _ => return None,
    };
    Some(format!("{assign}; {update}"))
}

fn parse(variant: &str) -> Result<Variant> {
    match variant {
        "tensor_core" => Ok(Variant::TensorCore),
        "fused" => Ok(Variant::Fused),
        "atomic" => Ok(Variant::Atomic),
        _ => Err(Error::unknown_variant(
            "cuda",
            Family::KMeans,
            variant,
            &ndgpu_core::Variant::names(VARIANTS),
        )),
    }
}

/// Whether the device has the TF32 mma.sync of the tensor-core assignment (sm_80 on).
fn tensor_cores(gpu: &Gpu) -> bool {
    crate::ops::matmul::has_tensor_cores(gpu)
}

/// One assignment with variant `v` on resident data (with sample weights `w`, the
/// inertia is weighted: only the statistics' kernel differs).
fn assign<T: CudaElement>(
    gpu: &Gpu,
    v: Variant,
    x: &DeviceMatrix<T>,
    c: &DeviceMatrix<T>,
    w: Option<&CudaSlice<T>>,
    labels: &mut CudaSlice<i32>,
) -> Result<Assignment> {
    if x.rows == 0 {
        return Ok(Assignment::default());
    }
    // The last call's scratch where the shape is the same (a fit's every iteration).
    let mut scratch = match gpu.take_scratch::<Scratch<T>>(SCRATCH) {
        Some(s) if s.n == x.rows && s.k == c.rows => s,
        _ => Scratch {
            n: x.rows,
            k: c.rows,
            ws: Workspace::new(gpu, x.rows, c.rows)?,
            ties: None,
        },
    };
    let ws = &mut scratch.ws;
    match v {
        Variant::TensorCore if T::DTYPE == DType::F32 && tensor_cores(gpu) => {
            // The persistent kernel forms the norms itself (the same bits).
            if !launch::tf32_persistent(c.rows, x.cols) {
                launch::centroid_norms(gpu, c, &mut ws.cnorm)?;
            }
            let ties = match &mut scratch.ties {
                Some(t) => t,
                none => none.insert(Ties::new(gpu, x.rows)?),
            };
            launch::assign_tf32(gpu, x, c, labels, ws, ties)?;
            launch::assign_fused(gpu, x, c, labels, ws, Some(ties))?;
            launch::point_stats(gpu, x.rows, w, ws, Some(&mut ties.count))?;
        }
        Variant::Fused | Variant::TensorCore => {
            launch::centroid_norms(gpu, c, &mut ws.cnorm)?;
            launch::assign_fused(gpu, x, c, labels, ws, None)?;
            launch::point_stats(gpu, x.rows, w, ws, None)?;
        }
        Variant::Atomic => {
            launch::zero(gpu, &mut ws.stats)?;
            launch::assign_direct(gpu, x, c, w, labels, &mut ws.stats)?;
        }
    }
    let stats = read_stats(gpu, &ws.stats)?;
    gpu.keep_scratch(SCRATCH, scratch);
    Ok(stats)
}

/// The key of the assignment's scratch on the runtime ([`Gpu::keep_scratch`]).
const SCRATCH: &str = "kmeans assignment";

/// An assignment's scratch for n points and k centroids: the workspace, and the list of
/// the tensor-core kernel once a call has needed it.
struct Scratch<T> {
    n: usize,
    k: usize,
    ws: Workspace<T>,
    ties: Option<Ties>,
}

/// One centroid update with variant `v` on resident data, weighted with `w` (nothing
/// moves when D = 0).
fn update_with<T: CudaElement>(
    gpu: &Gpu,
    v: Variant,
    x: &DeviceMatrix<T>,
    labels: &CudaSlice<i32>,
    w: Option<&CudaSlice<T>>,
    c: &mut DeviceMatrix<T>,
) -> Result<()> {
    if x.rows == 0 || x.cols == 0 {
        return Ok(());
    }
    match v {
        Variant::Fused | Variant::TensorCore => update(gpu, x, labels, w, c),
        Variant::Atomic => {
            let (k, d) = c.dim();
            let mut sums = gpu.alloc::<T>("kmeans", k * d)?;
            let mut masses = match w {
                None => Masses::Counts(gpu.alloc_zeroed("kmeans", k)?),
                Some(_) => {
                    let mut m = gpu.alloc::<T>("kmeans", k)?;
                    launch::zero(gpu, &mut m)?;
                    Masses::Weights(m)
                }
            };
            launch::zero(gpu, &mut sums)?;
            launch::accumulate_atomic(gpu, x, labels, w, &mut sums, &mut masses)?;
            launch::divide(gpu, &sums, &masses, c)
        }
    }
}

/// The resident sample weights' device buffer, if any.
fn weights<'a, T: CudaElement>(
    backend: &'a CudaBackend,
    w: Option<&'a Matrix<T>>,
) -> Result<Option<&'a CudaSlice<T>>> {
    w.map(|w| {
        let w = backend
            .gpu()
            .dm(backend.here(), "kmeans", "sample weights", w)?;
        Ok(&w.data)
    })
    .transpose()
}

impl<T: CudaElement> ClusterKernels<T> for CudaBackend {
    fn shift_unchecked(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<f64> {
        let gpu = self.gpu();
        let a = gpu.dm(self.here(), "kmeans", "centroids", a)?;
        let b = gpu.dm(self.here(), "kmeans", "centroids", b)?;
        shift(gpu, a, b)
    }

    fn seed_unchecked(&self, p: Points<T>, config: &KMeansConfig) -> Result<Matrix<T>> {
        let (x, w) = (p.x, p.weights);
        let gpu = self.gpu();
        let x = gpu.dm(self.here(), "kmeans", "X", x)?;
        let w = w
            .map(|w| gpu.dm(self.here(), "kmeans", "sample weights", w))
            .transpose()?;
        Ok(gpu.matrix(seed(gpu, x, w, config)?))
    }

    fn assign_unchecked(&self, p: Points<T>, c: &Matrix<T>, l: &mut Indices) -> Result<Assignment> {
        let (x, w, labels) = (p.x, p.weights, l);
        let v = parse(self.variant(Family::KMeans))?;
        let w = weights(self, w)?;
        let (gpu, here) = (self.gpu(), self.here());
        let x = gpu.dm(here, "kmeans", "X", x)?;
        let c = gpu.dm(here, "kmeans", "centroids", c)?;
        let labels = here
            .indices_mut::<IndexStorage>("kmeans", "labels", labels)?
            .labels_mut()?;
        assign(gpu, v, x, c, w, labels)
    }

    fn update_unchecked(&self, p: Points<T>, labels: &Indices, c: &mut Matrix<T>) -> Result<()> {
        let (x, w, centroids) = (p.x, p.weights, c);
        let v = parse(self.variant(Family::KMeans))?;
        let w = weights(self, w)?;
        let (gpu, here) = (self.gpu(), self.here());
        let x = gpu.dm(here, "kmeans", "X", x)?;
        let labels = here
            .indices::<IndexStorage>("kmeans", "labels", labels)?
            .labels()?;
        let c = gpu.dm_mut(here, "kmeans", "centroids", centroids)?;
        update_with(gpu, v, x, labels, w, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_names_the_kernels_tensor_core_and_fused_run() {
        let plan = |v, t, tc, (n, d, k)| super::plan(v, t, (tc, 132, 232_448), (n, d, k));
        assert_eq!(plan("atomic", DType::F32, true, (1 << 20, 32, 128)), None);
        assert_eq!(
            plan("tensor_core", DType::F32, true, (1 << 20, 32, 128)).unwrap(),
            "persistent TF32 kernel: 264 blocks over 8192 tiles of 128 points; \
             update: whole-row chunk sums, 256 chunks of 4096 points"
        );
        assert_eq!(
            plan("fused", DType::F32, true, (1 << 20, 32, 128)).unwrap(),
            "fused assignment; update: whole-row chunk sums, 256 chunks of 4096 points"
        );
        assert_eq!(
            plan("tensor_core", DType::F32, true, (1000, 33, 128)).unwrap(),
            "TF32 kernel: 8 blocks of 128 points; \
             update: chunk sums over 4 centroid and 1 dimension ranges, one chunk"
        );
        for (t, tc) in [(DType::F64, true), (DType::F32, false)] {
            let p = plan("tensor_core", t, tc, (1000, 8, 8)).unwrap();
            assert!(p.starts_with("fused"), "{p}");
        }
    }
}
