"""bidtb.generate: the files it writes, progress, errors, the GIL, Ctrl-C, the iteration."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest

import bidtb

THREE = ["KvK", "KBvK", "KNvK", "KQvK", "KRvK", "KPvK"]


def test_writes_what_the_command_line_writes(tmp_path: Path) -> None:
    events: list[bidtb.Event] = []
    summary = bidtb.generate(board="4x4", out=tmp_path, pieces=3, progress=events.append)
    board = tmp_path / "4x4"
    assert summary == json.loads((board / "summary.json").read_text())
    assert summary["method"] == "solve" and summary["certified"] and summary["converged"]
    assert sorted(summary["materials"]) == sorted(THREE)
    for m in THREE:
        assert (board / f"{m}.bidtb").is_file() and (board / f"{m}.json").is_file()
    assert (board / "quiescent.txt").is_file()
    with bidtb.open_tablebase(tmp_path) as tb:
        assert set(tb.materials("4x4")) == set(THREE) and len(tb.materials("4x4")) == 6
    # Progress: each material announced in order, with its stages.
    starts = [e for e in events if e.kind == "material"]
    assert [e.index for e in starts] == list(range(1, 7))
    assert {e.total for e in starts} == {6}
    assert [e.material for e in starts] == summary["materials"]
    assert {"stage", "stage_done"} <= {e.kind for e in events}
    assert all(e.material is not None for e in events)
    done = [e for e in events if e.kind == "stage_done"]
    assert all(e.seconds is not None and e.seconds >= 0 for e in done)
    assert "Event" in repr(events[0])


def test_materials_and_reuse(tmp_path: Path) -> None:
    first = bidtb.generate(board="4x4", out=tmp_path, materials=["KRvK"], progress=False)
    assert first["materials"] == ["KvK", "KRvK"]
    # A name of the weaker side first means its stored mirror; what is there is reused.
    again = bidtb.generate(board="4x4", out=tmp_path, materials="KvKR, KQvK", progress=False)
    assert again["reused"] == ["KvK"] and "KQvK" in again["materials"]
    with bidtb.open_tablebase(tmp_path) as tb:
        assert set(tb.materials("4x4")) == {"KvK", "KRvK", "KQvK"}


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"board": "1x1"}, "board"),
        ({"board": "eight"}, "board"),
        ({"method": "guess"}, "method"),
        ({"pieces": 3, "materials": ["KRvK"]}, "do not go together"),
        ({"pieces": 9}, "pieces"),
        ({"materials": ["KXvK"]}, "material"),
        ({"materials": []}, "no material"),
        ({"method": "solve", "max_iterations": 10}, "iterate"),
        ({"method": "iterate", "materials": ["KRvKN"]}, "three-piece"),
        ({"progress": 3}, "progress"),
    ],
)
def test_bad_arguments_are_value_errors(tmp_path: Path, kwargs: dict, fragment: str) -> None:
    args = {"board": "3x3", "out": tmp_path, **kwargs}
    with pytest.raises(ValueError, match=fragment):
        bidtb.generate(**args)


def test_an_unwritable_directory_is_an_os_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        bidtb.generate(board="3x3", out=tmp_path / "file", progress=False)


def test_an_exception_in_the_callback_stops_the_run(tmp_path: Path) -> None:
    def callback(e: bidtb.Event) -> None:
        if e.kind == "material" and e.index == 2:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        bidtb.generate(board="4x4", out=tmp_path, pieces=3, progress=callback)
    # The run stopped before the last materials.
    assert not (tmp_path / "4x4" / "KPvK.bidtb").exists()


def test_the_gil_is_released(tmp_path: Path) -> None:
    count = 0
    running = True

    def spin() -> None:
        nonlocal count
        while running:
            count += 1
            time.sleep(0.001)

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        started = time.perf_counter()
        bidtb.generate(board="8x8", out=tmp_path, pieces=3, progress=False)
        seconds = time.perf_counter() - started
    finally:
        running = False
        thread.join()
    # The other thread ran throughout (about one count per millisecond when it runs).
    assert count > 0.2 * seconds * 1000, (count, seconds)


def test_tqdm_progress(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    bidtb.generate(board="3x3", out=tmp_path, pieces=3)
    err = capfd.readouterr().err
    assert "6/6" in err and "material" in err


CTRL_C = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    import bidtb

    # A shell that starts this test in the background without job control (as `cmd &`
    # in a script does) hands it SIGINT ignored, and Python keeps that: Ctrl-C would be
    # lost before bidtb sees it. Restore Python's own handler, as an interactive run has.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    out = sys.argv[1]
    events = []
    def progress(e):
        events.append(e)
        if e.kind == "material" and e.index == 8:
            # Ctrl-C from another thread while the run is under way.
            threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    started = time.time()
    try:
        bidtb.generate(board="5x5", out=out, pieces=4, progress=progress)
        print("FINISHED")
    except KeyboardInterrupt as e:
        print("INTERRUPTED", round(time.time() - started, 1), e, flush=True)
    summary = bidtb.generate(board="5x5", out=out, pieces=4, progress=False, resume=True)
    print("RESUMED", summary["certified"], len(summary["reused"]), len(summary["materials"]))
    """
)


