"""`toppra-app plan`'s options as the user sees them: scaling factors that cannot act say so, bad values name
the option as typed, and summary.json records what was asked for (audit of the command line)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toppra_app.cli import main
from toppra_app.errors import InputError

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
                   "acceleration limits to scale (--controller qdd_max=... adds such limits, which the factor then "
                   "scales)")
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


@pytest.mark.parametrize("args, message", [
    (["--out", "wp.csv"], "--out wp.csv: refused, --out names the input file wp.csv; choose a new directory"),
    (["--out", "wp.csv", "--force"], "--out wp.csv: refused, --out names the input file wp.csv"),
    (["--robot", "adir"], "--robot adir: is a directory; expected a built-in robot (iiwa7, panda, ur5e, puma560, "
                          "planar4, charmie) or a .urdf or .xacro file"),
    (["--robot", "./adir"], "--robot ./adir: is a directory; expected a built-in robot"),
    (["--robot", "notes.txt"], "--robot notes.txt: is not a .urdf or .xacro file; expected a built-in robot"),
    (["--robot", "kuka"], "--robot kuka: no such built-in robot or file; expected a built-in robot (iiwa7, "),
    (["--sd-start", "-1"], "--sd-start: must be a finite number from 0 to 1e+150, got -1.0"),
    (["--sd-end", "nan"], "--sd-end: must be a finite number"),
    (["--sd-start", "50"], "--sd-start 50 is too fast at θ = 0 (grid index 0): joint iiwa_joint_"),
    (["--sd-end", "1e6"], "--sd-end 1e+06 is too fast at θ = "),
    (["--payload-mass", "1", "--payload-frame", "nope"], "--payload-frame nope: no such link or frame of robot "
                                                         "'iiwa7' (known: iiwa_link_1, "),
    (["--robot", "puma560"], "--robot puma560: robot 'puma560' has no joint torque, velocity or acceleration limit, "
                             "so nothing bounds the motion (its minimum time is 0); the command line cannot add "
                             "limits: give a URDF whose joints have <limit effort=... velocity=...>, or plan it with "
                             "the library after robot.with_limits(...)"),
])
def test_bad_values_name_the_option_as_typed(tmp_path, wp, capsys, monkeypatch, args, message):
    """The messages named the library's argument (sd_start, frame, tool_frame), said 'contains the input' of
    --out naming the input file itself, 'unknown built-in robot' of a directory or a CSV given as --robot, and
    told puma560's user to call robot.with_limits."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    (tmp_path / "notes.txt").write_text("notes\n")
    if "puma560" in args:
        (tmp_path / "wp.csv").write_text("0,0,0,0,0,0\n0.5,0.2,0.1,0,0,0\n")
    assert main(["plan", "wp.csv", "--no-plots", "--no-report", *(["--out", "o"] if "--out" not in args else []),
                 *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"toppra-app plan: error: {message}"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "notes.txt", "wp.csv"]


def test_a_tool_frame_that_is_no_link_names_the_option(tmp_path, wp, capsys, panda_urdf):
    assert plan(wp, tmp_path / "o", "--robot", panda_urdf, "--tool-frame", "nope") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"toppra-app plan: error: --tool-frame nope: no such link on a moving body of "
                          f"{panda_urdf} (its links: panda_link1, "), err


