//! One CUDA device as ndgpu uses it: a context, a compute stream and a copy stream,
//! lazily compiled and cached kernel modules, device memory, and CUDA errors turned
//! into [`ndgpu_core::Error`] values. Backends opened on the same device share one
//! [`Gpu`] ([`Gpu::shared`]), so they read each other's resident arrays.
//! Its memory methods are in `memory.rs`, the error helpers in `errors.rs`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;
use ndgpu_core::backend::Here;
use ndgpu_core::{Error, Place, Result};

use crate::errors::{describe, driver, probe};
use crate::kernels::{self, KernelFile};
use crate::pool::{keep_freed_memory, MemPool};

/// The pinned staging ring of one device, allocated on the first large transfer and
/// kept (see `transfer.rs`, which fills and drains it).
#[derive(Default)]
pub(crate) struct Staging {
    pub(crate) buf: Option<cudarc::driver::PinnedHostSlice<u8>>,
}

/// One CUDA device as used by ndgpu: a context, a compute stream, a copy stream,
/// cached kernels, pinned staging for transfers.
///
/// All work is queued on the compute stream, in order, so results are ready when they
/// are downloaded. Transfers of large arrays run on the copy stream, ordered against
/// the compute stream with events (see [`Gpu::upload_into`]). `Gpu` is `Send + Sync`: calls
/// from several threads are serialised by the streams.
pub struct Gpu {
    /// This runtime itself, for the resident arrays that keep it alive.
    me: Weak<Gpu>,
    ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    copy: Arc<CudaStream>,
    side: Arc<CudaStream>,
    ordinal: usize,
    id: u64,
    arch: String,
    name: String,
    modules: Mutex<HashMap<KernelFile, Arc<CudaModule>>>,
    functions: Mutex<HashMap<String, CudaFunction>>,
    pub(crate) staging: Mutex<Staging>,
    pub(crate) pool: MemPool,
    /// Pinned host memory for small read-backs, allocated on first use.
    pub(crate) mailbox: Mutex<Option<cudarc::driver::PinnedHostSlice<u8>>>,
    /// Kernels granted their dynamic shared memory ([`Gpu::grant_shared_memory`]).
    granted: Mutex<std::collections::HashSet<String>>,
    /// Device buffers that operations keep between calls ([`Gpu::take_scratch`]).
    scratch: Mutex<Vec<(&'static str, Scratch)>>,
    /// How many times the host waited for the compute stream ([`Gpu::host_waits`]).
    waits: std::sync::atomic::AtomicU64,
}

/// One kept set of scratch buffers, of whatever type its operation gave.
type Scratch = Box<dyn std::any::Any + Send>;

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("name", &self.name)
            .field("arch", &self.arch)
            .field("place", &self.place())
            .finish()
    }
}

