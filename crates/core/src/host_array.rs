//! Host arrays in memory a backend transfers fastest: [`HostArray`].

use std::any::Any;
use std::fmt;
use std::ptr::NonNull;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use crate::{Element, Result};

/// A C-ordered rows×cols host array in memory that a backend's transfers read and write
/// fastest, from [`Memory::host_array`](crate::Memory::host_array): page-locked (pinned)
/// memory on a GPU backend, which the DMA engines reach directly, so that
/// [`Memory::upload_into`](crate::Memory::upload_into) and
/// [`Memory::download_into`](crate::Memory::download_into) on it run at the bus's rate with
/// no staging copy (as PyTorch's `pin_memory`); ordinary memory on a host backend. Fill
/// and read it through [`HostArray::view_mut`] and [`HostArray::view`]. Pinned memory is
/// scarce and slow to allocate: make one per stream of data and reuse it.
pub struct HostArray<T> {
    ptr: NonNull<T>,
    rows: usize,
    cols: usize,
    /// What owns the memory (freed when this is dropped).
    _owner: Box<dyn Any + Send + Sync>,
}

// SAFETY: the array owns its elements (through `_owner`, which nothing else reaches),
// like a Vec<T>: sending or sharing it is sending or sharing T.
unsafe impl<T: Send> Send for HostArray<T> {}
unsafe impl<T: Sync> Sync for HostArray<T> {}

impl<T: Element> HostArray<T> {
    /// An array over memory that `owner` keeps alive.
    ///
    /// # Safety
    /// `ptr` points to `rows · cols` initialised elements, aligned for T, that stay valid
    /// and are reached by nothing but this array for as long as `owner` lives (until the
    /// array is dropped), and `rows · cols` does not overflow.
    pub unsafe fn from_raw_parts(
        ptr: NonNull<T>,
        (rows, cols): (usize, usize),
        owner: Box<dyn Any + Send + Sync>,
    ) -> Self {
        HostArray {
            ptr,
            rows,
            cols,
            _owner: owner,
        }
    }

    /// An array in ordinary memory (the host backends' [`Memory::host_array`](crate::Memory::host_array)),
    /// zeroed.
    ///
    /// # Errors
    /// [`Error::HostOutOfMemory`](crate::Error::HostOutOfMemory).
    pub fn zeros(rows: usize, cols: usize) -> Result<Self> {
        let a: Array2<T> = crate::host::zeros("host_array", (rows, cols))?;
        let (mut v, _) = a.into_raw_vec_and_offset();
        let ptr = NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling());
        // SAFETY: the Vec holds rows · cols initialised elements; moving it into the box
        // does not move its buffer, which lives as long as the box; nothing else keeps it.
        Ok(unsafe { HostArray::from_raw_parts(ptr, (rows, cols), Box::new(v)) })
    }

    /// Rows and columns.
    pub fn dim(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The elements, C-ordered.
    pub fn view(&self) -> ArrayView2<'_, T> {
        // SAFETY: rows · cols initialised elements in C order, alive while &self is.
        unsafe { ArrayView2::from_shape_ptr((self.rows, self.cols), self.ptr.as_ptr()) }
    }

    /// The elements, C-ordered, to fill.
    pub fn view_mut(&mut self) -> ArrayViewMut2<'_, T> {
        // SAFETY: as in `view`, and &mut self makes this the only reference.
        unsafe { ArrayViewMut2::from_shape_ptr((self.rows, self.cols), self.ptr.as_ptr()) }
    }
}

impl<T: Element> fmt::Debug for HostArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostArray")
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("dtype", &T::DTYPE)
            .finish()
    }
}
