//! Kernel sources (`kernels/*.cu`, embedded at build time) and their NVRTC compilation.
//!
//! Each op family is one `.cu` file; all include `common.cuh`, and the GEMM and gram
//! files `tiles.cuh`, which are handed to NVRTC as in-memory headers. A file is compiled
//! on first use, once per process and architecture ([`compile_cached`]); its cubin is kept
//! in memory and in the on-disk cache ([`crate::cache`]), which later processes load
//! instead of compiling.

use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::sync::{Mutex, OnceLock};

use cudarc::nvrtc::sys;

use crate::cache::{DiskCache, Key};

/// The shared headers, by the names the kernel files include them under: `common.cuh`
/// (every file), `tiles.cuh` (the register-blocked GEMM machinery of matmul and gram) and
/// `mma.cuh` (the tensor-core GEMM of matmul), `kmeans.cuh` (what the two k-means
/// assignment files share) and `reduce_axis.cuh` (the per-axis reductions of reduce.cu).
pub const HEADERS: [(&str, &str); 5] = [
    ("common.cuh", include_str!("../../../kernels/common.cuh")),
    ("tiles.cuh", include_str!("../../../kernels/tiles.cuh")),
    ("mma.cuh", include_str!("../../../kernels/mma.cuh")),
    ("kmeans.cuh", include_str!("../../../kernels/kmeans.cuh")),
    (
        "reduce_axis.cuh",
        include_str!("../../../kernels/reduce_axis.cuh"),
    ),
];

/// One kernel source file under `kernels/`, embedded at build time.
#[derive(Debug, Clone, Copy)]
pub struct KernelFile {
    name: &'static str,
    source: &'static str,
    /// Uses instructions of one architecture only (Hopper's wgmma, TMA and setmaxnreg):
    /// compiled for `sm_90a` on sm_90 devices (see [`KernelFile::target`]).
    arch_specific: bool,
}

/// The kernel file `kernels/$name`.
macro_rules! kernel_file {
    ($name:literal) => {
        kernel_file!($name, false)
    };
    ($name:literal, $arch_specific:literal) => {
        KernelFile {
            name: $name,
            source: include_str!(concat!("../../../kernels/", $name)),
            arch_specific: $arch_specific,
        }
    };
}

impl KernelFile {
    /// The GEMM ladder.
    pub const MATMUL: KernelFile = kernel_file!("matmul.cu");
    /// The M·Mᵀ ladder.
    pub const GRAM: KernelFile = kernel_file!("gram.cu");
    /// The transpose ladder.
    pub const TRANSPOSE: KernelFile = kernel_file!("transpose.cu");
    /// Reductions and dot.
    pub const REDUCE: KernelFile = kernel_file!("reduce.cu");
    /// Cholesky and triangular solves.
    pub const CHOLESKY: KernelFile = kernel_file!("cholesky.cu");
    /// k-means steps.
    pub const KMEANS: KernelFile = kernel_file!("kmeans.cu");
    /// The tensor-core k-means assignment.
    pub const KMEANS_TC: KernelFile = kernel_file!("kmeans_tc.cu");
    /// k-means++ and k-means‖ seeding.
    pub const SEED: KernelFile = kernel_file!("seed.cu");
    /// The Hopper GEMM rungs (wgmma, TMA): compiled for sm_90a.
    pub const WGMMA: KernelFile = kernel_file!("wgmma.cu", true);
    /// What both backends' factorizations need around the factor: zeroing a triangle,
    /// the factorization's status record.
    pub const TRIANGLE: KernelFile = kernel_file!("triangle.cu");
    /// LU with partial pivoting, and the naive triangular solve.
    pub const LU: KernelFile = kernel_file!("lu.cu");
    /// Householder QR and TSQR.
    pub const QR: KernelFile = kernel_file!("qr.cu");

    /// Every kernel file.
    pub const ALL: [KernelFile; 12] = [
        KernelFile::MATMUL,
        KernelFile::GRAM,
        KernelFile::TRANSPOSE,
        KernelFile::REDUCE,
        KernelFile::CHOLESKY,
        KernelFile::KMEANS,
        KernelFile::KMEANS_TC,
        KernelFile::SEED,
        KernelFile::WGMMA,
        KernelFile::TRIANGLE,
        KernelFile::LU,
        KernelFile::QR,
    ];

