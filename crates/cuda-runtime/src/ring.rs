//! The pinned staging ring that large transfers go through: a ring of page-locked slots
//! (allocated on the first large transfer and kept), the chunks a transfer is cut into,
//! and the threads that pack or unpack chunks while earlier ones cross the bus.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use cudarc::driver::CudaEvent;
use ndgpu_core::{Error, Result};

use crate::errors::driver;
use crate::gpu::{Gpu, Staging};

/// The largest chunk, and the size of a staging slot.
const SLOT: usize = 4 << 20;
/// The first (and last) chunk.
const FIRST: usize = 256 << 10;
/// Staging slots: 64 MiB of pinned memory at most, allocated on the first large
/// transfer and kept.
const SLOTS: usize = 16;
/// Threads that pack and unpack, at most.
const THREADS: usize = 16;

/// The threads that pack and unpack chunks, shared by every device.
fn pool() -> Result<&'static rayon::ThreadPool> {
    static POOL: OnceLock<std::result::Result<rayon::ThreadPool, String>> = OnceLock::new();
    POOL.get_or_init(|| {
        let n = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(2, THREADS);
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("ndgpu-transfer-{i}"))
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| Error::backend("cuda", "starting the transfer threads", e.clone()))
}

/// The byte ranges of the chunks of a transfer of `bytes` (multiples of `elem`): doubling
/// from [`FIRST`] to [`SLOT`], then whole slots, then halving back down.
fn chunks(bytes: usize, elem: usize) -> Vec<(usize, usize)> {
    let mut sizes = Vec::new();
    let mut head = Vec::new();
    let mut tail = Vec::new();
    let mut left = bytes;
    let mut size = FIRST;
    // Ramp up at the front and down at the back while at least two such chunks remain.
    while size < SLOT && left >= 2 * size {
        head.push(size);
        tail.push(size);
        left -= 2 * size;
        size *= 2;
    }
    while left > 0 {
        let c = left.min(SLOT);
        sizes.push(c);
        left -= c;
    }
    tail.reverse();
    let mut out = Vec::with_capacity(head.len() + sizes.len() + tail.len());
    let mut at = 0;
    for c in head.into_iter().chain(sizes).chain(tail) {
        // Chunk edges on element boundaries (every size above is a multiple of 16).
        debug_assert_eq!(c % elem, 0);
        out.push((at, at + c));
        at += c;
    }
    out
}

/// The pinned slots, as a base pointer.
#[derive(Clone, Copy)]
pub(crate) struct Slots(pub(crate) *mut u8);
// SAFETY: the pointer is only used to form disjoint slices of distinct slots, each by
// the one thread that owns that slot at the time (see `Pipeline`).
unsafe impl Send for Slots {}
unsafe impl Sync for Slots {}

impl Slots {
    /// The byte at offset `at`.
    ///
    /// # Safety
    /// `at` lies within the allocation the pointer came from.
    pub(crate) unsafe fn at(&self, at: usize) -> *mut u8 {
        self.0.add(at)
    }

    /// Slot `s` as bytes.
    ///
    /// # Safety
    /// The caller owns slot `s` (no other thread touches it meanwhile).
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slot(&self, s: usize, len: usize) -> &mut [u8] {
        std::slice::from_raw_parts_mut(self.0.add(s * SLOT), len)
    }
}

/// What the threads of one transfer share: who took which chunk, which chunks are done,
/// and an event per slot recorded after the copy that last used it. Chunk c uses slot
/// c mod nslots, so a thread owns its slot once the chunk nslots before it is done.
pub(crate) struct Pipeline {
    pub(crate) chunks: Vec<(usize, usize)>,
    next: AtomicUsize,
    done: Vec<AtomicBool>,
    failed: AtomicBool,
    pub(crate) events: Vec<CudaEvent>,
    pub(crate) nslots: usize,
}

