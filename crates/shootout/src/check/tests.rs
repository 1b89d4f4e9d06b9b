use ndarray::Array2;

use super::*;
use crate::cases::{Op, KMEANS_D, KMEANS_K};

fn check_one<T: Element>(inputs: &Inputs<T>, out: Output<T>) -> Result<(), String> {
    Reference::new(inputs).check(&out)
}

#[test]
fn products_pass_and_fail_as_they_should() {
    // In full below the limit, sampled above it.
    for n in [7, FULL_CHECK_MAX_N + 3] {
        let inputs = Inputs::<f32>::generate(Op::Matmul, Op::Matmul.shape(n), 1);
        let Inputs::Gemm { a, b } = &inputs else {
            unreachable!()
        };
        let reference = Reference::new(&inputs);
        let mut c = a.dot(b);
        reference.check(&Output::Matrix(c.clone())).unwrap();
        // An element of a sampled row (the last) is off by far more than rounding.
        c[[n - 1, n / 3]] += 0.05;
        let err = reference.check(&Output::Matrix(c.clone())).unwrap_err();
        assert!(err.contains("above the bound"), "{err}");
        c[[n - 1, n / 3]] = f32::NAN;
        assert!(reference.check(&Output::Matrix(c)).is_err());
        let wrong_shape = Array2::<f32>::zeros((n, n + 1));
        assert!(reference
            .check(&Output::Matrix(wrong_shape))
            .unwrap_err()
            .contains("expected"));
    }
}

#[test]
fn gram_must_be_symmetric() {
    let inputs = Inputs::<f64>::generate(Op::Gram, Op::Gram.shape(9), 2);
    let Inputs::Gram { m } = &inputs else {
        unreachable!()
    };
    let mut c = m.dot(&m.t());
    for i in 0..9 {
        for j in 0..i {
            c[[j, i]] = c[[i, j]];
        }
    }
    check_one(&inputs, Output::Matrix(c.clone())).unwrap();
    c[[1, 0]] = f64::from_bits(c[[1, 0]].to_bits() + 1);
    let err = check_one(&inputs, Output::Matrix(c)).unwrap_err();
    assert!(err.contains("symmetric"), "{err}");
}

#[test]
fn transpose_is_exact() {
    let inputs = Inputs::<f32>::generate(Op::Transpose, Op::Transpose.shape(130), 3);
    let Inputs::Transpose { a } = &inputs else {
        unreachable!()
    };
    let mut t = a.t().as_standard_layout().into_owned();
    check_one(&inputs, Output::Matrix(t.clone())).unwrap();
    t[[129, 65]] = 2.0;
    let err = check_one(&inputs, Output::Matrix(t)).unwrap_err();
    assert!(err.contains("out[129, 65]"), "{err}");
}

#[test]
fn reductions_use_the_sum_bound() {
    let inputs = Inputs::<f32>::generate(Op::Sum, Op::Sum.shape(10_000), 4);
    let Inputs::Reduce { x, .. } = &inputs else {
        unreachable!()
    };
    let s: f32 = x.iter().sum();
    check_one(&inputs, Output::Scalar(s)).unwrap();
    assert!(check_one(&inputs, Output::Scalar(s + 10.0)).is_err());
    let inputs = Inputs::<f64>::generate(Op::Dot, Op::Dot.shape(1000), 4);
    let Inputs::Dot { x, y } = &inputs else {
        unreachable!()
    };
    check_one(&inputs, Output::Scalar(x.dot(y))).unwrap();
    assert!(check_one(&inputs, Output::Scalar(f64::NAN)).is_err());
}

