//! The variants a backend offers per family: one typed row per variant (its name, the
//! precision it computes in, the device it needs, whether it is reproducible, its note),
//! declared once, in one table per family, and the selection.

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

/// What a variant needs of the device it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Needs {
    /// Any device the backend runs on.
    #[default]
    Any,
    /// Warp-level tensor cores on TF32 and f64 (`mma.sync`): CUDA sm_80 and later.
    Sm80,
    /// Hopper's warpgroup tensor cores and TMA (`wgmma`): CUDA sm_90.
    Sm90,
}

impl Needs {
    /// Whether a device of architecture `arch` (`sm_90`; `None` for the host) meets it.
    pub fn met_by(self, arch: Option<&str>) -> bool {
        let cc = || arch.and_then(|a| a.strip_prefix("sm_")?.parse::<u32>().ok());
        match self {
            Needs::Any => true,
            Needs::Sm80 => cc().is_some_and(|c| c >= 80),
            Needs::Sm90 => cc() == Some(90),
        }
    }

    /// What it says in a note (`sm_80+`), or `None` for [`Needs::Any`].
    pub fn name(self) -> Option<&'static str> {
        match self {
            Needs::Any => None,
            Needs::Sm80 => Some("sm_80+"),
            Needs::Sm90 => Some("sm_90"),
        }
    }
}

/// One variant of a family: everything known of it without running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// Its name, as `set_variant` and `--variant` take it.
    pub name: &'static str,
    /// The arithmetic it computes in; results are checked against that precision.
    pub precision: Precision,
    /// The device it needs; elsewhere it is `Unavailable`.
    pub needs: Needs,
    /// Whether the same input gives the same bits on every run (no floating-point
    /// atomics, sums in a fixed order).
    pub reproducible: bool,
    /// What it does, in a sentence or two, for `ndgpu info` and the docs.
    pub note: &'static str,
}

impl Variant {
    /// A variant in IEEE arithmetic, on any device, reproducible.
    pub const fn new(name: &'static str, note: &'static str) -> Self {
        Variant {
            name,
            precision: Precision::Ieee,
            needs: Needs::Any,
            reproducible: true,
            note,
        }
    }

    /// The same, computing in `precision`.
    pub const fn precision(self, precision: Precision) -> Self {
        Variant { precision, ..self }
    }

    /// The same, needing `needs` of the device.
    pub const fn needs(self, needs: Needs) -> Self {
        Variant { needs, ..self }
    }

    /// The same, not bitwise reproducible run to run (floating-point atomics, or sums
    /// whose order depends on the machine).
    pub const fn not_reproducible(self) -> Self {
        Variant {
            reproducible: false,
            ..self
        }
    }

    /// The names of `rows`, in order.
    pub fn names(rows: &[Variant]) -> Vec<&'static str> {
        rows.iter().map(|v| v.name).collect()
    }

    /// The row as `ndgpu info` and the docs show it: `name [precision, needs, atomic]: note`.
    pub fn describe(&self) -> String {
        let mut tags = Vec::new();
        if self.precision != Precision::Ieee {
            tags.push(self.precision.name());
        }
        tags.extend(self.needs.name());
        if !self.reproducible {
            tags.push("not reproducible");
        }
        let tags = match tags.is_empty() {
            true => String::new(),
            false => format!(" [{}]", tags.join(", ")),
        };
        format!("{}{tags}: {}", self.name, self.note)
    }
}

/// One family's table: its variants, default first (then the ladder from its first rung
/// to its last), and a note on what holds for all of them.
#[derive(Debug, Clone)]
pub struct Ladder {
    /// The family.
    pub family: Family,
    /// The rows, default first.
    pub variants: Vec<Variant>,
    /// What every variant shares (NaN policy, symmetry, ...); empty for nothing.
    pub note: &'static str,
}

impl Ladder {
    /// A family's table from its rows (default first).
    pub fn new(
        family: Family,
        variants: impl IntoIterator<Item = Variant>,
        note: &'static str,
    ) -> Self {
        Ladder {
            family,
            variants: variants.into_iter().collect(),
            note,
        }
    }
}

