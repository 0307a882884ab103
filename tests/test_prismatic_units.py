"""Positions of prismatic joints are metres also where the revolute ones are given in degrees: `plan --degrees`
and a cell's `preferred_posture_deg` converted every column, so a slide's 0.1 m became 0.0017 m."""

from __future__ import annotations

import json

import numpy as np

from dynamics.mimic import coordinate_prismatic
from scenarios.palletizing import DEFAULT_CELL, load_cell
from toppra_app.cli import main

_LINK = '<link name="{}"><inertial><origin xyz="0.1 0 0"/><mass value="{}"/>' \
        '<inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>'


def slide_urdf(tmp_path, mimic=False):
    """A revolute joint, (optionally a revolute joint mimicking it), then a prismatic joint."""
    links = "".join(_LINK.format(n, m) for n, m in (("a", 2.0), ("m", 0.5), ("b", 1.0)))
    follower = ('<joint name="jm" type="revolute"><parent link="a"/><child link="m"/><axis xyz="0 0 1"/>'
                '<mimic joint="j1" multiplier="0.5"/><limit lower="-3" upper="3" effort="50" velocity="4"/></joint>'
                if mimic else "")
    text = f"""<robot name="slide"><link name="base"/>{links if mimic else links.replace(_LINK.format('m', 0.5), '')}
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/></joint>{follower}
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-0.2" upper="0.3" effort="200" velocity="0.5"/></joint></robot>"""
    path = tmp_path / "slide.urdf"
    path.write_text(text)
    return path


def test_plan_degrees_leaves_a_prismatic_column_in_metres(tmp_path):
    urdf = slide_urdf(tmp_path)
    (tmp_path / "wp.csv").write_text("j1,j2\n0,0\n45,0.1\n90,0.25\n")
    out = tmp_path / "out"
    assert main(["plan", str(tmp_path / "wp.csv"), "--robot", str(urdf), "--degrees", "--format", "ros2-json",
                 "--out", str(out), "--no-plots", "--no-report"]) == 0
    points = json.loads((out / "joint_trajectory.json").read_text())["points"]
    assert np.allclose(points[-1]["positions"], [np.pi / 2, 0.25], rtol=0, atol=1e-12)
    q = np.array([p["positions"] for p in points])
    assert q[:, 1].max() > 0.2                  # the slide moved its 0.25 m (was 0.25° read as 0.0044 m)


def test_coordinate_types_past_a_mimic_joint(tmp_path, capsys):
    """`joint_types` is per body: indexed by a coordinate, a prismatic joint after a mimic read as revolute."""
    from dynamics import RobotModel
    robot = RobotModel.from_urdf(str(slide_urdf(tmp_path, mimic=True)))
    assert robot.n == 2 and robot.n_bodies == 3 and list(coordinate_prismatic(robot)) == [False, True]
    (tmp_path / "wp.csv").write_text("j1,j2\n0,0\n1,0.5\n")
    assert main(["plan", str(tmp_path / "wp.csv"), "--robot", str(tmp_path / "slide.urdf"),
                 "--out", str(tmp_path / "o"), "--no-plots", "--no-report"]) == 2
    assert "joint j2 = 0.5 m is outside its range [-0.2, 0.3]" in capsys.readouterr().err


def test_a_cells_preferred_posture_of_a_prismatic_joint_is_in_metres(tmp_path):
    urdf = slide_urdf(tmp_path)
    text = DEFAULT_CELL.read_text().replace('robot = "iiwa7"', f'urdf = "{urdf}"\npreferred_posture_deg = [30, 0.2]')
    path = tmp_path / "cell.toml"
    path.write_text(text.replace('flange = "flange"', 'flange = "b"').replace("[gripper]\nmass = 0.6", "[gripper]\nmass = 0.0"))
    cell = load_cell(path, check_reach=False)
    assert np.allclose(cell.q_preferred, [np.radians(30), 0.2], rtol=0, atol=1e-15)
