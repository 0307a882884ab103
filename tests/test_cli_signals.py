"""The command line's ends that are not errors in the input: stdout read by a pipe that closed early, and a
Ctrl-C that Python swallowed (`toppra_app.cli`, docs/safety.md)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest

from toppra_app.cli import main

WAYPOINTS = "0,0.3,0,-1.2,0,0.8,0\n1.2,0.6,0.2,-0.9,0.1,1.0,0.5\n"


@pytest.fixture
def cell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wp.csv").write_text(WAYPOINTS)
    return tmp_path


def closed_pipe_run(args, cwd):
    """The command with its stdout a pipe whose reading end is already closed (`| true` after it exited)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run([sys.executable, "-m", "toppra_app.cli", *args], stdout=w, stderr=subprocess.PIPE,
                              text=True, timeout=120, cwd=cwd)
    finally:
        os.close(w)


def test_a_closed_stdout_pipe_ends_quietly(cell):
    """`toppra-app plan … | true` printed a BrokenPipeError traceback and exited with 1: now no word and 141 (as
    a program stopped by SIGPIPE); plan's output directory is complete (it prints after writing it). (argparse's
    --help ignores a failed write itself: exit 0, no word.)"""
    run = closed_pipe_run(["plan", "wp.csv", "--out", "o", "--no-plots", "--no-report"], cell)
    assert (run.returncode, run.stderr) == (141, ""), run
    assert sorted(os.listdir(cell / "o")) == [".toppra-app-manifest.json", "summary.json", "trajectory.csv"]


def test_a_broken_pipe_while_writing_is_not_a_write_error_and_leaves_nothing(cell, capsys, monkeypatch):
    """A command printing while its output directory is written (palletize does): the broken pipe was reported as
    '--out …: cannot write …: Broken pipe' (exit 2); now the run ends quietly, the temporary removed."""
    from toppra_app.commands import plan

    def printing(*args, **kwargs):
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")
    monkeypatch.setattr(plan, "write_outputs", printing)
    assert main(["plan", "wp.csv", "--out", "o", "--no-plots", "--no-report"]) == 141
    assert capsys.readouterr().err == ""
    assert sorted(os.listdir(cell)) == ["wp.csv"]


def test_other_os_errors_are_not_taken_for_a_broken_pipe(monkeypatch):
    from toppra_app.commands import draw

    def failing(args):
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(draw, "run", failing)
    with pytest.raises(OSError, match="Input/output error"):
        main(["draw", "iiwa7"])


def swallowed_ctrl_c():
    """A Ctrl-C whose KeyboardInterrupt CPython drops: the SIGINT handler runs inside a weakref callback (as
    when the signal lands in one of importlib's), where an exception is "ignored"."""
    import signal
    import weakref

    class Thing:
        pass
    thing = Thing()
    ref = weakref.ref(thing, lambda r: signal.getsignal(signal.SIGINT)(signal.SIGINT, None))
    del thing                                              # the callback runs here; its exception goes nowhere
    assert ref() is None


@pytest.mark.parametrize("where", ["scaled_limits", "write_outputs"])
def test_a_swallowed_ctrl_c_still_ends_the_run_with_nothing_written(cell, capsys, monkeypatch, where):
    """2 of 14 runs interrupted 2–3 s in printed "Exception ignored in: <function WeakSet._remove …>" and a
    KeyboardInterrupt traceback, then finished normally (exit 0, output written). The handler now records the
    interrupt and the run checks at its commit points: before planning, before the output is moved into place."""
    import signal
    from toppra_app.commands import plan
    original = getattr(plan, where)

    def interrupted(*args, **kwargs):
        swallowed_ctrl_c()
        return original(*args, **kwargs)
    monkeypatch.setattr(plan, where, interrupted)
    hook = sys.unraisablehook
    assert main(["plan", "wp.csv", "--out", "o", "--no-plots", "--no-report"]) == 130
    assert capsys.readouterr().err == "toppra-app plan: interrupted; nothing was written\n"
    assert sorted(os.listdir(cell)) == ["wp.csv"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler and sys.unraisablehook is hook


def test_a_swallowed_ctrl_c_after_the_output_is_in_place_says_so(cell, capsys, monkeypatch):
    from toppra_app.commands import plan

    def last_words(*args, **kwargs):
        if args and str(args[0]).startswith("wrote "):
            swallowed_ctrl_c()
        print(*args, **kwargs)
    monkeypatch.setattr(plan, "print", last_words, raising=False)
    assert main(["plan", "wp.csv", "--out", "o", "--no-plots", "--no-report"]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("toppra-app plan: interrupted; ") and "o had been written in full" in err
    assert (cell / "o" / "summary.json").exists()
    monkeypatch.delattr(plan, "print")
    assert main(["plan", "wp.csv", "--out", "o", "--no-plots", "--no-report"]) == 0       # the next run: afresh


def test_a_swallowed_ctrl_c_stops_a_batch_between_its_tasks(tmp_path, capsys, monkeypatch):
    """`toppra-app batch`: a Ctrl-C that CPython drops inside a task ends the run after that task's moves are
    written (the next run resumes), as any Ctrl-C there — it went on to the end (the CLI audit's remaining case)."""
    from scenarios.batch import run
    from test_batch import rows, write_manifest
    original = run.plan_box_task

    def interrupted(*args, **kwargs):
        swallowed_ctrl_c()
        return original(*args, **kwargs)
    monkeypatch.setattr(run, "plan_box_task", interrupted)
    out = tmp_path / "out"
    assert main(["batch", str(write_manifest(tmp_path)), "--out", str(out), "--serial", "--no-report"]) == 130
    last = capsys.readouterr().err.splitlines()[-1]         # (after the progress line)
    assert last.startswith("toppra-app batch: interrupted; 2 moves of this run are in")
    assert len(rows(out)) == 2                             # the first task's two moves, of four tasks
