"""`toppra-app batch` audited as a production day is stopped and resumed: a signal while a box is written keeps the
box whole and the line's count true, and the summary of a day does not depend on the order its boxes finished."""

from __future__ import annotations

import csv
import json
import math
import os
import random
import re
import signal

import pytest

from scenarios.batch.manifest import read_source
from scenarios.batch.summary import summarise
from scenarios.batch.store import BatchStore
from toppra_app.errors import InputError
from toppra_app.cli import main

from test_batch import write_manifest


@pytest.mark.parametrize("when", ["trajectory", "rows"])
def test_a_signal_while_a_box_is_written_keeps_the_box_whole_and_counts_it(tmp_path, capsys, monkeypatch, when):
    """SIGTERM (or Ctrl-C) while a box was written — its first trajectory file renamed into place, or its rows
    flushed (the fsync, the slowest part of a write) — unwound at once: the first left a trajectory file without its
    row in moves.csv ("the directory holds only finished moves"), the second said "0 moves of this run are in
    moves.csv" over the 2 rows there (an audit's run with 2 workers: "20 moves" over 22 rows). The box is now
    written whole, then the batch stops and names what moves.csv holds."""
    out = tmp_path / "out"
    name = "_atomic_bytes" if when == "trajectory" else "_flush"
    original = getattr(BatchStore, name)
    state = dict(opened=False)

    def write_then_signal(*args):
        original(*args)
        if name == "_atomic_bytes" and args[0].name.startswith("move"):
            os.kill(os.getpid(), signal.SIGTERM)
        if name == "_flush":                      # (its first call writes the header, in `open`)
            if state["opened"]:
                os.kill(os.getpid(), signal.SIGTERM)
            state["opened"] = True
    monkeypatch.setattr(BatchStore, name, staticmethod(write_then_signal) if name == "_atomic_bytes"
                        else write_then_signal)
    manifest = write_manifest(tmp_path, boxes="[1, 2]", masses="[2.0]")
    assert main(["batch", str(manifest), "--out", str(out), "--serial", "--no-report"]) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    said = int(re.search(r"interrupted; (\d+) moves of this run are in", err).group(1))
    with open(out / "moves.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    files = sorted(p.name for p in (out / "trajectories").rglob("*.csv"))
    assert said == len(rows) == 2                                 # box 1, whole
    assert files == ["move001_box001_loaded.csv", "move002_box001_return.csv"]


def test_the_summary_of_a_day_does_not_depend_on_the_order_its_boxes_finished(tmp_path):
    """batch_summary.json summed each cell's durations in the order of the rows of moves.csv, the order the boxes
    finished: 1 worker, 2 workers and a resumed run wrote one cell's total as 17.650493434834207,
    17.65049343483421 or 17.650493434834203 s from identical moves (an audit), and listed its errors in that order.
    The total is now exactly rounded (math.fsum) and the cells and their errors follow the cells and the moves."""
    spec = read_source(write_manifest(tmp_path, boxes="[1]", masses="[2.0, 3.0]"))
    durations = [1.0499255580151505, 1.0194015045795453, 1.2280069021906062, 1.1918498384745913, 1.0062130001,
                 1.2031000000000003, 0.9934013, 1.0017, 1.1, 1.3, 0.7000000000000001, 1.05]
    rows = []
    for cell in ("default_cell~2", "default_cell~1"):
        for m, d in enumerate(durations, 1):
            failed = m in (3, 4, 9, 10)
            rows.append(dict(cell=cell, move=str(m), status="failed" if failed else "ok",
                             error=f"IKFailure: box {(m + 1) // 2}" if failed else "",
                             duration_s="" if failed else repr(d), worst_ratio="" if failed else "1.0",
                             within_limits="" if failed else "true", limit_ratio="" if failed else "1.0",
                             limit_problems=""))
    first = summarise(rows, spec, {}, "f")
    order = random.Random(3)
    for _ in range(30):
        shuffled = rows[:]
        order.shuffle(shuffled)
        assert json.dumps(summarise(shuffled, spec, {}, "f")) == json.dumps(first)
    ok = [d for m, d in enumerate(durations, 1) if m not in (3, 4, 9, 10)]
    assert first["cells"]["default_cell~1"]["total_time_s"] == math.fsum(ok)
    assert list(first["cells"]) == ["default_cell~1", "default_cell~2"]
    assert first["cells"]["default_cell~1"]["errors"] == ["IKFailure: box 2", "IKFailure: box 5"]


def test_a_box_no_solver_could_solve_is_a_failed_move_and_the_day_goes_on(tmp_path, capsys, monkeypatch):
    """A `SolverError` (every solver of the chain failed numerically: a RuntimeError, not a ValueError) escaped the
    task: serially it ended the whole batch at that box (the boxes after it not planned), on Dask the task was
    retried, reported "lost … run the same command again" and failed again on every run, never in moves.csv. It is
    now the box's failed rows with its one-line error, as an infeasible path is, and the batch goes on (exit 3)."""
    import scenarios.palletizing as palletizing
    from toppra_app.planner import SolverError
    original = palletizing.plan_box

    def plan_box(cell, box, *args, **kwargs):
        if box == 0:
            raise SolverError("the time-optimal problem could not be solved (CLARABEL: numerical error)")
        return original(cell, box, *args, **kwargs)
    monkeypatch.setattr(palletizing, "plan_box", plan_box)
    out = tmp_path / "out"
    manifest = write_manifest(tmp_path, boxes="[1, 2]", masses="[2.0]")
    assert main(["batch", str(manifest), "--out", str(out), "--serial", "--no-report", "--no-trajectories"]) == 3
    with open(out / "moves.csv", encoding="utf-8", newline="") as fh:
        rows = {int(r["move"]): r for r in csv.DictReader(fh)}
    assert sorted(rows) == [1, 2, 3, 4]
    assert [rows[m]["status"] for m in (1, 2, 3, 4)] == ["failed", "failed", "ok", "ok"]
    assert rows[1]["error"] == "SolverError: the time-optimal problem could not be solved (CLARABEL: numerical error)"
    summary = json.loads((out / "batch_summary.json").read_text())
    assert summary["failed"] == 2 and summary["cells"]["default_cell~1"]["errors"] == [rows[1]["error"]]


def test_a_second_batch_into_a_busy_directory_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    """docs/safety.md: the same command started again while the first runs ends "before any work". It read every
    cell, solved their pick postures (~35 ms each, seconds for a sweep) and started its local Dask cluster (~4.5 s
    with 2 workers here), and only then found the lock."""
    import scenarios.batch.run as batch_run
    import scenarios.palletizing as palletizing
    work = []
    monkeypatch.setattr(palletizing, "pick_posture", lambda *a, **k: work.append("pick posture"))
    monkeypatch.setattr(batch_run, "dask_client", lambda *a, **k: work.append("dask") or (None, None))
    manifest = write_manifest(tmp_path, boxes="[1]", masses="[2.0]")
    out = tmp_path / "out"
    first = BatchStore(out, read_source(manifest).fingerprint(dt=1e-3, trajectories=True))
    first.open("0")
    try:
        assert main(["batch", str(manifest), "--out", str(out), "--jobs", "1"]) == 2
    finally:
        first.close()
    err = capsys.readouterr().err.strip()
    assert "another toppra-app batch is writing into it" in err and "\n" not in err
    assert work == []


@pytest.mark.parametrize("name", ["...toml", "..toml"])
def test_a_cell_file_whose_id_is_dot_or_dot_dot_is_refused(tmp_path, capsys, name):
    """A cell's id is its file's name without .toml and names its folder trajectories/ID: a cell file "...toml" in a
    directory source planned as cell "..", its trajectories written to trajectories/../, the batch directory itself
    (docs/batch.md: only moves.csv, the summary, the report, the marker and trajectories/ are written), and "..toml"
    as cell "." straight into trajectories/. Such a file is now refused in one line before any work."""
    from scenarios.palletizing import DEFAULT_CELL
    cells = tmp_path / "cells"
    cells.mkdir()
    (cells / name).write_text(DEFAULT_CELL.read_text())
    with pytest.raises(InputError, match=r"cannot be one: rename the file"):
        read_source(cells)
    out = tmp_path / "out"
    assert main(["batch", str(cells), "--out", str(out), "--serial"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"toppra-app batch: error: {cells / name}: a cell's id is") and "\n" not in err
    assert not out.exists()


def _warm_up_or_die(dask_worker):
    """The warm-up, but the local worker named 0 dies in it, as one the OOM killer picks."""
    if dask_worker.name == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    import scenarios.batch.run as run
    run.warm_up()


def test_a_worker_killed_while_the_workers_warm_up_does_not_end_the_batch(tmp_path, monkeypatch):
    """A local worker killed (SIGKILL: the OOM killer, a preempted node) during `client.run(warm_up)`, the first
    ~1-2 s after the workers are up, ended the whole batch in a 40-line traceback (CommClosedError), exit 1 (an audit:
    3 of 3 runs killed 5-6 s in). Dask re-runs the tasks elsewhere, so the batch now goes on, as it does for a worker
    killed later."""
    pytest.importorskip("dask.distributed")
    import scenarios.batch.run as run
    from scenarios.palletizing import DEFAULT_CELL, load_cell, pick_posture
    monkeypatch.setattr(run, "warm_up", _warm_up_or_die)
    cell = load_cell(DEFAULT_CELL, check_reach=False)
    pick_posture(cell)
    outcomes = []
    client, cluster = run.dask_client(2, None)
    try:
        info = run.run_tasks([run.Task("c", cell, 0)], outcomes.append, nominal=False, dt=1e-3, client=client,
                             trajectories=False)
    finally:
        run.close_dask(client, cluster)
    assert info["lost"] == [] and [r["status"] for o in outcomes for r in o.rows] == ["ok", "ok"]


def _in_process_dask(monkeypatch) -> list:
    """The batch's Dask client made in this process (one worker thread), its boxes failing at once; the list
    receives the client."""
    pytest.importorskip("dask.distributed")
    from distributed import Client
    import scenarios.batch.run as run
    from scenarios.batch.tasks import failed_outcome
    clients = []

    def local(jobs, scheduler):
        clients.append(Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"))
        return clients[0], None
    monkeypatch.setattr(run, "dask_client", local)
    monkeypatch.setattr(run, "plan_box_task", lambda cell_id, cell, box, *a: failed_outcome(cell_id, cell, box,
                                                                                           ValueError("skipped")))
    return clients


def test_a_scheduler_lost_mid_batch_keeps_the_finished_boxes_and_ends_in_one_line(tmp_path, capsys, monkeypatch):
    """--scheduler: the scheduler killed (or restarted) mid-batch closed the client after 10 s of reconnecting, and
    the next box submitted ended the batch in a 40-line traceback (ClosedClientError), exit 1 (an audit). The boxes
    finished are kept, the others are lost as a task whose workers died is: one line, exit 3, the same command
    plans them."""
    clients = _in_process_dask(monkeypatch)
    original = BatchStore.write_outcome

    def write_then_lose_the_scheduler(self, outcome, **kwargs):
        original(self, outcome, **kwargs)
        clients[0].close()                        # (as the client does when it cannot reconnect)
    monkeypatch.setattr(BatchStore, "write_outcome", write_then_lose_the_scheduler)
    manifest = write_manifest(tmp_path, boxes='"all"', masses="[2.0]")    # 8 boxes: more than the 5 in flight
    out = tmp_path / "out"
    assert main(["batch", str(manifest), "--out", str(out), "--jobs", "1", "--no-report"]) == 3
    lines = [x for x in capsys.readouterr().err.strip().splitlines() if not x.startswith("batch: ")]
    with open(out / "moves.csv", encoding="utf-8", newline="") as fh:
        written = {int(r["box"]) for r in csv.DictReader(fh)}
    lost = json.loads((out / "batch_summary.json").read_text())["run"]["lost"]
    assert len(lines) == 1 and f"{len(lost)} box(es) not planned" in lines[0]
    assert sorted(written | {int(x.split(" box ")[1].split(":")[0]) for x in lost}) == list(range(1, 9))
    assert len(written) == 1 and len(lost) == 7
    run = json.loads((out / "batch_summary.json").read_text())["run"]
    assert run["moves_planned"] == 2 and run["moves_per_s"] == 2 / run["wall_s"]    # (it counted the lost boxes too)


def test_the_batch_summary_says_which_tool_version_and_units_wrote_it(tmp_path):
    """palletize's and payload-sweep's summaries carry the tool, its version and the units (scenarios.report.provenance);
    batch_summary.json had none of them, so a day's summary could not be told from another version's."""
    from scenarios.report import provenance
    out = tmp_path / "out"
    manifest = write_manifest(tmp_path, boxes="[1]", masses="[2.0]")
    assert main(["batch", str(manifest), "--out", str(out), "--serial", "--no-report", "--no-trajectories"]) == 0
    summary = json.loads((out / "batch_summary.json").read_text())
    marker = json.loads((out / ".toppra-app-batch.json").read_text())
    assert {k: summary.get(k) for k in ("tool", "version", "units")} == provenance()
    assert summary["version"] == marker["version"] and summary["units"]["time"] == "s"


def test_a_batch_whose_workers_are_all_gone_ends_in_one_line(tmp_path, capsys, monkeypatch):
    """Workers that close themselves (at a memory limit, `prlimit --as`) left the batch waiting for ever with none
    left (an audit). After `run.NO_WORKERS_S` without a worker the boxes left are lost: one line, exit 3."""
    import scenarios.batch.run as run
    clients = _in_process_dask(monkeypatch)
    monkeypatch.setattr(run, "NO_WORKERS_S", 1.0)
    original = BatchStore.write_outcome

    def write_then_lose_the_workers(self, outcome, **kwargs):
        original(self, outcome, **kwargs)
        if clients[0].cluster.workers:
            clients[0].cluster.scale(0)           # (every worker gone, the scheduler and the client still up)
    monkeypatch.setattr(BatchStore, "write_outcome", write_then_lose_the_workers)
    manifest = write_manifest(tmp_path, boxes='"all"', masses="[2.0]")
    out = tmp_path / "out"
    assert main(["batch", str(manifest), "--out", str(out), "--jobs", "1", "--no-report"]) == 3
    lines = [x for x in capsys.readouterr().err.strip().splitlines() if not x.startswith("batch: ")]
    lost = json.loads((out / "batch_summary.json").read_text())["run"]["lost"]
    assert len(lines) == 1 and f"{len(lost)} box(es) not planned" in lines[0]
    assert lost and all("no worker left for 1 s" in x or "no worker computed it again in 1 s" in x for x in lost)
    clients[0].close()
