//! # ndgpu-multi
//!
//! One backend over several CUDA devices of one host: `cuda:0,1`, `cuda:all`,
//! `cublas:all`, ... through the `ndgpu` facade. Each device (a *rank*) runs the
//! one-device backend of that name; this crate splits the work between them and moves
//! data with peer copies and NCCL collectives (cudarc's bindings; NVLink multicast
//! stays off).
//!
//! A resident matrix is split by rows ([`Layout::Rows`], what uploads and results get)
//! or replicated ([`Layout::Replicated`], k-means centroids). The operations:
//!
//! | family | how |
//! |---|---|
//! | matmul | C's rows split like op(A)'s; B gathered to every rank (op(A) = Aᵀ is transposed first) |
//! | gram | row blocks: rank r computes its rows M_r·Mᵀ against the gathered M |
//! | transpose | gathered, transposed on every rank, each keeping its rows |
//! | reduce | per rank, combined in rank order on the host (per-column results too) |
//! | cholesky | on the first device: gathered there, factored or solved, split again |
//! | kmeans | each rank assigns its points; the chunk partial sums of the update are gathered with NCCL and every rank finishes them alike |
//!
//! The k-means update sums the same chunks of points in the same order as the
//! one-device update (a chunk that straddles two ranks is assembled on the first), so
//! centroids and labels are bitwise those of one device; only the inertia, summed per
//! rank and then over ranks, may differ in its last bits.
#![warn(missing_docs)]

mod comm;
mod kmeans;
mod layout;
mod ops;
mod reduce;

use std::sync::{Arc, Mutex};

use cudarc::nccl::safe::NcclType;
use ndgpu_core::{Backend, BackendElement, Error, Family, Ops, Place, Result, Variants};
use ndgpu_cuda_runtime::{CudaElement, Gpu};

pub use comm::NVLS_ENV;
pub use layout::{split, Layout};

/// An element type the group computes in: `f32` or `f64`.
pub trait MultiElement: CudaElement + NcclType + BackendElement {}
impl MultiElement for f32 {}
impl MultiElement for f64 {}

/// One device of the group: its one-device backend and runtime.
pub struct Rank {
    backend: Box<dyn Backend>,
    gpu: Arc<Gpu>,
}

impl Rank {
    /// A rank from a one-device backend and the runtime it computes on.
    pub fn new(backend: Box<dyn Backend>, gpu: Arc<Gpu>) -> Rank {
        Rank { backend, gpu }
    }

    pub(crate) fn ops<T: MultiElement>(&self) -> &dyn Ops<T> {
        T::ops(&*self.backend)
    }
}

/// A backend over several devices of one host (see the crate's documentation).
pub struct MultiBackend {
    name: &'static str,
    place: Place,
    ranks: Vec<Rank>,
    comms: comm::Comms,
    variants: Variants,
}

/// Parses the device list of a name such as `cuda:0,1` or `cuda:all`.
///
/// # Errors
/// [`Error::InvalidArgument`] for an empty list, a number that does not parse, a device
/// named twice; [`Error::Unavailable`] (from `all`) when no device can be counted.
pub fn parse_devices(kind: &str, spec: &str) -> Result<Vec<usize>> {
    let bad = |detail: String| Error::invalid("backend", format!("'{kind}:{spec}': {detail}"));
    if spec == "all" {
        let n = device_count(kind)?;
        return Ok((0..n).collect());
    }
    let mut devices = Vec::new();
    for part in spec.split(',') {
        let d: usize = part
            .trim()
            .parse()
            .map_err(|_| bad(format!("'{part}' is not a device number")))?;
        if devices.contains(&d) {
            return Err(bad(format!("device {d} is named twice")));
        }
        devices.push(d);
    }
    Ok(devices)
}

/// The number of CUDA devices here.
///
/// # Errors
/// [`Error::Unavailable`] with the reason when there is no usable driver.
pub fn device_count(kind: &str) -> Result<usize> {
    let unavailable = |reason: String| Error::Unavailable {
        backend: kind.into(),
        reason,
    };
    ndgpu_cuda_runtime::probe().map_err(unavailable)?;
    let n = cudarc::driver::CudaContext::device_count()
        .map_err(|e| unavailable(ndgpu_cuda_runtime::describe(&e)))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// A name made once per process and kept (backend names are `&'static str`).
fn intern(name: String) -> &'static str {
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&n) = names.iter().find(|&&n| n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.into_boxed_str());
    names.push(n);
    n
}

/// The number of a group of runtimes, the same for every backend over the same
/// runtimes in the same order (so `cuda:0,1` and `cublas:0,1` share their arrays, as
/// the one-device backends of a device do).
fn group_id(runtimes: Vec<Place>) -> u64 {
    static GROUPS: Mutex<Vec<Vec<Place>>> = Mutex::new(Vec::new());
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    let at = match groups.iter().position(|g| *g == runtimes) {
        Some(at) => at,
        None => {
            groups.push(runtimes);
            groups.len() - 1
        }
    };
    at as u64 + 1
}

