"""`toppra-app plan`'s options as the user sees them: scaling factors that cannot act say so, bad values name
the option as typed, and summary.json records what was asked for (audit of the command line)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toppra_app.cli import main

ROWS = "0,0.3,0,-1.2,0,0.8,0\n1.2,0.6,0.2,-0.9,0.1,1.0,0.5\n"


@pytest.fixture
def wp(tmp_path):
    (tmp_path / "wp.csv").write_text(ROWS)
    return str(tmp_path / "wp.csv")


def plan(wp, out, *args) -> int:
    return main(["plan", wp, "--out", str(out), "--no-plots", "--no-report", *args])


def summary(out) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_acceleration_scaling_without_acceleration_limits_warns_and_is_recorded(tmp_path, wp, capsys):
    """--acceleration-scaling silently did nothing on robots without acceleration limits (iiwa7, ur5e, every
    URDF): now one line on stderr says so, and summary.json records both factors."""
    assert plan(wp, tmp_path / "a", "--acceleration-scaling", "0.5", "--velocity-scaling", "0.8") == 0
    err = capsys.readouterr().err.strip()
    assert err == ("toppra-app plan: warning: --acceleration-scaling 0.5 has no effect: robot 'iiwa7' has no joint "
                   "acceleration limits to scale (the command line cannot add such limits; the library can: "
                   "robot.with_limits(qdd_max=...))")
    assert (summary(tmp_path / "a")["velocity_scaling"], summary(tmp_path / "a")["acceleration_scaling"]) == (0.8, 0.5)
    assert plan(wp, tmp_path / "p", "--robot", "panda", "--acceleration-scaling", "0.5") == 0     # limits: no word
    assert capsys.readouterr().err == "" and summary(tmp_path / "p")["acceleration_scaling"] == 0.5
    assert plan(wp, tmp_path / "d", "--acceleration-scaling", "1") == 0                           # the default
    assert capsys.readouterr().err == "" and summary(tmp_path / "d")["acceleration_scaling"] == 1.0


def test_scaling_warns_about_the_joints_without_a_limit(capsys):
    import dynamics
    from toppra_app.commands.robot_arg import scaled_limits
    robot = dynamics.load_robot("panda")
    robot = robot.with_limits(qdd_max=np.r_[np.inf, np.inf, robot.qdd_max[2:]])
    with pytest.warns(UserWarning, match=r"--acceleration-scaling 0.5 does not apply to panda_joint1, panda_joint2 of "
                                         r"robot 'panda': no acceleration limit there"):
        scaled = scaled_limits(robot, 1.0, 0.5)
    np.testing.assert_array_equal(scaled.qdd_max, 0.5 * robot.qdd_max)
