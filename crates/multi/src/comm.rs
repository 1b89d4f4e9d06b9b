//! The NCCL communicator of a group: one rank per device, all driven from one thread, so
//! every collective is issued inside an NCCL group (one call per rank between
//! `ncclGroupStart` and `ncclGroupEnd`): no call waits for a peer that has not been
//! called yet, and a failing call still closes its group.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaStream, CudaViewMut};
use cudarc::nccl::result::{group_end, group_start, NcclError};
use cudarc::nccl::safe::{Comm, NcclType};
use ndgpu_core::{Error, Result};

/// The environment variable that switches NVLink SHARP (multicast) off in NCCL. Multicast
/// objects can take a shared host's GPUs out of service; this library never uses them.
pub const NVLS_ENV: &str = "NCCL_NVLS_ENABLE";

/// One communicator per rank, used by one caller at a time.
pub(crate) struct Comms {
    ranks: Mutex<Ranks>,
}

struct Ranks(Vec<Comm>);

// SAFETY: an NCCL communicator may be used from any thread, one call at a time; the
// mutex around `Ranks` gives exactly that. (cudarc's `Comm` holds a raw pointer, so it
// is not `Send` by itself.)
unsafe impl Send for Ranks {}

fn nccl(context: impl Into<String>, e: NcclError) -> Error {
    Error::Backend {
        backend: "nccl",
        context: context.into(),
        source: format!("{e:?}").into(),
    }
}

impl Comms {
    /// A communicator over the devices of `streams` (rank i on `streams[i]`), with NVLink
    /// multicast off.
    ///
    /// # Errors
    /// [`Error::Unavailable`] when the NCCL library cannot be loaded; NCCL's error when
    /// the communicator cannot be made.
    pub fn new(backend: &str, streams: Vec<Arc<CudaStream>>) -> Result<Comms> {
        // SAFETY: only looks for the library file; loads nothing into the process.
        if !unsafe { cudarc::nccl::sys::is_culib_present() } {
            return Err(Error::Unavailable {
                backend: backend.into(),
                reason: "the NCCL library (libnccl.so.2) was not found".into(),
            });
        }
        // Before NCCL reads its environment (at the first communicator).
        std::env::set_var(NVLS_ENV, "0");
        let comms =
            Comm::from_devices(streams).map_err(|e| nccl("creating the communicator", e))?;
        Ok(Comms {
            ranks: Mutex::new(Ranks(comms)),
        })
    }

    /// Makes every rank's `bufs[q]` hold, in each range `ranges[r]`, what rank r holds
    /// there: an all-gather of pieces of any sizes, as one broadcast per piece, each
    /// in place, all in one group. Queued on the ranks' compute streams.
    ///
    /// # Errors
    /// NCCL's errors.
    pub fn gather_pieces<T: NcclType>(
        &self,
        bufs: &mut [CudaViewMut<'_, T>],
        ranges: &[Range<usize>],
    ) -> Result<()> {
        let ranks = self.ranks.lock().unwrap_or_else(|e| e.into_inner());
        let mut first = None;
        group_start().map_err(|e| nccl("starting a group", e))?;
        for (q, buf) in bufs.iter_mut().enumerate() {
            for (root, range) in ranges.iter().enumerate() {
                if range.is_empty() || first.is_some() {
                    continue;
                }
                let mut piece = buf.slice_mut(range.clone());
                if let Err(e) = ranks.0[q].broadcast_in_place(&mut piece, root as i32) {
                    first = Some(nccl(format!("broadcast from rank {root} to rank {q}"), e));
                }
            }
        }
        let end = group_end().map_err(|e| nccl("ending a group", e));
        match first {
            Some(e) => Err(e),
            None => end.map(|_| ()),
        }
    }
}
