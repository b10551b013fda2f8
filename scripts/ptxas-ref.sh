#!/usr/bin/env bash
# Reference numbers from NVIDIA's own toolchain for every samples/*.ptx:
# assembles each file with ptxas 11.8 (-arch=sm_50 -O3 -v), disassembles the cubin with
# cuobjdump -sass and prints one row per kernel:
#
#   sample  kernel  regs  instrs  stack  shared
#
#   regs    "Used N registers" from ptxas -v
#   instrs  SASS instructions, not counting NOPs nor the final self-branch
#           (`BRA <own address>`) that pads the end of the code after EXIT/RET
#   stack   "N bytes stack frame" from ptxas -v
#   shared  "N bytes smem" from ptxas -v (0 when absent)
#
# ptxas 11.8 accepts PTX ISA up to 7.8: a sample with a higher `.version` is fed to it
# as a temporary copy whose `.version` line is rewritten to 7.8.
#
# Usage: scripts/ptxas-ref.sh [--sass DIR] [FILE.ptx ...]
#   --sass DIR   also write each kernel's `cuobjdump -sass` listing to DIR/SAMPLE.KERNEL.sass
#   FILE.ptx     check only these files (default: samples/*.ptx)
#
# Tools, first found wins:
#   $NVIDIA_REF_BIN                            folder holding ptxas and cuobjdump
#   $NVIDIA_REF_SCRIPT, or ../shared/tools/nvidia-reference.sh next to the repository
#                                              (installs CUDA 11.8's tools, prints their folder)
#   ptxas and cuobjdump on PATH
# If none is usable the script prints why and exits 0 (nothing to compare against).
# Exit status 1 if ptxas or cuobjdump fails on any sample.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

