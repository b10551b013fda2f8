#!/usr/bin/env bash
# Per-file comparison of the sample corpus with NVIDIA's ptxas 11.8 (-arch=sm_50 -O3):
# one row per samples/*.ptx with our SASS instruction and register counts, ptxas's, and
# the ratios ours/ptxas, then totals.
#
#   scripts/corpus-counts.sh [--markdown] [FILE.ptx ...]
#   --markdown   print a Markdown table instead of aligned columns
#   FILE.ptx     only these files (default: samples/*.ptx)
#
# What is counted, the same way on both sides:
#   instrs  SASS instructions of every function in the file (kernels and non-inlined
#           device functions), NOPs and the final self-branch `BRA <own address>` that
#           pads the code after the last EXIT not counted. Ours: the "N instructions" of
#           `ptx2sass compile -v` (`SassFunction::instr_count`); ptxas's: counted in
#           `cuobjdump -sass` by scripts/ptxas-ref.sh.
#   regs    the largest register count over the file's functions: ours "Used N
#           registers" of `ptx2sass compile -v`, ptxas's "Used N registers" of `ptxas -v`.
#   ratio   ours / ptxas. The totals row sums instructions and registers over the files
#           both sides compiled; "geomean" is the geometric mean of the per-file ratios.
#
# A file ptx2sass cannot compile (yet) gets the marker "not compiled: <first error
# line>" and stays out of the totals; one ptxas rejects gets "ptxas failed". The ptxas
# side (tool lookup, `.version 8.x` -> 7.8 rewrite, counting) is scripts/ptxas-ref.sh:
# without the NVIDIA tools ($NVIDIA_REF_BIN, ../shared/tools/nvidia-reference.sh or
# PATH) the ptxas columns read "-", the reason is printed, and the script exits 0.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

markdown=0
files=()
while (($#)); do
  case $1 in
    --markdown) markdown=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "corpus-counts.sh: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
if ((${#files[@]} == 0)); then
  shopt -s nullglob
  files=(samples/*.ptx)
  shopt -u nullglob
  ((${#files[@]})) || { echo "corpus-counts.sh: no samples/*.ptx under $repo" >&2; exit 1; }
fi

cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ptxas side: rows "sample kernel regs instrs stack shared" (or "sample PTXAS FAILED ...").
bash scripts/ptxas-ref.sh "${files[@]}" >"$tmp/ref.txt" 2>"$tmp/ref.err" || true
skipped=$(sed -n 's/^ptxas-ref.sh: SKIPPED: //p' "$tmp/ref.txt")
version=$(sed -n 's/^# //p' "$tmp/ref.txt" | head -n 1)

# Our side: "sample ok regs instrs" or "sample fail <first error line>".
for f in "${files[@]}"; do
  s=$(basename "$f" .ptx)
  if out=$(./target/release/ptx2sass compile "$f" -v -o /dev/null 2>&1); then
    printf '%s\n' "$out" | awk -v s="$s" '
      /Used [0-9]+ registers/ { if ($5 > r) r = $5; i += $7 }
      END { print s, "ok", r + 0, i + 0 }'
  else
    first=$(printf '%s\n' "$out" | grep -m 1 -E '^(error|thread .*panicked)' || true)
    [[ -n $first ]] || first=$(printf '%s\n' "$out" | grep -m 1 . || echo "exit status without output")
    printf '%s fail %s\n' "$s" "$first"
  fi
done >"$tmp/ours.txt"

awk -v md="$markdown" -v skipped="$skipped" -v version="$version" '
  FNR == NR {                                        # ptxas-ref.sh rows
    if ($0 ~ /^#/ || $1 == "sample" || $0 ~ /^ptxas-ref.sh:/) next
    if ($2 == "PTXAS" && $3 == "FAILED") { pfail[$1] = 1; next }
    if ($3 ~ /^[0-9]+$/ && (!($1 in pregs) || $3 > pregs[$1])) pregs[$1] = $3
    if ($4 ~ /^[0-9]+$/) pins[$1] += $4
    next
  }
  function ratio(a, b) { return (b > 0) ? sprintf("%.2f", a / b) : "-" }
  function row(f, oi, pi, ri, orr, pr, rr) {
    if (md) printf "| %s | %s | %s | %s | %s | %s | %s |\n", f, oi, pi, ri, orr, pr, rr
    else printf "%-18s %7s %7s %6s %6s %6s %6s\n", f, oi, pi, ri, orr, pr, rr
  }
  function note(f, text) {
    if (md) printf "| %s | %s | | | | | |\n", f, text
    else printf "%-18s %s\n", f, text
  }
  BEGIN {
    if (md) { print "| file | instrs ours | instrs ptxas | ratio | regs ours | regs ptxas | ratio |"
              print "|---|---:|---:|---:|---:|---:|---:|" }
    else printf "%-18s %7s %7s %6s %6s %6s %6s\n", "file", "instrs", "ptxas", "ratio", "regs", "ptxas", "ratio"
  }
  {
    f = $1
    have = (f in pins)
    pi = have ? pins[f] : "-"; pr = (f in pregs) ? pregs[f] : "-"
    if ($2 != "ok") {
      msg = $0; sub(/^[^ ]+ fail /, "", msg)
      note(f, "not compiled: " msg (have ? " (ptxas: " pi " instrs, " pr " regs)" : ""))
      next
    }
    oi = $4; orr = $3
    if (f in pfail) { note(f, "ptxas failed (ours: " oi " instrs, " orr " regs)"); next }
    row(f, oi, pi, have ? ratio(oi, pi) : "-", orr, pr, have ? ratio(orr, pr) : "-")
    compiled++
    toi += oi; tor += orr
    if (have && pi > 0 && pr > 0) {
      both++; boi += oi; bpi += pi; bor += orr; bpr += pr
      li += log(oi / pi); lr += log(orr / pr)
    }
  }
  END {
    if (both) {
      row("total (" both " files)", boi, bpi, ratio(boi, bpi), bor, bpr, ratio(bor, bpr))
      row("geomean", "", "", sprintf("%.2f", exp(li / both)), "", "", sprintf("%.2f", exp(lr / both)))
    } else {
      row("total (" compiled + 0 " files)", toi + 0, "-", "-", tor + 0, "-", "-")
    }
    print ""
    print "instrs: SASS instructions of all functions of the file, without NOPs and the final self-branch;"
    print "regs: largest per-function register count; ratio: ours / ptxas" (version != "" ? "; ptxas: " version " -arch=sm_50 -O3" : "")
    if (skipped != "") print "ptxas columns skipped: " skipped
  }
' "$tmp/ref.txt" "$tmp/ours.txt"
if grep -q . "$tmp/ref.err"; then
  echo "ptxas-ref.sh reported:" >&2
  sed 's/^/  /' "$tmp/ref.err" >&2
fi
