"""Agreement with `bidtb query --json` on a thousand random positions, and the same error
messages as the command line."""

from __future__ import annotations

import json
import random
import subprocess
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any, Optional

import pytest

import bidtb
from helpers import random_position
from test_errors import BAD_FENS
from test_values import zugzwangs as find_zugzwangs

# (board, extra men): 8x8's three-piece materials and their mirrors; 4x4's four-piece ones
# (alpha < beta and zugzwangs occur there); 3x5 KPvKP (en passant).
KINDS = [("8x8", x) for x in ["", "Q", "R", "B", "N", "P", "q", "r", "b", "n", "p"]] + [
    ("4x4", x) for x in ["Bn", "Nb", "BN", "NN", "QR", "Pp", "Rn", "Np", "Pn", "Qq", "bn", "pp"]
]


def positions(count: int, extra: list[str]) -> list[str]:
    rng = random.Random(2026)
    out = [random_position(rng, *rng.choice(KINDS)) for _ in range(count - 20 - len(extra))]
    out += extra
    # En passant on 3x5: a white pawn just double-stepped beside a black one, and back.
    out += ["k2/1Pp/3/3/K2 w - b3", "k2/pP1/3/3/K2 w - b3", "k2/3/3/Pp1/K2 w - b3"] * 2
    out += [random_position(rng, "3x5", "Pp") for _ in range(14)]
    return out


def query(cli: str, tables: Path, fen: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [cli, "query", "--tables", str(tables), "--json", fen],
        capture_output=True,
        text=True,
        timeout=60,
    )


def frac(text: Optional[str]) -> Optional[Fraction]:
    return None if text is None else Fraction(text)


def same_move(m: bidtb.Move, j: dict[str, Any]) -> None:
    assert m.uci == j["move"]
    assert m.value == frac(j["value"])
    assert m.beta == frac(j.get("beta", j["value"]))
    assert m.level == j["level"]
    assert m.fen == j["fen"]


def test_agreement_with_query_json(tables: bidtb.Tablebase, tables_dir: Path, cli: str) -> None:
    fens = positions(1000, find_zugzwangs(tables))
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(lambda f: query(cli, tables_dir, f), fens))
    split = zugzwangs = 0
    for fen, run in zip(fens, runs):
        assert run.returncode == 0, (fen, run.stderr)
        j = json.loads(run.stdout)
        p = tables.probe(fen)
        assert json.loads(p.to_json()) == j, fen
        assert (p.board, p.fen, p.material) == (j["board"], j["fen"], j["class"])
        value, beta = Fraction(j["value"]), Fraction(j.get("beta", j["value"]))
        assert (p.value, p.beta) == (value, beta)
        assert tables.probe_value(fen) == value
        assert tables.probe_bounds(fen) == (value, beta)
        assert p.bid == Fraction(j["bid"]) == tables.bid(fen)
        assert p.bid_beta == Fraction(j.get("bid_beta", j["bid"]))
        assert p.zugzwang is j["zugzwang"] is tables.is_zugzwang(fen)
        assert (p.level_white, p.level_black) == (j["level_white"], j["level_black"])
        assert p.certified is j["certified"] is True
        assert len(p.white) == len(j["white"]) and len(p.black) == len(j["black"])
        for m, jm in zip(p.white, j["white"]):
            same_move(m, jm)
        for m, jm in zip(p.black, j["black"]):
            same_move(m, jm)
        white, black = tables.best_moves(fen)
        assert (white and white.uci) == j["best_white"]
        assert (black and black.uci) == j["best_black"]
        moves = tables.probe_moves(fen)
        assert [m.uci for m in moves[0]] == [m["move"] for m in j["white"]]
        assert [m.uci for m in moves[1]] == [m["move"] for m in j["black"]]
        split += value < beta
        zugzwangs += j["zugzwang"]
    # The sample reaches what is rare: alpha < beta and zugzwangs.
    assert split > 0 and zugzwangs > 0, (split, zugzwangs)


def cli_error(cli: str, tables: Path, fen: str) -> tuple[int, str]:
    run = query(cli, tables, fen)
    assert run.stdout == ""
    line = run.stderr.strip()
    assert line.startswith("bidtb: ")
    return run.returncode, line.removeprefix("bidtb: ")


def test_missing_table_message_as_the_command_line(
    tables: bidtb.Tablebase, tables_dir: Path, cli: str
) -> None:
    for fen in ["3k3R/8/3K4/8/8/8/8/7r", "k6q/8/8/8/8/8/8/K6Q", "kr3/5/5/5/K4 w - -"]:
        code, message = cli_error(cli, tables_dir, fen)
        assert code == 1
        with pytest.raises(bidtb.MissingTableError) as info:
            tables.probe_value(fen)
        assert str(info.value) == message


@pytest.mark.parametrize(("fen", "fragment"), [f for f in BAD_FENS if f[0]])
def test_bad_fen_message_as_the_command_line(
    tables: bidtb.Tablebase, tables_dir: Path, cli: str, fen: str, fragment: str
) -> None:
    code, message = cli_error(cli, tables_dir, fen)
    assert code == 2
    with pytest.raises(ValueError) as info:
        tables.probe_value(fen)
    assert str(info.value) == message
