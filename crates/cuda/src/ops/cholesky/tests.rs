//! GPU and CPU tests of the cuda Cholesky: the panels, the ticket order, the f32 fallback.

use std::cell::Cell;

use ndarray::Array2;
use ndgpu_conformance::compare::cholesky_ratio;
use ndgpu_core::kmeans::SplitMix64;
use ndgpu_core::{tolerance, Backend, Error, Factorize, Family};

use super::order::ticket_order;
use super::{panel_columns, PANEL_TILES};
use crate::CudaBackend;
use ndgpu_cuda_runtime::CudaElement;

thread_local! {
    /// The panel width this thread's factorizations take instead of the rule's, so
    /// that the GPU test below runs many panels on small matrices.
    pub(super) static PANEL_TILES_HERE: Cell<Option<usize>> = const { Cell::new(None) };
    /// Whether this thread's f32 factorizations are refused the f64 copy, as a device
    /// without the memory for it refuses it.
    static NO_F64_COPY_HERE: Cell<bool> = const { Cell::new(false) };
}

/// `copy`, or, where this thread is refused the f64 copy, the error of a device
/// without `bytes` free.
pub(super) fn refused<T>(copy: ndgpu_core::Result<T>, bytes: usize) -> ndgpu_core::Result<T> {
    if !NO_F64_COPY_HERE.with(Cell::get) {
        return copy;
    }
    Err(Error::OutOfMemory {
        op: "cholesky",
        requested: bytes,
        free: 0,
        total: 0,
    })
}

/// The IEEE f32 default where the device cannot hold its f64 copy: the blocked path
/// of `tensor_core`, bit for bit (results and the first failing pivot), within
/// LAPACK's ratio; with the copy, a different rounding (the test reaches the other
/// path).
#[test]
#[ignore = "needs a CUDA device"]
fn the_f32_default_without_room_for_its_f64_copy_is_the_blocked_path() {
    let mut b = CudaBackend::new(0).expect("a CUDA device");
    assert_eq!(b.variant(Family::Cholesky), "dataflow");
    let bound = tolerance::cholesky_ratio::<f32>(b.precision(Family::Cholesky));
    let mut rng = SplitMix64::new(11);
    let factor = |b: &mut CudaBackend, v: &str, refuse: bool, a: &Array2<f32>| {
        b.set_variant(Family::Cholesky, v).unwrap();
        NO_F64_COPY_HERE.with(|c| c.set(refuse));
        let l = b.cholesky(a.view());
        NO_F64_COPY_HERE.with(|c| c.set(false));
        l
    };
    let bits = |x: &Array2<f32>| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for n in [65, 513, 1000] {
        let a = spd::<f32>(&mut rng, n);
        let l = factor(&mut b, "dataflow", true, &a).unwrap();
        let blocked = factor(&mut b, "tensor_core", false, &a).unwrap();
        assert_eq!(bits(&l), bits(&blocked), "n={n}");
        let r = cholesky_ratio(a.view(), l.view());
        assert!(r <= bound, "n={n}: ratio {r:.3e}");
        let copied = factor(&mut b, "dataflow", false, &a).unwrap();
        assert_ne!(
            bits(&copied),
            bits(&blocked),
            "n={n}: the copy's path not taken"
        );
    }
    for (n, p) in [(513, 300), (1000, 999)] {
        let mut a = spd::<f32>(&mut rng, n);
        a[[p, p]] = -1.0;
        let want = factor(&mut b, "tensor_core", false, &a);
        let got = factor(&mut b, "dataflow", true, &a);
        match (got, want) {
            (
                Err(Error::NotPositiveDefinite { pivot, value }),
                Err(Error::NotPositiveDefinite {
                    pivot: p2,
                    value: v2,
                }),
            ) => {
                assert_eq!((pivot, value.to_bits()), (p2, v2.to_bits()), "n={n}");
                assert_eq!(pivot, p, "n={n}");
            }
            other => panic!("n={n} p={p}: {other:?}"),
        }
    }
}

/// The rule: panels of PANEL_TILES once there would be more than three, smaller
/// orders in one launch.
#[test]
fn panels_only_for_large_orders() {
    let edge = 3 * PANEL_TILES * 64;
    assert_eq!(panel_columns(edge), 3 * PANEL_TILES);
    assert_eq!(panel_columns(edge + 1), PANEL_TILES);
    assert_eq!(panel_columns(4 * edge), PANEL_TILES);
    assert_eq!(panel_columns(1), 1);
}

