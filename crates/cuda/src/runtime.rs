//! The CUDA runtime shared by the hand-written and the vendor backends: one device
//! context and stream, lazily compiled and cached kernel modules, device-resident
//! matrices, and CUDA errors turned into [`ndgpu_core::Error`] values.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, DriverError,
    ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;
use ndarray::{Array2, ArrayView2};
use ndgpu_core::{Element, Error, Result};

use crate::kernels::{self, KernelFile};

/// An element type with device kernels: `f32` (suffix `f32`) or `f64` (suffix `f64`).
pub trait CudaElement: Element + DeviceRepr + ValidAsZeroBits + Unpin {
    /// Kernel name suffix: kernels are named `{op}_{technique}_{suffix}`.
    const SUFFIX: &'static str;
}
impl CudaElement for f32 {
    const SUFFIX: &'static str = "f32";
}
impl CudaElement for f64 {
    const SUFFIX: &'static str = "f64";
}

/// Why no CUDA device can be used here, or `Ok` if one can. Never panics: the
/// libraries are probed before any of their functions is called.
///
/// # Errors
/// A human-readable reason.
pub fn probe() -> std::result::Result<(), String> {
    // SAFETY: these only try to dlopen the libraries.
    if !unsafe { sys::is_culib_present() } {
        return Err("the CUDA driver library (libcuda.so) is not installed".into());
    }
    if !kernels::nvrtc_present() {
        return Err("NVRTC (libnvrtc.so) is not installed".into());
    }
    match CudaContext::device_count() {
        Ok(0) => Err("the CUDA driver found no device".into()),
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "the CUDA driver could not list devices: {}",
            describe(&e)
        )),
    }
}

/// The name and description of a driver error code.
pub fn describe(e: &DriverError) -> String {
    let name = e
        .error_name()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}: {text}")
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Driver(String);

/// Wraps a driver error as an ndgpu error.
pub(crate) fn driver(context: impl Into<String>, e: DriverError) -> Error {
    Error::backend("cuda", context, Driver(describe(&e)))
}

/// One CUDA device as used by ndgpu: a context, one stream, cached kernels.
///
/// All work is queued on the one stream, in order, so results are ready when they are
/// downloaded. `Gpu` is `Send + Sync`: calls from several threads are serialised by the
/// stream.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: String,
    name: String,
    modules: Mutex<HashMap<KernelFile, Arc<CudaModule>>>,
    functions: Mutex<HashMap<String, CudaFunction>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("name", &self.name)
            .field("arch", &self.arch)
            .finish()
    }
}

impl Gpu {
    /// Opens device `ordinal` after probing the libraries.
    ///
    /// # Errors
    /// [`Error::Unavailable`] with the reason when there is no usable device.
    pub fn new(ordinal: usize) -> Result<Arc<Gpu>> {
        probe().map_err(|reason| Error::Unavailable {
            backend: "cuda".into(),
            reason,
        })?;
        let unavailable = |e: DriverError| Error::Unavailable {
            backend: "cuda".into(),
            reason: format!("device {ordinal}: {}", describe(&e)),
        };
        let ctx = CudaContext::new(ordinal).map_err(unavailable)?;
        // One stream only: cudarc's per-buffer event tracking is not needed.
        // SAFETY: every buffer of this Gpu is used on its single stream.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let (major, minor) = ctx.compute_capability().map_err(unavailable)?;
        let name = ctx.name().map_err(unavailable)?;
        Ok(Arc::new(Gpu {
            ctx,
            stream,
            arch: format!("sm_{major}{minor}"),
            name,
            modules: Mutex::default(),
            functions: Mutex::default(),
        }))
    }

