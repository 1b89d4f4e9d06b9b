use super::*;

#[test]
fn flop_counts() {
    assert_eq!(Op::Matmul.work(Op::Matmul.shape(1000), 4), 2e9);
    assert_eq!(Op::Gram.work(Op::Gram.shape(1000), 8), 2e9);
    assert_eq!(Op::Cholesky.work(Op::Cholesky.shape(300), 4), 9e6);
    // 2·N·K·D = 2 · 1024 · 128 · 32
    assert_eq!(Op::KMeans.work(Op::KMeans.shape(1024), 4), 8_388_608.0);
    // getrf's 2n³/3, two triangular solves with n right-hand sides, one.
    assert_eq!(Op::Lu.work(Op::Lu.shape(300), 8), 18e6);
    assert_eq!(Op::LuSolve.work(Op::LuSolve.shape(300), 8), 54e6);
    assert_eq!(Op::Trsm.work(Op::Trsm.shape(300), 4), 27e6);
    // geqrf's 2·m·n² − 2n³/3: 4n³/3 for a square.
    assert_eq!(Op::Qr.shape(300), Shape::rect(300, 300));
    assert_eq!(Op::Qr.work(Op::Qr.shape(300), 4), 36e6);
    let tall = Shape::rect(1 << 20, 32);
    let (m, n) = (1048576.0, 32.0);
    let qr = 2.0 * m * n * n - 2.0 * n * n * n / 3.0;
    assert_eq!(Op::Qr.work(tall, 4), qr);
    // A wide one: the count of its transpose.
    assert_eq!(Op::Qr.work(Shape::rect(32, 1 << 20), 4), qr);
    // Least squares: QR, Qᵀ·b (4mn − 2n²) and the solve with R (n²).
    assert_eq!(Op::Lstsq.work(tall, 8), qr + 4.0 * m * n - n * n);
}

#[test]
fn factorizations_run_their_families_variants() {
    use ndgpu_core::Family;
    for (op, family) in [
        (Op::Lu, Family::Lu),
        (Op::LuSolve, Family::Lu),
        (Op::Qr, Family::Qr),
        (Op::Lstsq, Family::Qr),
        (Op::Trsm, Family::Trsm),
    ] {
        assert_eq!(op.family(), Some(family), "{op}");
        // Named only: not in the default run.
        assert!(!Op::LADDERS.contains(&op) && op.cubic() && !op.bandwidth_bound());
        assert_eq!(
            op.default_sizes(Target::Gpu),
            Op::Matmul.default_sizes(Target::Gpu)
        );
    }
    // Least squares takes no wide A; QR does.
    assert!(Op::Qr.takes(Shape::rect(4, 8)) && !Op::Lstsq.takes(Shape::rect(4, 8)));
    assert!(Op::Lstsq.takes(Shape::rect(8, 4)) && !Op::Lu.takes(Shape::rect(8, 4)));
    assert_eq!(Op::Lstsq.size_syntax(), "n or m×n with m ≥ n");
    assert_eq!(
        Op::Qr.check_shape(Shape::rect(1 << 20, 32)),
        Shape::rect(131, 33)
    );
}

#[test]
fn spectra_run_the_spectra_family_when_named() {
    use ndgpu_core::Family;
    for op in [Op::Eigh, Op::Svd, Op::Pca] {
        assert_eq!(op.family(), Some(Family::Spectra), "{op}");
        assert_eq!(op.name().parse::<Op>(), Ok(op));
        assert!(!Op::LADDERS.contains(&op) && op.cubic() && !op.bandwidth_bound());
        assert_eq!(op.unit(), Unit::GFlops);
    }
    assert_eq!(Op::Eigh.shape(300), Shape::Square(300));
    assert_eq!(Op::Svd.shape(300), Shape::rect(300, 300));
    assert!(Op::Svd.takes(Shape::rect(4, 8)) && !Op::Eigh.takes(Shape::rect(4, 8)));
    // PCA's variance divides by m − 1.
    assert!(Op::Pca.takes(Shape::rect(2, 8)) && !Op::Pca.takes(Shape::rect(1, 8)));
    assert_eq!(
        Op::Svd.check_shape(Shape::rect(1 << 20, 32)),
        Shape::rect(131, 33)
    );
}

