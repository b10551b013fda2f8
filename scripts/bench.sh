#!/usr/bin/env bash
# Compile-time benchmark of the release binary on synthetic kernels
# (benches/common/ptxgen.rs, printed by `cargo run --example ptxgen`), every shape at
# 1k, 10k and 100k PTX lines, with ptxas 11.8 -O3 beside it when installed.
#
#   scripts/bench.sh [--sizes 1000,10000,100000] [--shapes straight,loops,...]
#                    [--repeat N] [--no-ptxas] [--no-samples] [--markdown]
#
# Tables printed:
#   1. per shape and size: PTX lines, our wall time and CPU time (user + system; of the
#      run with the least CPU time of --repeat runs, default 3; one run at 100k lines and
#      more), lines per second, peak resident memory (MiB,
#      /usr/bin/time), ptxas's wall time and peak memory, and ptxas time / our time;
#   2. per shape: growth of the time from the second-largest to the largest size (10k ->
#      100k: 10x the lines; linear time gives 10), ours (wall and CPU) and ptxas's;
#   3. per shape at the largest size: wall time of each stage (`ptx2sass compile
#      --time-passes`) and the largest stage's share of the total;
#   4. the sample corpus (samples/*.ptx, 50-1,500 lines): per file our time and ptxas's
#      and the ratio; the smallest ratio and the geometric mean.
# ptxas comes from $NVIDIA_REF_BIN or ../shared/tools/nvidia-reference.sh; without it the
# ptxas columns read "-" (skipped, with a message). Runs of ptxas are limited to
# $PTXAS_TIMEOUT seconds (default 300; ">T" in the table). Machine load distorts times:
# the load average is printed with the results.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

sizes=1000,10000,100000
shapes=
repeat=3
use_ptxas=1
samples=1
markdown=0
while (($#)); do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --no-ptxas) use_ptxas=0; shift ;;
    --no-samples) samples=0; shift ;;
    --markdown) markdown=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

cargo build --release --quiet --bin ptx2sass --example ptxgen
bin=$repo/target/release/ptx2sass
gen=$repo/target/release/examples/ptxgen
[[ -n $shapes ]] || shapes=$("$gen" --list | paste -sd, -)
IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a shape_list <<<"$shapes"

ptxas=
if ((use_ptxas)); then
  dir=${NVIDIA_REF_BIN:-}
  if [[ -z $dir && -f ../shared/tools/nvidia-reference.sh ]]; then
    dir=$(bash ../shared/tools/nvidia-reference.sh 2>/dev/null | tail -n 1) || dir=
  fi
  if [[ -n $dir && -x $dir/ptxas ]]; then
    ptxas=$dir/ptxas
  else
    echo "bench.sh: ptxas 11.8 not found (set NVIDIA_REF_BIN or run ../shared/tools/nvidia-reference.sh): ptxas columns skipped" >&2
  fi
fi
ptxas_timeout=${PTXAS_TIMEOUT:-300}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

# time_ours FILE RUNS: prints "seconds peak_kib cpu_seconds" of the run with the least CPU
# time (user + system: other processes on a loaded machine stretch the wall time, far
# less the CPU time); that run's stage table in $tmp/stages.
time_ours() {
  local f=$1 runs=$2 best= wall= rss= k t0 t1 dt cpu
  for ((k = 0; k < runs; k++)); do
    t0=$(now)
    /usr/bin/time -f '%M %U %S' -o "$tmp/rss" "$bin" compile "$f" -o /dev/null --time-passes 2>"$tmp/stages.new"
    t1=$(now)
    dt=$(echo "$t1 - $t0" | bc -l)
    cpu=$(tail -n 1 "$tmp/rss" | awk '{printf "%.2f", $2 + $3}')
    if [[ -z $best ]] || (($(echo "$cpu < $best" | bc -l))); then
      best=$cpu
      wall=$dt
      rss=$(tail -n 1 "$tmp/rss" | cut -d' ' -f1)
      mv "$tmp/stages.new" "$tmp/stages"
    fi
  done
  echo "$wall $rss $best"
}

