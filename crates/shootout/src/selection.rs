//! Which variants of an op a backend runs in the shootout, how one is selected, what
//! arithmetic it declares, and what the copy ceiling of an op moves.

use ndgpu_core::{Backend, Precision, Result};

use crate::cases::Op;
use crate::data::Inputs;
use crate::shape::Shape;

/// Elements the copy ceiling moves for `op` at `shape`: as many bytes, read plus
/// written, as the op moves (`Op::work` / (2 · element size)); none for the ops rated
/// against a compute peak, and for the transfer (its ceiling is the pinned round trip).
pub fn copy_len(op: Op, shape: Shape, elem_bytes: usize) -> usize {
    match op.bandwidth_bound() && op != Op::Transfer {
        true => (op.work(shape, elem_bytes) / (2 * elem_bytes) as f64) as usize,
        false => 0,
    }
}

/// The host elements the copy ceiling of `inputs` (of `op` at `shape`) moves: what its
/// result must equal. `None` for an op without a copy ceiling.
pub fn copy_source<T>(op: Op, shape: Shape, inputs: &Inputs<T>) -> Option<&[T]> {
    let src = match inputs {
        Inputs::Transpose { a } => a.as_slice(),
        Inputs::Reduce { x, .. } => x.as_slice(),
        Inputs::Dot { x, .. } => x.as_slice(),
        _ => None,
    }?;
    // The result written along an axis is a small part of the bytes: a copy of as many
    // bytes may need a few more elements than the input holds.
    Some(&src[..copy_len(op, shape, std::mem::size_of::<T>()).min(src.len())])
}

/// The arithmetic variant `variant` of `op` on `b` declares (IEEE for an op of no
/// family).
pub fn precision_of(b: &dyn Backend, op: Op, variant: &str) -> Precision {
    op.family().map_or(Precision::Ieee, |f| {
        b.variant_table().precision_of(f, variant)
    })
}

/// The variants of `op` on `b`, default first. An op of no family (the chain, the
/// transfer) runs on every family's default: one pseudo-variant, `default`.
pub fn variants_of(b: &dyn Backend, op: Op) -> Vec<&'static str> {
    match (op.family(), op) {
        (Some(f), _) => b.variants(f),
        // Ordinary host arrays, or the backend's pinned ones (Memory::host_array): a
        // host backend's are ordinary too.
        (None, Op::Transfer) if b.place() != ndgpu_core::Place::Host => TRANSFER_VARIANTS.to_vec(),
        (None, _) => vec!["default"],
    }
}

/// The transfer op's forms: from and into ordinary (pageable) host arrays, the default,
/// or the backend's [`ndgpu_core::HostArray`]s (pinned on a GPU).
pub const TRANSFER_VARIANTS: [&str; 2] = ["pageable", "pinned"];

/// The key of a case in [`Cases`](crate::resident::Cases): the backend's index, whether it is the copy
/// ceiling, and whether a transfer moves the backend's own host arrays.
pub fn case_key(op: Op, backend: usize, variant: &str, ceiling: bool) -> (usize, bool, bool) {
    let pinned = op == Op::Transfer && !ceiling && variant == TRANSFER_VARIANTS[1];
    (backend, ceiling, pinned)
}

/// Selects `variant` of `op`'s family on `b`; for an op of no family, every family's
/// default (of the families `b` lists variants of).
///
/// # Errors
/// [`ndgpu_core::Error::UnknownVariant`].
pub fn select_variant(b: &mut dyn Backend, op: Op, variant: &str) -> Result<()> {
    match op.family() {
        Some(f) => b.set_variant(f, variant),
        None => {
            for f in ndgpu_core::Family::ALL {
                if let Some(&default) = b.variants(f).first() {
                    b.set_variant(f, default)?;
                }
            }
            Ok(())
        }
    }
}
