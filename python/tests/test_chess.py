"""python-chess boards as positions (8x8)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

import bidtb
from helpers import random_position

chess = pytest.importorskip("chess")


def test_a_board_is_its_placement(tables: bidtb.Tablebase) -> None:
    board = chess.Board("3k3R/8/3K4/8/8/8/8/8 b - - 0 1")
    assert tables.probe_value(board) == Fraction(3, 4)
    assert tables.probe_bounds(board) == (Fraction(3, 4), Fraction(3, 4))
    white, black = tables.best_moves(board)
    assert (white.uci, black.uci) == ("h8d8", "d8c7")
    # A bidding-chess position has no side to move: the turn changes nothing.
    board.turn = chess.WHITE
    assert tables.probe_value(board) == Fraction(3, 4)
    # The moves are python-chess moves on 8x8.
    assert chess.Move.from_uci(white.uci) in board.pseudo_legal_moves


def test_boards_agree_with_their_fen(tables: bidtb.Tablebase) -> None:
    rng = random.Random(11)
    for _ in range(1000):
        fen = random_position(rng, "8x8", rng.choice(["", "Q", "r", "B", "n", "P", "p"]))
        board = chess.Board(fen + " w - - 0 1")
        assert board.board_fen() == fen
        assert tables.probe_bounds(board) == tables.probe_bounds(fen)
        assert tables.probe(board).fen == fen


def test_a_base_board_and_a_board_fen_object(tables: bidtb.Tablebase) -> None:
    assert tables.probe_value(chess.BaseBoard("k7/8/8/8/8/8/8/K6R")) == Fraction(7463, 8192)

    class Placement:
        def board_fen(self) -> str:
            return "k7/8/8/8/8/8/8/K6R"

    assert tables.probe_value(Placement()) == Fraction(7463, 8192)  # type: ignore[arg-type]


def test_the_en_passant_square_is_passed_on(tables: bidtb.Tablebase) -> None:
    # After b2-b4 python-chess keeps ep_square = b3; bidtb reads it as the FEN's fourth
    # field. With no black pawn beside b4 it changes nothing (KPvK), but it must name a
    # square a pawn has just skipped: the board converts with it and probes as the FEN.
    board = chess.Board("k7/8/8/8/8/8/1P6/K7 w - - 0 1")
    board.push_uci("b2b4")
    assert board.ep_square == chess.B3
    assert tables.probe_value(board) == tables.probe_value("k7/8/8/8/1P6/8/8/K7 w - b3")


def test_bad_boards_are_value_errors(tables: bidtb.Tablebase) -> None:
    with pytest.raises(ValueError, match="king"):
        tables.probe_value(chess.Board("8/8/8/8/8/8/8/K7 w - - 0 1"))
    with pytest.raises(ValueError, match="men"):
        tables.probe_value(chess.Board())
    # A position with a missing table through a board.
    with pytest.raises(bidtb.MissingTableError, match="KQvKQ"):
        tables.probe_value(chess.Board("k6q/8/8/8/8/8/8/K6Q w - - 0 1"))
