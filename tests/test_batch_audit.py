"""`toppra-app batch` as a user planning a production day meets it (an audit): two runs into one directory, a
Ctrl-C while the local workers start, schedulers that are not Dask schedulers, a task whose workers die."""

from __future__ import annotations

import csv
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from scenarios.batch.manifest import read_source
from scenarios.batch.store import BatchStore
from toppra_app.cli import main

from test_batch import write_manifest


def test_a_second_batch_into_the_same_directory_is_refused(tmp_path, capsys):
    """The same command started again while the first still ran appended the same moves again (52 rows for
    32 moves; batch_summary.json then counted the pallet times twice) and could remove the first's temporaries."""
    manifest = write_manifest(tmp_path, boxes="[1]", masses="[2.0]")
    out = tmp_path / "out"
    first = BatchStore(out, read_source(manifest).fingerprint(dt=1e-3, trajectories=True))
    first.open("0")
    try:
        t0 = time.perf_counter()
        assert main(["batch", str(manifest), "--out", str(out), "--serial"]) == 2
        assert time.perf_counter() - t0 < 5
    finally:
        first.close()
    err = capsys.readouterr().err.strip()
    assert "another toppra-app batch is writing into it" in err and "\n" not in err
    with open(out / "moves.csv", newline="") as fh:
        assert list(csv.DictReader(fh)) == []
    assert main(["batch", str(manifest), "--out", str(out), "--serial", "--no-report"]) == 0   # then it resumes


