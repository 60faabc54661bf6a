#!/usr/bin/env python3
"""The record of a five-man run (scripts/five-men.sh writes it): prints the JSON of
docs/records/five-men-FxR.json from the run's summary, its /usr/bin/time -v report and the
tables' sizes.

    scripts/five-men-record.py BOARD OUT BUILD [--resumed]

OUT holds summary-BOARD.json (generate --json), stderr-BOARD.txt (its stderr, ending with
/usr/bin/time -v's report) and the tables in OUT/BOARD/. The rows are the five-man
materials, the slowest first; the totals cover every material.
"""
import datetime
import json
import os
import re
import sys


def time_report(text):
    """Wall seconds, CPU seconds and peak resident KiB from /usr/bin/time -v's report."""
    field = lambda name: re.search(rf"{re.escape(name)}: (.*)", text).group(1).strip()
    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return wall, cpu, int(field("Maximum resident set size (kbytes)"))


def main():
    board, out, build = sys.argv[1:4]
    resumed = "--resumed" in sys.argv[4:]
    summary = json.load(open(os.path.join(out, f"summary-{board}.json")))
    wall, cpu, peak_kib = time_report(open(os.path.join(out, f"stderr-{board}.txt")).read())
    tables = os.path.join(out, board)
    size = lambda m: os.path.getsize(os.path.join(tables, f"{m}.bidtb"))
    classes, costs = summary["classes"], summary["costs"]
    men = lambda m: sum(c.isupper() for c in m)
    total_bytes = sum(size(m) for m in classes)
    heap = max(c["peak_heap_mib"] for c in costs.values())
    five = sorted((m for m in classes if men(m) == 5), key=lambda m: -costs[m]["seconds"])
    rows = []
    for m in five:
        c, k = classes[m], costs[m]
        rows.append([
            m,
            f'{c["canonical_positions"]:,}',
            f'{c["alpha_below_beta"]:,}',
            f'{c["max_denominator_digits"]} digits',
            f'{k["seconds"]:.1f}',
            f'{k["cpu_seconds"]:.1f}',
            f'{k["peak_heap_mib"]:,}',
            f'{size(m) / 1e6:.1f}',
        ])
    split = [m for m in five if classes[m]["alpha_below_beta"] > 0]
    record = {
        "title": f"Every material up to five men on {board} in one run",
        "measured": "",
        "build": build,
        "machine": "2 cores, 24 GiB, alone on it",
        "command": f"/usr/bin/time -v bidtb generate --board {board} --pieces 5 --method solve "
                   f"--jobs 2 --out DIR" + (" --resume" if resumed else ""),
        "totals": {
            "materials": len(classes),
            "certified": summary["certified"],
            "positions (canonical)": sum(c["canonical_positions"] for c in classes.values()),
            "wall seconds": round(wall),
            "CPU seconds": round(cpu),
            "heap at most, MiB (a job's, two jobs side by side)": heap,
            "resident at most, MiB": peak_kib // 1024,
            "tables, GB": round(total_bytes / 1e9, 2),
            "positions with α < β": summary["alpha_below_beta"],
            "five-man materials with α < β": f"{len(split)} of {len(five)}",
            "of them with a queen": ", ".join(m for m in split if "Q" in m) or "none",
            "largest denominator, digits": max(c["max_denominator_digits"] for c in classes.values()),
        },
        # "solve" is the sum of the method's own stages (float, strategies, exact, ...).
        "stage_seconds": {k: round(v) for k, v in sorted(summary["stage_seconds"].items(),
                                                          key=lambda kv: -kv[1]) if k != "solve"},
        "caption": "The five-man materials, the slowest first: each job's clock (two run side by "
                   "side), its CPU seconds, its heap and its table. The three- and four-man "
                   "materials are in the totals." + (" This run was resumed: its times are "
                                                     "those of the resumed part." if resumed else ""),
        "columns": ["material", "positions (canonical)", "α < β", "largest denominator",
                    "seconds", "CPU seconds", "heap MiB", "table MB"],
        "rows": rows,
    }
    record["measured"] = datetime.date.today().isoformat()
    print(json.dumps(record, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