sass_dir=
files=()
while (($#)); do
  case $1 in
    --sass)
      [[ $# -ge 2 ]] || { echo "ptxas-ref.sh: --sass needs a directory" >&2; exit 2; }
      sass_dir=$2; shift 2 ;;
    --sass=*) sass_dir=${1#--sass=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "ptxas-ref.sh: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
if ((${#files[@]} == 0)); then
  shopt -s nullglob
  files=("$repo"/samples/*.ptx)
  shopt -u nullglob
  ((${#files[@]})) || { echo "ptxas-ref.sh: no samples/*.ptx found under $repo" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

skip() {
  echo "ptxas-ref.sh: SKIPPED: $*"
  echo "ptxas-ref.sh: no NVIDIA reference numbers produced (set NVIDIA_REF_BIN to a folder with ptxas and cuobjdump)"
  exit 0
}

# ---- locate ptxas + cuobjdump ----------------------------------------------------------
bin=
why=()
if [[ -n ${NVIDIA_REF_BIN:-} ]]; then
  if [[ -x $NVIDIA_REF_BIN/ptxas && -x $NVIDIA_REF_BIN/cuobjdump ]]; then
    bin=$NVIDIA_REF_BIN
  else
    why+=("NVIDIA_REF_BIN=$NVIDIA_REF_BIN lacks ptxas/cuobjdump")
  fi
fi
if [[ -z $bin ]]; then
  installer=${NVIDIA_REF_SCRIPT:-$repo/../shared/tools/nvidia-reference.sh}
  if [[ -x $installer || -f $installer ]]; then
    if out=$(bash "$installer" 2>"$tmp/install.err"); then
      out=$(printf '%s\n' "$out" | tail -n 1)
      if [[ -x $out/ptxas && -x $out/cuobjdump ]]; then
        bin=$out
      else
        why+=("$installer printed '$out', which has no ptxas/cuobjdump")
      fi
    else
      why+=("$installer could not install the tools: $(tr '\n' ' ' <"$tmp/install.err")")
    fi
  else
    why+=("no installer at $installer")
  fi
fi
if [[ -z $bin ]] && command -v ptxas >/dev/null 2>&1 && command -v cuobjdump >/dev/null 2>&1; then
  bin=$(dirname "$(command -v ptxas)")
fi
if [[ -z $bin ]]; then
  why+=("ptxas/cuobjdump not on PATH")
  skip "NVIDIA ptxas/cuobjdump unavailable: $(printf '%s; ' "${why[@]}")"
fi
ptxas=$bin/ptxas
cuobjdump=$bin/cuobjdump
command -v awk >/dev/null 2>&1 || { echo "ptxas-ref.sh: awk is required" >&2; exit 1; }

[[ -n $sass_dir ]] && mkdir -p "$sass_dir"

echo "# $("$ptxas" --version | tail -n 1) ($ptxas)"
fmt='%-18s %-30s %5s %7s %6s %7s\n'
# shellcheck disable=SC2059
printf "$fmt" sample kernel regs instrs stack shared
status=0

for ptx in "${files[@]}"; do
  sample=$(basename "$ptx" .ptx)
  src=$ptx
  # PTX ISA newer than 7.8 -> temporary copy declaring .version 7.8
  ver=$(awk '$1 == ".version" { print $2; exit }' "$ptx")
  if [[ -n $ver ]] && awk -v v="$ver" 'BEGIN { split(v, a, "."); exit !((a[1] + 0) > 7 || ((a[1] + 0) == 7 && (a[2] + 0) > 8)) }'; then
    src=$tmp/$sample.v78.ptx
    sed -E 's/^([[:space:]]*)\.version[[:space:]]+[0-9]+\.[0-9]+/\1.version 7.8/' "$ptx" >"$src"
  fi

  cubin=$tmp/$sample.cubin
  if ! "$ptxas" -arch=sm_50 -O3 -v "$src" -o "$cubin" >"$tmp/$sample.log" 2>&1; then
    # shellcheck disable=SC2059
    printf "$fmt" "$sample" "PTXAS FAILED" - - - -
    sed 's/^/    /' "$tmp/$sample.log" >&2
    status=1
    continue
  fi
  if ! "$cuobjdump" -sass "$cubin" >"$tmp/$sample.sass" 2>"$tmp/$sample.cuobjdump.err"; then
    # shellcheck disable=SC2059
    printf "$fmt" "$sample" "CUOBJDUMP FAILED" - - - -
    sed 's/^/    /' "$tmp/$sample.cuobjdump.err" >&2
    status=1
    continue
  fi

  # One row per "Function :" section of the disassembly; -v facts keyed by function name.
  awk -v sample="$sample" -v fmt="$fmt" -v sassdir="$sass_dir" '
    FNR == 1 { file++ }
    file == 1 {                                   # ptxas -v log
      if (match($0, /Compiling entry function .[^'\'' ]+/)) {
        entry = substr($0, RSTART + 25, RLENGTH - 25); gsub(/'\''/, "", entry)
      }
      if (match($0, /Function properties for [^ ]+/)) props = substr($0, RSTART + 24, RLENGTH - 24)
      if (match($0, /[0-9]+ bytes stack frame/)) { split(substr($0, RSTART), w, " "); stack[props] = w[1] }
      if (match($0, /Used [0-9]+ registers/)) {
        split(substr($0, RSTART), w, " "); regs[entry] = w[2]
        smem[entry] = 0
        if (match($0, /[0-9]+ bytes smem/)) { split(substr($0, RSTART), w, " "); smem[entry] = w[1] }
      }
      next
    }
    function flush() {
      if (fn == "") return
      n = count - (last_selfbra ? 1 : 0)
      printf fmt, sample, fn, (fn in regs ? regs[fn] : "-"), n,
             (fn in stack ? stack[fn] : "-"), (fn in smem ? smem[fn] : "-")
      if (out != "") close(out)
    }
    /Function : / {
      flush()
      fn = $NF; count = 0; last_selfbra = 0
      out = (sassdir != "") ? sassdir "/" sample "." fn ".sass" : ""
      if (out != "") print "\t\tFunction : " fn > out
      next
    }
    fn != "" && out != "" && !/^[ \t]*\.\.\.\.+[ \t]*$/ { print > out }
    fn != "" && /^[ \t]*\/\*[0-9a-fA-F]+\*\// {
      line = $0
      match(line, /\/\*[0-9a-fA-F]+\*\//); addr = substr(line, RSTART + 2, RLENGTH - 4)
      line = substr(line, RSTART + RLENGTH)
      sub(/\/\*.*$/, "", line)                    # encoding comment
      gsub(/[{};]/, " ", line)                    # dual-issue braces, terminator
      gsub(/^[ \t]+|[ \t]+$/, "", line)
      if (line == "") next
      split(line, t, /[ \t]+/)
      op = (t[1] ~ /^@/) ? t[2] : t[1]
      if (op ~ /^NOP/) next
      count++
      last_selfbra = 0
      if (op == "BRA" && t[1] !~ /^@/) {
        tgt = t[2]; sub(/^0x/, "", tgt)
        if (tolower(sprintf("%x", strtonum_hex(tgt))) == tolower(sprintf("%x", strtonum_hex(addr)))) last_selfbra = 1
      }
    }
    function strtonum_hex(s,   i, c, v) {
      v = 0; s = tolower(s)
      for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); if (c == 0) break; v = v * 16 + c - 1 }
      return v
    }
    END { flush() }
  ' "$tmp/$sample.log" "$tmp/$sample.sass"
done
exit $status
