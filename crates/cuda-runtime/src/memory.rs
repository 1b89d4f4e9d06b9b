//! Device memory of a [`Gpu`]: allocation (out of memory is an error value, never a
//! panic), and plain copies of slices to and from the device.

use cudarc::driver::{sys, CudaSlice, DeviceRepr, DriverError, ValidAsZeroBits};
use ndgpu_core::{Error, Result};

use crate::device_matrix::DeviceMatrix;
use crate::element::CudaElement;
use crate::errors::driver;
use crate::gpu::Gpu;

/// Bytes of the pinned mailbox that small read-backs (a statistic, a scalar) go through.
const MAILBOX: usize = 256;

impl Gpu {
    /// Allocates `len` uninitialised elements (at least one, so that empty matrices
    /// still have a valid pointer).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] naming the bytes asked and free; the device stays usable.
    pub fn alloc<T: DeviceRepr>(&self, op: &'static str, len: usize) -> Result<CudaSlice<T>> {
        let len = len.max(1);
        // The driver is asked for len × size bytes: a product that wraps would hand back
        // a buffer far smaller than `len` (a matrix of no elements can still have a
        // dimension of 2⁶²).
        let Some(bytes) = len
            .checked_mul(std::mem::size_of::<T>())
            .filter(|&b| b <= isize::MAX as usize)
        else {
            return Err(Error::invalid(
                op,
                format!(
                    "{len} elements of {} bytes overflow the address space",
                    std::mem::size_of::<T>()
                ),
            ));
        };
        // SAFETY: the memory is uninitialised; every kernel writes before it reads, and
        // downloads only read what was written.
        let alloc = || unsafe { self.stream.alloc::<T>(len) };
        let oom = |e: &DriverError| e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY;
        let first = match alloc() {
            Err(e) if oom(&e) => {
                // Memory the pool keeps may be what is missing: give it back, once.
                self.release_cached()?;
                alloc()
            }
            other => other,
        };
        match first {
            Ok(s) => Ok(s),
            Err(e) if oom(&e) => {
                // The failed attempt can leave the pool holding what it reserved: give
                // it back, so that the device is as free as before the call.
                self.release_cached()?;
                let (free, total) = self.mem_info().unwrap_or((0, 0));
                Err(Error::OutOfMemory {
                    op,
                    requested: bytes,
                    free,
                    total,
                })
            }
            Err(e) => Err(driver(format!("{op}: allocating {bytes} bytes"), e)),
        }
    }

    /// Allocates `len` zeroed elements (at least one), as [`Gpu::alloc`] does.
    ///
    /// # Errors
    /// As [`Gpu::alloc`]; driver errors.
    pub fn alloc_zeroed<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        op: &'static str,
        len: usize,
    ) -> Result<CudaSlice<T>> {
        let mut s = self.alloc(op, len)?;
        self.stream
            .memset_zeros(&mut s)
            .map_err(|e| driver(format!("{op}: zeroing {len} elements"), e))?;
        Ok(s)
    }

    /// Allocates a rows×cols matrix (contents undefined).
    ///
    /// # Errors
    /// As [`Gpu::alloc`].
    pub fn alloc_matrix<T: CudaElement>(
        &self,
        op: &'static str,
        rows: usize,
        cols: usize,
    ) -> Result<DeviceMatrix<T>> {
        let len = rows
            .checked_mul(cols)
            .ok_or_else(|| Error::invalid(op, format!("{rows}x{cols} overflows")))?;
        Ok(DeviceMatrix {
            data: self.alloc(op, len)?,
            rows,
            cols,
            gpu: self.handle(),
        })
    }

    /// Copies a slice to the device.
    ///
    /// # Errors
    /// As [`Gpu::alloc`]; driver errors.
    pub fn upload_slice<T: DeviceRepr + Unpin>(
        &self,
        op: &'static str,
        host: &[T],
    ) -> Result<CudaSlice<T>> {
        let mut d = self.alloc(op, host.len())?;
        if !host.is_empty() {
            self.stream
                .memcpy_htod(host, &mut d.slice_mut(0..host.len()))
                .map_err(|e| driver(format!("{op}: copying to the device"), e))?;
        }
        Ok(d)
    }

    /// Copies `len` elements of a device buffer back.
    ///
    /// # Errors
    /// Driver errors, including those of earlier kernels on the stream.
    pub fn download_slice<T: DeviceRepr + Default + Clone>(
        &self,
        d: &CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>> {
        self.download_range(d, 0..len)
    }

    /// Copies elements `range` of a device buffer back, after all queued work.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a range beyond the buffer; driver errors,
    /// including those of earlier kernels on the stream.
    pub fn download_range<T: DeviceRepr + Default + Clone>(
        &self,
        d: &CudaSlice<T>,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<T>> {
        if range.end > d.len() || range.start > range.end {
            return Err(Error::invalid(
                "download",
                format!("elements {range:?} of a buffer of {}", d.len()),
            ));
        }
        if !range.is_empty() && range.len() * std::mem::size_of::<T>() <= MAILBOX {
            return self.download_small(d, range);
        }
        let mut host = ndgpu_core::host::filled_vec("download", range.len(), T::default())?;
        if !range.is_empty() {
            self.stream
                .memcpy_dtoh(&d.slice(range), host.as_mut_slice())
                .map_err(|e| driver("copying from the device", e))?;
        }
        self.synchronize()?;
        Ok(host)
    }

    /// A read-back of at most [`MAILBOX`] bytes, after all queued work: one copy into
    /// pinned memory, then the stream's end. (A copy into pageable memory goes through
    /// the driver's own staging, which waits for the stream first, a slower path for the
    /// statistic an iteration reads back.)
    fn download_small<T: DeviceRepr + Default + Clone>(
        &self,
        d: &CudaSlice<T>,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<T>> {
        let len = range.len();
        let mut mailbox = self.mailbox.lock().unwrap_or_else(|e| e.into_inner());
        if mailbox.is_none() {
            // SAFETY: zeroed below before anything reads it. Flags 0: cached, since the
            // host reads it.
            let mut buf = unsafe { self.context().alloc_pinned_with_flags::<u8>(MAILBOX, 0) }
                .map_err(|e| driver("allocating the pinned mailbox", e))?;
            let p = buf
                .as_mut_ptr()
                .map_err(|e| driver("reaching the pinned mailbox", e))?;
            // SAFETY: the allocation holds MAILBOX bytes.
            unsafe { std::ptr::write_bytes(p, 0, MAILBOX) };
            *mailbox = Some(buf);
        }
        let p = mailbox
            .as_mut()
            .expect("allocated above")
            .as_mut_ptr()
            .map_err(|e| driver("reaching the pinned mailbox", e))?;
        // SAFETY: the mailbox holds MAILBOX ≥ len · size_of::<T>() bytes, page-aligned (so
        // aligned for T), initialised (zeroed, then whole elements copied in; T is a
        // plain device type, any bits valid), and ours while the lock is held; the copy
        // has finished (the stream synchronised) before the slice is read.
        let dst = unsafe { std::slice::from_raw_parts_mut(p.cast::<T>(), len) };
        let src = cudarc::driver::DevicePtr::device_ptr(&d.slice(range), &self.stream).0;
        // SAFETY: src holds len elements of T (a range of d, checked by the caller), dst
        // as many, pinned.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(dst, src, self.stream.cu_stream())
                .map_err(|e| driver("copying from the device", e))?;
        }
        self.synchronize()?;
        Ok(dst.to_vec())
    }
}
