"""Inertial parameters of rigid bodies: their physical consistency, and the algebra that moves and merges them.

A body's inertial data is (m, c, I_C): mass, centre of mass and inertia about the centre of mass, all in
one frame. The composite of bodies given in the same frame (parallel-axis / Huygens–Steiner theorem):

    m = Σ m_k
    c = Σ m_k c_k / m
    I = Σ_k  I_k + m_k (|d_k|² 1 − d_k d_kᵀ),   d_k = c_k − c

Expressed in another frame B, with T_BA = (R, p) the pose of the current frame A in B:
c_B = R c_A + p, I_B = R I_A Rᵀ (a tensor about the COM only rotates). This is what Safeea et al. (2019),
Section 6, need to treat "the last link of the robot and the object as one body" (`dynamics.payload`),
what the URDF reader needs to weld links on fixed joints (`dynamics.io.urdf`), and what Gonçalves et
al.'s models need to merge fixed links (`dynamics.euler_zxz`) — one copy here.

There is no payload regressor in the project (the payload enters the planner as parameters of the
merged model, not as a linear regressor).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .checks import ModelError, PayloadError, short_repr
from .spatial import skew

if TYPE_CHECKING:                     # annotations only: the model imports this module
    from .model import RobotModel

__all__ = ["check_inertial", "parallel_axis", "merge_inertials", "inertia_matrix", "cylinder_inertia",
           "RigidBodyInertia", "body_inertia", "composite"]


def check_inertial(where: str, mass: float, inertia: np.ndarray, tol: float = 1e-9, *, realisable: bool = True) -> None:
    """Physical consistency of a rigid body's mass and inertia about its centre of mass.

    Mass positive (or exactly zero for a massless body, whose inertia must then be zero); inertia
    symmetric, positive semi-definite, principal moments satisfying the triangle inequality
    I_a + I_b >= I_c (the density cannot be negative). With ``realisable=False`` only what the dynamics
    algorithms need: mass >= 0, inertia symmetric positive semi-definite (as Pinocchio accepts)."""
    I = np.asarray(inertia, dtype=float)
    if not np.isfinite(mass) or not np.isfinite(I).all():
        raise ModelError(f"{where}: mass and inertia must be finite numbers")
    if mass < 0:
        raise ModelError(f"{where}: mass must be positive (or 0 for a massless link), got {mass}")
    scale = max(float(np.abs(I).max()), 1e-12)
    if np.abs(I - I.T).max() > tol * scale:
        raise ModelError(f"{where}: inertia must be symmetric, got {I.tolist()}")
    if mass == 0 and realisable:
        if np.abs(I).max() > 0:
            raise ModelError(f"{where}: a massless link must have zero inertia")
        return
    ev = np.linalg.eigvalsh(0.5 * (I + I.T))
    if ev[0] < -tol * scale:
        raise ModelError(f"{where}: inertia must be positive semi-definite, principal moments {ev.tolist()}")
    if realisable and ev[0] + ev[1] < ev[2] - tol * scale:
        raise ModelError(f"{where}: principal moments {ev.tolist()} violate the triangle inequality I1 + I2 >= I3")


def parallel_axis(d: np.ndarray) -> np.ndarray:
    """|d|² 1 − d dᵀ (= −S(d)²), the parallel-axis term per unit mass for a displacement d of the COM."""
    d = np.asarray(d, dtype=float)
    return np.dot(d, d) * np.eye(3) - np.outer(d, d)


def merge_inertials(parts):
    """Combine rigid bodies [(mass, com (3,), inertia about com (3, 3))] given in one frame into one:
    (mass, com, inertia about the combined com). A massless part adds only its inertia (as Pinocchio)."""
    parts = [(float(m), np.asarray(c, float), np.asarray(I, float)) for m, c, I in parts]
    mass = sum(m for m, _, _ in parts)
    com = sum(m * c for m, c, _ in parts) / mass if mass > 0 else np.zeros(3)
    inertia = np.zeros((3, 3))
    for m, c, I in parts:
        r = c - com
        inertia += I + m * parallel_axis(r)                 # parallel-axis theorem
    return mass, com, 0.5 * (inertia + inertia.T)


def inertia_matrix(ixx, iyy, izz, ixy=0.0, ixz=0.0, iyz=0.0) -> np.ndarray:
    """Symmetric 3×3 inertia tensor from its six entries (I_xy is the matrix entry, i.e. -∫xy dm
    in the URDF/Gaz et al. convention where the products are stored as they appear in the matrix)."""
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def cylinder_inertia(mass: float, radius: float, length: float, axis: int = 2) -> np.ndarray:
    """Inertia about the centre of mass of a solid cylinder whose axis is the body axis ``axis``."""
    ax = 0.5 * mass * radius**2
    tr = mass * (3.0 * radius**2 + length**2) / 12.0
    d = np.full(3, tr)
    d[axis] = ax
    return np.diag(d)


def _rotation(value, field: str) -> np.ndarray:
    """A proper 3×3 rotation matrix (RᵀR = 1, det R = +1 to 1e-9), else `PayloadError` naming `field`."""
    try:
        if isinstance(value, (str, bytes, dict)) or np.iscomplexobj(value):
            raise TypeError
        R = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise PayloadError(f"{field}: expected a 3×3 rotation matrix, got {short_repr(value)}") from None
    if R.shape != (3, 3):
        raise PayloadError(f"{field}: expected a 3×3 rotation matrix, got shape {R.shape}")
    if not np.isfinite(R).all():
        raise PayloadError(f"{field}: must be finite numbers")
    if np.abs(R.T @ R - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0:
        raise PayloadError(f"{field}: not a proper rotation (RᵀR = 1, det R = +1 within 1e-9), "
                           f"got det {np.linalg.det(R):.6g}")
    return R


@dataclass(frozen=True, eq=False)
class RigidBodyInertia:
    """Mass (kg), centre of mass (3,) and inertia about the centre of mass (3, 3), in one frame.

    Arrays are copied and read-only; the inertia must be physically consistent (symmetric, positive
    semi-definite, triangle inequality; see `check_inertial`). A zero mass (with zero
    inertia) is allowed and is the neutral element of `merge`."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def __post_init__(self):
        if isinstance(self.mass, (bool, np.bool_, str, bytes, complex, np.complexfloating)):
            raise PayloadError(f"payload: mass must be a number in kg, got {short_repr(self.mass)}")
        try:
            mass = float(self.mass)
            if np.iscomplexobj(self.com) or np.iscomplexobj(self.inertia):
                raise TypeError
            com = np.array(self.com, dtype=float, copy=True).reshape(3)
            inertia = np.array(self.inertia, dtype=float, copy=True).reshape(3, 3)
        except (TypeError, ValueError, OverflowError):      # (OverflowError: a Python int beyond a double)
            raise PayloadError(f"payload: expected mass (number), com (3 numbers) and inertia (3×3 numbers), "
                               f"got mass={short_repr(self.mass)}, com={short_repr(self.com)}, inertia={short_repr(self.inertia)}") from None
        if not np.isfinite(com).all():
            raise PayloadError(f"payload: centre of mass must be finite numbers, got {com.tolist()}")
        try:
            check_inertial("payload", mass, inertia)
        except PayloadError:
            raise
        except ModelError as exc:
            raise PayloadError(str(exc)) from None
        with np.errstate(over="ignore", invalid="ignore"):      # m |c|², the inertia about the frame origin
            far = not np.isfinite(abs(mass) * float(com @ com))
        if far:                    # (it overflowed in the merge: a numpy warning, then "must be finite ... inf")
            raise PayloadError(f"payload: centre of mass {com.tolist()} m is too far from the frame origin "
                               f"(its inertia about the origin, m·|c|², overflows)")
        inertia = 0.5 * (inertia + inertia.T)
        com.setflags(write=False)
        inertia.setflags(write=False)
        object.__setattr__(self, "mass", mass)
        object.__setattr__(self, "com", com)
        object.__setattr__(self, "inertia", inertia)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def zero(cls) -> "RigidBodyInertia":
        """The empty body (neutral element of `merge`)."""
        return cls(0.0, np.zeros(3), np.zeros((3, 3)))

    @classmethod
    def point_mass(cls, mass: float, position=(0.0, 0.0, 0.0)) -> "RigidBodyInertia":
        return cls(mass, position, np.zeros((3, 3)))

    @classmethod
    def box(cls, mass: float, size, com_offset=(0.0, 0.0, 0.0), rotation=None) -> "RigidBodyInertia":
        """Uniform solid box of side lengths ``size = (a, b, c)`` (m) along its own axes.

        ``com_offset`` is the box centre in the target frame, ``rotation`` (3×3, default identity) the
        box axes in that frame. I = m/12 diag(b² + c², a² + c², a² + b²) about the centre."""
        try:
            a, b, c = (float(v) for v in np.asarray(size, dtype=float).reshape(3))
        except (TypeError, ValueError):
            raise PayloadError(f"payload box: size must be 3 lengths in m, got {short_repr(size)}") from None
        if not all(np.isfinite(v) and v > 0 for v in (a, b, c)):
            raise PayloadError(f"payload box: size must be 3 positive lengths in m, got {[a, b, c]}")
        I = float(mass) / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
        R = np.eye(3) if rotation is None else _rotation(rotation, "payload box: rotation")
        return cls(mass, com_offset, R @ I @ R.T)

    # ------------------------------------------------------------------ operations
    def merge(self, other: "RigidBodyInertia") -> "RigidBodyInertia":
        """Composite body of ``self`` and ``other`` (both in the same frame), parallel-axis theorem."""
        if not isinstance(other, RigidBodyInertia):
            return NotImplemented
        m, c, I = composite(self.mass, self.com, self.inertia, other)
        return RigidBodyInertia.zero() if m == 0.0 else RigidBodyInertia(m, c, I)

    def __add__(self, other):
        if not isinstance(other, RigidBodyInertia):
            raise PayloadError(f"payload: only another RigidBodyInertia can be added (merged), got "
                               f"{type(other).__name__} {short_repr(other)}")
        return self.merge(other)

    def __radd__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool) and other == 0:   # sum([...])
            return self
        raise PayloadError(f"payload: only another RigidBodyInertia can be added (merged), got "
                           f"{type(other).__name__} {short_repr(other)}")

    def transformed(self, T) -> "RigidBodyInertia":
        """The same body expressed in frame B, given ``T`` = 4×4 pose of the current frame in B."""
        T = np.asarray(T, dtype=float).reshape(4, 4)
        R, p = T[:3, :3], T[:3, 3]
        if not np.isfinite(T).all() or np.abs(R @ R.T - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0:
            raise PayloadError("payload transform: expected a finite rigid transform (proper rotation)")
        return RigidBodyInertia(self.mass, R @ self.com + p, R @ self.inertia @ R.T)

    def inertia_about(self, point=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Inertia tensor about ``point`` (same frame), I_C + m (|d|² 1 − d dᵀ), d = c − point."""
        return self.inertia + self.mass * parallel_axis(self.com - np.asarray(point, dtype=float))

    def spatial_matrix(self) -> np.ndarray:
        """6×6 spatial inertia about the frame origin, ordering (angular; linear)."""
        cx = skew(self.com)
        S = np.zeros((6, 6))
        S[:3, :3] = self.inertia_about()
        S[:3, 3:] = self.mass * cx
        S[3:, :3] = -self.mass * cx
        S[3:, 3:] = self.mass * np.eye(3)
        return S

    def isclose(self, other: "RigidBodyInertia", rtol: float = 1e-12, atol: float = 1e-12) -> bool:
        return (np.isclose(self.mass, other.mass, rtol=rtol, atol=atol)
                and np.allclose(self.spatial_matrix(), other.spatial_matrix(), rtol=rtol, atol=atol))

    def __repr__(self) -> str:
        return (f"RigidBodyInertia(mass={self.mass:g}, com={np.round(self.com, 6).tolist()}, "
                f"inertia_diag={np.round(np.diag(self.inertia), 6).tolist()})")


def composite(mass: float, com: np.ndarray, inertia: np.ndarray, other: RigidBodyInertia) -> tuple:
    """(m, c, I) of a body (mass, com, inertia about the com) and ``other`` in the same frame merged, the
    parallel-axis theorem (m = 0: the sum of the inertias, as `merge_inertials`). The body itself is not checked:
    a robot's link need only be what its model requires (`RobotModel.realisable_inertias`: Corke's PUMA, a URDF
    read as found, may break the triangle inequality), and `with_payload` merges a payload into such a link."""
    m = mass + other.mass
    if m == 0.0:
        return 0.0, np.zeros(3), inertia + other.inertia
    c = (mass * com + other.mass * other.com) / m
    I = (inertia + mass * parallel_axis(com - c)
         + other.inertia + other.mass * parallel_axis(other.com - c))
    return m, c, 0.5 * (I + I.T)


def body_inertia(robot: "RobotModel", body: int) -> RigidBodyInertia:
    """Inertial data of body ``body`` of ``robot`` (in the body frame)."""
    return RigidBodyInertia(robot.masses[body], robot.coms[body], robot.inertias[body])
