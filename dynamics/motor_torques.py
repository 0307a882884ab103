"""The torques the motors must deliver along a motion: rigid-body inverse dynamics (RNEA, `inverse_dynamics`)
plus joint friction (`friction_torques`), τ = M(q) q̈ + C(q, q̇) q̇ + g(q) + F_c sign(q̇) + F_v q̇ — the one
place this sum is written."""

from __future__ import annotations

import numpy as np

from .checks import ModelError, as_batch
from .inverse_dynamics import friction_torques, inverse_dynamics
from .model import RobotModel


def motor_torques(robot: RobotModel, q, qd, qdd, direction=None, **rnea_options) -> np.ndarray:
    """τ (..., n) for q, q̇, q̈ of shape (..., n): inverse dynamics plus Coulomb and viscous friction
    (`rnea_options` go to `inverse_dynamics`, e.g. precomputed world quantities).

    `direction` (..., n), optional: the Coulomb term is F_c sign(direction) instead of F_c sign(q̇). Along a
    path moving forward (θ̇ ≥ 0) pass q′: the same where the joint moves, and where it is at rest for an
    instant — the start and end of a motion, whose samples carry the acceleration of the motion next to
    them — the one-sided limit of that motion, which is what the motor must deliver there."""
    tau = inverse_dynamics(robot, q, qd, qdd, **rnea_options)
    if direction is None:
        return tau + friction_torques(robot, qd)
    d, _ = as_batch(robot, direction, "direction")                 # (a string, NaN or complex: one line)
    if np.shape(direction) != np.shape(tau):                       # (numpy would broadcast (N, n) or (N, 1))
        raise ModelError(f"direction: shape {np.shape(direction)} does not match qd's shape {np.shape(tau)}")
    return tau + robot.coulomb * np.sign(d.reshape(tau.shape)) + robot.viscous * np.asarray(qd, dtype=float)
