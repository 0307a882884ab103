"""The torques the motors must deliver along a motion: rigid-body inverse dynamics (RNEA, `inverse_dynamics`)
plus joint friction (`friction_torques`), τ = M(q) q̈ + C(q, q̇) q̇ + g(q) + F_c sign(q̇) + F_v q̇ — the one
place this sum is written."""

from __future__ import annotations

import numpy as np

from .inverse_dynamics import friction_torques, inverse_dynamics
from .model import RobotModel


def motor_torques(robot: RobotModel, q, qd, qdd, **rnea_options) -> np.ndarray:
    """τ (..., n) for q, q̇, q̈ of shape (..., n): inverse dynamics plus Coulomb and viscous friction
    (`rnea_options` go to `inverse_dynamics`, e.g. precomputed world quantities)."""
    return inverse_dynamics(robot, q, qd, qdd, **rnea_options) + friction_torques(robot, qd)
