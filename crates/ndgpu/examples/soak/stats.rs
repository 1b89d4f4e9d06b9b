//! The soak's arguments, and the tallies of its calls: per operation and size class,
//! the seconds of each timed call, with the bound on the slowest.

use ndgpu::DType;

use crate::ops::{Measure, OPS};

/// The command line.
pub const USAGE: &str = "usage: soak [--backend NAME] [--threads N] [--seconds S] [--seed N] \
                         [--check-every N] [--warmup S] [--max-growth-pct P] \
                         [--max-slowest-ratio R|none] [--faults N]";

/// What the command line asks for.
#[derive(Debug)]
pub struct Args {
    pub backend: String,
    pub threads: usize,
    /// Seconds of the timed run, after the warm-up.
    pub seconds: f64,
    pub seed: u64,
    pub check_every: usize,
    pub warmup: f64,
    pub max_growth_pct: f64,
    pub max_slowest_ratio: Option<f64>,
    /// Thread 0 injects faults every this many calls; 0: never.
    pub faults: usize,
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
            warmup: 0.0,
            max_growth_pct: 5.0,
            max_slowest_ratio: None,
            faults: 0,
        };
        while let Some(flag) = it.next() {
            let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let bad = |_| format!("{flag} {value}: not a valid value");
            let number = || match value.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(format!("{flag} {value}: not a number of 0 or more")),
            };
            match flag.as_str() {
                "--backend" => a.backend.clone_from(&value),
                "--threads" => a.threads = value.parse().map_err(bad)?,
                "--seconds" => a.seconds = number()?,
                "--seed" => a.seed = value.parse().map_err(bad)?,
                "--check-every" => a.check_every = value.parse().map_err(bad)?,
                "--warmup" => a.warmup = number()?,
                "--max-growth-pct" => a.max_growth_pct = number()?,
                "--max-slowest-ratio" if value == "none" => a.max_slowest_ratio = None,
                "--max-slowest-ratio" => a.max_slowest_ratio = Some(number()?),
                "--faults" => a.faults = value.parse().map_err(bad)?,
                _ => return Err(format!("unknown flag {flag}")),
            }
        }
        if a.threads == 0 || a.check_every == 0 || a.seconds == 0.0 {
            return Err("--threads, --check-every and --seconds must be positive".into());
        }
        if a.max_slowest_ratio.is_some_and(|r| r < 1.0) {
            return Err("--max-slowest-ratio must be 1 or more".into());
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

/// The calls of one operation whose times are compared with each other: one element
/// type, and work within a factor of two (`2^log2_work` up to twice that).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SizeClass {
    pub f64: bool,
    pub log2_work: u8,
}

impl SizeClass {
    pub fn of(dtype: DType, m: &Measure) -> SizeClass {
        SizeClass {
            f64: dtype == DType::F64,
            log2_work: m.work.max(1.0).log2().floor() as u8,
        }
    }
}

impl std::fmt::Display for SizeClass {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let t = if self.f64 { "f64" } else { "f32" };
        write!(f, "{t}, work 2^{}", self.log2_work)
    }
}

/// The median and slowest of some calls' seconds.
#[derive(Clone, Copy)]
pub struct Spread {
    pub calls: usize,
    pub median: f64,
    pub slowest: f64,
}

impl Spread {
    /// `None` for no calls.
    fn of(secs: impl Iterator<Item = f64>) -> Option<Spread> {
        let mut sorted: Vec<f64> = secs.collect();
        sorted.sort_by(f64::total_cmp);
        let (&median, &slowest) = (sorted.get(sorted.len() / 2)?, sorted.last()?);
        Some(Spread {
            calls: sorted.len(),
            median,
            slowest,
        })
    }

    /// Slowest over median (0 when the median is 0).
    pub fn ratio(&self) -> f64 {
        if self.median > 0.0 {
            self.slowest / self.median
        } else {
            0.0
        }
    }
}

/// Calls, failures and faults of one thread, or of all of them merged.
#[derive(Default)]
pub struct Tally {
    /// Size class and seconds of each timed call, per operation (indexed as [`OPS`]).
    pub samples: Vec<Vec<(SizeClass, f64)>>,
    /// Calls made during the warm-up: checked, not timed.
    pub warmup_calls: usize,
    pub failures: usize,
    pub messages: Vec<String>,
    /// Faults injected, and those handled as required.
    pub faults_injected: usize,
    pub faults_handled: usize,
}

