"""Torque-rate and joint-jerk limits (toppra_app.limits.rates): on the Panda with the data-sheet limits
(torque rate 1000 N·m/s, jerk 7500 … 10000 rad/s³, /work/shared/reference/robots.md) the torque rate and
jerk computed from the 1 ms samples (finite differences of plan.sample(1e-3).tau and .qdd) and all the
usual limits are respected within 0.1 %; never faster than the plain time-optimal plan, equal to it when
the rate limits cannot bind; bad inputs raise errors naming the field; a Coulomb-friction jump at a
joint reversal above the torque-rate budget is reported as infeasible."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import dynamics
from toppra_app import JointPath
from fixtures import BENCH_PATHS
from toppra_app.errors import InfeasiblePathError, InputError
from toppra_app.planner import TimeOptimalPlanner, plan_time_optimal

TOL = 1.001
JERK = np.array([7500, 3750, 5000, 6250, 7500, 10000, 10000], dtype=float)
TAU_RATE = 1000.0


@functools.lru_cache(maxsize=None)
def robot():
    return dynamics.load_robot("panda")


@functools.lru_cache(maxsize=None)
def path(name):
    return JointPath.from_waypoints(BENCH_PATHS["panda"][name])


@functools.lru_cache(maxsize=None)
def plain(name):
    """The plan without rate limits, θ̈ constant per interval as in the rate-limit scheme (`sequential`)."""
    return TimeOptimalPlanner(robot(), path(name), time_law="constant").plan()


def sampled_ratios(plan, tau_rate=None, jerk=None):
    """Worst |Δτ/Δt| / τ̇_max and |Δq̈/Δt| / q⃛_max over consecutive 1 ms samples, and the usual limits."""
    s = plan.sample(1e-3)
    dt = np.diff(s.t)[:, None]
    r = robot()
    out = dict(torque=np.max(np.abs(s.tau) / r.tau_max), velocity=np.max(np.abs(s.qd) / r.qd_max),
               acceleration=np.max(np.abs(s.qdd) / r.qdd_max))
    if tau_rate is not None:
        out["torque_rate"] = np.max(np.abs(np.diff(s.tau, axis=0)) / dt / tau_rate)
    if jerk is not None:
        out["jerk"] = np.max(np.abs(np.diff(s.qdd, axis=0)) / dt / jerk)
    return out


def test_panda_torque_rate_and_jerk_straight():
    p = TimeOptimalPlanner(robot(), path("straight"), torque_rate_max=TAU_RATE, jerk_max=JERK).plan()
    ratios = sampled_ratios(p, TAU_RATE, JERK)
    assert all(v <= TOL for v in ratios.values()), ratios
    assert ratios["torque_rate"] > 0.99                   # the torque rate is what limits this motion
    assert p.duration >= plain("straight").duration
    assert p.duration > 1.4 * plain("straight").duration   # (1.47× on the 200-interval grid)
    assert p.rate_check["torque_rate"].ratio <= TOL and p.rate_info["solves"] >= 1
    assert p.worst_ratio <= TOL


def test_panda_jerk_pick_place():
    p = plan_time_optimal(robot(), path("pick-place"), jerk_max=JERK)
    ratios = sampled_ratios(p, jerk=JERK)
    assert all(v <= TOL for v in ratios.values()), ratios
    assert ratios["jerk"] > 0.99
    assert p.duration >= plain("pick-place").duration


def test_huge_rate_limits_change_nothing():
    # the rate-limit solves have the limits at the ends and middle of each interval only (no free stations),
    # so the duration may move by the solver tolerance and the between-grid slack — measured 5e-6, and
    # 2.2e-5 since the planner merges some intervals of low predicted loss (planning.placement) — never more
    p = TimeOptimalPlanner(robot(), path("pick-place"), jerk_max=1e12).plan()
    assert p.duration == pytest.approx(plain("pick-place").duration, rel=5e-5)
    p = TimeOptimalPlanner(robot(), path("straight"), torque_rate_max=1e12, jerk_max=[1e12] * 7).plan()
    assert p.duration == pytest.approx(plain("straight").duration, rel=5e-5)


def test_coulomb_jump_at_reversal_is_infeasible():
    # joint 4 of the Panda reverses on pick-place; 2 F_c = 1.28 N·m > 1000 N·m/s × 1 ms
    with pytest.raises(InfeasiblePathError, match="torque_rate_max.*panda_joint4|torque_rate_max.*#3") as err:
        TimeOptimalPlanner(robot(), path("pick-place"), torque_rate_max=TAU_RATE).plan()
    r = robot()
    need = 2.0 * r.coulomb[3] / 1e-3                      # the message names the rate that joint needs ...
    assert f"torque_rate_max ≥ {need:.4g}" in str(err.value)
    from toppra_app.limits.rates import RateLimits
    rates = np.full(r.n, float(TAU_RATE))
    rates[3] = need * 1.001                               # ... and with it (per joint) the path is not refused
    RateLimits(r, torque_rate_max=rates).check_path(r, path("pick-place"), np.linspace(0.0, 1.0, 201))


@pytest.mark.parametrize("kw, field", [
    (dict(torque_rate_max=-1.0), "torque_rate_max"),
    (dict(torque_rate_max=[1000.0] * 6), "torque_rate_max"),
    (dict(jerk_max=0.0), "jerk_max"),
    (dict(jerk_max=[1.0, 2.0]), "jerk_max"),
    (dict(jerk_max="fast"), "jerk_max"),
    (dict(jerk_max=[np.nan] * 7), "jerk_max"),
    (dict(jerk_max=JERK, rate_dt=-1e-3), "rate_dt"),
])
def test_bad_inputs(kw, field):
    with pytest.raises(InputError, match=field) as exc:
        TimeOptimalPlanner(robot(), path("straight"), grid=20, **kw)
    assert isinstance(exc.value, ValueError)


@settings(max_examples=30, deadline=None)
@given(D=hs.floats(1e-4, 1e3), k=hs.floats(1e-2, 1e6), g0=hs.floats(1.0, 3.0))
def test_rest_to_rest_ramp_is_the_jerk_limited_motion(D, k, g0):
    """(C5′) with both ends at rest and one jump coefficient g at both: the cap is the time-optimal rest-to-rest
    motion with |θ⃛| ≤ L/|g| = k, whose duration is (32 D / k)^{1/3} (the symmetric bang–bang jerk profile: τ =
    (D/2k)^{1/3}, T = 4τ) — integrated here independently as ∫ dθ/√b by scipy's quad. The start and stop ramps
    alone (C5) meet at D/2 with θ̈ still rising: their duration 2 (3D/k)^{1/3} is 9 % shorter than any motion
    the jerk bound allows, and the cap lies below them everywhere."""
    from hypothesis import assume
    from scipy.integrate import quad
    from toppra_app.limits.rates import ramp_profile
    g, L = np.array([g0, 2.0 * g0]), np.array([k * g0, 4.0 * k * g0])     # k = min L/|g| (the second: 2k)
    ends = np.array([0.0, D])

    def b_at(x, rest=(True, True)):
        return float(ramp_profile(np.array([0.0, x, D]), g, g, L, rest)[1])

    T, _ = quad(lambda x: 1.0 / np.sqrt(b_at(x)), 0.0, D, limit=200, epsabs=0.0, epsrel=1e-6)
    assume(np.isfinite(T))
    assert T == pytest.approx((32.0 * D / k) ** (1.0 / 3.0), rel=2e-3)
    x = np.linspace(0.0, D, 41)[1:-1]
    ramp = ramp_profile(np.concatenate([ends[:1], x, ends[1:]]), g, g, L, (True, True))[1:-1]
    one_end = 0.25 * k * k * (6.0 * np.minimum(x, D - x) / k) ** (4.0 / 3.0)
    assert np.all(ramp <= one_end * (1.0 + 1e-12))
    assert ramp.max() == pytest.approx(k * k * (D / (2.0 * k)) ** (4.0 / 3.0), rel=1e-6)   # (k τ²)² at D/2
    # only one end at rest: the ramp from it alone (C5), unchanged
    assert b_at(0.7 * D, (True, False)) == pytest.approx(0.25 * k * k * (6.0 * 0.7 * D / k) ** (4.0 / 3.0), rel=1e-12)


def test_rates_alone_plan_as_a_controller_profile(monkeypatch):
    """torque_rate_max / jerk_max without an energy term plan as a controller profile with headroom 1 and those
    limits (sampled every rate_dt, steps from and to rest): the sequential scheme took 2.2 s on this path with one
    "solved only inaccurately" warning and 1.0009 × the rate; the profile takes ~0.1 s, within it, no warning.
    With an energy weight the sequential scheme plans them (only it combines the two)."""
    import warnings
    from toppra_app import ControllerProfile
    from toppra_app.planning import sequential
    seen = []
    real = sequential.solve_with_chain

    def spy(*args, what="", **kw):
        seen.append(what)
        return real(*args, what=what, **kw)
    monkeypatch.setattr(sequential, "solve_with_chain", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = TimeOptimalPlanner(robot(), path("straight"), torque_rate_max=TAU_RATE, jerk_max=JERK).plan()
    assert not seen and p.planner.controller == ControllerProfile(
        torque_headroom=1.0, velocity_headroom=1.0, torque_rate_max=(TAU_RATE,) * 7, jerk_max=tuple(JERK))
    profile = TimeOptimalPlanner(robot(), path("straight"), controller=p.planner.controller).plan()
    assert p.duration == profile.duration and p.within_limits
    r = sampled_ratios(p, TAU_RATE, JERK)
    assert r["torque_rate"] <= TOL and r["jerk"] <= TOL
    TimeOptimalPlanner(robot(), path("straight"), jerk_max=1e12, energy_weight=0.5).plan()
    assert seen and all(w == "the speed profile with the energy objective / rate limits" for w in seen)


def test_rates_alone_take_the_linear_time_law():
    """As a profile the options also plan θ̈ linear and continuous (`time_law="linear"`, refused before: the
    sequential scheme is θ̈ constant): no steps of q̈ at grid points, so the jerk-limited motion is shorter and
    keeps the sampled jerk."""
    constant = TimeOptimalPlanner(robot(), path("straight"), jerk_max=JERK).plan()
    linear = TimeOptimalPlanner(robot(), path("straight"), jerk_max=JERK, time_law="linear").plan()
    assert linear.duration < constant.duration and linear.within_limits
    assert sampled_ratios(linear, jerk=JERK)["jerk"] <= TOL


def test_energy_with_rates_is_never_worse_than_the_rate_limited_time_optimal_plan():
    """An energy weight with rate limits plans by the sequential scheme, whose plan was returned as it came: on this
    iiwa 7 path at 500 N·m/s, w = 1e-4 gave 2.108 s, 7.9 % slower than without the weight (1.954 s, the controller
    profile's plan of the same rates) and so its J = T + w ∫τᵀRτ dt too; w = 1 ended "optimal_inaccurate", not within
    its limits (the plan at w = 1e-4 took 35 s: a careful Clarabel try failed and SCS ran 28 s; `solver_chain`
    now tries the planner's Clarabel settings before SCS: ~7 s). The profile's plan is a feasible point of the same
    problem, so J may not exceed its J. J from the
    1 ms samples with Pinocchio's RNEA (the iiwa has no friction), R = 1/τ_max², the sampled torque rate with the
    steps from and to rest (gravity held)."""
    import pinocchio as pin
    from fixtures import to_pinocchio
    iiwa = dynamics.load_robot("iiwa7")
    rng = np.random.default_rng(2)
    W = iiwa.q_min + (iiwa.q_max - iiwa.q_min) * (0.3 + 0.4 * rng.random((3, iiwa.n)))
    p = JointPath.from_waypoints(W)
    model = to_pinocchio(iiwa)
    data = model.createData()

    def time_energy_rate(plan):
        s = plan.sample(1e-3)
        tau = np.array([pin.rnea(model, data, q, qd, qdd) for q, qd, qdd in zip(s.q, s.qd, s.qdd)])
        power = np.sum(tau * tau / iiwa.tau_max ** 2, axis=1)
        held = [pin.computeGeneralizedGravity(model, data, q) for q in (s.q[0], s.q[-1])]
        rate = np.abs(np.diff(np.vstack([held[0], tau, held[1]]), axis=0)).max() / 1e-3 / 500.0
        return s.t[-1], float(np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(s.t))), rate

    T0, E0, rate0 = time_energy_rate(TimeOptimalPlanner(iiwa, p, torque_rate_max=500.0).plan())
    assert rate0 <= TOL
    for w in (1e-4, 1.0):
        plan = TimeOptimalPlanner(iiwa, p, torque_rate_max=500.0, energy_weight=w).plan()
        T, E, rate = time_energy_rate(plan)
        assert T + w * E <= (T0 + w * E0) * (1 + 1e-6) and rate <= TOL and plan.within_limits, (w, T, E, T0, E0, rate)
