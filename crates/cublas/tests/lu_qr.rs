//! GPU tests of the vendor backend's LU, QR and triangular solves: residuals with
//! LAPACK's test ratios, forward errors against the CPU backend and f64 host solves,
//! the errors (singular, non-finite, rank deficient), and the host waits of resident
//! chains. Run on a CUDA machine with
//! `cargo test -p ndgpu-cublas --test lu_qr -- --ignored`.

mod common;

use std::sync::Arc;

use common::*;
use ndarray::Array2;
use ndgpu_conformance::compare::{norm1, to_f64};
use ndgpu_conformance::{assert_family, Sizes};
use ndgpu_core::{
    tolerance, Backend, Device, Element, Error, FactorLayout, Factorize, Family, Memory, QrMode,
    Trans, Triangular, Uplo,
};
use ndgpu_cpu::CpuBackend;
use ndgpu_cublas::{BlasElement, CublasBackend};
use ndgpu_cuda_runtime::Gpu;

#[test]
#[ignore = "needs a CUDA device"]
fn conformance_trsm_lu_qr() {
    let mut b = backend();
    for (family, name) in [
        (Family::Trsm, "trsm"),
        (Family::Lu, "getrf"),
        (Family::Qr, "geqrf"),
    ] {
        assert_eq!(b.variants(family), [name]);
        every_variant(&mut b, family, |b, _| {
            assert_family(b, family, Sizes::from_env(Sizes::Medium))
        });
    }
}

/// X with `a·X = b` in f64, by Gaussian elimination with partial pivoting.
fn host_solve(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
    let n = a.nrows();
    let (mut a, mut x) = (a.clone(), b.clone());
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| a[[i, c]].abs().total_cmp(&a[[j, c]].abs()))
            .unwrap();
        for j in 0..n {
            a.swap([c, j], [p, j]);
        }
        for j in 0..x.ncols() {
            x.swap([c, j], [p, j]);
        }
        for r in c + 1..n {
            let f = a[[r, c]] / a[[c, c]];
            for j in c..n {
                a[[r, j]] -= f * a[[c, j]];
            }
            for j in 0..x.ncols() {
                x[[r, j]] -= f * x[[c, j]];
            }
        }
    }
    for c in (0..n).rev() {
        for j in 0..x.ncols() {
            let s: f64 = (c + 1..n).map(|k| a[[c, k]] * x[[k, j]]).sum();
            x[[c, j]] = (x[[c, j]] - s) / a[[c, c]];
        }
    }
    x
}

/// κ₁(a) in f64.
fn cond1(a: &Array2<f64>) -> f64 {
    let inv = host_solve(a, &Array2::eye(a.nrows()));
    norm1(a.view()) * norm1(inv.view())
}

/// LAPACK's solve ratio (xGET02), worst column: `‖bⱼ − a·xⱼ‖₁ / (n·ε·‖a‖₁·‖xⱼ‖₁)`.
fn residual_ratio<T: Element>(a: &Array2<f64>, x: &Array2<T>, b: &Array2<T>) -> f64 {
    let n = a.nrows().max(1) as f64;
    let (x, b) = (to_f64(x.view()), to_f64(b.view()));
    let r = &b - &a.dot(&x);
    let an = norm1(a.view());
    (0..x.ncols())
        .map(|j| {
            let rn: f64 = r.column(j).iter().map(|v| v.abs()).sum();
            let xn: f64 = x.column(j).iter().map(|v| v.abs()).sum();
            if rn == 0.0 {
                0.0
            } else {
                rn / (n * T::EPS * an * xn)
            }
        })
        .fold(0.0, f64::max)
}

/// Panics unless `max |got − want| ≤ rel · max |want|` (and the shapes agree).
fn assert_close<T: Element>(what: &str, got: &Array2<T>, want: &Array2<f64>, rel: f64) {
    assert_eq!(got.dim(), want.dim(), "{what}: shape");
    let scale = want
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    let diff = got
        .iter()
        .zip(want.iter())
        .fold(0.0f64, |m, (g, w)| m.max((g.as_f64() - w).abs()));
    assert!(
        diff <= rel * scale,
        "{what}: off by {diff:e}, allowed {:e}",
        rel * scale
    );
}

