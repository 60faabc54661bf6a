"""Helpers of the tests: FEN placements and random positions."""

from __future__ import annotations

import random

def placement(files: int, ranks: int, men: dict[tuple[int, int], str]) -> str:
    """The FEN placement of men at (file, rank), counted from a1 = (0, 0)."""
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


def random_position(rng: random.Random, board: str, extra: str) -> str:
    """A random position on `board` of the two kings and the men `extra` (FEN letters,
    upper case White's), pawns kept off their first and last ranks."""
    files, ranks = (int(x) for x in board.split("x"))
    letters = ["K", "k", *extra]
    while True:
        squares = rng.sample([(f, r) for f in range(files) for r in range(ranks)], len(letters))
        if all(not (m in "Pp" and sq[1] in (0, ranks - 1)) for m, sq in zip(letters, squares)):
            return placement(files, ranks, dict(zip(squares, letters)))


def all_positions(board: str, extra: str) -> list[str]:
    """Every position on `board` of the two kings and the men `extra` (pawns kept off
    their first and last ranks), in a fixed order."""
    files, ranks = (int(x) for x in board.split("x"))
    letters = ["K", "k", *extra]
    squares = [(f, r) for f in range(files) for r in range(ranks)]
    out: list[str] = []

    def place(i: int, used: dict[tuple[int, int], str]) -> None:
        if i == len(letters):
            out.append(placement(files, ranks, used))
            return
        for sq in squares:
            if sq in used or (letters[i] in "Pp" and sq[1] in (0, ranks - 1)):
                continue
            used[sq] = letters[i]
            place(i + 1, used)
            del used[sq]

    place(0, {})
    return out
