//! For test backends that wrap the CPU reference (a backend with a planted fault, one
//! that computes in low precision): their resident arrays are the reference's, in host
//! memory, so the memory side is the reference's too.

/// Implements [`Device`](ndgpu_core::Device) and [`Memory`](ndgpu_core::Memory) for a
/// test backend by handing every call to its CPU reference field.
#[macro_export]
macro_rules! host_memory_of {
    ($backend:ty, $cpu:tt, $name:expr) => {
        impl ndgpu_core::Device for $backend {
            fn name(&self) -> &'static str {
                $name
            }
            fn place(&self) -> ndgpu_core::Place {
                ndgpu_core::Device::place(&self.$cpu)
            }
            fn unlabeled(&self, n: usize) -> ndgpu_core::Result<ndgpu_core::Indices> {
                self.$cpu.unlabeled(n)
            }
            fn download_indices(
                &self,
                i: &ndgpu_core::Indices,
            ) -> ndgpu_core::Result<ndarray::Array1<usize>> {
                self.$cpu.download_indices(i)
            }
            fn synchronize(&self) -> ndgpu_core::Result<()> {
                self.$cpu.synchronize()
            }
            fn time(
                &self,
                f: &mut dyn FnMut() -> ndgpu_core::Result<()>,
            ) -> ndgpu_core::Result<f64> {
                self.$cpu.time(f)
            }
        }

        impl<T: ndgpu_core::Element> ndgpu_core::Memory<T> for $backend {
            fn upload_into(
                &self,
                a: ndarray::ArrayView2<T>,
                m: &mut ndgpu_core::Matrix<T>,
            ) -> ndgpu_core::Result<()> {
                self.$cpu.upload_into(a, m)
            }
            fn download_into(
                &self,
                m: &ndgpu_core::Matrix<T>,
                out: ndarray::ArrayViewMut2<T>,
            ) -> ndgpu_core::Result<()> {
                self.$cpu.download_into(m, out)
            }
            fn alloc(&self, rows: usize, cols: usize) -> ndgpu_core::Result<ndgpu_core::Matrix<T>> {
                self.$cpu.alloc(rows, cols)
            }
            fn zeros(&self, rows: usize, cols: usize) -> ndgpu_core::Result<ndgpu_core::Matrix<T>> {
                self.$cpu.zeros(rows, cols)
            }
            fn copy_into(
                &self,
                src: &ndgpu_core::Matrix<T>,
                dst: &mut ndgpu_core::Matrix<T>,
            ) -> ndgpu_core::Result<()> {
                self.$cpu.copy_into(src, dst)
            }
        }
    };
}
