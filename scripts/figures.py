#!/usr/bin/env python3
"""The README's per-material table of a run: reads DIR/FxR/summary.json (as written by
`bidtb generate --pieces 4 --method solve`) and prints one Markdown row per material:
positions (canonical and before symmetry), distinct values, digits of the largest
denominator, positions with alpha < beta, zugzwangs, quiescent positions, seconds and peak
memory of the material's job, then the totals.

    scripts/figures.py tables/6x6/summary.json
"""
import json
import sys


def main(path):
    d = json.load(open(path))
    print(f"{d['board']}: {len(d['materials'])} materials in {d['seconds']:.1f} s wall "
          f"(certified: {d['certified']})\n")
    print("| material | positions (canonical / all) | distinct values | largest denominator "
          "| α < β | zugzwangs | quiescent | seconds | peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    total = [0, 0, 0, 0]
    for m in d["materials"]:
        c, cost = d["classes"][m], d["costs"].get(m, {})
        total[0] += c["canonical_positions"]
        total[1] += c["positions"]
        total[2] += c.get("alpha_below_beta") or 0
        total[3] += c.get("zugzwangs") or 0
        print(f"| {m} | {c['canonical_positions']:,} / {c['positions']:,} | "
              f"{c.get('distinct_values', 0):,} | {c['max_denominator_digits']} digits | "
              f"{c.get('alpha_below_beta') or 0:,} | {c.get('zugzwangs') or 0:,} | "
              f"{c.get('quiescent') or 0:,} | {cost.get('seconds', 0):.2f} | "
              f"{cost.get('peak_mib') or '–'} |")
    print(f"| all | {total[0]:,} / {total[1]:,} | | | {total[2]:,} | {total[3]:,} | | "
          f"{d['seconds']:.1f} | |")


if __name__ == "__main__":
    main(sys.argv[1])
