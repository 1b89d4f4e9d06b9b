use super::*;

fn labels(op: Op, target: Target) -> Vec<String> {
    Suite::Shapes
        .shapes(op, target)
        .iter()
        .map(|s| s.label())
        .collect()
}

#[test]
fn the_gpu_suite_is_the_issues_list() {
    let mm = labels(Op::Matmul, Target::Gpu);
    let squares: Vec<String> = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
        .iter()
        .map(|n| format!("{n}×{n}×{n}"))
        .collect();
    assert_eq!(mm[..8], squares[..]);
    // The k-means distance product N×D by D×K, N = 2^20, D in {32, 128}, K in {128, 1024}.
    for d in [32, 128] {
        for k in [128, 1024] {
            assert!(mm.contains(&format!("1048576×{d}×{k}")), "{d} {k}: {mm:?}");
        }
    }
    for s in ["8192×64×8192", "64×8192×64", "1024×1024×64"] {
        assert!(mm.contains(&s.to_string()), "{s}: {mm:?}");
    }
    assert_eq!(mm.len(), 8 + 7);

    let gram = labels(Op::Gram, Target::Gpu);
    assert_eq!(gram[0], "64×64");
    assert_eq!(gram[7], "8192×8192");
    assert_eq!(gram[8..], ["65536×64", "64×65536", "32×1048576"]);

    for op in [Op::Sum, Op::SumSq, Op::Argmax] {
        let red = labels(op, Target::Gpu);
        assert_eq!(red.len(), 4 * 3, "{op}");
        for m in ["8192×8192", "16777216×16", "1048576×32", "16×16777216"] {
            for axis in ["", " axis 0", " axis 1"] {
                assert!(red.contains(&format!("{m}{axis}")), "{op} {m}{axis}");
            }
        }
    }
    assert_eq!(
        Suite::Shapes.ops(),
        [Op::Matmul, Op::Gram, Op::Sum, Op::SumSq, Op::Argmax]
    );
    assert!(Suite::Shapes.shapes(Op::Cholesky, Target::Gpu).is_empty());
}

#[test]
fn every_target_has_the_same_kinds_of_shape() {
    for op in Suite::Shapes.ops() {
        let kinds = |t: Target| {
            let shapes = Suite::Shapes.shapes(op, t);
            assert!(shapes.iter().all(|s| op.takes(*s)), "{op} {t:?}");
            let squares = shapes.iter().filter(|s| s.size().is_some()).count();
            (squares > 0, shapes.len() - squares)
        };
        let gpu = kinds(Target::Gpu);
        assert_eq!(kinds(Target::GpuQuick).0, gpu.0, "{op}");
        assert_eq!(kinds(Target::Cpu).0, gpu.0, "{op}");
        assert!(
            kinds(Target::Cpu).1 > 0 && kinds(Target::GpuQuick).1 > 0,
            "{op}"
        );
    }
}

#[test]
fn the_host_suite_stays_small() {
    // The single-threaded reference runs every shape in well under a minute on 2 cores.
    for op in Suite::Shapes.ops() {
        for s in Suite::Shapes.shapes(op, Target::Cpu) {
            let work = op.work(s, 4);
            let limit = match op.bandwidth_bound() {
                // Bytes: at most 2^20 f32 elements read, and the result written.
                true => ((1 << 20) * 4 + (1 << 16) * 8) as f64,
                // FLOPs: at most those of the ladder's 256³ GEMM.
                false => 2.0 * 256f64.powi(3),
            };
            assert!(work <= limit, "{op} {s}: {work}");
        }
    }
}

#[test]
fn ladders_are_the_default_sizes_as_shapes() {
    for op in Op::LADDERS {
        for target in [Target::Gpu, Target::GpuQuick, Target::Cpu] {
            let shapes = Suite::Ladders.shapes(op, target);
            let sizes: Vec<usize> = shapes.iter().map(|s| s.size().unwrap()).collect();
            assert_eq!(sizes, op.default_sizes(target), "{op}");
        }
    }
    assert_eq!(Suite::Ladders.ops(), Op::LADDERS);
}

#[test]
fn names_round_trip() {
    for s in Suite::ALL {
        assert_eq!(s.name().parse::<Suite>(), Ok(s));
    }
    let err = "squares".parse::<Suite>().unwrap_err();
    assert!(err.contains("unknown suite 'squares'"), "{err}");
}
