//! The resident forms (`*_dev`) where the host forms cannot reach them: what the host
//! forms check before uploading (shapes, empty min/max, NaN) must also be refused on
//! resident data; β = 0 must not read a resident C full of NaN; per-axis results keep
//! their dimensions; in-place and copying forms agree; an array from another place is
//! [`Error::WrongPlace`]. The results themselves are checked by the host cases, which
//! run through the resident forms.
//!
//! The resident cases of the triangular solve, LU and QR live with their families
//! (`trsm`, `lu`, `qr`); the helpers they share with these are in `common`.

use ndarray::{Array2, Axis};
use ndgpu_core::{
    tolerance, ArgOp, Element, Error, Family, Gemm, Init, KMeansConfig, Matrix, Ops, ReduceOp,
    Trans,
};

use super::common::{agree_and_kept, foreign_of, same_bits, shape_mismatch, wrong_place};
use crate::compare::{describe_ratio, gemm_bound, gemm_f64, max_ratio, product_tolerance};
use crate::data::{spd, Rng};
use crate::report::Recorder;

/// A 2×2 matrix from nowhere (for operations that take any shape).
fn foreign<T: Element>() -> Matrix<T> {
    foreign_of(2, 2)
}

/// The resident cases of `family`.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    family: Family,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    match family {
        Family::MatMul => gemm(b, rng, rec),
        Family::Gram => copies(b, family, rng, rec),
        Family::Transpose => {
            copies(b, family, rng, rec);
            transfers_into(b, rng, rec);
        }
        Family::Reduce => reduce(b, rng, rec),
        Family::Cholesky => cholesky(b, rng, rec),
        Family::KMeans => kmeans(b, rng, rec),
        Family::Trsm => super::trsm::resident(b, rng, rec),
        Family::Lu => super::lu::resident(b, rng, rec),
        Family::Qr => super::qr::resident(b, rng, rec),
        // The spectra's resident forms are among the family's own cases.
        Family::Spectra => {}
    }
}

fn gemm<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    for (m, n, k) in [(1, 1, 1), (7, 33, 65), (65, 33, 129)] {
        for (ta, tb) in [(Trans::No, Trans::No), (Trans::Yes, Trans::Yes)] {
            let a: Array2<T> = rng.matrix(ta.dim((m, k)).0, ta.dim((m, k)).1);
            let bm: Array2<T> = rng.matrix(tb.dim((k, n)).0, tb.dim((k, n)).1);
            let g = Gemm::new().alpha(T::from_f64(0.75)).ta(ta).tb(tb);
            // `gemm_bound` is the IEEE bound; a variant on TF32 gets its own tolerance.
            let rescale = product_tolerance::<T>(k, rec.precision()) / tolerance::gemm::<T>(k);
            rec.case(
                format!("gemm_dev {m}x{n}x{k} {ta:?}/{tb:?} beta=0 over a resident C of NaN"),
                |v| {
                    let nan = Array2::from_elem((m, n), T::nan());
                    let (Some(da), Some(db), Some(mut dc)) = (
                        v.ok(b.upload(a.view())),
                        v.ok(b.upload(bm.view())),
                        v.ok(b.upload(nan.view())),
                    ) else {
                        return;
                    };
                    if v.ok(b.gemm_dev(g, &da, &db, &mut dc)).is_none() {
                        return;
                    }
                    let Some(got) = v.ok(b.download(&dc)) else {
                        return;
                    };
                    let want = gemm_f64(&g, a.view(), bm.view(), None);
                    let bound = gemm_bound(&g, a.view(), bm.view(), None) * rescale;
                    let worst = max_ratio(got.view(), want.view(), bound.view());
                    v.ratio(worst.0, || {
                        describe_ratio("vs f64 definition", got.view(), want.view(), worst)
                    });
                },
            );
        }
    }
    let a34: Array2<T> = rng.matrix(3, 4);
    let b42: Array2<T> = rng.matrix(4, 2);
    rec.case(
        "gemm_dev errors: inner dimensions, C's shape, another place",
        |v| {
            let (Some(da), Some(db), Some(mut c32), Some(mut c22)) = (
                v.ok(b.upload(a34.view())),
                v.ok(b.upload(b42.view())),
                v.ok(b.zeros(3, 2)),
                v.ok(b.zeros(2, 2)),
            ) else {
                return;
            };
            let plain = Gemm::new();
            let r = b.gemm_dev(plain.ta(Trans::Yes), &da, &db, &mut c32);
            shape_mismatch(v, r, "ShapeMismatch ((3x4)ᵀ times 4x2)");
            let r = b.gemm_dev(plain, &da, &db, &mut c22);
            shape_mismatch(v, r, "ShapeMismatch (C 2x2 for a 3x2 product)");
            let r = b.gemm_dev(plain, &foreign_of(3, 4), &db, &mut c32);
            wrong_place(v, r, "WrongPlace (A from elsewhere)");
            let r = b.matmul_dev(&da, &da);
            shape_mismatch(v, r, "ShapeMismatch (matmul_dev 3x4 times 3x4)");
        },
    );
}

