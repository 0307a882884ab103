"""The controller profile validated with an independent engine (issue 12 item 7): MuJoCo loads the URDF
that `robot.to_urdf` writes, its inverse dynamics (`mj_inverse`) equals ours (viscous friction as URDF
damping, armature set on the MuJoCo model), and a controller-profile plan replayed in MuJoCo at 1 kHz
with feed-forward torque plus moderate PD feedback tracks the path within the drive's limits — whereas the
plain plan's feed-forward torque jumps far faster than the drive's torque-rate limit."""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import dynamics  # noqa: E402
from benchmarks.cases import BENCH_PATHS  # noqa: E402
from toppra_app import ControllerProfile, JointPath  # noqa: E402
from toppra_app.planner import TimeOptimalPlanner  # noqa: E402
from toppra_app.trajectory import controller_samples  # noqa: E402

DT = 1e-3
TORQUE_RATE = 1000.0          # N·m/s, a typical drive limit
PROFILE = ControllerProfile(torque_headroom=0.85, velocity_headroom=0.95, torque_rate_max=TORQUE_RATE, dt=DT)


def mujoco_model(robot, directory):
    """MuJoCo model of `robot` from its exported URDF: static bodies kept, inertias as written, no
    constraints (joint limits and contacts off: the replay stays inside the limits anyway), the armature
    (not in URDF) set on the degrees of freedom."""
    path = os.path.join(directory, f"{robot.name}.urdf")
    robot.to_urdf(path)
    text = open(path).read()
    head = f'<robot name="{robot.name}">'
    assert head in text
    text = text.replace(head, head + '\n  <mujoco><compiler discardvisual="true" fusestatic="false" '
                                     'balanceinertia="false" angle="radian"/></mujoco>', 1)
    with open(path, "w") as fh:
        fh.write(text)
    model = mujoco.MjModel.from_xml_path(path)
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(model.njnt)]
    assert names == list(robot.joint_names)
    model.dof_armature[:] = robot.armature if robot.armature is not None else 0.0
    return model


def mujoco_inverse(model, q, qd, qdd):
    data = mujoco.MjData(model)
    out = []
    for a, b, c in zip(q, qd, qdd):
        data.qpos[:], data.qvel[:], data.qacc[:] = a, b, c
        mujoco.mj_inverse(model, data)
        out.append(data.qfrc_inverse.copy())
    return np.array(out)


@pytest.mark.parametrize("name", ["iiwa7", "ur5e"])
def test_mujoco_inverse_dynamics_equals_ours(name, tmp_path):
    base = dynamics.load_robot(name)
    rng = np.random.default_rng(7)
    # with viscous friction (URDF damping) and rotor inertia (armature) too
    robot = base.replace(viscous=rng.uniform(0.1, 2.0, base.n), armature=rng.uniform(0.01, 0.3, base.n))
    for r in (base, robot):
        (tmp_path / f"m{id(r)}").mkdir()
        model = mujoco_model(r, (tmp_path / f"m{id(r)}").as_posix())
        q = rng.uniform(-2.0, 2.0, (50, r.n))
        qd, qdd = rng.uniform(-2.0, 2.0, (2, 50, r.n))
        ours = dynamics.motor_torques(r, q, qd, qdd)
        theirs = mujoco_inverse(model, q, qd, qdd)
        rel = np.abs(theirs - ours).max() / np.abs(ours).max()
        assert rel < 1e-9, rel


@functools.lru_cache(maxsize=None)
def plans():
    robot = dynamics.load_robot("iiwa7")
    path = JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["pick-place"])
    return robot, TimeOptimalPlanner(robot, path, controller=PROFILE).plan(), TimeOptimalPlanner(robot, path).plan()


def replay(model, robot, plan, gains, pre: int = 50, post: int = 300):
    """Hold the start at rest, follow the plan's 1 ms samples, hold the end: τ = τ_ff + Kp (q_ref − q) +
    Kd (q̇_ref − q̇) applied for one step each (RK4 at the controller period). Returns the applied torques,
    the tracking errors and the feed-forward torques."""
    s = controller_samples(plan.robot, plan.path, plan.law, DT)
    rest = lambda q: dynamics.motor_torques(robot, q[None], 0 * q[None], 0 * q[None])[0]   # noqa: E731
    q_ref = np.vstack([np.repeat(s.q[:1], pre, 0), s.q, np.repeat(s.q[-1:], post, 0)])
    qd_ref = np.vstack([np.zeros((pre, robot.n)), s.qd, np.zeros((post, robot.n))])
    ff = np.vstack([np.repeat(rest(s.q[0])[None], pre, 0), s.tau, np.repeat(rest(s.q[-1])[None], post, 0)])
    Kp, Kd = gains
    model.opt.timestep = DT
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = q_ref[0], 0.0
    applied, error = np.empty_like(ff), np.empty_like(ff)
    for k in range(ff.shape[0]):
        error[k] = q_ref[k] - data.qpos
        applied[k] = ff[k] + Kp * error[k] + Kd * (qd_ref[k] - data.qvel)
        data.qfrc_applied[:] = applied[k]
        mujoco.mj_step(model, data)
    return applied, error, ff


def test_controller_plan_tracks_in_mujoco_within_drive_limits(tmp_path):
    robot, plan, plain = plans()
    model = mujoco_model(robot, tmp_path.as_posix())
    # moderate PD: 30 rad/s bandwidth, critically damped, on the mass matrix diagonal at the start
    data = mujoco.MjData(model)
    data.qpos[:] = plan.path.q(np.array([plan.path.s_start]))[0]
    mujoco.mj_forward(model, data)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    w = 30.0
    gains = (w * w * np.diag(M), 2.0 * w * np.diag(M))
    applied, error, ff = replay(model, robot, plan, gains)
    ff_rate = np.abs(np.diff(ff, axis=0)).max() / DT
    applied_rate = np.abs(np.diff(applied, axis=0)).max() / DT
    tracking = np.abs(error).max()
    print(f"controller plan: T = {plan.duration:.4f} s, max tracking error {tracking:.2e} rad, feed-forward rate "
          f"{ff_rate:.2f} N·m/s, applied rate {applied_rate:.2f} N·m/s, max |τ|/τ_max "
          f"{np.max(np.abs(applied) / robot.tau_max):.3f}")
    assert tracking < 1e-3                                             # measured 2.0e-4 rad
    assert np.all(np.abs(applied) <= robot.tau_max)                    # the drive's rated torque
    assert np.all(np.abs(ff) <= PROFILE.torque_headroom * robot.tau_max * 1.001)
    assert ff_rate <= TORQUE_RATE * 1.001                              # the plan itself keeps the limit
    assert applied_rate <= TORQUE_RATE * 1.05                          # feedback adds ~3 % (measured 1028)
    # contrast: the plain plan's feed-forward torque steps far beyond the drive's rate limit
    applied0, error0, ff0 = replay(model, robot, plain, gains)
    assert np.abs(np.diff(ff0, axis=0)).max() / DT > 20 * TORQUE_RATE
    assert plan.duration > plain.duration