    /// The file name under `kernels/`.
    pub fn file_name(self) -> &'static str {
        self.name
    }

    /// The source text.
    pub fn source(self) -> &'static str {
        self.source
    }

    /// The architecture to compile the file for on a device of architecture `arch`:
    /// `arch` itself, or its architecture-specific form (`sm_90a`) for a file that uses
    /// Hopper-only instructions on an sm_90 device. (Elsewhere such a file's kernels
    /// compile to traps, and the backend does not launch them.)
    pub fn target(self, arch: &str) -> String {
        if self.arch_specific && arch == "sm_90" {
            "sm_90a".into()
        } else {
            arch.into()
        }
    }
}

/// Files are told apart by name.
impl PartialEq for KernelFile {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for KernelFile {}

impl std::hash::Hash for KernelFile {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name.hash(h);
    }
}

/// NVRTC failed; carries the full compile log.
#[derive(Debug, thiserror::Error)]
#[error("NVRTC could not compile {file} for {arch} ({code:?}):\n{log}")]
pub struct CompileError {
    /// The file.
    pub file: &'static str,
    /// The target architecture.
    pub arch: String,
    /// NVRTC's status.
    pub code: sys::nvrtcResult,
    /// NVRTC's log.
    pub log: String,
}

pub use crate::cache::Compiled;

/// Whether libnvrtc can be loaded (no GPU is needed for that).
pub fn nvrtc_present() -> bool {
    // SAFETY: probing only tries to dlopen the library.
    unsafe { sys::is_culib_present() }
}

/// NVRTC's version, `(major, minor)`.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    if !nvrtc_present() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    (r == sys::nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
}

/// The options every kernel file is compiled with.
pub fn options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        "--ptxas-options=-v".into(),
        "-lineinfo".into(),
    ]
}

fn check(
    file: &'static str,
    arch: &str,
    prog: sys::nvrtcProgram,
    r: sys::nvrtcResult,
) -> Result<(), CompileError> {
    if r == sys::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    Err(CompileError {
        file,
        arch: arch.into(),
        code: r,
        log: log_of(prog),
    })
}

fn log_of(prog: sys::nvrtcProgram) -> String {
    let mut size = 0usize;
    // SAFETY: prog is a live program; the buffer has the size NVRTC reported.
    unsafe {
        if sys::nvrtcGetProgramLogSize(prog, &mut size) != sys::nvrtcResult::NVRTC_SUCCESS
            || size == 0
        {
            return String::new();
        }
        let mut buf = vec![0 as c_char; size];
        if sys::nvrtcGetProgramLog(prog, buf.as_mut_ptr()) != sys::nvrtcResult::NVRTC_SUCCESS {
            return String::new();
        }
        CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    }
}

/// Compiles one kernel file for `arch` (e.g. `sm_90`), without caching.
///
/// # Errors
/// [`CompileError`] with NVRTC's log.
pub fn compile(file: KernelFile, arch: &str) -> Result<Compiled, CompileError> {
    let name = file.file_name();
    let src = CString::new(file.source()).expect("kernel sources hold no NUL");
    let cname = CString::new(name).expect("no NUL");
    let header_text: Vec<CString> = HEADERS
        .iter()
        .map(|(_, text)| CString::new(*text).expect("no NUL"))
        .collect();
    let header_names: Vec<CString> = HEADERS
        .iter()
        .map(|(name, _)| CString::new(*name).expect("no NUL"))
        .collect();
    let headers: Vec<*const c_char> = header_text.iter().map(|h| h.as_ptr()).collect();
    let include_names: Vec<*const c_char> = header_names.iter().map(|h| h.as_ptr()).collect();
    let opts: Vec<CString> = options(arch)
        .into_iter()
        .map(|o| CString::new(o).expect("no NUL"))
        .collect();
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: every pointer refers to a NUL-terminated string that outlives the calls;
    // prog is destroyed before returning.
    unsafe {
        let r = sys::nvrtcCreateProgram(
            &mut prog,
            src.as_ptr(),
            cname.as_ptr(),
            HEADERS.len() as i32,
            headers.as_ptr(),
            include_names.as_ptr(),
        );
        if r != sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(CompileError {
                file: name,
                arch: arch.into(),
                code: r,
                log: String::new(),
            });
        }
        let result = (|| {
            let r = sys::nvrtcCompileProgram(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr());
            check(name, arch, prog, r)?;
            let mut size = 0usize;
            check(name, arch, prog, sys::nvrtcGetCUBINSize(prog, &mut size))?;
            let mut cubin = vec![0u8; size];
            check(
                name,
                arch,
                prog,
                sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut c_char),
            )?;
            Ok(Compiled {
                cubin,
                log: log_of(prog),
            })
        })();
        sys::nvrtcDestroyProgram(&mut prog);
        result
    }
}