fn transposed(a: &Array2<f64>) -> Array2<f64> {
    a.t().to_owned()
}

/// Square solves through LU, both ops, host and resident forms, and det.
fn lu_solves<T: BlasElement>(b: &CublasBackend) {
    let cpu = CpuBackend::new();
    for (i, &n) in [1usize, 2, 17, 64, 200].iter().enumerate() {
        let a = random::<T>((n, n), 100 + i as u64);
        let a64 = to_f64(a.view());
        let forward = 10.0 * n as f64 * T::EPS * cond1(&a64);
        for (j, nrhs) in [1, 3, 2 * n + 1].into_iter().enumerate() {
            let rhs = random::<T>((n, nrhs), 200 + 10 * i as u64 + j as u64);
            let what = format!("{} solve n = {n}, nrhs = {nrhs}", T::DTYPE);
            let x = b.solve(a.view(), rhs.view()).unwrap();
            let r = residual_ratio(&a64, &x, &rhs);
            assert!(r <= tolerance::SOLVE_RATIO, "{what}: ratio {r}");
            let want = cpu.solve(a.view(), rhs.view()).unwrap();
            assert_close(&what, &x, &to_f64(want.view()), 2.0 * forward);
        }
        let f = b.lu_dev(&b.upload(a.view()).unwrap()).unwrap();
        assert_eq!(
            (f.layout(), f.dim(), f.zero_pivot()),
            (FactorLayout::ColMajor, (n, n), None)
        );
        let rhs = random::<T>((n, 4), 300 + i as u64);
        let x = b.lu_solve_dev(&f, Trans::Yes, &b.upload(rhs.view()).unwrap());
        let x = b.download(&x.unwrap()).unwrap();
        let r = residual_ratio(&transposed(&a64), &x, &rhs);
        assert!(
            r <= tolerance::SOLVE_RATIO,
            "{} Aᵀ·X = B, n = {n}: ratio {r}",
            T::DTYPE
        );
        let (sign, log) = b.lu_slogdet(&f).unwrap();
        let (want_sign, want_log) = cpu.slogdet(a.view()).unwrap();
        assert_eq!(sign, want_sign, "slogdet sign, n = {n}");
        assert!(
            (log - want_log).abs() <= forward.max(1e-12) * want_log.abs().max(1.0),
            "slogdet n = {n}: {log} vs {want_log}"
        );
    }
}

both_dtypes_test!(
    lu_solves_meet_the_lapack_ratio_and_agree_with_the_cpu,
    lu_solves
);

/// `(P, L, U)` of rectangular matrices: `P·L·U = A` (xGET01's ratio), `|L| ≤ 1`, and
/// for f64 the CPU backend's row order.
fn lu_rectangular<T: BlasElement>(b: &CublasBackend) {
    let cpu = CpuBackend::new();
    for (i, &(m, n)) in [(1, 1), (5, 3), (3, 5), (64, 17), (17, 64)]
        .iter()
        .enumerate()
    {
        let a = random::<T>((m, n), 400 + i as u64);
        let (p, l, u) = b.lu(a.view()).unwrap();
        let k = m.min(n);
        assert_eq!((p.dim(), l.dim(), u.dim()), ((m, m), (m, k), (k, n)));
        assert!(l.iter().all(|v| v.as_f64().abs() <= 1.0), "|L| ≤ 1");
        let (p64, l64, u_64) = (to_f64(p.view()), to_f64(l.view()), to_f64(u.view()));
        let a64 = to_f64(a.view());
        let err = norm1((&p64.dot(&l64).dot(&u_64) - &a64).view());
        let ratio = err / (k as f64 * T::EPS * norm1(a64.view()));
        assert!(ratio <= 30.0, "{} lu {m}x{n}: ratio {ratio}", T::DTYPE);
        if T::EPS < 1e-10 {
            let (cp, _, _) = cpu.lu(a.view()).unwrap();
            assert_eq!(
                p, cp,
                "lu {m}x{n}: the rows chosen differ from the CPU backend's"
            );
        }
    }
}

both_dtypes_test!(lu_of_rectangular_matrices_reassembles_a, lu_rectangular);

