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

