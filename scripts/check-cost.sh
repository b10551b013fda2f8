#!/usr/bin/env bash
# Time and peak memory of the hazard checker (`ptx2sass check`) on generated listings of
# the shapes that blew up in issue 20 (scripts/gen-listings.py), one row per shape and
# size. Usage: scripts/check-cost.sh [PTX2SASS] (default target/release/ptx2sass).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../target/release/ptx2sass}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-10s %8s %12s %10s %10s\n' shape size instructions seconds peak_MB
for spec in "loads 1000" "loads 10000" "loads 100000" "nowait 1000" "nowait 10000" "nowait 100000" \
            "calltree 10" "calltree 20" "calltree 200" "ssy 1000" "ssy 10000" "braces 100000"; do
    set -- $spec
    python3 "$here/gen-listings.py" "$1" "$2" > "$tmp/l.sass"
    n=$(grep -c '/\*' "$tmp/l.sass")
    /usr/bin/time -f '%e %M' -o "$tmp/t" "$bin" check "$tmp/l.sass" > /dev/null 2>&1 || true
    read -r secs kb < <(tail -1 "$tmp/t")
    printf '%-10s %8s %12s %10s %10s\n' "$1" "$2" "$n" "$secs" "$((kb / 1024))"
done
