"""Forward kinematics: homogeneous poses of every body and of named frames, batched over samples."""

from __future__ import annotations

import numpy as np

from .checks import as_batch
from .kinematics import body_poses, world_quantities
from .mimic import coordinate_jacobian
from .model import RobotModel
from .spatial import cross, homogeneous


def forward_kinematics(robot: RobotModel, q) -> np.ndarray:
    """Poses of all bodies in the base frame, shape (..., n_bodies, 4, 4) for q of shape (..., n) (n_bodies = n
    unless some joints mimic others)."""
    q2, single = as_batch(robot, q, "q")
    T = homogeneous(*body_poses(robot, q2))
    return T[0] if single else T


def frame_pose(robot: RobotModel, q, frame: str | None = None) -> np.ndarray:
    """Pose (..., 4, 4) of a named frame (a link or an extra frame; default the tool frame)."""
    body, T_body = robot.frame(frame)
    T = forward_kinematics(robot, q)[..., body, :, :]
    return T @ T_body


def frame_jacobian(robot: RobotModel, q, frame: str | None = None) -> np.ndarray:
    """Geometric Jacobian (..., 6, n) of a frame's origin: rows (v; ω) in the base frame (J_bodies G with
    mimic joints, `dynamics.mimic`)."""
    q2, single = as_batch(robot, q, "q")
    body, T_body = robot.frame(frame)
    W = world_quantities(robot, q2)
    p = W.o[:, body] + W.R[:, body] @ T_body[:3, 3]
    anc = robot.subtree_mask()[:, body]
    J = np.zeros((q2.shape[0], 6, robot.n_bodies))
    for j in np.flatnonzero(anc):
        if robot.joint_types[j] == "prismatic":
            J[:, :3, j] = W.z[:, j]
        else:
            J[:, :3, j] = cross(W.z[:, j], p - W.o[:, j])
            J[:, 3:, j] = W.z[:, j]
    J = coordinate_jacobian(robot, J)
    return J[0] if single else J
