//! Resident arrays in host memory, for every host backend: [`impl_host_memory!`].

/// "No label yet" among host indices: never a centroid's index, so every point counts
/// as changed in a first assignment.
pub const UNLABELED: usize = usize::MAX;

/// Implements [`Device`](crate::Device) and [`Memory`](crate::Memory) for a host
/// backend whose resident arrays are [`HostStorage`](crate::backend::HostStorage)
/// (row-major `Vec`s, [`Place::Host`](crate::Place::Host)), so every host backend reads
/// every other's arrays. `$here` is the backend's [`Here`](crate::backend::Here);
/// labels not yet assigned hold [`UNLABELED`](crate::backend::UNLABELED). Times by the
/// wall clock.
#[macro_export]
macro_rules! impl_host_memory {
    ($backend:ty, $here:expr) => {
        impl $crate::Device for $backend {
            fn name(&self) -> &'static str {
                $here.backend
            }

            fn place(&self) -> $crate::Place {
                $crate::Place::Host
            }

            fn unlabeled(&self, n: usize) -> $crate::Result<$crate::Indices> {
                let data = $crate::host::filled_vec("kmeans", n, $crate::backend::UNLABELED)?;
                Ok($crate::backend::indices(
                    n,
                    $crate::backend::HostStorage { data },
                ))
            }

            fn download_indices(
                &self,
                i: &$crate::Indices,
            ) -> $crate::Result<$crate::ndarray::Array1<usize>> {
                let s: &$crate::backend::HostStorage<usize> =
                    $here.indices("download", "indices", i)?;
                if let Some(at) = s.data.iter().position(|&l| l == $crate::backend::UNLABELED) {
                    return Err($crate::Error::invalid(
                        "download",
                        format!("index {at} was never assigned"),
                    ));
                }
                Ok($crate::ndarray::Array1::from(s.data.clone()))
            }

            fn synchronize(&self) -> $crate::Result<()> {
                Ok(())
            }

            fn time(&self, f: &mut dyn FnMut() -> $crate::Result<()>) -> $crate::Result<f64> {
                let start = std::time::Instant::now();
                f()?;
                Ok(start.elapsed().as_secs_f64())
            }
        }

        impl<T: $crate::Element> $crate::Memory<T> for $backend {
            fn upload_into(
                &self,
                a: $crate::ndarray::ArrayView2<T>,
                m: &mut $crate::Matrix<T>,
            ) -> $crate::Result<()> {
                $crate::check::transfer_shape("upload", a.dim(), m.dim())?;
                let to: &mut $crate::backend::HostStorage<T> =
                    $here.matrix_mut("upload", "the destination", m)?;
                match a.as_slice() {
                    Some(s) => to.data.copy_from_slice(s),
                    // `iter` walks the logical (row-major) order whatever the layout.
                    None => to.data.iter_mut().zip(a.iter()).for_each(|(t, &v)| *t = v),
                }
                Ok(())
            }

            fn download_into(
                &self,
                m: &$crate::Matrix<T>,
                mut out: $crate::ndarray::ArrayViewMut2<T>,
            ) -> $crate::Result<()> {
                $crate::check::transfer_shape("download", out.dim(), m.dim())?;
                out.assign(&$here.host_view("download", "the matrix", m)?);
                Ok(())
            }

            fn alloc(&self, rows: usize, cols: usize) -> $crate::Result<$crate::Matrix<T>> {
                $crate::Memory::<T>::zeros(self, rows, cols)
            }

            fn zeros(&self, rows: usize, cols: usize) -> $crate::Result<$crate::Matrix<T>> {
                // rows × cols is not bounded by any input's bytes: allocate fallibly.
                let (data, _) =
                    $crate::host::zeros::<T>("alloc", (rows, cols))?.into_raw_vec_and_offset();
                Ok($crate::backend::matrix(
                    rows,
                    cols,
                    $crate::backend::HostStorage { data },
                ))
            }

            fn copy_into(
                &self,
                src: &$crate::Matrix<T>,
                dst: &mut $crate::Matrix<T>,
            ) -> $crate::Result<()> {
                $crate::check::copy_dims("copy", src.dim(), dst.dim())?;
                let from: &$crate::backend::HostStorage<T> =
                    $here.matrix("copy", "the source", src)?;
                let to: &mut $crate::backend::HostStorage<T> =
                    $here.matrix_mut("copy", "the destination", dst)?;
                to.data.copy_from_slice(&from.data);
                Ok(())
            }
        }
    };
}
