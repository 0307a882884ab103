"""Cartesian tool-speed and collaborative-energy limits (toppra_app.limits.cartesian): respected on the
executed 1 ms samples (recomputed with Pinocchio: frame Jacobian, crba → J M⁻¹ Jᵀ), never faster than
the plain time-optimal plan and equal to it when inactive, payload handling, |p′| = 0, bad inputs and
the palletizing cell option."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import dynamics
from dynamics.payload import RigidBodyInertia
from toppra_app import JointPath
from dynamics import load_robot
from fixtures import BENCH_PATHS
from toppra_app.limits.cartesian import (CartesianSpeedLimit, CollaborativeEnergyLimit, check_trajectory,
                                         effective_mass_speed2)
from toppra_app.limits import default_limits
from toppra_app.errors import InputError
from fixtures import to_pinocchio
from toppra_app.planner import TimeOptimalPlanner, plan_time_optimal

pin = pytest.importorskip("pinocchio")

TOL = 1.001


@functools.lru_cache(maxsize=None)
def robot():
    return load_robot("iiwa7")


@functools.lru_cache(maxsize=None)
def path():
    return JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["pick-place"])


@functools.lru_cache(maxsize=None)
def plain():
    return TimeOptimalPlanner(robot(), path()).plan()


@functools.lru_cache(maxsize=None)
def limited(**kw):
    return TimeOptimalPlanner(robot(), path(), **kw).plan()


def pin_tool_quantities(model_robot, smp, frame=None, contact_mass=None):
    """Tool speed ‖v‖ and transferable energy ½ μ ‖v‖² at every sample, from Pinocchio alone:
    v = J_v q̇ (LOCAL_WORLD_ALIGNED frame Jacobian), Λ_v⁻¹ = J_v M⁻¹ J_vᵀ (crba), m_u = 1/(uᵀ Λ_v⁻¹ u)."""
    model = to_pinocchio(model_robot)
    data = model.createData()
    name = frame or model_robot.tool_frame
    fid = model.getFrameId(name)
    speed, energy = [], []
    for q, qd in zip(smp.q, smp.qd):
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        Jv = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
        v = Jv @ qd
        s = float(np.linalg.norm(v))
        speed.append(s)
        if s < 1e-12:
            energy.append(0.0)
            continue
        u = v / s
        m_u = 1.0 / float(u @ Jv @ np.linalg.solve(M, Jv.T) @ u)
        mu = m_u if contact_mass is None else m_u * contact_mass / (m_u + contact_mass)
        energy.append(0.5 * mu * s * s)
    return np.array(speed), np.array(energy)


# ------------------------------------------------------------------------------ tool speed
@pytest.mark.parametrize("v_max", [0.5, 1.2])
def test_tool_speed_respected_on_1ms_samples(v_max):
    base = plain()
    plan = limited(tool_speed_max=v_max)
    speed, _ = pin_tool_quantities(plan.robot, plan.sample(1e-3))
    assert speed.max() <= TOL * v_max, speed.max() / v_max
    assert speed.max() >= 0.99 * v_max                     # the limit is active ...
    assert plan.duration > 1.05 * base.duration            # ... and costs time
    assert plan.worst["tool_speed"].ratio <= TOL and plan.worst_ratio <= TOL
    # joint limits still hold
    for kind in ("torque", "velocity", "acceleration"):
        assert plan.worst[kind].ratio <= TOL


def test_tool_speed_by_finite_differences_of_frame_pose():
    """Independent of any Jacobian: the tool's position along the sampled trajectory, differentiated."""
    v_max = 0.5
    plan = limited(tool_speed_max=v_max)
    smp = plan.sample(1e-3)
    p = dynamics.frame_pose(plan.robot, smp.q)[:, :3, 3]
    t = smp.t
    v = np.linalg.norm(np.diff(p, axis=0), axis=1) / np.diff(t)           # mean speed over each step
    assert v.max() <= TOL * v_max, v.max() / v_max
    assert v.max() >= 0.99 * v_max


def test_smaller_limit_is_slower_and_never_faster_than_plain():
    base = plain().duration
    durations = [limited(tool_speed_max=v).duration for v in (1.2, 0.5)]
    assert base * (1 - 1e-6) <= durations[0] < durations[1]


def test_inactive_limits_change_nothing():
    base = plain().duration
    for kw in (dict(tool_speed_max=1e3), dict(collision_energy_max=1e6)):
        plan = limited(**kw)
        assert abs(plan.duration / base - 1.0) <= 1e-6, (kw, plan.duration, base)


def test_limit_list_equals_keyword_option():
    by_list = TimeOptimalPlanner(robot(), path(), limits=default_limits() + [CartesianSpeedLimit(1.2)]).plan()
    assert abs(by_list.duration / limited(tool_speed_max=1.2).duration - 1.0) <= 1e-6
    via_api = plan_time_optimal(robot(), path(), tool_speed_max=1.2)
    assert abs(via_api.duration / by_list.duration - 1.0) <= 1e-6


