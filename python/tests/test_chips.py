"""Bidding with whole chips from Python: the study's example with 200 chips, agreement with
``bidtb query --json --chips``, a missing chip table, and bad arguments."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import bidtb

FEN = "3k3R/8/3K4/8/8/8/8/8"


@pytest.fixture(scope="module")
def chips_dir(tables_dir: Path, cli: str) -> Path:
    subprocess.run(
        [cli, "chips", "--tables", str(tables_dir), "--board", "8x8", "--chips", "200", "-q"],
        check=True,
    )
    return tables_dir


def test_the_study_example_with_200_chips(chips_dir: Path) -> None:
    with bidtb.open_tablebase(chips_dir) as tb:
        c = tb.probe_chips(FEN, 50, 150, tiebreak="black")
        assert (c["win"], c["not_lose"], c["outcome"]) == ("50", "50", "white wins")
        assert c["advice"][0]["then"] == "move h8d8"
        c = tb.probe_chips(FEN, 49, 151, tiebreak="white")
        assert c["white"]["text"] == "49*"
        assert c["outcome"] == "black wins"


def test_agrees_with_the_command_line(chips_dir: Path, cli: str) -> None:
    with bidtb.open_tablebase(chips_dir) as tb:
        for fen, w, b, marker in [
            (FEN, 100, 100, "white"),
            ("8/8/8/8/6P1/8/8/1K3k2", 120, 80, "black"),
            ("k7/8/8/8/8/8/8/K6n", 10, 190, "white"),
        ]:
            out = subprocess.run(
                [cli, "query", "--tables", str(chips_dir), "--json", "--chips", f"{w}:{b}",
                 "--tiebreak", marker, fen],
                check=True, capture_output=True, text=True,
            ).stdout
            assert tb.probe_chips(fen, w, b, marker) == json.loads(out)["chips"], fen


def test_missing_chip_tables_and_bad_arguments(chips_dir: Path) -> None:
    with bidtb.open_tablebase(chips_dir) as tb:
        with pytest.raises(bidtb.BidtbError, match="bidtb chips"):
            tb.probe_chips(FEN, 60, 60)
        with pytest.raises(ValueError, match="tiebreak"):
            tb.probe_chips(FEN, 100, 100, tiebreak="both")
        with pytest.raises(ValueError):
            tb.probe_chips("not a fen", 100, 100)
