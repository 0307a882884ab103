"""Input checking and the world-frame kinematic quantities shared by the recursive algorithms."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .model import PRISMATIC, ModelError, RobotModel


def as_batch(robot: RobotModel, value, name: str) -> tuple[np.ndarray, bool]:
    """``value`` of shape (n,) or (N, n) as a float (N, n) array, and whether it was a single sample."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{name}: expected numbers of shape (n,) or (N, n) with n = {robot.n}") from None
    single = arr.ndim == 1
    if single:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != robot.n:
        raise ModelError(f"{name}: expected shape ({robot.n},) or (N, {robot.n}) for robot '{robot.name}', got {np.shape(value)}")
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ModelError(f"{name}: non-finite value at sample {bad[0]}, joint {bad[1]}")
    return arr, single


def same_batch(robot: RobotModel, q, *others):
    """Check q and further arrays (name, value) to one common batch shape."""
    q2, single = as_batch(robot, q, "q")
    out = [q2]
    for name, v in others:
        v2, s2 = as_batch(robot, v, name)
        if s2 != single or v2.shape != q2.shape:
            raise ModelError(f"{name}: shape {np.shape(v)} does not match q's shape {np.shape(q)}")
        out.append(v2)
    return out, single


def axis_rotation(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation matrices (N, 3, 3) about a unit ``axis`` (3,) by angles (N,) (Rodrigues)."""
    x, y, z = axis
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def cross(a, b):
    """Cross product over the last axis (faster than np.cross for small arrays)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


class World(NamedTuple):
    """World-frame quantities per sample and body (leading axes (N, n))."""
    R: np.ndarray        # body rotations (N, n, 3, 3)
    o: np.ndarray        # body (= joint) origins (N, n, 3)
    z: np.ndarray        # joint axes (N, n, 3), unit
    c: np.ndarray        # centres of mass (N, n, 3)
    inertia: np.ndarray  # inertia about the COM, world axes (N, n, 3, 3)


def body_poses(robot: RobotModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward recursion over the tree: world rotation (N, n, 3, 3) and origin (N, n, 3) of every body.

    T_world_i = T_world_parent(i) · [R_i, p_i] · X_joint_i(q_i)."""
    N, n = q.shape
    R = np.empty((N, n, 3, 3))
    o = np.empty((N, n, 3))
    for i in range(n):
        p = robot.parents[i]
        if p < 0:
            Rp, op = np.broadcast_to(np.eye(3), (N, 3, 3)), np.zeros((N, 3))
        else:
            Rp, op = R[:, p], o[:, p]
        Rj = Rp @ robot.placement_rotations[i]
        oj = op + Rp @ robot.placement_translations[i]
        if robot.joint_types[i] == PRISMATIC:
            R[:, i] = Rj
            o[:, i] = oj + q[:, i, None] * (Rj @ robot.axes[i])
        else:
            R[:, i] = Rj @ axis_rotation(robot.axes[i], q[:, i])
            o[:, i] = oj
    return R, o


def world_quantities(robot: RobotModel, q: np.ndarray) -> World:
    R, o = body_poses(robot, q)
    z = (R @ robot.axes[:, :, None])[..., 0]
    c = o + (R @ robot.coms[:, :, None])[..., 0]
    inertia = R @ robot.inertias @ np.swapaxes(R, -1, -2)
    return World(R, o, z, c, inertia)
