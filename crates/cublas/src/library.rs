//! Finding the vendor libraries, their versions, and the cuBLAS / cuSOLVER handles.
//!
//! cudarc loads libcublas and libcusolver on first use and panics if a library or one
//! of its symbols is missing; its name candidates also accept older major versions.
//! So before any routine is called, [`probe`] checks that both libraries load and that
//! every symbol this crate calls is there: a missing or too old library becomes
//! [`ndgpu_core::Error::Unavailable`], never a panic.

use std::sync::Arc;

use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as solver;
use cudarc::driver::sys::CUstream;
use cudarc::driver::CudaContext;
use ndgpu_core::Result;
use ndgpu_cuda_runtime::Gpu;

use crate::error::{self, unavailable};

/// Every cuBLAS symbol this crate calls (cudarc's dynamic loader panics on a missing one).
const CUBLAS_SYMBOLS: &[&str] = &[
    "cublasCreate_v2",
    "cublasDestroy_v2",
    "cublasSetStream_v2",
    "cublasGetMathMode",
    "cublasSetMathMode",
    "cublasGetProperty",
    "cublasGetStatusName",
    "cublasGetStatusString",
    "cublasSgemm_v2_64",
    "cublasDgemm_v2_64",
    "cublasSgemmStridedBatched_64",
    "cublasDgemmStridedBatched_64",
    "cublasSgeam_64",
    "cublasDgeam_64",
    "cublasSsyrk_v2_64",
    "cublasDsyrk_v2_64",
    "cublasStrsm_v2_64",
    "cublasDtrsm_v2_64",
    "cublasSgemv_v2_64",
    "cublasDgemv_v2_64",
    "cublasSdot_v2_64",
    "cublasDdot_v2_64",
    "cublasScopy_v2_64",
    "cublasDcopy_v2_64",
    "cublasStrttp",
    "cublasDtrttp",
    "cublasStpttr",
    "cublasDtpttr",
];

/// Every cuSOLVER symbol this crate calls.
const CUSOLVER_SYMBOLS: &[&str] = &[
    "cusolverDnCreate",
    "cusolverDnDestroy",
    "cusolverDnSetStream",
    "cusolverGetProperty",
    "cusolverDnSpotrf_bufferSize",
    "cusolverDnDpotrf_bufferSize",
    "cusolverDnSpotrf",
    "cusolverDnDpotrf",
    "cusolverDnSpotrs",
    "cusolverDnDpotrs",
    "cusolverDnCreateParams",
    "cusolverDnDestroyParams",
    "cusolverDnXpotrf_bufferSize",
    "cusolverDnXpotrf",
    "cusolverDnXgetrf_bufferSize",
    "cusolverDnXgetrf",
    "cusolverDnXgeqrf_bufferSize",
    "cusolverDnXgeqrf",
    "cusolverDnSormqr_bufferSize",
    "cusolverDnDormqr_bufferSize",
    "cusolverDnSormqr",
    "cusolverDnDormqr",
];

/// Why cuBLAS or cuSOLVER cannot be used here, or `Ok`. Needs no GPU.
///
/// # Errors
/// A human-readable reason.
pub fn probe_libraries() -> std::result::Result<(), String> {
    // SAFETY: `is_culib_present` only tries to dlopen; `culib` is called only once
    // that succeeded (it panics otherwise), and looking a symbol up calls nothing.
    unsafe {
        if !blas::is_culib_present() {
            return Err("the cuBLAS library (libcublas.so) is not installed".into());
        }
        if !solver::is_culib_present() {
            return Err("the cuSOLVER library (libcusolver.so) is not installed".into());
        }
        let lib = blas::culib();
        for name in CUBLAS_SYMBOLS {
            if lib.get::<unsafe extern "C" fn()>(name.as_bytes()).is_err() {
                return Err(format!(
                    "the cuBLAS library found lacks {name} (CUDA 12 or newer is needed)"
                ));
            }
        }
        let lib = solver::culib();
        for name in CUSOLVER_SYMBOLS {
            if lib.get::<unsafe extern "C" fn()>(name.as_bytes()).is_err() {
                return Err(format!(
                    "the cuSOLVER library found lacks {name} (CUDA 12 or newer is needed)"
                ));
            }
        }
    }
    Ok(())
}

