//! `ndgpu run` for the spectra (eigh, svd) and PCA on the reference (`cpu`) and the
//! fast CPU (`faer`) backends: the binary on temporary `.npy` files, checked against
//! what NumPy and scikit-learn give.

use ndarray::{array, Array1, Array2};
use ndarray_npy::read_npy;

mod common;

use common::{close, ndgpu, run_json as run, Dir};

/// The host backends every test runs on.
const BACKENDS: [&str; 2] = ["cpu", "faer"];

/// A 1-D array written by the binary.
fn vector(d: &Dir, name: &str) -> Array1<f64> {
    read_npy(d.path(name)).unwrap()
}

#[test]
fn eigh_writes_ascending_values_and_orthonormal_vectors() {
    for backend in BACKENDS {
        let d = Dir::new();
        // The upper entry 7 is not read: A = [[2, 1], [1, 2]], eigenvalues 1 and 3.
        let a = d.put("a.npy", &array![[2.0, 7.0], [1.0, 2.0]]);
        run(backend, &["eigh", &a, "--out-dir", &d.out("o")]);
        let (w, v) = (vector(&d, "o/w.npy"), d.read("o/v.npy"));
        assert!(
            (w[0] - 1.0).abs() < 1e-14 && (w[1] - 3.0).abs() < 1e-14,
            "{w}"
        );
        // --upper reads the 7 instead (UPLO='U'): [[2, 7], [7, 2]], eigenvalues −5, 9.
        let summary = run(backend, &["eigh", &a, "--upper", "--out-dir", &d.out("u")]);
        assert_eq!(summary["uplo"], "U");
        let wu = vector(&d, "u/w.npy");
        assert!(
            (wu[0] + 5.0).abs() < 1e-13 && (wu[1] - 9.0).abs() < 1e-13,
            "{wu}"
        );
        let sym = array![[2.0, 1.0], [1.0, 2.0]];
        assert!(close(&sym.dot(&v), &(&v * &w), 1e-14), "{backend}: {v}");
        assert!(close(&v.t().dot(&v), &Array2::eye(2), 1e-14));
    }
}

#[test]
fn svd_writes_reduced_and_full_factors() {
    for backend in BACKENDS {
        let d = Dir::new();
        // Wide: the reference runs one-sided Jacobi on Aᵀ.
        let a = array![
            [3.0, 1.0, 2.0, 0.5],
            [4.0, 2.0, 0.0, 1.0],
            [0.0, 5.0, 1.0, -2.0]
        ];
        let ap = d.put("a.npy", &a);
        run(backend, &["svd", &ap, "--out-dir", &d.out("r")]);
        let summary = run(
            backend,
            &["svd", &ap, "--full-matrices", "--out-dir", &d.out("f")],
        );
        assert_eq!(summary["full_matrices"], true);
        for (dir, vrows) in [("r", 3), ("f", 4)] {
            let u = d.read(&format!("{dir}/U.npy"));
            let s = vector(&d, &format!("{dir}/S.npy"));
            let vt = d.read(&format!("{dir}/Vt.npy"));
            assert_eq!((u.dim(), s.len(), vt.dim()), ((3, 3), 3, (vrows, 4)));
            assert!(s[0] >= s[1] && s[1] >= s[2] && s[2] >= 0.0, "{s}");
            let us = &u * &s;
            let usv = us.dot(&vt.slice(ndarray::s![..3, ..]));
            assert!(close(&usv, &a, 1e-13), "{backend} {dir}");
            assert!(close(&vt.dot(&vt.t()), &Array2::eye(vrows), 1e-13));
        }
    }
}

#[test]
fn pca_writes_scikit_learns_attributes() {
    for backend in BACKENDS {
        let d = Dir::new();
        // Variance 2/3 along x and 1/6 along y (ddof = 1), about the mean (1, 1); five
        // copies take the covariance path (20 samples ≥ 10 × 2 features).
        let base = array![[2.0, 1.0], [0.0, 1.0], [1.0, 1.5], [1.0, 0.5]];
        for (copies, solver) in [(1, "Svd"), (5, "CovarianceEigh")] {
            let x = Array2::from_shape_fn((4 * copies, 2), |(i, j)| base[[i % 4, j]]);
            let n = x.nrows() as f64;
            let xp = d.put("x.npy", &x);
            let out = d.out(solver);
            let args = [
                "pca",
                &xp,
                "--n-components",
                "2",
                "--transform",
                "--out-dir",
                &out,
            ];
            let v = run(backend, &args);
            assert_eq!(v["solver"], solver);
            let comps = d.read(&format!("{solver}/components.npy"));
            assert!(close(&comps, &Array2::eye(2), 1e-12), "{backend}: {comps}");
            let ev = vector(&d, &format!("{solver}/explained_variance.npy"));
            let want = [
                2.0 * copies as f64 / (n - 1.0),
                0.5 * copies as f64 / (n - 1.0),
            ];
            assert!((ev[0] - want[0]).abs() < 1e-12 && (ev[1] - want[1]).abs() < 1e-12);
            let ratio = vector(&d, &format!("{solver}/explained_variance_ratio.npy"));
            assert!((ratio[0] - 0.8).abs() < 1e-12 && (ratio[1] - 0.2).abs() < 1e-12);
            let mean = vector(&d, &format!("{solver}/mean.npy"));
            assert_eq!(mean, array![1.0, 1.0]);
            let t = d.read(&format!("{solver}/transformed.npy"));
            assert!(close(&t, &(&x - 1.0), 1e-12), "{t}");
        }
    }
}

#[test]
fn bad_input_is_refused_and_help_lists_the_ops() {
    for backend in BACKENDS {
        let d = Dir::new();
        let wide = d.put("wide.npy", &array![[1.0, 2.0, 3.0]]);
        common::fails(&["run", "eigh", &wide, "--backend", backend], 1, "square");
        let nan = d.put("nan.npy", &array![[1.0, 0.0], [f64::NAN, 1.0]]);
        common::fails(&["run", "svd", &nan, "--backend", backend], 1, "non-finite");
        common::fails(
            &["run", "pca", &wide, "--backend", backend],
            1,
            "two samples",
        );
    }
    let out = ndgpu(&["run", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for op in ["eigh", "svd", "pca"] {
        assert!(help.contains(op), "{op} not in {help}");
    }
}