/// The dataflow factorization in panels of one and three tile columns (a panel
/// update after each), f64 (`dataflow`) and f32 on 3xTF32 (`dataflow_3x`): LAPACK's
/// residual ratio (the variant's threshold) on SPD matrices of orders around the tile
/// edges (odd ones in the padded copy), and the first failing pivot where it lies in a
/// later panel, as in one launch.
#[test]
#[ignore = "needs a CUDA device"]
fn narrow_panels_keep_lapacks_ratio_and_the_first_pivot() {
    let mut b = CudaBackend::new(0).expect("a CUDA device");
    assert_eq!(b.variant(Family::Cholesky), "dataflow");
    narrow_panels::<f64>(&b);
    b.set_variant(Family::Cholesky, "dataflow_3x").unwrap();
    narrow_panels::<f32>(&b);
}

fn narrow_panels<T: CudaElement>(b: &CudaBackend) {
    let bound = tolerance::cholesky_ratio::<T>(b.precision(Family::Cholesky));
    let mut rng = SplitMix64::new(7);
    for width in [1, 3] {
        PANEL_TILES_HERE.with(|w| w.set(Some(width)));
        let what = |n| format!("{} width {width} n={n}", T::SUFFIX);
        for n in [65, 127, 200, 513, 1000] {
            let a = spd::<T>(&mut rng, n);
            let l = b.cholesky(a.view()).unwrap();
            let r = cholesky_ratio(a.view(), l.view());
            assert!(r <= bound, "{}: ratio {r:.3e}", what(n));
            assert!(l.iter().all(|x| x.is_finite()), "{}", what(n));
        }
        for (n, p) in [(200, 100), (513, 300), (1000, 64 * 9), (1000, 999)] {
            // The leading minors up to p stay positive; pivot p is below A[p][p] < 0.
            let mut a = spd::<T>(&mut rng, n);
            a[[p, p]] = -T::one();
            match b.cholesky(a.view()) {
                Err(Error::NotPositiveDefinite { pivot, value }) => {
                    assert_eq!(pivot, p, "{}: value {value}", what(n));
                    assert!(value < 0.0, "{} p={p}: {value}", what(n));
                }
                other => panic!("{} p={p}: {other:?}", what(n)),
            }
        }
    }
    PANEL_TILES_HERE.with(|w| w.set(None));
}

/// M·Mᵀ/n + I, M uniform in [-1, 1), rounded to T.
fn spd<T: CudaElement>(rng: &mut SplitMix64, n: usize) -> Array2<T> {
    let m = Array2::from_shape_simple_fn((n, n), || 2.0 * rng.next_f64() - 1.0);
    (m.dot(&m.t()) / n as f64 + Array2::<f64>::eye(n)).mapv(T::from_f64)
}

/// Every tile of the dataflow kernel's order (the whole matrix, or a panel of its
/// first nc tile columns) comes after every tile whose flag it waits on: no block can
/// wait on a tile that no running block holds.
#[test]
fn ticket_order_respects_every_wait() {
    for (nt, nc) in [
        (1, 1),
        (2, 2),
        (3, 3),
        (5, 5),
        (17, 17),
        (64, 64),
        (129, 129),
        (5, 2),
        (64, 32),
        (129, 1),
    ] {
        for blocks in [1, 16, 264] {
            let order = ticket_order(nt, nc, blocks).unwrap();
            assert_eq!(order.len(), (0..nc).map(|j| nt - j).sum::<usize>());
            let mut at = vec![vec![usize::MAX; nt]; nt];
            for (t, &o) in order.iter().enumerate() {
                let (i, j) = ((o & 0xffff) as usize, (o >> 16) as usize);
                assert!(j <= i && i < nt, "nt {nt}: ticket {t} is ({i}, {j})");
                assert_eq!(at[i][j], usize::MAX, "nt {nt}: ({i}, {j}) twice");
                at[i][j] = t;
            }
            // A panel's tiles only: its nc columns, every row.
            for (i, row) in at.iter().enumerate() {
                for (j, &t) in row.iter().enumerate().take(i + 1) {
                    assert_eq!(t == usize::MAX, j >= nc, "nt {nt} nc {nc}: ({i}, {j})");
                }
            }
            // The ticket whose block makes the diagonal tile (j, j) final.
            let final_diag = |j: usize| if j == 0 { at[0][0] } else { at[j][j - 1] };
            for j in 0..nc {
                for i in j..nt {
                    let t = at[i][j];
                    let mut waits = Vec::new();
                    if i == j {
                        waits.extend((0..j.saturating_sub(1)).map(|k| at[j][k]));
                    } else {
                        waits.extend(at[i][..j].iter().chain(&at[j][..j]));
                        waits.push(final_diag(j));
                        if i == j + 1 && i < nc {
                            waits.push(at[i][i]); // the partial sum it finishes
                        }
                    }
                    for w in waits {
                        assert!(
                            w < t,
                            "nt {nt} blocks {blocks}: ({i}, {j}) at {t} waits on ticket {w}"
                        );
                    }
                }
            }
        }
    }
}
