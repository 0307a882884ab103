"""Bridges to the peer libraries we compare against (Pinocchio, toppra); test/benchmark extras only.

`to_pinocchio` builds the same model in Pinocchio; `toppra_plan` plans with toppra 0.6 (TOPP-RA) on N + 1
uniform grid points with an inverse-dynamics callback (`pinocchio_inverse_dynamics`)."""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np

import dynamics
from dynamics import RobotModel
from toppra_app.trajectory import TrajectorySample, sample_times
from toppra_app.verify import check_samples


def to_pinocchio(robot: RobotModel):
    """pinocchio Model with the same tree, placements, axes, inertias, gravity and named frames.

    Any tree of revolute/prismatic joints with arbitrary axes (JointModel*Unaligned); pinocchio's joint
    frame after the joint motion is placement · X_joint(q), as ours, and its body inertia is given
    about the COM in the joint (= body) frame."""
    try:
        import pinocchio as pin
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("pinocchio is not installed: pip install 'toppra-app[test]'") from exc
    if robot.coupling is not None:
        raise ValueError(f"to_pinocchio: robot '{robot.name}' has mimic joints; load its URDF with "
                         f"pinocchio.buildModelFromUrdf(path, mimic=True) instead")
    model = pin.Model()
    model.name = robot.name
    model.gravity = pin.Motion(np.asarray(robot.gravity, float), np.zeros(3))
    # pinocchio's algorithms need every subtree contiguous in q (its CRBA uses nvSubtree), so joints
    # are added depth-first; Pinocchio's joint order can then differ from ours (match by joint name).
    children = {i: [c for c in range(robot.n) if robot.parents[c] == i] for i in range(-1, robot.n)}
    order, stack = [], list(reversed(children[-1]))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i]))
    jids = {}
    for i in order:
        axis = np.asarray(robot.axes[i], float)
        jm = (pin.JointModelPrismaticUnaligned(axis) if robot.joint_types[i] == "prismatic"
              else pin.JointModelRevoluteUnaligned(axis))
        parent = 0 if robot.parents[i] < 0 else jids[robot.parents[i]]
        placement = pin.SE3(np.asarray(robot.placement_rotations[i], float),
                            np.asarray(robot.placement_translations[i], float))
        jid = model.addJoint(parent, jm, placement, robot.joint_names[i])
        model.appendBodyToJoint(jid, pin.Inertia(float(robot.masses[i]), np.asarray(robot.coms[i], float),
                                                 np.asarray(robot.inertias[i], float)), pin.SE3.Identity())
        model.addFrame(pin.Frame(robot.link_names[i], jid, pin.SE3.Identity(), pin.FrameType.BODY))
        jids[i] = jid
    for k, name in enumerate(robot.frame_names):
        T = np.asarray(robot.frame_transforms[k], float)
        model.addFrame(pin.Frame(name, jids[robot.frame_bodies[k]], pin.SE3(T[:3, :3], T[:3, 3]),
                                 pin.FrameType.OP_FRAME))
    if robot.armature is not None and np.any(robot.armature):   # rotor inertia: Pinocchio's own armature
        arm = np.zeros(model.nv)
        for i, jid in jids.items():
            arm[model.joints[jid].idx_v] = robot.armature[i]
        model.armature = arm
    return model


def pinocchio_christoffel(model, data, q: np.ndarray) -> np.ndarray:
    """Christoffel symbols C[k, i, j] of a Pinocchio model (in its joint order) at one configuration, from
    `computeRNEADerivatives` with unit velocities: ∂τ_k/∂v_i at v = e_j equals 2 c^k_ij
    (gravity must be off in `model`). Pinocchio writes only the entries of ``dtau_dv`` that its
    tree's sparsity pattern allows, so the matrix is cleared before every call."""
    import pinocchio as pin
    n = model.nv
    C = np.empty((n, n, n))
    zero = np.zeros(n)
    for j in range(n):
        v = np.zeros(n)
        v[j] = 1.0
        data.dtau_dv[:, :] = 0.0
        pin.computeRNEADerivatives(model, data, q, v, zero)
        C[:, :, j] = 0.5 * data.dtau_dv
    return C


