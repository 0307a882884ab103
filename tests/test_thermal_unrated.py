"""Joints without an RMS rating in the thermal cycle limit (`tau_rms` inf: not rated). Such a joint has no row
in the cycle problem, its RMS is still measured and reported, and the summary says None for its rating and
ratios (inf and NaN are not JSON). One rated joint gives the cycle the same joint rated with the others rated
too high to bind gives; hostile ratings are one line naming tau_rms and the joint, before any planning."""

from __future__ import annotations

import functools
import json
import math
import re
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from test_thermal import GRID, _cell_with, _pinocchio_cycle_rms, free_cycle, paths, robot, tight_cycle, tight_rating
from toppra_app.errors import InputError
from toppra_app.objectives.thermal import cycle_rms, plan_cycle_with_rms_limit

INF = math.inf
NAMES = [f"iiwa_joint_{k + 1}" for k in range(7)]


def only(k: int) -> np.ndarray:
    """Joint k rated at the test's tight rating, the others not rated."""
    tau = np.full(7, INF)
    tau[k] = tight_rating()[k]
    return tau


def never_binding(k: int) -> np.ndarray:
    """Joint k as in `only`, the others at 1000 × their time-optimal RMS (they never bind)."""
    return np.where(np.isinf(only(k)), 1e3 * free_cycle().unconstrained_rms, only(k))


@functools.lru_cache(maxsize=None)
def joint_3_alone():
    return plan_cycle_with_rms_limit(robot(), list(paths()), only(2), grid=GRID)


def _checked_against_pinocchio(res, tau):
    """The reported RMS of every joint (rated or not) is the cycle RMS Pinocchio's RNEA finds; rated joints
    within the rating (+ rms_tol). (Its trapezoid on 1e-5 s samples: on 2e-5 s it was 1.5e-4 high on the
    joint 3 cycle, whose torque jumps at the grid points more than the fully rated cycle's.)"""
    ref = _pinocchio_cycle_rms(res.plans, res.idle_time, dt=1e-5)
    np.testing.assert_allclose(res.rms, ref, rtol=1e-4)
    rated = np.isfinite(tau)
    assert (ref[rated] <= tau[rated] * (1 + 1e-3)).all()
    np.testing.assert_allclose(cycle_rms(res.plans, res.idle_time)[0], res.rms, rtol=1e-12)


def test_one_rated_joint_is_the_cycle_of_ratings_that_never_bind():
    """Joint 3 alone (it binds: 12.6 N·m time-optimal, rated 10.7): the same cycle as with the other joints
    rated 1000× their RMS, to the solver's tolerance; the unrated joints' RMS goes past what the tight rating
    would have allowed them (joint 2: 45.9 N·m against 40.0), and is reported."""
    one = joint_3_alone()
    high = plan_cycle_with_rms_limit(robot(), list(paths()), never_binding(2), grid=GRID)
    assert one.cycle_time == pytest.approx(high.cycle_time, rel=1e-6)
    np.testing.assert_allclose(one.durations, high.durations, rtol=1e-6)
    np.testing.assert_allclose(one.rms, high.rms, rtol=1e-5)
    assert one.cycle_time > one.unconstrained_cycle_time * (1 + 1e-3)           # the rating binds
    assert one.thermally_limited == ["iiwa_joint_3"] and high.thermally_limited == ["iiwa_joint_3"]
    assert one.unrated == [n for n in NAMES if n != "iiwa_joint_3"] and high.unrated == []
    assert one.rms[1] > tight_rating()[1]
    _checked_against_pinocchio(one, only(2))
    ratio = one.rms_ratio                                       # 0 for the unrated joints: rms / inf
    assert ratio[2] == pytest.approx(one.rms[2] / only(2)[2]) and (np.delete(ratio, 2) == 0).all()


def test_unrated_joints_are_null_in_the_summary():
    one = joint_3_alone()
    s = json.loads(json.dumps(one.summary(), allow_nan=False))                   # valid JSON: no inf, no NaN
    for key in ("tau_rms", "rms_ratio", "unconstrained_rms_ratio"):
        assert [v is None for v in s[key]] == [k != 2 for k in range(7)], key
    assert s["tau_rms"][2] == pytest.approx(only(2)[2]) and s["rms_ratio"][2] == pytest.approx(one.rms_ratio[2])
    assert s["rms"] == pytest.approx(one.rms.tolist()) and s["unrated"] == one.unrated


