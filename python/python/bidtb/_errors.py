"""The exceptions of bidtb (raised by the native module too)."""

from __future__ import annotations

from typing import Optional


class BidtbError(Exception):
    """A run-time failure: a table file that is truncated, corrupted or of another
    version, a checkpoint that cannot be resumed from, a certificate that failed, work
    too large for this machine's memory."""


class MissingTableError(BidtbError, KeyError):
    """A table needed to answer a position is not there.

    The message names the file looked for and the command that makes it. ``material``
    is the material as stored (``KRvK`` for a position of ``KvKR`` too), ``board`` the
    board (``8x8``) and ``path`` the file looked for (None when no directory is open).
    Like ``chess.syzygy.MissingTableError``, it is a ``KeyError``.
    """

    def __init__(
        self,
        message: str,
        material: Optional[str] = None,
        board: Optional[str] = None,
        path: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.material = material
        self.board = board
        self.path = path

    def __str__(self) -> str:
        # KeyError would print the message quoted, as a key.
        return str(self.args[0]) if self.args else ""
