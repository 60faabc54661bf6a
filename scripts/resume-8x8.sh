#!/usr/bin/env bash
# A four-piece run on 8x8 killed with SIGKILL inside a material and started again with
# --resume ends with table files identical to an uninterrupted run's.
#
#   scripts/resume-8x8.sh                 # KRvKN and what it needs (about 4 minutes here)
#   MATERIAL=KQvKR scripts/resume-8x8.sh  # another material (KQvKR solves in 6 s: KILL_AFTER=0)
#   KILL_AFTER=20 scripts/resume-8x8.sh   # seconds into the four-piece solve before SIGKILL
#
# The run saves its state every few seconds (--checkpoint-seconds 2); the kill lands while
# the four-piece material is being solved (after its first save), so the resumed run reuses
# the finished three-piece tables and continues the material from its checkpoint. Exits 1
# if any table differs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/bidtb
material=${MATERIAL:-KRvKN}
after=${KILL_AFTER:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=(generate --board 8x8 --method solve --material "$material" -q)

echo "uninterrupted: $material"
/usr/bin/time -f "  %e s, peak %M KB" "$bin" "${run[@]}" --out "$work/plain"

echo "killed inside $material, then resumed"
"$bin" "${run[@]}" --out "$work/killed" --checkpoint-seconds 2 2>/dev/null &
pid=$!
ckpt="$work/killed/8x8/solve-$material.ckpt"
# Wait for the three-piece tables and a save of the four-piece material's solve.
until [[ -e "$work/killed/8x8/KRvK.bidtb" && -e "$ckpt" && "$ckpt" -nt "$work/killed/8x8/KRvK.bidtb" ]]; do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "the run ended before a save of $material: raise the material's size" >&2
        exit 1
    fi
    sleep 0.2
done
sleep "$after"
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
if [[ -e "$work/killed/8x8/$material.bidtb" ]]; then
    echo "  the run finished $material before the kill: lower KILL_AFTER" >&2
    exit 1
fi
echo "  killed; kept: $(cd "$work/killed/8x8" && ls ./*.bidtb | tr '\n' ' ')"
/usr/bin/time -f "  resumed: %e s, peak %M KB" "$bin" "${run[@]}" --out "$work/killed" --resume

status=0
for f in "$work/plain/8x8/"*.bidtb; do
    name=$(basename "$f")
    if cmp -s "$f" "$work/killed/8x8/$name"; then
        echo "  $name identical"
    else
        echo "  $name DIFFERS" >&2
        status=1
    fi
done
exit $status
