//! The soak's arguments, per-operation tallies and memory readings.

use crate::ops::OPS;

/// The command line.
pub const USAGE: &str = "usage: soak [--backend NAME] [--threads N] [--seconds S] [--seed N] \
                         [--check-every N] [--max-rss-growth-mb M]";

/// What the command line asks for.
#[derive(Debug)]
pub struct Args {
    pub backend: String,
    pub threads: usize,
    pub seconds: f64,
    pub seed: u64,
    pub check_every: usize,
    pub max_rss_growth_mb: u64,
}

impl Args {
    /// Parses `--flag value` pairs; a random seed when none is given.
    pub fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut a = Args {
            backend: "auto".into(),
            threads: 4,
            seconds: 60.0,
            seed: random_seed(),
            check_every: 4,
            max_rss_growth_mb: 64,
        };
        while let Some(flag) = it.next() {
            let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let bad = |_| format!("{flag} {value}: not a valid value");
            let bad_f = |_| format!("{flag} {value}: not a number");
            match flag.as_str() {
                "--backend" => a.backend = value,
                "--threads" => a.threads = value.parse().map_err(bad)?,
                "--seconds" => a.seconds = value.parse().map_err(bad_f)?,
                "--seed" => a.seed = value.parse().map_err(bad)?,
                "--check-every" => a.check_every = value.parse().map_err(bad)?,
                "--max-rss-growth-mb" => a.max_rss_growth_mb = value.parse().map_err(bad)?,
                _ => return Err(format!("unknown flag {flag}")),
            }
        }
        if a.threads == 0 || a.check_every == 0 || !a.seconds.is_finite() || a.seconds <= 0.0 {
            return Err("--threads, --check-every and --seconds must be positive".into());
        }
        Ok(a)
    }
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// Calls and failures of one thread, or of all of them merged.
#[derive(Default)]
pub struct Tally {
    /// Seconds of each call, per operation (indexed as [`OPS`]).
    pub seconds: Vec<Vec<f64>>,
    pub failures: usize,
    pub messages: Vec<String>,
}

impl Tally {
    /// The tally of a thread that panicked: one failure.
    pub fn panicked() -> Tally {
        let mut t = Tally::default();
        t.fail("a worker thread panicked".into());
        t
    }

    pub fn record(&mut self, op: usize, secs: f64) {
        if self.seconds.len() < OPS.len() {
            self.seconds.resize(OPS.len(), Vec::new());
        }
        self.seconds[op].push(secs);
    }

    pub fn fail(&mut self, message: String) {
        self.failures += 1;
        if self.messages.len() < 20 {
            self.messages.push(message);
        }
    }

    pub fn calls(&self) -> usize {
        self.seconds.iter().map(Vec::len).sum()
    }

    pub fn merge(all: Vec<Tally>) -> Tally {
        let mut out = Tally::default();
        for t in all {
            for (op, s) in t.seconds.into_iter().enumerate() {
                for v in s {
                    out.record(op, v);
                }
            }
            out.failures += t.failures;
            out.messages.extend(t.messages);
        }
        out.messages.truncate(20);
        out
    }

    /// Prints calls per operation with their median and slowest, then the failures.
    pub fn print(&self, elapsed: f64) {
        println!("{} calls in {elapsed:.1} s", self.calls());
        println!("| op | calls | median ms | slowest ms | slowest/median |");
        println!("|---|---:|---:|---:|---:|");
        for (op, s) in self.seconds.iter().enumerate() {
            if s.is_empty() {
                continue;
            }
            let mut sorted = s.clone();
            sorted.sort_by(f64::total_cmp);
            let (median, max) = (sorted[sorted.len() / 2], sorted[sorted.len() - 1]);
            let times = if median > 0.0 { max / median } else { 0.0 };
            println!(
                "| {} | {} | {:.3} | {:.3} | {times:.1} |",
                OPS[op],
                s.len(),
                median * 1e3,
                max * 1e3
            );
        }
        println!("failures: {}", self.failures);
        for m in &self.messages {
            println!("  {m}");
        }
    }
}

/// This process's resident set in KiB (`VmRSS` of /proc/self/status), where there is one.
pub fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Prints three readings in MiB, or that there are none.
pub fn print_memory(what: &str, start: Option<u64>, fifth: Option<u64>, end: Option<u64>) {
    match (start, fifth, end) {
        (Some(a), Some(b), Some(c)) => println!(
            "{what}: {} MiB at the start, {} MiB after the first fifth, {} MiB at the end",
            a / 1024,
            b / 1024,
            c / 1024
        ),
        _ => println!("{what}: not available here"),
    }
}