@pytest.mark.parametrize("locks, why", [
    (["nope=0"], "locked joint 'nope' not found"),
    (["panda_finger_joint1=1"], "locked joint 'panda_finger_joint1': position 1 is outside its range"),
    (["panda_finger_joint1=0.02", "panda_finger_joint2=0.03"], "locked joint 'panda_finger_joint2': position 0.03 "
                                                               "contradicts its <mimic> of 'panda_finger_joint1'"),
])
def test_a_lock_the_urdf_cannot_hold_names_the_option(tmp_path, wp, capsys, panda_urdf, locks, why):
    """The loader tags its error with the argument (`ModelError.argument`): a contradicted mimic was reported as
    the loader's own message, without --lock, when the option was found by matching the message's text."""
    assert plan(wp, tmp_path / "o", "--robot", panda_urdf, *[a for lock in locks for a in ("--lock", lock)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"toppra-app plan: error: --lock: {panda_urdf}: {why}"), err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("lock", ["panda_finger_joint1=1_0", "panda_finger_joint1=0x1", "panda_finger_joint1=nan"])
def test_a_lock_value_is_a_plain_decimal_number(tmp_path, wp, capsys, panda_urdf, lock):
    """As in the waypoint files: float() alone read '1_0' as 10 (then 'outside its range', not the typo)."""
    assert plan(wp, tmp_path / "o", "--robot", panda_urdf, "--lock", lock) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"toppra-app plan: error: --lock: expected JOINT=VALUE with a finite number, got '{lock}'", err


def test_a_joint_locked_twice_at_two_positions_is_refused(tmp_path, wp, capsys, panda_urdf):
    """`--lock j=0.01 --lock j=0.02` kept the last value without a word (an audit); the same value twice is fine."""
    j = "panda_finger_joint1"
    assert plan(wp, tmp_path / "o", "--robot", panda_urdf, "--lock", f"{j}=0.01", "--lock", f"{j}=0.02") == 2
    err = capsys.readouterr().err.strip()
    assert err == f"toppra-app plan: error: --lock: joint '{j}' given twice, at 0.01 and 0.02", err
    assert not (tmp_path / "o").exists()
    from toppra_app.commands.robot_arg import parse_locks, parse_xacro_args
    assert parse_locks([f"{j}=0.01", f"{j} = 0.01"]) == {j: 0.01}
    with pytest.raises(InputError, match="--xacro-arg: 'a' given twice, as '1' and '2'"):
        parse_xacro_args(["a=1", "a=2"], "r.xacro")


def test_the_built_in_robots_are_the_same_in_help_and_messages(capsys):
    from dynamics.robots import BUILTIN_ROBOTS
    from toppra_app.commands.robot_arg import BUILTIN, ROBOT_HELP
    assert BUILTIN == BUILTIN_ROBOTS and all(name in ROBOT_HELP for name in BUILTIN)


def test_summary_records_the_tolerance_with_its_unit_and_the_robot_options(tmp_path, capsys):
    """With --degrees --waypoint-tolerance 0.5 the summary's waypoint_tolerance is in radians (per joint) while
    the user gave degrees: the unit is now explicit, and the value as given is kept beside it."""
    t = np.linspace(0, 1, 40)[:, None]
    W = np.degrees(np.array([0, 0.3, 0, -1.2, 0, 0.8, 0]) + np.sin(np.pi * t) * np.array([0.8, 0.3, 0.2, 0.3, 0.1, 0.2, 0.5]))
    (tmp_path / "deg.csv").write_text("\n".join(",".join(f"{v:.6f}" for v in row) for row in W) + "\n")
    assert plan(str(tmp_path / "deg.csv"), tmp_path / "o", "--degrees", "--waypoint-tolerance", "0.5") == 0
    assert "within 0.5 deg of them" in capsys.readouterr().out
    s = summary(tmp_path / "o")
    assert s["waypoint_tolerance"] == pytest.approx([np.radians(0.5)] * 7)          # unchanged: per joint, rad or m
    assert s["units"]["waypoint_tolerance"] == "rad or m"
    assert s["waypoint_tolerance_given"] == {"value": 0.5, "unit": "deg"} and s["degrees"] is True
    assert (s["robot_file"], s["locked_joints"], s["tool_frame"], s["mimic"]) == (None, {}, "flange", None)


def test_summary_records_the_urdf_and_its_options(tmp_path, wp, panda_urdf):
    assert plan(wp, tmp_path / "o", "--robot", panda_urdf, "--lock", "panda_finger_joint1=0.02", "--tool-frame",
                "panda_hand", "--mimic", "coupled", "--velocity-scaling", "0.9") == 0
    s = summary(tmp_path / "o")
    assert s["robot_file"] == str(panda_urdf) and s["locked_joints"] == {"panda_finger_joint1": 0.02}
    assert (s["tool_frame"], s["mimic"], s["velocity_scaling"], s["acceleration_scaling"]) == ("panda_hand", "coupled",
                                                                                            0.9, 1.0)
    assert s["degrees"] is False and s["waypoint_tolerance_given"] is None


def test_xacro_arguments_at_the_command_line(tmp_path, capsys):
    """--xacro-arg NAME=VALUE: a xacro robot's arguments (a ROS description's ur_type, ...) could not be given at the
    command line, only their defaults used. They reach the file, are recorded in summary.json, and are refused in
    one line for a robot that is not a .xacro file."""
    pytest.importorskip("xacro")
    from test_urdf import inertial
    robot = tmp_path / "two.urdf.xacro"
    joints = "".join(f'<joint name="j{k}" type="revolute"><parent link="{p}"/><child link="{c}"/><origin xyz="0 0 0.3"/>'
                     f'<axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="$(arg vmax)" effort="100"/></joint>'
                     for k, p, c in ((1, "base", "a"), (2, "a", "b")))
    robot.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="two"><xacro:arg name="vmax" default="1"/>'
                     f'<link name="base"/><link name="a">{inertial(1.0)}</link><link name="b">{inertial(1.0)}</link>'
                     f'{joints}</robot>')
    (tmp_path / "w.csv").write_text("0,0\n1.0,-0.8\n")
    runs = {}
    for vmax in (None, "0.5"):
        extra = [] if vmax is None else ["--xacro-arg", f"vmax={vmax}"]
        out = tmp_path / f"o{vmax}"
        assert main(["plan", str(tmp_path / "w.csv"), "--robot", str(robot), "--out", str(out), "--no-plots",
                     "--no-report", *extra]) == 0
        runs[vmax] = summary(out)
    assert runs[None]["xacro_args"] == {} and runs["0.5"]["xacro_args"] == {"vmax": "0.5"}
    assert runs["0.5"]["duration"] > 1.5 * runs[None]["duration"]                  # half the velocity limit
    capsys.readouterr()
    assert main(["plan", str(tmp_path / "w.csv"), "--robot", str(robot), "--out", str(tmp_path / "typo"),
                 "--xacro-arg", "vmx=0.5"]) == 2                                  # a misspelt name: not ignored
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--xacro-arg" in err and "'vmx'" in err and "its arguments: vmax" in err, err
    assert not (tmp_path / "typo").exists()
    capsys.readouterr()
    for args, why in ((["--robot", "iiwa7", "--xacro-arg", "vmax=1"], "only for a .xacro robot (--robot FILE.xacro), "
                                                                        "not 'iiwa7'"),
                      (["--robot", str(robot), "--xacro-arg", "vmax"], "expected NAME=VALUE, got 'vmax'")):
        assert main(["plan", str(tmp_path / "w.csv"), "--out", str(tmp_path / "bad"), *args]) == 2
        assert capsys.readouterr().err.strip() == f"toppra-app plan: error: --xacro-arg: {why}"


def test_a_path_the_robot_cannot_hold_anywhere_is_reported_over_its_whole_range():
    """The grid points are followed by the stations between them in the list checked: the message counted the
    stations as grid points ("801 grid points" on 200 intervals), named a station's position in that list as a
    "grid index", and gave the last station's θ (0.9994) as the top of the range for a path overloaded everywhere."""
    import re

    import dynamics
    from fixtures import BENCH_PATHS
    from toppra_app import JointPath
    from toppra_app.errors import InfeasiblePathError
    from toppra_app.planner import TimeOptimalPlanner
    planner = TimeOptimalPlanner(dynamics.load_robot("iiwa7"), JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["straight"]),
                                 grid=200, allow_overload=True)
    planner.plan()                                   # (the robot alone holds it: the check with a payload below)
    with pytest.raises(InfeasiblePathError) as err:
        planner.plan(payload=300.0)
    msg = str(err.value)
    assert "at θ = 0 (grid index 0 of 200)" in msg and msg.endswith("θ ∈ [0, 1])"), msg
    count, total = map(int, re.search(r"\((\d+) of (\d+) points checked, grid points and stations", msg).groups())
    assert count == total > 201