# ------------------------------------------------------------------------------ collaborative energy
def test_effective_mass_matches_pinocchio():
    r = robot()
    rng = np.random.default_rng(3)
    q = rng.uniform(-1.5, 1.5, (20, r.n))
    dq = rng.normal(size=(20, r.n))
    mu_s2, s2 = effective_mass_speed2(r, q, dq)

    class S:                                             # a "sample" with q̇ = q′ (θ̇ = 1)
        pass
    S.q, S.qd = q, dq
    _, energy = pin_tool_quantities(r, S)
    np.testing.assert_allclose(0.5 * mu_s2, energy, rtol=1e-9)


@pytest.mark.parametrize("E_max", [0.3, 1.0])
def test_energy_respected_on_1ms_samples(E_max):
    base = plain()
    plan = limited(collision_energy_max=E_max)
    _, energy = pin_tool_quantities(plan.robot, plan.sample(1e-3))
    assert energy.max() <= TOL * E_max, energy.max() / E_max
    assert energy.max() >= 0.99 * E_max
    assert plan.duration > 1.02 * base.duration
    assert plan.worst["collision_energy"].ratio <= TOL and plan.worst_ratio <= TOL


def test_energy_with_contact_mass_is_less_restrictive():
    rigid = limited(collision_energy_max=0.3)
    hand = limited(collision_energy_max=0.3, contact_mass=0.6)
    assert plain().duration * (1 - 1e-6) <= hand.duration < rigid.duration
    _, energy = pin_tool_quantities(hand.robot, hand.sample(1e-3), contact_mass=0.6)
    assert 0.99 * 0.3 <= energy.max() <= TOL * 0.3


def test_energy_with_payload_uses_the_merged_model():
    """Λ depends on the payload: the rows come from robot.with_payload(payload) (no payload Parameters),
    re-plans with another payload rebuild them; checked against Pinocchio on the merged model."""
    E_max = 0.5
    planner = TimeOptimalPlanner(robot(), path(), collision_energy_max=E_max)
    box = RigidBodyInertia.box(5.0, (0.3, 0.2, 0.2), com_offset=(0, 0, 0.1))
    loaded = planner.plan(payload=box)
    empty = planner.plan()
    assert loaded.robot is not robot() and empty.robot is robot()
    assert loaded.duration > empty.duration * 1.01          # heavier: larger effective mass, slower
    _, e_loaded = pin_tool_quantities(loaded.robot, loaded.sample(1e-3))
    assert 0.99 * E_max <= e_loaded.max() <= TOL * E_max
    # the loaded trajectory judged with the empty model would look too safe: the payload matters
    _, e_wrong = pin_tool_quantities(robot(), loaded.sample(1e-3))
    assert e_wrong.max() < 0.98 * E_max
    again = planner.plan(payload=box)
    assert abs(again.duration / loaded.duration - 1.0) <= 1e-6


def test_motion_without_tool_translation_is_not_energy_limited():
    """|p′| = 0 (only the last joint turns, the flange origin sits on its axis): no energy along a
    motion direction, the row is inactive."""
    r = robot()
    q0 = np.array([0.3, 0.5, 0.0, -1.2, 0.0, 1.0, -2.0])
    q1 = q0.copy()
    q1[6] = 2.0
    p = JointPath.from_waypoints(np.linspace(q0, q1, 5))
    base = TimeOptimalPlanner(r, p).plan()
    plan = TimeOptimalPlanner(r, p, collision_energy_max=1e-6, tool_speed_max=1e-6).plan()
    assert abs(plan.duration / base.duration - 1.0) <= 1e-6
    smp = plan.sample(1e-3)
    lims = [CollaborativeEnergyLimit(1e-6), CartesianSpeedLimit(1e-6)]
    worst = check_trajectory(r, smp, lims)
    assert all(np.isfinite(w.ratio) and w.ratio < 1e-3 for w in worst.values()), worst


def test_tighten_refinement_handles_cartesian_kinds():
    """Refinement scales the Cartesian rows at the stations of offending intervals (coarse grid)."""
    plan = TimeOptimalPlanner(robot(), path(), grid=15, tool_speed_max=0.5,
                              collision_energy_max=0.3).plan()
    assert plan.worst_ratio <= TOL
    assert plan.worst["tool_speed"].ratio <= TOL and plan.worst["collision_energy"].ratio <= TOL


