"""A ROS 2 / MoveIt engineer's audit of handing plans to ros2_control's joint_trajectory_controller: the scaling
factors as MoveIt defines them (a factor F scales the acceleration limits the motion is planned with, whichever
option gave them), what summary.json records to reproduce a plan, and the exported messages read back with
PyYAML / json against independent oracles."""

from __future__ import annotations

import numpy as np
import pytest

from test_plan_options import ROWS, plan, summary, wp  # noqa: F401  (wp: the fixture)


def max_acceleration(out, n: int = 7) -> np.ndarray:
    data = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1)
    return np.abs(data[:, 1 + 2 * n:1 + 3 * n]).max(axis=0)


def test_acceleration_scaling_scales_the_controller_profiles_acceleration_limits(wp, tmp_path, capsys):
    """MoveIt's max_acceleration_scaling_factor F scales the acceleration limits: `--controller qdd_max=3
    --acceleration-scaling 0.5` is planned within 1.5 rad/s², the plan of `--controller qdd_max=1.5`. The factor
    was dropped (the plan kept 3 rad/s², the duration of F = 1) with a warning that it "has no effect" and that
    "the command line cannot add such limits" — which `--controller qdd_max` just did."""
    assert plan(wp, tmp_path / "half", "--controller", "qdd_max=3", "--acceleration-scaling", "0.5") == 0
    assert capsys.readouterr().err == ""
    assert plan(wp, tmp_path / "direct", "--controller", "qdd_max=1.5") == 0
    assert plan(wp, tmp_path / "full", "--controller", "qdd_max=3") == 0
    half, direct, full = (summary(tmp_path / k) for k in ("half", "direct", "full"))
    assert half["duration"] == pytest.approx(direct["duration"], rel=1e-9)
    assert half["duration"] > 1.2 * full["duration"]
    assert max_acceleration(tmp_path / "half").max() <= 1.5 * (1 + 1e-3)
    assert max_acceleration(tmp_path / "full").max() > 2.9
    # summary.json records the profile as given, next to the factor (it recorded neither the profile nor its limits)
    assert half["controller"]["qdd_max"] == 3.0 and half["acceleration_scaling"] == 0.5
    assert half["controller"]["torque_headroom"] == 0.9 and full["controller"]["velocity_headroom"] == 0.95
    assert plan(wp, tmp_path / "none") == 0 and summary(tmp_path / "none")["controller"] is None


def test_acceleration_scaling_warns_only_for_joints_without_any_acceleration_limit(wp, tmp_path, capsys):
    """Per joint: the profile's qdd_max of inf leaves joint 7 without an acceleration limit, and only it is named."""
    assert plan(wp, tmp_path / "o", "--controller", "qdd_max=3:3:3:3:3:3:inf", "--acceleration-scaling", "0.5") == 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("toppra-app plan: warning: --acceleration-scaling 0.5 does not apply to iiwa_joint_7 of "
                          "robot 'iiwa7': no acceleration limit there") and err.count("\n") == 0
    assert max_acceleration(tmp_path / "o")[:6].max() <= 1.5 * (1 + 1e-3)


def test_a_joint_without_an_acceleration_or_velocity_limit_plans_without_numpy_warnings():
    """A robot with limits on some joints only (a profile's qdd_max with inf, a joint without a velocity limit):
    the check between grid points multiplied 0 · inf where a limit is inf, and numpy's "invalid value encountered
    in multiply" came out as a `toppra-app plan: warning:` line. The plan keeps its finite limits (by the 1 ms
    samples, an oracle of their own)."""
    import warnings

    import dynamics
    from toppra_app import JointPath, plan_time_optimal
    robot = dynamics.load_robot("iiwa7")
    robot = robot.with_limits(qd_max=np.r_[robot.qd_max[:6], np.inf], qdd_max=np.r_[np.full(6, 3.0), np.inf])
    path = JointPath.from_waypoints(np.array([[float(v) for v in row.split(",")] for row in ROWS.split()]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan = plan_time_optimal(robot, path)
    _, _, qd, qdd, _ = plan.sample(1e-3)
    assert plan.within_limits
    assert np.abs(qdd[:, :6]).max() <= 3.0 * (1 + 1e-3)
    assert np.all(np.abs(qd[:, :6]) <= robot.qd_max[:6] * (1 + 1e-3))


def test_a_nonzero_end_speed_in_a_ros_export_says_the_controller_refuses_it(wp, tmp_path, capsys):
    """joint_trajectory_controller (Jazzy on: allow_nonzero_velocity_at_trajectory_end false by default) refuses a
    trajectory whose last point moves faster than float epsilon; `--sd-end` wrote one without a word."""
    yaml = pytest.importorskip("yaml")
    assert plan(wp, tmp_path / "csv", "--sd-end", "0.5") == 0
    assert capsys.readouterr().err == ""                                    # no ROS file: nothing to say
    assert plan(wp, tmp_path / "ros", "--sd-end", "0.5", "--format", "ros2-yaml") == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("toppra-app plan: warning: --sd-end 0.5: the last point's "
                                                   "velocities are not zero") and "allow_nonzero_velocity" in err
    last = yaml.safe_load((tmp_path / "ros" / "joint_trajectory.yaml").read_text())["points"][-1]
    assert max(abs(v) for v in last["velocities"]) > np.finfo(np.float32).eps     # what the controller checks
    assert plan(wp, tmp_path / "rest", "--format", "ros2-yaml,ros2-json") == 0 and capsys.readouterr().err == ""
    last = yaml.safe_load((tmp_path / "rest" / "joint_trajectory.yaml").read_text())["points"][-1]
    assert all(v == 0.0 for v in last["velocities"])


@pytest.mark.parametrize("spec, message", [
    ("qdd_max=1:2:3:4:5:6:7:8", "controller.qdd_max: expected a number or 7 values (one per joint), got 8 values"),
    ("qdd_max=3:3:3:3:3:3:1e-6", "--acceleration-scaling 0.4: takes controller.qdd_max 1e-06 to 4e-07, below the "
                                 "smallest acceleration limit a profile takes (1e-06)")])
def test_a_profile_the_factor_cannot_scale_is_one_line_naming_what_was_typed(wp, tmp_path, capsys, spec, message):
    """A wrong count was first warned about as a factor "with no effect"; a limit the factor takes below the profile's
    smallest was refused naming a value (4e-07) the user never typed."""
    assert plan(wp, tmp_path / "o", "--controller", spec, "--acceleration-scaling", "0.4") == 2
    assert capsys.readouterr().err == f"toppra-app plan: error: {message}\n"
    assert not (tmp_path / "o").exists()
