//! The resident forms of the spectra against the host forms.

use ndgpu_core::{Element, Ops};

use crate::data::Rng;
use crate::report::Recorder;

/// `eigh_dev`, `eigvalsh_dev`, `svd_dev` and `svdvals_dev` give what the host forms
/// give, to the bit (the same kernels on the same data).
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let a = rng.matrix::<T>(9, 9);
    let tall = rng.matrix::<T>(11, 6);
    rec.case("spectra resident forms: as the host forms", |v| {
        let (Some(da), Some(dt)) = (v.ok(b.upload(a.view())), v.ok(b.upload(tall.view()))) else {
            return;
        };
        if let Some(((w, vecs), (hw, hv))) = v.both(b.eigh_dev(&da), b.eigh(a.view())) {
            let got = (b.download(&w), b.download(&vecs));
            if let Some((w, vecs)) = v.both(got.0, got.1) {
                let same = w.column(0) == hw && vecs == hv;
                v.require(same, || "eigh_dev differs from eigh".into());
            }
        }
        if let Some((w, hw)) = v.both(b.eigvalsh_dev(&da), b.eigvalsh(a.view())) {
            let same = v.ok(b.download(&w)).is_some_and(|w| w.column(0) == hw);
            v.require(same, || "eigvalsh_dev differs from eigvalsh".into());
        }
        if let Some(((u, s, vt), (hu, hs, hvt))) = v.both(b.svd_dev(&dt), b.svd(tall.view(), false))
        {
            let got = [b.download(&u), b.download(&s), b.download(&vt)];
            let [u, s, vt] = got.map(|r| v.ok(r));
            let same = u == Some(hu) && s.is_some_and(|s| s.column(0) == hs) && vt == Some(hvt);
            v.require(same, || "svd_dev differs from svd".into());
        }
        if let Some((s, hs)) = v.both(b.svdvals_dev(&dt), b.svdvals(tall.view())) {
            let same = v.ok(b.download(&s)).is_some_and(|s| s.column(0) == hs);
            v.require(same, || "svdvals_dev differs from svdvals".into());
        }
    });
}