impl MultiBackend {
    /// A group over `devices` (in that order: rank r is `devices[r]`), each rank opened
    /// by `open` as the one-device backend `kind`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for no devices, or more than 64;
    /// [`Error::Unavailable`] for a device that is not there (naming it and how many
    /// there are), or no NCCL; the errors of `open`; NCCL's error when the communicator
    /// cannot be made.
    pub fn open(
        kind: &str,
        devices: &[usize],
        open: impl Fn(usize) -> Result<Rank>,
    ) -> Result<MultiBackend> {
        let list = devices
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let name = intern(format!("{kind}:{list}"));
        if devices.is_empty() || devices.len() > 64 {
            return Err(Error::invalid(
                "backend",
                format!("'{name}': a group needs 1 to 64 devices"),
            ));
        }
        let count = device_count(name)?;
        if let Some(&d) = devices.iter().find(|&&d| d >= count) {
            return Err(Error::Unavailable {
                backend: name.into(),
                reason: format!("there is no device {d}: this machine has {count}"),
            });
        }
        let ranks = devices
            .iter()
            .map(|&d| open(d))
            .collect::<Result<Vec<_>>>()?;
        let comms = comm::Comms::new(name, ranks.iter().map(|r| r.gpu.stream().clone()).collect())?;
        let mask = devices
            .iter()
            .fold(0u64, |m, &d| m | 1u64.checked_shl(d as u32).unwrap_or(0));
        let place = Place::CudaGroup {
            devices: mask,
            group: group_id(ranks.iter().map(|r| r.gpu.place()).collect()),
        };
        // The ranks' variants, precisions included, selected as on the ranks (the
        // defaults: they were just opened).
        let variants = ranks[0].backend.variant_table().clone().renamed(name);
        Ok(MultiBackend {
            name,
            place,
            comms,
            variants,
            ranks,
        })
    }

    /// The devices of the group, rank order.
    pub fn devices(&self) -> Vec<usize> {
        self.ranks.iter().map(|r| r.gpu.ordinal()).collect()
    }

    /// How `m` is laid out over the ranks.
    ///
    /// # Errors
    /// [`Error::WrongPlace`] for an array of another place.
    pub fn layout<T: MultiElement>(&self, m: &ndgpu_core::Matrix<T>) -> Result<Layout> {
        Ok(self.spread("layout", "the array", m)?.layout.clone())
    }

    /// A copy of `m` replicated on every rank (one all-gather), for an operand used by
    /// every rank many times, such as k-means centroids.
    ///
    /// # Errors
    /// [`Error::WrongPlace`]; out of memory; NCCL's errors.
    pub fn replicate<T: MultiElement>(
        &self,
        m: &ndgpu_core::Matrix<T>,
    ) -> Result<ndgpu_core::Matrix<T>> {
        let whole = self.everywhere("replicate", m)?;
        let parts = whole
            .into_iter()
            .enumerate()
            .map(|(r, p)| match p {
                layout::Part::Owned(p) => Ok(p),
                layout::Part::Borrowed(p) => self.ranks[r].ops::<T>().copy(p),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.wrap(m.dim(), Layout::Replicated, parts))
    }
}

ndgpu_core::impl_kernels!(MultiBackend, MultiElement: matmul, transpose, reduce, factorize, cluster);

impl Backend for MultiBackend {
    fn description(&self) -> String {
        let first = self.ranks[0].backend.description();
        format!(
            "{} devices ({}) through NCCL, each: {first}",
            self.ranks.len(),
            self.devices()
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    fn variant_table(&self) -> &Variants {
        &self.variants
    }

    fn variant_table_mut(&mut self) -> &mut Variants {
        &mut self.variants
    }

    /// Where the first rank's backend runs it (the ranks are devices of one kind).
    fn runs_here(&self, family: Family, name: &str) -> bool {
        self.ranks
            .first()
            .is_none_or(|r| r.backend.runs_here(family, name))
    }

    /// Selects the variant on every rank.
    fn set_variant(&mut self, family: Family, name: &str) -> Result<()> {
        self.variants.set(family, name)?;
        for r in &mut self.ranks {
            r.backend.set_variant(family, name)?;
        }
        Ok(())
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![
            "arrays are split by rows over the devices; products, gram and k-means run on \
             every device, Cholesky and its solves on the first"
                .to_string(),
            "k-means: centroids and labels bitwise those of one device (the update's chunk \
             sums are gathered, not re-associated); the inertia may differ in its last bits"
                .to_string(),
        ];
        notes.extend(self.ranks[0].backend.notes());
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists_parse_and_bad_ones_are_errors() {
        assert_eq!(parse_devices("cuda", "0,1").unwrap(), vec![0, 1]);
        assert_eq!(parse_devices("cuda", "3, 1").unwrap(), vec![3, 1]);
        for bad in ["", "0,,1", "x", "0,0", "-1"] {
            match parse_devices("cuda", bad) {
                Err(Error::InvalidArgument { detail, .. }) => {
                    assert!(detail.contains(&format!("'cuda:{bad}'")), "{detail}")
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn names_are_made_once() {
        let a = intern("cuda:0,1".to_string());
        let b = intern(String::from("cuda:0,1"));
        assert!(std::ptr::eq(a, b));
    }
}
