"""Spatial maths shared by the builders, the parsers and the recursive algorithms — one copy of each.

* Rotations: `rotx`, `roty`, `rotz`, `rpy_matrix` (URDF/SDF roll-pitch-yaw) and its inverse
  `rpy_from_matrix`, `axis_rotation` (Rodrigues, batched over angles) and `axis_angle` (one angle).
* Rigid transforms: `homogeneous`, `trans`.
* Cross products: `skew` (S(a) b = a × b), `cross` (last axis), `cross3` (component-first arrays, the
  layout of the recursions), and the 6-D spatial cross operators `crm`, `crf`, `crf_bar` of Featherstone's
  spatial algebra as Echeandia & Wensing (2021) write them (Appendix A; eq. 8 for crf).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["rotx", "roty", "rotz", "rpy_matrix", "rpy_from_matrix", "axis_rotation", "axis_angle",
           "homogeneous", "trans", "skew", "cross", "cross3", "crm", "crf", "crf_bar"]


# ---------------------------------------------------------------------------------- rotations
def rotx(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def roty(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rotz(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF/SDF roll-pitch-yaw: fixed-axis rotations about x, then y, then z: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    return rotz(yaw) @ roty(pitch) @ rotx(roll)


def rpy_from_matrix(R: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) with R = Rz(yaw) Ry(pitch) Rx(roll) (URDF's convention), accurate to rounding for
    every rotation: pitch = atan2(−R₂₀, cos pitch) with cos pitch = ‖(R₀₀, R₁₀)‖, yaw from that first column
    (also in the gimbal lock, pitch = ±90°, where only roll ∓ yaw is defined and the column is rounding: a
    yaw set to 0 below c = 1e-15 lost the column's 5e-16 entries), and roll from what is left,
    (Rz(yaw) Ry(pitch))ᵀ R = Rx(roll). (asin(−R₂₀), snapped to the gimbal lock within 1e-12 of ±1, lost up to
    1e-6 rad near ±90°: `to_urdf` moved Baxter's elbow frames, pitch 4.9e-12 short of 90°, by 4.9e-12.)"""
    R = np.asarray(R, dtype=float)
    c = math.hypot(R[0, 0], R[1, 0])
    pitch = math.atan2(-R[2, 0], c)
    yaw = math.atan2(R[1, 0], R[0, 0])      # any yaw where c is rounding only: roll takes up the rest
    rest = (rotz(yaw) @ roty(pitch)).T @ R                       # Rx(roll), to rounding
    return math.atan2(rest[2, 1], rest[1, 1]), pitch, yaw


def axis_rotation(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation matrices (N, 3, 3) about a unit ``axis`` (3,) by angles (N,) (Rodrigues:
    R = 1 + sin θ K + (1 − cos θ) K², K = S(axis))."""
    x, y, z = axis
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    """One rotation matrix (3, 3) about a unit ``axis`` by ``angle`` (`axis_rotation` of one angle)."""
    return axis_rotation(axis, np.array([float(angle)]))[0]


# ---------------------------------------------------------------------------------- rigid transforms
def homogeneous(R=None, p=None) -> np.ndarray:
    """4×4 rigid transform from a rotation (default identity) and a translation (default zero); batched
    over leading axes: R (..., 3, 3) and p (..., 3) give (..., 4, 4)."""
    R = np.eye(3) if R is None else np.asarray(R, dtype=float)
    p = np.zeros(3) if p is None else np.asarray(p, dtype=float)
    T = np.zeros(np.broadcast_shapes(R.shape[:-2], p.shape[:-1]) + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = p
    T[..., 3, 3] = 1.0
    return T


def trans(x: float = 0.0, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    """4×4 pure translation."""
    return homogeneous(p=(x, y, z))


# ---------------------------------------------------------------------------------- cross products
def skew(a: np.ndarray) -> np.ndarray:
    """S(a): (..., 3) -> (..., 3, 3) with S(a) b = a × b."""
    a = np.asarray(a)
    S = np.zeros(a.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -a[..., 2], a[..., 1], -a[..., 0]
    S[..., 1, 0], S[..., 2, 0], S[..., 2, 1] = a[..., 2], -a[..., 1], a[..., 0]
    return S


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


# ------------------------------------------------- spatial (6-D) cross operators, Echeandia & Wensing App. A
def crm(v: np.ndarray) -> np.ndarray:
    """(v ×) on motions: [[S(ω), 0], [S(v_O), S(ω)]]."""
    X = np.zeros(v.shape[:-1] + (6, 6))
    w = skew(v[..., :3])
    X[..., :3, :3] = w
    X[..., 3:, 3:] = w
    X[..., 3:, :3] = skew(v[..., 3:])
    return X


def crf(v: np.ndarray) -> np.ndarray:
    """(v ×*) on forces = −(v ×)ᵀ (eq. 8)."""
    return -np.swapaxes(crm(v), -1, -2)


def crf_bar(f: np.ndarray) -> np.ndarray:
    """(f ×̄*), the operator with (f ×̄*) v = v ×* f: [[−S(n), −S(f)], [−S(f), 0]] (Appendix A)."""
    X = np.zeros(f.shape[:-1] + (6, 6))
    sf = skew(f[..., 3:])
    X[..., :3, :3] = -skew(f[..., :3])
    X[..., :3, 3:] = -sf
    X[..., 3:, :3] = -sf
    return X
