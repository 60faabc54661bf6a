"""Probes per second from one Python thread.

    python python/bench.py [--tables DIR] [--board 8x8] [--count 200000] [--material M ...]

Makes the board's three-piece tables with bidtb.generate (method "solve") into DIR if they
are not there (a temporary directory by default), draws random positions of every
three-piece material (both colours, so half are answered through the colour mirror) as
FEN strings, and times probe_value, probe_bounds, the same through chess.Board (8x8, if
python-chess is installed) and the full probe (every move of both sides). With --material
(repeatable, e.g. --material KNvKP), positions of those materials instead, from tables
already in DIR (made with `bidtb generate --material`).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from typing import Callable, Sequence

import bidtb

PIECES = "QRBNP"


def placement(files: int, ranks: int, men: dict[tuple[int, int], str]) -> str:
    """A FEN placement of men given by (file, rank) from the bottom left."""
    rows = []
    for rank in range(ranks - 1, -1, -1):
        row, run = "", 0
        for file in range(files):
            man = men.get((file, rank))
            if man is None:
                run += 1
                continue
            if run:
                row += str(run)
                run = 0
            row += man
        rows.append(row + (str(run) if run else ""))
    return "/".join(rows)


def random_positions(board: str, count: int, seed: int = 1) -> list[str]:
    """`count` random positions of the three-piece materials and their mirrors."""
    files, ranks = (int(x) for x in board.split("x"))
    rng = random.Random(seed)
    squares = [(f, r) for f in range(files) for r in range(ranks)]
    out = []
    while len(out) < count:
        piece = rng.choice(PIECES + " ")
        white = rng.random() < 0.5
        letters = ["K", "k"] + ([] if piece == " " else [piece if white else piece.lower()])
        where = rng.sample(squares, len(letters))
        if piece == "P" and where[2][1] in (0, ranks - 1):
            continue
        out.append(placement(files, ranks, dict(zip(where, letters))))
    return out


def material_positions(board: str, count: int, materials: Sequence[str], seed: int = 1) -> list[str]:
    """`count` random positions of `materials` (names like KNvKP), drawn in turn."""
    files, ranks = (int(x) for x in board.split("x"))
    rng = random.Random(seed)
    squares = [(f, r) for f in range(files) for r in range(ranks)]
    out = []
    while len(out) < count:
        white, black = materials[len(out) % len(materials)].split("v")
        letters = list(white) + [x.lower() for x in black]
        where = rng.sample(squares, len(letters))
        if any(m in "Pp" and r in (0, ranks - 1) for m, (_, r) in zip(letters, where)):
            continue
        out.append(placement(files, ranks, dict(zip(where, letters))))
    return out


def rate(name: str, f: Callable[[object], object], positions: Sequence[object]) -> float:
    """Probes per second of `f` over `positions` (best of three rounds)."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for p in positions:
            f(p)
        best = min(best, time.perf_counter() - started)
    per_second = len(positions) / best
    print(f"{name:<34} {per_second:>12,.0f} probes/s  ({best / len(positions) * 1e6:.2f} us each)")
    return per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", help="tables directory (made if absent)")
    parser.add_argument("--board", default="8x8")
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--material", action="append", help="draw positions of this material")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tables = args.tables or tmp
        if args.material:
            positions = material_positions(args.board, args.count, args.material)
            with bidtb.open_tablebase(tables) as tb:
                rate(f"probe_value ({', '.join(args.material)})", tb.probe_value, positions)
                rate("probe_bounds", tb.probe_bounds, positions)
                rate("probe (every move)", tb.probe, positions[: args.count // 20])
            return
        if not os.path.exists(os.path.join(tables, args.board, "KQvK.bidtb")):
            started = time.perf_counter()
            bidtb.generate(board=args.board, method="solve", out=tables, pieces=3, progress=False)
            print(f"generated {args.board} three-piece tables in {time.perf_counter() - started:.1f} s")
        positions = random_positions(args.board, args.count)
        with bidtb.open_tablebase(tables) as tb:
            rate("probe_value (FEN)", tb.probe_value, positions)
            rate("probe_bounds (FEN)", tb.probe_bounds, positions)
            if args.board == "8x8":
                try:
                    import chess
                except ImportError:
                    chess = None
                if chess is not None:
                    boards = [chess.Board(p + " w - - 0 1") for p in positions[: args.count // 4]]
                    rate("probe_value (chess.Board)", tb.probe_value, boards)
            rate("probe (every move, FEN)", tb.probe, positions[: args.count // 20])


if __name__ == "__main__":
    main()
