"""Exact endgame tablebases for bidding chess, from Python.

In bidding chess the players bid for the right to make each move; a position has no
side to move, and its value is the share of the total money Black needs to win, which
equals White's winning chance when a fair coin decides who moves. bidtb computes these
values exactly, as rationals, for every position of two kings and up to two more men on
any board from 2x2 to 16x16.

Probe tables as ``chess.syzygy`` probes Syzygy's::

    import bidtb

    with bidtb.open_tablebase("tables") as tb:
        tb.probe_value("3k3R/8/3K4/8/8/8/8/8")      # Fraction(3, 4)
        white, black = tb.best_moves("3k3R/8/3K4/8/8/8/8/8")
        white.uci, black.uci                       # ('h8d8', 'd8c7')
        tb.bid("3k3R/8/3K4/8/8/8/8/8")              # Fraction(1, 4)

and make them::

    bidtb.generate(board="8x8", method="solve", out="tables", pieces=3)

A position is a FEN string (piece placement, ranks from the top; the board's size
follows from the rows; the side-to-move field is ignored and the en-passant field is
read) or, on 8x8, a ``chess.Board`` from python-chess. Values are
``fractions.Fraction``, never floats (``float(v)`` where a float is wanted).
"""

from __future__ import annotations

import os
import sys
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Union

from ._bidtb import Event, Move, Probe, Tablebase
from ._bidtb import generate as _generate
from ._errors import BidtbError, MissingTableError

if TYPE_CHECKING:
    import chess

    Position = Union[str, chess.BaseBoard]
else:
    Position = Union[str, Any]

try:
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("bidtb")
    except PackageNotFoundError:  # pragma: no cover - run from the source tree
        __version__ = "0+unknown"
except ImportError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "BidtbError",
    "Event",
    "Fraction",
    "MissingTableError",
    "Move",
    "Position",
    "Probe",
    "Tablebase",
    "generate",
    "open_tablebase",
]

PathLike = Union[str, "os.PathLike[str]"]


def open_tablebase(directory: PathLike) -> Tablebase:
    """Open the tables under ``directory`` (as ``bidtb generate --out DIR`` or
    :func:`generate` writes them: ``DIR/8x8/KRvK.bidtb``).

    The result is a context manager (``with bidtb.open_tablebase("tables") as tb:``);
    ``add_directory`` adds more directories and ``close()`` unmaps the files. Raises
    ``FileNotFoundError`` if the directory does not exist and :class:`BidtbError` if a
    table file in it is truncated, corrupted or of another version.
    """
    return Tablebase(directory)


class _Tqdm:
    """Progress of :func:`generate` on a tqdm bar: one step per material, the stage and
    the solve method's components (or the iteration) beside it."""

    def __init__(self, tqdm: Any) -> None:
        self._tqdm = tqdm
        self._bar: Any = None
        self._iterations: Any = None

    def __call__(self, e: Event) -> None:
        if e.kind == "material":
            if self._bar is None:
                self._bar = self._tqdm(total=e.total, unit="material", leave=True)
            elif e.index is not None and e.index > 1:
                self._bar.update(1)
            self._bar.set_description(e.material or "")
        elif self._bar is None:
            return
        elif e.kind == "stage":
            self._bar.set_postfix_str(e.stage or "")
        elif e.kind == "components" and e.total:
            self._bar.set_postfix_str(f"components {e.done}/{e.total}")
        elif e.kind == "iteration":
            self._bar.set_postfix_str(f"iteration {e.done}, {e.bits} bits")
        elif e.kind == "notice" and e.text:
            self._bar.write(e.text, file=sys.stderr)

    def close(self, finished: bool) -> None:
        if self._bar is not None:
            if finished:
                self._bar.update(self._bar.total - self._bar.n)
            self._bar.close()


def generate(
    board: str = "8x8",
    method: str = "solve",
    out: PathLike = "tables",
    *,
    pieces: Optional[int] = None,
    materials: Union[None, str, Iterable[str]] = None,
    progress: Union[None, bool, Callable[[Event], Any]] = None,
    resume: bool = False,
    allow_uncertified: bool = False,
    max_iterations: Optional[int] = None,
    jobs: int = 2,
) -> dict[str, Any]:
    """Make the tables of a board, as ``bidtb generate`` does, into ``out/FxR/``.

    ``board`` is ``FILESxRANKS`` (``"8x8"``, ``"6x6"``, ``"3x4"``: 3 files by 4 ranks).
    ``method`` is ``"solve"`` (exact linear solves under improving strategies: any board,
    any material) or ``"iterate"`` (the study's iteration, which reproduces 2644 on 8x8:
    the three-piece materials only). Either way a certificate proves every value.

    The materials: ``pieces=N`` makes every material of up to N men, kings included (3:
    the six three-piece materials; 4: also the thirty four-piece ones);
    ``materials=["KRvKN", ...]`` (or ``"KRvKN,KQvK"``) makes those and what their
    captures and promotions lead to; neither makes the three-piece materials. Tables
    already in ``out`` that a request needs but did not ask for are reused.

    ``progress``: a callable that receives each :class:`Event` (a material starts, a
    stage starts or ends, the solve method's components...), on the calling thread;
    ``None`` (the default) shows a tqdm bar where tqdm is installed and nothing
    otherwise; ``False`` shows nothing. An exception in the callback stops the run and
    is raised.

    The run releases the GIL: other Python threads go on meanwhile. Ctrl-C stops it
    between two steps and raises ``KeyboardInterrupt``; the tables of the materials
    finished are kept, and the solve method saves the state of the one under way, so
    that ``resume=True`` continues it. A certificate that fails raises
    :class:`BidtbError` and writes no table, unless ``allow_uncertified=True``.
    ``max_iterations`` caps the iterate method (values are then not proved; no table).
    ``jobs`` (1 to 16, default 2, as ``bidtb generate --jobs``): with the solve method
    and several materials, up to that many materials are made side by side, each once
    the materials it reads are made and only while their memory estimates fit together
    (the files are the same either way; ``jobs=1``: one after another). Their events
    then interleave (a stage's end and the notices name their material).

    Returns the run's summary (the contents of ``out/FxR/summary.json``), a dict.
    Raises ``ValueError`` for bad arguments, :class:`BidtbError` when the work does not
    fit in this machine's memory, ``OSError`` when ``out`` cannot be written.
    """
    bar: Optional[_Tqdm] = None
    callback: Optional[Callable[[Event], Any]]
    if progress is None or progress is True:
        callback = None
        try:
            from tqdm.auto import tqdm  # type: ignore[import-untyped, unused-ignore]
        except ImportError:
            tqdm = None
        if tqdm is not None:
            bar = _Tqdm(tqdm)
            callback = bar
    elif progress is False:
        callback = None
    elif callable(progress):
        callback = progress
    else:
        raise ValueError("progress is a callable taking a bidtb.Event, None, True or False")
    finished = False
    try:
        summary = _generate(
            board,
            method,
            os.fspath(out),
            pieces,
            materials,
            callback,
            resume,
            allow_uncertified,
            max_iterations,
            jobs,
        )
        finished = True
        return summary
    finally:
        if bar is not None:
            bar.close(finished)
