//! Transpose: exact, in every layout, with NaN and infinities carried through.

use ndarray::{Array2, ArrayView2};
use ndgpu_core::{Element, Ops};

use super::Shapes;
use crate::data::{Laid, Layout, Rng};
use crate::report::{Recorder, Verdict};
use crate::Sizes;

const SMALL: Shapes<2> = &[
    [0, 0],
    [0, 7],
    [7, 0],
    [1, 1],
    [1, 97],
    [97, 1],
    [7, 31],
    [33, 65],
    [65, 33],
    [100, 129],
    [129, 100],
    [32, 64],
    [64, 64],
];
const MEDIUM: Shapes<2> = &[[1000, 1000], [1025, 513], [257, 1999]];

/// Whether two values are the same (NaN equal to NaN).
fn same<T: Element>(x: T, y: T) -> bool {
    x == y || (x.is_nan() && y.is_nan())
}

/// Requires `got` to be exactly `aᵀ`, C-ordered.
fn check_exact<T: Element>(v: &mut Verdict, a: ArrayView2<T>, got: &Array2<T>) {
    let (m, n) = a.dim();
    v.require(got.dim() == (n, m), || {
        format!("shape {:?}, expected {n}x{m}", got.dim())
    });
    if got.dim() != (n, m) {
        return;
    }
    v.require(got.is_standard_layout(), || {
        "output is not C-ordered".into()
    });
    let bad = got.indexed_iter().find(|&((i, j), g)| !same(*g, a[[j, i]]));
    v.require(bad.is_none(), || {
        let ((i, j), g) = bad.expect("found");
        format!(
            "element ({i}, {j}) is {g}, expected A[{j}, {i}] = {}",
            a[[j, i]]
        )
    });
}

/// Every transpose case.
pub(crate) fn run<T: Element, B: Ops<T> + ?Sized>(
    b: &B,
    sizes: Sizes,
    rng: &mut Rng,
    rec: &mut Recorder,
) {
    for &[m, n] in super::shapes(sizes, SMALL, MEDIUM).iter() {
        let a = rng.matrix::<T>(m, n);
        for layout in Layout::ALL {
            let laid = Laid::new(&a, layout);
            rec.case(format!("transpose {m}x{n} A:{}", layout.name()), |v| {
                if let Some(got) = v.ok(b.transpose(laid.view())) {
                    check_exact(v, laid.view(), &got);
                }
            });
        }
        // Twice gives A back, through the backend's own (C-ordered) output.
        rec.case(format!("transpose twice {m}x{n}"), |v| {
            let once = v.ok(b.transpose(a.view()));
            if let Some(twice) = once.and_then(|t| v.ok(b.transpose(t.view()))) {
                v.require(twice == a, || {
                    "transpose(transpose(A)) differs from A".into()
                });
            }
        });
    }
    // Non-finite values are data like any other: copied, not rejected.
    let mut a = rng.matrix::<T>(7, 33);
    a[[2, 3]] = T::nan();
    a[[0, 1]] = T::infinity();
    a[[6, 32]] = T::neg_infinity();
    for layout in [Layout::C, Layout::Strided] {
        let laid = Laid::new(&a, layout);
        rec.case(
            format!("transpose 7x33 with NaN and ±Inf A:{}", layout.name()),
            |v| {
                if let Some(got) = v.ok(b.transpose(laid.view())) {
                    check_exact(v, laid.view(), &got);
                }
            },
        );
    }
}
