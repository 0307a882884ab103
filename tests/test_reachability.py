"""The coarse profile of the adaptive grid (toppra_app.reachability) against the convex problem.

With each point's rows used once (collocation), backward-forward reachability gives the time-optimal
profile of that discretisation; the convex solve of the same grid with scheme="collocation" and no
between-grid refinement is an independent oracle for it."""

import warnings

import numpy as np
import pytest

import dynamics
from toppra_app import JointPath
from fixtures import BENCH_PATHS
from toppra_app.limits import PathData, RowBlock
from toppra_app.planner import TimeOptimalPlanner
from toppra_app.planning.sequential import grid_blocks
from toppra_app.socp.reachability import reachable_profile
from toppra_app.trajectory import TimeLaw


def _coarse(robot, path, intervals, sd_start, sd_end):
    planner = TimeOptimalPlanner(robot, path, grid=intervals, scheme="collocation", max_rounds=0)
    S = planner.grid_samples
    data = PathData(robot, planner.theta, S.q, S.dq, S.ddq, None)
    values = {"b_start": sd_start ** 2, "b_end": sd_end ** 2}
    blocks = [blk.at(values) for blk in grid_blocks(planner, data, None, None)]
    return planner, blocks


@pytest.mark.parametrize("name", ["iiwa7", "panda"])
@pytest.mark.parametrize("pname", ["pick-place", "straight"])
@pytest.mark.parametrize("sd", [(0.0, 0.0), (0.3, 0.2)])
def test_reachability_is_the_collocation_optimum(name, pname, sd):
    robot = dynamics.load_robot(name)
    path = JointPath.from_waypoints(BENCH_PATHS[name][pname])
    planner, blocks = _coarse(robot, path, 60, *sd)
    b = reachable_profile(blocks, planner.theta, sd[0] ** 2, sd[1] ** 2)
    assert b is not None and np.isfinite(b).all()
    assert b[0] == pytest.approx(sd[0] ** 2) and b[-1] == pytest.approx(sd[1] ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)       # collocation: between-grid excess expected
        plan = planner.plan(sd_start=sd[0], sd_end=sd[1])
    assert TimeLaw(planner.theta, b).duration == pytest.approx(plan.duration, rel=1e-3)
    # every interval's θ̈ meets the rows of its left point (what collocation asks), up to rounding
    a = np.diff(b) / (2 * np.diff(planner.theta))
    for blk in blocks:
        if blk.equality:
            continue
        g = blk.A[:-1] * (a[:, None] if blk.uses_a else 0.0) + blk.B[:-1] * b[:-1, None]
        assert np.all(g[:, blk.has_hi] <= blk.hi[:-1][:, blk.has_hi] + 1e-7)
        assert np.all(g[:, blk.has_lo] >= blk.lo[:-1][:, blk.has_lo] - 1e-7)


def test_reachability_declines_rows_with_sqrt_b_terms_and_impassable_points():
    robot = dynamics.load_robot("iiwa7")
    path = JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["straight"])
    planner, blocks = _coarse(robot, path, 20, 0.0, 0.0)
    P = planner.theta.size
    viscous = RowBlock("torque", np.array([0]), np.ones((P, 1)), np.zeros((P, 1)), np.full((P, 1), 0.1),
                       -np.ones((P, 1)), np.ones((P, 1)), np.ones(1, bool), np.ones(1, bool), uses_r=True)
    assert reachable_profile(blocks + [viscous], planner.theta, 0.0, 0.0) is None
    # a point where b must be ≥ 2 and ≤ 1 at once
    lo = np.zeros((P, 1))
    lo[7] = 2.0
    need = RowBlock("x", np.array([-1]), np.zeros((P, 1)), np.ones((P, 1)), np.zeros((P, 1)), lo,
                    np.full((P, 1), 1.0), np.ones(1, bool), np.ones(1, bool), uses_a=False)
    assert reachable_profile(blocks + [need], planner.theta, 0.0, 0.0) is None


def test_grid_placement_with_viscous_friction():
    """Viscous rows (√b terms) are linearised at the velocity cap for the coarse reachability profile that
    places the grid; the plan on it matches a 1600-interval plan."""
    robot = dynamics.load_robot("iiwa7")
    robot = robot.replace(viscous=np.full(robot.n, 2.0))
    path = JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["straight"])
    planner = TimeOptimalPlanner(robot, path)
    plan = planner.plan()
    assert planner.grid.size == 161 and not np.allclose(np.diff(planner.grid), np.diff(planner.grid)[0])
    assert plan.law.linear                                   # (the default: θ̈ linear per interval)
    fine = TimeOptimalPlanner(robot, path, grid=1600).plan()
    assert plan.duration == pytest.approx(fine.duration, rel=2e-3)
