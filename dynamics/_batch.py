"""Input checking and the world-frame kinematic quantities shared by the recursive algorithms."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .mimic import body_positions
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


def cross3(a, b, axis: int = 0, out=None):
    """Cross product over `axis` (default the first: component-first arrays (3, ...), broadcasting).

    Written with ufunc outputs into one preallocated array (or `out`): about twice as fast as stacking
    the three components for the (3, pairs, samples) arrays of the recursions."""
    a, b = np.asarray(a), np.asarray(b)
    if axis != 0:
        return np.moveaxis(cross3(np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0),
                                  out=None if out is None else np.moveaxis(out, axis, 0)), 0, axis)
    if out is None:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b))
    tmp = np.empty(out.shape[1:], dtype=out.dtype)
    for k, (i, j) in enumerate(((1, 2), (2, 0), (0, 1))):
        np.multiply(a[i], b[j], out=out[k])
        np.multiply(a[j], b[i], out=tmp)
        out[k] -= tmp
    return out


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


def _sin_cos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sin x, cos x from t = tan(x/2) (within 1 ulp-ish of np.sin/np.cos; NumPy's float64 tan is
    SIMD-vectorised but its sin and cos are not, so this is ~4× faster)."""
    t = np.tan(0.5 * x)
    t2 = t * t
    d = 1.0 / (1.0 + t2)
    return 2.0 * t * d, (1.0 - t2) * d


def _axis_frames(axes: np.ndarray) -> np.ndarray:
    """Rotations P (n, 3, 3) whose third column is the unit axis (n, 3): Rot(axis, q) = P Rz(q) Pᵀ."""
    e = np.eye(3)[np.argmin(np.abs(axes), axis=1)]          # the coordinate axis least aligned with it
    u = cross(axes, e)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return np.stack((u, cross(axes, u), axes), axis=-1)


def world_quantities_t(robot: RobotModel, q: np.ndarray) -> WorldT:
    """Forward recursion over the tree, T_world_i = T_world_parent(i) · [R_i, p_i] · X_joint_i(q_i).

    A revolute joint's rotation is Rot(a, q) = P Rz(q) Pᵀ with P a constant frame whose z axis is a, so
    R_i = Q Pᵀ with Q = (R_parent R_i P) Rz(q): Rz(q) mixes two columns, everything else is a product
    with a constant 3×3 matrix (np.matmul over the sample axis); no batched 3×3 matrix products."""
    N, n = q.shape
    n = robot.n_bodies
    memory = np.empty(27 * n * N)   # one allocation for all fields: malloc can reuse it call after call
    R, inertia = memory[:18 * n * N].reshape(2, n, 3, 3, N)           # (fresh memory costs page faults)
    o, z, c = memory[18 * n * N:].reshape(3, n, 3, N)
    return world_quantities_into(robot, q, WorldT(R, o, z, c, inertia))


def world_quantities_into(robot: RobotModel, q: np.ndarray, out: WorldT) -> WorldT:
    """`world_quantities_t` written into the given arrays (e.g. reused work arrays for blocks of samples).
    `q` holds the coordinates (N, n); with mimic joints every body's joint position is G q + q0 (`dynamics.mimic`)."""
    q = body_positions(robot, q)
    N, n = q.shape
    R, o, z, c, inertia = out
    qT = np.ascontiguousarray(q.T)
    P = _axis_frames(robot.axes)
    D = robot.placement_rotations @ P                       # joint frame (z = axis) at q = 0, in the parent
    sin_q, cos_q = _sin_cos(qT)
    Q = np.empty((3, 3, N))
    for i in range(n):
        p = robot.parents[i]
        R_p, o_p = (np.eye(3)[:, :, None], 0.0) if p < 0 else (R[p], o[p])
        o[i] = o_p + np.matmul(robot.placement_translations[i], R_p)         # o_parent + R_parent p_i
        if robot.joint_types[i] == PRISMATIC:
            R[i] = np.matmul(robot.placement_rotations[i].T, R_p)            # R_parent R_i
            z[i] = np.matmul(robot.axes[i], R[i])
            o[i] += qT[i] * z[i]
        else:
            Qa = np.matmul(D[i].T, R_p)                                      # R_parent R_i P
            s, co = sin_q[i], cos_q[i]
            Q[:, 0] = co * Qa[:, 0] + s * Qa[:, 1]                           # Q = Qa Rz(q)
            Q[:, 1] = co * Qa[:, 1] - s * Qa[:, 0]
            Q[:, 2] = Qa[:, 2]
            np.matmul(P[i], Q, out=R[i])                                     # R = Q Pᵀ
            z[i] = Q[:, 2]
        c[i] = o[i] + np.matmul(robot.coms[i], R[i])
        np.einsum("aks,bks->abs", np.matmul(robot.inertias[i].T, R[i]), R[i], out=inertia[i])   # R I Rᵀ
    return out


def body_poses(robot: RobotModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World rotation (N, n, 3, 3) and origin (N, n, 3) of every body."""
    W = world_quantities(robot, q)
    return W.R, W.o


def world_quantities(robot: RobotModel, q: np.ndarray) -> World:
    """`world_quantities_t` with the sample axis first (views, no copy)."""
    T = world_quantities_t(robot, q)
    return World(np.moveaxis(T.R, -1, 0), np.moveaxis(T.o, -1, 0), np.moveaxis(T.z, -1, 0),
                 np.moveaxis(T.c, -1, 0), np.moveaxis(T.inertia, -1, 0))