/// The runtimes [`Gpu::shared`] hands out, one per device while any of it is alive.
static SHARED: Mutex<Vec<(usize, Weak<Gpu>)>> = Mutex::new(Vec::new());
/// The number of the next runtime.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Gpu {
    /// Gives the memory that freed arrays left in the device's pool back to the system
    /// (the pool keeps it for the next allocation otherwise; an allocation that finds
    /// the device full does this once itself before it fails). Waits for queued work.
    ///
    /// # Errors
    /// Driver errors.
    pub fn release_cached(&self) -> Result<()> {
        // Dropped outside the lock: freeing goes through the driver.
        let kept = std::mem::take(&mut *self.scratch.lock().unwrap_or_else(|e| e.into_inner()));
        drop(kept);
        self.synchronize()?;
        self.pool
            .trim()
            .map_err(|e| driver("releasing pooled memory", e))
    }

    /// The scratch buffers that an operation kept under `key` ([`Gpu::keep_scratch`]),
    /// if they are of type `S`; they are the caller's until it keeps them again, so two
    /// threads never share them (the second finds none and allocates its own).
    pub fn take_scratch<S: std::any::Any + Send>(&self, key: &'static str) -> Option<S> {
        let mut kept = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let i = kept.iter().position(|(k, s)| *k == key && s.is::<S>())?;
        let (_, s) = kept.swap_remove(i);
        drop(kept);
        s.downcast::<S>().ok().map(|s| *s)
    }

    /// Keeps an operation's scratch buffers for its next call, in place of any kept
    /// under `key`: its next call at the same shape then makes no allocation (each is a
    /// driver call on the host's path before the first kernel, while the device idles).
    /// They stay allocated until replaced, until [`Gpu::release_cached`] (which an
    /// allocation that finds the device full calls), or until the runtime is dropped.
    pub fn keep_scratch<S: std::any::Any + Send>(&self, key: &'static str, s: S) {
        let mut kept = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let old = kept
            .iter()
            .position(|(k, _)| *k == key)
            .map(|i| kept.swap_remove(i));
        kept.push((key, Box::new(s)));
        drop(kept);
        drop(old);
    }

    /// The runtime of device `ordinal` that every backend opened by name shares: the one
    /// already open if any backend or array still holds it, else a new one.
    ///
    /// # Errors
    /// As [`Gpu::new`].
    pub fn shared(ordinal: usize) -> Result<Arc<Gpu>> {
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        shared.retain(|(_, w)| w.strong_count() > 0);
        if let Some(gpu) = shared
            .iter()
            .find(|(o, _)| *o == ordinal)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(gpu);
        }
        let gpu = Gpu::new(ordinal)?;
        shared.push((ordinal, Arc::downgrade(&gpu)));
        Ok(gpu)
    }

    /// Opens device `ordinal` after probing the libraries, as a runtime of its own: its
    /// arrays are not those of backends on [`Gpu::shared`] (mixing them is
    /// [`Error::WrongPlace`]).
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
        // SAFETY: cudarc's per-buffer event tracking is off; ndgpu orders its streams
        // itself: every buffer is used on the compute stream, except by transfers on
        // the copy stream, which wait for the compute stream before they start and
        // which the compute stream waits for before it goes on (crate::transfer).
        unsafe { ctx.disable_event_tracking() };
        let pool = keep_freed_memory(ordinal).map_err(unavailable)?;
        let stream = ctx.default_stream();
        let copy = ctx.new_stream().map_err(unavailable)?;
        let side = ctx.new_stream().map_err(unavailable)?;
        let (major, minor) = ctx.compute_capability().map_err(unavailable)?;
        let name = ctx.name().map_err(unavailable)?;
        Ok(Arc::new_cyclic(|me| Gpu {
            me: me.clone(),
            ctx,
            stream,
            copy,
            side,
            ordinal,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            arch: format!("sm_{major}{minor}"),
            name,
            modules: Mutex::default(),
            functions: Mutex::default(),
            staging: Mutex::default(),
            pool,
            mailbox: Mutex::default(),
            granted: Mutex::default(),
            scratch: Mutex::default(),
            waits: Default::default(),
        }))
    }

    /// Where this runtime's arrays live.
    pub fn place(&self) -> Place {
        Place::Cuda {
            device: self.ordinal,
            runtime: self.id,
        }
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// This runtime as a shared handle (what its resident arrays hold, so that it lives
    /// as long as any of them).
    pub fn handle(&self) -> Arc<Gpu> {
        self.me
            .upgrade()
            .expect("a runtime borrowed through &self is alive")
    }

    /// The place check of the backend `backend` on this runtime.
    pub fn here(&self, backend: &'static str) -> Here {
        Here {
            backend,
            place: self.place(),
        }
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
    /// The stream large transfers run on.
    pub fn copy_stream(&self) -> &Arc<CudaStream> {
        &self.copy
    }
    /// A second compute stream, for work that overlaps the compute stream's inside one
    /// operation (the Cholesky look-ahead). An operation that queues work on it makes
    /// the compute stream wait for that work before it returns, so every other caller
    /// sees one stream.
    pub fn side_stream(&self) -> &Arc<CudaStream> {
        &self.side
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
    /// Lets kernel `f` (named `name`) take as much dynamic shared memory as the device
    /// allows a block beside its static shared memory, past the 48 KB any kernel may
    /// take: asked of the driver once per kernel (a driver call less on the host's path
    /// before each launch), and never lowered, so that launches of one kernel from
    /// several threads cannot undo each other's grant.
    ///
    /// # Errors
    /// Driver errors.
    pub fn grant_shared_memory(&self, f: &CudaFunction, name: &str) -> Result<()> {
        let mut granted = self.granted.lock().unwrap_or_else(|e| e.into_inner());
        if granted.contains(name) {
            return Ok(());
        }
        let fixed = f
            .get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
            .map_err(|e| driver(format!("{name}: reading its static shared memory"), e))?;
        let bytes = self.shared_memory_optin()? as i32 - fixed;
        f.set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes,
        )
        .map_err(|e| driver(format!("{name}: granting {bytes} B of shared memory"), e))?;
        granted.insert(name.to_string());
        Ok(())
    }

    /// The most shared memory one block may be granted (the opt-in limit), in bytes.
    pub fn shared_memory_optin(&self) -> Result<usize> {
        self.ctx
            .attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )
            .map(|v| v as usize)
            .map_err(|e| driver("reading the shared-memory limit", e))
    }
    /// `(free, total)` device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx
            .mem_get_info()
            .map_err(|e| driver("reading free memory", e))
    }
    /// Waits for all queued work and reports any error it raised.
    pub fn synchronize(&self) -> Result<()> {
        self.waits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.stream
            .synchronize()
            .map_err(|e| driver("synchronizing", e))
    }

    /// How many times the host has waited for this runtime's compute stream: every read
    /// of a result (a scalar, a status, a download) waits once. Tests count a chain's
    /// synchronisations with it.
    pub fn host_waits(&self) -> u64 {
        self.waits.load(std::sync::atomic::Ordering::Relaxed)
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
        let compiled = kernels::compile_cached(file, &file.target(&self.arch))
            .map_err(|e| Error::backend("cuda", format!("compiling {}", file.file_name()), e))?;
        let m = self
            .ctx
            .load_module(Ptx::from_binary(compiled.cubin.clone()))
            .map_err(|e| driver(format!("loading module {}", file.file_name()), e))?;
        modules.insert(file, m.clone());
        Ok(m)
    }
}