/// Gram and transpose return new matrices: their shapes, and another place refused.
fn copies<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    family: Family,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    let m: Array2<T> = rng.matrix(5, 3);
    rec.case(
        format!("{family}_dev: shape of the result, another place"),
        |v| {
            let Some(dm) = v.ok(b.upload(m.view())) else {
                return;
            };
            let (r, want) = match family {
                Family::Gram => (b.gram_dev(&dm), (5, 5)),
                _ => (b.transpose_dev(&dm), (3, 5)),
            };
            if let Some(r) = v.ok(r) {
                v.require(r.dim() == want, || {
                    format!("shape {:?}, expected {want:?}", r.dim())
                });
                v.require(r.place() == b.place(), || {
                    format!("result in {}", r.place())
                });
            }
            let r = match family {
                Family::Gram => b.gram_dev(&foreign()),
                _ => b.transpose_dev(&foreign()),
            };
            wrong_place(v, r, "WrongPlace");
        },
    );
}

/// `upload_into` and `download_into`: any layout both ways, exactly (a transfer copies
/// bits); another shape or place refused, the destination untouched.
fn transfers_into<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let a: Array2<T> = rng.matrix(6, 4);
    rec.case("upload_into, download_into: any layout, exact", |v| {
        let Some(mut m) = v.ok(b.alloc(4, 6)) else {
            return;
        };
        // A transposed (Fortran-ordered) view in, into a transposed view out.
        if v.ok(b.upload_into(a.t(), &mut m)).is_none() {
            return;
        }
        let mut out = Array2::<T>::zeros((6, 4));
        if v.ok(b.download_into(&m, out.view_mut().reversed_axes()))
            .is_some()
        {
            v.require(same_bits(out.iter(), a.iter()), || {
                format!("came back as {out:?}, sent {a:?}")
            });
        }
        // A strided view in, a C-ordered array out.
        let half = a.slice(ndarray::s![..;2, ..]);
        let Some(mut h) = v.ok(b.alloc(3, 4)) else {
            return;
        };
        if v.ok(b.upload_into(half, &mut h)).is_some() {
            let mut back = Array2::<T>::zeros((3, 4));
            if v.ok(b.download_into(&h, back.view_mut())).is_some() {
                v.require(same_bits(back.iter(), half.iter()), || {
                    format!("came back as {back:?}, sent {half:?}")
                });
            }
        }
    });
    rec.case("host_array: zeroed, and a round trip through it", |v| {
        let Some(mut h) = v.ok(b.host_array(6, 4)) else {
            return;
        };
        v.require(h.dim() == (6, 4), || format!("shape {:?}", h.dim()));
        v.require(h.view().iter().all(|x| *x == T::zero()), || {
            "not zeroed".to_string()
        });
        h.view_mut().assign(&a);
        let Some(m) = v.ok(b.upload(h.view())) else {
            return;
        };
        let Some(mut back) = v.ok(b.host_array(6, 4)) else {
            return;
        };
        if v.ok(b.download_into(&m, back.view_mut())).is_some() {
            v.require(same_bits(back.view().iter(), a.iter()), || {
                format!("came back as {:?}", back.view())
            });
        }
    });
    rec.case("upload_into, download_into: another shape or place", |v| {
        let Some(mut m) = v.ok(b.upload(a.view())) else {
            return;
        };
        shape_mismatch(v, b.upload_into(a.t(), &mut m), "ShapeMismatch");
        let mut out = Array2::<T>::zeros((4, 6));
        shape_mismatch(v, b.download_into(&m, out.view_mut()), "ShapeMismatch");
        v.require(out.iter().all(|x| *x == T::zero()), || {
            "a refused download wrote into the array".to_string()
        });
        if let Some(back) = v.ok(b.download(&m)) {
            v.require(same_bits(back.iter(), a.iter()), || {
                "a refused upload changed the matrix".to_string()
            });
        }
        wrong_place(
            v,
            b.upload_into(a.view(), &mut foreign_of(6, 4)),
            "WrongPlace",
        );
        let mut out = Array2::<T>::zeros((6, 4));
        wrong_place(
            v,
            b.download_into(&foreign_of(6, 4), out.view_mut()),
            "WrongPlace",
        );
    });
}