#[test]
fn spectra_flop_counts() {
    // 9n³ for eigh; 22n³ for a square SVD (Golub–Reinsch's 14n³ + 8n³).
    assert_eq!(Op::Eigh.work(Op::Eigh.shape(100), 4), 9e6);
    assert_eq!(Op::Svd.work(Op::Svd.shape(100), 4), 22e6);
    // A tall one: R-SVD's 6·m·n² + 20n³; a wide one counts as its transpose.
    let (m, n) = (1048576.0f64, 32.0f64);
    let tall = 6.0 * m * n * n + 20.0 * n * n * n;
    assert_eq!(Op::Svd.work(Shape::rect(1 << 20, 32), 4), tall);
    assert_eq!(Op::Svd.work(Shape::rect(32, 1 << 20), 4), tall);
    // PCA: the covariance path for tall data (gram and eigh of d×d), else the SVD's.
    assert_eq!(
        Op::Pca.work(Shape::rect(1 << 20, 32), 4),
        2.0 * m * n * n + 9.0 * n * n * n
    );
    assert_eq!(Op::Pca.work(Op::Pca.shape(100), 4), 22e6);
}

#[test]
fn byte_counts() {
    assert_eq!(
        Op::Transpose.work(Op::Transpose.shape(1024), 4),
        8_388_608.0
    );
    assert_eq!(
        Op::Transpose.work(Op::Transpose.shape(1024), 8),
        16_777_216.0
    );
    assert_eq!(Op::Sum.work(Op::Sum.shape(1 << 20), 4), 4_194_304.0);
    assert_eq!(Op::Dot.work(Op::Dot.shape(1 << 20), 8), 16_777_216.0);
}

#[test]
fn units_follow_the_bound() {
    for op in Op::ALL {
        let expect = if op.bandwidth_bound() {
            Unit::GBs
        } else {
            Unit::GFlops
        };
        assert_eq!(op.unit(), expect, "{op}");
    }
    assert_eq!(Op::Sum.unit().name(), "GB/s");
    assert_eq!(Op::Matmul.unit().name(), "GFLOP/s");
}

#[test]
fn names_round_trip() {
    for op in Op::ALL {
        assert_eq!(op.name().parse::<Op>(), Ok(op));
    }
    assert_eq!("lu_solve".parse::<Op>(), Ok(Op::LuSolve));
    let err = "gemm".parse::<Op>().unwrap_err();
    assert!(
        err.contains("unknown op 'gemm'") && err.contains("matmul"),
        "{err}"
    );
}

#[test]
fn default_sizes_are_the_documented_ladders() {
    assert_eq!(
        Op::Matmul.default_sizes(Target::Gpu),
        [256, 512, 1024, 2048, 4096, 8192]
    );
    assert_eq!(
        Op::Transpose.default_sizes(Target::Gpu),
        [1024, 2048, 4096, 8192, 16384]
    );
    let red = Op::Sum.default_sizes(Target::Gpu);
    assert_eq!((red[0], *red.last().unwrap()), (1 << 20, 1 << 28));
    let km = Op::KMeans.default_sizes(Target::Gpu);
    assert_eq!((km[0], *km.last().unwrap()), (1 << 14, 1 << 20));
    // The CPU ladder stays small enough for a run under a minute on 2 cores.
    for op in Op::ALL {
        let max = *op.default_sizes(Target::Cpu).iter().max().unwrap();
        let limit = match op {
            Op::Chain => 128,
            Op::Transpose => 1024,
            Op::Sum | Op::SumSq | Op::Argmax | Op::Dot | Op::Transfer => 1 << 20,
            Op::KMeans => 1 << 14,
            _ if op.cubic() => 256,
            _ => unreachable!("{op} has no ladder limit"),
        };
        assert!(max <= limit, "{op}: {max}");
    }
}

