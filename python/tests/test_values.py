"""The reference values (docs/src/game.md), the study's figure, and the values' properties."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

import bidtb
from helpers import all_positions, random_position

# The reference values (docs/src/game.md): White's pieces first, then the black king.
SPEC_VALUES = [
    ("3k3R/8/3K4/8/8/8/8/8", Fraction(3, 4)),  # WK d6, WR h8 / BK d8
    ("8/8/8/5k2/8/8/2K5/8", Fraction(1, 2)),  # WK c2 / BK f5
    ("8/8/8/8/k3K3/8/6B1/8", Fraction(9, 16)),  # WK e4, WB g2 / BK a4
    ("2k5/8/8/4K3/8/8/1P6/8", Fraction(33, 64)),  # WK e5, WP b2 / BK c8
    ("k7/8/8/8/8/8/8/K6R", Fraction(7463, 8192)),  # WK a1, WR h1 / BK a8
]

FIGURE = "3k3R/8/3K4/8/8/8/8/8"


@pytest.mark.parametrize(("fen", "value"), SPEC_VALUES)
def test_spec_values(tables: bidtb.Tablebase, fen: str, value: Fraction) -> None:
    got = tables.probe_value(fen)
    assert type(got) is Fraction
    assert got == value
    assert tables.probe_bounds(fen) == (value, value)
    assert tables.probe(fen).value == value


@pytest.mark.parametrize(("fen", "value"), SPEC_VALUES)
def test_spec_values_through_the_colour_mirror(
    tables: bidtb.Tablebase, fen: str, value: Fraction
) -> None:
    # Ranks reversed, colours swapped: the value is 1 - the value.
    mirror = "/".join(reversed(fen.split("/"))).swapcase()
    assert tables.probe_value(mirror) == 1 - value
    assert tables.probe_bounds(mirror) == (1 - value, 1 - value)


def test_the_study_figure(tables: bidtb.Tablebase) -> None:
    # README: value 3/4; White's best move h8d8 takes the king, Black's best d8c7; bid 1/4.
    white, black = tables.best_moves(FIGURE)
    assert white is not None and black is not None
    assert (white.uci, black.uci) == ("h8d8", "d8c7")
    assert (white.value, white.level, white.fen) == (1, 0, None)
    assert (black.value, black.level, black.fen) == (Fraction(1, 2), 1, "7R/2k5/3K4/8/8/8/8/8")
    assert str(white) == "h8d8"
    assert tables.bid(FIGURE) == Fraction(1, 4)
    assert type(tables.bid(FIGURE)) is Fraction
    assert tables.is_zugzwang(FIGURE) is False
    p = tables.probe(FIGURE)
    assert (p.board, p.material, p.fen) == ("8x8", "KRvK", FIGURE)
    assert (p.value, p.beta, p.bid, p.bid_beta) == (Fraction(3, 4),) * 2 + (Fraction(1, 4),) * 2
    assert (p.level_white, p.level_black, p.certified, p.zugzwang) == (1, 2, True, False)
    assert p.best_white.uci == "h8d8" and p.best_black.uci == "d8c7"
    # The bid is half the gap between the best moves' values.
    assert p.bid == (p.best_white.value - p.best_black.value) / 2


def test_moves_are_complete_and_ordered(tables: bidtb.Tablebase) -> None:
    white, black = tables.probe_moves(FIGURE)
    # The white king on d6 has 8 steps, the rook on h8 4 along the rank (the last takes
    # the king) and 7 down.
    assert len(white) == 8 + 11
    assert len(black) == 5  # c8 c7 d7 e7 e8
    assert sorted(m.uci for m in black) == ["d8c7", "d8c8", "d8d7", "d8e7", "d8e8"]
    def level(m: bidtb.Move) -> float:
        return float("inf") if m.level is None else m.level

    for a, b in zip(white, white[1:]):
        assert a.value > b.value or (a.value == b.value and level(a) <= level(b))
    for a, b in zip(black, black[1:]):
        assert a.beta < b.beta or (a.beta == b.beta and level(a) <= level(b))
    for m in white + black:
        assert type(m.value) is Fraction and type(m.beta) is Fraction
        if m.fen is not None:
            assert tables.probe_value(m.fen) == m.value


def test_every_8x8_three_piece_position_has_alpha_equal_beta(tables: bidtb.Tablebase) -> None:
    rng = random.Random(3)
    for _ in range(2000):
        fen = random_position(rng, "8x8", rng.choice(["", "Q", "R", "B", "N", "P", "q", "p"]))
        alpha, beta = tables.probe_bounds(fen)
        assert alpha == beta
        assert 0 <= alpha <= 1


def test_alpha_below_beta_on_four_pieces(tables: bidtb.Tablebase) -> None:
    # 4x4 KBvKN: 83 canonical positions with alpha < beta (README's census).
    rng = random.Random(5)
    split = []
    for _ in range(20000):
        fen = random_position(rng, "4x4", "Bn")
        alpha, beta = tables.probe_bounds(fen)
        assert alpha <= beta
        if alpha < beta:
            split.append((fen, alpha, beta))
    assert split, "no alpha < beta found on 4x4 KBvKN"
    fen, alpha, beta = split[0]
    p = tables.probe(fen)
    assert (p.value, p.beta) == (alpha, beta)
    assert tables.probe_value(fen) == alpha
    # Through the mirror: alpha' = 1 - beta, beta' = 1 - alpha.
    mirror = "/".join(reversed(fen.split("/"))).swapcase()
    assert tables.probe_bounds(mirror) == (1 - beta, 1 - alpha)


def zugzwangs(tables: bidtb.Tablebase) -> list[str]:
    """The zugzwangs of 4x4 KNvK (one up to symmetry, README's census)."""
    return [fen for fen in all_positions("4x4", "N") if tables.is_zugzwang(fen)]


def test_zugzwangs_have_negative_bids(tables: bidtb.Tablebase) -> None:
    found = zugzwangs(tables)
    assert 1 <= len(found) <= 8
    for fen in found:
        p = tables.probe(fen)
        assert p.zugzwang and p.bid < 0 and tables.bid(fen) == p.bid
        assert p.bid == (p.best_white.value - p.best_black.value) / 2
    rng = random.Random(7)
    for _ in range(500):
        fen = random_position(rng, "4x4", rng.choice(["BN", "Nb", "Np"]))
        p = tables.probe(fen)
        assert p.zugzwang == (p.bid < 0) == tables.is_zugzwang(fen)


def test_en_passant_is_its_own_position(tables: bidtb.Tablebase) -> None:
    # 3x5: the white pawn double-stepped b2-b4 past b3, beside the black pawn on c4.
    fen = "k2/1Pp/3/3/K2"
    with_right = fen + " w - b3"
    p = tables.probe(with_right)
    assert p.fen == fen + " - - b3"
    black = [m.uci for m in p.black]
    assert "c4b3" in black
    assert "c4b3" not in [m.uci for m in tables.probe(fen).black]
    assert tables.probe_value(with_right) == p.value


def test_values_never_floats(tables: bidtb.Tablebase) -> None:
    p = tables.probe("k7/8/8/8/8/8/8/K6R")
    for v in [p.value, p.beta, p.bid, p.bid_beta, *(m.value for m in p.white + p.black)]:
        assert type(v) is Fraction
    assert float(p.value) == pytest.approx(7463 / 8192)
