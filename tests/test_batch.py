"""`toppra-app batch`: manifests and sweeps, streamed and resumable output, failures recorded, identical
results serially, on a local Dask cluster and through a scheduler with workers (one killed mid-batch).
The written trajectories are checked against Pinocchio's RNEA with the box merged."""

from __future__ import annotations

import csv
import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from scenarios.batch.manifest import read_source
from scenarios.palletizing import DEFAULT_CELL
from toppra_app.cli import main
from toppra_app.errors import InputError

MANIFEST = """
[batch]
cells = ["{cell}"]
boxes = {boxes}

[sweep]
"boxes.heavy.mass" = {masses}
"""


def write_manifest(tmp_path, boxes="[1, 2]", masses="[2.0, 6.0]", extra="") -> Path:
    m = tmp_path / "line.toml"
    m.write_text(MANIFEST.format(cell=DEFAULT_CELL.as_posix(), boxes=boxes, masses=masses) + extra)
    return m


def rows(out: Path) -> dict:
    with open(out / "moves.csv", encoding="utf-8", newline="") as fh:
        return {(r["cell"], int(r["move"])): r for r in csv.DictReader(fh)}


def results(out: Path) -> dict:
    """What must not depend on where a task ran: every move's row (without wall times) and its file."""
    keep = ("box", "kind", "slot", "payload_kg", "duration_s", "worst_ratio", "status", "error")
    data = {k: tuple(r[c] for c in keep) for k, r in rows(out).items()}
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in (out / "trajectories").rglob("*.csv")}
    return dict(rows=data, files=files)


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("batch")
    manifest = write_manifest(tmp)
    out = tmp / "out"
    assert main(["batch", str(manifest), "--out", str(out), "--serial"]) == 0
    return manifest, out


# ------------------------------------------------------------------------------ manifest
def test_manifest_sweep_makes_one_variant_per_value(tmp_path):
    spec = read_source(write_manifest(tmp_path, masses="[1.0, 2.0, 3.0]"))
    assert [c.id for c in spec.cells] == ["default_cell~1", "default_cell~2", "default_cell~3"]
    assert [c.document["boxes"]["heavy"]["mass"] for c in spec.cells] == [1.0, 2.0, 3.0]
    assert spec.boxes == (0, 1)
    assert read_source(write_manifest(tmp_path, masses="[1.0, 2.0, 4.0]")).fingerprint() != spec.fingerprint()


@pytest.mark.parametrize("text, field", [
    ('[batch]\ncells = ["nope.toml"]\n', "nope.toml: no such file"),
    ('[batch]\nbogus = 1\n', "batch.bogus: unknown key"),
    ('[batch]\n[other]\n', "other: unknown table"),
    ('[batch]\nboxes = [0]\n', "batch.boxes"),
    ('[batch]\nboxes = "some"\n', "batch.boxes"),
    ('[batch]\nnominal = "yes"\n', "batch.nominal"),
    ('[batch]\n[sweep]\n"boxes.heavy.mass" = []\n', "sweep.boxes.heavy.mass: expected a non-empty list"),
    ('[batch]\n[sweep]\n"nosuch.mass" = [1.0]\n', "sweep.nosuch.mass: the cell file has no table [nosuch]"),
    ('[batch]\n[sweep]\nmass = [1.0]\n', "sweep.mass: expected a dotted key"),
    ('[batch]\n[sweep]\n"pattern.rows" = [' + ", ".join(["1"] * 400) + ']\n"pattern.columns" = ['
     + ", ".join(["1"] * 400) + "]\n", "more than the 100000"),
])
def test_bad_manifest_is_one_line_naming_the_field(tmp_path, text, field):
    m = tmp_path / "m.toml"
    m.write_text(text)
    with pytest.raises(InputError, match=field.replace(".", r"\.").replace("[", r"\[")) as exc:
        read_source(m)
    assert "\n" not in str(exc.value)


def test_bad_swept_value_fails_before_any_planning(tmp_path, capsys):
    m = write_manifest(tmp_path, masses="[2.0, -1.0]")
    t0 = time.perf_counter()
    assert main(["batch", str(m), "--out", str(tmp_path / "out"), "--serial"]) == 2
    assert time.perf_counter() - t0 < 5.0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "default_cell~2: boxes.heavy.mass = -1.0]: boxes.heavy.mass" in err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------ output
