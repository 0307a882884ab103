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


def cross3(a, b, axis: int = 0):
    """Cross product over `axis` (default the first: component-first arrays (3, ...), broadcasting).

    Written with ufunc outputs into one preallocated array: about twice as fast as stacking the three
    components for the (3, pairs, samples) arrays of the recursions."""
    a = np.moveaxis(np.asarray(a), axis, 0)
    b = np.moveaxis(np.asarray(b), axis, 0)
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b))
    tmp = np.empty(out.shape[1:], dtype=out.dtype)
    for k, (i, j) in enumerate(((1, 2), (2, 0), (0, 1))):
        np.multiply(a[i], b[j], out=out[k])
        np.multiply(a[j], b[i], out=tmp)
        out[k] -= tmp
    return np.moveaxis(out, 0, axis)


class World(NamedTuple):
    """World-frame quantities per sample and body (leading axes (N, n))."""
    R: np.ndarray        # body rotations (N, n, 3, 3)
    o: np.ndarray        # body (= joint) origins (N, n, 3)
    z: np.ndarray        # joint axes (N, n, 3), unit
    c: np.ndarray        # centres of mass (N, n, 3)
    inertia: np.ndarray  # inertia about the COM, world axes (N, n, 3, 3)


class WorldT(NamedTuple):
    """The same quantities with the body axis first and the sample axis last, (n, ..., N): the
    layout the recursive algorithms use, so every per-body operation is a few contiguous vector ops."""
    R: np.ndarray        # (n, 3, 3, N)
    o: np.ndarray        # (n, 3, N)
    z: np.ndarray        # (n, 3, N)
    c: np.ndarray        # (n, 3, N)
    inertia: np.ndarray  # (n, 3, 3, N)


def _skew(a: np.ndarray) -> np.ndarray:
    x, y, z = a
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def world_quantities_t(robot: RobotModel, q: np.ndarray) -> WorldT:
    """Forward recursion over the tree, T_world_i = T_world_parent(i) · [R_i, p_i] · X_joint_i(q_i).

    A revolute joint's rotation Rot(a, q) = 1 + sin q K + (1 − cos q) K² (Rodrigues, K = [a]×), so
    R_i = A + sin q (A K) + (1 − cos q)(A K²) with A = R_parent R_i: only products with constant
    3×3 matrices, no batched 3×3 matrix products."""
    N, n = q.shape
    qT = q.T
    R = np.empty((n, 3, 3, N))
    o = np.empty((n, 3, N))
    z = np.empty((n, 3, N))
    c = np.empty((n, 3, N))
    inertia = np.empty((n, 3, 3, N))
    for i in range(n):
        p = robot.parents[i]
        R_pl, p_pl, axis = robot.placement_rotations[i], robot.placement_translations[i], robot.axes[i]
        if p < 0:
            A = np.repeat(R_pl[:, :, None], N, axis=2)
            oi = np.repeat(p_pl[:, None], N, axis=1)
        else:
            A = np.matmul(R_pl.T, R[p])                     # R_parent R_pl
            oi = o[p] + np.matmul(p_pl, R[p])               # R_parent p_pl
        z[i] = np.matmul(axis, A)
        if robot.joint_types[i] == PRISMATIC:
            R[i] = A
            o[i] = oi + qT[i] * z[i]
        else:
            K = _skew(axis)
            B = np.matmul(K.T, A)                              # A K
            R[i] = A + np.sin(qT[i]) * B + (1.0 - np.cos(qT[i])) * np.matmul(K.T, B)
            o[i] = oi
        c[i] = o[i] + np.matmul(robot.coms[i], R[i])
        RI = np.matmul(robot.inertias[i].T, R[i])
        inertia[i] = sum(RI[:, None, k] * R[i][None, :, k] for k in range(3))      # R I Rᵀ
    return WorldT(R, o, z, c, inertia)


def body_poses(robot: RobotModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World rotation (N, n, 3, 3) and origin (N, n, 3) of every body."""
    W = world_quantities(robot, q)
    return W.R, W.o


def world_quantities(robot: RobotModel, q: np.ndarray) -> World:
    """`world_quantities_t` with the sample axis first (views, no copy)."""
    T = world_quantities_t(robot, q)
    return World(np.moveaxis(T.R, -1, 0), np.moveaxis(T.o, -1, 0), np.moveaxis(T.z, -1, 0),
                 np.moveaxis(T.c, -1, 0), np.moveaxis(T.inertia, -1, 0))
