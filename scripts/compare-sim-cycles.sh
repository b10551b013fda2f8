#!/usr/bin/env bash
# The race of issue 16: for each sample kernel and launch (the launch shapes and inputs
# of tests/common/launches.rs), the simulated cycles of ptx2sass's SASS and of ptxas
# 11.8's SASS (-arch=sm_50 -O3) on the same inputs, from the whole-launch cycle model
# (src/exec/sim/cycles.rs, `ptx2sass run --cycles`); their ratio, totals and geomean,
# the worst launches, and whether ptxas's code is hazard-free under `ptx2sass check`.
# Prints Markdown (docs/performance.md holds a copy).
#
#   scripts/compare-sim-cycles.sh
#
# Needs the NVIDIA tools ($NVIDIA_REF_BIN, or ~/.cache/nvidia-reference-11.8/usr/bin, or
# ptxas and nvdisasm on PATH); without them it says SKIPPED. The work is the ignored test
# `race_against_ptxas` in tests/sim_ptxas.rs, which shares the sample launches with the
# validation test.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
out=$(cargo test --quiet --test sim_ptxas race_against_ptxas -- --ignored --nocapture 2>&1) || {
  printf '%s\n' "$out" >&2
  exit 1
}
if grep -q '^SKIPPED' <<<"$out"; then
  grep '^SKIPPED' <<<"$out" >&2
  exit 0
fi
grep -E '^(\||Worst|$)' <<<"$out" | cat -s
