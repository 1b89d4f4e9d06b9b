//! The cases of one op at one shape on several backends, each uploaded on first use.

use std::collections::HashMap;

use ndgpu_core::{Element, Ops};

use super::Case;
use crate::cases::Op;
use crate::data::Inputs;
use crate::shape::Shape;

/// The cases of one op at one shape on several backends, uploaded on first use: one per
/// backend (by its index in a group) and one for the copy ceiling.
pub struct Cases<T> {
    by_key: HashMap<(usize, bool, bool), std::result::Result<Case<T>, String>>,
    of: (Op, Shape),
    copies: usize,
}

impl<T: Element> Cases<T> {
    /// No cases yet of `op` at `shape`; each will hold `copies` sets.
    pub fn new(op: Op, shape: Shape, copies: usize) -> Self {
        Cases {
            by_key: HashMap::new(),
            of: (op, shape),
            copies,
        }
    }

    /// The case of backend `backend` (`ceiling`: its copy ceiling), uploaded through
    /// `ops` if it is not there yet. `Err(why)` when its inputs do not fit.
    pub fn get(
        &mut self,
        ops: &dyn Ops<T>,
        (backend, ceiling, pinned): (usize, bool, bool),
        inputs: &Inputs<T>,
    ) -> std::result::Result<&mut Case<T>, String> {
        let (copies, of) = (self.copies, self.of);
        self.by_key
            .entry((backend, ceiling, pinned))
            .or_insert_with(|| {
                Case::new(ops, of, inputs, copies, (ceiling, pinned))
                    .map_err(|e| format!("the inputs do not fit: {e}"))
            })
            .as_mut()
            .map_err(|why| why.clone())
    }
}
