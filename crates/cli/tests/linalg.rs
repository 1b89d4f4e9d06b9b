//! `ndgpu run` for the factorizations and their solves (lu, qr, solve, lstsq, det, inv,
//! solve_triangular), on the reference (`cpu`) and the fast CPU (`faer`) backends:
//! the binary on temporary `.npy` files, checked against what NumPy and SciPy give.

use ndarray::{array, Array0, Array1, Array2};
use ndarray_npy::read_npy;

mod common;

use common::{close, ndgpu, run_json as run, Dir};

/// The host backends every test runs on.
const BACKENDS: [&str; 2] = ["cpu", "faer"];

/// `ndgpu run <args> --backend <backend>`, expected to exit with `code` and one
/// `error:` line on stderr containing `needle`.
fn fails(backend: &str, args: &[&str], code: i32, needle: &str) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--backend", backend]);
    common::fails(&all, code, needle)
}

/// A non-symmetric matrix whose LU needs row swaps.
fn general() -> Array2<f64> {
    array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]]
}

#[test]
fn lu_writes_p_l_u_with_a_equal_p_l_u() {
    for backend in BACKENDS {
        let d = Dir::new();
        for (name, a) in [
            ("square", general()),
            (
                "tall",
                array![[1.0, 2.0], [3.0, 4.0], [5.0, 7.0], [0.5, 1.0]],
            ),
            ("wide", array![[1.0, 2.0, 3.0, 4.0], [5.0, 7.0, 6.0, 8.0]]),
        ] {
            let ap = d.put(&format!("{name}.npy"), &a);
            let dir = d.out(name);
            let v = run(backend, &["lu", &ap, "--out-dir", &dir]);
            assert_eq!(v["op"], "lu");
            let (p, l, u) = (
                d.read(&format!("{name}/P.npy")),
                d.read(&format!("{name}/L.npy")),
                d.read(&format!("{name}/U.npy")),
            );
            let (m, n) = a.dim();
            let k = m.min(n);
            assert_eq!(
                (p.dim(), l.dim(), u.dim()),
                ((m, m), (m, k), (k, n)),
                "{backend} {name}"
            );
            assert!(close(&p.dot(&l).dot(&u), &a, 1e-12), "{backend} {name}");
            // P is a permutation, L unit lower triangular with |L| ≤ 1, U upper.
            assert!(p.iter().all(|&x| x == 0.0 || x == 1.0));
            assert!(p.sum_axis(ndarray::Axis(0)).iter().all(|&s| s == 1.0));
            assert!((0..k).all(|i| l[[i, i]] == 1.0 && (i + 1..k).all(|j| l[[i, j]] == 0.0)));
            assert!(l.iter().all(|x| x.abs() <= 1.0));
            assert!((0..k).all(|i| (0..i.min(n)).all(|j| u[[i, j]] == 0.0)));
        }
        // Partial pivoting as LAPACK: the largest entry of the first column leads.
        let u = d.read("square/U.npy");
        assert_eq!(u.row(0), array![7.0, 8.0, 10.0], "{backend}");
    }
}

