//! A small table of the variants a backend offers per family, which is selected, and
//! what each computes with.

use crate::{Error, Family, Result};

/// The arithmetic a variant computes in, which decides the error it may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// The element type's own IEEE arithmetic.
    #[default]
    Ieee,
    /// f32 products on TF32 tensor cores: the operands rounded to 10 explicit mantissa
    /// bits, the sums in f32 (checked with [`tolerance::gemm_tf32`](crate::tolerance::gemm_tf32)).
    /// f64 is computed in IEEE arithmetic.
    Tf32,
    /// f32 products as three TF32 tensor-core products (3xTF32): each operand split into
    /// a TF32 part and a TF32 remainder, the product of the two remainders left out, the
    /// sums in f32 (checked with [`tolerance::gemm_3xtf32`](crate::tolerance::gemm_3xtf32),
    /// close to the f32 bound). f64 is computed in IEEE arithmetic.
    Tf32x3,
}

impl Precision {
    /// The lower-case name `ndgpu info` shows.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Ieee => "ieee",
            Precision::Tf32 => "tf32",
            Precision::Tf32x3 => "3xtf32",
        }
    }
}

/// A family's entry in a [`Variants`] table: its variants, default first, and a note on
/// them for `ndgpu info` and the docs (determinism, scope; empty for none).
pub type FamilyEntry = (Family, &'static [&'static str], &'static str);

/// Variants per family, default first, with the current selection, the precision of
/// each variant that does not compute in IEEE arithmetic, and the notes on them.
#[derive(Debug, Clone)]
pub struct Variants {
    backend: &'static str,
    table: Vec<(Family, &'static [&'static str], usize)>,
    precisions: Vec<(Family, &'static str, Precision)>,
    notes: Vec<&'static str>,
}

impl Variants {
    /// A table for `backend`; every family must be listed with at least one variant.
    pub fn new(backend: &'static str, entries: &[FamilyEntry]) -> Self {
        let table = entries.iter().map(|&(f, names, _)| (f, names, 0)).collect();
        Variants {
            backend,
            table,
            precisions: Vec::new(),
            notes: Vec::new(),
        }
        .with_notes(&entries.iter().map(|e| e.2).collect::<Vec<_>>())
    }

    /// Adds notes that concern the whole backend (empty ones are dropped).
    pub fn with_notes(mut self, notes: &[&'static str]) -> Self {
        self.notes
            .extend(notes.iter().copied().filter(|n| !n.is_empty()));
        self
    }

    /// The notes, as [`Backend::notes`](crate::Backend::notes) shows them.
    pub fn notes(&self) -> Vec<String> {
        self.notes.iter().map(|n| n.to_string()).collect()
    }

    /// Declares that variant `name` of `family` computes in `precision` (every variant
    /// not declared computes in [`Precision::Ieee`]).
    ///
    /// # Panics
    /// If the table has no such variant: a declaration for a name that does not exist
    /// is a typo in the backend's table.
    pub fn with_precision(
        mut self,
        family: Family,
        name: &'static str,
        precision: Precision,
    ) -> Self {
        assert!(
            self.list(family).contains(&name),
            "{}: no {family:?} variant {name}",
            self.backend
        );
        self.precisions
            .retain(|&(f, n, _)| (f, n) != (family, name));
        self.precisions.push((family, name, precision));
        self
    }

    /// The same table under the name `backend`, as a backend over several devices
    /// offers the variants of the one it runs on each.
    pub fn renamed(mut self, backend: &'static str) -> Self {
        self.backend = backend;
        self
    }

    /// The precision of variant `name` of `family`.
    pub fn precision_of(&self, family: Family, name: &str) -> Precision {
        self.precisions
            .iter()
            .find(|&&(f, n, _)| f == family && n == name)
            .map_or(Precision::Ieee, |&(_, _, p)| p)
    }

    /// The variants of `family` that compute in `precision`, in the table's order
    /// (default first, then the ladder from its first rung to its last).
    pub fn of_precision(&self, family: Family, precision: Precision) -> Vec<&'static str> {
        self.list(family)
            .into_iter()
            .filter(|n| self.precision_of(family, n) == precision)
            .collect()
    }

    /// The precision of the selected variant of `family`.
    pub fn precision(&self, family: Family) -> Precision {
        self.precision_of(family, self.current(family))
    }

    /// A table for `backend` with the same variants for every family, and one note.
    pub fn uniform(
        backend: &'static str,
        names: &'static [&'static str],
        note: &'static str,
    ) -> Self {
        let entries: Vec<FamilyEntry> = Family::ALL.iter().map(|&f| (f, names, "")).collect();
        Variants::new(backend, &entries).with_notes(&[note])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_is_declared_per_variant_and_follows_the_selection() {
        let mut v = Variants::new("test", &[(Family::MatMul, &["plain", "fast"], "")])
            .with_precision(Family::MatMul, "fast", Precision::Tf32);
        assert_eq!(v.precision(Family::MatMul), Precision::Ieee);
        assert_eq!(v.precision_of(Family::MatMul, "fast"), Precision::Tf32);
        v.set(Family::MatMul, "fast").unwrap();
        assert_eq!(v.precision(Family::MatMul), Precision::Tf32);
        // A family or variant the table does not declare computes in IEEE arithmetic.
        assert_eq!(v.precision(Family::Gram), Precision::Ieee);
        assert_eq!(
            v.clone().renamed("other").precision(Family::MatMul),
            Precision::Tf32
        );
    }

    #[test]
    fn variants_are_listed_by_precision_in_table_order() {
        let v = Variants::new("test", &[(Family::MatMul, &["plain", "a", "b", "c"], "")])
            .with_precision(Family::MatMul, "a", Precision::Tf32)
            .with_precision(Family::MatMul, "c", Precision::Tf32)
            .with_precision(Family::MatMul, "b", Precision::Tf32x3);
        assert_eq!(v.of_precision(Family::MatMul, Precision::Tf32), ["a", "c"]);
        assert_eq!(v.of_precision(Family::MatMul, Precision::Tf32x3), ["b"]);
        assert_eq!(v.of_precision(Family::MatMul, Precision::Ieee), ["plain"]);
        assert!(v.of_precision(Family::Gram, Precision::Tf32).is_empty());
    }

    #[test]
    #[should_panic(expected = "no MatMul variant nosuch")]
    fn a_precision_for_a_variant_that_does_not_exist_is_refused() {
        let _ = Variants::new("test", &[(Family::MatMul, &["plain"], "")]).with_precision(
            Family::MatMul,
            "nosuch",
            Precision::Tf32,
        );
    }
}
