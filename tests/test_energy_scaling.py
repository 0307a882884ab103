"""The energy objective and the rate limits solve their problem (`socp.general.GeneralProblem`) in normalised
variables (`socp.scaling`), like the time-optimal plan: the plan does not depend on the scale of the path
parameter, and on a tiny motion it minimises its own objective T + w ∫ τᵀRτ dt, judged with Pinocchio's
RNEA against uniformly slowed copies of the time-optimal plan (feasible: their torques lie between the
time-optimal plan's and gravity's)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from dynamics import load_robot
from fixtures import to_pinocchio
from toppra_app import JointPath
from toppra_app.objectives.energy import energy_weights
from toppra_app.planner import TimeOptimalPlanner

pin = pytest.importorskip("pinocchio")

IIWA_WAYPOINTS = np.array([[-0.2, 0.4, 0.1, -1.5, 0.3, 0.9, -0.4], [0.5, 0.8, -0.3, -1.0, -0.2, 1.3, 0.6],
                           [1.1, 0.3, 0.4, -1.6, 0.5, 0.7, 1.2], [0.7, -0.2, 0.0, -1.9, 0.1, 1.1, 0.3]])
PANDA_WAYPOINTS = np.array([[0, -0.3, 0, -2.2, 0, 2.0, 0.8], [0.8, 0.2, 0.3, -1.6, 0.2, 2.3, 1.2],
                            [1.2, 0.4, 0.1, -1.2, -0.2, 2.6, 0.4]])
PANDA_JERK = [7500, 3750, 5000, 6250, 7500, 10000, 10000]


@functools.lru_cache(maxsize=None)
def pin_model(name):
    model = to_pinocchio(load_robot(name))
    return model, model.createData()


def pin_objective(name, t, q, qd, qdd, weight):
    """T + w ∫ τᵀRτ dt (trapezoidal) with τ = Pinocchio's RNEA (the iiwa 7 has no friction), R = 1/τ_max²."""
    model, data = pin_model(name)
    tau = np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(q, qd, qdd)])
    _, R = energy_weights(load_robot(name), weight)
    p = np.einsum("ik,k,ik->i", tau, R, tau)
    return float(t[-1]) + weight * float(np.sum(0.5 * (p[1:] + p[:-1]) * np.diff(t)))


def plan_objective(name, plan, weight, dt=1e-4):
    t = np.linspace(0.0, plan.duration, max(int(plan.duration / dt), 200))
    return pin_objective(name, t, plan.eval(t), plan.evald(t), plan.evaldd(t), weight)


@pytest.mark.parametrize("length", [1e-3, 1e3])
def test_energy_plan_does_not_depend_on_the_path_parameter_scale(length):
    """s ∈ [0, 1e-3] failed ('the motion stops'), s ∈ [0, 1e3] planned 25 % slower with a worse objective."""
    robot = load_robot("iiwa7")
    ref = TimeOptimalPlanner(robot, JointPath.from_waypoints(IIWA_WAYPOINTS), energy_weight=1.0).plan()
    s = np.linspace(0.0, length, len(IIWA_WAYPOINTS))
    plan = TimeOptimalPlanner(robot, JointPath.from_waypoints(IIWA_WAYPOINTS, s=s), energy_weight=1.0).plan()
    assert plan.duration == pytest.approx(ref.duration, rel=2e-3)
    assert plan_objective("iiwa7", plan, 1.0) <= plan_objective("iiwa7", ref, 1.0) * (1 + 1e-3)


@pytest.mark.parametrize("weight", [1.0, 10.0])
def test_energy_plan_of_a_tiny_motion_minimises_its_objective(weight):
    """A 1 mrad motion (θ̇² ~ 1e4 on s ∈ [0, 1]): the plan came out 2.4–4.3× above a slowed time-optimal plan."""
    robot = load_robot("iiwa7")
    q0 = np.zeros(7)
    path = JointPath.from_waypoints([q0, q0 + 1e-3 * np.array([0.5, -1.2, 0.3, 1.5, -0.7, 0.4, 1.1])])
    plain = TimeOptimalPlanner(robot, path).plan()
    plan = TimeOptimalPlanner(robot, path, energy_weight=weight).plan()
    got = plan_objective("iiwa7", plan, weight)
    slowed = []
    for k in np.geomspace(1.0, 4.0, 25):             # q(t/k): the time-optimal plan k times slower
        t = np.linspace(0.0, k * plain.duration, 2000)
        slowed.append(pin_objective("iiwa7", t, plain.eval(t / k), plain.evald(t / k) / k, plain.evaldd(t / k) / k**2,
                                    weight))
    assert got <= min(slowed) * (1 + 1e-3), (got, min(slowed))


@pytest.mark.parametrize("length", [1e-3, 1e3])
def test_rate_limits_do_not_depend_on_the_path_parameter_scale(length):
    """Jerk-limited Panda: s ∈ [0, 1e-3] failed ('the motion stops'), s ∈ [0, 1e3] took 80 s for a 13× longer plan."""
    robot = load_robot("panda")
    ref = TimeOptimalPlanner(robot, JointPath.from_waypoints(PANDA_WAYPOINTS), jerk_max=PANDA_JERK).plan()
    s = np.linspace(0.0, length, len(PANDA_WAYPOINTS))
    plan = TimeOptimalPlanner(robot, JointPath.from_waypoints(PANDA_WAYPOINTS, s=s), jerk_max=PANDA_JERK).plan()
    assert plan.duration == pytest.approx(ref.duration, rel=1e-3)
    # the jerk on the 1 ms samples, by finite differences of q̈ (independent of the planner's own check)
    t, q, qd, qdd, tau = plan.sample(1e-3)
    jerk = np.abs(np.diff(qdd, axis=0)) / np.diff(t)[:, None]
    assert (jerk.max(axis=0) <= np.array(PANDA_JERK) * 1.001).all()
