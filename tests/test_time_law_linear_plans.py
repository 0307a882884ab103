"""Plans with θ̈ linear and continuous per interval (`time_law="linear"`): the plain problem plans the same
motion as the constant law (both converge to the optimum), keeps every limit between grid points, reverses,
samples and pickles; with the controller profile's torque-rate limit it plans shorter motions than the
constant law — which creeps, one step of θ̈ per grid point — and keeps the sampled rate, recomputed with
Pinocchio's RNEA."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import dynamics
from toppra_app import ControllerProfile, JointPath
from toppra_app.errors import InputError
from toppra_app.planner import TimeOptimalPlanner

W = [[0.0, 0.4, 0.0, -1.2, 0.0, 1.0, 0.0], [1.0, 0.9, 0.3, -0.9, 0.2, 0.8, 0.5],
     [1.8, 0.6, -0.2, -1.5, -0.3, 1.1, -0.4], [2.4, 1.0, 0.1, -0.8, 0.1, 0.5, 0.2]]
TOL = 1.001


@pytest.fixture(scope="module")
def robot():
    return dynamics.load_robot("iiwa7")


def test_plain_plan_matches_the_constant_law_and_keeps_the_limits(robot):
    path = JointPath.from_waypoints(W)
    lin = TimeOptimalPlanner(robot, path, time_law="linear").plan()
    const = TimeOptimalPlanner(robot, path, time_law="constant").plan()
    fine = TimeOptimalPlanner(robot, path, grid=1600, max_splits=0, time_law="constant").plan()   # converged
    assert lin.law.linear and not const.law.linear
    assert TimeOptimalPlanner(robot, path).plan().law.linear                   # the default ("auto")
    assert lin.duration == pytest.approx(fine.duration, rel=2e-3)
    assert lin.duration <= const.duration * (1 + 1e-6)
    assert lin.check.worst_ratio <= 1.001
    # the executed trajectory, resampled at 1 ms, within the limits (judged by the joint-space samples)
    s = lin.sample(1e-3)
    assert np.max(np.abs(s.tau) / robot.tau_max) <= 1.001
    assert np.max(np.abs(s.qd) / robot.qd_max) <= 1.001
    # without rate limits θ̈ may jump at grid points (as with the constant law): it does on this path
    law = lin.law
    right, left = (law.a + 0.5 * law.d)[:-1], (law.a - 0.5 * law.d)[1:]
    assert not np.allclose(right, left, rtol=0, atol=1e-5 * np.abs(law.a).max())
    back = lin.reversed(JointPath.from_waypoints(W[::-1]))
    assert back.duration == pytest.approx(lin.duration, rel=1e-12) and back.check.worst_ratio <= 1.001
    again = pickle.loads(pickle.dumps(lin))
    t = np.linspace(0.0, lin.duration, 11)
    assert np.allclose(again.eval(t), lin.eval(t), atol=1e-12)


def test_controller_plan_is_shorter_and_keeps_the_sampled_rate(robot):
    pytest.importorskip("pinocchio")
    from test_controller import pinocchio_rates
    path = JointPath.from_waypoints(W)
    base = dict(torque_headroom=0.9, velocity_headroom=0.95, torque_rate_max=1000.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin = TimeOptimalPlanner(robot, path, controller=ControllerProfile(**base, time_law="linear")).plan()
    const = TimeOptimalPlanner(robot, path, controller=ControllerProfile(**base)).plan()
    assert lin.status == "optimal" and not [w for w in caught if "exceeds" in str(w.message)]
    # with the rate rows θ̈ is continuous at the grid points: each interval's end meets the next one's start (6)
    law = lin.law
    right, left = (law.a + 0.5 * law.d)[:-1], (law.a - 0.5 * law.d)[1:]
    assert np.allclose(right, left, rtol=0, atol=1e-5 * np.abs(law.a).max())
    assert lin.duration < 0.95 * const.duration                 # measured: 6.1 % shorter on this path
    assert pinocchio_rates(robot, lin) <= 1000.0 * TOL
    assert lin.rate_check["torque_rate"].ratio <= TOL
    assert lin.check.worst_ratio <= 1.001


def test_time_law_is_validated(robot):
    path = JointPath.from_waypoints(W)
    with pytest.raises(InputError, match="time_law"):
        TimeOptimalPlanner(robot, path, time_law="cubic")
    with pytest.raises(InputError, match="controller.time_law"):
        ControllerProfile(time_law=1)
    with pytest.raises(InputError, match="time_law"):
        TimeOptimalPlanner(robot, path, time_law="linear", energy_weight=0.5)
    # the controller's (continuous) linear law on a user grid finer than its range: one line naming the
    # option, the range and the grid
    rated = dict(torque_rate_max=1000.0, time_law="linear")
    with pytest.raises(InputError, match="time_law.*up to 400 intervals.*800"):
        TimeOptimalPlanner(robot, path, grid=800, controller=ControllerProfile(**rated))
    with pytest.raises(InputError, match="time_law.*up to 400 intervals.*500"):
        TimeOptimalPlanner(robot, path, grid=np.linspace(0, 1, 501), controller=ControllerProfile(**rated))
    for grid in (400, None, 800):                         # plain plans take any grid with any law
        for law in ("auto", "constant", "linear"):
            TimeOptimalPlanner(robot, path, grid=grid, time_law=law)
    assert ControllerProfile.parse("torque_rate_max=1000,time_law=linear").time_law == "linear"
