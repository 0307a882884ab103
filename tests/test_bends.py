"""Free stations switched on before the first solve where a ridden limit bends (`planning.refine.bending`, `bent`).

With θ̈ linear per interval and only the stations u = 0, ½, 1 on, a limit the optimum rides along a curved θ̈
bulges past itself between the stations; the planner predicts the bulge from the sweeps' profile and switches
those intervals' free stations on at once, instead of finding the excess in the between-grid check and
repairing it with a second solve. Checked here: the prediction's algebra against its closed form (hypothesis),
the prediction against what the check of an unrepaired plan measures (inverse dynamics at the exact time law,
`verify.check_time_law`), and the planner: tiny motions — whose torque-limited phases curve the most — plan in
one solve, within the limits, with the durations of the repaired plans."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from benchmarks.cases import _draw, _span
from benchmarks.cases import robot as suite_robot
from toppra_app import JointPath
from toppra_app.planner import TimeOptimalPlanner
from toppra_app.planning import refine
from toppra_app.socp import stations as st

U = 1.0 - np.asarray(st.SCHEMES["interpolation"])          # the stations' u: 0, ¼, ½, ¾, 1


def _reference(b0, bm, b1):
    """One interval θ ∈ [0, 1]: the reference's β at the ends and middle, b and θ̈ at the stations."""
    beta, beta_mid = np.array([b0, b1]), np.array([bm])
    b = b0 * (1 - U) * (1 - 2 * U) + bm * 4 * U * (1 - U) + b1 * U * (2 * U - 1)
    a = (b1 - b0) / 2.0 + st.delta_of(beta, beta_mid, np.array([1.0]))[0] * (U - 0.5)
    return beta, beta_mid, b, a


def _one_row(al, be, A, b):
    """The rows of one interval: a single row al θ̈ + be b ≤ h whose θ̈-bound at the stations is A."""
    h = al * A + be * np.maximum(b, 0.0)
    idx = st.station_index(2, "interpolation")[0]
    rows = st.OneSided(*(np.zeros((5, 1)) for _ in range(4)), origin=[(0, 0, "hi")])
    rows.al[idx, 0], rows.be[idx, 0], rows.h[idx, 0] = al, be, h
    return rows


@settings(max_examples=80, deadline=None)
@given(al=hst.floats(0.2, 2.0), sign=hst.sampled_from([1.0, -1.0]), be=hst.floats(-1.0, 1.0),
       frac=hst.floats(-1.0, 1.0), b0=hst.floats(0.0, 1.0), bm=hst.floats(1.5, 3.0), b1=hst.floats(3.0, 5.0))
def test_predicted_bulge_is_the_chords_miss(al, sign, be, frac, b0, bm, b1):
    """A linear θ̈ meeting A(u) = a(u) + k (u − ½)² at u = ½ and 1 misses it at ¾ by k/16 (and at ¼, meeting it
    at 0 and ½, by as much): the row's excess |α| k/16 where the bend is against the row's side, else none."""
    beta, beta_mid, b, a = _reference(b0, bm, b1)
    k = frac * 0.19 * np.abs(a).min()                        # A within `BEND_NEAR` (5 %) of a: the row is ridden
    rows = _one_row(sign * al, be, a + k * (U - 0.5) ** 2, b)
    got = refine.bending(rows, beta, beta_mid, np.array([0.0, 1.0]), "interpolation")[0]
    expect = al * abs(k) / 16 if sign * k > 0 else 0.0
    assert got == pytest.approx(expect, rel=1e-9, abs=1e-12)


def test_a_row_only_approached_or_with_a_vanishing_coefficient_predicts_nothing():
    beta, beta_mid, b, a = _reference(0.5, 2.0, 4.0)
    bent = a + 0.05 * np.abs(a).min() * (U - 0.5) ** 2
    theta = np.array([0.0, 1.0])
    assert refine.bending(_one_row(1.0, 0.3, bent, b), beta, beta_mid, theta, "interpolation")[0] > 0
    # the same bend 10 % above the reference's θ̈: a limit approached, not ridden
    assert refine.bending(_one_row(1.0, 0.3, 1.1 * bent, b), beta, beta_mid, theta, "interpolation")[0] == 0.0
    # a coefficient five times smaller at the ends than in the middle (q′ of its joint crossing zero nearby)
    al = np.array([0.2, 0.6, 1.0, 0.6, 0.2])
    assert refine.bending(_one_row(al, 0.3, bent, b), beta, beta_mid, theta, "interpolation")[0] == 0.0