fn reduce<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let a: Array2<T> = rng.matrix(7, 5);
    rec.case(
        "reduce_axis_dev keeps dimensions and agrees with the host form",
        |v| {
            let Some(da) = v.ok(b.upload(a.view())) else {
                return;
            };
            for (axis, shape) in [(Axis(0), (1, 5)), (Axis(1), (7, 1))] {
                for op in ReduceOp::ALL {
                    let dev = b.reduce_axis_dev(op, &da, axis);
                    let Some((r, host)) = v.both(dev, b.reduce_axis(op, a.view(), axis)) else {
                        continue;
                    };
                    v.require(r.dim() == shape, || {
                        format!(
                            "{op:?} along {axis:?}: shape {:?}, expected {shape:?}",
                            r.dim()
                        )
                    });
                    if let Some(got) = v.ok(b.download(&r)) {
                        let same = same_bits(got.iter(), host.iter());
                        v.require(same, || format!("{op:?} along {axis:?}: {got} vs {host}"));
                    }
                }
                for op in ArgOp::ALL {
                    let dev = b.arg_reduce_axis_dev(op, &da, axis);
                    let Some((i, host)) = v.both(dev, b.arg_reduce_axis(op, a.view(), axis)) else {
                        continue;
                    };
                    let got = v.ok(b.download_indices(&i));
                    v.require(got.as_ref() == Some(&host), || {
                        format!("{op:?} along {axis:?}: {got:?} vs {host}")
                    });
                }
            }
        },
    );
    rec.case(
        "resident min, max, argmin of nothing; dot_dev shapes; another place",
        |v| {
            let empty: ndgpu_core::Result<Matrix<T>> = b.zeros(0, 3);
            let (Some(e), Some(x), Some(y)) =
                (v.ok(empty), v.ok(b.upload(a.view())), v.ok(b.upload(a.t())))
            else {
                return;
            };
            let is_empty = |e: &Error| matches!(e, Error::Empty { .. });
            v.err(b.reduce_dev(ReduceOp::Min, &e), "Empty", is_empty);
            v.err(b.reduce_dev(ReduceOp::Max, &e), "Empty", is_empty);
            v.err(b.arg_reduce_dev(ArgOp::ArgMin, &e), "Empty", is_empty);
            shape_mismatch(v, b.dot_dev(&x, &y), "ShapeMismatch (7x5 with 5x7)");
            let r = b.reduce_dev(ReduceOp::Sum, &foreign());
            wrong_place(v, r, "WrongPlace");
            let r = b.arg_reduce_axis_dev(ArgOp::ArgMax, &foreign(), Axis(0));
            wrong_place(v, r, "WrongPlace");
        },
    );
}

fn cholesky<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let n = 33;
    let a: Array2<T> = spd(rng, n);
    let rhs: Array2<T> = rng.matrix(n, 4);
    rec.case(
        "cholesky_dev leaves A alone and equals the in-place form",
        |v| {
            let Some(da) = v.ok(b.upload(a.view())) else {
                return;
            };
            let Some((f, g)) = v.both(
                b.cholesky_dev(&da),
                b.cholesky_in_place_dev(b.upload(a.view()).expect("uploaded above")),
            ) else {
                return;
            };
            let (Some(l1), Some(l2), Some(a2)) = (
                v.ok(b.download(f.l())),
                v.ok(b.download(g.l())),
                v.ok(b.download(&da)),
            ) else {
                return;
            };
            agree_and_kept(v, l1 == l2, a2 == a, "cholesky_dev");
            let upper = l1
                .indexed_iter()
                .any(|((i, j), x)| j > i && *x != T::zero());
            v.require(!upper, || "the factor is not lower triangular".into());
        },
    );
    rec.case(
        "resident NaN in row 5 of A: NotPositiveDefinite at pivot 5, not finite",
        |v| {
            let mut bad = a.clone();
            bad[[5, 2]] = T::nan();
            let Some(da) = v.ok(b.upload(bad.view())) else {
                return;
            };
            v.err(b.cholesky_in_place_dev(da), "NotPositiveDefinite at 5", |e| {
            matches!(e, Error::NotPositiveDefinite { pivot: 5, value } if !value.is_finite())
        });
        },
    );
    rec.case(
        "cholesky_solve_dev: Inf in a column of B stays in it; shapes; places",
        |v| {
            let Some(f) = v.ok(b.cholesky_dev(&b.upload(a.view()).expect("upload"))) else {
                return;
            };
            let mut bad = rhs.clone();
            bad[[3, 1]] = T::infinity();
            let (Some(mut db), Some(short)) = (v.ok(b.upload(bad.view())), v.ok(b.zeros(n - 1, 2)))
            else {
                return;
            };
            let r = b
                .cholesky_solve_in_place_dev(&f, &mut db)
                .and_then(|()| b.download(&db));
            if let Some(x) = v.ok(r) {
                let finite = |c: usize| x.column(c).iter().all(|x| x.is_finite());
                v.require(!finite(1), || "the Inf of column 1 of B is gone".into());
                let others = [0, 2, 3].iter().all(|&c| finite(c));
                v.require(others, || "Inf in one column of B reached another".into());
            }
            shape_mismatch(v, b.cholesky_solve_dev(&f, &short), "ShapeMismatch");
            let r = b.cholesky_in_place_dev(foreign_of(n, n));
            wrong_place(v, r, "WrongPlace");
            let mut elsewhere = foreign_of(n, 4);
            let r = b.cholesky_solve_in_place_dev(&f, &mut elsewhere);
            wrong_place(v, r, "WrongPlace (B from elsewhere)");
        },
    );
}