# time_ptxas FILE RUNS: prints "seconds peak_kib", ">T -" on timeout, "- -" on failure.
time_ptxas() {
  local f=$1 runs=$2 best= rss= k t0 t1 dt
  [[ -n $ptxas ]] || { echo "- -"; return; }
  sed 's/^\.version 8\.[0-9]*/.version 7.8/' "$f" >"$tmp/p.ptx"
  for ((k = 0; k < runs; k++)); do
    t0=$(now)
    if ! /usr/bin/time -f %M -o "$tmp/prss" timeout "$ptxas_timeout" "$ptxas" -arch=sm_50 -O3 "$tmp/p.ptx" \
      -o /dev/null 2>/dev/null; then
      if [[ $(echo "$(now) - $t0 >= $ptxas_timeout" | bc -l) == 1 ]]; then echo ">$ptxas_timeout -"; else echo "- -"; fi
      return
    fi
    t1=$(now)
    dt=$(echo "$t1 - $t0" | bc -l)
    if [[ -z $best ]] || (($(echo "$dt < $best" | bc -l))); then
      best=$dt
      rss=$(tail -n 1 "$tmp/prss")
    fi
  done
  echo "$best $rss"
}

# Table 1 and the data for tables 2 and 3.
: >"$tmp/rows"
for shape in "${shape_list[@]}"; do
  for n in "${size_list[@]}"; do
    f=$tmp/$shape-$n.ptx
    "$gen" "$shape" "$n" >"$f"
    lines=$(wc -l <"$f")
    runs=$repeat
    ((n < 100000)) || runs=1
    read -r ours ours_rss ours_cpu < <(time_ours "$f" "$runs")
    cp "$tmp/stages" "$tmp/stages-$shape-$n"
    read -r theirs theirs_rss < <(time_ptxas "$f" "$runs")
    echo "$shape $n $lines $ours $ours_rss $theirs $theirs_rss $ours_cpu" >>"$tmp/rows"
    rm -f "$f"
  done
done

load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
echo "# ptx2sass $(git rev-parse --short HEAD 2>/dev/null || echo ?), $(nproc) cores, load average $load"
[[ -n $ptxas ]] && echo "# ptxas: $("$ptxas" --version | tail -n 1) -arch=sm_50 -O3"

