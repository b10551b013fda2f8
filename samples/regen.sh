#!/usr/bin/env bash
# Regenerates every compiler-generated samples/NAME.ptx from its source:
#   NAME.cu  clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib -O3 -S
#   NAME.cl  clang-14 -target nvptx64-nvidia-nvcl -march=sm_50 -O3 -S
#   NAME.ll  llc-14 -march=nvptx64 -mcpu=sm_50
# nvcc_style.ptx, nvcc_matvec.ptx, nvcc_scan.ptx and nvcc_particles.ptx are hand-written
# (their .cu only documents them) and are skipped.
#
#   samples/regen.sh           rewrite the .ptx files in place
#   samples/regen.sh --check   regenerate into a temporary folder and fail if any
#                              committed .ptx differs (byte for byte)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

for tool in clang-14 llc-14; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "regen.sh: error: $tool not found on PATH (install clang-14 and llvm-14)" >&2
    exit 1
  fi
done

hand_written=(nvcc_style nvcc_matvec nvcc_scan nvcc_particles)

outdir=$here
if ((check)); then
  outdir=$(mktemp -d)
  trap 'rm -rf "$outdir"' EXIT
fi

is_hand_written() {
  local n
  for n in "${hand_written[@]}"; do [[ $1 == "$n" ]] && return 0; done
  return 1
}

count=0
for src in *.cu *.cl *.ll; do
  [[ -e $src ]] || continue
  name=${src%.*}
  is_hand_written "$name" && continue
  out=$outdir/$name.ptx
  case $src in
    *.cu) clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib \
            -O3 -S "$src" -o "$out" ;;
    *.cl) clang-14 -target nvptx64-nvidia-nvcl -march=sm_50 -O3 -S "$src" -o "$out" ;;
    *.ll) llc-14 -march=nvptx64 -mcpu=sm_50 "$src" -o "$out" ;;
  esac
  count=$((count + 1))
done

if ((check)); then
  bad=0
  for f in "$outdir"/*.ptx; do
    name=$(basename "$f")
    if ! cmp -s "$f" "$here/$name"; then
      echo "regen.sh: $name differs from the regenerated output" >&2
      diff -u "$here/$name" "$f" | head -20 >&2 || true
      bad=1
    fi
  done
  ((bad)) && exit 1
  echo "regen.sh: all $count generated .ptx files are up to date"
else
  echo "regen.sh: regenerated $count .ptx files in $here"
fi
