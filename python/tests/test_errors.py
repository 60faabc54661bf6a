"""Errors: a missing table, bad FENs and positions, bad files, a closed tablebase."""

from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path

import pytest

import bidtb

FIGURE = "3k3R/8/3K4/8/8/8/8/8"

BAD_FENS = [
    ("", "empty"),
    ("xyz", "ranks"),
    ("8/8/8/8/8/8/8/8", "king"),
    ("KK6/8/8/8/8/8/8/k7", "king"),
    ("P2k3R/8/3K4/8/8/8/8/8", "first or last rank"),
    ("3k3R/8/3K4/8/8/8/8/8 w - e3", "en-passant"),
    ("3k3R/8/3K4/8/8/8/8/7", "squares"),
    ("3k3R/8/3K4/8/8/8/8/8x", "unknown piece"),
    ("/".join(["K" + "7"] + ["8"] * 15 + ["k7"]), "ranks"),
]


def test_missing_table_names_the_material_and_the_command(
    tables: bidtb.Tablebase, tables_dir: Path
) -> None:
    fen = "3k3R/8/3K4/8/8/8/8/7r"  # KRvKR on 8x8: not made
    with pytest.raises(bidtb.MissingTableError) as info:
        tables.probe_value(fen)
    e = info.value
    assert isinstance(e, KeyError) and isinstance(e, bidtb.BidtbError)
    assert (e.material, e.board) == ("KRvKR", "8x8")
    assert e.path == str(tables_dir / "8x8" / "KRvKR.bidtb")
    command = f"bidtb generate --board 8x8 --method solve --material KRvKR --out {tables_dir}"
    assert str(e) == f"missing table {e.path}: generate it with `{command}`"
    for probe in (tables.probe_bounds, tables.probe, tables.probe_moves, tables.best_moves):
        with pytest.raises(bidtb.MissingTableError):
            probe(fen)
    assert tables.get_value(fen) is None
    assert tables.get_value(fen, Fraction(-1)) == -1
    assert tables.get_value(FIGURE) == Fraction(3, 4)


def test_missing_board_and_mirrored_material(tables: bidtb.Tablebase) -> None:
    # KvKR on 5x5: no 5x5 tables; the table looked for is the stored mirror, KRvK.
    with pytest.raises(bidtb.MissingTableError) as info:
        tables.probe_value("r1k2/5/5/5/K4")
    assert (info.value.material, info.value.board) == ("KRvK", "5x5")
    assert "--board 5x5 --method solve --material KRvK" in str(info.value)


def test_missing_table_of_a_move(tables_dir: Path, tmp_path: Path) -> None:
    # Without KBvK, a KBvKN position still has its value, but not its moves (a capture of
    # the knight leads to KBvK).
    shutil.copytree(tables_dir / "4x4", tmp_path / "4x4")
    (tmp_path / "4x4" / "KBvK.bidtb").unlink()
    fen = "k3/4/1Bn1/3K"
    with bidtb.open_tablebase(tmp_path) as tb:
        assert isinstance(tb.probe_value(fen), Fraction)
        with pytest.raises(bidtb.MissingTableError) as info:
            tb.probe(fen)
        assert info.value.material == "KBvK"


@pytest.mark.parametrize(("fen", "fragment"), BAD_FENS)
def test_bad_fen_is_a_value_error(tables: bidtb.Tablebase, fen: str, fragment: str) -> None:
    for probe in (tables.probe_value, tables.probe_bounds, tables.probe, tables.bid):
        with pytest.raises(ValueError, match="bad FEN") as info:
            probe(fen)
        assert fragment in str(info.value)
        assert not isinstance(info.value, bidtb.MissingTableError)


def test_too_many_men_is_a_value_error(tables: bidtb.Tablebase) -> None:
    with pytest.raises(ValueError, match="5 men"):
        tables.probe_value("KQRBk3/8/8/8/8/8/8/8")


def test_a_position_of_another_type_is_a_type_error(tables: bidtb.Tablebase) -> None:
    for bad in (3, None, b"3k3R/8/3K4/8/8/8/8/8", ["3k3R"]):
        with pytest.raises(TypeError, match="FEN string or a chess.Board"):
            tables.probe_value(bad)  # type: ignore[arg-type]


def test_directories(tables_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        bidtb.open_tablebase(tmp_path / "absent")
    # Two directories: 8x8 in one, 4x4 in the other.
    shutil.copytree(tables_dir / "8x8", tmp_path / "a" / "8x8")
    shutil.copytree(tables_dir / "4x4", tmp_path / "b" / "4x4")
    tb = bidtb.Tablebase()
    with pytest.raises(bidtb.MissingTableError, match="no table directory is open"):
        tb.probe_value(FIGURE)
    assert tb.add_directory(tmp_path / "a") == 6
    assert tb.add_directory(str(tmp_path / "b")) == 36
    assert tb.boards() == ["4x4", "8x8"]
    assert "KBvKN" in tb.materials("4x4") and tb.materials("8x8")[0] == "KvK"
    assert [str(d) for d in tb.directories] == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert tb.probe_value(FIGURE) == Fraction(3, 4)
    assert isinstance(tb.probe("k3/4/1Bn1/3K").value, Fraction)
    with tb:
        pass
    # Closed: every probe is a missing table until a directory is added again.
    with pytest.raises(bidtb.MissingTableError):
        tb.probe_value(FIGURE)
    tb.add_directory(tmp_path / "a")
    assert tb.probe_value(FIGURE) == Fraction(3, 4)
    tb.close()


def test_damaged_table_files(tables_dir: Path, tmp_path: Path) -> None:
    board = tmp_path / "8x8"
    shutil.copytree(tables_dir / "8x8", board)
    data = (board / "KRvK.bidtb").read_bytes()
    (board / "KRvK.bidtb").write_bytes(data[: len(data) // 2])
    with pytest.raises(bidtb.BidtbError, match="KRvK.bidtb") as info:
        bidtb.open_tablebase(tmp_path)
    assert not isinstance(info.value, bidtb.MissingTableError)
    # A flipped byte in a key of the file's first checksummed block: format 6 checks a
    # block when a read first touches it, so the table opens and a lookup that reads that
    # block (a search for the smallest keys) is refused, naming the file.
    flipped = bytearray(data)
    flipped[200] ^= 0x10
    (board / "KRvK.bidtb").write_bytes(bytes(flipped))
    with bidtb.open_tablebase(tmp_path) as tb:
        with pytest.raises(bidtb.BidtbError, match="KRvK.bidtb"):
            tb.probe_value("8/8/8/8/8/8/8/K1k4R")
    # Another material's table under this name.
    shutil.copy(board / "KQvK.bidtb", board / "KRvK.bidtb")
    with pytest.raises(bidtb.BidtbError, match="not KRvK"):
        bidtb.open_tablebase(tmp_path)