/// The cuBLAS and cuSOLVER versions found, as `major.minor.patch` (for `ndgpu info`).
/// Needs the libraries, not a GPU.
///
/// # Errors
/// [`ndgpu_core::Error::Unavailable`] when a library is missing or too old.
pub fn versions() -> Result<(String, String)> {
    use blas::libraryPropertyType as B;
    use solver::libraryPropertyType as S;
    probe_libraries().map_err(unavailable)?;
    let cublas = version(
        [B::MAJOR_VERSION, B::MINOR_VERSION, B::PATCH_LEVEL],
        |p, v| {
            // SAFETY: the library is loaded (probed), `v` is a valid out-pointer, and the
            // property getter needs no handle.
            let status = unsafe { blas::cublasGetProperty(p, v) };
            error::cublas(status, "reading the cuBLAS version")
        },
    )?;
    let cusolver = version(
        [S::MAJOR_VERSION, S::MINOR_VERSION, S::PATCH_LEVEL],
        |p, v| {
            // SAFETY: as for cuBLAS.
            error::cusolver(
                unsafe { solver::cusolverGetProperty(p, v) },
                "reading the cuSOLVER version",
            )
        },
    )?;
    Ok((cublas, cusolver))
}

/// `major.minor.patch` from a library's three version properties and its getter.
fn version<P: Copy>(parts: [P; 3], get: impl Fn(P, &mut i32) -> Result<()>) -> Result<String> {
    let mut found = Vec::new();
    for p in parts {
        let mut v = 0;
        get(p, &mut v)?;
        found.push(v.to_string());
    }
    Ok(found.join("."))
}

/// A library whose handles [`Handle`] keeps: how one is created, pointed at a stream
/// and destroyed.
pub(crate) trait Library {
    /// The library's handle type.
    type Raw: Copy;
    /// What creating a handle is called, for errors.
    const CREATE: &'static str;
    /// Creates a handle, or says the status the library gave.
    ///
    /// # Safety
    /// The library is loaded (probed) and a context is current.
    unsafe fn create() -> std::result::Result<Self::Raw, String>;
    /// Sends the handle's work to `stream`.
    ///
    /// # Safety
    /// A live handle, and a stream of the context it was created in.
    unsafe fn set_stream(raw: Self::Raw, stream: CUstream) -> Result<()>;
    /// Destroys the handle.
    ///
    /// # Safety
    /// A live handle, destroyed once, with its context current.
    unsafe fn destroy(raw: Self::Raw);
}

/// cuBLAS.
pub(crate) struct Blas;
/// cuSOLVER's dense API.
pub(crate) struct Solver;

/// Implements [`Library`] for each row: the type, its name in errors, then the
/// library's handle type, success status and error wrapper, and its create, set-stream
/// and destroy functions.
macro_rules! libraries {
    ($($lib:ty, $name:literal: $raw:ty, $ok:expr, $check:path,
       $create:path, $set_stream:path, $destroy:path;)+) => {$(
        impl Library for $lib {
            type Raw = $raw;
            const CREATE: &'static str = concat!("creating a ", $name, " handle");
            unsafe fn create() -> std::result::Result<Self::Raw, String> {
                let mut raw = std::ptr::null_mut();
                match $create(&mut raw) {
                    s if s == $ok => Ok(raw),
                    status => Err(format!("{status:?}")),
                }
            }
            unsafe fn set_stream(raw: Self::Raw, stream: CUstream) -> Result<()> {
                $check($set_stream(raw, stream as _), concat!("setting the ", $name, " stream"))
            }
            unsafe fn destroy(raw: Self::Raw) {
                let _ = $destroy(raw);
            }
        }
    )+};
}