#[test]
fn check_shapes_are_not_tile_multiples() {
    for op in Op::ALL {
        // The sizes the runner takes (k-means: at least K points).
        for n in [KMEANS_K, 1 << 13, 1 << 28] {
            let shape = op.check_shape(op.shape(n));
            assert!(op.takes(shape), "{op}");
            assert!(shape.dims().iter().all(|d| d % 2 == 1), "{op}: {shape}");
            assert!(
                shape.dims().iter().all(|&d| d <= op.check_cap() + 1),
                "{op}: {shape}"
            );
            if op == Op::KMeans {
                assert!(shape.size().unwrap() >= KMEANS_K);
            }
        }
        // At the sizes of the GPU ladders, the ladders' check sizes of old.
        let big = op.check_shape(op.shape(1 << 28));
        let want = match op {
            Op::Sum | Op::SumSq | Op::Argmax | Op::Dot | Op::Transfer => 100_003,
            Op::KMeans => 1_031,
            _ => 131,
        };
        assert_eq!(big.size(), Some(want), "{op}");
    }
    // A rectangular shape keeps its kind and, roughly, its aspect.
    let km = Op::Matmul.check_shape(Shape::gemm(1 << 20, 32, 1024));
    assert_eq!(km.label(), "131×33×131");
    let thin = Op::Argmax.check_shape(Shape::matrix(1 << 24, 16, Some(0)));
    assert_eq!(thin.label(), "100003×17 axis 0");
}

#[test]
fn shapes_of_the_ladders_and_their_work() {
    // m×k×n: A m×k times B k×n, 2·m·n·k FLOPs.
    let km = Shape::gemm(1 << 20, 32, 1024);
    assert_eq!(Op::Matmul.work(km, 4), 2.0 * 1048576.0 * 32.0 * 1024.0);
    assert_eq!(
        Op::Matmul.work(Shape::gemm(64, 8192, 64), 8),
        2.0 * 64.0 * 64.0 * 8192.0
    );
    // M·Mᵀ of an m×k M: an m×m result, 2·m²·k GEMM-equivalent FLOPs.
    assert_eq!(
        Op::Gram.work(Shape::gram(65536, 64), 4),
        2.0 * 65536.0 * 65536.0 * 64.0
    );
    assert_eq!(
        Op::Gram.work(Shape::gram(32, 1 << 20), 4),
        2.0 * 32.0 * 32.0 * 1048576.0
    );
    // Reductions: the matrix read, plus the result along an axis.
    let m = |axis| Shape::matrix(16, 1 << 24, axis);
    let read = 16.0 * 16777216.0 * 4.0;
    assert_eq!(Op::Sum.work(m(None), 4), read);
    assert_eq!(Op::SumSq.work(m(Some(0)), 4), read + 16777216.0 * 4.0);
    assert_eq!(Op::SumSq.work(m(Some(1)), 4), read + 16.0 * 4.0);
    assert_eq!(Op::Argmax.work(m(Some(1)), 4), read + 16.0 * 8.0);
    assert_eq!(Op::Argmax.work(m(None), 8), 2.0 * read);
    // A ladder's size is its shape.
    assert_eq!(Op::Matmul.shape(256), Shape::gemm(256, 256, 256));
    assert_eq!(Op::Sum.shape(1000), Shape::matrix(1, 1000, None));
    assert_eq!(Op::Cholesky.shape(300), Shape::Square(300));
    assert!(Op::Matmul.takes(km) && !Op::Gram.takes(km) && !Op::Sum.takes(km));
    assert!(Op::Argmax.takes(m(Some(0))) && Op::Sum.takes(m(None)));
}

#[test]
#[should_panic(expected = "gram does not take the shape")]
fn work_refuses_a_shape_of_another_kind() {
    let _ = Op::Gram.work(Shape::gemm(2, 3, 4), 4);
}

#[test]
fn reductions_say_what_they_compute() {
    assert_eq!(Op::Sum.reduction(), Some(Reduction::Value(ReduceOp::Sum)));
    assert_eq!(
        Op::SumSq.reduction(),
        Some(Reduction::Value(ReduceOp::SumSq))
    );
    assert_eq!(Op::Argmax.reduction(), Some(Reduction::Arg(ArgOp::ArgMax)));
    assert_eq!(Op::Dot.reduction(), None);
    assert!(!Op::LADDERS.contains(&Op::SumSq) && Op::ALL.contains(&Op::SumSq));
}