    /// The device's name (e.g. "NVIDIA H200").
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The architecture the kernels are compiled for (e.g. "sm_90").
    pub fn arch(&self) -> &str {
        &self.arch
    }
    /// The stream all work is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
    /// Number of multiprocessors.
    pub fn sm_count(&self) -> Result<usize> {
        self.ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map(|v| v as usize)
            .map_err(|e| driver("reading the multiprocessor count", e))
    }
    /// `(free, total)` device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx
            .mem_get_info()
            .map_err(|e| driver("reading free memory", e))
    }
    /// Waits for all queued work and reports any error it raised.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| driver("synchronizing", e))
    }

    /// The kernel `name` of `file`, compiling and loading the file on first use.
    ///
    /// # Errors
    /// NVRTC's log if the file does not compile; a driver error if the module or the
    /// function cannot be loaded.
    pub fn function(&self, file: KernelFile, name: &str) -> Result<CudaFunction> {
        if let Some(f) = self
            .functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            return Ok(f.clone());
        }
        let module = self.module(file)?;
        let f = module.load_function(name).map_err(|e| {
            driver(
                format!("loading kernel {name} from {}", file.file_name()),
                e,
            )
        })?;
        self.functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), f.clone());
        Ok(f)
    }

    fn module(&self, file: KernelFile) -> Result<Arc<CudaModule>> {
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = modules.get(&file) {
            return Ok(m.clone());
        }
        let compiled = kernels::compile_cached(file, &self.arch)
            .map_err(|e| Error::backend("cuda", format!("compiling {}", file.file_name()), e))?;
        let m = self
            .ctx
            .load_module(Ptx::from_binary(compiled.cubin.clone()))
            .map_err(|e| driver(format!("loading module {}", file.file_name()), e))?;
        modules.insert(file, m.clone());
        Ok(m)
    }

    /// Allocates `len` uninitialised elements (at least one, so that empty matrices
    /// still have a valid pointer).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] naming the bytes asked and free; the device stays usable.
    pub fn alloc<T: CudaElement>(&self, op: &'static str, len: usize) -> Result<CudaSlice<T>> {
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
        match unsafe { self.stream.alloc::<T>(len) } {
            Ok(s) => Ok(s),
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY => {
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
        })
    }

    /// Copies a matrix of any layout to the device, row-major.
    ///
    /// # Errors
    /// As [`Gpu::alloc`]; driver errors.
    pub fn upload<T: CudaElement>(&self, a: ArrayView2<T>) -> Result<DeviceMatrix<T>> {
        let (rows, cols) = a.dim();
        let mut m = self.alloc_matrix("upload", rows, cols)?;
        if rows * cols > 0 {
            let host = a.as_standard_layout();
            let slice = host.as_slice().expect("standard layout is contiguous");
            self.stream
                .memcpy_htod(slice, &mut m.data.slice_mut(0..rows * cols))
                .map_err(|e| driver("copying to the device", e))?;
        }
        Ok(m)
    }

    /// Copies a slice to the device.
    ///
    /// # Errors
    /// As [`Gpu::alloc`]; driver errors.
    pub fn upload_slice<T: CudaElement>(
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
    pub fn download_slice<T: CudaElement>(&self, d: &CudaSlice<T>, len: usize) -> Result<Vec<T>> {
        let mut host = ndgpu_core::host::filled_vec("download", len, T::zero())?;
        if len > 0 {
            self.stream
                .memcpy_dtoh(&d.slice(0..len), host.as_mut_slice())
                .map_err(|e| driver("copying from the device", e))?;
        }
        self.synchronize()?;
        Ok(host)
    }

    /// Copies a device matrix back to the host.
    ///
    /// # Errors
    /// Driver errors, including those of earlier kernels on the stream.
    pub fn download<T: CudaElement>(&self, m: &DeviceMatrix<T>) -> Result<Array2<T>> {
        let v = self.download_slice(&m.data, m.len())?;
        Ok(Array2::from_shape_vec((m.rows, m.cols), v).expect("length matches shape"))
    }
}

/// A row-major matrix resident on the device. Chains of operations on these stay on
/// the GPU; only [`Gpu::upload`] and [`Gpu::download`] cross the bus.
#[derive(Debug)]
pub struct DeviceMatrix<T> {
    /// The elements, row-major (`len()` of them are meaningful; the buffer holds at
    /// least one element so that empty matrices have a valid pointer).
    pub data: CudaSlice<T>,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
}

impl<T> DeviceMatrix<T> {
    /// `(rows, cols)`.
    pub fn dim(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Blocks needed to cover `n` with blocks of `per_block`, at least one.
pub fn blocks(n: usize, per_block: usize) -> u32 {
    n.div_ceil(per_block).max(1) as u32
}

/// Converts a dimension to the `int` the kernels take.
///
/// # Errors
/// [`Error::InvalidArgument`] above `i32::MAX`.
pub fn dim_i32(op: &'static str, n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| {
        Error::invalid(
            op,
            format!("dimension {n} exceeds the kernels' 32-bit index range"),
        )
    })
}
