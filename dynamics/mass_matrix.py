"""Joint-space mass matrix by the composite-rigid-body recursion, in world coordinates.

Backward pass: each body's composite inertia (mass m, first moment h = Σ m c, rotational inertia J
about the world origin) is its own plus its children's. Column i of M is then the spatial force
F_i = I^c_i S_i needed to accelerate the composite body of subtree i along the joint's motion
subspace S_i = (z_i, o_i × z_i) (revolute) or (0, z_i) (prismatic); M_ji = S_j · F_i for every
ancestor j of i (Featherstone, Rigid Body Dynamics Algorithms, §6.2).

Arrays use the layout of `WorldT`: body axis first, sample axis last.
"""

from __future__ import annotations

import numpy as np

from .blocks import check_result, in_blocks
from .checks import as_batch
from .kinematics import WorldT, dynamics_origin, world_quantities_t
from .spatial import cross3
from .mimic import coordinate_matrix
from .model import PRISMATIC, RobotModel


def composite_inertias(robot: RobotModel, W: WorldT):
    """Subtree mass (n, N), first moment Σ m c (n, 3, N) and rotational inertia about the world
    origin Σ (I_c + m [c]ᵀ[c]) (n, 3, 3, N), accumulated from the leaves towards the base."""
    masses = robot.masses[:, None]
    m = np.repeat(masses, W.c.shape[-1], axis=1)
    h = W.c * masses[:, None]
    cc = (W.c * W.c).sum(axis=1)                                   # (n, N)
    J = W.inertia - masses[:, None, None] * (W.c[:, :, None] * W.c[:, None, :])
    for a in range(3):
        J[:, a, a] += robot.masses[:, None] * cc
    for k in range(robot.n_bodies - 1, -1, -1):
        p = robot.parents[k]
        if p >= 0:
            m[p] += m[k]
            h[p] += h[k]
            J[p] += J[k]
    return m, h, J


def motion_subspaces(robot: RobotModel, W: WorldT) -> np.ndarray:
    """World-frame joint motion subspaces S (n, 6, N) as (angular; linear at the world origin)."""
    S = np.zeros((robot.n_bodies, 6, W.z.shape[-1]))
    prism = np.array([t == PRISMATIC for t in robot.joint_types])
    cross3(W.o, W.z, axis=1, out=S[:, 3:])                        # every body at once (the same products)
    S[prism, 3:] = W.z[prism]
    S[~prism, :3] = W.z[~prism]
    return S


def mass_matrix_world(robot: RobotModel, W: WorldT, composites=None) -> np.ndarray:
    """M with the sample axis first, (N, n, n); with mimic joints Gᵀ M_bodies G (`dynamics.mimic`)."""
    m, h, J = composites if composites is not None else composite_inertias(robot, W)
    S = motion_subspaces(robot, W)
    w, v = S[:, :3], S[:, 3:]                                     # (n, 3, N)
    hT, wT, vT = (np.swapaxes(x, 0, 1) for x in (h, w, v))        # (3, n, N)
    # F_i = I^c_i S_i:  moment J ω + h × v,  force m v + ω × h
    moment = (J * w[:, None, :, :]).sum(axis=2) + np.swapaxes(cross3(hT, vT), 0, 1)
    force = m[:, None] * v + np.swapaxes(cross3(wT, hT), 0, 1)
    F = np.concatenate((moment, force), axis=1)                   # (n, 6, N)
    M = np.einsum("jan,ian->nji", S, F)                           # S_j · F_i for all pairs
    upper = M * robot.subtree_mask()                              # keep j ancestor-or-self of i
    M = coordinate_matrix(robot, upper + np.swapaxes(upper, -1, -2) - upper * np.eye(robot.n_bodies))
    if robot.armature is not None and np.any(robot.armature):
        M = M + np.diag(robot.armature)                           # rotor inertia G²·J_m on the diagonal
    return M


def mass_matrix(robot: RobotModel, q) -> np.ndarray:
    """Joint-space inertia matrix M(q), shape (..., n, n)."""
    q2, single = as_batch(robot, q, "q")
    check_result("mass_matrix", q2.shape[0], robot.n ** 2)
    M = in_blocks(lambda q: mass_matrix_world(robot, world_quantities_t(robot, q, dynamics_origin(robot))),
                  8.0 * 6 * robot.n_bodies ** 2 + 4096, q2)
    return M[0] if single else M