impl Pipeline {
    fn new(gpu: &Gpu, bytes: usize, elem: usize) -> Result<Self> {
        let chunks = chunks(bytes, elem);
        let nslots = chunks.len().min(SLOTS);
        let events = (0..nslots)
            .map(|_| gpu.context().new_event(None))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| driver("creating the transfer events", e))?;
        Ok(Pipeline {
            done: (0..chunks.len()).map(|_| AtomicBool::new(false)).collect(),
            chunks,
            next: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            events,
            nslots,
        })
    }

    /// Waits until chunk `c` is done (or the transfer failed); false if it failed.
    fn wait_done(&self, c: usize) -> bool {
        while !self.done[c].load(Ordering::Acquire) {
            if self.failed.load(Ordering::Acquire) {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    /// Each thread takes chunks in increasing order and runs `step` on each; a chunk only
    /// ever waits for an earlier one, which an earlier take holds, so this cannot stall.
    fn run(&self, step: impl Fn(usize, usize) -> Result<()> + Sync) -> Result<()> {
        let first_error = std::sync::Mutex::new(None);
        pool()?.broadcast(|_| loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.chunks.len() || self.failed.load(Ordering::Acquire) {
                break;
            }
            // Chunk c uses slot c % nslots, which chunk c − nslots used before.
            if c >= self.nslots && !self.wait_done(c - self.nslots) {
                break;
            }
            if let Err(e) = step(c, c % self.nslots) {
                self.failed.store(true, Ordering::Release);
                first_error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(e);
                break;
            }
            self.done[c].store(true, Ordering::Release);
        });
        match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Gpu {
    /// Makes this device's context current on the calling thread: the staging pool's
    /// threads serve every device, and the raw copies they queue act on the current
    /// context.
    fn bind(&self) -> Result<()> {
        self.context()
            .bind_to_thread()
            .map_err(|e| driver("making the device's context current", e))
    }

    /// The pinned slots, allocated on first use.
    fn slots(&self, staging: &mut Staging) -> Result<Slots> {
        if staging.buf.is_none() {
            // SAFETY: the memory is uninitialised; it is only ever written by packing
            // before a copy reads it, or by a copy before unpacking reads it. Flags 0:
            // cached, not write-combined, since downloads read it back on the host.
            let buf = unsafe {
                self.context()
                    .alloc_pinned_with_flags::<u8>(SLOTS * SLOT, 0)
            }
            .map_err(|e| driver("allocating pinned staging memory", e))?;
            staging.buf = Some(buf);
        }
        let buf = staging.buf.as_mut().expect("allocated above");
        let p = buf
            .as_mut_ptr()
            .map_err(|e| driver("reaching pinned staging memory", e))?;
        Ok(Slots(p))
    }

    /// Moves `bytes` (whole elements of `elem` bytes) through the pinned staging ring:
    /// with the ring's lock held, several threads, each bound to this device, hand
    /// `step` a chunk `c`, the slot it uses and its byte range; then the copy stream is
    /// synchronised, whatever happened, so the slots are free again (for the next
    /// transfer, which may be waiting for the lock) once every copy is done with them.
    pub(crate) fn through_ring(
        &self,
        bytes: usize,
        elem: usize,
        step: impl Fn(&Pipeline, &Slots, usize, usize, (usize, usize)) -> Result<()> + Sync,
    ) -> Result<()> {
        let mut staging = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        let slots = self.slots(&mut staging)?;
        let p = Pipeline::new(self, bytes, elem)?;
        let moved = p.run(|c, slot| {
            self.bind()?;
            step(&p, &slots, c, slot, p.chunks[c])
        });
        let finished = self
            .copy_stream()
            .synchronize()
            .map_err(|e| driver("finishing a staged transfer", e));
        moved.and(finished)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_ramp_up_cover_everything_and_fit_a_slot() {
        for bytes in [
            (1 << 20) + 16,
            3 * SLOT,
            64 << 20,
            (1 << 30) + 48,
            FIRST * 3,
            SLOT * 2 + FIRST + 16,
        ] {
            let c = chunks(bytes, 16);
            assert_eq!(c[0].0, 0);
            assert_eq!(c.last().unwrap().1, bytes);
            assert!(c.windows(2).all(|w| w[0].1 == w[1].0), "{bytes}: {c:?}");
            assert!(
                c.iter().all(|&(lo, hi)| hi > lo && hi - lo <= SLOT),
                "{bytes}"
            );
            if bytes >= 4 * SLOT {
                assert_eq!(c[0].1, FIRST, "{bytes}");
                assert_eq!(c.last().unwrap().1 - c.last().unwrap().0, FIRST, "{bytes}");
            }
        }
        // 64 MiB: ramps of 256 KiB..2 MiB at both ends (7.5 MiB), whole slots between.
        let ramps = 2 * (FIRST + 2 * FIRST + 4 * FIRST + 8 * FIRST);
        assert_eq!(
            chunks(64 << 20, 4).len(),
            8 + ((64 << 20) - ramps).div_ceil(SLOT)
        );
    }
}
