//! The backend author's side of the contract: per-family kernel traits, and [`Kernels`],
//! which says which families a backend has.
//!
//! The family traits ([`MatMul`](super::MatMul), [`Transpose`](super::Transpose),
//! [`Reduce`](super::Reduce), [`Factorize`](super::Factorize), [`Cluster`](super::Cluster))
//! are written once, in core, for every type that implements [`Kernels`]: their methods
//! check the input once (shapes, finiteness where the operation needs it), then call an
//! unchecked method of the family's kernel trait (`MatMulKernels`, ...). A backend
//! implements the kernel traits of the families it has and hands them out through
//! [`Kernels`] (usually with [`impl_kernels!`](crate::impl_kernels)); for every other
//! family the default `None` makes each operation [`Error::Unsupported`] naming the
//! backend and the operation. A new family thus lands one backend at a time, and a
//! backend that does not have it yet changes nothing.
//!
//! Kernel methods may assume what their family trait checked (stated on each trait);
//! they still reach operands' storage through [`Here`](crate::backend::Here), which
//! refuses arrays from another place.

use crate::{Element, Error, Matrix, Result};

use super::{
    ClusterKernels, FactorizeKernels, MatMulKernels, Memory, ReduceKernels, TransposeKernels,
};

/// The points of a k-means step: `x` (N×D) and, when weighted, `weights` (N×1) in `T`.
#[derive(Debug, Clone, Copy)]
pub struct Points<'a, T> {
    /// The points, one per row.
    pub x: &'a Matrix<T>,
    /// The sample weights, one per point; `None`: every weight 1.
    pub weights: Option<&'a Matrix<T>>,
}

/// The families a backend has, as kernel objects; `None` (the default) for a family it
/// does not implement.
pub trait Kernels<T: Element>: Memory<T> {
    /// gemm and gram.
    fn matmul_kernels(&self) -> Option<&dyn MatMulKernels<T>> {
        None
    }
    /// The transpose.
    fn transpose_kernels(&self) -> Option<&dyn TransposeKernels<T>> {
        None
    }
    /// Reductions and dot.
    fn reduce_kernels(&self) -> Option<&dyn ReduceKernels<T>> {
        None
    }
    /// Factorizations and their solves.
    fn factorize_kernels(&self) -> Option<&dyn FactorizeKernels<T>> {
        None
    }
    /// k-means' steps.
    fn cluster_kernels(&self) -> Option<&dyn ClusterKernels<T>> {
        None
    }
}

/// The kernels `k` of backend `b`, or [`Error::Unsupported`] for `op`.
pub(crate) fn need<'a, K: ?Sized, T: Element, B: Memory<T> + ?Sized>(
    b: &B,
    k: Option<&'a K>,
    op: &'static str,
) -> Result<&'a K> {
    k.ok_or(Error::Unsupported {
        backend: b.name(),
        op,
    })
}

/// Implements [`Kernels`] for a backend type: `impl_kernels!(Backend, Bound: families)`
/// hands out the backend itself as the kernels of each family listed (`matmul`,
/// `transpose`, `reduce`, `factorize`, `cluster`), for every element type `T: Bound`.
#[macro_export]
macro_rules! impl_kernels {
    ($backend:ty, $bound:path: $($family:ident),+ $(,)?) => {
        impl<T: $bound> $crate::Kernels<T> for $backend {
            $($crate::impl_kernels!(@family $family);)+
        }
    };
    (@family matmul) => {
        fn matmul_kernels(&self) -> Option<&dyn $crate::MatMulKernels<T>> { Some(self) }
    };
    (@family transpose) => {
        fn transpose_kernels(&self) -> Option<&dyn $crate::TransposeKernels<T>> { Some(self) }
    };
    (@family reduce) => {
        fn reduce_kernels(&self) -> Option<&dyn $crate::ReduceKernels<T>> { Some(self) }
    };
    (@family factorize) => {
        fn factorize_kernels(&self) -> Option<&dyn $crate::FactorizeKernels<T>> { Some(self) }
    };
    (@family cluster) => {
        fn cluster_kernels(&self) -> Option<&dyn $crate::ClusterKernels<T>> { Some(self) }
    };
}
