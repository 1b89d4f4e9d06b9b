//! The resident sets of the spectra: eigh and the SVD of a resident matrix into new
//! resident results, and PCA of resident data (`Pca::fit_dev`: the centring, the gram
//! and eigh or the SVD where the data live, the small results downloaded).

use ndarray::{Array1, Axis};
use ndgpu_core::{Element, Error, Matrix, Ops, Pca, PcaFit, Result};

use crate::check::Output;
use crate::data::Inputs;

/// One set of buffers of eigh, the SVD or PCA; the results of the last run kept for
/// the check.
pub(super) enum Spectra<T> {
    /// A (eigh reads its lower triangle), whether the run is the SVD (else eigh), and
    /// the last run's (w, V) or (U, s, Vt).
    Resident {
        a: Matrix<T>,
        svd: bool,
        out: Vec<Matrix<T>>,
    },
    /// The resident data, the components kept, and the last run's fit.
    Pca {
        x: Matrix<T>,
        k: usize,
        fit: Option<Box<PcaFit<T>>>,
    },
}

/// A resident k×1 matrix as a host vector.
fn column<T: Element>(ops: &dyn Ops<T>, m: &Matrix<T>) -> Result<Array1<T>> {
    Ok(ops.download(m)?.index_axis_move(Axis(1), 0))
}

impl<T: Element> Spectra<T> {
    /// Uploads `inputs`, or `None` for another op's.
    ///
    /// # Errors
    /// Out of memory; device errors.
    pub(super) fn upload(ops: &dyn Ops<T>, inputs: &Inputs<T>) -> Result<Option<Self>> {
        Ok(Some(match inputs {
            Inputs::Eigh { a } | Inputs::Svd { a } => Spectra::Resident {
                a: ops.upload(a.view())?,
                svd: matches!(inputs, Inputs::Svd { .. }),
                out: Vec::new(),
            },
            Inputs::Pca { x, k } => Spectra::Pca {
                x: ops.upload(x.view())?,
                k: *k,
                fit: None,
            },
            _ => return Ok(None),
        }))
    }

    /// Drops the last run's results (before the checked run).
    pub(super) fn clear(&mut self) {
        match self {
            Spectra::Resident { out, .. } => out.clear(),
            Spectra::Pca { fit, .. } => *fit = None,
        }
    }

    /// One run.
    ///
    /// # Errors
    /// Those of the backend.
    pub(super) fn run(&mut self, ops: &dyn Ops<T>) -> Result<()> {
        match self {
            Spectra::Resident { a, svd: false, out } => {
                let (w, v) = ops.eigh_dev(a)?;
                *out = vec![w, v];
            }
            Spectra::Resident { a, svd: true, out } => {
                let (u, s, vt) = ops.svd_dev(a)?;
                *out = vec![u, s, vt];
            }
            Spectra::Pca { x, k, fit } => {
                *fit = Some(Box::new(Pca::with_components(*k).fit_dev(ops, x)?))
            }
        }
        Ok(())
    }

    /// The result of the last run, on the host.
    ///
    /// # Errors
    /// Device errors; a run that left no result.
    pub(super) fn output(&self, ops: &dyn Ops<T>) -> Result<Output<T>> {
        let none = || Error::invalid("shootout", "the run returned no result");
        Ok(match self {
            Spectra::Resident { out, .. } => match &out[..] {
                [w, v] => Output::Eigh {
                    w: column(ops, w)?,
                    v: ops.download(v)?,
                },
                [u, s, vt] => Output::Svd {
                    u: ops.download(u)?,
                    s: column(ops, s)?,
                    vt: ops.download(vt)?,
                },
                _ => return Err(none()),
            },
            Spectra::Pca { fit, .. } => Output::Pca(*fit.clone().ok_or_else(none)?),
        })
    }
}
