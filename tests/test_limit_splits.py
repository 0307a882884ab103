"""A plan whose repairs stall over a limit splits its grid even where the gap's refinements spent `max_splits`
(`finer.LIMIT_SPLITS` more, `finer.split_for_limits`), and keeps the coarser plan where the finer one breaks
its limits further. Found by an audit on a noisy path with a payload: 150 samples of a smooth Panda motion
with 1e-3 rad noise (rounded to 1e-5 rad, tests/data), a 1.5 kg box, the Panda URDF at 0.6 × its torques;
joint 2 holds the box at ~95 % of its limit there, so its torque rows reach the holding floor of the repairs
(`refine.repair`) and only a finer grid follows the torque between the stations."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from benchmarks.bench_planner import _over_limit
from benchmarks.cases import robot as suite_robot
from dynamics.payload import RigidBodyInertia
from toppra_app import JointPath
from toppra_app.planner import TimeOptimalPlanner
from toppra_app.planning import diagnose, finer

DATA = Path(__file__).parent / "data" / "panda_noisy_150.csv"


def _case():
    robot = suite_robot("panda-urdf")
    W = np.loadtxt(DATA, delimiter=",", skiprows=1)
    box = RigidBodyInertia.box(1.5, (0.1, 0.1, 0.2), com_offset=(0, 0, 0.08))
    return robot, JointPath.from_waypoints(W), box


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_stalled_repairs_split_the_grid_after_the_gap_spent_max_splits():
    """With `max_splits=1` the gap's refinement takes the one split; the repairs then stall 1.8 % over joint 2's
    torque limit (the previous code ended there, with a warning). The limit split takes it to 0.28 % — by the
    planner's check and by Pinocchio on 1 ms samples — and the plan is 3.5 % shorter."""
    robot, path, box = _case()
    plan = TimeOptimalPlanner(robot, path, max_splits=1).plan(payload=box)
    actions = [r["action"] for r in plan.refinements]
    assert "split" in actions and actions.index("split") > actions.index("repair")
    stalled = next(r["worst_ratio"] for r in plan.refinements if r["action"] == "split")
    assert stalled > 1.01                                     # where it stopped before
    assert plan.worst_ratio < 1.005
    smp = plan.sample(1e-3)
    assert _over_limit(robot.with_payload(box), smp.q, smp.qd, smp.qdd) < 0.005


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_user_who_forbids_splits_gets_none():
    """`max_splits=0` is the user's word: no grid split, not even for a limit (the plan warns instead, and on
    this dense noisy path points to the waypoint fit as well, `diagnose.warn_plan`)."""
    robot, path, box = _case()
    planner = TimeOptimalPlanner(robot, path, max_splits=0)
    assert planner.limit_splits == 0
    with pytest.warns(RuntimeWarning, match=r"still exceeds the torque limit.*from_waypoints\(\.\.\., tolerance="):
        plan = planner.plan(payload=box)
    assert not {"split", "refine"} & {r["action"] for r in plan.refinements}
    assert plan.s.size == planner.grid.size


class _Plan:
    def __init__(self, worst_ratio):
        self.worst_ratio = worst_ratio


class _Check:
    worst_ratio = 1.004


class _Law:
    theta = np.linspace(0.0, 1.0, 5)


class _Planner:
    auto_grid, max_splits, limit_splits, tol = True, 0, 1, 1e-3


@pytest.mark.parametrize("finer_ratio, kept", [(1.006, False), (1.003, True), (1.0009, True)])
def test_the_finer_plan_is_kept_only_if_it_breaks_its_limits_less(monkeypatch, finer_ratio, kept):
    """The split's plan replaces the last one only where it is within `tol` or less over than it, with its
    warnings; else the planner keeps its plan, `refinements` records the undone split with the finer plan's worst
    ratio, and the finer plan's warnings are not shown (they spoke of a plan the user does not get)."""
    def plan_finer(*args, **kwargs):                     # a finer plan that warns, as `diagnose.warn_plan` does
        diagnose._warn("the finer plan's warning", RuntimeWarning)
        return _Plan(finer_ratio)
    monkeypatch.setattr(finer, "plan_finer", plan_finer)
    over = {"torque": np.array([[False], [True], [False], [False]])}
    refinements = []
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = finer.split_for_limits(_Planner(), _Check(), over, None, 0.0, 0.0, refinements, 0, {}, 0.0, _Law())
    assert (got is not None) == kept
    assert [str(w.message) for w in seen] == (["the finer plan's warning"] if kept else [])   # a discarded plan's: none
    assert [r["action"] for r in refinements] == ([] if kept else ["split undone"])
    if not kept:
        assert refinements[0]["finer_worst_ratio"] == finer_ratio and refinements[0]["points"] == 1


def test_limit_splits_count_down_only_once_max_splits_is_spent():
    """A planner may split for a limit while `max_splits` lasts and `LIMIT_SPLITS` times after it; a user's
    `max_splits=0` allows none."""
    p = _Planner()
    assert finer.may_split(p)
    p.limit_splits = 0
    assert not finer.may_split(p)
    p.max_splits = 1
    assert finer.may_split(p)
    p.auto_grid = False
    assert not finer.may_split(p)
