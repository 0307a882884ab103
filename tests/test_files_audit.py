"""The files audit (docs/safety.md: never a file the tool did not write): a user's file by our manifest's name
(or a link by that name) under --force, a file that appears at `draw --out` while the robot is drawn, the
palletizing helper process killed or left without its parent, a full disk while a batch writes a trajectory."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toppra_app import output
from toppra_app.cli import main

ROOT = Path(__file__).resolve().parents[1]
WAYPOINTS = "0,0.3,0,-1.2,0,0.8,0\n0.5,0.5,0.1,-1.0,0.1,0.9,0.3\n"


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wp.csv").write_text(WAYPOINTS)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "user.txt").write_text("mine\n")
    return tmp_path


PLAN = ["plan", "wp.csv", "--out", "out", "--force", "--dt", "0.01", "--no-plots", "--no-report"]


@pytest.mark.parametrize("kind", ["link", "file"])
def test_force_never_writes_over_a_users_file_by_our_manifests_name(cwd, capsys, kind):
    """--force into the user's directory wrote our manifest with open(…, "w"): a symbolic link by its name had
    the file it points to (outside the directory) truncated and overwritten, a file of the user's by that name
    was overwritten. Now the run is refused before planning, naming the file; both are left as they were."""
    precious = cwd / "precious.json"
    precious.write_text('{"my": "settings"}\n')
    name = cwd / "out" / output.MANIFEST
    if kind == "link":
        name.symlink_to(precious)
    else:
        name.write_text('{"my": "notes"}\n')
    assert main(PLAN) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"refused to overwrite {output.MANIFEST}" in err, err
    assert precious.read_text() == '{"my": "settings"}\n'
    assert os.path.islink(name) if kind == "link" else name.read_text() == '{"my": "notes"}\n'
    assert sorted(p.name for p in (cwd / "out").iterdir()) == [output.MANIFEST, "user.txt"]


def test_force_after_force_still_replaces_its_own_manifest(cwd):
    """Our manifest of an earlier --force run is ours: a second run goes on, and lists exactly our files."""
    assert main(PLAN) == 0
    assert main(PLAN + ["--format", "ros2-json"]) == 0
    assert output._manifest(cwd / "out") == {"summary.json", "joint_trajectory.json"}
    assert sorted(p.name for p in (cwd / "out").iterdir()) == [output.MANIFEST, "joint_trajectory.json",
                                                                "summary.json", "user.txt"]


@pytest.mark.parametrize("before", [None, "ours"])
def test_draw_keeps_a_file_that_appears_at_out_while_the_robot_is_drawn(tmp_path, capsys, monkeypatch, before):
    """`draw --out fig.png` checked the name before it drew (~0.5 s) and then renamed its figure onto it: a file
    saved there meanwhile (by another program) was replaced, silently, exit 0. Now the figure is linked in as a
    new file, or renamed over a PNG of ours only if one is still there: the user's file is kept, one line."""
    from toppra_app import drawing
    out = tmp_path / "fig.png"
    if before == "ours":
        assert main(["draw", "planar4", "--out", str(out)]) == 0
    real = drawing.draw_robot

    def drawn_while_a_file_is_saved(*args, **kwargs):
        ax = real(*args, **kwargs)
        out.unlink(missing_ok=True)
        out.write_bytes(b"\x89PNG the user's own picture")
        return ax
    monkeypatch.setattr(drawing, "draw_robot", drawn_while_a_file_is_saved)
    capsys.readouterr()
    assert main(["draw", "planar4", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "appeared while the robot was drawn" in err and str(out) in err, err
    assert out.read_bytes() == b"\x89PNG the user's own picture"
    assert [p.name for p in tmp_path.iterdir()] == ["fig.png"]           # no temporary left


def test_draw_still_writes_a_new_figure_and_replaces_its_own(tmp_path):
    out = tmp_path / "fig.png"
    assert main(["draw", "planar4", "--out", str(out)]) == 0
    first = out.stat().st_ino
    assert main(["draw", "planar4", "--q", "0.3,0,0,0", "--out", str(out)]) == 0
    assert output._our_png(out) and out.stat().st_ino != first and out.stat().st_nlink == 1
    assert [p.name for p in tmp_path.iterdir()] == ["fig.png"]


def _gone(pid: int) -> bool:
    """The process no longer runs (exited, or a zombie left to a parent that does not reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_the_helper_process_ends_with_a_run_killed_with_sigkill(tmp_path):
    """A `palletize` killed with SIGKILL (kill -9, the out-of-memory killer) left its helper process running for
    good — a pool's worker waits for tasks forever, holding both ends of the task pipe — finishing the tasks it
    had into the dead run's temporary directory (an audit found two after four kill -9). Now it ends with it."""
    script = ("import os, sys, time\nfrom scenarios.helper_process import HelperProcess\nh = HelperProcess()\n"
              "print(h.show(h.run(os.getpid).result(timeout=120)), flush=True)\ntime.sleep(300)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        helper = int(proc.stdout.readline())
        assert helper != proc.pid and not _gone(helper)
    finally:
        proc.kill()
        proc.wait()
    for _ in range(300):                                # (it ends at once; not a timing test: up to 30 s)
        if _gone(helper):
            break
        time.sleep(0.1)
    else:
        os.kill(helper, signal.SIGKILL)
        pytest.fail("the helper process outlived its run")


def test_a_helper_process_that_dies_ends_palletize_in_one_line(tmp_path, capsys, monkeypatch):
    """The helper process killed while the pallet was planned (the out-of-memory killer picks the larger one;
    kill) ended `palletize` with BrokenProcessPool's traceback and exit 1. Now one line, exit 2, nothing
    written and no temporary left."""
    from scenarios.helper_process import HelperProcess

    def dies(self, path, sample, joint_names):
        self.futures.append(self.pool.submit(os._exit, 9))
    monkeypatch.setattr(HelperProcess, "submit_csv", dies)
    monkeypatch.chdir(tmp_path)
    assert main(["palletize", "--boxes", "1", "--no-plots", "--no-report", "--no-compare", "--out", "p"]) == 2
    err = "\n".join(x for x in capsys.readouterr().err.strip().splitlines() if not x.startswith("planning ["))
    assert "\n" not in err and err.startswith("toppra-app palletize: error: the second process") and \
        "ended abruptly" in err and "nothing was written" in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_while_a_batch_writes_a_trajectory_names_that_file(tmp_path, capsys, monkeypatch):
    """A full disk while a batch wrote a box's second trajectory said "cannot write moves.csv" (a write's
    OSError names no file; seen on a 2 MB tmpfs), and left the box's first trajectory without its row. Now the
    line names the trajectory file, the box leaves no file, and the same command plans it again."""
    from test_batch import rows, write_manifest
    real = Path.write_bytes

    def full(self, data):
        if "_return.csv" in self.name:          # as the kernel says it: no file name with a write's error
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, data)
    monkeypatch.setattr(Path, "write_bytes", full)
    manifest, out = write_manifest(tmp_path, boxes="[1]", masses="[2.0]"), tmp_path / "out"
    args = ["batch", str(manifest), "--out", str(out), "--serial", "--no-report"]
    assert main(args) == 2
    err = [x for x in capsys.readouterr().err.strip().splitlines() if not x.startswith("batch: ")]
    assert len(err) == 1 and "move002_box001_return.csv: no space left on the device" in err[0], err
    assert not list((out / "trajectories").rglob("*.csv"))
    assert not list(out.rglob(".*.tmp-*")) and rows(out) == {}
    monkeypatch.setattr(Path, "write_bytes", real)
    assert main(args) == 0
    assert len(rows(out)) == 2 and len(list((out / "trajectories").rglob("*.csv"))) == 2


@pytest.mark.parametrize("force", [True, False])
def test_a_run_killed_as_it_puts_its_output_in_place_leaves_a_temporary_the_next_run_removes(cwd, force):
    """SIGKILL just as the finished output was put in place (its manifest being written): the temporary
    directory had lost its marker already and had no manifest yet, so no later run removed it — it stayed
    beside --out for good (with --force, in the user's directory's parent, a full copy of the output). The
    marker now goes last; the next run into the same place removes the temporary."""
    args = ["plan", "wp.csv", "--out", "out" if force else "new", "--dt", "0.01", "--no-plots", "--no-report"]
    args += ["--force"] if force else []
    script = ("import os, signal, sys\nfrom toppra_app import output\nfrom toppra_app.cli import main\n"
              "output._write_manifest = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\nmain(sys.argv[1:])\n")
    proc = subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -signal.SIGKILL
    assert len([p for p in cwd.iterdir() if ".tmp-" in p.name]) == 1
    assert main(args) == 0
    assert [p.name for p in cwd.iterdir() if ".tmp-" in p.name] == []
    assert (cwd / "out" / "user.txt").read_text() == "mine\n"


def test_the_manifest_temporary_of_a_killed_force_run_is_removed_by_the_next(cwd):
    """The manifest is written beside its name and renamed (above): with --force that is in the user's
    directory, so a run killed in that moment leaves ``..toppra-app-manifest.json.tmp-PID-…`` there. The next
    run into it removes it (its process gone); one of a live process, and a user's file like it, stay."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = cwd / "out" / f".{output.MANIFEST}.tmp-{int(dead.stdout)}-0a1b2c3d"
    live = cwd / "out" / f".{output.MANIFEST}.tmp-{os.getpid()}-0a1b2c3d"
    users = cwd / "out" / f".{output.MANIFEST}.tmp-{int(dead.stdout)}-notes"
    for p in (stale, live, users):
        p.write_text("{}")
    assert main(PLAN) == 0
    assert not stale.exists() and live.exists() and users.exists()


def test_directory_holding_the_controller_profile_is_never_written_into(cwd, capsys):
    """`plan --controller FILE.toml` did not count the profile as an input: `--out` its directory with --force wrote
    the run beside it (the waypoints and the robot URDF are refused so, docs/safety.md)."""
    (cwd / "profiles").mkdir()
    (cwd / "profiles" / "p.toml").write_text("[controller]\ntorque_headroom = 0.9\n")
    for extra in ([], ["--force"]):
        assert main(["plan", "wp.csv", "--controller", "profiles/p.toml", "--out", "profiles", "--dt", "0.01",
                     "--no-plots", "--no-report", *extra]) == 2
    assert "contains the input profiles/p.toml" in capsys.readouterr().err
    assert sorted(p.name for p in (cwd / "profiles").iterdir()) == ["p.toml"]
