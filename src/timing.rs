//! `--time-passes` (as in LLVM and rustc): wall time and peak resident memory of each
//! pipeline stage, printed on stderr by the command line.
//!
//! Peak memory is the resident-set high-water mark (`VmHWM` in `/proc/self/status`),
//! reset before each stage by writing `5` to `/proc/self/clear_refs` (Linux
//! `Documentation/filesystems/proc.rst`, "clear_refs"); so a stage's figure is the most
//! memory the process held while it ran, including what earlier stages still hold. On
//! systems without these files the column reads `-`.

use std::fmt::Write;
use std::time::{Duration, Instant};

/// One stage's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct PassTime {
    /// Stage name (`parse`, `lower`, `regalloc`, ...).
    pub name: &'static str,
    /// Wall-clock time of the stage (all functions, on all threads).
    pub wall: Duration,
    /// Peak resident set size during the stage, in bytes (`None` where unavailable).
    pub peak_rss: Option<u64>,
}

/// Records [`PassTime`]s when enabled; otherwise runs stages without measuring.
#[derive(Debug, Default)]
pub struct PassTimer {
    enabled: bool,
    /// The stages timed so far, in order.
    pub passes: Vec<PassTime>,
}

impl PassTimer {
    /// A timer that measures (`enabled`) or only runs the stages.
    pub fn new(enabled: bool) -> PassTimer {
        PassTimer { enabled, passes: vec![] }
    }

    /// Runs `f` as stage `name`, recording its wall time and peak memory when enabled.
    pub fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        if !self.enabled {
            return f();
        }
        reset_peak_rss();
        let start = Instant::now();
        let r = f();
        let wall = start.elapsed();
        self.passes.push(PassTime { name, wall, peak_rss: peak_rss() });
        r
    }

    /// The table printed by `--time-passes`: one row per stage (wall seconds, share of
    /// the total, peak resident MiB), then the total (its peak is the largest).
    pub fn report(&self) -> String {
        let total: Duration = self.passes.iter().map(|p| p.wall).sum();
        let mib = |b: Option<u64>| b.map_or("-".to_string(), |b| format!("{:.1}", b as f64 / (1 << 20) as f64));
        let mut s = String::from("===- ptx2sass time-passes -===\n");
        writeln!(s, "  {:<18} {:>10} {:>7} {:>14}", "stage", "wall (s)", "%", "peak RSS (MiB)").unwrap();
        for p in &self.passes {
            let pct = if total.is_zero() { 0.0 } else { 100.0 * p.wall.as_secs_f64() / total.as_secs_f64() };
            writeln!(s, "  {:<18} {:>10.4} {:>6.1}% {:>14}", p.name, p.wall.as_secs_f64(), pct, mib(p.peak_rss))
                .unwrap();
        }
        let peak = self.passes.iter().filter_map(|p| p.peak_rss).max();
        writeln!(s, "  {:<18} {:>10.4} {:>6.1}% {:>14}", "total", total.as_secs_f64(), 100.0, mib(peak)).unwrap();
        s
    }
}

/// Resets the resident-set high-water mark to the current resident size (Linux).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The resident-set high-water mark in bytes (Linux `VmHWM`), if available.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
