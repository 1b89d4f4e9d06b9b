//! Pinned host memory outside the staging ring: the host arrays users fill
//! ([`Gpu::host_array`]), which transfers copy straight to and from the device, and the
//! pinned pair that measures the ceiling of transfers.

use std::ptr::NonNull;
use std::sync::Mutex;

use cudarc::driver::{sys, PinnedHostSlice};
use ndgpu_core::{Error, HostArray, Result};

use crate::element::CudaElement;
use crate::errors::driver;
use crate::gpu::Gpu;

/// The host arrays of [`Gpu::host_array`] alive now, as byte ranges: transfers from and
/// into them skip the staging ring.
static PINNED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Whether `bytes` bytes from `p` lie inside one pinned host array.
pub(crate) fn is_pinned(p: *const u8, bytes: usize) -> bool {
    let (lo, hi) = (p as usize, p as usize + bytes);
    PINNED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|&(start, len)| start <= lo && hi <= start + len)
}

/// The memory of a pinned host array, registered while it lives.
struct PinnedOwner {
    /// Held only to be freed last.
    _buf: PinnedHostSlice<u8>,
    start: usize,
}

impl Drop for PinnedOwner {
    fn drop(&mut self) {
        // Unregistered before `buf` is freed (fields drop after this).
        let mut pinned = PINNED.lock().unwrap_or_else(|e| e.into_inner());
        pinned.retain(|&(start, _)| start != self.start);
    }
}

impl Gpu {
    /// A zeroed rows×cols host array in pinned memory (portable: every context reaches
    /// it), which [`Gpu::upload_into`] and [`Gpu::download_into`] copy straight to and from
    /// the device, with no staging.
    ///
    /// # Errors
    /// [`Error::HostOutOfMemory`] when the size overflows or the driver will not pin it.
    pub fn host_array<T: CudaElement>(&self, rows: usize, cols: usize) -> Result<HostArray<T>> {
        let elem = std::mem::size_of::<T>();
        let bytes = rows
            .checked_mul(cols)
            .and_then(|l| l.checked_mul(elem))
            .ok_or(Error::HostOutOfMemory {
                op: "host_array",
                requested: None,
            })?;
        // SAFETY: every byte is zeroed below before anything reads it.
        let mut buf = unsafe {
            self.context()
                .alloc_pinned_with_flags::<u8>(bytes.max(elem), sys::CU_MEMHOSTALLOC_PORTABLE)
        }
        .map_err(|_| Error::HostOutOfMemory {
            op: "host_array",
            requested: Some(bytes),
        })?;
        let p = buf
            .as_mut_ptr()
            .map_err(|e| driver("reaching pinned host memory", e))?;
        // SAFETY: the allocation holds bytes.max(elem) bytes; all-zero bits are 0.0.
        unsafe { std::ptr::write_bytes(p, 0, bytes.max(elem)) };
        let start = p as usize;
        PINNED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((start, bytes));
        let ptr = NonNull::new(p.cast::<T>()).expect("the driver returned a pointer");
        // SAFETY: the pinned allocation is page-aligned (so aligned for T), holds rows ·
        // cols zeroed (initialised) elements, and lives as long as the owner, which only
        // this array holds.
        Ok(unsafe {
            HostArray::from_raw_parts(
                ptr,
                (rows, cols),
                Box::new(PinnedOwner { _buf: buf, start }),
            )
        })
    }
}

/// A pinned host buffer and a device buffer of the same size: the ceiling of transfers
/// between host and device (what the DMA engines do with no packing, no staging and no
/// page faults), for benchmarks.
pub struct PinnedPair {
    host: PinnedHostSlice<u8>,
    dev: cudarc::driver::CudaSlice<u8>,
}

impl PinnedPair {
    /// Bytes each way.
    pub fn bytes(&self) -> usize {
        self.dev.len()
    }
}

impl Gpu {
    /// `bytes` of pinned host memory (filled with a pattern) and as many on the device.
    ///
    /// # Errors
    /// Out of memory; driver errors.
    pub fn pinned_pair(&self, bytes: usize) -> Result<PinnedPair> {
        // SAFETY: every byte is written below before any copy reads it.
        let mut host = unsafe { self.context().alloc_pinned_with_flags::<u8>(bytes, 0) }
            .map_err(|e| driver("allocating pinned host memory", e))?;
        host.as_mut_slice()
            .map_err(|e| driver("reaching pinned host memory", e))?
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = (i % 251) as u8);
        let dev = self.alloc::<u8>("pinned", bytes)?;
        Ok(PinnedPair { host, dev })
    }

    /// One copy of the pair's host buffer to the device and one back, on the copy
    /// stream; returns when both are done.
    ///
    /// # Errors
    /// Driver errors.
    pub fn pinned_round_trip(&self, p: &mut PinnedPair) -> Result<()> {
        let copy = self.copy_stream();
        copy.memcpy_htod(&p.host, &mut p.dev)
            .map_err(|e| driver("copying pinned memory to the device", e))?;
        copy.memcpy_dtoh(&p.dev, &mut p.host)
            .map_err(|e| driver("copying to pinned memory", e))?;
        copy.synchronize()
            .map_err(|e| driver("finishing the pinned copies", e))
    }

    /// Whether the pair's host buffer still holds the pattern it was filled with (after
    /// round trips). Separate from [`Gpu::pinned_round_trip`], so that a timed round
    /// trip is only the copies.
    ///
    /// # Errors
    /// Driver errors.
    pub fn pinned_intact(&self, p: &PinnedPair) -> Result<bool> {
        let back = p
            .host
            .as_slice()
            .map_err(|e| driver("reaching pinned host memory", e))?;
        Ok(back.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8))
    }
}