# ------------------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("kwargs, field", [
    (dict(tool_speed_max=-0.25), "tool_speed_max"),
    (dict(tool_speed_max=0.0), "tool_speed_max"),
    (dict(tool_speed_max=float("nan")), "tool_speed_max"),
    (dict(tool_speed_max="fast"), "tool_speed_max"),
    (dict(collision_energy_max=-1.0), "collision_energy_max"),
    (dict(collision_energy_max=float("inf")), "collision_energy_max"),
    (dict(collision_energy_max=1.0, contact_mass=-2.0), "contact_mass"),
    (dict(contact_mass=2.0), "contact_mass"),
    (dict(tool_speed_max=1.0, cartesian_frame="nope"), "cartesian_frame"),
])
def test_bad_planner_options(kwargs, field):
    with pytest.raises(ValueError, match=re.escape(field)) as exc:
        TimeOptimalPlanner(robot(), path(), grid=20, **kwargs)
    assert isinstance(exc.value, InputError)


@pytest.mark.parametrize("make, field", [
    (lambda: CartesianSpeedLimit(-1.0), "v_max"),
    (lambda: CartesianSpeedLimit(True), "v_max"),
    (lambda: CollaborativeEnergyLimit(0.0), "E_max"),
    (lambda: CollaborativeEnergyLimit(1.0, contact_mass=0.0), "contact_mass"),
    (lambda: CartesianSpeedLimit(1.0, frame=3), "frame"),
])
def test_bad_limit_arguments(make, field):
    with pytest.raises(InputError, match=re.escape(field)):
        make()


def test_unknown_frame_of_a_limit_object():
    with pytest.raises(InputError, match="frame"):
        TimeOptimalPlanner(robot(), path(), grid=20, limits=default_limits() + [CartesianSpeedLimit(1, "nope")]).plan()


# ------------------------------------------------------------------------------ palletizing cell
def _cell_text(limits_block: str) -> str:
    from scenarios.palletizing import DEFAULT_CELL
    return DEFAULT_CELL.read_text().replace("[boxes.heavy]", limits_block + "\n[boxes.heavy]")


def test_cell_limits_parsed(tmp_path):
    from scenarios.palletizing import load_cell
    f = tmp_path / "cell.toml"
    f.write_text(_cell_text("[limits]\ntool_speed_max = 0.25\ncollaborative = { energy_max = 0.5, contact_mass = 0.6 }\n"))
    cell = load_cell(f, check_reach=False)
    assert cell.planner_options() == dict(tool_speed_max=0.25, collision_energy_max=0.5, contact_mass=0.6)
    assert load_cell(check_reach=False).planner_options() == {}


@pytest.mark.parametrize("block, field", [
    ("[limits]\ntool_speed = 0.25\n", "limits.tool_speed"),
    ("[limits]\ntool_speed_max = -0.25\n", "limits.tool_speed_max"),
    ("[limits]\ntool_speed_max = \"slow\"\n", "limits.tool_speed_max"),
    ("[limits]\ncollaborative = { energy = 0.5 }\n", "limits.collaborative.energy"),
    ("[limits]\ncollaborative = { contact_mass = 1.0 }\n", "limits.collaborative.energy_max"),
    ("[limits]\ncollaborative = { energy_max = 0 }\n", "limits.collaborative.energy_max"),
    ("[limits]\ncollaborative = 0.5\n", "limits.collaborative"),
])
def test_cell_limits_rejected(tmp_path, block, field):
    from scenarios.palletizing import load_cell
    f = tmp_path / "cell.toml"
    f.write_text(_cell_text(block))
    with pytest.raises(InputError, match=re.escape(f"cell.toml: {field}")):
        load_cell(f, check_reach=False)


# ------------------------------------------------------------------------------ peaks between sub-samples
# a random Panda path (8 waypoints over 20-80 % of the joint ranges) whose tool speed peaks between two of the
# check's sub-samples: the check said 1.00073, Pinocchio 1.00114 on the 1 ms samples
PANDA_PEAK = np.array([
    [1.2533250516819137, 0.21220404386448455, -0.5100008285457664, -2.0878659185457886, 0.5190719361306173, 1.6396721151663673, 1.1016230852231201],
    [-1.1641483748191679, 0.8949182052953977, 0.9184550636657058, -1.0542692339850133, 0.1422234960245401, 2.2889656610707263, -1.0148135307184667],
    [0.09838898791930051, 0.24363109780208836, -0.42499531233278454, -1.4864768159046302, 1.4415870709004799, 1.6743655878076111, -0.6688350155659113],
    [-0.2075796202643252, 0.815669310394306, -1.2410364613766953, -1.6834923484359807, 0.6547918617587536, 1.403274831101782, 0.04245011662912157],
    [1.3707921932883873, -0.39521353964475914, -0.1881129637524901, -2.364706671246444, 0.4661355654963928, 0.9844410915723673, -1.3364341225958893],
    [0.4840277816067209, 0.12600908431561386, 0.9730667387553482, -2.088841907641203, -1.6533515158399403, 2.670448907798932, 1.1517191759731547],
    [-0.3892507891695365, -0.6963506812340505, 0.5199144487342924, -1.4924779741243672, 0.06542061724426906, 0.9087292355542582, -1.2892852092898373],
    [-0.5425899851172904, -0.3203857149172764, 1.2449110571314415, -2.2570066239960394, 0.957221829329058, 1.057131494063302, 0.23862606316252055]])


