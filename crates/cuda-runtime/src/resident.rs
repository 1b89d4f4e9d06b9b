//! The resident arrays of the CUDA backends: [`Matrix`] and [`Indices`] around
//! [`DeviceMatrix`] and [`IndexStorage`], the memory operations both backends offer
//! ([`impl_device_memory!`](crate::impl_device_memory)), and event timing.

use cudarc::driver::sys::{cuMemcpy2DAsync_v2, CUevent_flags, CUmemorytype, CUDA_MEMCPY2D};
use cudarc::driver::{DevicePtr, DevicePtrMut};
use ndarray::{Array1, ArrayView2, ArrayViewMut2};
use ndgpu_core::backend::{self, Here};
use ndgpu_core::{check, Error, Indices, Matrix, Result};

use crate::errors::driver;
use crate::indices::IndexStorage;
use crate::{CudaElement, DeviceMatrix, Gpu};

impl Gpu {
    /// A device matrix as a resident [`Matrix`].
    pub fn matrix<T: CudaElement>(&self, m: DeviceMatrix<T>) -> Matrix<T> {
        backend::matrix(m.rows, m.cols, m)
    }

    /// The device matrix behind operand `what` of `op`, checked to live on this runtime.
    ///
    /// # Errors
    /// [`Error::WrongPlace`] naming both places.
    pub fn dm<'a, T: CudaElement>(
        &self,
        here: Here,
        op: &'static str,
        what: &'static str,
        m: &'a Matrix<T>,
    ) -> Result<&'a DeviceMatrix<T>> {
        here.matrix(op, what, m)
    }

    /// As [`Gpu::dm`], for an operand the operation writes.
    ///
    /// # Errors
    /// As [`Gpu::dm`].
    pub fn dm_mut<'a, T: CudaElement>(
        &self,
        here: Here,
        op: &'static str,
        what: &'static str,
        m: &'a mut Matrix<T>,
    ) -> Result<&'a mut DeviceMatrix<T>> {
        here.matrix_mut(op, what, m)
    }

    /// A rows×cols matrix of zeros.
    ///
    /// # Errors
    /// Out of memory; driver errors.
    pub fn zeros_matrix<T: CudaElement>(
        &self,
        rows: usize,
        cols: usize,
    ) -> Result<DeviceMatrix<T>> {
        let mut m = self.alloc_matrix("zeros", rows, cols)?;
        self.stream()
            .memset_zeros(&mut m.data)
            .map_err(|e| driver("zeroing a matrix", e))?;
        Ok(m)
    }

    /// Copies `src` into `dst` of the same shape, on the compute stream.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`]; driver errors.
    pub fn copy_matrix<T: CudaElement>(
        &self,
        src: &DeviceMatrix<T>,
        dst: &mut DeviceMatrix<T>,
    ) -> Result<()> {
        check::copy_dims("copy", src.dim(), dst.dim())?;
        let len = src.len();
        if len == 0 {
            return Ok(());
        }
        self.stream()
            .memcpy_dtod(&src.data.slice(0..len), &mut dst.data.slice_mut(0..len))
            .map_err(|e| driver("copying on the device", e))
    }

    /// Copies the rows×cols block of `src` at (`r0`, `c0`) into `dst` at (`r1`, `c1`)
    /// (both row-major), device to device on the compute stream.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when a block does not lie inside its matrix; driver
    /// errors.
    pub fn copy_region<T: CudaElement>(
        &self,
        (src, (r0, c0)): (&DeviceMatrix<T>, (usize, usize)),
        (dst, (r1, c1)): (&mut DeviceMatrix<T>, (usize, usize)),
        (rows, cols): (usize, usize),
    ) -> Result<()> {
        for (m, r, c) in [(src.dim(), r0, c0), (dst.dim(), r1, c1)] {
            if r + rows > m.0 || c + cols > m.1 {
                return Err(Error::shape(
                    "copy",
                    format!(
                        "a {rows}x{cols} block at ({r}, {c}) of a {}x{} matrix",
                        m.0, m.1
                    ),
                ));
            }
        }
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let size = std::mem::size_of::<T>();
        let stream = self.stream();
        // Event tracking is off (see Gpu::new): the guards cudarc returns do nothing.
        let from = src.data.device_ptr(stream).0;
        let to = dst.data.device_ptr_mut(stream).0;
        let copy = CUDA_MEMCPY2D {
            srcXInBytes: c0 * size,
            srcY: r0,
            srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: from,
            srcArray: std::ptr::null_mut(),
            srcPitch: src.cols * size,
            dstXInBytes: c1 * size,
            dstY: r1,
            dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: to,
            dstArray: std::ptr::null_mut(),
            dstPitch: dst.cols * size,
            WidthInBytes: cols * size,
            Height: rows,
        };
        // SAFETY: both pointers are device buffers of this context; each block lies
        // inside its matrix's rows·cols elements (checked above); queued on the compute
        // stream, where both are used.
        unsafe { cuMemcpy2DAsync_v2(&copy, stream.cu_stream()) }
            .result()
            .map_err(|e| driver("copying a block on the device", e))
    }

    /// Seconds between two events around the work `f` queues (waits for the second);
    /// then reports any fault of that work.
    ///
    /// # Errors
    /// Those of `f`; driver errors.
    pub fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let event = || {
            self.context()
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| driver("creating a timing event", e))
        };
        let (start, end) = (event()?, event()?);
        start
            .record(self.stream())
            .map_err(|e| driver("recording the start event", e))?;
        f()?;
        end.record(self.stream())
            .map_err(|e| driver("recording the end event", e))?;
        // elapsed_ms waits for both events; the synchronize reports kernel faults.
        let ms = start
            .elapsed_ms(&end)
            .map_err(|e| driver("reading the elapsed time", e))?;
        self.synchronize()?;
        Ok(f64::from(ms) * 1e-3)
    }

    /// Indices on this runtime as resident [`Indices`].
    pub fn index_array(&self, len: usize, s: IndexStorage) -> Indices {
        backend::indices(len, s)
    }

    /// Copies resident indices back.
    ///
    /// # Errors
    /// [`Error::WrongPlace`]; never-assigned indices; driver errors.
    pub fn download_index_array(&self, here: Here, i: &Indices) -> Result<Array1<usize>> {
        let s: &IndexStorage = here.indices("download", "indices", i)?;
        Ok(Array1::from(self.download_indices(s, i.len())?))
    }

    /// Copies a host array into a resident matrix of the same shape.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`], [`Error::WrongPlace`]; as [`Gpu::upload_into`].
    pub fn upload_into_matrix<T: CudaElement>(
        &self,
        here: Here,
        a: ArrayView2<T>,
        m: &mut Matrix<T>,
    ) -> Result<()> {
        check::transfer_shape("upload", a.dim(), m.dim())?;
        self.upload_into(a, here.matrix_mut("upload", "the destination", m)?)
    }

    /// Copies a resident matrix into a host array of the same shape.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`], [`Error::WrongPlace`]; as [`Gpu::download_into`].
    pub fn download_into_matrix<T: CudaElement>(
        &self,
        here: Here,
        m: &Matrix<T>,
        out: ArrayViewMut2<T>,
    ) -> Result<()> {
        check::transfer_shape("download", out.dim(), m.dim())?;
        self.download_into(here.matrix("download", "the matrix", m)?, out)
    }
}

