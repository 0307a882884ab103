"""`TimeOptimalPlan.within_limits` / `limit_report()`: one verdict from the check between grid points, the
sampled torque-rate / jerk check and the solver status — the same as the plan's warnings, and the same as an
independent look at the executed 1 ms samples (Pinocchio's RNEA for the torques, finite differences of q̈ for
the jerk).

The over-limit plans are provoked honestly: a user grid too coarse for a dense, noisy path (the repairs stall
3 % over joint 5's acceleration limit; no split, the grid is the user's), and a jerk limit with a single
solve of the sequential rate scheme (`max_rate_iterations=1`: 0.1 % over on the samples, within the limits between
grid points)."""

from __future__ import annotations

import dataclasses
import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

from benchmarks.cases import BENCH_PATHS
from dynamics import load_robot
from toppra_app import JointPath, TimeOptimalPlanner
from toppra_app.verify import Worst

NOISY = Path(__file__).parent / "data" / "panda_noisy_150.csv"      # 150 samples, 1e-3 rad noise (test_limit_splits)
TOL = 1e-3                                                           # the planner's default `tol`


def planned(*args, **kwargs):
    """(plan, [warning messages]) of `TimeOptimalPlanner(*args, **kwargs).plan()`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = TimeOptimalPlanner(*args, **kwargs).plan()
    return plan, [str(w.message) for w in caught]


def warned_over(messages) -> bool:
    """Did the planner warn that the plan is over a limit or solved only inaccurately?"""
    return any("still exceeds" in m or "inaccurately" in m for m in messages)


@pytest.fixture(scope="module")
def coarse():
    """A Panda plan on the noisy path with the user's grid of 25 intervals: 3.1 % over the acceleration limit."""
    return planned(load_robot("panda"), JointPath.from_waypoints(np.loadtxt(NOISY, delimiter=",", skiprows=1)), 25)


@pytest.fixture(scope="module")
def fine():
    """The same path on 40 intervals: within the limits."""
    return planned(load_robot("panda"), JointPath.from_waypoints(np.loadtxt(NOISY, delimiter=",", skiprows=1)), 40)


@pytest.fixture(scope="module")
def jerky():
    """A Panda pick-and-place with jerk_max = 50 rad/s³ and one solve of the sequential scheme: over on the samples
    only. (Rates alone now plan as a controller profile, whose passes keep them: the scheme is called here as it
    is for rates with an energy term, whose one solve ends within 1.001 ×.)"""
    from toppra_app.planning import options
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(options, "rates_as_profile", lambda robot, controller, tau_rate, jerk, *rest: (controller, tau_rate, jerk))
        return planned(load_robot("panda"), JointPath.from_waypoints(BENCH_PATHS["panda"]["pick-place"]), jerk_max=50.0,
                       max_rate_iterations=1)


def test_over_a_limit_between_grid_points_is_not_within(coarse):
    from test_planner import pinocchio_worst
    plan, messages = coarse
    report = plan.limit_report()
    assert warned_over(messages) and not plan.within_limits and not report.within_limits
    assert report.limit == "acceleration" and report.joint == "panda_joint5" and report.found == "grid"
    assert report.ratio == plan.worst_ratio > 1.0 + TOL and report.tol == TOL and report.status == "optimal"
    assert len(report.problems) == 1 and "acceleration of joint panda_joint5 at 1.03" in report.line()
    # independently: the executed 1 ms samples are over that limit too (by 2.3 %)
    assert pinocchio_worst(plan)["acceleration"] > 1.0 + 10 * TOL


def test_a_good_plan_is_within_and_its_samples_agree(fine):
    from test_planner import pinocchio_worst
    plan, messages = fine
    report = plan.limit_report()
    assert not warned_over(messages) and plan.within_limits and report.problems == ()
    assert report.line() == "within its limits" and report.ratio == plan.worst_ratio <= 1.0 + TOL
    assert max(pinocchio_worst(plan).values()) <= 1.0 + TOL


