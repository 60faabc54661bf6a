#!/usr/bin/env bash
# Both methods on every board F x R with 2 <= F, R <= 8 (49 boards): generate the tables
# with --method iterate (the study's method) and --method solve, and compare every class
# file byte for byte after its 128-byte header (the header holds the iteration fields,
# which only the iteration has). Prints one line per board and exits 1 if any differs.
#
#   scripts/compare-methods.sh            # all 49 boards (about 2 minutes here)
#   MAX_SIDE=6 scripts/compare-methods.sh # boards up to 6x6
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/bidtb
max=${MAX_SIDE:-8}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

timed() { # milliseconds of a command, its output discarded
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}

same=0 differ=0
printf '%-6s %-10s %11s %11s\n' board tables iterate_ms solve_ms
for f in $(seq 2 "$max"); do
    for r in $(seq 2 "$max"); do
        b="${f}x${r}"
        ti=$(timed "$bin" generate --board "$b" --method iterate --out "$work/iterate" -q)
        ts=$(timed "$bin" generate --board "$b" --method solve --out "$work/solve" -q)
        verdict=identical
        for file in "$work/iterate/$b"/*.bidtb; do
            other="$work/solve/$b/$(basename "$file")"
            if ! cmp -s <(tail -c +129 "$file") <(tail -c +129 "$other"); then
                verdict="DIFFER:$(basename "$file")"
            fi
        done
        [ "$(ls "$work/iterate/$b"/*.bidtb | wc -l)" = 6 ] || verdict="MISSING"
        if [ "$verdict" = identical ]; then same=$((same + 1)); else differ=$((differ + 1)); fi
        printf '%-6s %-10s %11d %11d\n' "$b" "$verdict" "$ti" "$ts"
        rm -rf "$work/iterate/$b" "$work/solve/$b"
    done
done
echo "$same boards identical, $differ differ"
[ "$differ" = 0 ]
