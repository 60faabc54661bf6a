#!/usr/bin/env bash
# Every board F x R with 2 <= F, R <= 8 (49 boards), three ways:
#   guesses  `--method iterate --guesses`: the study's own path, every guess computed;
#   iterate  `--method iterate` (the default): exact values first, last changes from the
#            Stern-Brocot parents of each value;
#   solve    `--method solve`: no iteration at all.
# Checks that guesses and iterate report the same first Richman iteration and per-class
# stable_at and write identical table files (header included), and that solve writes the
# same files after their headers (its header has no iteration fields; the header's length is
# read from the file, bytes 12..16: 176 in format version 4). Prints one
# line per board and exits 1 if anything differs.
#
#   scripts/compare-methods.sh            # all 49 boards (about 3 minutes here)
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

iterations() { # first Richman iteration and stable_at per class, from a summary
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["first_richman_iteration"], *(k + ":" + str(v["stable_at"]) for k, v in sorted(d["classes"].items())))' "$1"
}

same=0 differ=0
printf '%-6s %-10s %8s %10s %10s %10s\n' board verdict richman guesses_ms iterate_ms solve_ms
for f in $(seq 2 "$max"); do
    for r in $(seq 2 "$max"); do
        b="${f}x${r}"
        tg=$(timed "$bin" generate --board "$b" --guesses --out "$work/guesses" -q)
        ti=$(timed "$bin" generate --board "$b" --out "$work/iterate" -q)
        ts=$(timed "$bin" generate --board "$b" --method solve --out "$work/solve" -q)
        verdict=identical
        [ "$(ls "$work/guesses/$b"/*.bidtb | wc -l)" = 6 ] || verdict="MISSING"
        if [ "$(iterations "$work/guesses/$b/summary.json")" != "$(iterations "$work/iterate/$b/summary.json")" ]; then
            verdict="DIFFER:iterations"
        fi
        for file in "$work/guesses/$b"/*.bidtb; do
            name=$(basename "$file")
            cmp -s "$file" "$work/iterate/$b/$name" || verdict="DIFFER:iterate:$name"
            header=$(od -An -tu4 -j12 -N4 "$file" | tr -d ' ')
            cmp -s <(tail -c +$((header + 1)) "$file") <(tail -c +$((header + 1)) "$work/solve/$b/$name") ||
                verdict="DIFFER:solve:$name"
        done
        if [ "$verdict" = identical ]; then same=$((same + 1)); else differ=$((differ + 1)); fi
        richman=$(iterations "$work/guesses/$b/summary.json" | cut -d' ' -f1)
        printf '%-6s %-10s %8s %10d %10d %10d\n' "$b" "$verdict" "$richman" "$tg" "$ti" "$ts"
        rm -rf "$work/guesses/$b" "$work/iterate/$b" "$work/solve/$b"
    done
done
echo "$same boards identical, $differ differ"
[ "$differ" = 0 ]
