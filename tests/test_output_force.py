"""`--force` into a directory holding the user's files (`toppra_app.output`, docs/safety.md): our files of an
earlier run that the new run does not write are removed, the user's never, and the manifest lists exactly
our files that are there."""

from __future__ import annotations

import json
import os

import pytest

from toppra_app import output
from toppra_app.cli import main


@pytest.fixture
def cell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.csv").write_text("0,0.3,0,-1.2,0,0.8,0\n1.2,0.6,0.2,-0.9,0.1,1.0,0.5\n")
    (tmp_path / "b.csv").write_text("0,0.3,0,-1.2,0,0.8,0\n0.2,0.6,0.2,-0.9,0.1,1.0,0.5\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "user.txt").write_text("mine\n")
    return tmp_path


def listed(out) -> list:
    return json.loads((out / output.MANIFEST).read_text())["files"]


def test_force_removes_our_files_of_an_earlier_run_and_keeps_the_users(cell):
    """A stale joint_trajectory.json of the first run stayed next to the second run's trajectory.csv (the
    manifest still listed it): a controller could load a trajectory of another motion."""
    out = cell / "out"
    assert main(["plan", "a.csv", "--out", "out", "--force", "--format", "csv,ros2-json", "--no-plots"]) == 0
    assert listed(out) == ["joint_trajectory.json", "report.html", "summary.json", "trajectory.csv"]
    (out / "notes").mkdir()
    (out / "notes" / "n.txt").write_text("also mine\n")
    assert main(["plan", "b.csv", "--out", "out", "--force", "--format", "csv", "--no-plots", "--no-report"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [output.MANIFEST, "notes", "summary.json", "trajectory.csv",
                                                     "user.txt"]
    assert listed(out) == ["summary.json", "trajectory.csv"]
    assert (out / "user.txt").read_text() == "mine\n" and (out / "notes" / "n.txt").read_text() == "also mine\n"
    assert json.loads((out / "summary.json").read_text())["waypoints_file"].endswith("b.csv")


def test_force_keeps_a_file_the_manifest_lists_but_cannot_remove(cell, monkeypatch):
    """A listed file that is a directory now (the user's) is not ours to remove, and is no longer listed."""
    out = cell / "out"
    assert main(["plan", "a.csv", "--out", "out", "--force", "--format", "csv,ros2-yaml", "--no-plots",
                 "--no-report"]) == 0
    (out / "joint_trajectory.yaml").unlink()
    (out / "joint_trajectory.yaml").mkdir()
    (out / "joint_trajectory.yaml" / "x").write_text("the user's\n")
    assert main(["plan", "b.csv", "--out", "out", "--force", "--no-plots", "--no-report"]) == 0
    assert (out / "joint_trajectory.yaml" / "x").read_text() == "the user's\n"
    assert listed(out) == ["summary.json", "trajectory.csv"]


@pytest.mark.parametrize("command, name", [
    (["plan", "a.csv", "--no-plots"], "trajectory.csv"),
    (["plan", "a.csv", "--no-plots", "--format", "ros2-yaml"], "joint_trajectory.yaml"),
    (["plan", "a.csv", "--no-plots"], "report.html"),
    (["palletize", "--boxes", "1", "--no-plots"], "summary.json"),
    (["payload-sweep", "--quick", "--no-plots"], "sweep.csv"),
])
def test_force_refuses_a_users_file_of_one_of_our_names_before_it_plans(cell, monkeypatch, capsys, command, name):
    """The user's file was kept but refused only when the run ended (3.5 s of planning for a palletizing cell):
    the names a run will surely write are checked with --out (also a dangling symbolic link of that name, which
    the move into place would have replaced)."""
    import scenarios.commands.palletize as pal
    import scenarios.payload_change as pc
    from toppra_app.planning.planner import TimeOptimalPlanner

    def never(*a, **k):
        raise AssertionError("planned")
    monkeypatch.setattr(TimeOptimalPlanner, "plan", never)
    monkeypatch.setattr(pal, "_plan_and_write", never)
    monkeypatch.setattr(pc, "sweep_payloads", never)
    for make in (lambda p: p.write_text("the user's\n"), lambda p: p.symlink_to(cell / "nowhere")):
        target = cell / "out" / name
        make(target)
        assert main([*command, "--out", "out", "--force"]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"toppra-app {command[0]}: error: --out out: refused to overwrite {name} (not written by this " \
                      f"tool); choose a new directory", err
        assert os.path.lexists(target) and sorted(p.name for p in (cell / "out").iterdir()) == sorted(["user.txt", name])
        target.unlink()


def test_an_empty_temporary_of_a_killed_run_goes_and_an_unmarked_one_with_files_stays(cell):
    """A run killed between creating its temporary and marking it left an empty `.out.tmp-PID-…` that no later
    run removed (the fresh-clone CI's SIGKILL test hit that window once); one holding anything unmarked is not
    ours to judge and stays."""
    import subprocess
    import sys
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    empty, full = cell / f".out.tmp-{dead.pid}-abcd", cell / f".out.tmp-{dead.pid}-ef01"
    empty.mkdir()
    full.mkdir()
    (full / "mine.txt").write_text("mine\n")
    assert main(["plan", "a.csv", "--out", "out", "--force", "--no-plots", "--no-report"]) == 0
    assert not empty.exists() and (full / "mine.txt").read_text() == "mine\n"
