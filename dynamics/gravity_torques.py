"""Generalised gravity forces g(q) from the subtree masses and first moments.

g_k = z_k · ((Σ_b m_b (c_b − o_k)) × (−g0)) for a revolute joint, z_k · (−m_subtree g0) for a
prismatic one, summing over the bodies b of joint k's subtree (a static Newton–Euler backward pass).
"""

from __future__ import annotations

import numpy as np

from .checks import as_batch
from .kinematics import WorldT, dynamics_origin, world_quantities_t
from .spatial import cross3
from .mass_matrix import composite_inertias
from .mimic import coordinate_forces
from .model import PRISMATIC, RobotModel


def gravity_torques_world(robot: RobotModel, W: WorldT, composites=None) -> np.ndarray:
    """g with the sample axis first, (N, n); with mimic joints Gᵀ g_bodies (`dynamics.mimic`)."""
    m, h, _ = composites if composites is not None else composite_inertias(robot, W)
    weight = -robot.gravity                                   # force needed to hold 1 kg still
    lever = np.swapaxes(h - m[:, None] * W.o, 0, 1)           # Σ m_b (c_b − o_k), (3, n, N)
    moment = np.swapaxes(cross3(lever, weight[:, None, None]), 0, 1)
    force = m[:, None] * weight[None, :, None]
    prism = np.array([t == PRISMATIC for t in robot.joint_types])
    per_joint = np.where(prism[:, None, None], force, moment)
    return coordinate_forces(robot, (W.z * per_joint).sum(axis=1).T)


def gravity_torques(robot: RobotModel, q) -> np.ndarray:
    """Joint torques (forces) that hold the robot still against gravity, shape (..., n)."""
    q2, single = as_batch(robot, q, "q")
    g = gravity_torques_world(robot, world_quantities_t(robot, q2, dynamics_origin(robot)))
    return g[0] if single else g