def test_the_gravity_joint_rated_alone_holds_the_end_posture_as_fully_rated():
    """Joint 2 carries the arm: rated alone it gives the fully rated test cycle (where only joint 2 binds)
    with its idle hold — the hold's energy charged for the rated joints only. Within 3e-4: the convex–concave
    rounds still decrease T by ~1e-5 of it per round near the end and the round_tol stop fires a few rounds
    apart (4.27306 s against 4.27257 s; with round_tol = 1e-7 both end within 7e-6 of each other)."""
    res = plan_cycle_with_rms_limit(robot(), list(paths()), only(1), grid=GRID)
    full = tight_cycle()
    assert full.thermally_limited == ["iiwa_joint_2"]
    assert res.cycle_time == pytest.approx(full.cycle_time, rel=3e-4)
    assert res.idle_time > 0.5 and res.idle_time == pytest.approx(full.idle_time, rel=0.05)
    assert res.thermally_limited == ["iiwa_joint_2"]
    _checked_against_pinocchio(res, only(1))


# --------------------------------------------------------------------------------------- hostile ratings
NOT_A_RATING = st.one_of(
    st.sampled_from([math.nan, -INF, 0, 0.0, -0.0, -1, np.float64("nan"), np.int64(0), 10**400]),
    st.floats(max_value=0.0), st.integers(max_value=0), st.text(max_size=5), st.binary(max_size=3),
    st.booleans(), st.sampled_from([np.True_, np.False_, None, 1 + 0j, [1.0], {}, "40"]), st.complex_numbers(),
)
HOSTILE = settings(max_examples=80, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture
def no_planning(monkeypatch):
    from toppra_app import planner

    def refuse(*a, **k):
        raise AssertionError("planned before checking tau_rms")
    monkeypatch.setattr(planner.TimeOptimalPlanner, "plan", refuse)


def _refused(tau, pattern: str) -> str:
    with pytest.raises(ValueError) as exc:
        plan_cycle_with_rms_limit(robot(), list(paths()), tau, grid=GRID)
    msg = str(exc.value)
    assert isinstance(exc.value, InputError) and "\n" not in msg and re.match(pattern, msg), msg
    return msg


@HOSTILE
@given(k=st.integers(0, 6), bad=NOT_A_RATING, rest=st.sampled_from([30.0, INF]))
def test_a_bad_rating_names_tau_rms_and_the_joint(k, bad, rest, no_planning):
    tau = [rest] * 7
    tau[k] = bad
    if rest == INF:
        tau[(k + 1) % 7] = 30.0                                  # at least one rated joint besides
    _refused(tau, rf"tau_rms: joint {NAMES[k]} \(#{k}\): expected a rating > 0 N·m \(inf: not rated\), got ")
    _refused(np.array(tau, dtype=object), rf"tau_rms: joint {NAMES[k]} \(#{k}\): ")


@HOSTILE
@given(bad=NOT_A_RATING)
def test_a_bad_single_rating_names_tau_rms(bad, no_planning):
    assume(not isinstance(bad, list))                          # (a list of one: a wrong count, below)
    _refused(bad, r"tau_rms: expected a rating > 0 N·m \(inf: not rated\) for every joint")


@pytest.mark.parametrize("tau", [[30.0] * 3, [], [30.0] * 8, np.full(6, 30.0), (INF,) * 6 + (30.0,) * 2])
def test_a_wrong_count_says_how_many(tau, no_planning):
    _refused(tau, rf"tau_rms: expected one rating per joint \(7\), got {len(tau)}$")


@pytest.mark.parametrize("tau", [INF, np.inf, [INF] * 7, np.full(7, np.inf), (INF,) * 7])
def test_no_rated_joint_is_refused(tau, no_planning):
    """inf for every joint is no limit at all: refused in one line (not a silent time-optimal cycle)."""
    _refused(tau, r"tau_rms: no joint is rated \(inf for all 7\), so nothing limits the cycle; rate at least one")


@pytest.mark.parametrize("tau", [None, "30", b"30", {"a": 1}, np.ones((7, 1)), np.array(30.0), object()])
def test_not_numbers_at_all(tau, no_planning):
    _refused(tau, r"tau_rms: expected a rating > 0 N·m \(inf: not rated\) for every joint or one per joint \(7\)")


# --------------------------------------------------------------------------------------- the cell file
def test_cell_file_takes_inf_for_an_unrated_joint(tmp_path):
    from scenarios.palletizing import load_cell, plan_pallet
    cell = load_cell(_cell_with(tmp_path, "tau_rms = [inf, 1000, inf, inf, inf, inf, inf]"), check_reach=False)
    assert np.isinf(cell.tau_rms).sum() == 6 and cell.tau_rms[1] == 1000
    report = plan_pallet(cell, quick=True, nominal=False, check_collisions=False)     # cool enough: no solve
    thermal = json.loads(json.dumps(report.summary()["thermal"], allow_nan=False))
    assert thermal["tau_rms"] == [None, 1000.0] + [None] * 5 and thermal["rms_ratio"][0] is None
    assert thermal["unrated"] == [n for n in NAMES if n != "iiwa_joint_2"] and thermal["convex_solves"] == 0


@pytest.mark.parametrize("text, message", [
    ("tau_rms = [inf, inf, inf, inf, inf, inf, inf]", r"thermal\.tau_rms: no joint is rated"),
    ("tau_rms = inf", r"thermal\.tau_rms: no joint is rated"),
    ("tau_rms = [inf, nan, 30, 30, 30, 30, 30]", r"thermal\.tau_rms: joint iiwa_joint_2 \(#1\): expected a rating"),
    ("tau_rms = [inf, 40, inf, inf, inf, '5', inf]", r"thermal\.tau_rms: joint iiwa_joint_6 \(#5\): "),
    ("tau_rms = [inf, 40, inf, inf, inf, inf, true]", r"thermal\.tau_rms: joint iiwa_joint_7 \(#6\): "),
    ("tau_rms = [inf, 40, -inf, inf, inf, inf, 0]", r"thermal\.tau_rms: joint iiwa_joint_3 \(#2\): "),
    ("tau_rms = [40, 40]", r"thermal\.tau_rms: expected one rating per joint \(7\), got 2"),
])
def test_cell_file_bad_ratings_name_the_file_field_and_joint(tmp_path, text, message):
    from scenarios.palletizing import load_cell
    path = _cell_with(tmp_path, text)
    with pytest.raises(InputError, match=rf"^{re.escape(str(path))}: {message}") as exc:
        load_cell(path, check_reach=False)
    assert "\n" not in str(exc.value)


def test_fraction_leaves_joints_without_a_torque_limit_unrated():
    """tau_rms_fraction × tau_max: inf (not rated) where the robot has no torque limit; refused when no joint
    has one (it refused any robot with an unlimited joint before)."""
    from scenarios.palletizing.cell_options import read_thermal
    tau_max = np.array(robot().tau_max, dtype=float)
    no_rates = dict(planner_options=dict)                   # (a Cell's without [limits] or [controller]: no options)
    part = SimpleNamespace(robot=robot().with_limits(tau_max=np.where(np.arange(7) < 3, tau_max, INF)), slots=[0],
                           **no_rates)
    read_thermal("c.toml", {"thermal": {"tau_rms_fraction": 0.5}}, part)
    np.testing.assert_array_equal(part.tau_rms, np.where(np.arange(7) < 3, 0.5 * tau_max, INF))
    none = SimpleNamespace(robot=robot().with_limits(tau_max=np.full(7, INF)), slots=[0], **no_rates)
    with pytest.raises(InputError, match=r"^c\.toml: thermal\.tau_rms_fraction: the robot has no joint with a torque"):
        read_thermal("c.toml", {"thermal": {"tau_rms_fraction": 0.5}}, none)


@pytest.mark.parametrize("rating", [1e-300, 1e-6])
def test_a_rating_far_below_the_motion_is_refused_at_once(rating):
    """Joint 1 (no gravity load at the end posture) rated far below its 24 N·m over the time-optimal cycle: one
    line naming tau_rms and the joint, after the time-optimal plans only (1e-300 reached SCS as a raw
    "ScsWork allocation error", 1e-6 planned for 34 s and then blamed dt)."""
    from toppra_app.errors import InfeasiblePathError
    tau = np.full(7, INF)
    tau[0] = rating
    with pytest.raises(InfeasiblePathError, match=r"^tau_rms: joint iiwa_joint_1 \(#0\) rated .* below its RMS over "
                       r"the time-optimal cycle .* is refused; check the rating and its unit") as err:
        plan_cycle_with_rms_limit(robot(), list(paths()), tau, grid=GRID)
    assert err.value.argument == "tau_rms"


def test_a_motion_that_would_crawl_is_named_not_a_motion_stops(monkeypatch):
    """Between that refusal and a plannable rating (joint 1 at 1e-3 N·m, 2.4e4× below its RMS), the rounds' θ̇²
    reaches 0 on an interval and the time law refuses it (`MotionStops`, after ~25 s): the user gets tau_rms and
    the joint instead. (The rounds are stood in for here: `_plan_from_b` raising as it did.)"""
    from toppra_app.errors import InfeasiblePathError
    from toppra_app.objectives import thermal
    from toppra_app.trajectory import MotionStops

    def stops(mv, b):
        raise MotionStops("TimeLaw: the speed is zero on the whole interval 0")
    monkeypatch.setattr(thermal, "_plan_from_b", stops)
    with pytest.raises(InfeasiblePathError, match=r"^tau_rms: joint iiwa_joint_3 \(#2\) rated .*stops on the grid"):
        plan_cycle_with_rms_limit(robot(), list(paths()), only(2), grid=GRID)