def test_ctrl_c_while_the_local_workers_start_stops_the_batch(tmp_path):
    """Ctrl-C was ignored while the local cluster started (the first 2-5 s of a run on this machine): the batch
    ran on to its end (15 s for 32 moves). Now it stops there: one line, code 130, nothing planned, no worker
    left."""
    pytest.importorskip("dask.distributed")
    psutil = pytest.importorskip("psutil")
    m = tmp_path / "m.toml"
    m.write_text('[batch]\ncells = ["default"]\nboxes = [1, 2]\n')
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "toppra_app.cli", "batch", str(m), "--out", str(out), "--jobs", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    me = psutil.Process(p.pid)
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None and not any(      # the workers are starting
            "spawn_main" in " ".join(c.cmdline()) for c in me.children()):
        time.sleep(0.02)
    assert p.poll() is None, p.communicate()
    # past the ~0.1 s in which the workers are spawned with Ctrl-C ignored (they inherit it; `dask_client`): a
    # SIGINT at the first sight of the child could land inside it and be lost (once in a fresh-clone CI run)
    time.sleep(0.3)
    assert p.poll() is None, p.communicate()                            # (still starting: 1-3 s here)
    kids = me.children(recursive=True)
    os.kill(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert not (out / "moves.csv").exists() or len((out / "moves.csv").read_text().splitlines()) <= 1
    psutil.wait_procs(kids, timeout=10)
    assert not [k for k in kids if k.is_running() and k.status() != psutil.STATUS_ZOMBIE]


def _server(answer: bytes | None):
    """A TCP port on 127.0.0.1 that accepts and then says `answer` (None: says nothing, as a web server waiting
    for its request does); its address."""
    srv = socket.create_server(("127.0.0.1", 0))
    conns = []

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            conns.append(c)
            if answer is not None:
                c.sendall(answer)
    threading.Thread(target=serve, daemon=True).start()
    return srv, f"tcp://127.0.0.1:{srv.getsockname()[1]}"


@pytest.mark.parametrize("answer, why", [
    (None, "no Dask scheduler answered within"),                       # a dashboard's port: hung for good
    (b"HTTP/1.1 400 Bad Request\r\n\r\n" * 4, "cannot connect"),      # ended as "out of memory"
])
def test_a_scheduler_address_where_no_dask_scheduler_answers_is_one_line(tmp_path, capsys, monkeypatch, answer, why):
    pytest.importorskip("dask.distributed")
    import scenarios.batch.run as run
    monkeypatch.setattr(run, "SCHEDULER_TIMEOUT", 2.0)          # (the 8 s of the command: the same one line)
    srv, address = _server(answer)
    result = []
    try:
        t0 = time.perf_counter()
        run = threading.Thread(target=lambda: result.append(
            main(["batch", "default", "--out", str(tmp_path / "o"), "--scheduler", address])), daemon=True)
        run.start()
        run.join(30)
        assert not run.is_alive(), "the batch hung on a port where no Dask scheduler answers"
        assert time.perf_counter() - t0 < 15
    finally:
        srv.close()
    assert result == [2]
    err = capsys.readouterr().err.strip()
    assert f"--scheduler {address}: {why}" in err and "\n" not in err and "memory" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("address, why", [("", "--scheduler: empty"),                  # planned on a local cluster
                                          ("tls://127.0.0.1:9", "cannot connect")])    # a traceback
def test_empty_or_unusable_scheduler_addresses_are_one_line(tmp_path, capsys, address, why):
    pytest.importorskip("dask.distributed")
    assert main(["batch", "default", "--out", str(tmp_path / "o"), "--scheduler", address]) == 2
    err = capsys.readouterr().err.strip()
    assert why in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_a_task_whose_workers_die_is_left_for_the_next_run(tmp_path, capsys, monkeypatch):
    """A box whose workers all died (Dask's KilledWorker: a task that kills its worker, allowed-failures
    exceeded) ended the whole batch in a 30-line traceback. Now the other boxes are planned, one line names the
    lost box, exit 3, and the same command plans it."""
    pytest.importorskip("dask.distributed")
    import json
    from distributed import Client
    from distributed.scheduler import KilledWorker
    import scenarios.batch.run as run
    real = run.plan_box_task

    def dying(cell_id, cell, box, *args):
        if box == 1:
            raise KilledWorker("box-x", type("W", (), {"address": "tcp://127.0.0.1:1"})(), 3)
        return real(cell_id, cell, box, *args)
    monkeypatch.setattr(run, "plan_box_task", dying)
    monkeypatch.setattr(run, "dask_client", lambda jobs, scheduler: (
        Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"), None))
    manifest = write_manifest(tmp_path, boxes="[1, 2]", masses="[2.0]")
    out = tmp_path / "out"
    assert main(["batch", str(manifest), "--out", str(out), "--jobs", "1", "--no-report"]) == 3
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if not x.startswith("batch: ")]
    assert len(lines) == 1 and "1 box(es) not planned" in lines[0] and "default_cell~1 box 2: KilledWorker" in lines[0]
    with open(out / "moves.csv", newline="") as fh:
        assert sorted(int(r["move"]) for r in csv.DictReader(fh)) == [1, 2]
    assert json.loads((out / "batch_summary.json").read_text())["run"]["lost"][0].startswith("default_cell~1 box 2: ")
    monkeypatch.setattr(run, "plan_box_task", real)
    assert main(["batch", str(manifest), "--out", str(out), "--serial", "--no-report"]) == 0
    with open(out / "moves.csv", newline="") as fh:
        assert sorted(int(r["move"]) for r in csv.DictReader(fh)) == [1, 2, 3, 4]


def test_a_worker_that_joins_after_the_warm_up_plans_without_helper_threads(monkeypatch):
    """`client.run(warm_up)` reaches the workers there at the start only; a worker its nanny restarted after a
    crash (or one that joined later) planned with the planner's helper thread: one thread more per core."""
    pytest.importorskip("dask.distributed")
    from distributed import Client
    import scenarios.batch.run as run
    import toppra_app.samples as samples
    from scenarios.palletizing import DEFAULT_CELL, load_cell
    seen = []
    monkeypatch.setattr(samples, "seen_by_task", seen, raising=False)   # (the task may travel pickled by value)

    def task(*args):
        import toppra_app.samples as s
        s.seen_by_task.append(s.PREFETCH)
        return run.BoxOutcome("c", 0, [], {}, (), 0.0)
    monkeypatch.setattr(run, "plan_box_task", task)
    monkeypatch.setattr(samples, "PREFETCH", True)
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0") as client:
        monkeypatch.setattr(client, "run", lambda *a, **k: {})            # as if the worker joined after it
        cell = load_cell(DEFAULT_CELL)
        run.run_tasks([run.Task("c", cell, 0)], lambda outcome: None, nominal=False, dt=1e-3, client=client)
    assert seen == [False]


def test_local_cluster_says_nothing_when_port_8787_is_taken(tmp_path, capsys):
    """A Dask scheduler already on this machine (8787, its dashboard's port): every local batch warned in three
    lines ("Port 8787 is already in use. / Perhaps you already have a cluster running? / Hosting the HTTP server
    on port … instead")."""
    pytest.importorskip("dask.distributed")
    taken = socket.socket()
    try:
        taken.bind(("0.0.0.0", 8787))
        taken.listen()
    except OSError:
        pass                                               # taken already
    try:
        m = tmp_path / "m.toml"
        m.write_text('[batch]\ncells = ["default"]\nboxes = [1]\n')
        assert main(["batch", str(m), "--out", str(tmp_path / "o"), "--jobs", "1", "--no-report",
                     "--no-trajectories"]) == 0
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert "8787" not in err and "warning" not in err, err


def test_report_does_not_show_failed_cells_as_taking_no_time():
    """The cells table of report.html showed "0.000" s and worst "0.0000" for a cell whose moves all failed, and
    a partial sum as the total of one with some failed moves."""
    from scenarios.report_html import batch_report
    cells = {"ok": dict(moves=4, failed=0, total_time_s=4.0576, worst_ratio=1.0007, errors=[]),
             "part": dict(moves=4, failed=2, total_time_s=2.0312, worst_ratio=1.0006, errors=["e"]),
             "none": dict(moves=4, failed=4, total_time_s=None, worst_ratio=None, errors=["e"])}   # (summarise: null)
    run = dict(moves_planned=12, wall_s=1.0, workers=1, moves_per_s=12.0)
    html = batch_report(dict(cells=cells, moves=12, failed=6, run=run), [])
    assert "4.058" in html and "2.031 (2 of 4 moves)" in html and "— (none planned)" in html
    assert "0.000<" not in html and "0.0000<" not in html


def test_the_animated_cell_names_its_axes_with_units():
    """The 3-D view of report.html had bare x, y, z axes (the PNG drawings say [m])."""
    from toppra_app.html_report import animation
    for ranges in (None, [(0, 1), (-1, 1), (0, 2)]):
        scene = animation([0.0, 0.1], lambda k: [], ranges=ranges)["layout"]["scene"]
        assert [scene[a]["title"]["text"] for a in ("xaxis", "yaxis", "zaxis")] == ["x [m]", "y [m]", "z [m]"]
        if ranges:
            assert scene["zaxis"]["range"] == [0.0, 2.0] and scene["aspectmode"] == "data"


def _log_on_worker(message):
    import logging
    logging.getLogger("distributed.worker").error(message)


def test_local_workers_do_not_print_the_heartbeat_failure_of_a_closing_cluster(capfd):
    """A Ctrl-C while the workers were busy in the warm-up (their event loop held by the imports) ended with the
    batch's one line and then a worker's 38-line "Failed to communicate with scheduler during heartbeat" traceback
    (3 of ~20 runs interrupted 3.5-4.6 s in): the local workers drop that record, and only that one."""
    pytest.importorskip("dask.distributed")
    from scenarios.batch.run import close_dask, dask_client
    failed = "Failed to communicate with scheduler during heartbeat"       # distributed.worker's message
    client, cluster = dask_client(1, None)
    try:
        client.run(_log_on_worker, f"{failed}.")
        client.run(_log_on_worker, "another worker error")
    finally:
        close_dask(client, cluster)
    err = capfd.readouterr().err
    assert "another worker error" in err            # the worker's stderr is captured, its other errors kept
    assert failed not in err


UR5E_CELL = """[cell]
robot = "ur5e"
[gripper]
mass = 0.8
com = [0.0, 0.0, 0.05]
size = [0.1, 0.1, 0.1]
tcp_offset = [0.0, 0.0, 0.12]
[pick]
position = [0.05, -0.5, 0.05]
yaw_deg = 90.0
[pallet]
position = [0.45, 0.15, -0.05]
size = [0.5, 0.4]
yaw_deg = 15.0
[pattern]
columns = 2
gap = 0.02
[motion]
approach_height = 0.1
[boxes.a]
size = [0.22, 0.16, 0.12]
mass = 4.0
"""


def test_a_move_checks_the_same_obstacles_whether_or_not_its_process_planned_the_boxes_before(tmp_path):
    """batch --jobs 1 and --serial wrote different min_distance_m for box 2 of a UR cell (0.01909218865388279 against
    0.019092188664781025 m): box 1's place pose is taken turned by the box's symmetry (yaw + π), and the placed
    box became an obstacle at that yaw only in a process that had planned it (serially: the same cell object);
    a worker's copy still had the pattern's yaw. The same box, rounded differently."""
    import pickle
    from scenarios.palletizing import load_cell, pick_posture
    from scenarios.batch.tasks import plan_box_task
    f = tmp_path / "ur.toml"
    f.write_text(UR5E_CELL)
    cell = load_cell(f, check_reach=False)         # as batch's client reads it
    pick_posture(cell)
    blob = pickle.dumps(cell)
    serial = pickle.loads(blob)
    plan_box_task("ur", serial, 0, False, 1e-3, False)
    assert serial.slots[0].yaw != pickle.loads(blob).slots[0].yaw      # box 1's place was turned (the case)
    after = plan_box_task("ur", serial, 1, False, 1e-3, False).rows
    alone = plan_box_task("ur", pickle.loads(blob), 1, False, 1e-3, False).rows
    assert [r["min_distance_m"] for r in after] == [r["min_distance_m"] for r in alone]


def test_the_scratch_directory_of_a_killed_batch_is_removed_by_the_next(tmp_path):
    """A --jobs batch killed with SIGKILL (an OOM kill) left its $TMPDIR/toppra-app-dask-* scratch directory for
    good (atexit never ran): 7 after a session of kill -9 tests. The next batch removes those of dead processes;
    a running batch's, other names and a file are kept."""
    from scenarios.batch.scratch import remove_stale_scratch
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"toppra-app-dask-{dead.pid}-ab_12cd9"
    (stale / "dask-scratch-space" / "worker-x").mkdir(parents=True)
    (stale / "dask-scratch-space" / "global.lock").write_text("")
    running = tmp_path / f"toppra-app-dask-{os.getpid()}-zz99yy00"
    running.mkdir()
    kept = [running, tmp_path / "toppra-app-dask-x1y2z3w4", tmp_path / f"toppra-app-dask-{dead.pid}",
            tmp_path / f"other-{dead.pid}-ab_12cd9"]
    for d in kept[1:]:
        d.mkdir()
    (tmp_path / f"toppra-app-dask-{dead.pid}-file0000").write_text("not a directory")
    assert remove_stale_scratch(str(tmp_path)) == [stale.name]
    assert not stale.exists() and all(d.is_dir() for d in kept)
    assert (tmp_path / f"toppra-app-dask-{dead.pid}-file0000").read_text() == "not a directory"


def test_more_boxes_than_a_batch_may_hold_are_refused_while_the_cells_load(tmp_path, capsys, monkeypatch):
    """`MAX_VARIANTS` cells of `MAX_BOXES` boxes each passed every check and would have held ~150 GB of cells before
    planning (an audit). More than `MAX_BATCH_BOXES` boxes in all are refused in one line naming the manifest, as soon
    as the cells read hold them (here the bound lowered to 3: two 2-box cells), before anything is planned."""
    import scenarios.batch.run as batch_run
    monkeypatch.setattr(batch_run, "MAX_BATCH_BOXES", 3)
    manifest = write_manifest(tmp_path, boxes="[1, 2]", masses="[2.0, 6.0]")
    out = tmp_path / "out"
    assert main(["batch", str(manifest), "--out", str(out), "--serial"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{manifest}: more than 3 boxes to plan in one batch (at cell " in err and "\n" not in err, err
    assert not out.exists()                                     # (nothing written)
    monkeypatch.setattr(batch_run, "MAX_BATCH_BOXES", 4)
    assert main(["batch", str(manifest), "--out", str(out), "--serial", "--no-report"]) == 0


def test_an_empty_out_is_named_as_empty(tmp_path, capsys, monkeypatch):
    """`batch --out ''` said "--out : it is the working directory" (docs/safety.md: an empty --out is one line,
    as `plan`'s "--out: empty path"); nothing is written."""
    monkeypatch.chdir(tmp_path)
    assert main(["batch", "default", "--out", "", "--serial"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--out: empty path" in err and "working directory" not in err
    assert list(tmp_path.iterdir()) == []


def test_an_out_that_is_a_dangling_link_is_refused(tmp_path, capsys):
    """`batch --out link` where the link's target does not exist created the target directory (wherever it
    pointed) and wrote the batch there; `plan` refuses such an --out in one line, and now batch does too."""
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere" / "target")
    (tmp_path / "elsewhere").mkdir()
    assert main(["batch", "default", "--out", str(tmp_path / "link"), "--serial"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"--out {tmp_path / 'link'}: is a dangling symbolic link") and "\n" not in err
    assert list((tmp_path / "elsewhere").iterdir()) == []