def test_batch_writes_rows_trajectories_and_summary(serial_run):
    import json
    _, out = serial_run
    r = rows(out)
    assert sorted(r) == [(f"default_cell~{v}", m) for v in (1, 2) for m in (1, 2, 3, 4)]
    assert all(x["status"] == "ok" and x["error"] == "" for x in r.values())
    assert {float(r[("default_cell~1", 1)]["payload_kg"]), float(r[("default_cell~2", 1)]["payload_kg"])} == {2.0, 6.0}
    # a heavier box never makes the loaded move shorter; the return move (empty gripper) does not change
    light, heavy = (float(r[(f"default_cell~{v}", 1)]["duration_s"]) for v in (1, 2))
    assert heavy >= light * (1 - 1e-9)
    assert r[("default_cell~1", 2)]["duration_s"] == r[("default_cell~2", 2)]["duration_s"]
    summary = json.loads((out / "batch_summary.json").read_text())
    assert summary["moves"] == 8 and summary["failed"] == 0
    assert summary["cells"]["default_cell~2"]["sweep"] == {"boxes.heavy.mass": 6.0}
    assert summary["run"]["max_task_result_bytes"] < 2 * 2 ** 20
    files = sorted(p.name for p in (out / "trajectories" / "default_cell~1").iterdir())
    assert files == ["move001_box001_loaded.csv", "move002_box001_return.csv", "move003_box002_loaded.csv",
                     "move004_box002_return.csv"]


def test_written_trajectory_keeps_the_torque_limits_by_pinocchio(serial_run):
    """The loaded move's file, replayed through Pinocchio's RNEA with the box merged: within the limits."""
    pin = pytest.importorskip("pinocchio")
    from scenarios.palletizing import cell_from_document
    from fixtures import pinocchio_inverse_dynamics
    manifest, out = serial_run
    cs = read_source(manifest).cells[1]
    cell = cell_from_document(cs.document, cs.source, cs.base_dir, cs.default_name, check_reach=False)
    robot = cell.robot.with_payload(cell.slots[0].box.payload())
    data = np.loadtxt(out / "trajectories" / cs.id / "move001_box001_loaded.csv", delimiter=",", skiprows=1)
    n = robot.n
    q, qd, qdd, tau = (data[:, 1 + k * n:1 + (k + 1) * n] for k in range(4))
    inv_dyn = pinocchio_inverse_dynamics(robot)
    ref = np.array([inv_dyn(q[i], qd[i], qdd[i]) for i in range(0, len(q), 10)])
    assert np.allclose(ref, tau[::10], atol=1e-9 * np.abs(ref).max())
    assert np.abs(tau / robot.tau_max).max() <= 1.001


def test_failed_moves_are_recorded_and_the_batch_goes_on(tmp_path, capsys):
    """Box 17 of a 5-layer pallet is out of reach: its two moves fail with the IK message, the others plan."""
    m = write_manifest(tmp_path, boxes="[1, 17]", masses="[5.0]").read_text().replace(
        '"boxes.heavy.mass"', '"pattern.layers" = [5]\n"boxes.heavy.mass"')
    (tmp_path / "line.toml").write_text(m)
    out = tmp_path / "out"
    assert main(["batch", str(tmp_path / "line.toml"), "--out", str(out), "--serial"]) == 3
    r = rows(out)
    assert [r[("default_cell~1", k)]["status"] for k in (1, 2, 33, 34)] == ["ok", "ok", "failed", "failed"]
    assert "IKFailure" in r[("default_cell~1", 33)]["error"] and "L5R1C1" in r[("default_cell~1", 33)]["error"]
    assert "1 failed" not in capsys.readouterr().out        # two moves failed, said as such
    assert sorted(p.name for p in (out / "trajectories" / "default_cell~1").iterdir()) == [
        "move001_box001_loaded.csv", "move002_box001_return.csv"]


def test_rerun_resumes_and_cuts_a_torn_last_line(serial_run, tmp_path, capsys):
    import shutil
    manifest, done = serial_run
    out = tmp_path / "out"
    shutil.copytree(done, out)
    before = results(out)
    assert main(["batch", str(manifest), "--out", str(out), "--serial"]) == 0
    assert "0 moves to plan, 8 already done" in capsys.readouterr().out
    assert results(out) == before
    # a run killed while writing: the last box's rows lost, the very last line torn
    lines = (out / "moves.csv").read_text().splitlines(keepends=True)
    (out / "moves.csv").write_text("".join(lines[:-2]) + lines[-2][:17])
    (out / "trajectories" / "default_cell~2" / ".move004_box002_return.csv.tmp-1-abc").write_text("partial")
    assert main(["batch", str(manifest), "--out", str(out), "--serial"]) == 0
    assert "2 moves to plan, 6 already done" in capsys.readouterr().out
    assert results(out) == before
    assert not list(out.rglob(".*.tmp-*"))
    # killed between a box's two rows: the first kept whole, the second torn — the box is planned again and its
    # first move is not in moves.csv twice (it was: 9 rows for 8 moves)
    (out / "moves.csv").write_text("".join(lines[:-1]) + lines[-1][:17])
    assert main(["batch", str(manifest), "--out", str(out), "--serial"]) == 0
    assert "2 moves to plan, 6 already done" in capsys.readouterr().out
    assert results(out) == before and len((out / "moves.csv").read_text().splitlines()) == 1 + 8


