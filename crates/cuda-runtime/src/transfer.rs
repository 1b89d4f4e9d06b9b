//! Host ↔ device transfers at the bus's rate.
//!
//! The DMA engines read and write only page-locked (pinned) host memory at full speed;
//! from ordinary memory the driver stages through a small pinned buffer of its own,
//! one piece at a time. So a large transfer here goes through a ring of pinned staging
//! slots, in chunks: while one chunk crosses the bus, other threads pack the next
//! chunks of the host array into free slots (or unpack the chunks that have arrived).
//! A strided view is packed once, straight into the slots. The chunks ramp up from
//! 256 KiB to 4 MiB and back down at the end, so that the first copy starts early and
//! the last unpack ends soon after the last copy. A host array that is already pinned
//! (from [`Gpu::host_array`], see `pinned.rs`) needs no staging: one copy each way.
//! The ring itself, its chunks and its threads are in `ring.rs`.
//!
//! The copies run on the copy stream. It waits for the work queued on the compute
//! stream before the first copy (the destination may be memory that earlier work just
//! freed, or data it is still computing), and the compute stream waits for the copies
//! before anything queued after the transfer runs.

use cudarc::driver::{result, CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr};
use ndarray::{s, ArrayView2, ArrayViewMut2};
use ndgpu_core::Result;

use crate::device_matrix::DeviceMatrix;
use crate::element::CudaElement;
use crate::errors::driver;
use crate::gpu::Gpu;
use crate::pinned::is_pinned;
use crate::ring::Slots;

/// Transfers of at most this many bytes are one plain copy.
const SMALL: usize = 1 << 20;

impl Gpu {
    /// Copies a host array of any layout into the row-major device matrix `m` of the
    /// same shape (the caller checks the shape). Large arrays go through the pinned ring
    /// in chunks, packed by several threads while earlier chunks cross the bus; the call
    /// returns when the data is on the device.
    ///
    /// # Errors
    /// Driver errors.
    pub fn upload_into<T: CudaElement>(
        &self,
        a: ArrayView2<T>,
        m: &mut DeviceMatrix<T>,
    ) -> Result<()> {
        debug_assert_eq!(a.dim(), m.dim());
        let len = m.len();
        let elem = std::mem::size_of::<T>();
        if len == 0 {
            return Ok(());
        }
        if len * elem <= SMALL {
            let host = a.as_standard_layout();
            let host = host.as_slice().expect("standard layout is contiguous");
            return self
                .stream()
                .memcpy_htod(host, &mut m.data.slice_mut(0..len))
                .map_err(|e| driver("copying to the device", e));
        }
        let copy = self.copy_stream();
        copy.join(self.stream())
            .map_err(|e| driver("ordering the upload after earlier work", e))?;
        // Event tracking is off (crate::gpu), so the guard cudarc returns does nothing.
        let dst = m.data.device_ptr_mut(copy).0;
        match a
            .as_slice()
            .filter(|h| is_pinned(h.as_ptr().cast(), len * elem))
        {
            // A pinned host array: one copy straight from it.
            // SAFETY: dst holds len elements; the source is pinned and holds them, and
            // is borrowed until the copy has finished (synchronised below).
            Some(host) => unsafe {
                result::memcpy_htod_async(dst, host, copy.cu_stream())
                    .map_err(|e| driver("copying to the device", e))?;
            },
            None => self.upload_staged(a, dst, len)?,
        }
        self.stream()
            .join(copy)
            .map_err(|e| driver("ordering later work after the upload", e))?;
        // The source is borrowed until its copy is done.
        copy.synchronize()
            .map_err(|e| driver("finishing the upload", e))
    }

