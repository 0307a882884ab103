"""Recursive Newton–Euler inverse dynamics (Luh, Walker & Paul 1980) in world coordinates.

Forward pass: angular velocity/acceleration and origin acceleration of every body from its parent's;
gravity enters as a base acceleration −g0. Backward pass: each body's Newton–Euler force and moment
(about its joint origin) plus its children's; τ_k is the moment (revolute) or force (prismatic)
along the joint axis. Rigid body only: friction is in `friction_torques`.
"""

from __future__ import annotations

import numpy as np

from ._batch import as_batch, cross3, same_batch, world_quantities_t
from .model import PRISMATIC, RobotModel


def inverse_dynamics(robot: RobotModel, q, qd, qdd, *, gravity: bool = True, world=None) -> np.ndarray:
    """τ = M(q) q̈ + C(q, q̇) q̇ + g(q), shape (..., n).

    `world`: the configuration-only quantities `world_quantities_t(robot, q)` if already computed (for
    batches of q), so that repeated calls at the same configurations skip the forward kinematics."""
    (q2, qd2, qdd2), single = same_batch(robot, q, ("qd", qd), ("qdd", qdd))
    W = world_quantities_t(robot, q2) if world is None else world   # body axis first, samples last
    N, n = q2.shape
    qdT, qddT = qd2.T, qdd2.T
    w = np.zeros((n, 3, N))
    dw = np.zeros((n, 3, N))
    a = np.zeros((n, 3, N))        # acceleration of the body point at its joint origin
    a_base = -robot.gravity if gravity else np.zeros(3)
    for k in range(n):
        p = robot.parents[k]
        zk = W.z[k]
        if p < 0:
            wp, dwp = np.zeros((3, N)), np.zeros((3, N))
            ap = np.broadcast_to(np.asarray(a_base, dtype=float)[:, None], (3, N))
            r = W.o[k]
        else:
            wp, dwp, ap = w[p], dw[p], a[p]
            r = W.o[k] - W.o[p]
        a_k = ap + cross3(dwp, r) + cross3(wp, cross3(wp, r))
        if robot.joint_types[k] == PRISMATIC:
            w[k], dw[k] = wp, dwp
            a[k] = a_k + 2.0 * qdT[k] * cross3(wp, zk) + qddT[k] * zk
        else:
            w[k] = wp + qdT[k] * zk
            dw[k] = dwp + qddT[k] * zk + qdT[k] * cross3(wp, zk)
            a[k] = a_k
    rc = W.c - W.o
    a_c = a + cross3(dw, rc, 1) + cross3(w, cross3(w, rc, 1), 1)
    f = robot.masses[:, None, None] * a_c
    Iw = sum(W.inertia[:, :, j] * w[:, None, j] for j in range(3))
    nm = sum(W.inertia[:, :, j] * dw[:, None, j] for j in range(3)) + cross3(w, Iw, 1) + cross3(rc, f, 1)
    tau = np.empty((n, N))
    for k in range(n - 1, -1, -1):
        v = f[k] if robot.joint_types[k] == PRISMATIC else nm[k]
        tau[k] = W.z[k, 0] * v[0] + W.z[k, 1] * v[1] + W.z[k, 2] * v[2]
        p = robot.parents[k]
        if p >= 0:
            f[p] += f[k]
            nm[p] += nm[k] + cross3(W.o[k] - W.o[p], f[k])
    tau = tau.T
    return tau[0] if single else tau



def friction_torques(robot: RobotModel, qd) -> np.ndarray:
    """Coulomb + viscous friction, F_c sign(q̇) + F_v q̇, shape (..., n)."""
    qd2, single = as_batch(robot, qd, "qd")
    tau = robot.coulomb * np.sign(qd2) + robot.viscous * qd2
    return tau[0] if single else tau