def test_output_that_is_not_this_batch_is_refused_before_work(serial_run, tmp_path, capsys):
    manifest, done = serial_run
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    other = write_manifest(tmp_path, masses="[3.0]")
    afile = tmp_path / "afile"
    afile.write_text("x")
    for source, target, why in ((manifest, foreign, "not a batch of this tool"),
                                (other, done, "holds a batch of other cells"),
                                (manifest, afile, "not a directory"),
                                (manifest, tmp_path / "no" / "such", "parent directory")):
        t0 = time.perf_counter()
        assert main(["batch", str(source), "--out", str(target), "--serial"]) == 2
        assert time.perf_counter() - t0 < 5.0
        err = capsys.readouterr().err.strip()
        assert why in err and "\n" not in err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"] and afile.read_text() == "x"
    before = results(done)                       # resuming with another sampling period would mix files
    assert main(["batch", str(manifest), "--out", str(done), "--serial", "--dt", "0.002"]) == 2
    assert "holds a batch of other cells or options" in capsys.readouterr().err
    assert results(done) == before


@pytest.mark.parametrize("args, why", [(["--jobs", "0"], "--jobs"), (["--dt", "0"], "--dt"),
                                       (["--dt", "1e-6"], "--dt: expected a sampling period from 0.0001")])
def test_bad_options_are_one_line(tmp_path, capsys, args, why):
    assert main(["batch", "default", "--out", str(tmp_path / "o"), *args]) == 2
    assert why in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------------------ Dask
def test_local_cluster_gives_identical_results(serial_run, tmp_path):
    pytest.importorskip("dask.distributed")
    manifest, done = serial_run
    out = tmp_path / "out"
    assert main(["batch", str(manifest), "--out", str(out), "--jobs", "2"]) == 0
    assert results(out) == results(done)


def test_local_workers_ignore_ctrl_c_and_leave_no_scratch_space(tmp_path, monkeypatch):
    """Ctrl-C reaches the whole process group: each local worker printed its traceback (90-100 lines after the
    batch's one line), and Dask's $TMPDIR/dask-scratch-space stayed behind after every run (a CLI hunt)."""
    pytest.importorskip("dask.distributed")
    import signal
    import tempfile
    from scenarios.batch.run import ctrl_c_held, dask_client
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with ctrl_c_held():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    client, cluster = dask_client(1, None)
    try:
        assert client.run(lambda: signal.getsignal(signal.SIGINT) is signal.SIG_IGN) == {
            w: True for w in client.scheduler_info()["workers"]}
    finally:
        client.close()
        cluster.close()
    assert not (tmp_path / "dask-scratch-space").exists()
    assert [p.name.startswith("toppra-app-dask-") for p in tmp_path.iterdir()] == [True]   # removed at exit


def _start(cmd, **kw):
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, **kw)


