"""What holds the limits between grid points when θ̈ is linear per interval, and at rest ends:

* `verify.between_peaks` — the extreme of the parabola through three neighbouring sub-samples: exact on
  quadratics, third order on smooth values, and against a 128-sub-sample check of real plans;
* `socp.stations.with_ends` — the boundary values taken into the first and last intervals' rows: the
  same rows wherever β_0, β_N hold their values (hypothesis), renormalised;
* a rest end with strong viscous friction (its tangent's coefficient on β_0 is huge): planned within the
  limits in a few solves, where the amplified tolerance of β_0 = 0 had left the torque 2 % over at θ_0
  through every repair and two grid splits.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from toppra_app import JointPath, TimeOptimalPlanner
from toppra_app.socp import stations as st
from toppra_app.socp.problem import UNUSED
from toppra_app.verify import SubSamples, between_peaks, check_time_law


@settings(max_examples=60, deadline=None)
@given(hs.floats(-5, 5), hs.floats(-5, 5), hs.floats(-5, 5), hs.integers(3, 17))
def test_peaks_of_a_quadratic_are_exact(c0, c1, c2, S1):
    """Values of a quadratic at S1 equally spaced points: its largest |value| on [0, 1] (at an end or its
    vertex) equals the largest of the samples and the peaks found between them (to rounding)."""
    x = np.linspace(0.0, 1.0, S1)
    f = lambda t: c0 + c1 * t + c2 * t * t                                   # noqa: E731
    v = f(x)[None, :, None]
    found = max(np.abs(v).max(), between_peaks(v).max())
    top = [0.0, 1.0] + ([-c1 / (2 * c2)] if c2 != 0 and 0 <= -c1 / (2 * c2) <= 1 else [])
    exact = np.abs(f(np.array(top))).max()
    assert found == pytest.approx(exact, rel=1e-9, abs=1e-12)


def test_peaks_of_smooth_values_converge_to_third_order():
    """sin(ω t) on an interval whose peak lies between samples: the samples alone miss it by O(h²), the
    parabolas by O(h³)."""
    errs_samples, errs_peaks = [], []
    for S in (8, 16, 32):
        x = np.linspace(0.0, 1.0, S + 1)
        v = np.sin(3.0 * x + 0.37)[None, :, None]
        errs_samples.append(1.0 - np.abs(v).max())
        errs_peaks.append(abs(1.0 - max(np.abs(v).max(), between_peaks(v).max())))
    assert errs_samples[0] > 1e-3
    assert errs_peaks[0] < 0.05 * errs_samples[0]
    assert errs_peaks[2] < errs_peaks[0] / 30                                # ~ h³: 64× from 8 to 32


@pytest.fixture(scope="module")
def iiwa():
    import dynamics
    return dynamics.load_robot("iiwa7")


def test_check_finds_the_peaks_a_dense_check_finds(iiwa):
    """A plan with θ̈ linear per interval, not repaired (max_rounds=0): the check on 8 sub-samples with the
    peaks between them reports every kind's ratio to within 1e-4 of a check on 128 sub-samples, where the
    sub-samples alone may miss more."""
    rng = np.random.default_rng(3)
    W = iiwa.q_min + rng.uniform(0.2, 0.8, size=(5, iiwa.n)) * (iiwa.q_max - iiwa.q_min)
    path = JointPath.from_waypoints(W)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        plan = TimeOptimalPlanner(iiwa, path, max_rounds=0).plan()
    law = plan.law
    assert law.linear
    coarse = check_time_law(iiwa, SubSamples.build(path, law.theta, 8), law.b, law.d)
    fine = check_time_law(iiwa, SubSamples.build(path, law.theta, 128), law.b, law.d)
    for kind in ("torque", "velocity"):
        a, b = coarse.ratios[kind].max(axis=1), fine.ratios[kind].max(axis=1)
        assert np.all(a >= b - 1e-4), kind                 # (the fine check's own peaks: ≤ 1e-7 above)
        assert np.all(a <= b + 1e-4), kind


@settings(max_examples=40, deadline=None)
@given(hs.integers(1, 5), hs.integers(0, 10_000), hs.booleans(), hs.floats(0.0, 2.0), hs.floats(0.0, 2.0))
def test_boundary_values_taken_into_the_rows_keep_their_meaning(N, seed, linear, start, end):
    """Rows of the first and last intervals with β_0, β_N folded in: for any (β_1 … β_{N−1}, δ, r) and the
    fixed ends (r_0 = √β_0, r_N = √β_N), each row's value minus its bound has the sign it had before,
    scaled by a positive factor; the other intervals' rows are unchanged; rows left with no coefficient
    become unused where they hold and stay infeasible where they do not."""
    rng = np.random.default_rng(seed)
    R = 4
    keys = ("u", "w", "gl", "gr") + (("v",) if linear else ())
    values = {k: rng.normal(size=N * R) for k in keys}
    values["h"] = rng.normal(size=N * R)
    values["h"][rng.random(N * R) < 0.2] = UNUSED
    values["u"][0] = values["w"][-1] = 5.0                     # (one row of each end made mostly β_end)
    ends = np.array([start, end])
    out = st.with_ends(values, ends, N)
    assert np.array_equal(out["ends"], ends)
    for _ in range(20):
        beta = np.r_[start, rng.uniform(0, 2, N - 1), end]
        r = np.sqrt(beta) * rng.uniform(0.5, 1.0, N + 1)
        r[0], r[-1] = np.sqrt(start), np.sqrt(end)
        d = rng.normal(size=N)
        for j in range(N):
            for k in range(R):
                i = j * R + k
                if values["h"][i] >= UNUSED:
                    assert out["h"][i] >= UNUSED
                    continue
                x = (beta[j], beta[j + 1], r[j], r[j + 1]) + ((d[j],) if linear else ())
                old = sum(values[key][i] * xi for key, xi in zip(keys, x)) - values["h"][i]
                new = sum(out[key][i] * xi for key, xi in zip(keys, x)) - out["h"][i]
                if out["h"][i] >= UNUSED:                      # nothing left: held for every value
                    assert old <= 1e-9
                    continue
                if j not in (0, N - 1):
                    assert new == old
                    continue
                coef = max(abs(out[key][i]) for key in keys)
                assert coef == pytest.approx(1.0) or coef == 0.0
                if coef == 0.0:
                    assert old > 0 and new > 0                 # infeasible whatever the variables
                else:
                    assert np.sign(new) == np.sign(old) or abs(old) < 1e-9
    assert np.all(out["u"][:R] == 0) and np.all(out["gl"][:R] == 0)            # the ends' own coefficients
    assert np.all(out["w"][(N - 1) * R:] == 0) and np.all(out["gr"][(N - 1) * R:] == 0)


def test_rest_end_with_strong_viscous_friction_keeps_the_limit():
    """Panda (URDF) with 1000× its damping, an out-and-back path from rest: the plan keeps every limit
    within tol in at most six solves (two re-linearise the viscous tangent, and a solve of the tangent
    objective may take a second one that certifies it), on its first grid (before the boundary values were taken into the
    rows the torque stayed 2.2 % over at θ_0 through three repairs and two splits)."""
    from test_planner_any_path import panda_urdf_robot, random_waypoints
    r = panda_urdf_robot()
    r = r.replace(viscous=1000.0 * r.viscous)
    rng = np.random.default_rng(11)
    W = random_waypoints(r, rng, 5)
    W = np.array([W[0], W[1], W[0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        planner = TimeOptimalPlanner(r, JointPath.from_waypoints(W))
        plan = planner.plan()
    assert plan.iterations <= 6 and plan.worst_ratio <= 1.001
    assert not any(x["action"] == "split" for x in plan.refinements)
    assert plan.law.theta.size == planner.grid.size


def test_dense_path_keeps_its_limits_between_sub_samples():
    """A dense noisy waypoint path (iiwa 7, 200 samples with 1e-4 rad noise, the planner suite's) on 600
    intervals with θ̈ constant: next to the spline's knots the torque bends between the check's sub-samples,
    so dense plans check the peaks between them too. Judged by Pinocchio's RNEA on 1 ms samples: within
    0.1 % of every limit (it was 0.32 % over with the sub-samples alone)."""
    pin = pytest.importorskip("pinocchio")
    from benchmarks.cases import robot as case_robot, suite
    from benchmarks.peers import to_pinocchio
    case = next(c for c in suite() if c.name == "iiwa7/dense-0")
    r = case_robot(case.robot)
    plan = TimeOptimalPlanner(r, JointPath.from_waypoints(case.waypoints), 600).plan(sd_end=case.sd_end)
    smp = plan.sample(1e-3)
    model = to_pinocchio(r)
    data = model.createData()
    tau = np.array([pin.rnea(model, data, q, v, a) for q, v, a in zip(smp.q, smp.qd, smp.qdd)])
    tau = tau + r.viscous * smp.qd + r.coulomb * np.sign(smp.qd)
    worst = max(float(np.max(np.abs(tau) / r.tau_max)), float(np.max(np.abs(smp.qd) / r.qd_max)))
    assert worst <= 1.001


def test_a_reversed_dense_plan_is_checked_as_its_forward_plan():
    """`TimeOptimalPlan.reversed` (palletize's return moves) plays the same motion backwards: the same torques,
    so the same worst ratio. On a dense waypoint path (iiwa 7, the suite's 200 noisy samples, frictionless, 600
    intervals) the planner checks the peaks between sub-samples; the reversed plan checked the sub-samples only
    and read 1.000499 of the torque limit where the forward plan and Pinocchio's RNEA on 0.1 ms samples of the
    reversed motion read 1.00058-1.00060 (on a UR10 pallet cell 1.00050 against 1.00086)."""
    pin = pytest.importorskip("pinocchio")
    from benchmarks.cases import robot as case_robot, suite
    from benchmarks.peers import to_pinocchio
    case = next(c for c in suite() if c.name == "iiwa7/dense-0")
    r = case_robot(case.robot).replace(coulomb=np.zeros(7), viscous=np.zeros(7))
    W = np.asarray(case.waypoints)
    planner = TimeOptimalPlanner(r, JointPath.from_waypoints(W), 600)
    forward = planner.plan()
    assert planner.dense
    rev = forward.reversed(JointPath.from_waypoints(W[::-1]))
    smp = rev.sample(1e-4)
    model = to_pinocchio(r)
    data = model.createData()
    tau = np.array([pin.rnea(model, data, q, v, a) for q, v, a in zip(smp.q, smp.qd, smp.qdd)])
    sampled = float(np.max(np.abs(tau) / r.tau_max))
    assert rev.worst["torque"].ratio == pytest.approx(forward.worst["torque"].ratio, abs=1e-9)
    assert rev.worst["torque"].ratio >= sampled - 2e-6


def test_limits_peaking_at_spline_knots_inside_intervals_are_checked_there():
    """300 noisy waypoints (iiwa 7, 1e-4 rad) on a 300-interval grid: the spline's knots fall inside grid
    intervals, where the torque has a kink (q‴ jumps) that peaks between the check's sub-samples — 9.2 %
    over the limit on 1 ms samples by Pinocchio while the sub-samples said 0.09 %. The check evaluates the
    knots too (`samples.KnotSamples`) and a repair puts a station there: judged by Pinocchio's RNEA on 1 ms
    samples, within 0.1 % of every limit."""
    pin = pytest.importorskip("pinocchio")
    import dynamics
    from benchmarks.peers import to_pinocchio
    rng = np.random.default_rng(0)
    a = np.array([0, 0.3, 0, -1.2, 0, 0.8, 0])
    b = np.array([1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5])
    W = np.linspace(a, b, 300) + rng.normal(scale=1e-4, size=(300, 7))
    r = dynamics.load_robot("iiwa7")
    path = JointPath.from_waypoints(W)
    planner = TimeOptimalPlanner(r, path, 300)
    assert planner.grid.size == 301 and planner.sub.knots is not None and planner.sub.knots.j.size > 250
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # (the gap estimate on this coarse user grid)
        plan = planner.plan()
    assert plan.worst_ratio <= 1.001
    smp = plan.sample(1e-3)
    model = to_pinocchio(r)
    data = model.createData()
    tau = np.array([pin.rnea(model, data, q, v, a) for q, v, a in zip(smp.q, smp.qd, smp.qdd)])
    tau = tau + r.viscous * smp.qd + r.coulomb * np.sign(smp.qd)
    assert float(np.max(np.abs(tau) / r.tau_max)) <= 1.001
    assert float(np.max(np.abs(smp.qd) / r.qd_max)) <= 1.001


def test_check_at_knots_equals_pinocchio_there():
    """The check's values at the knots inside intervals are the exact law's: Pinocchio's RNEA at the
    knot with θ̇², θ̈ of the law there gives the same largest ratio per interval (on a 40-waypoint path on
    a 30-interval grid, a made-up profile)."""
    pin = pytest.importorskip("pinocchio")
    import dynamics
    from benchmarks.peers import to_pinocchio
    from toppra_app.trajectory import TimeLaw
    from toppra_app.verify import SubSamples, check_time_law
    rng = np.random.default_rng(3)
    W = np.linspace(np.zeros(7), np.full(7, 0.8), 40) + rng.normal(scale=1e-3, size=(40, 7))
    r = dynamics.load_robot("iiwa7")
    path = JointPath.from_waypoints(W)
    theta = np.linspace(path.s_start, path.s_end, 31)
    sub = SubSamples.build(path, theta, 2)
    K = sub.knots
    at_knot = np.isin(K.theta, path.knots)
    assert K is not None and at_knot.sum() == 36      # (knots 13 and 26 of 39 are sub-samples); the others are
    assert np.all(np.isin(K.j[~at_knot], [0, 29]))     # `samples.END_SAMPLES`, inside the end intervals
    law = TimeLaw(theta, 0.3 + 0.2 * np.sin(np.arange(31.0)))
    check = check_time_law(r, sub, law.b)
    model = to_pinocchio(r)
    data = model.createData()
    sd, sdd, _ = law.at_theta(K.theta)
    S = path.evaluate(K.theta)
    qd, qdd = S.dq * sd[:, None], S.dq * sdd[:, None] + S.ddq * (sd * sd)[:, None]
    tau = np.array([pin.rnea(model, data, q, v, a) for q, v, a in zip(S.q, qd, qdd)])
    tau = tau + r.viscous * qd + r.coulomb * np.sign(qd)
    ratio = np.abs(tau) / r.tau_max
    assert np.all(check.ratios["torque"][K.j] >= ratio - 1e-12)
    top = np.zeros_like(check.ratios["torque"])
    np.maximum.at(top, K.j, ratio)
    hit = np.isclose(check.ratios["torque"], top, rtol=0, atol=1e-12) & (top > 0)
    assert hit.any()                                     # some interval's worst point is a knot, at its fraction
    js, ks = np.nonzero(hit)
    assert np.all([np.any(np.isclose(check.at["torque"][j, k], K.u[K.j == j])) for j, k in zip(js, ks)])


def test_split_grid_splits_at_the_knots_inside_a_bad_interval():
    """Where repairs stall, an interval with spline knots inside is split at those knots (the limits kink
    there), one without at its middle; the result is the next compiled size."""
    from toppra_app.planning.grid import SIZES, split_grid
    theta = np.linspace(0.0, 1.0, 201)
    bad = np.zeros(200, bool)
    bad[[10, 100]] = True
    knots = np.array([0.0, 0.0512, 0.0537, 0.5, 1.0])            # two inside interval 10, one a grid point
    new = split_grid(theta, bad, knots)
    assert new.size - 1 in SIZES and np.isin(theta, new).all()
    assert np.isin([0.0512, 0.0537], new).all() and 0.0525 not in new
    assert np.isclose(new, 0.5025).any()                         # interval 100 (no knot) halved
    assert np.array_equal(split_grid(theta, bad), split_grid(theta, bad, None))


@pytest.mark.parametrize("n_wp", [300, 3000, 5000, 10_000, 15_001])
def test_default_grid_puts_a_point_on_every_knot_of_long_waypoint_lists(n_wp):
    """Past the default grid's largest usual size (4096) a waypoint list with more knots than that grid
    holds gets the smallest compiled size that holds them all, up to the 20 000-interval bound: with 2–3
    knots inside an interval the limits peak at kinks no station follows and repairs stall (10 000 noisy
    waypoints: 1.6 % over a torque limit at 6400 intervals; within 0.09 % by Pinocchio at 16 384 with every
    knot, docs/planner.md). Beyond the bound the grid is the largest size, points where the grid puts them."""
    from toppra_app.planning.grid import (MAX_INTERVALS, SIZES, default_grid, intervals_for, takes_knots,
                                         with_knots)
    rng = np.random.default_rng(1)
    W = np.linspace(np.zeros(2), np.ones(2), n_wp) + rng.normal(scale=1e-4, size=(n_wp, 2))
    path = JointPath.from_waypoints(W)
    N = intervals_for(path)
    inner = len(path.knots) - 2
    assert N in SIZES and N >= min(2 * (inner + 1), 4096)
    assert takes_knots(inner, N)
    assert N == MAX_INTERVALS or not takes_knots(inner, SIZES[SIZES.index(N) - 1]) or N <= 4096
    grid = with_knots(lambda k: default_grid(path, k), path.knots, N)
    assert grid.size == N + 1 and np.isin(path.knots, grid).all()
    if n_wp == 15_001:                                            # the last that fits; one more does not
        assert N == MAX_INTERVALS and not takes_knots(inner + 2, MAX_INTERVALS)