/// Variants per family, default first, with the current selection.
#[derive(Debug, Clone)]
pub struct Variants {
    backend: &'static str,
    ladders: Vec<(Ladder, usize)>,
    notes: Vec<&'static str>,
    /// The same rows for every family ([`Variants::uniform`]): their notes said once.
    uniform: bool,
}

impl Variants {
    /// A table for `backend`: one ladder per family it offers.
    ///
    /// # Panics
    /// If a ladder has no rows or two rows of one name: a typo in the backend's table.
    pub fn new(backend: &'static str, ladders: Vec<Ladder>) -> Self {
        for l in &ladders {
            assert!(!l.variants.is_empty(), "{backend}: no {} variant", l.family);
            for (i, v) in l.variants.iter().enumerate() {
                assert!(
                    l.variants[..i].iter().all(|w| w.name != v.name),
                    "{backend}: two {} variants {}",
                    l.family,
                    v.name
                );
            }
        }
        Variants {
            backend,
            ladders: ladders.into_iter().map(|l| (l, 0)).collect(),
            notes: Vec::new(),
            uniform: false,
        }
    }

    /// A table for `backend` with the same rows for every family, and one note on the
    /// whole backend.
    pub fn uniform(backend: &'static str, rows: &[Variant], note: &'static str) -> Self {
        let ladders = Family::ALL
            .iter()
            .map(|&f| Ladder::new(f, rows.iter().copied(), ""))
            .collect();
        Variants {
            uniform: true,
            ..Variants::new(backend, ladders).with_notes(&[note])
        }
    }

    /// Adds notes that concern the whole backend (empty ones are dropped).
    pub fn with_notes(mut self, notes: &[&'static str]) -> Self {
        self.notes
            .extend(notes.iter().copied().filter(|n| !n.is_empty()));
        self
    }

    /// The notes, as [`Backend::notes`](crate::Backend::notes) shows them: the
    /// backend's, then per family its shared note and one line per variant.
    pub fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self.notes.iter().map(|n| n.to_string()).collect();
        if self.uniform {
            let rows = self.ladders.first().map_or(&[][..], |l| &l.0.variants[..]);
            out.extend(
                rows.iter()
                    .filter(|v| !v.note.is_empty())
                    .map(Variant::describe),
            );
            return out;
        }
        for (l, _) in &self.ladders {
            if !l.note.is_empty() {
                out.push(format!("{} ({}): {}", l.family, self.backend, l.note));
            }
            for v in l.variants.iter().filter(|v| !v.note.is_empty()) {
                out.push(format!("{}/{}", l.family, v.describe()));
            }
        }
        out
    }

    /// The same table under the name `backend`, as a backend over several devices
    /// offers the variants of the one it runs on each.
    pub fn renamed(mut self, backend: &'static str) -> Self {
        self.backend = backend;
        self
    }

    fn ladder(&self, family: Family) -> Option<&(Ladder, usize)> {
        self.ladders.iter().find(|e| e.0.family == family)
    }

    /// The table of `family`, if the backend offers it.
    pub fn rows(&self, family: Family) -> &[Variant] {
        self.ladder(family).map_or(&[], |l| &l.0.variants)
    }

    /// The row of variant `name` of `family`.
    pub fn row(&self, family: Family, name: &str) -> Option<&Variant> {
        self.rows(family).iter().find(|v| v.name == name)
    }

    /// The precision of variant `name` of `family` (IEEE for a name it does not have).
    pub fn precision_of(&self, family: Family, name: &str) -> Precision {
        self.row(family, name)
            .map_or(Precision::Ieee, |v| v.precision)
    }

