"""Fixtures: tables made once per session with bidtb.generate, and the command-line
program for the agreement test.

- ``tables``: a directory with the 8x8 three-piece tables (method "solve", about 1 s),
  every material up to four men on 4x4 (about 2 s: α < β and zugzwangs occur there) and
  KPvKP with what it needs on 3x5 (en passant);
- ``cli``: the ``bidtb`` binary (``$BIDTB_CLI``, else ``target/release/bidtb`` under
  ``$CARGO_TARGET_DIR`` or the repository); the tests that need it are skipped without it
  unless ``$BIDTB_REQUIRE_CLI`` is set (as ``scripts/test-python`` sets it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

import bidtb

REPO = Path(__file__).resolve().parents[2]

#: Boards and what the session's tables hold on them.
BOARDS = {
    "8x8": {"pieces": 3},
    "4x4": {"pieces": 4},
    "3x5": {"materials": ["KPvKP"]},
}


@pytest.fixture(scope="session")
def tables_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tables")
    for board, what in BOARDS.items():
        summary = bidtb.generate(board=board, method="solve", out=out, progress=False, **what)
        assert summary["certified"], board
    return out


@pytest.fixture()
def tables(tables_dir: Path) -> Iterator[bidtb.Tablebase]:
    with bidtb.open_tablebase(tables_dir) as tb:
        yield tb


@pytest.fixture(scope="session")
def cli() -> str:
    candidates = []
    if os.environ.get("BIDTB_CLI"):
        candidates.append(Path(os.environ["BIDTB_CLI"]))
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "bidtb")
    candidates.append(REPO / "target" / "release" / "bidtb")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    if os.environ.get("BIDTB_REQUIRE_CLI"):
        pytest.fail(f"no bidtb binary at {', '.join(map(str, candidates))}")
    pytest.skip("no bidtb binary: build it with `cargo build --release` or set BIDTB_CLI")
    raise AssertionError("unreachable")