def pinocchio_inverse_dynamics(robot):
    """An inverse-dynamics callback (q, q̇, q̈) -> τ by Pinocchio's RNEA on `to_pinocchio(robot)`, plus the
    robot's viscous friction F_v q̇ (Coulomb friction goes to toppra as its `fs_coef`).

    toppra's torque constraint evaluates the callback at (q, q′, q″) and takes every velocity term as θ̇²
    times it, so F_v q̇ = F_v q′ θ̇ reaches it as F_v q′ θ̇²: right only where θ̇ = 1. On robots with real
    viscous friction (a hunt's xarm7, z1 and puma560: 2–10 N·m·s/rad) toppra's plans came out 8–74 % over a
    limit on 1 ms samples; compare durations with toppra only where F_v is negligible (the suite's Panda URDF:
    0.003)."""
    import pinocchio as pin

    model = to_pinocchio(robot)
    data = model.createData()
    viscous = np.asarray(robot.viscous, float)

    def inv_dyn(q, qd, qdd):
        qd = np.asarray(qd, float)
        tau = np.array(pin.rnea(model, data, np.asarray(q, float), qd, np.asarray(qdd, float)))
        return tau + viscous * qd
    return inv_dyn


def toppra_plan(robot, waypoints, N: int, *, s=None, sd_start: float = 0.0, sd_end: float = 0.0,
                scheme: str = "interpolation", dt: float | None = 1e-3, inv_dyn=None) -> dict:
    """Plan with toppra on N + 1 uniform grid points; returns duration, seconds (constraint setup + solve)
    and, with `dt`, the 1 ms resampling (a `TrajectorySample`, torques by our RNEA + friction).

    `inv_dyn` is toppra's inverse-dynamics callback (default: `dynamics.inverse_dynamics` of `robot`;
    `pinocchio_inverse_dynamics(robot)` is ~50× faster per call)."""
    import toppra as ta
    import toppra.algorithm as algo
    import toppra.constraint as constraint
    logging.getLogger("toppra").setLevel(logging.ERROR)
    W = np.asarray(waypoints, dtype=float)
    ss = np.linspace(0.0, 1.0, W.shape[0]) if s is None else np.asarray(s, dtype=float)
    kind = (constraint.DiscretizationType.Interpolation if scheme == "interpolation"
            else constraint.DiscretizationType.Collocation)
    big = 1e6
    t0 = time.perf_counter()
    path = ta.SplineInterpolator(ss, W)
    vmax = np.where(np.isfinite(robot.qd_max), robot.qd_max, big)
    cons = [constraint.JointVelocityConstraint(np.stack([-vmax, vmax], axis=1))]
    if np.isfinite(robot.qdd_max).any():
        amax = np.where(np.isfinite(robot.qdd_max), robot.qdd_max, big)
        cons.append(constraint.JointAccelerationConstraint(np.stack([-amax, amax], axis=1), discretization_scheme=kind))
    if np.isfinite(robot.tau_max).any():
        tmax = np.where(np.isfinite(robot.tau_max), robot.tau_max, big)

        if inv_dyn is None:
            def inv_dyn(q, qd, qdd):
                return dynamics.inverse_dynamics(robot, q, qd, qdd)
        cons.append(constraint.JointTorqueConstraint(inv_dyn, np.stack([-tmax, tmax], axis=1),
                                                     np.asarray(robot.coulomb), discretization_scheme=kind))
    grid = np.linspace(ss[0], ss[-1], N + 1)
    instance = algo.TOPPRA(cons, path, gridpoints=grid, parametrizer="ParametrizeConstAccel")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traj = instance.compute_trajectory(sd_start, sd_end)
    seconds = time.perf_counter() - t0
    if traj is None:
        return dict(duration=float("nan"), seconds=seconds, sample=None, feasible=False)
    out = dict(duration=float(traj.duration), seconds=seconds, feasible=True, sample=None)
    if dt:
        t = sample_times(traj.duration, dt)
        q, qd, qdd = traj(t), traj(t, 1), traj(t, 2)
        tau = dynamics.motor_torques(robot, q, qd, qdd)
        nan = np.full(t.shape, np.nan)
        out["sample"] = TrajectorySample(t, q, qd, qdd, tau, nan, nan, nan)
    return out


def worst_ratios(robot, sample) -> dict:
    """{kind: worst |value|/limit} of a sampled trajectory."""
    return {k: w.ratio for k, w in check_samples(robot, sample).items()}