def test_a_row_ridden_in_b_predicts_its_own_excess_between_the_stations():
    """A joint's acceleration limit where its q′ turns (α crossing zero) holds θ̇² alone: a reference that meets
    it at u = ½ and 1 (stations on) and passes it by ε at ¾ is predicted to exceed by ε there; not where it
    only approaches the limit at one of the meeting stations."""
    beta, beta_mid, b, a = _reference(0.5, 2.0, 4.0)
    theta = np.array([0.0, 1.0])
    al = np.array([-0.02, -0.01, 0.0, 0.01, 0.02])
    be = np.array([0.30, 0.31, 0.33, 0.36, 0.40])
    eps = 2e-3

    def row(h):
        rows = _one_row(1.0, 0.0, np.zeros(5), b)
        idx = st.station_index(2, "interpolation")[0]
        rows.al[idx, 0], rows.be[idx, 0], rows.h[idx, 0] = al, be, h
        return rows
    exact = al * a + be * b
    at = exact - eps * (U == 0.75)                                # the reference ε past the limit at ¾ only
    assert refine.bending(row(at), beta, beta_mid, theta, "interpolation")[0] == pytest.approx(eps, rel=1e-9)
    loose = at + 0.1 * exact * (U == 0.5)                         # 10 % below the limit at ½: not ridden
    assert refine.bending(row(loose), beta, beta_mid, theta, "interpolation")[0] == 0.0


@pytest.mark.parametrize("name", ["iiwa7"])
def test_acceleration_limited_paths_plan_in_one_solve(name, monkeypatch):
    """The suite's acceleration-limited paths repair their first plan where a joint's q′ turns (the
    acceleration row ridden in b: the iiwa 7 once); predicted, they plan in one solve, within the limits.
    (The Panda's and the UR5e's did too on earlier grids — the Panda's placed by time and θ alone, the UR5e's
    with its points relocated — and on today's repair once: the UR5e's bend is predicted in interval 27 and
    the solution then rides its acceleration limit across interval 26.)"""
    from benchmarks.cases import suite
    case = next(c for c in suite() if c.name == f"{name}+accel/accel-0")
    robot, path = suite_robot(case.robot), JointPath.from_waypoints(case.waypoints)
    plan = TimeOptimalPlanner(robot, path).plan()
    assert plan.iterations == 1 and not plan.refinements and plan.worst_ratio <= 1.001
    monkeypatch.setattr(refine, "BEND_SHARE", np.inf)
    assert TimeOptimalPlanner(robot, path).plan().iterations >= 2


def _tiny_paths(count):
    out = []
    for name in ("iiwa7", "ur5e"):
        r = suite_robot(name)
        lo, hi = _span(r)
        rng = np.random.default_rng(77)
        for _ in range(count):
            out.append((r, JointPath.from_waypoints(
                _draw(r, lambda: rng.uniform(lo, hi) + rng.uniform(-1e-3, 1e-3, size=(4, r.n))))))
    return out


def test_prediction_finds_what_the_check_measures(monkeypatch):
    """On tiny motions planned without the bends: every interval the first between-grid check finds over
    0.9 tol (the allowance) was predicted above `BEND_SHARE` tol, and the prediction plus the inner stations'
    tol/2 (the value the middle station may take) never falls short of the measured excess by more than a
    third, and is within a third of it for nine in ten (over-predicting switches on more stations, no more)."""
    share = refine.BEND_SHARE
    monkeypatch.setattr(refine, "BEND_SHARE", np.inf)
    seen, real = {}, refine.bending

    def spy(*args):                                          # (the first grid's: a plan may go on to a finer one)
        out = real(*args)
        seen.setdefault("pred", out)
        return out

    def first_check(robot, sub, law, limits, dense, allowed):
        out = checked(robot, sub, law, limits, dense, allowed)
        seen.setdefault("excess", np.max([r.max(axis=1) for r in out[0].ratios.values()], axis=0) - 1.0)
        return out

    checked = refine.checked
    monkeypatch.setattr(refine, "bending", spy)
    monkeypatch.setattr(refine, "checked", first_check)
    over = caught = 0
    ratios = []
    for robot, path in _tiny_paths(4):
        seen.clear()
        planner = TimeOptimalPlanner(robot, path)
        planner.plan()
        tol = planner.tol
        bad = seen["excess"] > 0.9 * tol
        over += bad.sum()
        caught += (bad & (seen["pred"] > share * tol)).sum()
        big = bad & (seen["pred"] > tol)                     # well inside the ridden arcs
        ratios += list((seen["pred"][big] + 0.5 * tol) / seen["excess"][big])
    assert over >= 10 and caught >= 0.9 * over, (over, caught)
    assert len(ratios) >= 10 and min(ratios) >= 0.65, ratios
    assert np.mean(np.abs(np.array(ratios) - 1.0) <= 0.35) >= 0.9, ratios


def test_tiny_motions_plan_in_one_solve_with_the_repaired_duration(monkeypatch):
    # (on their default grid: two of these six go on to a finer one for their swing estimate, `refine.SWING_TARGET`)
    monkeypatch.setattr(refine, "SWING_TARGET", np.inf)
    plans = [(TimeOptimalPlanner(r, p).plan(), r, p) for r, p in _tiny_paths(3)]
    assert sum(p.iterations == 1 for p, _, _ in plans) >= 5, [p.iterations for p, _, _ in plans]
    monkeypatch.setattr(refine, "BEND_SHARE", np.inf)
    for plan, r, path in plans:
        assert plan.worst_ratio <= 1.0 + plan.planner.tol
        repaired = TimeOptimalPlanner(r, path).plan()
        assert plan.duration == pytest.approx(repaired.duration, rel=1e-4)
