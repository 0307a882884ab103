"""Joint-space mass matrix by the composite-rigid-body recursion, in world coordinates.

Backward pass: each body's composite inertia (mass m, first moment h = Σ m c, rotational inertia J
about the world origin) is its own plus its children's. Column i of M is then the spatial force
F_i = I^c_i S_i needed to accelerate the composite body of subtree i along the joint's motion
subspace S_i = (z_i, o_i × z_i) (revolute) or (0, z_i) (prismatic); M_ji = S_j · F_i for every
ancestor j of i (Featherstone, Rigid Body Dynamics Algorithms, §6.2).
"""

from __future__ import annotations

import numpy as np

from ._batch import World, as_batch, cross, world_quantities
from .model import PRISMATIC, RobotModel


def composite_inertias(robot: RobotModel, W: World):
    """Subtree mass (N, n), first moment Σ m c (N, n, 3) and rotational inertia about the world
    origin Σ (I_c + m [c]ᵀ[c]) (N, n, 3, 3), accumulated from the leaves towards the base."""
    m = np.broadcast_to(robot.masses, W.c.shape[:2]).copy()
    h = W.c * robot.masses[:, None]
    cc = (W.c * W.c).sum(axis=-1)
    J = W.inertia + robot.masses[:, None, None] * (
        cc[..., None, None] * np.eye(3) - W.c[..., :, None] * W.c[..., None, :])
    for k in range(robot.n - 1, -1, -1):
        p = robot.parents[k]
        if p >= 0:
            m[:, p] += m[:, k]
            h[:, p] += h[:, k]
            J[:, p] += J[:, k]
    return m, h, J


def motion_subspaces(robot: RobotModel, W: World) -> np.ndarray:
    """World-frame joint motion subspaces S (N, n, 6) as (angular; linear at the world origin)."""
    S = np.zeros(W.z.shape[:2] + (6,))
    for i in range(robot.n):
        if robot.joint_types[i] == PRISMATIC:
            S[:, i, 3:] = W.z[:, i]
        else:
            S[:, i, :3] = W.z[:, i]
            S[:, i, 3:] = cross(W.o[:, i], W.z[:, i])
    return S


def mass_matrix_world(robot: RobotModel, W: World, composites=None) -> np.ndarray:
    m, h, J = composites if composites is not None else composite_inertias(robot, W)
    S = motion_subspaces(robot, W)
    w, v = S[..., :3], S[..., 3:]
    # F_i = I^c_i S_i:  moment J ω + h × v,  force m v + ω × h
    moment = (J @ w[..., None])[..., 0] + cross(h, v)
    force = m[..., None] * v + cross(w, h)
    F = np.concatenate((moment, force), axis=-1)
    M = S @ np.swapaxes(F, -1, -2)               # S_j · F_i for all pairs
    anc = robot.subtree_mask()                   # anc[j, i]: j is i or an ancestor of i
    upper = np.where(anc, M, 0.0)
    return upper + np.swapaxes(upper, -1, -2) - upper * np.eye(robot.n)


def mass_matrix(robot: RobotModel, q) -> np.ndarray:
    """Joint-space inertia matrix M(q), shape (..., n, n)."""
    q2, single = as_batch(robot, q, "q")
    M = mass_matrix_world(robot, world_quantities(robot, q2))
    return M[0] if single else M
