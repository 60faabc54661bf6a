#!/usr/bin/env bash
# Every material up to five men on one board in one run, timed, and its record written:
# docs/records/five-men-FxR.json (the book renders it with scripts/figures.py --records).
#
# Usage: scripts/five-men.sh BOARD [OUT]     (e.g. scripts/five-men.sh 5x5 /work/tables)
#
# The tables go to OUT/FxR (default: a temporary directory, removed at the end). The run is
# `bidtb generate --board BOARD --pieces 5 --method solve --jobs 2` under /usr/bin/time -v;
# Ctrl-C stops it with its state saved, and the same command with RESUME=1 continues it
# (the record then counts only the resumed part's time: it says so). Run it alone on the
# machine: its times are the record.
set -euo pipefail
cd "$(dirname "$0")/.."
board=${1:?usage: scripts/five-men.sh BOARD [OUT]}
cargo build --release --quiet
if [ -n "${2:-}" ]; then
  out=$2
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
resume=()
[ -n "${RESUME:-}" ] && resume=(--resume)
status=0
/usr/bin/time -v ./target/release/bidtb generate --board "$board" --pieces 5 --method solve \
  --jobs 2 --checkpoint-seconds 900 --out "$out" --json "${resume[@]}" \
  >"$out/summary-$board.json" 2>"$out/stderr-$board.txt" || status=$?
tail -n 30 "$out/stderr-$board.txt" | grep -v '^\s' || true
[ "$status" = 0 ] || { echo "generate exited with $status (see $out/stderr-$board.txt)"; exit "$status"; }
python3 scripts/five-men-record.py "$board" "$out" "$(git rev-parse --short HEAD)" \
  ${RESUME:+--resumed} >"docs/records/five-men-$board.json"
echo "wrote docs/records/five-men-$board.json; now run scripts/figures.py --records"
