//! The device's memory pool: stream-ordered allocations come from it, and it keeps what
//! freed arrays give back for the next allocation.

use cudarc::driver::{sys, DriverError};

/// The device's default memory pool, which stream-ordered allocations come from.
pub(crate) struct MemPool(sys::CUmemoryPool);

// SAFETY: a memory pool handle may be used from any thread; the driver synchronises
// its use.
unsafe impl Send for MemPool {}
// SAFETY: as above.
unsafe impl Sync for MemPool {}

/// The device's default memory pool, set to keep the memory that arrays give back for
/// the next allocation: at its default, the driver returns it to the system at every
/// synchronisation, and each large allocation after one maps its pages again (the cost
/// is in docs/architecture.md).
pub(crate) fn keep_freed_memory(ordinal: usize) -> std::result::Result<MemPool, DriverError> {
    // SAFETY: plain driver calls on the device `ordinal`, whose context exists; the
    // attribute's value is a u64, as the driver reads it.
    unsafe {
        let dev = cudarc::driver::result::device::get(ordinal as i32)?;
        let mut pool = std::ptr::null_mut();
        sys::cuDeviceGetDefaultMemPool(&mut pool, dev).result()?;
        let mut keep = u64::MAX;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut keep as *mut u64).cast(),
        )
        .result()?;
        Ok(MemPool(pool))
    }
}

impl MemPool {
    /// Gives the memory the pool keeps back to the system.
    pub(crate) fn trim(&self) -> std::result::Result<(), DriverError> {
        // SAFETY: the pool is the device's default pool, alive as long as the device.
        unsafe { sys::cuMemPoolTrimTo(self.0, 0) }.result()
    }
}