def test_tool_speed_peak_between_sub_samples_is_checked():
    panda = load_robot("panda")
    v_max = 0.34492241373889165
    plan = TimeOptimalPlanner(panda, JointPath.from_waypoints(PANDA_PEAK), tool_speed_max=v_max).plan()
    smp = plan.sample(1e-3)
    speed, _ = pin_tool_quantities(panda, smp)
    pos = dynamics.frame_pose(panda, smp.q)[:, :3, 3]                              # and finite differences
    fd = np.linalg.norm(np.diff(pos, axis=0), axis=1) / np.diff(smp.t)
    assert speed.max() <= v_max * TOL, speed.max() / v_max
    assert fd.max() <= v_max * TOL
    assert plan.worst["tool_speed"].ratio >= speed.max() / v_max - 1e-4       # the check sees the peak


@pytest.mark.parametrize("kw, field", [(dict(tool_speed_max="0.5"), "tool_speed_max"),
                                       (dict(collision_energy_max="1.0"), "collision_energy_max"),
                                       (dict(collision_energy_max=1.0, contact_mass="0.6"), "contact_mass"),
                                       (dict(tool_speed_max=1.0, cartesian_frame=np.array([1.0, 2.0])), "cartesian_frame"),
                                       (dict(tool_speed_max=1.0, cartesian_frame=True), "cartesian_frame")])
def test_non_numbers_and_non_names_are_refused_naming_the_option(kw, field):
    """Text was read as a number ('0.5' planned), an array frame was numpy's truth-value ValueError."""
    with pytest.raises(InputError, match=f"^{field}: expected"):
        TimeOptimalPlanner(robot(), path(), **kw)


def test_huge_tool_speed_limit_is_inactive():
    """1e200 m/s was an OverflowError (v_max² in Python floats), not a plan."""
    plan = TimeOptimalPlanner(robot(), path(), tool_speed_max=1e200).plan()
    assert plan.duration == pytest.approx(plain().duration, rel=1e-6)


@pytest.mark.parametrize("v_max", [3e-4, 1e-4])
def test_a_crawling_tool_speed_stops_within_the_torque_limits(v_max):
    """At 0.1–0.3 mm/s (an hour or so for the README's iiwa path) the motion into rest takes 5e-11–5e-10 of the
    path: `layers.rest_layers` put a grid point there, a sliver whose rows the solver did not resolve, and the
    plan stopped 286–1477 % over a torque limit (with a warning). Now no point closer than `LAYER_MIN` of the end
    interval: Pinocchio's RNEA on the last and first seconds at 1 ms (q, q̇, q̈ from `plan.eval*`) within 0.1 %,
    and the tool speed too."""
    r = robot()
    p = JointPath.from_waypoints([[0, 0.3, 0, -1.2, 0, 0.8, 0], [1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5]])
    plan = TimeOptimalPlanner(r, p, tool_speed_max=v_max).plan()
    assert plan.worst_ratio <= TOL
    model = to_pinocchio(r)
    data = model.createData()
    for t in (np.linspace(plan.duration - 1.0, plan.duration, 1001), np.linspace(0.0, 1.0, 1001)):
        q, qd, qdd = plan.eval(t), plan.evald(t), plan.evaldd(t)
        tau = np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(q, qd, qdd)])
        assert (np.abs(tau) <= TOL * r.tau_max).all(), np.max(np.abs(tau) / r.tau_max)
        smp = type("S", (), dict(q=q, qd=qd))()
        assert pin_tool_quantities(r, smp)[0].max() <= TOL * v_max


@pytest.mark.parametrize("kw, field", [(dict(tool_speed_max=1e-100), "tool_speed_max"),
                                       (dict(tool_speed_max=1e-200), "tool_speed_max"),
                                       (dict(collision_energy_max=1e-200), "collision_energy_max"),
                                       (dict(collision_energy_max=1.0, contact_mass=1e-30), "contact_mass")])
def test_absurdly_small_limits_are_refused(kw, field):
    """1e-100 m/s planned a motion of ~1e-102 s (1/v_max² overflowed), ≤ 1e-160 was silently ignored."""
    with pytest.raises(InputError, match=f"^{field}: .* is below the smallest limit planned, 1e-09$"):
        TimeOptimalPlanner(robot(), path(), **kw)