/// The on-disk cache key of `file` compiled for `arch` by NVRTC `nvrtc` (`(major,
/// minor)`): the file's name and source, every header's name and text, the compile
/// options (which name the architecture) and the version.
pub fn cache_key(file: KernelFile, arch: &str, nvrtc: (i32, i32)) -> Key {
    let options = options(arch);
    let version = [nvrtc.0.to_le_bytes(), nvrtc.1.to_le_bytes()].concat();
    let parts = [file.file_name(), file.source(), arch]
        .into_iter()
        .chain(HEADERS.iter().flat_map(|(name, text)| [*name, *text]))
        .chain(options.iter().map(String::as_str))
        .map(str::as_bytes)
        .chain([&version[..]]);
    Key::of(parts)
}

/// Compiles `file` for `arch`, or loads it from the on-disk cache `disk` when an entry
/// of the same key is there, and stores what it compiled there. An entry that cannot be
/// read or written only costs the compile.
///
/// # Errors
/// [`CompileError`].
pub fn compile_with(
    file: KernelFile,
    arch: &str,
    disk: Option<&DiskCache>,
) -> Result<Compiled, CompileError> {
    let Some((disk, version)) = disk.zip(nvrtc_version()) else {
        return compile(file, arch);
    };
    let key = cache_key(file, arch, version);
    let name = format!("{}-{arch}", file.file_name().trim_end_matches(".cu"));
    if let Ok(compiled) = disk.load(&name, &key) {
        return Ok(compiled);
    }
    let compiled = compile(file, arch)?;
    // An unwritable folder is not an error: the next process compiles again.
    let _ = disk.store(&name, &key, &compiled);
    Ok(compiled)
}

type Cache = Mutex<HashMap<(KernelFile, String), std::sync::Arc<Compiled>>>;

/// Compiles a file once per process and architecture, through the on-disk cache of the
/// environment's folder ([`DiskCache::from_env`], read once per process).
///
/// # Errors
/// [`CompileError`].
pub fn compile_cached(
    file: KernelFile,
    arch: &str,
) -> Result<std::sync::Arc<Compiled>, CompileError> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    static DISK: OnceLock<Option<DiskCache>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (file, arch.to_string());
    if let Some(c) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(c.clone());
    }
    // Compile outside the lock: two threads may race to compile, which is harmless.
    let disk = DISK.get_or_init(DiskCache::from_env);
    let compiled = std::sync::Arc::new(compile_with(file, arch, disk.as_ref())?);
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, compiled.clone());
    Ok(compiled)
}

/// One kernel's line of ptxas' report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelResources {
    /// The kernel's name.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes spilled to local memory (stores + loads).
    pub spill_bytes: u32,
    /// Stack frame bytes.
    pub stack_bytes: u32,
}

/// Parses ptxas' `-v` report in an NVRTC log into per-kernel resources.
pub fn parse_resources(log: &str) -> Vec<KernelResources> {
    let mut out: Vec<KernelResources> = Vec::new();
    let mut current: Option<KernelResources> = None;
    let num_before = |line: &str, key: &str| -> u32 {
        line.find(key)
            .and_then(|p| line[..p].split_whitespace().last())
            .and_then(|w| w.parse().ok())
            .unwrap_or(0)
    };
    for line in log.lines() {
        // ptxas names each kernel in "Compiling entry function 'k' for 'sm_90'" and again
        // in "Function properties for k"; some builds print only the second.
        let named = line
            .find("Compiling entry function '")
            .map(|p| {
                line[p + "Compiling entry function '".len()..]
                    .split('\'')
                    .next()
                    .unwrap_or("")
            })
            .or_else(|| {
                line.find("Function properties for ")
                    .map(|p| line[p + "Function properties for ".len()..].trim())
            });
        if let Some(name) = named {
            if current.as_ref().is_some_and(|k| k.name == name) {
                continue;
            }
            if let Some(k) = current.take() {
                out.push(k);
            }
            current = Some(KernelResources {
                name: name.to_string(),
                registers: 0,
                spill_bytes: 0,
                stack_bytes: 0,
            });
        } else if let Some(k) = current.as_mut() {
            if line.contains("stack frame") {
                k.stack_bytes = num_before(line, "bytes stack frame");
                k.spill_bytes =
                    num_before(line, "bytes spill stores") + num_before(line, "bytes spill loads");
            }
            if line.contains("registers") {
                k.registers = num_before(line, "registers");
            }
        }
    }
    if let Some(k) = current {
        out.push(k);
    }
    out
}
