"""Limits along the path: the canonical rows (`rows`), joint limits (`joint`), Cartesian tool-speed and
collision-energy limits (`cartesian`), torque-rate and jerk limits on the sampled trajectory (`rates`)."""

from .joint import (BoundaryVelocity, JointAccelerationLimit, JointTorqueLimit, JointVelocityLimit,
                    default_limits)
from .rows import INACTIVE, Limit, PathData, RowBlock, max_path_speed_squared, per_joint_positive

__all__ = ["BoundaryVelocity", "JointAccelerationLimit", "JointTorqueLimit", "JointVelocityLimit", "default_limits",
           "INACTIVE", "Limit", "PathData", "RowBlock", "max_path_speed_squared", "per_joint_positive"]