def test_the_sampled_rate_check_counts(jerky):
    """Within the limits between grid points, over the jerk limit on the samples: not within. The jerk by finite
    differences of the 1 ms samples' q̈, at rest (q̈ = 0) one sample before and after, agrees."""
    plan, messages = jerky
    report = plan.limit_report()
    assert warned_over(messages) and plan.worst_ratio <= 1.0 + TOL and not plan.within_limits
    assert report.found == "samples" and report.limit == "jerk" and report.ratio > 1.0 + TOL
    assert "on the sampled trajectory at t = " in report.line()
    smp = plan.sample(1e-3)
    t = np.concatenate(([smp.t[0] - 1e-3], smp.t, [smp.t[-1] + 1e-3]))
    qdd = np.vstack([np.zeros(plan.robot.n), smp.qdd, np.zeros(plan.robot.n)])
    jerk = np.abs(np.diff(qdd, axis=0) / np.diff(t)[:, None]) / 50.0
    assert jerk.max() == pytest.approx(report.ratio, rel=1e-9)


def test_a_controller_profiles_rate_check_and_an_inaccurate_solve_count():
    """The controller profile's sampled check is `plan.rate_check` as the rate limits' is (a controller plan
    could not be made to end over it: its passes keep it; here its record says 0.5 % over), and a solve that
    ended "optimal_inaccurate" is not certified even where every check passes."""
    from toppra_app import ControllerProfile
    plan, messages = planned(load_robot("iiwa7"), JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["straight"]),
                             controller=ControllerProfile(jerk_max=500.0))
    assert plan.rate_check and not warned_over(messages) and plan.within_limits
    w = plan.rate_check["jerk"]
    over = dataclasses.replace(plan, rate_check={"jerk": dataclasses.replace(w, ratio=1.005)})
    assert not over.within_limits and over.limit_report().found == "samples"
    inaccurate = dataclasses.replace(plan, status="optimal_inaccurate")
    report = inaccurate.limit_report()
    assert not report.within_limits and report.ratio == plan.limit_report().ratio
    assert report.problems == ("the solve that gave the plan ended optimal_inaccurate (not certified optimal)",)


def test_the_verdict_survives_pickling_and_reversal_and_is_in_the_summary(coarse, fine):
    """Unpickled (no planner) and reversed plans keep their planner's tolerance: the verdict does not change."""
    plan, _ = coarse
    copy = pickle.loads(pickle.dumps(plan))
    assert copy.planner is None and copy.limit_report() == plan.limit_report()
    W = BENCH_PATHS["iiwa7"]["pick-place"]                           # (a frictionless robot: reversible)
    strict, _ = planned(load_robot("iiwa7"), JointPath.from_waypoints(W), tol=1e-4)
    back = strict.reversed(JointPath.from_waypoints(W[::-1]))
    assert back.tol == 1e-4 and back.limit_report().tol == 1e-4 and back.within_limits == strict.within_limits
    summary = json.loads(json.dumps(plan.summary(), default=float))
    assert summary["within_limits"] is False and summary["limit_check"]["limit"] == "acceleration"
    assert summary["limit_check"]["ratio"] == summary["worst_ratio"]              # (worst_ratio kept as it was)
    assert fine[0].summary()["within_limits"] is True


def test_a_tool_limit_has_no_joint():
    """A Cartesian limit (the tool's speed) is named without a joint."""
    plan, _ = planned(load_robot("iiwa7"), JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["straight"]),
                      tool_speed_max=0.2)
    assert plan.within_limits and "tool_speed" in plan.worst
    check = dataclasses.replace(plan.check, worst={**plan.check.worst, "tool_speed": Worst(
        "tool_speed", 1.01, -1, 0.5, 3, 0.202, 0.2)})
    assert dataclasses.replace(plan, check=check).limit_report().line().startswith("tool_speed at 1.01 × its limit")
