"""World-frame kinematic quantities of every body, batched over samples: the forward recursion the
recursive algorithms (RNEA, CRBA, Safeea's Christoffel recursion, the path coefficients) start from, and
the body poses used by forward kinematics.

T_world_i = T_world_parent(i) · [R_i, p_i] · X_joint_i(q_i)   (the model's convention, `dynamics.model`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .mimic import body_positions
from .model import PRISMATIC, RobotModel
from .spatial import cross

__all__ = ["World", "WorldT", "world_quantities", "world_quantities_t", "world_quantities_into", "body_poses",
           "dynamics_origin"]


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


@lru_cache(maxsize=64)
def _joint_frames(robot: RobotModel) -> tuple[np.ndarray, np.ndarray]:
    """(P, D), read-only, of a robot (immutable, keyed by identity): its joints' frames P = `_axis_frames`
    and D = R_i P, the joint frame at q = 0 in the parent; once per robot rather than on every batch
    (~60 µs of a forward recursion on a few dozen samples)."""
    P = _axis_frames(robot.axes)
    D = robot.placement_rotations @ P
    P.flags.writeable = D.flags.writeable = False
    return P, D


FAR = 1.0   # m: a root joint further than this from the world origin makes the dynamics reference positions to it


def dynamics_origin(robot: RobotModel) -> np.ndarray | None:
    """The point (3,) the dynamics algorithms take positions from, or None for the world origin.

    M, g, the Christoffel symbols and the Coriolis matrix do not depend on where the world origin is (gravity
    is uniform), but the algorithms form quantities about it — the composite inertia Σ I + m(|c|² 1 − c cᵀ),
    the motion subspaces (k; o × k) — whose large parts cancel in the result: for a robot mounted d metres
    away the rounding error grows as (d / its size)² (the iiwa 7 at 100 m: M and m̃ off by 1.5e-10, at 1 km
    by 1e-8, where Pinocchio's local frames give 1e-15). A robot whose first root joint is more than `FAR`
    from the world origin is therefore computed about that joint's placement (constant; robots at the origin
    keep their results bit for bit)."""
    p = robot.placement_translations[int(np.flatnonzero(robot.parents < 0)[0])]
    return np.array(p) if np.linalg.norm(p) > FAR else None


def world_quantities_t(robot: RobotModel, q: np.ndarray, origin: np.ndarray | None = None) -> WorldT:
    """Forward recursion over the tree, T_world_i = T_world_parent(i) · [R_i, p_i] · X_joint_i(q_i).
    `origin` (3,): positions (o, c) are taken from that point instead of the world origin (`dynamics_origin`).

    A revolute joint's rotation is Rot(a, q) = P Rz(q) Pᵀ with P a constant frame whose z axis is a, so
    R_i = Q Pᵀ with Q = (R_parent R_i P) Rz(q): Rz(q) mixes two columns, everything else is a product
    with a constant 3×3 matrix (np.matmul over the sample axis); no batched 3×3 matrix products."""
    N, n = q.shape
    n = robot.n_bodies
    memory = np.empty(27 * n * N)   # one allocation for all fields: malloc can reuse it call after call
    R, inertia = memory[:18 * n * N].reshape(2, n, 3, 3, N)           # (fresh memory costs page faults)
    o, z, c = memory[18 * n * N:].reshape(3, n, 3, N)
    return world_quantities_into(robot, q, WorldT(R, o, z, c, inertia), origin)


def world_quantities_into(robot: RobotModel, q: np.ndarray, out: WorldT, origin: np.ndarray | None = None) -> WorldT:
    """`world_quantities_t` written into the given arrays (e.g. reused work arrays for blocks of samples).
    `q` holds the coordinates (N, n); with mimic joints every body's joint position is G q + q0 (`dynamics.mimic`)."""
    q = body_positions(robot, q)
    N, n = q.shape
    R, o, z, c, inertia = out
    qT = np.ascontiguousarray(q.T)
    P, D = _joint_frames(robot)                             # D: joint frame (z = axis) at q = 0, in the parent
    sin_q, cos_q = _sin_cos(qT)
    Q = np.empty((3, 3, N))
    base = 0.0 if origin is None else -np.asarray(origin, dtype=float)[:, None]   # the roots' parent origin
    for i in range(n):
        p = robot.parents[i]
        R_p, o_p = (np.eye(3)[:, :, None], base) if p < 0 else (R[p], o[p])
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


def world_quantities(robot: RobotModel, q: np.ndarray, origin: np.ndarray | None = None) -> World:
    """`world_quantities_t` with the sample axis first (views, no copy)."""
    T = world_quantities_t(robot, q, origin)
    return World(np.moveaxis(T.R, -1, 0), np.moveaxis(T.o, -1, 0), np.moveaxis(T.z, -1, 0),
                 np.moveaxis(T.c, -1, 0), np.moveaxis(T.inertia, -1, 0))
