"""Grid points at bends known before the first solve (`planning.layers`): where a run-up from rest reaches the
maximum velocity curve, on a robot the suite does not use (the UR3 of example-robot-data), and not for a controller
profile, whose θ̈ ramps."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics.urdf import from_urdf
from toppra_app import JointPath, plan_time_optimal
from toppra_app.planner import TimeOptimalPlanner

from conftest import erd_path
from test_planner_any_path import _toppra_duration


def ur3_robot():
    p = erd_path("robots/ur_description/urdf/ur3_robot.urdf")
    if p is None:
        pytest.skip("example-robot-data ur3_robot.urdf not installed")
    r = from_urdf(p)
    return r.with_limits(tau_max=0.6 * r.tau_max)


# the UR3's last joint alone goes out and comes back from rest; its speed limit is reached 2e-5 of the path from
# either end (found by the same hunt)
UR3_WRIST = np.array([[3.4242186448445513, 2.020160370244342, -1.4100570649415258, 2.4654320845715607, 2.6319414275156956, 0.7728311028640813],
                      [3.4242186448445513, 2.020160370244342, -1.4100570649415258, 2.4654320845715607, 2.6319414275156956, -1.2151485863884997],
                      [3.4242186448445513, 2.020160370244342, -1.4100570649415258, 2.4654320845715607, 2.6319414275156956, 0.9183986264827539]])


def test_a_joint_that_reaches_its_speed_limit_at_once_is_timed_from_rest():
    """A light joint accelerates from rest to its speed limit within 2e-5 of the path, far inside the first
    interval, and θ̇² bends there from 2 θ̈ θ to the cap, a kink a time law cannot follow inside an interval: the
    plan rose over the whole first and last intervals instead, +0.14 % from converged on 320 intervals, slower
    than toppra N = 5000 (whose uniform grid pays the same, less). Now a grid point where each run-up ends
    (`layers.rest_layers`). The reference: our solve on a grid uniform in θ with points at 1e-7 … 1e-3 of the
    path from either end, not placed by our code."""
    from test_planner import pinocchio_worst
    r = ur3_robot()
    path = JointPath.from_waypoints(UR3_WRIST)
    ours = plan_time_optimal(r, path)
    ends = np.geomspace(1e-7, 1e-3, 33)
    grid = np.union1d(np.linspace(0.0, 1.0, 1025), np.r_[ends, 1.0 - ends])
    converged = plan_time_optimal(r, path, grid=grid)
    assert abs(ours.duration / converged.duration - 1.0) <= 2e-4
    assert ours.duration <= _toppra_duration(r, UR3_WRIST, 5000)
    assert max(pinocchio_worst(ours).values()) <= 1.001


def test_a_controller_profile_gets_no_points_at_known_bends():
    """The run-up points (and flip layers) make intervals far shorter than their neighbours; a controller
    profile's θ̈ ramps (its torque-rate rows), so it has no such kink, and its rate rows over those intervals
    had left Clarabel with a numerical error and SCS with its time limit (ur5e/many-0: 0.45 → 3.7 s). Plain
    plans get the point, controller profiles do not."""
    from benchmarks.bench_controller import profile
    r = ur3_robot()
    path = JointPath.from_waypoints(UR3_WRIST)
    plain = TimeOptimalPlanner(r, path).grid
    ctrl = TimeOptimalPlanner(r, path, controller=profile("linear")).grid
    assert plain[1] - plain[0] < 5e-5 and plain[-1] - plain[-2] < 5e-5           # (the run-up ends ~2e-5 in)
    assert ctrl[1] - ctrl[0] > 1e-4 and ctrl[-1] - ctrl[-2] > 1e-4
