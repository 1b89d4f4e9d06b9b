//! The resident forms of QR: the copying and in-place forms agree, Q applied both ways
//! gives B back, `lstsq_dev`, NaN reaching the factor, shapes, and arrays from another
//! place.

use ndarray::Array2;
use ndgpu_core::{tolerance, Element, Error, Ops, Trans};

use super::{check_lstsq, dependent};
use crate::cases::common::{
    agree_and_kept, both_forms, foreign_of, same_bits, shape_mismatch, upload_all, wrong_place,
};
use crate::compare::{norm1, ratio, to_f64};
use crate::data::Rng;
use crate::report::Recorder;

/// The resident QR cases.
pub(crate) fn resident<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let (m, n) = (65, 33);
    let a: Array2<T> = rng.matrix(m, n);
    let rhs: Array2<T> = rng.matrix(m, 3);
    let precision = rec.precision();
    rec.case("qr_dev leaves A alone and equals the in-place form", |v| {
        let forms = both_forms(v, b, &a, |x| b.qr_dev(x), |x| b.qr_in_place_dev(x));
        let Some((da, f, g)) = forms else {
            return;
        };
        let parts = |f: &ndgpu_core::QrFactor<T>| -> ndgpu_core::Result<_> {
            Ok((b.download(f.packed())?, b.download(f.tau())?))
        };
        let (Some((p1, t1)), Some((p2, t2)), Some(kept)) =
            (v.ok(parts(&f)), v.ok(parts(&g)), v.ok(b.download(&da)))
        else {
            return;
        };
        let same = same_bits(p1.iter(), p2.iter()) && same_bits(t1.iter(), t2.iter());
        agree_and_kept(v, same, kept == a, "qr_dev");
        v.require(f.dim() == (m, n) && f.place() == b.place(), || {
            format!("factor of {:?} in {}", f.dim(), f.place())
        });
    });
    rec.case(
        "qr_apply_in_place_dev: Q·(Qᵀ·B) = B; lstsq_dev: ratio",
        |v| {
            let (Some(da), Some(mut db)) = (v.ok(b.upload(a.view())), v.ok(b.upload(rhs.view())))
            else {
                return;
            };
            let Some(f) = v.ok(b.qr_dev(&da)) else {
                return;
            };
            let applied = b
                .qr_apply_in_place_dev(&f, Trans::Yes, &mut db)
                .and_then(|()| b.qr_apply_in_place_dev(&f, Trans::No, &mut db))
                .and_then(|()| b.download(&db));
            if let Some(back) = v.ok(applied) {
                // Each application is backward stable, as the orthogonality of Q.
                let limit = 2.0 * tolerance::orthogonality_ratio::<T>(precision);
                let diff = to_f64(back.view()) - to_f64(rhs.view());
                let scale = m as f64 * T::EPS * norm1(to_f64(rhs.view()).view());
                let r = ratio(norm1(diff.view()), scale);
                v.ratio(r / limit, || {
                    format!("‖B − Q·Qᵀ·B‖₁/(m·ε·‖B‖₁) = {r:.3e} > {limit}")
                });
            }
            let Some(db) = v.ok(b.upload(rhs.view())) else {
                return;
            };
            if let Some(x) = v.ok(b.lstsq_dev(&da, &db).and_then(|x| b.download(&x))) {
                check_lstsq(v, &a, &x, &rhs, precision);
            }
        },
    );
    let wide: Array2<T> = rng.matrix(n, m);
    let deficient: Array2<T> = dependent(rng, m, n);
    rec.case(
        "qr_apply_in_place_dev, lstsq_dev: shapes, m < n, rank, NaN, another place",
        |v| {
            let uploads = upload_all(v, b, [&a, &wide, &deficient, &rhs]);
            let (Some([da, dw, dd, db]), Some(mut short)) = (uploads, v.ok(b.zeros(m - 1, 2)))
            else {
                return;
            };
            let Some(f) = v.ok(b.qr_dev(&da)) else {
                return;
            };
            let r = b.qr_apply_in_place_dev(&f, Trans::No, &mut short);
            shape_mismatch(v, r, "ShapeMismatch (qr_apply)");
            shape_mismatch(v, b.lstsq_dev(&da, &short), "ShapeMismatch (lstsq_dev)");
            let r = b.lstsq_dev(&dw, &db);
            v.err(r, "InvalidArgument", |e| {
                matches!(e, Error::InvalidArgument { .. })
            });
            let coarse =
                precision == ndgpu_core::Precision::Tf32 && T::DTYPE == ndgpu_core::DType::F32;
            let r = b.lstsq_dev(&dd, &db);
            if !(coarse && r.is_ok()) {
                v.err(r, "RankDeficient(column 2)", |e| {
                    matches!(e, Error::RankDeficient { column: 2, .. })
                });
            }
            let mut bad = a.clone();
            bad[[9, 4]] = T::nan();
            let r = b.upload(bad.view()).and_then(|x| b.qr_in_place_dev(x));
            v.err(r, "NonFinite", |e| matches!(e, Error::NonFinite { .. }));
            let r = b.qr_in_place_dev(foreign_of(m, n));
            wrong_place(v, r, "WrongPlace (qr_in_place_dev)");
            wrong_place(v, b.qr_dev(&foreign_of(m, n)), "WrongPlace (qr_dev)");
            let r = b.qr_apply_in_place_dev(&f, Trans::Yes, &mut foreign_of(m, 2));
            wrong_place(v, r, "WrongPlace (B from elsewhere)");
            let r = b.lstsq_dev(&foreign_of(m, n), &db);
            wrong_place(v, r, "WrongPlace (lstsq_dev)");
        },
    );
}
