#!/usr/bin/env python3
"""One request as one `generate` run and as Slurm jobs (`bidtb cluster submit`), timed side by
side on this machine, the tables compared byte for byte; writes docs/records/cluster-FxR-N.json.

Usage: scripts/cluster-record.py BOARD PIECES [OUT]   (e.g. scripts/cluster-record.py 5x5 4)

Needs a running Slurm (scripts/slurm-local start) and the release build. The cluster run's
figures: wall time from the first submission to the last table, the jobs' own run times
(scontrol's StartTime to EndTime, summed), and the scheduler's latency: for each job, the
seconds from the end of the last job it waited for (or from the submission) to its start
(the scheduler's latency and the queue for the node's cores together).
Run it alone on the machine: its times are the record.
"""
import datetime
import filecmp
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "bidtb"


def bidtb(*args):
    out = subprocess.run([str(BIN), *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bidtb {' '.join(args)} failed ({out.returncode}): {out.stderr}")
    return out.stdout


def scontrol_times(job):
    text = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True,
                          text=True, check=True).stdout
    fields = dict(w.split("=", 1) for w in text.split() if "=" in w)
    parse = datetime.datetime.fromisoformat
    return parse(fields["StartTime"]), parse(fields["EndTime"])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    board, pieces = sys.argv[1], sys.argv[2]
    out = pathlib.Path(sys.argv[3] if len(sys.argv) > 3 else tempfile.mkdtemp())
    whole, shared = out / "whole", out / "shared"
    request = ["--board", board, "--pieces", pieces]

    t = time.monotonic()
    bidtb("generate", *request, "--method", "solve", "--out", str(whole), "-q")
    one_run = time.monotonic() - t

    submitted_at = datetime.datetime.now()
    t = time.monotonic()
    sent = json.loads(bidtb("cluster", "submit", *request, "--out", str(shared), "--json"))
    while True:
        status = json.loads(bidtb("cluster", "status", *request, "--out", str(shared), "--json"))
        failed = [s for s in status if s["state"] == "failed"]
        if failed:
            sys.exit(f"jobs failed: {failed}")
        if all(s["state"] == "done" for s in status):
            break
        time.sleep(0.2)
    cluster_wall = time.monotonic() - t

    ids = {s["material"]: s["job"] for s in sent}
    times = {m: scontrol_times(j) for m, j in ids.items()}
    jobs_seconds = sum((e - s).total_seconds() for s, e in times.values())
    waits = []
    for s in sent:
        ready = max([times[m][1] for m, j in ids.items() if j in s["after"]],
                    default=submitted_at)
        waits.append(max(0.0, (times[s["material"]][0] - ready).total_seconds()))
    same = all(
        filecmp.cmp(whole / board / f"{s['material']}.bidtb",
                    shared / board / f"{s['material']}.bidtb", shallow=False)
        for s in sent)
    if not same:
        sys.exit("the tables differ")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    median = sorted(waits)[len(waits) // 2]
    record = {
        "title": f"{board}, every material up to {pieces} men: one run and Slurm jobs",
        "measured": datetime.date.today().isoformat(),
        "build": commit,
        "machine": f"{os.cpu_count()} cores, {mem:.0f} GiB, a single-node Slurm "
                   "(scripts/slurm-local)",
        "command": f"scripts/cluster-record.py {board} {pieces}",
        "caption": f"The {len(sent)} tables of the two runs are identical byte for byte. "
                   "Jobs' own seconds: scontrol's StartTime to EndTime of each job, summed; "
                   "wait: from the end of the last job a job waited for (or the submission) "
                   "to its start, the scheduler's latency and the queue for the node's cores "
                   "together.",
        "columns": ["run", "jobs", "wall (s)", "jobs' own seconds, summed",
                    "wait per job, median / max (s)"],
        "rows": [
            ["one `bidtb generate`", 1, f"{one_run:.1f}", "–", "–"],
            ["`bidtb cluster submit`", len(sent), f"{cluster_wall:.1f}",
             f"{jobs_seconds:.0f}", f"{median:.0f} / {max(waits):.0f}"],
        ],
    }
    path = ROOT / "docs" / "records" / f"cluster-{board}-{pieces}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
