"""Grid points moved to where the optimum switches before the first solve (`planning.placement`):
the grid keeps its size, ends, knots and order; on random benchmark paths the default plan comes closer
to a converged solve than on the grid before the move, judged against a converged (1600-interval) solve."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as hst

from toppra_app import JointPath, TimeOptimalPlanner
from toppra_app.planning import placement, prepare as prepare_module


@settings(max_examples=60, deadline=None)
@given(hst.integers(8, 60), hst.integers(0, 2 ** 32 - 1), hst.floats(0.05, 1.0))
def test_relocate_keeps_size_order_ends_and_fixed_points(N, seed, share):
    rng = np.random.default_rng(seed)
    theta = np.concatenate(([0.0], np.sort(rng.uniform(0, 1, N - 1)), [1.0]))
    theta = np.unique(theta)
    room = rng.exponential(size=theta.size - 1) ** 3
    fixed = theta[1:-1][rng.random(theta.size - 2) < 0.2]
    out = placement.relocate(theta, room, fixed, share)
    assert out.size == theta.size
    assert out[0] == theta[0] and out[-1] == theta[-1]
    assert (np.diff(out) > 0).all()
    assert np.isin(fixed, out).all()


def test_relocate_halves_the_interval_with_the_room_and_takes_a_point_where_there_is_none():
    theta = np.linspace(0.0, 1.0, 21)
    room = np.zeros(20)
    room[0] = 1.0
    room[10] = 1e-9                                     # a little elsewhere, so the order is defined
    out = placement.relocate(theta, room, share=0.5)
    assert out.size == theta.size
    assert np.isclose(out, 0.025).any()                 # the first interval halved
    assert np.isin(theta[2:], out).sum() == theta.size - 3   # one point taken (not next to it)


def _converged(robot, path, N=1600):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return TimeOptimalPlanner(robot, path, grid=N, max_splits=0).plan().duration


def test_moved_points_bring_random_paths_closer_to_the_optimum(monkeypatch):
    """iiwa 7, two random benchmark paths (their rest ends switch from the torque limit onto the speed
    limit within the first interval): the default plan with the moved points is at least 25 % closer to
    a 1600-interval solve than the plan on the grid before the move, and within 0.15 % of it (that solve is
    within ~0.01 % of toppra on 5000 points on these paths: docs/benchmarks.md)."""
    from benchmarks.cases import robot as suite_robot, suite
    cases = [c for c in suite(robots=["iiwa7"]) if c.family == "random"][::2]
    r = suite_robot("iiwa7")
    for case in cases:
        path = JointPath.from_waypoints(case.waypoints)
        ref = _converged(r, path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            moved = TimeOptimalPlanner(r, path, time_law="constant").plan().duration
            with monkeypatch.context() as m:
                m.setattr(prepare_module, "relocated", lambda robot, path, theta, *a, **k: theta)
                before = TimeOptimalPlanner(r, path, time_law="constant").plan().duration
        assert moved / ref - 1 < 0.75 * (before / ref - 1), (case.name, moved / ref - 1, before / ref - 1)
        assert moved / ref - 1 < 1.5e-3, (case.name, moved / ref - 1)


def test_a_grid_predicted_too_coarse_is_refined_before_the_first_solve():
    """iiwa 7, a tiny motion, θ̈ constant per interval: the prediction on 200 intervals is above the
    refinement target, so the first solve is already on the grid refined by the predicted room, and the
    plan is within 0.1 % of a 1600-interval solve. (With θ̈ linear, the default, the prediction — the
    constant law's loss — does not apply and the grid stays at its size.)"""
    from benchmarks.cases import robot as suite_robot, suite
    case = next(c for c in suite(robots=["iiwa7"]) if c.family == "tiny")
    r = suite_robot("iiwa7")
    path = JointPath.from_waypoints(case.waypoints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        planner = TimeOptimalPlanner(r, path, time_law="constant")
        plan = planner.plan()
        linear = TimeOptimalPlanner(r, path)
        linear.plan()
    assert planner.grid.size - 1 > 200                     # started finer than the default size
    assert linear.grid.size - 1 == 128
    assert plan.duration / _converged(r, path) - 1 < 1e-3
