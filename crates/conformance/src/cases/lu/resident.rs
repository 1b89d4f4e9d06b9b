//! The resident forms of LU: the copying and in-place forms agree, solves with Aᵀ (which
//! only the resident form offers), NaN reaching the factor, a singular or non-square
//! factor handed to a solve, shapes, and arrays from another place.

use ndarray::Array2;
use ndgpu_core::{tolerance, Element, Error, Ops, Trans};

use super::special::twin_rows;
use crate::cases::common::{
    agree_and_kept, both_forms, foreign_of, same_bits, shape_mismatch, upload_all, wrong_place,
};
use crate::compare::{backward_ratio, to_f64};
use crate::data::Rng;
use crate::report::Recorder;

/// The resident LU cases.
pub(crate) fn resident<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let n = 33;
    let a: Array2<T> = rng.matrix(n, n);
    let rhs: Array2<T> = rng.matrix(n, 4);
    let limit = tolerance::solve_ratio::<T>(rec.precision());
    rec.case("lu_dev leaves A alone and equals the in-place form", |v| {
        let forms = both_forms(v, b, &a, |m| b.lu_dev(m), |m| b.lu_in_place_dev(m));
        let Some((da, f, g)) = forms else {
            return;
        };
        let (Some(one), Some(two), Some(kept)) = (
            v.ok(b.lu_unpack(&f)),
            v.ok(b.lu_unpack(&g)),
            v.ok(b.download(&da)),
        ) else {
            return;
        };
        agree_and_kept(v, one == two, kept == a, "lu_dev");
        v.require(f.dim() == (n, n) && f.pivots().len() == n, || {
            format!("factor of {:?} with {} pivots", f.dim(), f.pivots().len())
        });
        v.require(f.zero_pivot().is_none() && f.place() == b.place(), || {
            format!("zero pivot {:?}, in {}", f.zero_pivot(), f.place())
        });
    });
    rec.case(
        "lu_solve_dev with A and Aᵀ, in place and copying; solve_dev, inv_dev: ratios",
        |v| {
            let (Some(da), Some(db)) = (v.ok(b.upload(a.view())), v.ok(b.upload(rhs.view())))
            else {
                return;
            };
            let Some(f) = v.ok(b.lu_dev(&da)) else {
                return;
            };
            let a64 = to_f64(a.view());
            for trans in [Trans::No, Trans::Yes] {
                let op_a = trans.apply(a64.view()).to_owned();
                let Some(x) = v.ok(b.lu_solve_dev(&f, trans, &db).and_then(|x| b.download(&x)))
                else {
                    continue;
                };
                let r = backward_ratio(op_a.view(), x.view(), rhs.view());
                v.ratio(r / limit, || {
                    format!("lu_solve_dev {trans:?}: ratio {r:.3e} > {limit}")
                });
                let mut again = b.upload(rhs.view()).expect("uploaded above");
                if v.ok(b.lu_solve_in_place_dev(&f, trans, &mut again))
                    .is_some()
                {
                    let same = b
                        .download(&again)
                        .is_ok_and(|y| same_bits(x.iter(), y.iter()));
                    v.require(same, || format!("{trans:?}: in place and copying differ"));
                }
            }
            if let Some(x) = v.ok(b.solve_dev(&da, &db).and_then(|x| b.download(&x))) {
                let r = backward_ratio(a64.view(), x.view(), rhs.view());
                v.ratio(r / limit, || format!("solve_dev: ratio {r:.3e} > {limit}"));
            }
            if let Some(x) = v.ok(b.inv_dev(&da).and_then(|x| b.download(&x))) {
                let eye = Array2::<T>::eye(n);
                let r = backward_ratio(a64.view(), x.view(), eye.view());
                v.ratio(r / limit, || format!("inv_dev: ratio {r:.3e} > {limit}"));
            }
        },
    );
    rec.case("resident NaN in A: NonFinite from lu_in_place_dev", |v| {
        let mut bad = a.clone();
        bad[[5, 2]] = T::nan();
        let r = b.upload(bad.view()).and_then(|m| b.lu_in_place_dev(m));
        v.err(r, "NonFinite", |e| matches!(e, Error::NonFinite { .. }));
    });
    let wide: Array2<T> = rng.matrix(3, 5);
    let twins: Array2<T> = twin_rows(rng, n);
    rec.case(
        "lu_solve_dev, lu_det: non-square or singular factor, B's rows, another place",
        |v| {
            let uploads = upload_all(v, b, [&wide, &twins, &a, &rhs]);
            let (Some([dw, dt, da, db]), Some(short)) = (uploads, v.ok(b.zeros(n - 1, 2))) else {
                return;
            };
            let not_square = |e: &Error| matches!(e, Error::NotSquare { .. });
            if let Some(fw) = v.ok(b.lu_dev(&dw)) {
                v.err(b.lu_solve_dev(&fw, Trans::No, &db), "NotSquare", not_square);
                v.err(b.lu_det(&fw), "NotSquare", not_square);
            }
            v.err(b.solve_dev(&dw, &db), "NotSquare", not_square);
            v.err(b.inv_dev(&dw), "NotSquare", not_square);
            if let Some(ft) = v.ok(b.lu_dev(&dt)) {
                let singular =
                    |e: &Error| matches!(e, Error::Singular { pivot, .. } if *pivot == n - 1);
                let r = b.lu_solve_dev(&ft, Trans::Yes, &db);
                v.err(r, &format!("Singular(pivot {})", n - 1), singular);
                let d = v.ok(b.lu_det(&ft));
                v.require(d == Some(T::zero()), || {
                    format!("lu_det = {d:?}, expected 0")
                });
            }
            let Some(f) = v.ok(b.lu_dev(&da)) else {
                return;
            };
            shape_mismatch(v, b.lu_solve_dev(&f, Trans::No, &short), "ShapeMismatch");
            shape_mismatch(v, b.solve_dev(&da, &short), "ShapeMismatch (solve_dev)");
            wrong_place(
                v,
                b.lu_in_place_dev(foreign_of(n, n)),
                "WrongPlace (lu_in_place_dev)",
            );
            wrong_place(v, b.lu_dev(&foreign_of(n, n)), "WrongPlace (lu_dev)");
            let mut elsewhere = foreign_of(n, 2);
            let r = b.lu_solve_in_place_dev(&f, Trans::No, &mut elsewhere);
            wrong_place(v, r, "WrongPlace (B from elsewhere)");
            wrong_place(
                v,
                b.solve_dev(&foreign_of(n, n), &db),
                "WrongPlace (solve_dev)",
            );
            wrong_place(v, b.inv_dev(&foreign_of(n, n)), "WrongPlace (inv_dev)");
        },
    );
}