def test_scheduler_and_workers_survive_a_killed_worker(tmp_path):
    """A `dask scheduler` and two `dask worker` processes on 127.0.0.1; one worker is killed after the
    first box is written; Dask re-runs its tasks and the batch ends with the serial run's results."""
    pytest.importorskip("dask.distributed")
    dask = Path(sys.executable).with_name("dask")
    manifest = write_manifest(tmp_path, boxes="[1, 2, 3, 4]", masses="[4.0]")
    serial = tmp_path / "serial"
    assert main(["batch", str(manifest), "--out", str(serial), "--serial"]) == 0
    sched_file = tmp_path / "scheduler.json"
    procs = [_start([str(dask), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(sched_file)])]
    try:
        for _ in range(200):
            if sched_file.exists() and sched_file.stat().st_size > 0:
                break
            time.sleep(0.1)
        import json
        address = json.loads(sched_file.read_text())["address"]
        workers = [_start([str(dask), "worker", "--scheduler-file", str(sched_file), "--nthreads", "1",
                           "--no-nanny", "--no-dashboard", "--name", f"w{k}"]) for k in range(2)]
        procs += workers
        from dask.distributed import Client
        with Client(address, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        out = tmp_path / "out"
        batch = subprocess.Popen([sys.executable, "-m", "toppra_app.cli", "batch", str(manifest), "--out", str(out),
                                  "--scheduler", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while time.time() < deadline and batch.poll() is None:
            if (out / "moves.csv").exists() and len((out / "moves.csv").read_text().splitlines()) >= 3:
                break
            time.sleep(0.05)
        killed = batch.poll() is None
        os.kill(workers[0].pid, signal.SIGKILL)
        stdout, stderr = batch.communicate(timeout=180)
        assert batch.returncode == 0, stderr
        assert killed, "the batch ended before a worker could be killed"
        assert results(out) == results(serial)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_unreachable_scheduler_is_one_line(tmp_path, capsys, monkeypatch):
    pytest.importorskip("dask.distributed")
    import scenarios.batch.run as run
    monkeypatch.setattr(run, "SCHEDULER_TIMEOUT", 2.0)          # (the 8 s of the command: the same one line)
    t0 = time.perf_counter()
    assert main(["batch", "default", "--out", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert time.perf_counter() - t0 < 30
    err = capsys.readouterr().err.strip()
    assert "--scheduler tcp://127.0.0.1:9: cannot connect" in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_plan_results_hold_only_what_they_need():
    """A plan travels and is kept without its planner (caches, compiled problem): a ~1 s move pickles to
    well under 2 MB, and the batch's task result for a box stays under 2 MB."""
    import pickle
    import dynamics
    from toppra_app import JointPath, plan_time_optimal
    r = dynamics.load_robot("iiwa7")
    W = np.array([np.zeros(r.n), 0.5 * r.q_max, 0.2 * r.q_min])
    plan = plan_time_optimal(r, JointPath.from_waypoints(W))
    assert 0.5 < plan.duration < 3.0
    data = pickle.dumps(plan)
    assert len(data) < 2 * 2 ** 20
    back = pickle.loads(data)
    assert back.planner is None and back.duration == plan.duration
    assert np.array_equal(back.sample(1e-3).tau, plan.sample(1e-3).tau)


def test_without_dask_the_batch_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "dask.distributed", None)            # as if not installed
    assert main(["batch", "default", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    # the extra by the distribution's name: `pip install -e ".[cluster]"` works only in a checkout (from a wheel
    # or elsewhere: "does not appear to be a Python project"); this works in both
    assert 'pip install "toppra-app[cluster]"' in err and "--serial" in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_full_disk_while_writing_a_move_is_one_line(tmp_path, capsys, monkeypatch):
    """Hunt report: a full disk (ENOSPC) while the batch wrote a trajectory ended in a traceback (`plan`
    says one line). Now one line naming --out; no temporary is left, moves.csv keeps only finished rows."""
    real = Path.write_bytes

    def failing(self, data):
        if "trajectories" in str(self):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real(self, data)
    monkeypatch.setattr(Path, "write_bytes", failing)
    out = tmp_path / "out"
    assert main(["batch", str(write_manifest(tmp_path, boxes="[1]", masses="[2.0]")), "--out", str(out),
                 "--serial", "--no-report"]) == 2
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if not x.startswith("batch: ")]     # (the progress lines)
    assert len(lines) == 1 and "--out" in lines[0] and "no space left" in lines[0], err
    assert not [p for p in out.rglob(".*.tmp-*")] and len(rows(out)) == 0


def test_a_thermal_rating_is_not_dropped_without_a_word(tmp_path, capsys):
    """batch plans the moves; a cell's [thermal] cycle is palletize's. It was ignored silently; now one line
    per cell file says so, and the batch runs."""
    cell = tmp_path / "rated.toml"
    cell.write_text(DEFAULT_CELL.read_text() + "\n[thermal]\ntau_rms_fraction = 0.3\n")
    m = tmp_path / "line.toml"
    m.write_text(f'[batch]\ncells = ["{cell.as_posix()}"]\nboxes = [1]\n')
    assert main(["batch", str(m), "--out", str(tmp_path / "out"), "--serial", "--no-report"]) == 0
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "[thermal]" in x]
    assert len(lines) == 1 and f"{cell}: [thermal]: batch plans the moves, not the RMS-limited cycle" in lines[0]
    # a sweep of the file: still one line (it came once per variant, each naming its own; and the check for an
    # earlier one went over every cell loaded before it)
    # earlier one went over every cell loaded before it); another file, Python showing a warning once a process
    swept = tmp_path / "swept.toml"
    swept.write_text(cell.read_text())
    m.write_text(f'[batch]\ncells = ["{swept.as_posix()}"]\nboxes = [1]\n[sweep]\n"boxes.heavy.mass" = [2.0, 3.0, 4.0]\n')
    assert main(["batch", str(m), "--out", str(tmp_path / "out2"), "--serial", "--no-report"]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "[thermal]" in x]
    assert len(lines) == 1 and f"{swept}: [thermal]: batch plans the moves, not the RMS-limited cycle" in lines[0]
