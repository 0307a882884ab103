"""Recursive Newton–Euler inverse dynamics (Luh, Walker & Paul 1980) in world coordinates.

Forward pass: angular velocity/acceleration and origin acceleration of every body from its parent's;
gravity enters as a base acceleration −g0. Backward pass: each body's Newton–Euler force and moment
(about its joint origin) plus its children's; τ_k is the moment (revolute) or force (prismatic)
along the joint axis. Rigid body only: friction is in `friction_torques`.
"""

from __future__ import annotations

import numpy as np

from ._batch import as_batch, cross, same_batch, world_quantities
from .model import PRISMATIC, RobotModel


def inverse_dynamics(robot: RobotModel, q, qd, qdd, *, gravity: bool = True) -> np.ndarray:
    """τ = M(q) q̈ + C(q, q̇) q̇ + g(q), shape (..., n)."""
    (q2, qd2, qdd2), single = same_batch(robot, q, ("qd", qd), ("qdd", qdd))
    W = world_quantities(robot, q2)
    N, n = q2.shape
    w = np.zeros((N, n, 3))
    dw = np.zeros((N, n, 3))
    a = np.zeros((N, n, 3))        # acceleration of the body point at its joint origin
    a_base = -robot.gravity if gravity else np.zeros(3)
    for k in range(n):
        p = robot.parents[k]
        zk = W.z[:, k]
        if p < 0:
            wp, dwp = np.zeros((N, 3)), np.zeros((N, 3))
            ap = np.broadcast_to(a_base, (N, 3))
            r = W.o[:, k]
        else:
            wp, dwp, ap = w[:, p], dw[:, p], a[:, p]
            r = W.o[:, k] - W.o[:, p]
        a_k = ap + cross(dwp, r) + cross(wp, cross(wp, r))
        if robot.joint_types[k] == PRISMATIC:
            w[:, k], dw[:, k] = wp, dwp
            a[:, k] = a_k + 2.0 * qd2[:, k, None] * cross(wp, zk) + qdd2[:, k, None] * zk
        else:
            w[:, k] = wp + qd2[:, k, None] * zk
            dw[:, k] = dwp + qdd2[:, k, None] * zk + qd2[:, k, None] * cross(wp, zk)
            a[:, k] = a_k
    rc = W.c - W.o
    a_c = a + cross(dw, rc) + cross(w, cross(w, rc))
    f = robot.masses[:, None] * a_c
    Iw = np.einsum("nkij,nkj->nki", W.inertia, w)
    nm = np.einsum("nkij,nkj->nki", W.inertia, dw) + cross(w, Iw) + cross(rc, f)
    tau = np.empty((N, n))
    for k in range(n - 1, -1, -1):
        tau[:, k] = np.einsum("ni,ni->n", W.z[:, k], f[:, k] if robot.joint_types[k] == PRISMATIC else nm[:, k])
        p = robot.parents[k]
        if p >= 0:
            f[:, p] += f[:, k]
            nm[:, p] += nm[:, k] + cross(W.o[:, k] - W.o[:, p], f[:, k])
    return tau[0] if single else tau


def friction_torques(robot: RobotModel, qd) -> np.ndarray:
    """Coulomb + viscous friction, F_c sign(q̇) + F_v q̇, shape (..., n)."""
    qd2, single = as_batch(robot, qd, "qd")
    tau = robot.coulomb * np.sign(qd2) + robot.viscous * qd2
    return tau[0] if single else tau
