//! The spectra's bad input and empty shapes.

use ndarray::Array2;
use ndgpu_core::{Element, Error, Ops};

use crate::cases::common::non_finite_at;
use crate::data::Rng;
use crate::report::Recorder;

/// NaN and ±Inf refused where read (the lower triangle for eigh), a non-square eigh, and
/// the empty shapes NumPy answers.
pub(crate) fn errors<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let a = rng.matrix::<T>(5, 5);
    let wide = rng.matrix::<T>(3, 5);
    for (what, bad) in [("NaN", T::nan()), ("Inf", T::infinity())] {
        let put = |m: &Array2<T>, at: (usize, usize)| {
            let mut m = m.clone();
            m[at] = bad;
            m
        };
        let (lower, upper, any) = (put(&a, (3, 1)), put(&a, (1, 3)), put(&wide, (2, 4)));
        rec.case(
            format!("spectra errors: {what} is NonFinite where read"),
            |v| {
                non_finite_at(v, b.eigh(lower.view()), (3, 1));
                non_finite_at(v, b.eigvalsh(lower.view()), (3, 1));
                non_finite_at(v, b.svd(any.view(), false), (2, 4));
                non_finite_at(v, b.svdvals(any.t()), (4, 2));
                let (got, want) = (b.eigvalsh(upper.view()), b.eigvalsh(a.view()));
                if let Some((got, want)) = v.both(got, want) {
                    v.require(got == want, || {
                        format!("{what} in the strict upper triangle changed the eigenvalues")
                    });
                }
            },
        );
    }
    rec.case("eigh of a non-square matrix: NotSquare", |v| {
        v.err(b.eigh(wide.view()), "NotSquare", |e| {
            matches!(e, Error::NotSquare { .. })
        });
        v.err(b.eigvalsh(wide.view()), "NotSquare", |e| {
            matches!(e, Error::NotSquare { .. })
        });
    });
    rec.case("spectra of empty matrices: NumPy's shapes", |v| {
        let a00 = Array2::<T>::zeros((0, 0));
        if let Some((w, vecs)) = v.ok(b.eigh(a00.view())) {
            v.require(w.is_empty() && vecs.dim() == (0, 0), || "eigh 0x0".into());
        }
        for (m, n) in [(0, 0), (0, 3), (3, 0)] {
            let e = Array2::<T>::zeros((m, n));
            if let Some((u, s, vt)) = v.ok(b.svd(e.view(), false)) {
                let ok = (u.dim(), s.len(), vt.dim()) == ((m, 0), 0, (0, n));
                v.require(ok, || {
                    format!("reduced svd {m}x{n}: {:?} {:?}", u.dim(), vt.dim())
                });
            }
            if let Some((u, s, vt)) = v.ok(b.svd(e.view(), true)) {
                let ok = u == Array2::eye(m) && s.is_empty() && vt == Array2::eye(n);
                v.require(ok, || {
                    format!("full svd {m}x{n}: U and Vt not the identities")
                });
            }
        }
    });
}
