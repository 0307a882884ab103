"""Corners: a joint-space polyline sampled densely (a planner's output, straight segments meeting at a few
vertices) turns within a spline segment or so at each vertex, and the optimal θ̇² rises and falls inside it
as the limiting joint changes. The default θ̈-linear grid counts such corners (`grid.corners`) and puts
`PER_CORNER` more intervals and `CORNER_SHARE` of its placement weight on the segments either side (planner.md
"Grid"). These tests: which paths have corners, and the UR10 polyline that was +0.19 % from converged."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.cases import robot as suite_robot
from toppra_app import JointPath, plan_time_optimal
from toppra_app.planning.grid import corners

from test_planner import pinocchio_worst


def polyline(vertices, per: int) -> np.ndarray:
    """`per` samples on each straight segment between consecutive `vertices`, the last vertex included."""
    V = np.asarray(vertices, dtype=float)
    return np.vstack([np.linspace(V[k], V[k + 1], per, endpoint=False) for k in range(len(V) - 1)] + [V[-1:]])


def ur10_polyline() -> tuple:
    """The audit's case: the UR10 of example-robot-data (0.6 × rated torque), four random vertices within the
    middle half of each joint range, ten samples a segment (the polyline study's draw 200 + 1)."""
    r = suite_robot("ur10-urdf")
    lo = np.where(np.isfinite(r.q_min), r.q_min, -np.pi)
    hi = np.where(np.isfinite(r.q_max), r.q_max, np.pi)
    rng = np.random.default_rng(201)
    nv, per = int(rng.integers(3, 7)), int(rng.choice([5, 10]))
    V = rng.uniform(lo + 0.25 * (hi - lo), hi - 0.25 * (hi - lo), size=(nv, r.n))
    return r, polyline(V, per)


def test_a_polyline_has_a_corner_at_each_vertex_spanning_the_segments_either_side():
    W = polyline([[0.0, 0.0, 0.0], [1.0, 0.2, 0.0], [1.2, 1.0, 0.5], [0.2, 1.3, 0.6]], 10)
    path = JointPath.from_waypoints(W)
    k = np.asarray(path.knots)
    assert corners(path) == [(k[9], k[11]), (k[19], k[21])]


@pytest.mark.parametrize("W", [
    np.random.default_rng(0).uniform(-1, 1, size=(8, 6)),                                        # turns at every knot
    polyline([[0.0, 0.0], [1.0, 0.0], [0.0, 1e-9]], 10),                                           # a reversal: a stop
    np.sin(np.linspace(0, 3, 60))[:, None] * [1.0, 0.5, -0.3] + np.linspace(0, 1, 60)[:, None],    # smooth samples
    polyline([[0.0, 0.0, 0.0], [1.0, 0.2, 0.0], [1.2, 1.0, 0.5]], 10)
    + np.random.default_rng(1).normal(scale=2e-2, size=(21, 3)),                                  # noise of 20 % a step
])
def test_paths_without_straight_runs_into_a_turn_have_no_corners(W):
    assert corners(JointPath.from_waypoints(W)) == []


def test_the_ur10_polyline_plans_within_a_tenth_of_a_percent_of_converged_and_of_its_limits():
    """Before the corners were counted: 128 intervals placed in time, one of them over a +40 % bump of the
    optimal θ̇² at each vertex, +0.19 % from converged. The reference is our own plan on 1280 intervals
    (within 2e-6 of the 3200-interval reference of `bench_planner.converged` on such paths)."""
    r, W = ur10_polyline()
    plan = plan_time_optimal(r, JointPath.from_waypoints(W))
    ref = plan_time_optimal(r, JointPath.from_waypoints(W), grid=1280)
    assert 1e-3 > plan.duration / ref.duration - 1.0 > -1e-4, (plan.duration, ref.duration)
    assert max(pinocchio_worst(plan).values()) <= 1.001
