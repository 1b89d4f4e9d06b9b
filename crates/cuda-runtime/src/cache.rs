//! The on-disk cache of compiled kernel files, so that a process finds the machine code
//! a previous one compiled instead of running NVRTC again (seconds per file).
//!
//! An entry is one file per kernel file, architecture and [`Key`]: a SHA-256 of
//! everything that decides the machine code (the source, every header, the compile
//! options, the target architecture and NVRTC's version). The folder is
//! `$NDGPU_CACHE_DIR`, else `$XDG_CACHE_HOME/ndgpu/kernels`, else
//! `~/.cache/ndgpu/kernels`; `NDGPU_CACHE_DIR=off` turns the cache off ([`folder`]).
//!
//! An entry is written to a temporary file in the same folder and renamed into place, so
//! a reader sees a whole file or none, and writers of the same key (threads, processes)
//! leave one of their identical files. Each file starts with a header (magic, format
//! version, key, lengths, a SHA-256 of the payload): a truncated, corrupt or foreign
//! file is ignored ([`decode`] says why), the file is compiled again and the entry
//! replaced. The cache never makes a compile fail: a folder that cannot be created or
//! written leaves the kernels compiled in memory only.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// The environment variable naming the cache folder; `off` turns the cache off.
pub const ENV: &str = "NDGPU_CACHE_DIR";

/// The first bytes of every entry.
const MAGIC: [u8; 8] = *b"NDGPUKRN";
/// The layout of an entry; a change of layout changes this (and every key).
const FORMAT: u32 = 1;
/// Magic, format, key, two lengths, checksum.
const HEADER: usize = 8 + 4 + 32 + 8 + 8 + 32;

/// A compiled kernel file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// Machine code for the architecture.
    pub cubin: Vec<u8>,
    /// NVRTC's log, with ptxas' resource report per kernel.
    pub log: String,
}

/// What identifies one compiled image: a SHA-256 of the parts that decide it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    /// The key of `parts`, each hashed with its length, so that moving bytes from one
    /// part to the next makes another key.
    pub fn of<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Key {
        let mut h = Sha256::new();
        h.update(MAGIC);
        h.update(FORMAT.to_le_bytes());
        for p in parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p);
        }
        Key(h.finalize().into())
    }

    /// The key in hexadecimal (64 digits).
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Why a cache file was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// Shorter than its header says (a write cut short).
    #[error("truncated")]
    Truncated,
    /// Not a cache entry.
    #[error("not a kernel cache file")]
    Magic,
    /// Written by another layout of the cache.
    #[error("another format version")]
    Format,
    /// The entry of another key.
    #[error("the entry of another key")]
    Key,
    /// The payload does not match its checksum.
    #[error("checksum mismatch")]
    Checksum,
}

/// The bytes of the entry of `compiled` under `key`.
pub fn encode(key: &Key, compiled: &Compiled) -> Vec<u8> {
    let log = compiled.log.as_bytes();
    let mut out = Vec::with_capacity(HEADER + compiled.cubin.len() + log.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&key.0);
    out.extend_from_slice(&(compiled.cubin.len() as u64).to_le_bytes());
    out.extend_from_slice(&(log.len() as u64).to_le_bytes());
    let sum: [u8; 32] = Sha256::new()
        .chain_update(&compiled.cubin)
        .chain_update(log)
        .finalize()
        .into();
    out.extend_from_slice(&sum);
    out.extend_from_slice(&compiled.cubin);
    out.extend_from_slice(log);
    out
}

/// The compiled file an entry holds, if it is whole and of `key`.
///
/// # Errors
/// [`Invalid`] saying what is wrong with it.
pub fn decode(key: &Key, bytes: &[u8]) -> Result<Compiled, Invalid> {
    if bytes.len() < HEADER {
        return Err(if bytes.starts_with(&MAGIC[..bytes.len().min(8)]) {
            Invalid::Truncated
        } else {
            Invalid::Magic
        });
    }
    let (header, payload) = bytes.split_at(HEADER);
    let u64_at = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
    if header[..8] != MAGIC {
        return Err(Invalid::Magic);
    }
    if header[8..12] != FORMAT.to_le_bytes() {
        return Err(Invalid::Format);
    }
    if header[12..44] != key.0 {
        return Err(Invalid::Key);
    }
    let (cubin_len, log_len) = (u64_at(44), u64_at(52));
    if cubin_len.checked_add(log_len) != Some(payload.len() as u64) {
        return Err(Invalid::Truncated);
    }
    if Sha256::digest(payload)[..] != header[60..92] {
        return Err(Invalid::Checksum);
    }
    let (cubin, log) = payload.split_at(cubin_len as usize);
    if cubin.is_empty() {
        return Err(Invalid::Checksum);
    }
    let log = String::from_utf8(log.to_vec()).map_err(|_| Invalid::Checksum)?;
    Ok(Compiled {
        cubin: cubin.to_vec(),
        log,
    })
}

/// The cache folder from the environment: `$NDGPU_CACHE_DIR` (`off`: none), else
/// `$XDG_CACHE_HOME/ndgpu/kernels`, else `$HOME/.cache/ndgpu/kernels`.
pub fn folder() -> Option<PathBuf> {
    folder_from(
        std::env::var_os(ENV),
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
    )
}

/// [`folder`] from given values of `NDGPU_CACHE_DIR`, `XDG_CACHE_HOME` and `HOME`. Empty
/// values count as unset, and a relative `XDG_CACHE_HOME` is ignored, as the XDG
/// specification asks.
pub fn folder_from(
    ndgpu: Option<OsString>,
    xdg: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set(ndgpu) {
        return (dir.as_os_str() != "off").then_some(dir);
    }
    if let Some(xdg) = set(xdg).filter(|p| p.is_absolute()) {
        return Some(xdg.join("ndgpu").join("kernels"));
    }
    set(home).map(|h| h.join(".cache").join("ndgpu").join("kernels"))
}

/// One cache folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// The cache in the folder the environment names ([`folder`]); `None` when off.
    pub fn from_env() -> Option<DiskCache> {
        folder().map(DiskCache::new)
    }

    /// The cache in `dir` (created on the first store).
    pub fn new(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of entry `key`; `name` (e.g. `matmul-sm_90`) only helps a reader of
    /// the folder.
    pub fn path(&self, name: &str, key: &Key) -> PathBuf {
        self.dir.join(format!("{name}-{}.cubin", key.hex()))
    }

    /// The entry of `key`, if there is a valid one.
    ///
    /// # Errors
    /// Why there is none: the file's read error, or [`Invalid`] wrapped as
    /// [`io::ErrorKind::InvalidData`].
    pub fn load(&self, name: &str, key: &Key) -> io::Result<Compiled> {
        let bytes = fs::read(self.path(name, key))?;
        decode(key, &bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Stores `compiled` as the entry of `key`, in place of any: written whole to a
    /// file of its own in the folder, then renamed over the entry's name.
    ///
    /// # Errors
    /// The folder cannot be created or written.
    pub fn store(&self, name: &str, key: &Key, compiled: &Compiled) -> io::Result<()> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        fs::create_dir_all(&self.dir)?;
        let path = self.path(name, key);
        let tmp = self.dir.join(format!(
            ".{name}-{}.{}.{}.tmp",
            key.hex(),
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&encode(key, compiled)))
            .and_then(|()| fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }
}
