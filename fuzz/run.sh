#!/usr/bin/env bash
# Runs fuzz targets for a time each: `fuzz/run.sh SECONDS [TARGET...]` (all targets when
# none is named), one after the other, on the stable toolchain (`-s none`: coverage
# instrumentation only, no sanitizer, which needs nightly); optimized, with debug
# assertions and overflow checks. The log of each run goes to fuzz/logs/TARGET.log; a
# crash, timeout or out-of-memory input is saved in fuzz/artifacts/TARGET/ and fails the
# script. docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(parse lower compile check disasm asm run_args exec generated)
fi
mkdir -p logs
[[ -d corpus ]] || bash seed.sh
cargo fuzz build -O -a -s none
status=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  # -timeout: one input may take this long (s); -rss_limit_mb: memory of the process.
  # FUZZ_RUNS stops each target after that many inputs (with FUZZ_SEED: the same inputs on
  # every machine, whatever its speed). FUZZ_SEED fixes libFuzzer's random seed (CI: the same inputs in the same order on
  # every run, so a smoke run fails only on a change, not by chance).
  if ! cargo fuzz run -O -a -s none "$t" -- -max_total_time="$secs" -timeout=60 -rss_limit_mb=2048 \
    ${FUZZ_SEED:+-seed="$FUZZ_SEED"} ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} \
    -print_final_stats=1 >"logs/$t.log" 2>&1; then
    echo "fuzz/run.sh: $t failed; tail of fuzz/logs/$t.log:" >&2
    tail -n 40 "logs/$t.log" >&2
    status=1
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE' "logs/$t.log" | sed "s/^/$t: /" || true
done
exit $status
