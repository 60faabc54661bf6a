#!/usr/bin/env bash
# Whole-run time and peak memory for several boards (the book's measurements, docs/src/measurements.md).
# Usage: scripts/scaling.sh [BOARD...]               (default: 4x4 6x6 8x8; the iteration)
#        METHOD=solve scripts/scaling.sh [BOARD...]  (the solve method; any board)
# With the iteration 10x10 is capped (it does not converge within 30 minutes here).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
method=${METHOD:-iterate}
boards=("${@:-4x4 6x6 8x8}")
for b in ${boards[@]}; do
  cap=()
  [ "$method" = iterate ] && [ "$b" = "10x10" ] && cap=(--max-iterations "${CAP_10X10:-1500}")
  status=0
  /usr/bin/time -v ./target/release/bidtb generate --board "$b" --method "$method" --out "$out" -q \
    "${cap[@]}" >/dev/null 2>"$out/time.txt" || status=$?
  wall=$(grep 'Elapsed (wall clock)' "$out/time.txt" | awk '{print $NF}')
  peak=$(grep 'Maximum resident' "$out/time.txt" | awk '{print $NF}')
  if [ "$status" != 0 ]; then
    echo "$b: exit $status after $wall, peak $((peak / 1024)) MB: $(grep -v -e '^\s' -e '^Command' "$out/time.txt" | head -3)"
    continue
  fi
  python3 - "$out/$b/summary.json" "$wall" "$peak" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pos = sum(c["canonical_positions"] for c in d["classes"].values())
dig = max(c["max_denominator_digits"] for c in d["classes"].values())
extra = ""
if d["method"] == "solve":
    ev = d["solve"][0]["rounds"][-1]["evaluation"]
    extra = (f'solve {d["stage_seconds"]["solve"]:.1f} s, largest system {ev["largest"]} positions '
             f'({ev["max_bits"]} bits), {len(d["solve"][0]["rounds"])} evaluations, '
             f'alpha<beta {d["alpha_below_beta"]}, ')
else:
    extra = (f'first Richman iteration {d["first_richman_iteration"]}, '
             f'{d["iterations_run"]} iterations run, ')
print(f'{d["board"]} ({d["method"]}): {pos} positions, {extra}certified {d["certified"]}, '
      f'max denominator {dig} digits, wall {sys.argv[2]}, peak {int(sys.argv[3]) // 1024} MB')
PY
  rm -rf "$out/$b"
done
