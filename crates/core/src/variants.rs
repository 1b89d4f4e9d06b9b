//! A small table of the variants a backend offers per family, and which is selected.

use crate::{Error, Family, Result};

/// Variants per family, default first, with the current selection.
#[derive(Debug, Clone)]
pub struct Variants {
    backend: &'static str,
    table: Vec<(Family, &'static [&'static str], usize)>,
}

impl Variants {
    /// A table for `backend`; every family must be listed with at least one variant.
    pub fn new(backend: &'static str, entries: &[(Family, &'static [&'static str])]) -> Self {
        let table = entries.iter().map(|&(f, names)| (f, names, 0)).collect();
        Variants { backend, table }
    }

    /// A table for `backend` with the same variants for every family.
    pub fn uniform(backend: &'static str, names: &'static [&'static str]) -> Self {
        let entries: Vec<(Family, &'static [&'static str])> =
            Family::ALL.iter().map(|&f| (f, names)).collect();
        Variants::new(backend, &entries)
    }

    fn entry(&self, family: Family) -> Option<&(Family, &'static [&'static str], usize)> {
        self.table.iter().find(|e| e.0 == family)
    }

    /// The variants of `family`, default first.
    pub fn list(&self, family: Family) -> Vec<&'static str> {
        self.entry(family).map(|e| e.1.to_vec()).unwrap_or_default()
    }

    /// The selected variant of `family` ("default" if the family is not listed).
    pub fn current(&self, family: Family) -> &'static str {
        self.entry(family).map(|e| e.1[e.2]).unwrap_or("default")
    }

    /// Selects `name` for `family`.
    ///
    /// # Errors
    /// [`Error::UnknownVariant`].
    pub fn set(&mut self, family: Family, name: &str) -> Result<()> {
        let backend = self.backend;
        let entry = self.table.iter_mut().find(|e| e.0 == family);
        match entry {
            Some(e) => match e.1.iter().position(|&v| v == name) {
                Some(i) => {
                    e.2 = i;
                    Ok(())
                }
                None => Err(Error::unknown_variant(backend, family, name, e.1)),
            },
            None => Err(Error::unknown_variant(backend, family, name, &[])),
        }
    }
}