#[test]
fn qr_writes_q_r_in_both_modes() {
    for backend in BACKENDS {
        let d = Dir::new();
        let a = array![
            [3.0, 1.0, 2.0],
            [4.0, 2.0, 0.0],
            [0.0, 5.0, 1.0],
            [1.0, 1.0, 1.0]
        ];
        let ap = d.put("a.npy", &a);
        for (mode, cols) in [("reduced", 3), ("complete", 4)] {
            let dir = d.out(mode);
            let v = run(backend, &["qr", &ap, "--mode", mode, "--out-dir", &dir]);
            assert_eq!(v["mode"], mode);
            let q = d.read(&format!("{mode}/Q.npy"));
            let r = d.read(&format!("{mode}/R.npy"));
            assert_eq!(
                (q.dim(), r.dim()),
                ((4, cols), (cols, 3)),
                "{backend} {mode}"
            );
            assert!(close(&q.dot(&r), &a, 1e-12), "{backend} {mode}");
            assert!(close(&q.t().dot(&q), &Array2::eye(cols), 1e-12));
            assert!((0..cols).all(|i| (0..i.min(3)).all(|j| r[[i, j]] == 0.0)));
            // Householder's signs, as LAPACK (and so NumPy): (3, 4, 0, 1) goes to −‖·‖.
            assert!((r[[0, 0]] + 26.0f64.sqrt()).abs() < 1e-12, "{backend}: {r}");
        }
        // Without --out-dir, Q and R are printed (JSON: nested lists).
        let v = run(backend, &["qr", &ap]);
        assert_eq!(v["shapes"]["Q"], serde_json::json!([4, 3]));
        assert_eq!(v["R"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn solve_is_lu_by_default_and_cholesky_with_assume_a_pos() {
    for backend in BACKENDS {
        let d = Dir::new();
        let a = general();
        let x = array![[1.0, -2.0], [2.0, 0.5], [3.0, 4.0]];
        let (ap, bp, xo) = (
            d.put("a.npy", &a),
            d.put("b.npy", &a.dot(&x)),
            d.out("x.npy"),
        );
        let v = run(backend, &["solve", &ap, &bp, "-o", &xo]);
        assert_eq!(
            (v["assume_a"].as_str(), v["variant"].is_string()),
            (Some("gen"), true)
        );
        assert!(
            close(&d.read("x.npy"), &x, 1e-12),
            "{backend}: {}",
            d.read("x.npy")
        );
        // A 1-D B gives a 1-D X.
        let b1 = d.put("b1.npy", &a.dot(&x.column(0)));
        let x1 = d.out("x1.npy");
        let v = run(backend, &["solve", &ap, &b1, "-o", &x1]);
        assert_eq!(v["shapes"]["output"], serde_json::json!([3]));
        let r: Array1<f64> = read_npy(&x1).unwrap();
        assert!(
            r.iter()
                .zip(x.column(0))
                .all(|(p, q)| (p - q).abs() < 1e-12),
            "{r}"
        );

        // --assume-a pos: Cholesky, which refuses an indefinite A that LU solves.
        let spd = array![[4.0, 2.0, 0.0], [2.0, 3.0, 1.0], [0.0, 1.0, 2.0]];
        let sp = d.put("spd.npy", &spd);
        let sb = d.put("sb.npy", &spd.dot(&x));
        let v = run(
            backend,
            &["solve", &sp, &sb, "--assume-a", "pos", "-o", &xo],
        );
        assert_eq!(v["assume_a"], "pos");
        assert!(close(&d.read("x.npy"), &x, 1e-12));
        let indefinite = d.put("ind.npy", &array![[1.0, 2.0], [2.0, 1.0]]);
        let v2 = d.put("v2.npy", &array![1.0, 2.0]);
        fails(
            backend,
            &["solve", &indefinite, &v2, "--assume-a", "pos"],
            1,
            "not positive definite",
        );
        run(backend, &["solve", &indefinite, &v2]);
        // --factor still takes L, and implies pos; with gen it is a usage error.
        let l = array![[2.0, 0.0], [1.0, 3.0]];
        let lp = d.put("l.npy", &l);
        let lb = d.put("lb.npy", &l.dot(&l.t()).dot(&array![[1.0], [-1.0]]));
        run(backend, &["solve", &lp, &lb, "--factor", "-o", &xo]);
        assert!(close(&d.read("x.npy"), &array![[1.0], [-1.0]], 1e-12));
        fails(
            backend,
            &["solve", &lp, &lb, "--factor", "--assume-a", "gen"],
            2,
            "--assume-a pos",
        );
    }
}

#[test]
fn lstsq_det_and_inv() {
    for backend in BACKENDS {
        let d = Dir::new();
        // A consistent tall system: the least-squares X is exact.
        let a = array![[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0]];
        let x = array![[0.5], [2.0]];
        let (ap, bp, xo) = (
            d.put("a.npy", &a),
            d.put("b.npy", &a.dot(&x)),
            d.out("x.npy"),
        );
        run(backend, &["lstsq", &ap, &bp, "-o", &xo]);
        assert!(
            close(&d.read("x.npy"), &x, 1e-12),
            "{backend}: {}",
            d.read("x.npy")
        );
        // The line through (0, 1), (1, 2), (2, 2), (3, 4): NumPy gives 0.9 + 0.9·t.
        let y = d.put("y.npy", &array![1.0, 2.0, 2.0, 4.0]);
        let v = run(backend, &["lstsq", &ap, &y]);
        let fit: Vec<f64> = serde_json::from_value(v["output"].clone()).unwrap();
        assert!(
            (fit[0] - 0.9).abs() < 1e-12 && (fit[1] - 0.9).abs() < 1e-12,
            "{fit:?}"
        );

        // det of a known matrix, as a 0-d .npy and printed.
        let g = d.put("g.npy", &general());
        let dp = d.out("d.npy");
        let v = run(backend, &["det", &g, "-o", &dp]);
        let det: Array0<f64> = read_npy(&dp).unwrap();
        assert!((det[()] + 3.0).abs() < 1e-12, "{backend}: {det}");
        assert!((v["result"].as_f64().unwrap() + 3.0).abs() < 1e-12);
        let singular = d.put("s.npy", &array![[1.0, 2.0], [2.0, 4.0]]);
        let zero = run(backend, &["det", &singular])["result"]
            .as_f64()
            .unwrap();
        assert!(zero == 0.0 && zero.is_sign_positive(), "{backend}: {zero}");

        let ip = d.out("inv.npy");
        run(backend, &["inv", &g, "-o", &ip]);
        assert!(close(
            &general().dot(&d.read("inv.npy")),
            &Array2::eye(3),
            1e-12
        ));
    }
}

#[test]
fn solve_triangular_as_scipy() {
    for backend in BACKENDS {
        let d = Dir::new();
        // Both triangles are filled: each solve must read only its own.
        let a = array![[2.0, 1.0, -1.0], [4.0, 3.0, 2.0], [-2.0, 5.0, 4.0]];
        let upper = array![[2.0, 1.0, -1.0], [0.0, 3.0, 2.0], [0.0, 0.0, 4.0]];
        let lower = array![[2.0, 0.0, 0.0], [4.0, 3.0, 0.0], [-2.0, 5.0, 4.0]];
        let unit_lower = array![[1.0, 0.0, 0.0], [4.0, 1.0, 0.0], [-2.0, 5.0, 1.0]];
        let x = array![[1.0], [-1.0], [2.0]];
        let ap = d.put("a.npy", &a);
        let xo = d.out("x.npy");
        for (flags, t) in [
            (&[][..], &upper),
            (&["--upper"][..], &upper),
            (&["--lower"][..], &lower),
            (&["--lower", "--trans"][..], &lower.t().to_owned()),
            (&["--trans"][..], &upper.t().to_owned()),
            (&["--lower", "--unit-diagonal"][..], &unit_lower),
        ] {
            let bp = d.put("b.npy", &t.dot(&x));
            let mut args = vec!["solve_triangular", &ap, &bp, "-o", &xo];
            args.extend_from_slice(flags);
            run(backend, &args);
            assert!(close(&d.read("x.npy"), &x, 1e-12), "{backend} {flags:?}");
        }
        // SciPy's spelling with a dash is accepted too; --lower and --upper conflict.
        let bp = d.put("b.npy", &upper.dot(&x));
        run(backend, &["solve-triangular", &ap, &bp]);
        fails(
            backend,
            &["solve_triangular", &ap, &bp, "--lower", "--upper"],
            2,
            "--upper",
        );
    }
}

#[test]
fn singular_and_rank_deficient_matrices_exit_1_with_one_line() {
    for backend in BACKENDS {
        let d = Dir::new();
        let s = d.put("s.npy", &array![[1.0, 2.0], [2.0, 4.0]]);
        let b = d.put("b.npy", &array![1.0, 2.0]);
        fails(backend, &["solve", &s, &b], 1, "singular");
        fails(backend, &["inv", &s], 1, "singular");
        let zero_diag = d.put("z.npy", &array![[1.0, 5.0], [0.0, 0.0]]);
        fails(
            backend,
            &["solve_triangular", &zero_diag, &b],
            1,
            "singular",
        );
        // Column 1 is twice column 0.
        let dep = d.put("dep.npy", &array![[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]);
        let b3 = d.put("b3.npy", &array![1.0, 2.0, 3.0]);
        fails(backend, &["lstsq", &dep, &b3], 1, "full column rank");
        // Underdetermined, non-square, NaN: refused input too.
        let wide = d.put("wide.npy", &array![[1.0, 2.0, 3.0]]);
        fails(
            backend,
            &["lstsq", &wide, &d.put("b1.npy", &array![1.0])],
            1,
            "fewer rows",
        );
        fails(backend, &["det", &wide], 1, "square");
        let nan = d.put("nan.npy", &array![[1.0, f64::NAN], [0.0, 1.0]]);
        fails(backend, &["lu", &nan], 1, "non-finite");
        fails(backend, &["qr", &nan], 1, "non-finite");
    }
}

#[test]
fn help_lists_the_new_ops_and_says_scipys_default_triangle() {
    let out = ndgpu(&["run", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for op in ["lu", "qr", "lstsq", "det", "inv", "solve_triangular"] {
        assert!(help.contains(op), "{op} not in {help}");
    }
    let out = ndgpu(&["run", "solve_triangular", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("lower=False"), "{help}");
}
