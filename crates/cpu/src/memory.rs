//! Resident arrays of the reference: row-major `Vec`s in host memory
//! ([`HostStorage`]), and the backend's clock.

use std::time::Instant;

use ndarray::{Array1, Array2, ArrayView2};
use ndgpu_core::backend::{self, HostStorage};
use ndgpu_core::{host, Device, Element, Error, Indices, Matrix, Memory, Place, Result};

use crate::{CpuBackend, HERE};

/// "No label yet" among host indices.
pub(crate) const UNLABELED: usize = usize::MAX;

impl Device for CpuBackend {
    fn place(&self) -> Place {
        Place::Host
    }

    fn unlabeled(&self, n: usize) -> Result<Indices> {
        let data = host::filled_vec("kmeans", n, UNLABELED)?;
        Ok(backend::indices(n, HostStorage { data }))
    }

    fn download_indices(&self, i: &Indices) -> Result<Array1<usize>> {
        let s: &HostStorage<usize> = HERE.indices("download", "indices", i)?;
        if let Some(at) = s.data.iter().position(|&l| l == UNLABELED) {
            return Err(Error::invalid(
                "download",
                format!("index {at} was never assigned"),
            ));
        }
        Ok(Array1::from(s.data.clone()))
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let start = Instant::now();
        f()?;
        Ok(start.elapsed().as_secs_f64())
    }
}

impl<T: Element> Memory<T> for CpuBackend {
    fn upload(&self, a: ArrayView2<T>) -> Result<Matrix<T>> {
        let data = match a.as_slice() {
            Some(s) => s.to_vec(),
            // `iter` walks the logical (row-major) order whatever the layout.
            None => a.iter().copied().collect(),
        };
        Ok(backend::matrix(a.nrows(), a.ncols(), HostStorage { data }))
    }

    fn download(&self, m: &Matrix<T>) -> Result<Array2<T>> {
        Ok(HERE.host_view("download", "the matrix", m)?.to_owned())
    }

    fn alloc(&self, rows: usize, cols: usize) -> Result<Matrix<T>> {
        Memory::<T>::zeros(self, rows, cols)
    }

    fn zeros(&self, rows: usize, cols: usize) -> Result<Matrix<T>> {
        // rows × cols is not bounded by any input's bytes: allocate fallibly.
        let len = rows.checked_mul(cols).ok_or(Error::HostOutOfMemory {
            op: "alloc",
            requested: None,
        })?;
        let data = host::filled_vec("alloc", len, T::zero())?;
        Ok(backend::matrix(rows, cols, HostStorage { data }))
    }

    fn copy_into(&self, src: &Matrix<T>, dst: &mut Matrix<T>) -> Result<()> {
        if src.dim() != dst.dim() {
            return Err(Error::shape(
                "copy",
                format!(
                    "source is {}x{}, destination {}x{}",
                    src.rows(),
                    src.cols(),
                    dst.rows(),
                    dst.cols()
                ),
            ));
        }
        let from: &HostStorage<T> = HERE.matrix("copy", "the source", src)?;
        let to: &mut HostStorage<T> = HERE.matrix_mut("copy", "the destination", dst)?;
        to.data.copy_from_slice(&from.data);
        Ok(())
    }
}

/// A host matrix of `T` from an f64 computation, rounded once per element.
pub(crate) fn rounded<T: Element>(a: &Array2<f64>) -> Matrix<T> {
    backend::host_matrix(a.mapv(T::from_f64))
}