#[test]
#[ignore = "needs a CUDA device"]
fn a_singular_matrix_factors_with_its_zero_pivot_and_solves_refuse_it() {
    let b = backend();
    let mut a = random::<f64>((6, 6), 7);
    a.column_mut(2).fill(0.0);
    let f = b.lu_dev(&b.upload(a.view()).unwrap()).unwrap();
    assert_eq!(f.zero_pivot(), Some(2));
    let packed = b.download(f.packed()).unwrap();
    assert!(
        packed.iter().all(|v| v.is_finite()),
        "no NaN in a singular factor"
    );
    let rhs = b.upload(random::<f64>((6, 2), 8).view()).unwrap();
    assert!(matches!(
        b.lu_solve_dev(&f, Trans::No, &rhs),
        Err(Error::Singular { pivot: 2, .. })
    ));
    assert_eq!(b.lu_det(&f).unwrap(), 0.0);
    assert_eq!(b.lu_slogdet(&f).unwrap(), (0.0, f64::NEG_INFINITY));
    assert!(matches!(
        b.solve(a.view(), random::<f64>((6, 1), 9).view()),
        Err(Error::Singular {
            op: "solve",
            pivot: 2
        })
    ));
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_in_a_resident_matrix_is_reported_from_it_or_its_factor() {
    let b = backend();
    // cuSOLVER's getrf was seen to factor such a matrix into a finite factor: the NaN
    // is then found in A's row sums and named from A.
    for (m, n, bad) in [(9, 7, f64::NAN), (33, 33, f64::NAN), (7, 9, f64::INFINITY)] {
        let mut a = random::<f64>((m, n), 10);
        a[[4, 3]] = bad;
        let da = b.upload(a.view()).unwrap();
        for got in [b.lu_dev(&da).map(drop), b.qr_dev(&da).map(drop)] {
            let named = |e: &Error| match e {
                Error::NonFinite {
                    what: "A",
                    index,
                    value,
                    ..
                } => *index == (4, 3) && (value.is_nan() == bad.is_nan()),
                Error::NonFinite { what, .. } => *what == "A (found in its factor)",
                _ => false,
            };
            assert!(matches!(&got, Err(e) if named(e)), "{m}x{n}: {got:?}");
        }
    }
}

/// Every triangle, op and diagonal, with the other triangle poisoned (never read) and,
/// for a unit diagonal, a zero diagonal (never read either).
fn triangular<T: BlasElement>(b: &CublasBackend) {
    let cpu = CpuBackend::new();
    for (i, &n) in [1usize, 5, 64, 200].iter().enumerate() {
        // Diagonally dominant: κ stays small at every n.
        let raw = random::<T>((n, n), 500 + i as u64).mapv(|v| v.as_f64() / n as f64);
        for uplo in [Uplo::Lower, Uplo::Upper] {
            for trans in [Trans::No, Trans::Yes] {
                for unit in [false, true] {
                    let tri = Triangular { uplo, trans, unit };
                    let inside = |r: usize, c: usize| match uplo {
                        Uplo::Lower => c <= r,
                        Uplo::Upper => c >= r,
                    };
                    let a = Array2::from_shape_fn((n, n), |(r, c)| match (r == c, inside(r, c)) {
                        (true, _) if unit => T::zero(),
                        (true, _) => T::from_f64(1.5 + raw[[r, c]]),
                        (false, true) => T::from_f64(raw[[r, c]]),
                        (false, false) => T::nan(),
                    });
                    // op(T) in f64, as the solve reads it.
                    let t = Array2::from_shape_fn((n, n), |(r, c)| match (r == c, inside(r, c)) {
                        (true, _) if unit => 1.0,
                        (_, true) => a[[r, c]].as_f64(),
                        _ => 0.0,
                    });
                    let t = if trans == Trans::Yes {
                        transposed(&t)
                    } else {
                        t
                    };
                    let rhs = random::<T>((n, 3), 600 + i as u64);
                    let what = format!("{} n = {n} {tri:?}", T::DTYPE);
                    let x = b.solve_triangular(a.view(), rhs.view(), tri).unwrap();
                    let r = residual_ratio(&t, &x, &rhs);
                    assert!(r <= tolerance::SOLVE_RATIO, "{what}: ratio {r}");
                    let want = cpu.solve_triangular(a.view(), rhs.view(), tri).unwrap();
                    let forward = 10.0 * n as f64 * T::EPS * cond1(&t);
                    assert_close(&what, &x, &to_f64(want.view()), 2.0 * forward);
                }
            }
        }
    }
}

both_dtypes_test!(solve_triangular_reads_only_its_triangle, triangular);

#[test]
#[ignore = "needs a CUDA device"]
fn a_zero_on_a_read_diagonal_is_singular_and_leaves_b_as_it_was() {
    let b = backend();
    let mut a = Array2::<f64>::eye(5) * 2.0;
    a[[3, 3]] = 0.0;
    let rhs = random::<f64>((5, 2), 11);
    let da = b.upload(a.view()).unwrap();
    let mut x = b.upload(rhs.view()).unwrap();
    let got = b.solve_triangular_in_place_dev(&da, Triangular::upper(), &mut x);
    assert!(
        matches!(
            got,
            Err(Error::Singular {
                op: "solve_triangular",
                pivot: 3
            })
        ),
        "{got:?}"
    );
    assert_eq!(b.download(&x).unwrap(), rhs);
    // With a unit diagonal the zero is not read.
    let unit = Triangular::upper().unit(true);
    b.solve_triangular_in_place_dev(&da, unit, &mut x).unwrap();
    assert_eq!(b.download(&x).unwrap(), rhs, "the identity's solve");
}

/// Q and R of tall, square and wide matrices: `Q·R = A`, Q orthonormal, R upper; Q
/// applied and then undone.
fn qr_checks<T: BlasElement>(b: &CublasBackend) {
    for (i, &(m, n)) in [(1, 1), (5, 3), (3, 5), (64, 17), (300, 40)]
        .iter()
        .enumerate()
    {
        let a = random::<T>((m, n), 700 + i as u64);
        let a64 = to_f64(a.view());
        let k = m.min(n);
        let bound = 30.0 * m.max(n) as f64 * T::EPS;
        for (mode, cols) in [(QrMode::Reduced, k), (QrMode::Complete, m)] {
            let what = format!("{} qr {m}x{n} {mode:?}", T::DTYPE);
            let (q, r) = b.qr(a.view(), mode).unwrap();
            assert_eq!((q.dim(), r.dim()), ((m, cols), (cols, n)), "{what}");
            let (q, r) = (to_f64(q.view()), to_f64(r.view()));
            assert!(
                r.indexed_iter().all(|((i, j), v)| j >= i || *v == 0.0),
                "{what}: R"
            );
            assert_close(&format!("{what}: Q·R"), &q.dot(&r), &a64, bound);
            assert_close(
                &format!("{what}: QᵀQ"),
                &q.t().dot(&q),
                &Array2::eye(cols),
                bound,
            );
        }
        let f = b.qr_dev(&b.upload(a.view()).unwrap()).unwrap();
        assert_eq!(
            (f.layout(), f.dim(), f.tau().dim()),
            (FactorLayout::ColMajor, (m, n), (k, 1))
        );
        let rhs = random::<T>((m, 3), 800 + i as u64);
        let mut x = b.upload(rhs.view()).unwrap();
        b.qr_apply_in_place_dev(&f, Trans::No, &mut x).unwrap();
        b.qr_apply_in_place_dev(&f, Trans::Yes, &mut x).unwrap();
        let back = b.download(&x).unwrap();
        assert_close(
            &format!("{} QᵀQ·B, {m}x{n}", T::DTYPE),
            &back,
            &to_f64(rhs.view()),
            bound,
        );
    }
}

both_dtypes_test!(qr_reassembles_a_with_orthonormal_q, qr_checks);

/// Least squares on tall and square matrices of full rank against the CPU backend and
/// the f64 normal equations (κ of these is small, so κ² is too).
fn lstsq_checks<T: BlasElement>(b: &CublasBackend) {
    let cpu = CpuBackend::new();
    let shapes = [(1, 1), (5, 3), (7, 7), (64, 17), (300, 40)];
    for (i, (m, n)) in shapes.into_iter().enumerate() {
        let a = random::<T>((m, n), 900 + i as u64);
        let rhs = random::<T>((m, 3), 950 + i as u64);
        let a64 = to_f64(a.view());
        let gram = a64.t().dot(&a64);
        let want = host_solve(&gram, &a64.t().dot(&to_f64(rhs.view())));
        let bound = 30.0 * m as f64 * T::EPS * cond1(&gram);
        let what = format!("{} lstsq {m}x{n}", T::DTYPE);
        let x = b.lstsq(a.view(), rhs.view()).unwrap();
        assert_close(&what, &x, &want, bound);
        let c = cpu.lstsq(a.view(), rhs.view()).unwrap();
        assert_close(
            &format!("{what} vs cpu"),
            &x,
            &to_f64(c.view()),
            2.0 * bound,
        );
        let dx = b.lstsq_dev(&b.upload(a.view()).unwrap(), &b.upload(rhs.view()).unwrap());
        assert_eq!(
            b.download(&dx.unwrap()).unwrap(),
            x,
            "{what}: resident form"
        );
    }
    // A column that repeats an earlier one.
    let mut a = random::<T>((10, 4), 990);
    let c1 = a.column(1).to_owned();
    a.column_mut(3).assign(&c1);
    let got = b.lstsq(a.view(), random::<T>((10, 2), 991).view());
    assert!(
        matches!(got, Err(Error::RankDeficient { column: 3, .. })),
        "{got:?}"
    );
}

both_dtypes_test!(
    lstsq_agrees_with_the_cpu_and_refuses_rank_deficiency,
    lstsq_checks
);

#[test]
#[ignore = "needs a CUDA device"]
fn resident_chains_wait_for_the_device_only_where_they_read() {
    let b = CublasBackend::with_gpu(Gpu::new(0).unwrap()).unwrap();
    // A runtime of its own (not the shared one), so that the count is this test's alone
    // while others run.
    let gpu = Arc::clone(b.gpu());
    let n = 300;
    let a = b.upload(random::<f64>((n, n), 1).view()).unwrap();
    let rhs = b.upload(random::<f64>((n, 7), 2).view()).unwrap();
    let lu = waits_of(&gpu, &b, || {
        let f = b.lu_dev(&a).unwrap();
        b.lu_solve_dev(&f, Trans::No, &rhs).unwrap()
    });
    assert_eq!(
        lu, 1,
        "lu_dev + lu_solve_dev: one read (the factor's diagonal)"
    );
    let f = b.lu_dev(&a).unwrap();
    let solve = waits_of(&gpu, &b, || b.lu_solve_dev(&f, Trans::Yes, &rhs).unwrap());
    assert_eq!(solve, 0, "lu_solve_dev never waits");
    let mut x = b.copy(&rhs).unwrap();
    let unit = Triangular::lower().unit(true);
    let t = waits_of(&gpu, &b, || {
        b.solve_triangular_in_place_dev(&a, unit, &mut x).unwrap()
    });
    assert_eq!(t, 0, "a unit triangle is solved without a read");
    let t = waits_of(&gpu, &b, || {
        b.solve_triangular_in_place_dev(&a, Triangular::upper(), &mut x)
            .unwrap()
    });
    assert_eq!(t, 1, "a read diagonal is read once");
    let tall = b.upload(random::<f64>((2 * n, n / 2), 3).view()).unwrap();
    let trhs = b.upload(random::<f64>((2 * n, 5), 4).view()).unwrap();
    let q = waits_of(&gpu, &b, || b.qr_dev(&tall).unwrap());
    assert_eq!(q, 1, "qr_dev: one read");
    let f = b.qr_dev(&tall).unwrap();
    let mut y = b.copy(&trhs).unwrap();
    let apply = waits_of(&gpu, &b, || {
        b.qr_apply_in_place_dev(&f, Trans::Yes, &mut y).unwrap()
    });
    assert_eq!(apply, 0, "qr_apply never waits");
    let ls = waits_of(&gpu, &b, || b.lstsq_dev(&tall, &trhs).unwrap());
    assert_eq!(ls, 2, "lstsq_dev: the factor's read and R's diagonal");
    assert_eq!(Device::place(&b), gpu.place());
}