fn kmeans<T: Element, B: Ops<T> + ?Sized>(b: &B, rng: &mut Rng, rec: &mut Recorder) {
    let x: Array2<T> = rng.matrix(64, 3);
    let c: Array2<T> = rng.matrix(4, 3);
    let config = KMeansConfig::new(4).init(Init::Given(c.mapv(|v| v.as_f64())));
    rec.case(
        "kmeans_dev and the host form: labels are those of the nearest returned centroid",
        |v| {
            let Some(dx) = v.ok(b.upload(x.view())) else {
                return;
            };
            let dev = b.kmeans_dev(&dx, &config);
            let Some((fit, host)) = v.both(dev, b.kmeans(x.view(), &config)) else {
                return;
            };
            let Some(labels) = v.ok(b.download_indices(&fit.labels)) else {
                return;
            };
            // Variants that sum centroids with atomics need not repeat a fit bit for bit,
            // so the two forms are each checked for what every fit guarantees.
            v.require(fit.iterations == fit.inertia_history.len(), || {
                "iterations and history disagree".into()
            });
            if let Some(again) = v.ok(b.predict_dev(&dx, &fit.centroids)) {
                let again = v.ok(b.download_indices(&again));
                v.require(again.as_ref() == Some(&labels), || {
                    "predict_dev disagrees with the resident fit".into()
                });
            }
            if let Some(again) = v.ok(b.predict(x.view(), host.centroids.view())) {
                v.require(again == host.labels, || {
                    "predict disagrees with the host fit".into()
                });
            }
        },
    );
    rec.case("k-means steps: shapes, NaN named, another place", |v| {
        let (Some(dx), Some(dc), Some(mut labels), Some(mut wrong)) = (
            v.ok(b.upload(x.view())),
            v.ok(b.upload(c.view())),
            v.ok(b.unlabeled(64)),
            v.ok(b.unlabeled(63)),
        ) else {
            return;
        };
        shape_mismatch(
            v,
            b.assign_dev(&dx, &dc, &mut wrong),
            "ShapeMismatch (labels)",
        );
        v.err(
            b.download_indices(&labels),
            "InvalidArgument (labels never assigned)",
            |e| matches!(e, Error::InvalidArgument { .. }),
        );
        let Some(c2) = v.ok(b.zeros(4, 2)) else {
            return;
        };
        shape_mismatch(v, b.assign_dev(&dx, &c2, &mut labels), "ShapeMismatch (D)");
        shape_mismatch(
            v,
            b.update_dev(&dx, &labels, &mut wrong_c(b)),
            "ShapeMismatch (D)",
        );
        let mut bad = x.clone();
        bad[[9, 1]] = T::nan();
        if let Some(dbad) = v.ok(b.upload(bad.view())) {
            v.err(b.kmeans_dev(&dbad, &config), "NonFinite at (9, 1)", |e| {
                matches!(e, Error::NonFinite { index: (9, 1), .. })
            });
        }
        let r = b.predict_dev(&foreign_of(64, 3), &dc);
        wrong_place(v, r, "WrongPlace");
    });
}

/// Centroids of the wrong dimension (for the shape check of an update).
fn wrong_c<T: Element, B: Ops<T> + ?Sized>(b: &B) -> Matrix<T> {
    b.zeros(4, 2).expect("a 4x2 matrix")
}
