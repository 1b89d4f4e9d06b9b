//! How the shootout's tables and figures write rates, sizes and lines.

use crate::row::Row;

/// A rate with about three significant digits.
pub fn format_rate(r: f64) -> String {
    if !r.is_finite() {
        "-".into()
    } else if r >= 100.0 {
        format!("{r:.0}")
    } else if r >= 10.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

/// A time in seconds as milliseconds or microseconds, with about three significant
/// digits.
pub fn format_time(secs: f64) -> String {
    if !secs.is_finite() {
        "-".into()
    } else if secs >= 1e-3 {
        format!("{} ms", format_rate(secs * 1e3))
    } else {
        format!("{} µs", format_rate(secs * 1e6))
    }
}

/// The lines of a table: each distinct (backend, variant, transfers), first seen first.
pub fn lines_of<'a>(rows: &[&'a Row]) -> Vec<Vec<&'a Row>> {
    let mut lines: Vec<Vec<&Row>> = Vec::new();
    for &r in rows {
        match lines.iter_mut().find(|l| l[0].label() == r.label()) {
            Some(l) => l.push(r),
            None => lines.push(vec![r]),
        }
    }
    lines
}

/// A size as `2ᵏ` (with `pow2`, for powers of two) or as the number.
pub fn size_label(n: f64, pow2: bool) -> String {
    let e = n.log2().round();
    if pow2 && (n - 2f64.powf(e)).abs() < 0.5 {
        const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
        let digits: String = (e as u32)
            .to_string()
            .chars()
            .map(|c| SUP[c.to_digit(10).unwrap_or(0) as usize])
            .collect();
        format!("2{digits}")
    } else {
        format!("{}", n.round())
    }
}

/// Whether a ladder of sizes reads better as powers of two: all of them are, and the
/// largest has more than five digits.
pub fn pow2_style(sizes: &[usize]) -> bool {
    sizes.iter().all(|n| n.is_power_of_two()) && sizes.iter().any(|&n| n >= 1 << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(format_time(0.01234), "12.3 ms");
        assert_eq!(format_time(2.5), "2500 ms");
        assert_eq!(format_time(4.2e-5), "42.0 µs");
        assert_eq!(format_time(f64::NAN), "-");
    }

    #[test]
    fn size_labels() {
        assert_eq!(size_label(256.0, false), "256");
        assert_eq!(size_label(16384.0, true), "2¹⁴");
        assert_eq!(size_label((1u64 << 28) as f64, true), "2²⁸");
        assert_eq!(size_label(100_003.0, true), "100003");
        assert!(pow2_style(&[1 << 14, 1 << 20]));
        assert!(!pow2_style(&[256, 8192]));
        assert!(!pow2_style(&[1 << 20, 100_003]));
    }
}