    /// Queues the copy of `a` (len elements) to `dst` on the copy stream through the
    /// staging ring, several threads packing while earlier chunks cross the bus.
    fn upload_staged<T: CudaElement>(&self, a: ArrayView2<T>, dst: u64, len: usize) -> Result<()> {
        let elem = std::mem::size_of::<T>();
        let copy = self.copy_stream();
        self.through_ring(len * elem, elem, |p, slots, c, slot, (lo, hi)| {
            if c >= p.nslots {
                p.events[slot]
                    .synchronize()
                    .map_err(|e| driver("waiting for a staging slot", e))?;
            }
            // SAFETY: this thread owns the slot: the chunk that used it before is done
            // and its copy has completed (the event above). T is plain data; the slot
            // (4 MiB into page-aligned memory) is aligned for it.
            let out = unsafe {
                let bytes = slots.slot(slot, hi - lo);
                std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<T>(), (hi - lo) / elem)
            };
            pack(&a, lo / elem, out);
            // SAFETY: dst holds len elements, and [lo, hi) lies within len · elem bytes;
            // the source is the slot just packed, pinned, untouched until the event below
            // has passed (and the copy stream is synchronised before the lock goes).
            unsafe {
                result::memcpy_htod_async(dst + lo as u64, &*out, copy.cu_stream())
                    .map_err(|e| driver("copying a chunk to the device", e))?;
            }
            p.events[slot]
                .record(copy)
                .map_err(|e| driver("recording a transfer event", e))
        })
    }

    /// Copies the device matrix `m` into `out`, a host array of the same shape (the
    /// caller checks it). A C-ordered `out` receives the data in place: large matrices
    /// come through the pinned ring in chunks, unpacked by several threads straight into
    /// it while later chunks cross the bus. Any other layout receives it through a
    /// C-ordered copy.
    ///
    /// # Errors
    /// [`Error::HostOutOfMemory`] (the copy, for other layouts); driver errors, including
    /// those of earlier kernels.
    pub fn download_into<T: CudaElement>(
        &self,
        m: &DeviceMatrix<T>,
        mut out: ArrayViewMut2<T>,
    ) -> Result<()> {
        debug_assert_eq!(out.dim(), m.dim());
        if let Some(dst) = out.as_slice_mut() {
            return self.download_to(m, dst);
        }
        let mut c = ndgpu_core::host::zeros("download", m.dim())?;
        self.download_to(m, c.as_slice_mut().expect("a new array is C-ordered"))?;
        out.assign(&c);
        Ok(())
    }

    /// Copies the device matrix into `dst` (its row-major elements, as many).
    fn download_to<T: CudaElement>(&self, m: &DeviceMatrix<T>, dst: &mut [T]) -> Result<()> {
        let len = m.len();
        let elem = std::mem::size_of::<T>();
        if len * elem <= SMALL {
            if len > 0 {
                self.stream()
                    .memcpy_dtoh(&m.data.slice(0..len), dst)
                    .map_err(|e| driver("copying from the device", e))?;
            }
            return self.synchronize();
        }
        if is_pinned(dst.as_ptr().cast(), len * elem) {
            let copy = self.copy_stream();
            copy.join(self.stream())
                .map_err(|e| driver("ordering the download after earlier work", e))?;
            let src = m.data.device_ptr(copy).0;
            // A pinned host array: one copy straight into it.
            // SAFETY: src holds len elements, dst as many, pinned, borrowed until the
            // copy has finished (synchronised below).
            unsafe {
                result::memcpy_dtoh_async(&mut dst[..len], src, copy.cu_stream())
                    .map_err(|e| driver("copying from the device", e))?;
            }
            return copy
                .synchronize()
                .map_err(|e| driver("finishing the download", e));
        }
        let base = Slots(dst.as_mut_ptr().cast());
        self.download_chunks(&m.data, len, |lo, chunk| {
            // SAFETY: dst holds len elements; chunks are disjoint, each unpacked by one
            // thread.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    chunk.as_ptr(),
                    base.at(lo * elem).cast(),
                    chunk.len(),
                );
            }
            Ok(())
        })
    }

    /// Copies the first `len` elements of `src` back after all queued work, handing each
    /// chunk to `unpack` with the index of its first element: one plain copy for small
    /// transfers, else the pinned ring, chunks unpacked by several threads while later
    /// ones cross the bus.
    ///
    /// # Errors
    /// `unpack`'s first error; driver errors, including those of earlier kernels.
    pub(crate) fn download_chunks<U: DeviceRepr + Default + Clone>(
        &self,
        src: &CudaSlice<U>,
        len: usize,
        unpack: impl Fn(usize, &[U]) -> Result<()> + Sync,
    ) -> Result<()> {
        let elem = std::mem::size_of::<U>();
        debug_assert!(len <= src.len() && 16 % elem == 0);
        if len * elem <= SMALL {
            return unpack(0, &self.download_slice(src, len)?);
        }
        let copy = self.copy_stream();
        copy.join(self.stream())
            .map_err(|e| driver("ordering the download after earlier work", e))?;
        let src = src.device_ptr(copy).0;
        self.through_ring(len * elem, elem, |p, slots, _, slot, (lo, hi)| {
            // SAFETY: this thread owns the slot (the chunk that used it before is done,
            // so unpacked); the copy writes hi − lo bytes of it, from [lo, hi) of the
            // source's len · elem bytes.
            let stage = unsafe { slots.slot(slot, hi - lo) };
            unsafe {
                result::memcpy_dtoh_async(&mut *stage, src + lo as u64, copy.cu_stream())
                    .map_err(|e| driver("copying a chunk from the device", e))?;
            }
            p.events[slot]
                .record(copy)
                .map_err(|e| driver("recording a transfer event", e))?;
            p.events[slot]
                .synchronize()
                .map_err(|e| driver("waiting for a chunk", e))?;
            // SAFETY: the slot holds the chunk's hi − lo bytes (event passed): whole
            // elements (chunk edges are multiples of 16 bytes, a multiple of the
            // element's size and alignment; slots are page-aligned), any bit pattern
            // valid for the element types transferred.
            let chunk =
                unsafe { std::slice::from_raw_parts(stage.as_ptr().cast::<U>(), (hi - lo) / elem) };
            unpack(lo / elem, chunk)
        })
    }
}

