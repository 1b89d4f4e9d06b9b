//! Resident arrays: data that stays where a backend computes (device memory for the GPU
//! backends, host memory for the CPU ones) between operations.
//!
//! A [`Matrix`] is an opaque handle: it knows its shape, its element type and its
//! [`Place`], and owns its storage. Only a backend computing in the same place can read
//! it; anything else gets [`Error::WrongPlace`](crate::Error::WrongPlace) naming both
//! places. Data crosses between the host and a device only through
//! [`Memory::upload`](crate::Memory::upload) and [`Memory::download`](crate::Memory::download).

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;

use crate::{DType, Element};

/// Where a resident array's storage lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// Host memory: every host backend reads it.
    Host,
    /// One CUDA device, through one runtime (context and stream). Backends opened on the
    /// same device share a runtime, so they read each other's arrays.
    Cuda {
        /// The device's ordinal.
        device: usize,
        /// The runtime's number, unique in the process.
        runtime: u64,
    },
    /// Several CUDA devices of one host, as one backend over them uses them: the arrays
    /// of one group of runtimes (`ndgpu-multi`).
    CudaGroup {
        /// Bit d is set for device d.
        devices: u64,
        /// The group's number, unique in the process.
        group: u64,
    },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Host => f.write_str("host memory"),
            Place::Cuda { device, runtime } => {
                write!(f, "CUDA device {device} (runtime {runtime})")
            }
            Place::CudaGroup { devices, group } => {
                let list: Vec<String> = (0..64)
                    .filter(|d| devices >> d & 1 == 1)
                    .map(|d: u32| d.to_string())
                    .collect();
                write!(f, "CUDA devices {} (group {group})", list.join(", "))
            }
        }
    }
}

/// What a backend keeps behind a resident array: its memory, in a layout the backend
/// chooses. Backend-author API (see [`crate::backend`]).
pub trait Storage: Any + Send + Sync + fmt::Debug {
    /// Where the memory is.
    fn place(&self) -> Place;
}

/// A row-major matrix resident where a backend computes.
///
/// Made by [`Memory::upload`](crate::Memory::upload), [`Memory::zeros`](crate::Memory::zeros),
/// [`Memory::alloc`](crate::Memory::alloc) and by the resident forms of the operations
/// (`*_dev`); read back by [`Memory::download`](crate::Memory::download). Dropping it
/// frees its memory, also after the backend that made it was dropped.
pub struct Matrix<T> {
    rows: usize,
    cols: usize,
    storage: Box<dyn Storage>,
    // fn() -> T: the matrix owns no T on the host, so it is Send and Sync for any T.
    _elem: PhantomData<fn() -> T>,
}

impl<T: Element> Matrix<T> {
    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// `(rows, cols)`.
    pub fn dim(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
    /// Number of elements (`rows · cols`; never overflows: the storage holds them).
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }
    /// Where it lives.
    pub fn place(&self) -> Place {
        self.storage.place()
    }
    /// Its element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }
}

impl<T> fmt::Debug for Matrix<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Matrix<{}> {}x{} in {}",
            std::any::type_name::<T>(),
            self.rows,
            self.cols,
            self.storage.place()
        )
    }
}

/// A resident vector of indices: k-means labels, per-axis argmin/argmax. Read back with
/// [`Device::download_indices`](crate::Device::download_indices).
pub struct Indices {
    len: usize,
    storage: Box<dyn Storage>,
}

impl Indices {
    /// Number of indices.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Where they live.
    pub fn place(&self) -> Place {
        self.storage.place()
    }
}

impl fmt::Debug for Indices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Indices[{}] in {}", self.len, self.place())
    }
}

/// The lower Cholesky factor `L` of a symmetric positive-definite matrix (`A = L·Lᵀ`):
/// lower triangular, the strict upper triangle zero, a finite non-zero diagonal. Only
/// [`Factorize`](crate::Factorize) makes one, so a solve cannot be handed an arbitrary
/// matrix as its factor.
pub struct CholeskyFactor<T> {
    l: Matrix<T>,
}

impl<T: Element> CholeskyFactor<T> {
    /// The factor as a matrix.
    pub fn l(&self) -> &Matrix<T> {
        &self.l
    }
    /// The factor as a matrix, taken out.
    pub fn into_l(self) -> Matrix<T> {
        self.l
    }
    /// The order n of the n×n factor.
    pub fn order(&self) -> usize {
        self.l.rows
    }
    /// Where it lives.
    pub fn place(&self) -> Place {
        self.l.place()
    }
}

impl<T> fmt::Debug for CholeskyFactor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CholeskyFactor({:?})", self.l)
    }
}

/// Host storage: a row-major `Vec`, shared by every host backend.
pub struct HostStorage<T> {
    /// The elements, row-major.
    pub data: Vec<T>,
}

impl<T> fmt::Debug for HostStorage<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HostStorage[{}]", self.data.len())
    }
}

impl<T: Send + Sync + 'static> Storage for HostStorage<T> {
    fn place(&self) -> Place {
        Place::Host
    }
}

pub(crate) fn matrix<T>(rows: usize, cols: usize, storage: Box<dyn Storage>) -> Matrix<T> {
    Matrix {
        rows,
        cols,
        storage,
        _elem: PhantomData,
    }
}

pub(crate) fn indices(len: usize, storage: Box<dyn Storage>) -> Indices {
    Indices { len, storage }
}

pub(crate) fn factor<T>(l: Matrix<T>) -> CholeskyFactor<T> {
    CholeskyFactor { l }
}

pub(crate) fn storage_of<T>(m: &Matrix<T>) -> &dyn Storage {
    &*m.storage
}

pub(crate) fn storage_of_mut<T>(m: &mut Matrix<T>) -> &mut dyn Storage {
    &mut *m.storage
}

pub(crate) fn index_storage(i: &Indices) -> &dyn Storage {
    &*i.storage
}

pub(crate) fn index_storage_mut(i: &mut Indices) -> &mut dyn Storage {
    &mut *i.storage
}

/// `s` as `&dyn Any` (trait upcasting), for downcasts to a backend's storage type.
pub(crate) fn any(s: &dyn Storage) -> &dyn Any {
    s
}

/// As [`any`], mutably.
pub(crate) fn any_mut(s: &mut dyn Storage) -> &mut dyn Any {
    s
}