awk -v md="$markdown" '
function mib(k) { return (k == "-" || k == "") ? "-" : sprintf("%.1f", k / 1024) }
function sec(s) { return (s ~ /^[0-9.]+$/) ? sprintf("%.3f", s) : s }
BEGIN {
  if (md) { print "| shape | size | lines | ours (s) | ours CPU (s) | lines/s | ours MiB | ptxas (s) | ptxas MiB | ptxas/ours |"; print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" }
  else printf "%-14s %7s %7s %9s %9s %10s %9s %9s %10s %10s\n", "shape", "size", "lines", "ours(s)", "CPU(s)", "lines/s", "ours MiB", "ptxas(s)", "ptxas MiB", "ptxas/ours"
}
{
  lps = ($4 > 0) ? sprintf("%.0f", $3 / $4) : "-"
  ratio = ($6 ~ /^[0-9.]+$/ && $4 > 0) ? sprintf("%.1f", $6 / $4) : "-"
  if (md) printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, sec($4), $8, lps, mib($5), sec($6), mib($7), ratio
  else printf "%-14s %7s %7s %9s %9s %10s %9s %9s %10s %10s\n", $1, $2, $3, sec($4), $8, lps, mib($5), sec($6), mib($7), ratio
}' "$tmp/rows"

if ((${#size_list[@]} >= 2)); then
  small=${size_list[${#size_list[@]} - 2]}
  large=${size_list[${#size_list[@]} - 1]}
  echo
  echo "# growth of the time from $small to $large lines ($((large / small))x the lines)"
  awk -v s="$small" -v l="$large" -v md="$markdown" '
  $2 == s { os[$1] = $4; ps[$1] = $6; cs[$1] = $8; order[++k] = $1 }
  $2 == l { ol[$1] = $4; pl[$1] = $6; cl[$1] = $8 }
  END {
    if (md) { print "| shape | ours (wall) | ours (CPU) | ptxas |"; print "|---|---:|---:|---:|" }
    else printf "%-14s %8s %8s %8s\n", "shape", "ours", "ours CPU", "ptxas"
    for (i = 1; i <= k; i++) {
      x = order[i]
      o = (os[x] > 0) ? sprintf("%.1f", ol[x] / os[x]) : "-"
      c = (cs[x] > 0) ? sprintf("%.1f", cl[x] / cs[x]) : "-"
      p = (ps[x] ~ /^[0-9.]+$/ && pl[x] ~ /^[0-9.]+$/ && ps[x] > 0) ? sprintf("%.1f", pl[x] / ps[x]) : "-"
      if (md) printf "| %s | %s | %s | %s |\n", x, o, c, p; else printf "%-14s %8s %8s %8s\n", x, o, c, p
    }
  }' "$tmp/rows"
fi

large=${size_list[${#size_list[@]} - 1]}
echo
echo "# stages at $large lines (seconds; --time-passes), and the largest stage's share"
stages=$(awk 'NR > 2 && $1 != "total" {print $1}' "$tmp/stages-${shape_list[0]}-$large" | paste -sd' ' -)
{
  echo "shape $stages largest"
  for shape in "${shape_list[@]}"; do
    awk -v shape="$shape" 'NR > 2 && $1 != "total" {t[++n] = $2; s += $2; if ($2 > m) {m = $2; mn = $1}}
      END {printf "%s", shape; for (i = 1; i <= n; i++) printf " %.3f", t[i]; printf " %s:%.0f%%\n", mn, 100 * m / s}' \
      "$tmp/stages-$shape-$large"
  done
} | if ((markdown)); then
  awk 'NR == 1 {printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n|"; for (i = 1; i <= NF; i++) printf "---|"; print ""; next}
       {printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; print ""}'
else
  column -t
fi

if ((samples)); then
  echo
  echo "# sample corpus: time per file, best of $repeat"
  : >"$tmp/srows"
  for f in samples/*.ptx; do
    read -r o _ < <(time_ours "$f" "$repeat")
    read -r p _ < <(time_ptxas "$f" "$repeat")
    echo "$(basename "$f" .ptx) $(wc -l <"$f") $o $p" >>"$tmp/srows"
  done
  awk -v md="$markdown" '
  BEGIN { if (md) { print "| sample | lines | ours (s) | ptxas (s) | ptxas/ours |"; print "|---|---:|---:|---:|---:|" }
          else printf "%-18s %6s %9s %9s %10s\n", "sample", "lines", "ours(s)", "ptxas(s)", "ptxas/ours" }
  {
    r = ($4 ~ /^[0-9.]+$/ && $3 > 0) ? $4 / $3 : 0
    rs = r ? sprintf("%.1f", r) : "-"
    ps = ($4 ~ /^[0-9.]+$/) ? sprintf("%.4f", $4) : $4
    if (md) printf "| %s | %s | %.4f | %s | %s |\n", $1, $2, $3, ps, rs
    else printf "%-18s %6s %9.4f %9s %10s\n", $1, $2, $3, ps, rs
    if (r) { n++; lg += log(r); if (!min || r < min) { min = r; mf = $1 } }
    to += $3; if ($4 ~ /^[0-9.]+$/) tp += $4
  }
  END {
    printf "total: ours %.3f s, ptxas %s s", to, (tp ? sprintf("%.3f", tp) : "-")
    if (n) printf "; ptxas/ours smallest %.1f (%s), geometric mean %.1f", min, mf, exp(lg / n)
    print ""
  }' "$tmp/srows"
fi
