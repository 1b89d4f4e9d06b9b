//! The reference of a reduction of a matrix, whole or along an axis: every lane summed
//! in f64 with its error bound (`tolerance::sum` times the sum of the terms' magnitudes),
//! or the first index of every lane's largest element (the trait's tie rule), and the
//! check of a result against it.

use ndarray::Array2;
use ndgpu_core::{tolerance, ArgOp, Element, ReduceOp};

use super::Output;
use crate::cases::Reduction;

/// What a correct reduction gives.
#[derive(Debug, Clone)]
pub(super) enum Lanes {
    /// Per lane (one lane for a whole reduction): the exact value and its bound.
    Values {
        what: &'static str,
        exact: Vec<f64>,
        bound: Vec<f64>,
    },
    /// Per lane: the index of the first largest element (flat, row-major, for a whole
    /// reduction).
    Indices(Vec<usize>),
}

/// Visits every element of `x` in row-major order with its lane and its position in
/// the lane (flat, row-major, for a whole reduction), so that each lane is seen in
/// order, in one pass over memory; returns the number of lanes and their length.
fn walk<T: Element>(
    x: &Array2<T>,
    axis: Option<usize>,
    mut visit: impl FnMut(usize, usize, f64),
) -> (usize, usize) {
    let (rows, cols) = x.dim();
    for ((i, j), v) in x.indexed_iter() {
        let (lane, at) = match axis {
            None => (0, i * cols + j),
            Some(0) => (j, i),
            Some(_) => (i, j),
        };
        visit(lane, at, v.as_f64());
    }
    match axis {
        None => (1, rows * cols),
        Some(0) => (cols, rows),
        Some(_) => (rows, cols),
    }
}

impl Lanes {
    /// The reference of `reduction` of `x` along `axis` (`None`: the whole matrix).
    pub(super) fn new<T: Element>(
        x: &Array2<T>,
        reduction: Reduction,
        axis: Option<usize>,
    ) -> Self {
        let count = match axis {
            None => 1,
            Some(0) => x.ncols(),
            Some(_) => x.nrows(),
        };
        match reduction {
            Reduction::Value(op) => {
                let square = op == ReduceOp::SumSq;
                let (mut exact, mut mag) = (vec![0.0; count], vec![0.0; count]);
                let (_, len) = walk(x, axis, |lane, _, v| {
                    let t = if square { v * v } else { v };
                    exact[lane] += t;
                    mag[lane] += t.abs();
                });
                let bound = mag.iter().map(|m| tolerance::sum::<T>(len) * m).collect();
                Lanes::Values {
                    what: op.name(),
                    exact,
                    bound,
                }
            }
            // The inputs hold no NaN: the first extreme element of each lane.
            Reduction::Arg(op) => {
                let mut best = vec![(usize::MAX, 0.0); count];
                walk(x, axis, |lane, at, v| {
                    let (b, bv) = best[lane];
                    let better = match op {
                        ArgOp::ArgMax => v > bv,
                        ArgOp::ArgMin => v < bv,
                    };
                    if b == usize::MAX || better {
                        best[lane] = (at, v);
                    }
                });
                Lanes::Indices(best.into_iter().map(|b| b.0).collect())
            }
        }
    }

    /// Checks `out`: a scalar or an index for a whole reduction, the keepdims matrix
    /// (1×cols for axis 0, rows×1 for axis 1) or the indices along an axis.
    pub(super) fn check<T: Element>(
        &self,
        out: &Output<T>,
        axis: Option<usize>,
    ) -> Result<(), String> {
        let got: Vec<f64> = match (self, out, axis) {
            (Lanes::Values { .. }, Output::Scalar(v), None) => vec![v.as_f64()],
            (Lanes::Values { exact, .. }, Output::Matrix(m), Some(a)) => {
                let want = match a {
                    0 => (1, exact.len()),
                    _ => (exact.len(), 1),
                };
                super::dims(m, want)?;
                m.iter().map(|v| v.as_f64()).collect()
            }
            (Lanes::Indices(_), Output::Index(i), None) => vec![*i as f64],
            (Lanes::Indices(_), Output::Indices(i), Some(_)) => {
                i.iter().map(|&i| i as f64).collect()
            }
            _ => return Err("the result has the wrong kind for this reduction".into()),
        };
        match self {
            Lanes::Values { what, exact, bound } => {
                if got.len() != exact.len() {
                    return Err(format!("{} values, expected {}", got.len(), exact.len()));
                }
                for (i, ((g, e), b)) in got.iter().zip(exact).zip(bound).enumerate() {
                    let err = (g - e).abs();
                    if !super::within(err, *b) {
                        let at = axis.map_or(String::new(), |_| format!("[{i}]"));
                        return Err(format!(
                            "{what}{at} is {g:e}, reference {e:e}: error {err:e} above the bound {b:e}"
                        ));
                    }
                }
                Ok(())
            }
            Lanes::Indices(want) => {
                if got.len() != want.len() {
                    return Err(format!("{} indices, expected {}", got.len(), want.len()));
                }
                match got.iter().zip(want).position(|(g, &w)| *g != w as f64) {
                    None => Ok(()),
                    Some(i) => Err(format!(
                        "index{} is {}, the first extreme is at {}",
                        axis.map_or(String::new(), |_| format!("[{i}]")),
                        got[i],
                        want[i]
                    )),
                }
            }
        }
    }
}