#[test]
fn reductions_along_an_axis_check_every_lane() {
    let shape = crate::shape::Shape::matrix(37, 53, Some(0));
    let inputs = Inputs::<f32>::generate(Op::SumSq, shape, 4);
    let Inputs::Reduce { x, .. } = &inputs else {
        unreachable!()
    };
    // One value per column, as a 1×cols matrix (keepdims).
    let mut sums = x
        .mapv(|v| v * v)
        .sum_axis(ndarray::Axis(0))
        .insert_axis(ndarray::Axis(0));
    check_one(&inputs, Output::Matrix(sums.clone())).unwrap();
    sums[[0, 40]] += 0.01;
    let err = check_one(&inputs, Output::Matrix(sums.clone())).unwrap_err();
    assert!(
        err.contains("sumsq[40]") && err.contains("above the bound"),
        "{err}"
    );
    // The right values in the wrong shape (rows×1 is axis 1's).
    let wrong = sums.into_shape_with_order((53, 1)).unwrap();
    assert!(check_one(&inputs, Output::Matrix(wrong)).is_err());
    // A whole reduction is a scalar.
    let whole = Inputs::<f64>::generate(Op::Sum, crate::shape::Shape::matrix(37, 53, None), 4);
    let Inputs::Reduce { x, .. } = &whole else {
        unreachable!()
    };
    check_one(&whole, Output::Scalar(x.sum())).unwrap();
    assert!(check_one(&whole, Output::Scalar(x.sum() + 1e-6)).is_err());
}

#[test]
fn argmax_is_the_first_largest_element() {
    let shape = crate::shape::Shape::matrix(6, 5, Some(1));
    let mut inputs = Inputs::<f32>::generate(Op::Argmax, shape, 4);
    let Inputs::Reduce { x, .. } = &mut inputs else {
        unreachable!()
    };
    // A tie in row 2: the lower index wins.
    x.row_mut(2).fill(0.0);
    x[[2, 1]] = 2.0;
    x[[2, 3]] = 2.0;
    let want: Vec<usize> = x
        .rows()
        .into_iter()
        .map(|r| (0..5).fold(0, |b, j| if r[j] > r[b] { j } else { b }))
        .collect();
    assert_eq!(want[2], 1);
    check_one(&inputs, Output::Indices(want.clone())).unwrap();
    let mut late = want.clone();
    late[2] = 3;
    let err = check_one(&inputs, Output::Indices(late)).unwrap_err();
    assert!(
        err.contains("index[2] is 3, the first extreme is at 1"),
        "{err}"
    );
    assert!(check_one(&inputs, Output::Index(want[0])).is_err());
    // Whole: the flat, row-major index.
    let whole = Inputs::<f32>::generate(Op::Argmax, crate::shape::Shape::matrix(6, 5, None), 4);
    let Inputs::Reduce { x, .. } = &whole else {
        unreachable!()
    };
    let flat = x.iter().enumerate().fold(
        0,
        |b, (i, v)| {
            if *v > x.as_slice().unwrap()[b] {
                i
            } else {
                b
            }
        },
    );
    check_one(&whole, Output::Index(flat)).unwrap();
    assert!(check_one(&whole, Output::Index(flat + 1)).is_err());
}

fn host_cholesky(a: &Array2<f64>) -> Array2<f64> {
    let n = a.nrows();
    let mut l = Array2::<f64>::zeros((n, n));
    for j in 0..n {
        let d = a[[j, j]] - (0..j).map(|k| l[[j, k]] * l[[j, k]]).sum::<f64>();
        l[[j, j]] = d.sqrt();
        for i in j + 1..n {
            let s = a[[i, j]] - (0..j).map(|k| l[[i, k]] * l[[j, k]]).sum::<f64>();
            l[[i, j]] = s / l[[j, j]];
        }
    }
    l
}

#[test]
fn cholesky_ratio_test() {
    for n in [20, FULL_CHECK_MAX_N + 1] {
        let inputs = Inputs::<f64>::generate(Op::Cholesky, Op::Cholesky.shape(n), 5);
        let Inputs::Cholesky { a } = &inputs else {
            unreachable!()
        };
        let reference = Reference::new(&inputs);
        let mut l = host_cholesky(a);
        // Garbage above the diagonal is ignored (in-place factorizations leave A).
        l[[0, n - 1]] = 1e30;
        reference.check(&Output::Matrix(l.clone())).unwrap();
        // Row n-1 of L·Lᵀ is in every column, so the sampled columns see the error.
        l[[n - 1, 3]] += 1e-6;
        let err = reference.check(&Output::Matrix(l.clone())).unwrap_err();
        assert!(err.contains("above 30"), "{err}");
        l[[2, 2]] = -1.0;
        let err = reference.check(&Output::Matrix(l)).unwrap_err();
        assert!(err.contains("L[2, 2]"), "{err}");
    }
}

