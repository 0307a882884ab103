"""Degenerate but valid paths and limits: each plans correctly or is refused in one clear line."""

from __future__ import annotations

import re

import numpy as np

import pytest

import dynamics
from toppra_app import JointPath, plan_time_optimal
from toppra_app.planning import diagnose
from toppra_app.waypoint_fit import fit_within


def robot(name):
    return dynamics.load_robot(name)


def test_the_gap_warning_states_the_estimate_as_a_share_of_the_plans_duration():
    """gap_estimate is Σ (1 − ρ) Δt / T, a share of the plan's duration T, but the warning read "the plan may be
    up to 82 % slower than the time-optimal motion" of a 2-interval plan 96 % slower (1.403 s; 0.716 s on 3200
    intervals). It now says how much less time the optimum may take, which holds against the fine plan."""
    r = robot("iiwa7")
    path = JointPath.from_waypoints([[0, 0.3, 0, -1.2, 0, 0.8, 0], [1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5]])
    with pytest.warns(RuntimeWarning, match=r"the time-optimal motion may take up to (\S+) % less time than the plan") \
            as rec:
        coarse = plan_time_optimal(r, path, grid=2)
    share = float(re.search(r"up to (\S+) % less", str(rec[0].message)).group(1)) / 100
    fine = plan_time_optimal(r, path, grid=3200)
    assert fine.within_limits and coarse.duration > 1.9 * fine.duration
    assert fine.duration >= (1 - share) * coarse.duration


def test_the_hint_to_fit_the_waypoints_appears_only_where_a_fit_can_have_fewer_knots():
    """A straight line through 2 waypoints on grid=2 counts as a dense path, and its gap warning said "if the
    waypoints are recorded or noisy, JointPath.from_waypoints(..., tolerance=...) fits a path with far fewer
    knots": a fit needs at least 12 waypoints (4 knot intervals, a third of them) to have fewer."""
    a, b = np.array([0, 0.3, 0, -1.2, 0, 0.8, 0]), np.array([1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5])
    with pytest.warns(RuntimeWarning, match="less time than the plan") as rec:
        plan_time_optimal(robot("iiwa7"), JointPath.from_waypoints([a, b]), grid=2)
    assert not any("tolerance=" in str(w.message) for w in rec)
    for m in (2, 11, 12, 40):                  # the hint's test agrees with the fit itself
        W = a + np.linspace(0, 1, m)[:, None] * (b - a)
        fitted, _ = fit_within(np.linspace(0, 1, m), W, np.full(7, 1e-3))
        assert diagnose.thinnable(JointPath.from_waypoints(W)) == (fitted is not None), m
