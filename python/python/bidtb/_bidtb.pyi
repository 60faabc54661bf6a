"""Type hints of bidtb's native module (PyO3). Use it through the ``bidtb`` package."""

from __future__ import annotations

import os
from fractions import Fraction
from typing import Any, Callable, Optional, Union, final

import chess

Position = Union[str, chess.BaseBoard]
"""A FEN string of any board size, or a python-chess board (8x8)."""

@final
class Move:
    """One move of a probe: where it goes and what the position after it is worth."""

    @property
    def uci(self) -> str:
        """The move in coordinate notation, e.g. ``h8d8``, or ``d7d8n`` for a promotion."""
    @property
    def value(self) -> Fraction:
        """α of the position after the move (its exact value where α = β)."""
    @property
    def beta(self) -> Fraction:
        """β of the position after the move (equal to ``value`` where α = β)."""
    @property
    def level(self) -> Optional[int]:
        """The mover's progress level after the move: the T level for a White move, the
        T′ level for a Black move (0 for a king capture; None if unreached). Among moves
        of equal value, the lower level makes progress."""
    @property
    def fen(self) -> Optional[str]:
        """The FEN of the position after the move (None when it captures the king)."""

@final
class Probe:
    """Everything ``bidtb query`` says of a position."""

    @property
    def board(self) -> str:
        """The board, ``FxR`` (files x ranks), e.g. ``8x8``."""
    @property
    def fen(self) -> str:
        """The position's FEN (placement, and `` - - <square>`` with an en-passant right)."""
    @property
    def material(self) -> str:
        """The material as queried: ``KRvK``, ``KvKR``, ``KRvKN``..."""
    @property
    def value(self) -> Fraction:
        """α: the exact value (White's winning chance; Black's share of the money)."""
    @property
    def beta(self) -> Fraction:
        """β (equal to ``value`` wherever α = β, which is every three-piece position)."""
    @property
    def white(self) -> list[Move]:
        """Every White move, best first: highest value, then lowest T level."""
    @property
    def black(self) -> list[Move]:
        """Every Black move, best first: lowest β, then lowest T′ level."""
    @property
    def best_white(self) -> Optional[Move]:
        """White's best move (None if White has no move)."""
    @property
    def best_black(self) -> Optional[Move]:
        """Black's best move (None if Black has no move)."""
    @property
    def bid(self) -> Fraction:
        """The bid on α, (x_W − x_B)/2 of the total money: negative in a zugzwang."""
    @property
    def bid_beta(self) -> Fraction:
        """The bid on β (equal to ``bid`` where no value involved has α < β)."""
    @property
    def zugzwang(self) -> bool:
        """Whether the bid is negative: each player would rather the other moved."""
    @property
    def level_white(self) -> Optional[int]:
        """The position's level in White's closure T (None outside it)."""
    @property
    def level_black(self) -> Optional[int]:
        """The position's level in Black's closure T′ (None outside it)."""
    @property
    def certified(self) -> bool:
        """Whether every table used carries a certificate (values proved exact)."""
    def to_json(self) -> str:
        """The JSON text that ``bidtb query --json`` prints for this position."""