impl Tally {
    /// The tally of a thread that panicked: one failure.
    pub fn panicked() -> Tally {
        let mut t = Tally::default();
        t.fail("a worker thread panicked".into());
        t
    }

    pub fn record(&mut self, op: usize, class: SizeClass, secs: f64) {
        if self.samples.len() < OPS.len() {
            self.samples.resize(OPS.len(), Vec::new());
        }
        self.samples[op].push((class, secs));
    }

    pub fn fail(&mut self, message: String) {
        self.failures += 1;
        if self.messages.len() < 20 {
            self.messages.push(message);
        }
    }

    /// Timed calls.
    pub fn calls(&self) -> usize {
        self.samples.iter().map(Vec::len).sum()
    }

    pub fn merge(all: Vec<Tally>) -> Tally {
        let mut out = Tally::default();
        for t in all {
            for (op, s) in t.samples.into_iter().enumerate() {
                for (class, secs) in s {
                    out.record(op, class, secs);
                }
            }
            out.warmup_calls += t.warmup_calls;
            out.failures += t.failures;
            out.messages.extend(t.messages);
            out.faults_injected += t.faults_injected;
            out.faults_handled += t.faults_handled;
        }
        out.messages.truncate(20);
        out
    }

    /// Per size class of one operation's `samples`, the spread of their seconds.
    fn classes(samples: &[(SizeClass, f64)]) -> Vec<(SizeClass, Spread)> {
        let mut s = samples.to_vec();
        s.sort_by_key(|&(class, _)| class);
        s.chunk_by(|a, b| a.0 == b.0)
            .filter_map(|run| Some((run[0].0, Spread::of(run.iter().map(|&(_, t)| t))?)))
            .collect()
    }

    /// Prints the calls per operation: median and slowest over all its sizes, and the
    /// size class where the slowest call is furthest above the class's median; then the
    /// faults and the failures.
    pub fn print(&self, warmup: f64, elapsed: f64) {
        if warmup > 0.0 {
            print!(
                "{} calls in the {warmup} s warm-up (checked, not timed); ",
                self.warmup_calls
            );
        }
        println!("{} timed calls in {elapsed:.1} s", self.calls());
        println!(
            "| op | calls | median ms | slowest ms | slowest/median | \
             worst size class | its calls | its median ms | its slowest/median |"
        );
        println!("|---|---:|---:|---:|---:|---|---:|---:|---:|");
        for (op, s) in self.samples.iter().enumerate() {
            let Some(all) = Spread::of(s.iter().map(|&(_, t)| t)) else {
                continue;
            };
            let worst = Self::classes(s)
                .into_iter()
                .max_by(|a, b| a.1.ratio().total_cmp(&b.1.ratio()));
            let (class, w) = worst.expect("an operation with calls has a class");
            println!(
                "| {} | {} | {:.3} | {:.3} | {:.1} | {class} | {} | {:.3} | {:.1} |",
                OPS[op],
                all.calls,
                all.median * 1e3,
                all.slowest * 1e3,
                all.ratio(),
                w.calls,
                w.median * 1e3,
                w.ratio()
            );
        }
        if self.faults_injected > 0 {
            println!(
                "faults injected: {}, handled: {}",
                self.faults_injected, self.faults_handled
            );
        }
        println!("failures: {}", self.failures);
        for m in &self.messages {
            println!("  {m}");
        }
    }

    /// When in some size class of some operation the slowest call took more than
    /// `bound` times the class's median: how many classes, and the worst ten.
    pub fn slower_than(&self, bound: f64) -> Option<String> {
        let (mut slow, mut classes) = (Vec::new(), 0);
        for (op, samples) in self.samples.iter().enumerate() {
            for (class, s) in Self::classes(samples) {
                classes += 1;
                if s.slowest > bound * s.median {
                    slow.push((op, class, s));
                }
            }
        }
        slow.sort_by(|a, b| b.2.ratio().total_cmp(&a.2.ratio()));
        let mut out = format!(
            "in {} size class(es) of {classes}, the slowest call took more than {bound}× \
             the class's median",
            slow.len()
        );
        for (op, class, s) in slow.iter().take(10) {
            out += &format!(
                "\n  {} ({class}): slowest {:.3} ms = {:.2}× the median {:.3} ms of {} calls",
                OPS[*op],
                s.slowest * 1e3,
                s.ratio(),
                s.median * 1e3,
                s.calls
            );
        }
        if slow.len() > 10 {
            out += &format!("\n  and {} more", slow.len() - 10);
        }
        (!slow.is_empty()).then_some(out)
    }
}
