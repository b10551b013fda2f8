#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from the repository's PTX (samples/, tests/programs/) and
# what the compiler makes of it (SASS listings, cubins). Existing corpus files are kept,
# so a corpus grown by earlier runs is only added to. docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --quiet
bin=target/debug/ptx2sass
c=fuzz/corpus
mkdir -p $c/{parse,lower,compile,exec,check,asm,disasm,run_args,generated}
for f in samples/*.ptx tests/programs/*.ptx; do
  n=$(basename "$f" .ptx)
  cp "$f" "$c/parse/$n.ptx"
  cp "$f" "$c/lower/$n.ptx"
  # compile: byte 0 = --maxrregcount - 16 (mod 240), byte 1 = flags (see compile.rs).
  { printf '\xef\x00'; cat "$f"; } >"$c/compile/$n-255.bin"
  { printf '\x10\x01'; cat "$f"; } >"$c/compile/$n-32-serial.bin"
  # exec: a 16-byte launch header (one CTA of 32 threads, seed 1), then the PTX.
  { printf '\x00\x00\x1f\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'; cat "$f"; } >"$c/exec/$n.bin"
  if "$bin" compile "$f" -o "$c/check/$n.sass" 2>/dev/null; then
    cp "$c/check/$n.sass" "$c/asm/$n.sass"
    "$bin" compile "$f" -o "$c/disasm/$n.cubin" 2>/dev/null || rm -f "$c/disasm/$n.cubin"
  else
    rm -f "$c/check/$n.sass"
  fi
done
# run_args: --grid, --block, then --arg/--init lines.
printf '4\n32\ni:-3\nf32:1.5\nrand:u32:64\nzeros:16\nbytes:0100803f\ninit tab=rand:u8:8\n' >$c/run_args/basic
printf '65535,65535,64\n1024,1,1\ni:0xffffffffffffffff\nf64:-0.0\nrand:f64:3\n' >$c/run_args/edges
printf '' >$c/generated/empty
echo "seeded $(find $c -type f | wc -l) files in $c"