class Tablebase:
    """Exact tables for bidding chess, probed like ``chess.syzygy.Tablebase``.

    Open with ``bidtb.open_tablebase(directory)`` (or ``Tablebase(directory)``), add
    directories with ``add_directory``, close with ``close()`` or a ``with`` block. A
    position is a FEN of any board size or a ``chess.Board``; it has no side to move.
    Values are ``fractions.Fraction``. A missing table raises ``MissingTableError``, a
    bad FEN or position ``ValueError``.
    """

    def __init__(self, directory: Union[None, str, os.PathLike[str]] = None) -> None: ...
    def add_directory(self, directory: Union[str, os.PathLike[str]]) -> int:
        """Open the tables of ``directory`` (``DIR/8x8/KRvK.bidtb``...); return how many
        were found. A position is answered from the first directory holding its table,
        and the tables its moves lead to must be there too (as ``generate`` makes them).
        Raises ``FileNotFoundError`` for a directory that does not exist, ``BidtbError``
        for a table file that is truncated, corrupted or of another version."""
    def close(self) -> None:
        """Close every table; probes then raise ``MissingTableError`` until a directory
        is added again."""
    def __enter__(self) -> Tablebase: ...
    def __exit__(self, *args: Any) -> None: ...
    @property
    def directories(self) -> list[str]:
        """The directories opened, in the order they are searched."""
    def boards(self) -> list[str]:
        """The boards (``FxR``) with tables, sorted."""
    def materials(self, board: str) -> list[str]:
        """The materials (as stored: ``KRvK``, ``KRvKN``) with a table on ``board``."""
    def probe_value(self, position: Position) -> Fraction:
        """The exact value α of a position: the share of the money Black needs (White's
        winning chance when a fair coin decides who moves). Where α < β (some four-piece
        positions) this is the lower value; see ``probe_bounds``."""
    def get_value(self, position: Position, default: Any = None) -> Any:
        """Like ``probe_value``, but ``default`` instead of ``MissingTableError``."""
    def probe_bounds(self, position: Position) -> tuple[Fraction, Fraction]:
        """(α, β): α counts play that never ends for Black, β for White; equal wherever
        some play ends the game (every three-piece position)."""
    def probe(self, position: Position) -> Probe:
        """Everything ``bidtb query`` says of a position."""
    def probe_moves(self, position: Position) -> tuple[list[Move], list[Move]]:
        """Every move of each side with its exact value and progress level, best first:
        ``(white_moves, black_moves)``."""
    def best_moves(self, position: Position) -> tuple[Optional[Move], Optional[Move]]:
        """Each side's best move, ``(white, black)`` (None for a side without a move)."""
    def bid(self, position: Position) -> Fraction:
        """The bid (x_W − x_B)/2 as a share of the total money; negative in a zugzwang."""
    def is_zugzwang(self, position: Position) -> bool:
        """Whether the bid is negative: each player would rather the other moved."""
    def probe_chips(
        self, position: Position, white: int, black: int, tiebreak: str = "white"
    ) -> dict[str, Any]:
        """Bidding with whole chips: holdings, thresholds, outcome and advice, as
        ``bidtb query --json --chips W:B`` prints under "chips"."""

@final
class Event:
    """One thing a run of ``generate`` reports to its progress callback."""

    @property
    def kind(self) -> str:
        """``material`` (a material starts), ``stage``, ``stage_done``, ``iteration``,
        ``richman_test``, ``components``, ``refinement``, ``notice`` or ``detail``."""
    @property
    def material(self) -> Optional[str]:
        """The material(s) under way."""
    @property
    def index(self) -> Optional[int]:
        """``material``: which one (from 1) of ``total``."""
    @property
    def total(self) -> Optional[int]:
        """``material``: materials in the run; ``components``: components to solve."""
    @property
    def stage(self) -> Optional[str]:
        """``stage``, ``stage_done``: the stage (``index``, ``graph``, ``solve``...)."""
    @property
    def seconds(self) -> Optional[float]:
        """``stage_done``: the stage's seconds."""
    @property
    def done(self) -> Optional[int]:
        """``iteration``, ``richman_test``: the iteration; ``components``: solved so far."""
    @property
    def count(self) -> Optional[int]:
        """``iteration``: guesses changed; ``richman_test``: failing equations;
        ``refinement``: positions of the system."""
    @property
    def bits(self) -> Optional[int]:
        """``iteration``, ``refinement``: bits of the numbers."""
    @property
    def text(self) -> Optional[str]:
        """``notice``, ``detail``: the text."""

def generate(
    board: str = ...,
    method: str = ...,
    out: Union[str, os.PathLike[str]] = ...,
    pieces: Optional[int] = ...,
    materials: Any = ...,
    progress: Optional[Callable[[Event], Any]] = ...,
    resume: bool = ...,
    allow_uncertified: bool = ...,
    max_iterations: Optional[int] = ...,
    jobs: int = ...,
) -> dict[str, Any]: ...
