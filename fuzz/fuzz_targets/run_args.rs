//! The `run` argument parser (`exec::spec`): the first line is `--grid`, the second
//! `--block`, each further line an `--arg`, or an `--init` when it starts with `init `.
//! Oracles: no panic, and the buffers handed out never exceed the memory budget
//! (`--max-memory`). `file:` specs are skipped (they would read the fuzzing machine's
//! files).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2sass::exec::ptx::args::Arg;
use ptx2sass::exec::{Rng, spec};

/// The budget of one input (bytes).
const BUDGET: u64 = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if text.contains("file:") {
        return;
    }
    let mut lines = text.lines();
    let _ = spec::dims(lines.next().unwrap_or(""));
    let _ = spec::dims(lines.next().unwrap_or(""));
    let mut rng = Rng::new(1);
    let mut budget = spec::Budget::new(BUDGET);
    let mut used = 0u64;
    for line in lines {
        let bytes = match line.strip_prefix("init ") {
            Some(s) => spec::init(s, &mut rng, &mut budget).map(|(_, b)| b.len()).unwrap_or(0),
            None => match spec::arg(line, &mut rng, &mut budget) {
                Ok(Arg::Buf(b) | Arg::Bytes(b)) => b.len(),
                _ => 0,
            },
        };
        used += bytes as u64;
        assert!(used <= BUDGET, "{used} bytes handed out with a budget of {BUDGET}");
    }
});
