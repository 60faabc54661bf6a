#!/usr/bin/env bash
# Compare the tables of two builds position by position: every board of a range made by
# an older bidtb (OLD, e.g. a build of an earlier commit) and by this one, each material
# dumped by this build (`bidtb dump`, which reads every format version) and diffed: values,
# beta and both progress levels of every stored position.
#
#   scripts/compare-builds.sh OLD_BINARY [METHOD] [BOARDS...]
#
# METHOD is `solve` (default) or `iterate`; BOARDS default to every board from 2x2 to 8x8.
# Prints one line per board and exits 1 if any position differs.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: $0 OLD_BINARY [METHOD] [BOARDS...]}
method=${2:-solve}
shift $(( $# >= 2 ? 2 : $# ))
boards=("$@")
if [ ${#boards[@]} -eq 0 ]; then
    for f in 2 3 4 5 6 7 8; do for r in 2 3 4 5 6 7 8; do boards+=("${f}x${r}"); done; done
fi
new=target/release/bidtb
cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
differ=0
for b in "${boards[@]}"; do
    "$old" generate --board "$b" --method "$method" --out "$work/old" -q >/dev/null
    "$new" generate --board "$b" --method "$method" --out "$work/new" -q >/dev/null
    verdict=identical
    positions=0
    for m in KvK KQvK KRvK KBvK KNvK KPvK; do
        "$new" dump --tables "$work/old" --board "$b" "$m" > "$work/a.txt"
        "$new" dump --tables "$work/new" --board "$b" "$m" > "$work/b.txt"
        if ! cmp -s "$work/a.txt" "$work/b.txt"; then
            verdict="DIFFERS in $m"
            differ=1
        fi
        positions=$(( positions + $(wc -l < "$work/a.txt") - 1 ))
    done
    printf '%-6s %-18s %9d positions\n' "$b" "$verdict" "$positions"
done
exit $differ