/// Implements [`ndgpu_core::Device`] and [`ndgpu_core::Memory`] for a CUDA backend
/// type with a `fn gpu(&self) -> &Arc<Gpu>` and a `fn here(&self) -> Here`: the memory
/// side is the same for every backend on the runtime.
#[macro_export]
macro_rules! impl_device_memory {
    ($backend:ty) => {
        impl $crate::core::Device for $backend {
            fn name(&self) -> &'static str {
                self.here().backend
            }
            fn arch(&self) -> Option<&str> {
                Some(self.gpu().arch())
            }
            fn place(&self) -> $crate::core::Place {
                self.gpu().place()
            }
            fn unlabeled(&self, n: usize) -> $crate::core::Result<$crate::core::Indices> {
                let s = self.gpu().unlabeled(n)?;
                Ok(self.gpu().index_array(n, s))
            }
            fn download_indices(
                &self,
                i: &$crate::core::Indices,
            ) -> $crate::core::Result<$crate::ndarray::Array1<usize>> {
                self.gpu().download_index_array(self.here(), i)
            }
            fn synchronize(&self) -> $crate::core::Result<()> {
                self.gpu().synchronize()
            }
            fn time(
                &self,
                f: &mut dyn FnMut() -> $crate::core::Result<()>,
            ) -> $crate::core::Result<f64> {
                self.gpu().time(f)
            }
        }

        impl<T: $crate::CudaElement> $crate::core::Memory<T> for $backend {
            fn upload_into(
                &self,
                a: $crate::ndarray::ArrayView2<T>,
                m: &mut $crate::core::Matrix<T>,
            ) -> $crate::core::Result<()> {
                self.gpu().upload_into_matrix(self.here(), a, m)
            }
            fn download_into(
                &self,
                m: &$crate::core::Matrix<T>,
                out: $crate::ndarray::ArrayViewMut2<T>,
            ) -> $crate::core::Result<()> {
                self.gpu().download_into_matrix(self.here(), m, out)
            }
            fn host_array(
                &self,
                rows: usize,
                cols: usize,
            ) -> $crate::core::Result<$crate::core::HostArray<T>> {
                self.gpu().host_array(rows, cols)
            }
            fn alloc(
                &self,
                rows: usize,
                cols: usize,
            ) -> $crate::core::Result<$crate::core::Matrix<T>> {
                let m = self.gpu().alloc_matrix("alloc", rows, cols)?;
                Ok(self.gpu().matrix(m))
            }
            fn zeros(
                &self,
                rows: usize,
                cols: usize,
            ) -> $crate::core::Result<$crate::core::Matrix<T>> {
                let m = self.gpu().zeros_matrix(rows, cols)?;
                Ok(self.gpu().matrix(m))
            }
            fn copy_into(
                &self,
                src: &$crate::core::Matrix<T>,
                dst: &mut $crate::core::Matrix<T>,
            ) -> $crate::core::Result<()> {
                let gpu = self.gpu();
                let src = gpu.dm(self.here(), "copy", "the source", src)?;
                let dst = gpu.dm_mut(self.here(), "copy", "the destination", dst)?;
                gpu.copy_matrix(src, dst)
            }
        }
    };
}
