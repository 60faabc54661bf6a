#!/usr/bin/env bash
# Compare two directories of tables of one board position by position: every material
# stored in both, dumped with digests (`bidtb dump --digest`: each α and β as the CRC-32s
# of its numerator and denominator, every dictionary entry decoded once), so that tables
# of any format version (whole values, or means) and of values with thousands of digits
# compare in minutes. Materials in only one of the two are named, not compared.
#
#   scripts/compare-tables.sh DIR_A DIR_B [BOARD]
#
# BOARD defaults to 8x8. Prints one line per material (its positions and seconds) and
# exits 1 if any position differs.
set -euo pipefail
cd "$(dirname "$0")/.."
a=${1:?usage: $0 DIR_A DIR_B [BOARD]}
b=${2:?usage: $0 DIR_A DIR_B [BOARD]}
board=${3:-8x8}
bin=target/release/bidtb
cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
differ=0
for path in "$a/$board"/*.bidtb; do
    m=$(basename "$path" .bidtb)
    if [ ! -e "$b/$board/$m.bidtb" ]; then
        printf '%-8s only in %s\n' "$m" "$a"
        continue
    fi
    start=$(date +%s)
    "$bin" dump --digest --tables "$a" --board "$board" "$m" > "$work/a.txt"
    "$bin" dump --digest --tables "$b" --board "$board" "$m" > "$work/b.txt"
    verdict=identical
    if ! cmp -s "$work/a.txt" "$work/b.txt"; then
        verdict=DIFFERS
        differ=1
    fi
    printf '%-8s %-10s %9d positions %6d s\n' "$m" "$verdict" \
        $(( $(wc -l < "$work/a.txt") - 1 )) $(( $(date +%s) - start ))
done
for path in "$b/$board"/*.bidtb; do
    m=$(basename "$path" .bidtb)
    [ -e "$a/$board/$m.bidtb" ] || printf '%-8s only in %s\n' "$m" "$b"
done
exit $differ