libraries! {
    Blas, "cuBLAS": blas::cublasHandle_t,
        blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS, error::cublas,
        blas::cublasCreate_v2, blas::cublasSetStream_v2, blas::cublasDestroy_v2;
    Solver, "cuSOLVER": solver::cusolverDnHandle_t,
        solver::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS, error::cusolver,
        solver::cusolverDnCreate, solver::cusolverDnSetStream, solver::cusolverDnDestroy;
}

/// A cuSOLVER object, `$name(raw)`, made by `$create` with default settings and
/// destroyed by `$destroy` on drop.
macro_rules! solver_object {
    ($(#[$doc:meta])* $name:ident($raw:ty), $create:path, $destroy:path, $what:literal) => {
        $(#[$doc])*
        pub(crate) struct $name(pub(crate) $raw);

        impl $name {
            /// A new object.
            pub(crate) fn new() -> Result<$name> {
                let mut p = std::ptr::null_mut();
                // SAFETY: the library is loaded (probed); a valid out-pointer.
                error::cusolver(unsafe { $create(&mut p) }, $what)?;
                Ok($name(p))
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: made by `new`, destroyed once.
                let _ = unsafe { $destroy(self.0) };
            }
        }
    };
}

solver_object!(
    /// cuSOLVER's parameter object of the 64-bit (`X`) API, default settings (algorithm
    /// 0, as PyTorch leaves it).
    Params(solver::cusolverDnParams_t),
    solver::cusolverDnCreateParams,
    solver::cusolverDnDestroyParams,
    "creating cuSOLVER parameters"
);

solver_object!(
    /// cuSOLVER's parameter object of `gesvdj`, default settings (tolerance: machine ε,
    /// 100 sweeps, values sorted descending, as PyTorch leaves them). It must live until
    /// the stream has passed the call: cuSOLVER records the residual and the sweeps in
    /// it.
    GesvdjParams(solver::gesvdjInfo_t),
    solver::cusolverDnCreateGesvdjInfo,
    solver::cusolverDnDestroyGesvdjInfo,
    "creating gesvdj parameters"
);

/// A library handle bound to the [`Gpu`]'s context and stream.
pub(crate) struct Handle<L: Library> {
    pub(crate) raw: L::Raw,
    ctx: Arc<CudaContext>,
}

/// A cuBLAS handle.
pub(crate) type BlasHandle = Handle<Blas>;
/// A cuSOLVER dense handle.
pub(crate) type SolverHandle = Handle<Solver>;

// SAFETY: a cuBLAS or cuSOLVER handle may be used from any thread once its context is
// current there (every user binds it first); the backend serialises its use with a Mutex.
unsafe impl<L: Library> Send for Handle<L> {}

impl<L: Library> Handle<L> {
    /// Creates a handle whose work goes to the Gpu's one stream.
    pub(crate) fn new(gpu: &Gpu) -> Result<Self> {
        let ctx = gpu.context().clone();
        ctx.bind_to_thread()
            .map_err(|e| error::driver("binding the context", e))?;
        // SAFETY: the library is loaded (probed) and the context is current.
        // A failure is usually a driver too old for the library: the machine cannot run it.
        let raw = unsafe { L::create() }
            .map_err(|status| unavailable(format!("{} failed: {status}", L::CREATE)))?;
        let handle = Handle { raw, ctx };
        // SAFETY: a live handle and the stream of the same context.
        unsafe { L::set_stream(raw, gpu.stream().cu_stream()) }?;
        Ok(handle)
    }
}

impl<L: Library> Drop for Handle<L> {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; a failed destroy only leaks the handle.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: the handle is live and destroyed once; its context is alive (held).
        unsafe { L::destroy(self.raw) };
    }
}
