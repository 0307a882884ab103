"""Time–energy trade-off (Verscheure et al. 2009): energy_weight = 0 is the time-optimal plan, larger weights
trade duration for ∫ τᵀRτ dt monotonically, and every plan still meets the limits on 1 ms samples."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import dynamics
from toppra_app import JointPath, plan_time_optimal
from dynamics import load_robot
from fixtures import BENCH_PATHS
from toppra_app.errors import InputError
from fixtures import pinocchio_inverse_dynamics
from toppra_app.objectives.energy import energy_integral, energy_weights
from toppra_app.objectives.tradeoff import time_energy_curve
from toppra_app.planner import TimeOptimalPlanner

WEIGHTS = [0.0, 0.1, 1.0, 10.0, 100.0]


@functools.lru_cache(maxsize=None)
def robot():
    return load_robot("iiwa7")


@functools.lru_cache(maxsize=None)
def path():
    return JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["pick-place"])


@functools.lru_cache(maxsize=None)
def curve():
    return time_energy_curve(robot(), path(), WEIGHTS)


def test_weight_zero_is_the_time_optimal_plan():
    plain = TimeOptimalPlanner(robot(), path()).plan()
    zero = curve()[0]["plan"]
    assert zero.energy_weight == 0.0
    assert zero.duration == pytest.approx(plain.duration, rel=1e-12, abs=0)
    np.testing.assert_array_equal(zero.s, plain.s)
    np.testing.assert_allclose(zero.sd, plain.sd, rtol=0, atol=1e-12)
    assert "energy" not in plain.summary()
    assert plain.energy == pytest.approx(zero.energy, rel=1e-12)


def test_duration_grows_and_energy_falls_with_the_weight():
    rows = curve()
    t_opt = rows[0]["duration"]
    d = np.array([r["duration"] for r in rows])
    e = np.array([r["energy"] for r in rows])
    assert (d >= t_opt * (1 - 1e-6)).all()                       # never faster than time-optimal
    assert (np.diff(d) >= -1e-6 * t_opt).all()                    # duration non-decreasing
    assert (np.diff(e) <= 1e-3 * e[0]).all()                      # energy non-increasing (within tolerance)
    assert e[-1] < 0.8 * e[0] and d[-1] > 1.02 * d[0]             # and the trade-off is real
    s = rows[-1]["plan"].summary()
    assert s["energy_weight"] == 100.0 and s["energy"] == pytest.approx(e[-1])


@pytest.mark.parametrize("i", range(1, len(WEIGHTS)))
def test_limits_respected_on_1ms_samples(i):
    plan = curve()[i]["plan"]
    r = plan.robot
    smp = plan.sample(1e-3)
    tau = dynamics.inverse_dynamics(r, smp.q, smp.qd, smp.qdd) + dynamics.friction_torques(r, smp.qd)
    assert np.max(np.abs(tau) / r.tau_max) <= 1.001
    assert np.max(np.abs(smp.qd) / r.qd_max) <= 1.001
    assert np.max(np.abs(smp.qdd) / r.qdd_max) <= 1.001
    # the reported energy is ∫ τᵀRτ dt of these samples, R = 1/τ_max²
    R = 1.0 / r.tau_max ** 2
    p = np.einsum("ik,k,ik->i", tau, R, tau)
    assert plan.energy == pytest.approx(np.trapezoid(p, smp.t) if hasattr(np, "trapezoid") else np.trapz(p, smp.t),
                                        rel=1e-9)


def test_energy_weight_with_payload_and_custom_R():
    payload = dynamics.RigidBodyInertia(3.0, np.array([0.0, 0.0, 0.05]), np.diag([0.01, 0.01, 0.01]))
    plain = plan_time_optimal(robot(), path(), payload=payload)
    slow = plan_time_optimal(robot(), path(), payload=payload, energy_weight=10.0, energy_R=np.ones(7) * 1e-3)
    assert slow.duration >= plain.duration * (1 - 1e-6)
    assert np.allclose(slow.energy_R, 1e-3)
    # plain.energy uses the default R = 1/τ_max²; compare both in slow's R
    smp = slow.sample(1e-3)                       # the energy from Pinocchio's torques on the same samples
    inv_dyn = pinocchio_inverse_dynamics(slow.robot)
    tau = np.array([inv_dyn(q, qd, qdd) for q, qd, qdd in zip(smp.q, smp.qd, smp.qdd)])
    tau += slow.robot.coulomb * np.sign(smp.qd)
    p = np.einsum("ik,k,ik->i", tau, slow.energy_R, tau)
    assert slow.energy == pytest.approx(float(np.sum(0.5 * (p[1:] + p[:-1]) * np.diff(smp.t))), rel=1e-9)
    assert energy_integral(smp, slow.energy_R) < energy_integral(plain.sample(1e-3), slow.energy_R)


@pytest.mark.parametrize("kw, field", [(dict(energy_weight=-1.0), "energy_weight"),
                                       (dict(energy_weight="x"), "energy_weight"),
                                       (dict(energy_weight=float("nan")), "energy_weight"),
                                       (dict(energy_weight=1e300), "energy_weight: must be at most 1e"),
                                       (dict(energy_R=[1.0, 2.0]), "energy_R"),
                                       (dict(energy_R=-np.ones(7)), "energy_R"),
                                       # text and booleans were read as numbers (the limits audit)
                                       (dict(energy_weight="1.0"), "energy_weight: expected a number"),
                                       (dict(energy_weight=np.bool_(True)), "energy_weight: expected a number"),
                                       (dict(energy_R="1.0"), "energy_R: expected"),
                                       (dict(energy_R=True), "energy_R: expected"),
                                       (dict(energy_R=np.ones(7, dtype=complex)), "energy_R: expected"),
                                       # the weight's cap bypassed through R (planned, "energy" 4e303)
                                       (dict(energy_weight=1.0, energy_R=1e300), "energy_R: energy_weight ×")])
def test_bad_energy_options(kw, field):
    with pytest.raises(InputError, match=field):
        TimeOptimalPlanner(robot(), path(), **kw)


def test_default_R_is_inverse_squared_torque_limit():
    w, R = energy_weights(robot())
    assert w == 0.0 and np.allclose(R, 1.0 / robot().tau_max ** 2)


@pytest.mark.parametrize("weights, message", [
    (None, "weights: expected a list"), (5, "weights: expected a list"),
    ("abc", "weights: expected a list"),                       # was planned letter by letter, refused as 'a'
    ([1.0, "x"], "weights: expected a list"),                  # weight 1 was planned before "x" was refused
    ([0.0, float("nan")], r"weights\[1\]: must be a finite number"),
    ([0.1, -1.0], r"weights\[1\]: must be a finite number from 0 to 1e\+06"),
    ([1.0, 1e7], r"weights\[1\]: must be a finite number from 0 to 1e\+06")])
def test_bad_weights_of_the_curve_are_refused_before_planning(weights, message, monkeypatch):
    import toppra_app.objectives.tradeoff as tradeoff
    made = []
    monkeypatch.setattr(tradeoff, "TimeOptimalPlanner", lambda *a, **kw: made.append(kw) or TimeOptimalPlanner(*a, **kw))
    with pytest.raises(InputError, match="^" + message):
        time_energy_curve(robot(), path(), weights)
    assert made == []
