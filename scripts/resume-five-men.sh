#!/usr/bin/env bash
# A five-man run killed with SIGKILL inside a material and started again with --resume ends
# with tables identical to an uninterrupted run's.
#
#   scripts/resume-five-men.sh BOARD REFERENCE   e.g. scripts/resume-five-men.sh 5x5 /work/f55
#
# REFERENCE is the OUT of an uninterrupted `scripts/five-men.sh BOARD OUT` (its tables in
# REFERENCE/BOARD). The run saves its state every 2 s; it is killed once AT tables are made
# (default 100) and a five-man material under way has saved its solve, KILL_AFTER seconds
# later (default 2), then resumed. Every table is compared byte for byte with the
# reference's. Exits 1 if any differs or is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
board=${1:?usage: scripts/resume-five-men.sh BOARD REFERENCE}
reference=${2:?usage: scripts/resume-five-men.sh BOARD REFERENCE}/$board
at=${AT:-100}
after=${KILL_AFTER:-2}
cargo build --release --quiet
bin=$PWD/target/release/bidtb
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=(generate --board "$board" --pieces 5 --method solve --jobs 2 -q)
dir=$work/$board

"$bin" "${run[@]}" --out "$work" --checkpoint-seconds 2 2>/dev/null &
pid=$!
five_man_checkpoint() {
    # A saved solve of a material with five men (three pieces besides the kings) whose
    # table is not made yet: the material under way (finished ones keep their checkpoint
    # files until the run ends).
    local c m
    for c in $(ls "$dir"/solve-*.ckpt 2>/dev/null \
        | grep -E 'solve-K([QRBNP]{3}vK|[QRBNP]{2}vK[QRBNP]|[QRBNP]vK[QRBNP]{2})\.ckpt'); do
        m=$(basename "$c" .ckpt)
        m=${m#solve-}
        [[ -e "$dir/$m.bidtb" ]] || { echo "$c"; return; }
    done
}
until [[ $(ls "$dir"/*.bidtb 2>/dev/null | wc -l) -ge $at && -n "$(five_man_checkpoint)" ]]; do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "the run ended before the kill: lower AT" >&2
        exit 1
    fi
    sleep 0.5
done
sleep "$after"
ckpt=$(five_man_checkpoint)
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
under_way=$(basename "$ckpt" .ckpt)
under_way=${under_way#solve-}
if [[ -e "$dir/$under_way.bidtb" ]]; then
    echo "$under_way was finished before the kill: lower KILL_AFTER" >&2
    exit 1
fi
echo "killed with $(ls "$dir"/*.bidtb | wc -l) tables made, inside $under_way (its solve saved)"
/usr/bin/time -f "resumed: %e s, peak %M KB" "$bin" "${run[@]}" --out "$work" --resume

status=0
same=0
for f in "$reference"/*.bidtb; do
    name=$(basename "$f")
    if cmp -s "$f" "$dir/$name"; then
        same=$((same + 1))
    else
        echo "$name DIFFERS or is missing" >&2
        status=1
    fi
done
echo "$same of $(ls "$reference"/*.bidtb | wc -l) tables identical to the uninterrupted run's"
exit $status
