#!/usr/bin/env bash
# Estimated cycles per kernel, ours against ptxas 11.8 (-arch=sm_50 -O3), both from the
# same issue model (`src/sched/estimate.rs`): ours from `ptx2sass compile -v`, ptxas's by
# running `ptx2sass check` on its code as printed by ../shared/tools/sass-ctrl.py.
# Also prints our register counts. Extra arguments are passed to `ptx2sass compile`
# (e.g. `--no-reorder`, `--serial`).
#
#   scripts/compare-cycles.sh [COMPILE-FLAGS...]
#
# Needs the NVIDIA tools (../shared/tools/nvidia-reference.sh or $NVIDIA_REF_BIN); without
# them the ptxas column reads "-".
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
cargo build --release --quiet
bin=${NVIDIA_REF_BIN:-}
if [[ -z $bin ]]; then
  bin=$(bash ../shared/tools/nvidia-reference.sh 2>/dev/null | tail -n 1) || bin=
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-16s %8s %8s %6s\n' sample ours ptxas regs
for f in samples/*.ptx; do
  s=$(basename "$f" .ptx)
  read -r ours regs < <(./target/release/ptx2sass compile "$f" -v -o /dev/null "$@" 2>&1 |
    awk '/Used [0-9]+ registers/ {r += $5} /Estimated/ {c += $5} END {print c, r}')
  theirs=-
  if [[ -n $bin && -x $bin/ptxas ]]; then
    # ptxas 11.8 accepts PTX ISA up to 7.8.
    sed 's/^\.version 8\.[0-9]*/.version 7.8/' "$f" >"$tmp/$s.ptx"
    if "$bin/ptxas" -arch=sm_50 -O3 "$tmp/$s.ptx" -o "$tmp/$s.cubin" 2>/dev/null &&
      PATH="$bin:$PATH" python3 ../shared/tools/sass-ctrl.py "$tmp/$s.cubin" >"$tmp/$s.sass"; then
      # Code the checker rejects gets no estimate ("-", left out of the totals).
      if ./target/release/ptx2sass check "$tmp/$s.sass" >"$tmp/$s.check" 2>/dev/null; then
        theirs=$(awk '{for (i = 1; i <= NF; i++) if ($i == "estimated") c += $(i + 1)} END {print c}' "$tmp/$s.check")
      fi
    fi
  fi
  printf '%-16s %8s %8s %6s\n' "$s" "$ours" "$theirs" "$regs"
done | tee "$tmp/rows"
# Totals over the kernels with both estimates.
awk '$3 != "-" {o += $2; p += $3; r += $4; if ($1 != "stress_spill") {o2 += $2; p2 += $3}}
  END {printf "%-16s %8d %8s %6d\n", "total", o, (p ? p : "-"), r
       if (p) printf "ratio ours/ptxas: %.2f (without stress_spill %.2f)\n", o / p, o2 / p2}' "$tmp/rows"