/// Copies elements `[lo, lo + out.len())` of `a` in row-major (logical) order into `out`,
/// a row segment at a time (one `memcpy` per segment where the row is contiguous).
fn pack<T: Copy>(a: &ArrayView2<T>, lo: usize, out: &mut [T]) {
    if let Some(all) = a.as_slice() {
        out.copy_from_slice(&all[lo..lo + out.len()]);
        return;
    }
    let cols = a.ncols();
    let mut k = 0;
    while k < out.len() {
        let i = lo + k;
        let (r, c0) = (i / cols, i % cols);
        let c1 = cols.min(c0 + out.len() - k);
        let seg = a.slice(s![r, c0..c1]);
        match seg.as_slice() {
            Some(src) => out[k..k + src.len()].copy_from_slice(src),
            None => out[k..k + (c1 - c0)]
                .iter_mut()
                .zip(seg.iter())
                .for_each(|(o, v)| *o = *v),
        }
        k += c1 - c0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn pack_walks_any_layout_in_row_major_order() {
        let a = Array2::from_shape_fn((7, 5), |(i, j)| (10 * i + j) as f32);
        let want: Vec<f32> = a.iter().copied().collect();
        for view in [a.view(), a.t().t(), a.slice(s![.., ..])] {
            for (lo, len) in [(0, 35), (3, 9), (12, 1), (34, 1), (5, 20)] {
                let mut out = vec![0.0; len];
                pack(&view, lo, &mut out);
                assert_eq!(out, want[lo..lo + len], "{lo} {len}");
            }
        }
        let f = a.t().as_standard_layout().into_owned();
        let ft = f.t();
        let mut out = vec![0.0; 35];
        pack(&ft, 0, &mut out);
        assert_eq!(out, want);
        let strided = a.slice(s![..;2, ..;2]);
        let want: Vec<f32> = strided.iter().copied().collect();
        let mut out = vec![0.0; want.len()];
        pack(&strided, 0, &mut out);
        assert_eq!(out, want);
    }
}
