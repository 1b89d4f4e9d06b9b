//! Timing policy and statistics: the median, min and max of the repetitions, how many
//! repetitions fit the time budget, and the wall clock (CUDA events are in `gpu`).

use std::time::Instant;

use ndgpu_core::Result;

/// Median, min and max of the timed repetitions, in seconds per run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// The median (mean of the two middle samples for an even count).
    pub median: f64,
    /// The fastest sample.
    pub min: f64,
    /// The slowest sample.
    pub max: f64,
    /// Number of samples.
    pub reps: usize,
}

impl Stats {
    /// The statistics of `samples` (seconds); `None` if there are none or one is not
    /// a finite, non-negative number.
    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() || samples.iter().any(|s| !(s.is_finite() && *s >= 0.0)) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        let median = if v.len() % 2 == 1 {
            v[mid]
        } else {
            0.5 * (v[mid - 1] + v[mid])
        };
        Some(Stats {
            median,
            min: v[0],
            max: v[v.len() - 1],
            reps: v.len(),
        })
    }
}

/// How many timed repetitions to make of a run that takes about `one_run_s`: at most
/// `max_reps`, at least `min_reps` (capped by `max_reps`), and otherwise as many as fit
/// in `budget_s`. This is what keeps the largest sizes from dominating the run.
pub fn reps_for(one_run_s: f64, max_reps: usize, min_reps: usize, budget_s: f64) -> usize {
    let max_reps = max_reps.max(1);
    let fit = if one_run_s > 0.0 {
        (budget_s / one_run_s).floor()
    } else {
        f64::INFINITY
    };
    let fit = if fit.is_finite() {
        fit as usize
    } else {
        max_reps
    };
    fit.clamp(min_reps.min(max_reps), max_reps)
}

/// How many back-to-back runs to bracket with one pair of events, so that a timed
/// region lasts at least `min_region_s` and the launch latency between the start event
/// and the first kernel is amortised (at most 256 runs).
pub fn batch_for(one_run_s: f64, min_region_s: f64) -> usize {
    if one_run_s.is_nan() || one_run_s <= 0.0 {
        return 1;
    }
    ((min_region_s / one_run_s).ceil() as usize).clamp(1, 256)
}

/// Wall-clock seconds of `f`.
///
/// # Errors
/// Those of `f`.
pub fn wall<R>(f: impl FnOnce() -> Result<R>) -> Result<(f64, R)> {
    let t = Instant::now();
    let r = f()?;
    Ok((t.elapsed().as_secs_f64(), r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let s = Stats::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.reps), (2.0, 1.0, 3.0, 3));
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.reps), (2.5, 1.0, 4.0, 4));
        let s = Stats::of(&[7.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (7.0, 7.0, 7.0));
    }

    #[test]
    fn median_resists_an_outlier() {
        let s = Stats::of(&[1.0, 1.1, 0.9, 1.0, 100.0]).unwrap();
        assert_eq!(s.median, 1.0);
        assert_eq!(s.max, 100.0);
    }

    #[test]
    fn no_stats_of_nothing_or_garbage() {
        assert_eq!(Stats::of(&[]), None);
        assert_eq!(Stats::of(&[1.0, f64::NAN]), None);
        assert_eq!(Stats::of(&[-1.0]), None);
    }

    #[test]
    fn reps_fit_the_budget() {
        // Fast runs: all the reps asked for.
        assert_eq!(reps_for(1e-4, 20, 3, 1.5), 20);
        // 0.5 s per run with a 1.5 s budget: 3.
        assert_eq!(reps_for(0.5, 20, 3, 1.5), 3);
        // Very slow runs still get the minimum.
        assert_eq!(reps_for(10.0, 20, 3, 1.5), 3);
        // ... unless fewer were asked for.
        assert_eq!(reps_for(10.0, 2, 3, 1.5), 2);
        assert_eq!(reps_for(0.0, 7, 3, 1.5), 7);
        assert_eq!(reps_for(0.1, 0, 3, 1.5), 1);
    }

    #[test]
    fn batches_amortise_launch_latency() {
        assert_eq!(batch_for(1e-3, 1e-3), 1);
        assert_eq!(batch_for(1e-5, 1e-3), 100);
        assert_eq!(batch_for(1e-9, 1e-3), 256);
        assert_eq!(batch_for(0.0, 1e-3), 1);
        assert_eq!(batch_for(f64::NAN, 1e-3), 1);
    }

    #[test]
    fn wall_clock_measures_something() {
        let (t, v) = wall(|| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            Ok(3)
        })
        .unwrap();
        assert_eq!(v, 3);
        assert!(t >= 0.004, "{t}");
    }
}
