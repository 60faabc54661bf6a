#!/usr/bin/env bash
# Whole-run time and peak memory for several boards (the README's scaling table).
# Usage: scripts/scaling.sh [BOARD...]   (default: 4x4 6x6 8x8; 10x10 is capped, see below)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
boards=("${@:-4x4 6x6 8x8}")
for b in ${boards[@]}; do
  cap=()
  # 10x10 does not converge within 30 minutes here: cap it and say so.
  [ "$b" = "10x10" ] && cap=(--max-iterations "${CAP_10X10:-1500}")
  /usr/bin/time -v ./target/release/bidtb generate --board "$b" --out "$out" -q "${cap[@]}" \
    >/dev/null 2>"$out/time.txt"
  wall=$(grep 'Elapsed (wall clock)' "$out/time.txt" | awk '{print $NF}')
  peak=$(grep 'Maximum resident' "$out/time.txt" | awk '{print $NF}')
  python3 - "$out/$b/summary.json" "$wall" "$peak" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pos = sum(c["canonical_positions"] for c in d["classes"].values())
dig = max(c["max_denominator_digits"] for c in d["classes"].values())
print(f'{d["board"]}: {pos} positions, first Richman iteration {d["first_richman_iteration"]}, '
      f'{d["iterations_run"]} iterations run, certified {d["certified"]}, max denominator {dig} digits, '
      f'wall {sys.argv[2]}, peak {int(sys.argv[3]) // 1024} MB')
PY
done
