"""The tangent objective (1′) of `socp.problem`: its weights are the gradient of the duration model (finite
differences), the duration model is convex (so its tangent under-estimates it: the certificate), plans with
it equal those with the time cones (1)–(2) and are never longer than the certificate allows, the re-solve
that certifies a plan may leave out far rows without changing it, and a bad option is refused."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import dynamics
from toppra_app import JointPath, plan_time_optimal
from toppra_app.errors import InputError
from toppra_app.socp import stations as st
from toppra_app.socp.anchors import anchors
from toppra_app.socp.problem import UNUSED
from toppra_app.socp.tangent import _top, model_time, model_time_gradient, tangent_bound, time_weights

from test_planner_any_path import panda_urdf_robot, random_waypoints


def _profile(rng, N, linear):
    beta = rng.uniform(0.05, 2.0, N + 1)
    mid = rng.uniform(0.05, 2.0, N) if linear else None
    dsig = rng.uniform(0.2, 1.0, N)
    return beta, mid, dsig / dsig.sum()


@pytest.mark.parametrize("linear", [False, True])
def test_gradient_of_the_duration_model_equals_finite_differences(linear):
    rng = np.random.default_rng(3)
    beta, mid, dsig = _profile(rng, 12, linear)
    top = 10.0                                           # (fixed: the floor must not move under the differences)
    g, gm = model_time_gradient(beta, mid, dsig, top)
    h = 1e-6
    for i in range(beta.size):
        e = np.zeros(beta.size)
        e[i] = h
        fd = (model_time(beta + e, mid, dsig, top) - model_time(beta - e, mid, dsig, top)) / (2 * h)
        assert g[i] == pytest.approx(fd, rel=1e-6)
    if linear:
        for j in range(mid.size):
            e = np.zeros(mid.size)
            e[j] = h
            fd = (model_time(beta, mid + e, dsig, top) - model_time(beta, mid - e, dsig, top)) / (2 * h)
            assert gm[j] == pytest.approx(fd, rel=1e-6)


def test_weights_are_the_gradient_on_the_solvers_variables():
    """With θ̈ linear the solver's variables are β and ε, β(½) = (β_j + β_{j+1})/2 − ε_j/4: the weights are the
    gradient of T(β, β(½)(β, ε)) there, up to one positive factor."""
    rng = np.random.default_rng(5)
    beta, mid, dsig = _profile(rng, 9, True)
    eps = 4.0 * (0.5 * (beta[:-1] + beta[1:]) - mid)
    top = _top(beta, mid)

    def T(x):
        b, e = x[:beta.size], x[beta.size:]
        return model_time(b, 0.5 * (b[:-1] + b[1:]) - 0.25 * e, dsig, top)
    x0 = np.concatenate([beta, eps])
    fd = np.array([(T(x0 + h) - T(x0 - h)) / 2e-7 for h in 1e-7 * np.eye(x0.size)])
    w = time_weights(beta, mid, dsig)
    assert np.max(np.abs(w)) == pytest.approx(1.0)
    np.testing.assert_allclose(w * np.max(np.abs(fd)), fd, rtol=1e-5, atol=1e-9 * np.max(np.abs(fd)))


@settings(max_examples=60, deadline=None)
@given(seed=hs.integers(0, 2 ** 32 - 1), linear=hs.booleans(), N=hs.integers(1, 30),
       spread=hs.floats(1e-3, 1e3))
def test_the_tangent_under_estimates_the_duration_model(seed, linear, N, spread):
    """T is convex, so T(ref) + ∇T(ref)·(x − ref) ≤ T(x) for any profiles (what makes `tangent_bound` a bound);
    the bound is 0 at x = ref."""
    rng = np.random.default_rng(seed)
    ref = _profile(rng, N, linear)
    beta = ref[0] * np.exp(rng.normal(0, np.log1p(spread) / 3, N + 1))
    mid = ref[1] * np.exp(rng.normal(0, np.log1p(spread) / 3, N)) if linear else None
    top = _top(ref[0], ref[1])
    g, gm = model_time_gradient(ref[0], ref[1], ref[2], top)
    lower = model_time(ref[0], ref[1], ref[2], top) + g @ (beta - ref[0]) + (gm @ (mid - ref[1]) if linear else 0.0)
    assert lower <= model_time(beta, mid, ref[2], top) * (1 + 1e-12)
    assert abs(tangent_bound(ref[:2], ref[:2], ref[2])) < 1e-12


def test_slack_and_left_out_rows():
    rng = np.random.default_rng(1)
    N, R = 4, 3
    values = {k: rng.normal(size=N * R) for k in ("u", "w", "gl", "gr", "v", "h")}
    values["h"][5] = UNUSED
    beta, delta = rng.uniform(0.1, 1.0, N + 1), rng.normal(size=N)
    s = st.slack(values, beta, delta)
    for i in range(N * R):
        j = i // R
        lhs = values["u"][i] * beta[j] + values["w"][i] * beta[j + 1] + values["gl"][i] * np.sqrt(beta[j]) + \
            values["gr"][i] * np.sqrt(beta[j + 1]) + values["v"][i] * delta[j]
        assert s[i] == (np.inf if i == 5 else pytest.approx(values["h"][i] - lhs))
    values["span"] = np.ones(N)
    drop = np.arange(N * R) % 2 == 0
    out = st.without(values, drop)
    kept = anchors(values, drop)
    assert np.all(out["h"][drop & ~kept] == UNUSED) and np.all(out["h"][~drop | kept] == values["h"][~drop | kept])
    assert np.all(values["h"][::2][values["h"][::2] < UNUSED] < UNUSED)        # (the input is not changed)


@settings(max_examples=80, deadline=None)
@given(seed=hs.integers(0, 2 ** 32 - 1), N=hs.integers(1, 12), R=hs.integers(3, 6), linear=hs.booleans())
def test_the_anchors_alone_make_a_bounded_program(seed, N, R, linear):
    """Every other row left out (`without` everything), the tangent program on the anchors is bounded for any
    weights — the left-out rows once made it "dual infeasible" — where each interval has rows of the kinds the
    anchors need (a speed bound at each end, a middle row with v < 0); an independent LP solver (HiGHS) on it."""
    from scipy.optimize import linprog
    rng = np.random.default_rng(seed)
    M = N * R
    values = {k: rng.normal(size=M) for k in ("u", "w", "gl", "gr")}
    values["h"] = rng.uniform(0.05, 3.0, M)          # (β = ε = 0 feasible: bounded is then solved)
    values["v"] = rng.normal(size=M) if linear else np.zeros(M)
    values["h"][rng.random(M) < 0.2] = UNUSED
    slot = np.arange(N) * R
    # the first slots of each interval: what a speed bound at θ_j, at θ_{j+1} and a middle row give
    for k, (u, w, v) in enumerate(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)) + (((0.5, 0.5, -0.25),) if linear else ())):
        for key, c in zip(("u", "w", "v", "gl", "gr"), (u, w, v, 0.0, 0.0)):
            values[key][slot + k] = c * rng.uniform(0.5, 2.0, N) if c else 0.0
        values["h"][slot + k] = rng.uniform(0.1, 3.0, N)
    if linear:
        values["dsig"] = np.full(N, 1.0 / N)
    else:
        values["span"] = np.ones(N)
    out = st.without(values, np.ones(M, bool))
    used = out["h"] < UNUSED
    assert used.sum() <= 2 * N + 1 and np.all(anchors(values, np.ones(M, bool)) <= (values["h"] < UNUSED))
    P, E = N + 1, (N if linear else 0)
    j = np.arange(M) // R
    A = np.zeros((M, P + E))
    A[np.arange(M), j] += values["u"]
    A[np.arange(M), j + 1] += values["w"]
    if linear:
        A[np.arange(M), P + j] += values["v"]
    A, b = A[used], out["h"][used]                  # (√β terms dropped: g ≥ 0 on anchors, a relaxation)
    if linear:                                      # β(½) = (β_j + β_{j+1})/2 − ε_j/4 ≥ 0
        mid = np.zeros((N, P + E))
        mid[np.arange(N), np.arange(N)] = mid[np.arange(N), np.arange(N) + 1] = -0.5
        mid[np.arange(N), P + np.arange(N)] = 0.25
        A, b = np.vstack([A, mid]), np.r_[b, np.zeros(N)]
    c = np.r_[-rng.uniform(0.1, 1.0, P), rng.normal(size=E)]
    bounds = [(0, None)] * P + [(None, None)] * E
    got = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    assert got.status == 0, got.message


def test_no_reduced_solve_fails_on_the_suite_path_that_did():
    """The suite's iiwa7/random-1: its first solve, far rows left out, was "dual infeasible" and solved again with
    every row; with the anchors kept every solve is optimal."""
    from benchmarks.cases import robot, suite
    from toppra_app.planning import diagnose
    case = next(c for c in suite() if c.name == "iiwa7/random-1")
    statuses, solve = [], diagnose.solve_station_problem

    def recorded(*args, **kw):
        got = solve(*args, **kw)
        statuses.append(got[0])
        return got
    diagnose.solve_station_problem = recorded
    try:
        plan_time_optimal(robot(case.robot), JointPath.from_waypoints(case.waypoints), sd_end=case.sd_end)
    finally:
        diagnose.solve_station_problem = solve
    assert statuses and all(s == "optimal" for s in statuses), statuses


def _plans(robot, W, **kw):
    return {obj: plan_time_optimal(robot, JointPath.from_waypoints(W), time_objective=obj, **kw)
            for obj in ("cone", "tangent")}


@pytest.mark.parametrize("law", ["constant", "linear"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plans_with_the_tangent_equal_those_with_the_time_cones(seed, law):
    """iiwa 7, random 4–6-waypoint paths, and the Panda URDF with 1000× its damping (viscous friction ~10 %
    of τ_max, where the first tangent is 0.5 % off): the same durations to 2e-4 (their repairs differ: the
    Panda's cone plan repaired 12 stations, the tangent's 2; both within 0.07 % of converged), the tangent's never longer
    than the cones' by more than its certificate (`TANGENT_TOL`) and the solver's tolerance, both within
    the limits. On the same grid: the swing refinement may split the two differently (the Panda, θ̈ linear,
    default grid: the cones' plan went to 256 intervals, +0.005 % from converged, the tangent's stayed on
    160, +0.057 %)."""
    from toppra_app.planning.planner import TANGENT_TOL
    rng = np.random.default_rng(seed)
    robot = dynamics.load_robot("iiwa7") if seed < 2 else panda_urdf_robot().replace(
        viscous=1000.0 * panda_urdf_robot().viscous)
    W = random_waypoints(robot, rng, 4 + seed)
    plans = _plans(robot, W, time_law=law, grid=160)
    cone, tangent = plans["cone"].duration, plans["tangent"].duration
    assert tangent == pytest.approx(cone, rel=2e-4)
    assert tangent <= cone * (1 + TANGENT_TOL + 1e-6)
    assert all(p.worst_ratio <= 1.001 for p in plans.values())


def counted_solves(monkeypatch):
    """(the iiwa 7, 5 random waypoints, a list that receives the number of rows of every solve)."""
    import toppra_app.planning.diagnose as diagnose
    robot = dynamics.load_robot("iiwa7")
    W = random_waypoints(robot, np.random.default_rng(4), 5)
    used = []
    real = diagnose.solve_station_problem

    def spy(N, R, values, *args, **kw):
        used.append(int((values["h"] < UNUSED).sum()))
        return real(N, R, values, *args, **kw)
    monkeypatch.setattr(diagnose, "solve_station_problem", spy)
    return robot, W, used


def with_every_row(monkeypatch, robot, W, used):
    """The plan with no row left out of any solve, `used` counting its solves afresh."""
    import toppra_app.planning.planner as planner_module
    monkeypatch.setattr(planner_module, "FAR_SLACK", np.inf)
    monkeypatch.setattr(planner_module, "FAR_SLACK_SOLVED", np.inf)
    used.clear()
    return plan_time_optimal(robot, JointPath.from_waypoints(W))


def test_solves_may_leave_out_far_rows(monkeypatch):
    """Every solve of the tangent objective leaves out the rows far from binding at its reference (the
    sweeps' profile, then the last solution, with a smaller slack: `FAR_SLACK_SOLVED`); solving with every row gives the same plan (to the solver's
    tolerance), and it did leave rows out, in the first solve and in the one that certifies again."""
    import toppra_app.planning.planner as planner_module
    robot, W, used = counted_solves(monkeypatch)
    monkeypatch.setattr(planner_module, "TANGENT_TOL", 1e-12)          # (certify again whatever the first bound)
    fewer = plan_time_optimal(robot, JointPath.from_waypoints(W))
    left_out = list(used)
    full = with_every_row(monkeypatch, robot, W, used)
    assert len(left_out) >= 2 and len(used) >= 2 and used[1] == used[0]
    assert left_out[0] < 0.9 * used[0] and left_out[1] < 0.9 * used[1]
    assert fewer.duration == pytest.approx(full.duration, rel=1e-6)


def test_a_bad_time_objective_is_refused():
    rng = np.random.default_rng(0)
    robot = dynamics.load_robot("iiwa7")
    with pytest.raises(InputError, match="time_objective"):
        plan_time_optimal(robot, JointPath.from_waypoints(random_waypoints(robot, rng, 3)), time_objective="lp")


def test_viscous_friction_on_the_tangent_needs_no_cones(monkeypatch):
    """The Panda URDF (its damping as viscous friction): with the tangent objective the convex side of the
    friction is on its tangent too (re-linearised where the exact row binds), so its solves are linear
    programs without the √β cones — and the plan equals the cones' to 1e-4 and keeps the limits."""
    import toppra_app.planning.cache as cache
    seen = []
    real = cache.acquire

    def spy(N, R, K=0, linear=False, tangent=False, roots=True):
        seen.append((tangent, roots))
        return real(N, R, K, linear, tangent, roots)
    monkeypatch.setattr(cache, "acquire", spy)
    robot = panda_urdf_robot()
    W = random_waypoints(robot, np.random.default_rng(1), 5)
    plans = _plans(robot, W)
    assert (False, True) in seen and (True, False) in seen and (True, True) not in seen
    assert plans["tangent"].duration == pytest.approx(plans["cone"].duration, rel=1e-4)
    assert plans["tangent"].worst_ratio <= 1.001


