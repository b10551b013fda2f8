#!/usr/bin/env bash
# Per-kernel comparison of ptx2sass with NVIDIA's ptxas 11.8 (-arch=sm_50 -O3) on every
# samples/*.ptx: registers used and SASS instructions (NOPs and the final self-branch
# not counted), with totals and ratios.
#
#   scripts/compare-ptxas.sh            table on stdout
#
# The ptxas side comes from scripts/ptxas-ref.sh; if the NVIDIA tools cannot be found the
# ptxas columns read "-" and the script still exits 0.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash scripts/ptxas-ref.sh >"$tmp/ref.txt" 2>&1 || true
for f in samples/*.ptx; do
  s=$(basename "$f" .ptx)
  ./target/release/ptx2sass compile "$f" -v -o /dev/null 2>&1 |
    awk -v s="$s" '/Function properties for/ {k=$NF} /Used [0-9]+ registers/ {print s, k, $5, $7}'
done >"$tmp/ours.txt"
awk '
  FNR == NR { if ($3 ~ /^[0-9]+$/) { regs[$1 " " $2] = $3; ins[$1 " " $2] = $4 } next }
  {
    key = $1 " " $2
    r = (key in regs) ? regs[key] : "-"; i = (key in ins) ? ins[key] : "-"
    printf "%-16s %-24s %5s %6s %7s %7s\n", $1, $2, $3, r, $4, i
    or += $3; oi += $4
    if (r != "-") { pr += r; pi += i }
  }
  BEGIN { printf "%-16s %-24s %5s %6s %7s %7s\n", "sample", "kernel", "regs", "ptxas", "instrs", "ptxas" }
  END {
    printf "%-16s %-24s %5d %6s %7d %7s\n", "total", "", or, (pr ? pr : "-"), oi, (pi ? pi : "-")
    if (pr) printf "ratio ours/ptxas: registers %.2f, instructions %.2f\n", or / pr, oi / pi
  }
' "$tmp/ref.txt" "$tmp/ours.txt"
grep -q SKIPPED "$tmp/ref.txt" && sed -n '/SKIPPED/p' "$tmp/ref.txt" || true
