//! The column ratios that the checks of the factorizations and of the spectra share.

use ndarray::ArrayView2;
use ndgpu_conformance::compare::sampled::within;
use ndgpu_conformance::par;
use ndgpu_core::Element;

/// Fails with the worst of `ratios` (column, ratio) above `limit`.
pub(super) fn worst(ratios: Vec<(usize, f64)>, limit: f64, what: &str) -> Result<(), String> {
    match ratios.into_iter().max_by(|x, y| x.1.total_cmp(&y.1)) {
        Some((j, ratio)) if !within(ratio, limit) => {
            Err(format!("column {j}: {what} = {ratio:.3e}, above {limit}"))
        }
        _ => Ok(()),
    }
}

/// ‖(QᵀQ − I)_c‖₁ / (m·ε) of sampled columns c of an m×k Q with orthonormal columns.
pub(super) fn sampled_orthogonality<T: Element>(
    q: ArrayView2<T>,
    columns: &[usize],
) -> Vec<(usize, f64)> {
    let (m, k) = q.dim();
    par::map(columns, |&c| {
        let mut qtq = vec![0.0; k];
        for row in q.rows() {
            let qc = row[c].as_f64();
            for (s, v) in qtq.iter_mut().zip(row) {
                *s += v.as_f64() * qc;
            }
        }
        qtq[c] -= 1.0;
        (
            c,
            qtq.iter().map(|v| v.abs()).sum::<f64>() / (m as f64 * T::EPS),
        )
    })
}