def test_ctrl_c_stops_the_run_and_resume_finishes_it(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", CTRL_C, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("INTERRUPTED"), run.stdout
    assert "interrupted while solving" in lines[0] and "resume=True" in lines[0]
    seconds = float(lines[0].split()[1])
    assert seconds < 60
    # Jobs side by side stopped together: one line each, then the resumed run's.
    assert lines[-1].startswith("RESUMED"), run.stdout
    certified, reused, materials = lines[-1].split()[1:]
    assert certified == "True" and int(reused) >= 7 and int(materials) == 36


def test_the_iteration_reproduces_2644(tmp_path: Path) -> None:
    # The reference values (docs/src/game.md): on 8x8, s_n is a Richman function first at n = 2644 (about 15 s).
    summary = bidtb.generate(board="8x8", method="iterate", out=tmp_path, progress=False)
    assert summary["first_richman_iteration"] == 2644
    assert summary["certified"]
    assert summary["classes"]["KNvK"]["stable_at"] == 2644
    with bidtb.open_tablebase(tmp_path) as tb:
        assert tb.probe_value("k7/8/8/8/8/8/8/K6R") == Fraction(7463, 8192)


def test_a_capped_iteration_writes_no_table(tmp_path: Path) -> None:
    events: list[bidtb.Event] = []
    summary = bidtb.generate(
        board="8x8", method="iterate", out=tmp_path, max_iterations=20, progress=events.append
    )
    assert not summary["converged"] and summary["iterations_run"] == 20
    assert not list((tmp_path / "8x8").glob("*.bidtb"))
    assert [e.done for e in events if e.kind == "iteration"][-1] == 20


def test_jobs_side_by_side_make_the_tables_of_one_after_another(tmp_path: Path) -> None:
    for jobs in (1, 2):
        summary = bidtb.generate(
            board="4x4", out=tmp_path / str(jobs), pieces=4, progress=False, jobs=jobs
        )
        assert summary["certified"] and len(summary["materials"]) == 36
    tables = sorted(p.name for p in (tmp_path / "1" / "4x4").glob("*.bidtb"))
    assert len(tables) == 36
    for name in tables:
        one = (tmp_path / "1" / "4x4" / name).read_bytes()
        assert one == (tmp_path / "2" / "4x4" / name).read_bytes(), name
    for bad in (0, 17, -1):
        with pytest.raises(ValueError, match="jobs is 1 to 16"):
            bidtb.generate(board="3x3", out=tmp_path / "bad", pieces=3, jobs=bad)
