"""Generalised gravity forces g(q) from the subtree masses and first moments.

g_k = z_k · ((Σ_b m_b (c_b − o_k)) × (−g0)) for a revolute joint, z_k · (−m_subtree g0) for a
prismatic one, summing over the bodies b of joint k's subtree (a static Newton–Euler backward pass).
"""

from __future__ import annotations

import numpy as np

from ._batch import World, as_batch, cross, world_quantities
from .mass_matrix import composite_inertias
from .model import PRISMATIC, RobotModel


def gravity_torques_world(robot: RobotModel, W: World, composites=None) -> np.ndarray:
    m, h, _ = composites if composites is not None else composite_inertias(robot, W)
    weight = -robot.gravity                                   # force needed to hold 1 kg still
    moment = cross(h - m[..., None] * W.o, np.broadcast_to(weight, W.o.shape))
    force = m[..., None] * weight
    prism = np.array([t == PRISMATIC for t in robot.joint_types])
    per_joint = np.where(prism[None, :, None], force, moment)
    return np.einsum("nki,nki->nk", W.z, per_joint)


def gravity_torques(robot: RobotModel, q) -> np.ndarray:
    """Joint torques (forces) that hold the robot still against gravity, shape (..., n)."""
    q2, single = as_batch(robot, q, "q")
    W = world_quantities(robot, q2)
    g = gravity_torques_world(robot, W)
    return g[0] if single else g
