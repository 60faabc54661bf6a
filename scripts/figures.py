#!/usr/bin/env python3
"""The book's figures: tables rendered from data, never typed by hand.

    scripts/figures.py --records [--check]

renders every record docs/records/NAME.json (a measurement: what, when, on which build and
machine, by which command, and its table) to docs/src/figures/NAME.md. The book includes them with `{{#include}}`. With
`--check` nothing is written: the script exits 1 if a committed figure differs from what its
data renders (scripts/docs runs it so). To update a figure, measure again, write the record
(by hand from the run's `/usr/bin/time -v` and summary.json, or with the modes below) and
rerun this.

The modes below print the tables of four-piece runs, from DIR/FxR/summary.json files written
by `bidtb generate --pieces 4 --method solve`.

One summary: one Markdown row per material (positions canonical and before symmetry,
distinct values, digits of the largest denominator, positions with alpha < beta, zugzwangs,
quiescent positions, seconds and peak memory of the material's job), then the totals.

Several summaries: the census across boards, one row per material and one column per board
(`digits / alpha<beta / zugzwangs`), then each board's positions, seconds and peak memory.

    scripts/figures.py tables/6x6/summary.json
    scripts/figures.py tables/{4x4,5x5,6x6,7x7}/summary.json tables/8x8

A directory stands for a board whose materials were made by several runs (8x8): its
records DIR/FxR/M.json, one per material, make its column; materials without a record are
shown as `–`, and the board's seconds are the sum of its materials' jobs.
"""
import glob
import os
import json
import sys


def one(d):
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


def census(ds):
    boards = [d["board"] for d in ds]
    print("| material | " + " | ".join(boards) + " |")
    print("|---" * (len(boards) + 1) + "|")
    for m in ds[0]["materials"]:
        cells = []
        for d in ds:
            c = d["classes"].get(m)
            if c is None:
                cells.append("–")
                continue
            ab = c.get("alpha_below_beta") or 0
            z = c.get("zugzwangs") or 0
            ab_text = f"**{ab:,}**" if ab else "0"
            cells.append(f"{c['max_denominator_digits']} / {ab_text} / {z}")
        print(f"| {m} | " + " | ".join(cells) + " |")
    rows = [
        ("positions (canonical)", lambda d: f"{sum(c['canonical_positions'] for c in d['classes'].values()):,}"),
        ("α < β", lambda d: f"{d.get('alpha_below_beta') or 0:,}"),
        ("wall seconds", lambda d: f"{d['seconds']:.1f}"),
        ("largest job's peak MiB", lambda d: f"{max((c.get('peak_mib') or 0) for c in d['costs'].values()):,}"),
    ]
    for name, f in rows:
        print(f"| {name} | " + " | ".join(f(d) for d in ds) + " |")


def from_records(path):
    """A summary-like view of the records in a board's directory."""
    records = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(path, "K*.json")))]
    return {
        "board": os.path.basename(os.path.normpath(path)),
        "materials": [r["material"] for r in records],
        "classes": {r["material"]: r["report"] for r in records},
        "costs": {r["material"]: r["cost"] for r in records},
        "seconds": sum(r["cost"]["seconds"] for r in records),
        "alpha_below_beta": sum(r["report"].get("alpha_below_beta") or 0 for r in records),
        "certified": all(r["report"].get("certified_alpha") and r["report"].get("certified_beta")
                         for r in records),
    }


def load(path):
    return from_records(path) if os.path.isdir(path) else json.load(open(path))


ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def cell(value):
    return f"{value:,}" if isinstance(value, int) else str(value)


def render_record(record):
    """One record as Markdown: its table, then where the figures come from."""
    lines = ["| " + " | ".join(record["columns"]) + " |", "|---" * len(record["columns"]) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in record["rows"]]
    lines.append("")
    labels = {"totals": "the whole run", "stage_seconds": "stage (seconds, summed over the jobs)"}
    for key in ("totals", "stage_seconds"):
        if key in record:
            lines += [f"| {labels[key]} | |", "|---|---|"]
            lines += [f"| {k.replace('_', ' ')} | {cell(v)} |" for k, v in record[key].items()]
            lines.append("")
    if record.get("caption"):
        lines += [record["caption"], ""]
    lines.append(f"*Measured {record['measured']}, build {record['build']}, on {record['machine']}: "
                 f"`{record['command']}`.*")
    return "\n".join(lines) + "\n"


def figures():
    """{path: text} of every figure the data renders."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "docs", "records", "*.json"))):
        name = os.path.splitext(os.path.basename(path))[0]
        out[os.path.join(ROOT, "docs", "src", "figures", name + ".md")] = render_record(json.load(open(path)))
    return out


def records(check):
    stale = 0
    for path, text in figures().items():
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale += 1
            print(f"{os.path.relpath(path, ROOT)}: differs from what its data renders "
                  "(run scripts/figures.py --records)")
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").write(text)
            print(f"wrote {os.path.relpath(path, ROOT)}")
    return 1 if stale else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--records"]:
        sys.exit(records("--check" in sys.argv[2:]))
    summaries = [load(p) for p in sys.argv[1:]]
    if len(summaries) == 1:
        one(summaries[0])
    else:
        census(summaries)