/// One Lloyd iteration on the host, as the GPU's `iterate` reports it.
fn host_lloyd(x: &Array2<f32>, c0: &Array2<f32>) -> Output<f32> {
    let (n, d) = x.dim();
    let k = c0.nrows();
    let mut labels = Vec::with_capacity(n);
    let mut inertia = 0.0;
    let mut sums = Array2::<f64>::zeros((k, d));
    let mut counts = vec![0usize; k];
    for i in 0..n {
        let dist = |j: usize| -> f64 {
            (0..d)
                .map(|c| (x[[i, c]] as f64 - c0[[j, c]] as f64).powi(2))
                .sum()
        };
        let best = (0..k).min_by(|&a, &b| dist(a).total_cmp(&dist(b))).unwrap();
        inertia += dist(best);
        labels.push(best as i64);
        counts[best] += 1;
        for c in 0..d {
            sums[[best, c]] += x[[i, c]] as f64;
        }
    }
    let centroids = Array2::from_shape_fn((k, d), |(j, c)| {
        if counts[j] == 0 {
            c0[[j, c]]
        } else {
            (sums[[j, c]] / counts[j] as f64) as f32
        }
    });
    Output::KMeans {
        centroids,
        labels,
        changed: Some(n),
        inertia,
        updated: true,
    }
}

#[test]
fn kmeans_step_checks() {
    let inputs = Inputs::<f32>::generate(Op::KMeans, Op::KMeans.shape(600), 6);
    let Inputs::KMeans { x, centroids } = &inputs else {
        unreachable!()
    };
    assert_eq!(centroids.dim(), (KMEANS_K, KMEANS_D));
    let reference = Reference::new(&inputs);
    let good = host_lloyd(x, centroids);
    reference.check(&good).unwrap();

    // Each damage to a good result, and what the check must then say. The last: an
    // assignment step alone must leave the centroids where they were.
    type Damage = fn(&mut [i64], &mut Array2<f32>, &mut f64, &mut Option<usize>, &mut bool);
    let damages: [(Damage, &str); 6] = [
        (
            |l, _, _, _, _| l[0] = (l[0] + 1) % KMEANS_K as i64,
            "point 0 is labelled",
        ),
        (|l, _, _, _, _| l[1] = -1, "outside"),
        (|_, _, inertia, _, _| *inertia *= 1.01, "inertia"),
        (|_, c, _, _, _| c[[3, 4]] += 0.01, "centroid [3, 4]"),
        (|_, _, _, changed, _| *changed = Some(3), "changed"),
        (|_, _, _, _, updated| *updated = false, "no update was made"),
    ];
    for (damage, want) in damages {
        let mut o = good.clone();
        if let Output::KMeans {
            labels,
            centroids,
            inertia,
            changed,
            updated,
        } = &mut o
        {
            damage(labels, centroids, inertia, changed, updated);
        }
        let err = reference.check(&o).unwrap_err();
        assert!(err.contains(want), "{want}: {err}");
    }
}

#[test]
fn copies_are_exact() {
    let src = [1.0f32, 2.0];
    copy(&src, &[1.0, 2.0]).unwrap();
    assert!(copy(&src, &[1.0, 3.0]).unwrap_err().contains("element 1"));
    assert!(copy(&src, &[1.0]).is_err());
}

#[test]
fn kind_mismatch_is_an_error() {
    let inputs = Inputs::<f32>::generate(Op::Sum, Op::Sum.shape(10), 1);
    assert!(check_one(&inputs, Output::Matrix(Array2::zeros((1, 1)))).is_err());
}

/// Rounds an f32 to TF32 (10 explicit mantissa bits), to nearest.
fn tf32(x: f32) -> f32 {
    let bits = x.to_bits();
    f32::from_bits((bits + 0x1000) & !0x1fff)
}

#[test]
fn tf32_variants_get_the_tf32_bound() {
    let inputs = Inputs::<f32>::generate(Op::Matmul, Op::Matmul.shape(131), 8);
    let Inputs::Gemm { a, b } = &inputs else {
        unreachable!()
    };
    let (ra, rb) = (a.mapv(|v| tf32(v) as f64), b.mapv(|v| tf32(v) as f64));
    let c = ra.dot(&rb).mapv(|v| v as f32);
    let reference = Reference::new(&inputs);
    let out = Output::Matrix(c);
    assert!(
        reference.check(&out).is_err(),
        "TF32 rounding passed as IEEE f32"
    );
    reference.check_with(&out, Precision::Tf32).unwrap();
}
