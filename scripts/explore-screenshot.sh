#!/usr/bin/env bash
# Screenshot of one `ptx2sass explore` report in headless Chromium, for the docs: runs
# tests/explore_browser.rs (which clicks the sample's first `ld.global` line and hovers
# the SASS line it maps to) with EXPLORE_SCREENSHOT set.
#
#   scripts/explore-screenshot.sh [SAMPLE.ptx] [OUT.png]
#
# Defaults: nvcc_matvec.ptx (a loop, with .loc lines), docs/explore.png. Needs chromium and
# chromedriver (Debian: apt-get install chromium chromium-driver).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sample=${1:-nvcc_matvec.ptx}
out=$(realpath -m "${2:-docs/explore.png}")
command -v chromium >/dev/null && command -v chromedriver >/dev/null ||
  { echo "explore-screenshot: chromium and chromedriver are needed" >&2; exit 1; }
EXPLORE_SAMPLE=$sample EXPLORE_SCREENSHOT=$out \
  cargo test --test explore_browser -- --nocapture 2>&1 | grep -E "screenshot|reports checked|test result|SKIPPED|panicked"
test -s "$out" && echo "explore-screenshot: $out ($(stat -c %s "$out") bytes)"