    /// The variants of `family` that compute in `precision`, in the table's order
    /// (default first, then the ladder from its first rung to its last).
    pub fn of_precision(&self, family: Family, precision: Precision) -> Vec<&'static str> {
        self.rows(family)
            .iter()
            .filter(|v| v.precision == precision)
            .map(|v| v.name)
            .collect()
    }

    /// The precision of the selected variant of `family`.
    pub fn precision(&self, family: Family) -> Precision {
        self.precision_of(family, self.current(family))
    }

    /// The variants of `family`, default first.
    pub fn list(&self, family: Family) -> Vec<&'static str> {
        self.rows(family).iter().map(|v| v.name).collect()
    }

    /// The selected variant of `family` ("default" if the family is not listed).
    pub fn current(&self, family: Family) -> &'static str {
        self.ladder(family)
            .map(|(l, i)| l.variants[*i].name)
            .unwrap_or("default")
    }

    /// Selects `name` for `family`.
    ///
    /// # Errors
    /// [`Error::UnknownVariant`].
    pub fn set(&mut self, family: Family, name: &str) -> Result<()> {
        let backend = self.backend;
        match self.ladders.iter_mut().find(|e| e.0.family == family) {
            Some((l, sel)) => match l.variants.iter().position(|v| v.name == name) {
                Some(i) => {
                    *sel = i;
                    Ok(())
                }
                None => {
                    let names: Vec<&str> = l.variants.iter().map(|v| v.name).collect();
                    Err(Error::unknown_variant(backend, family, name, &names))
                }
            },
            None => Err(Error::unknown_variant(backend, family, name, &[])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Variants {
        let rows = [
            Variant::new("plain", "one thread per output"),
            Variant::new("a", "")
                .precision(Precision::Tf32)
                .needs(Needs::Sm80),
            Variant::new("b", "").precision(Precision::Tf32x3),
            Variant::new("c", "")
                .precision(Precision::Tf32)
                .not_reproducible(),
        ];
        Variants::new("test", vec![Ladder::new(Family::MatMul, rows, "shared")])
    }

    #[test]
    fn precision_is_declared_per_variant_and_follows_the_selection() {
        let mut v = table();
        assert_eq!(v.precision(Family::MatMul), Precision::Ieee);
        assert_eq!(v.precision_of(Family::MatMul, "a"), Precision::Tf32);
        v.set(Family::MatMul, "a").unwrap();
        assert_eq!(v.precision(Family::MatMul), Precision::Tf32);
        // A family or variant the table does not declare computes in IEEE arithmetic.
        assert_eq!(v.precision(Family::Gram), Precision::Ieee);
        assert_eq!(
            v.clone().renamed("other").precision(Family::MatMul),
            Precision::Tf32
        );
        assert!(matches!(
            v.set(Family::MatMul, "nosuch"),
            Err(Error::UnknownVariant { .. })
        ));
    }

    #[test]
    fn variants_are_listed_by_precision_in_table_order() {
        let v = table();
        assert_eq!(v.of_precision(Family::MatMul, Precision::Tf32), ["a", "c"]);
        assert_eq!(v.of_precision(Family::MatMul, Precision::Tf32x3), ["b"]);
        assert_eq!(v.of_precision(Family::MatMul, Precision::Ieee), ["plain"]);
        assert!(v.of_precision(Family::Gram, Precision::Tf32).is_empty());
    }

    #[test]
    fn a_row_says_its_facts_and_the_notes_list_every_row() {
        let v = table();
        let notes = v.notes();
        assert_eq!(notes[0], "matmul (test): shared");
        assert_eq!(notes[1], "matmul/plain: one thread per output");
        assert_eq!(
            v.row(Family::MatMul, "c").unwrap().describe(),
            "c [tf32, not reproducible]: "
        );
        assert_eq!(Needs::Sm80.name(), Some("sm_80+"));
    }

    #[test]
    fn needs_are_met_by_the_architecture() {
        assert!(Needs::Any.met_by(None));
        assert!(!Needs::Sm80.met_by(None));
        assert!(Needs::Sm80.met_by(Some("sm_80")) && Needs::Sm80.met_by(Some("sm_90")));
        assert!(!Needs::Sm80.met_by(Some("sm_75")));
        assert!(Needs::Sm90.met_by(Some("sm_90")) && !Needs::Sm90.met_by(Some("sm_89")));
    }

    #[test]
    #[should_panic(expected = "two matmul variants plain")]
    fn two_rows_of_one_name_are_refused() {
        let rows = [Variant::new("plain", ""), Variant::new("plain", "")];
        let _ = Variants::new("test", vec![Ladder::new(Family::MatMul, rows, "")]);
    }
}