@pytest.mark.parametrize("seed", [0, 1])
def test_controller_plans_with_the_tangent(seed):
    """The controller profile (torque-rate limit, headroom) with θ̈ constant per interval plans with the
    tangent objective on `ControllerProblem` (its point rows, caps and scaled copies after β): on random
    paths, where one rate pass settles, the duration equals the cones' to 1e-4 and every limit and the rate
    hold. (With θ̈ linear the controller keeps the cones: the tangent left zero-speed intervals near rest.)"""
    from toppra_app.controller import ControllerProfile
    from toppra_app.planner import TimeOptimalPlanner
    robot = dynamics.load_robot("iiwa7")
    W = random_waypoints(robot, np.random.default_rng(seed), 4)
    prof = ControllerProfile(torque_headroom=0.9, velocity_headroom=0.95, torque_rate_max=1000.0)
    plans = {obj: TimeOptimalPlanner(robot, JointPath.from_waypoints(W), controller=prof, time_objective=obj).plan()
             for obj in ("cone", "tangent")}
    assert plans["tangent"].duration == pytest.approx(plans["cone"].duration, rel=1e-4)
    for p in plans.values():
        assert p.worst_ratio <= 1.001 and p.rate_check["torque_rate"].ratio <= 1.001


def test_a_rest_end_that_needs_nearly_all_the_torque_to_hold_is_warned_about():
    """Panda URDF at 0.6 × rated torque, a random path whose start needs 99.95 % of joint 2's limit to hold:
    its duration depends on how much of the 0.1 % tolerance a plan uses (6.2–9.2 s across grids and
    objectives), which the user is told; a path with room at its ends plans without that warning."""
    robot = panda_urdf_robot()
    W = random_waypoints(robot, np.random.default_rng(8), 5)
    with pytest.warns(RuntimeWarning, match=r"99\.9\d\d % of the torque limit of joint panda_joint2"):
        plan_time_optimal(robot, JointPath.from_waypoints(W))
    W = random_waypoints(robot, np.random.default_rng(1), 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        plan_time_optimal(robot, JointPath.from_waypoints(W))


def test_rows_a_solve_broke_are_added_not_all(monkeypatch):
    """With far rows left out at a threshold so small that the solve breaks some, the next solve adds just
    those (`pinned` in the planner), each solve with fewer rows than all of them, until none is broken; the
    plan equals the one solved with every row (to the solver's tolerance). Before, a broken far row meant a
    solve with every row (ur10-urdf/many-0: 12 520 rows, 65 ms, against ~10 000)."""
    import toppra_app.planning.planner as planner_module
    robot, W, used = counted_solves(monkeypatch)
    monkeypatch.setattr(planner_module, "FAR_SLACK", 1e-4)             # far: almost every row not binding
    monkeypatch.setattr(planner_module, "FAR_SLACK_SOLVED", 1e-4)
    fewer = plan_time_optimal(robot, JointPath.from_waypoints(W))
    tight = list(used)
    full = with_every_row(monkeypatch, robot, W, used)
    assert len(tight) >= 2 and tight[1] > tight[0]                     # the broken rows added ...
    assert max(tight) < 0.9 * max(used)                                # ... never all of them
    assert fewer.duration == pytest.approx(full.duration, rel=1e-6)
    assert fewer.worst_ratio <= 1.001


def test_the_first_tangent_reference_is_capped_and_saves_a_solve_on_a_dense_path():
    """The tangent objective's first reference is the sweeps' profile on the plain rows, capped by the first
    pass's b̄ (`ControllerRows.reference`): the controller's profile keeps the cap, so the plain profile above
    it is no point to linearise at. On this dense path the first certificate was 0.29 at the plain profile
    (5 solves), 0.24 capped (4 solves: fails on the old code), 0.008 % shorter."""
    from benchmarks.bench_controller import profile
    from benchmarks.cases import robot, suite
    from toppra_app.planner import TimeOptimalPlanner
    from toppra_app.planning.controller import ControllerRows
    c = next(c for c in suite(["iiwa7", "ur5e"]) if c.name == "ur5e/dense-0")    # (built-in robots only)
    p = TimeOptimalPlanner(robot(c.robot), JointPath.from_waypoints(c.waypoints), controller=profile()).plan(
        sd_end=c.sd_end)
    assert p.rate_info["solves"] == 4 and p.rate_info["passes"] == 3
    assert p.duration == pytest.approx(5.218013, rel=1e-4)          # the old plan's (−0.008 %)
    assert p.rate_check["torque_rate"].ratio <= 1.001
    rows = ControllerRows.__new__(ControllerRows)
    rows.cap = np.array([0.0, 2.0, 8.0, 2.0, 0.0])
    beta, mids = rows.reference((np.array([0.0, 1.0, 5.0, 6.0, 0.0]), None), 2.0)
    assert np.array_equal(beta, [0.0, 1.0, 4.0, 1.0, 0.0]) and mids is None
