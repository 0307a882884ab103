"""Carried objects (payloads) as rigid-body inertias, and merging them into a robot model.

Safeea et al. (2019), Section 6: when the robot picks up an object whose inertial data (mass, centre
of mass, inertia tensor) is known, "the last link of the robot and the object [are considered] as one
body"; the Christoffel symbols, the mass matrix and the gravity torques are then simply recomputed
from the new model. `with_payload` builds that model; nothing else in `dynamics` needs to know.

A `RigidBodyInertia` is (m, c, I_C) with I_C the inertia about the centre of mass, all in one frame.
The composite of two bodies in the same frame (parallel-axis / Huygens–Steiner theorem):

    m = m₁ + m₂
    c = (m₁ c₁ + m₂ c₂) / m
    I = Σ_k  I_k + m_k (|d_k|² 1 − d_k d_kᵀ),   d_k = c_k − c

Expressed in another frame B, with T_BA = (R, p) the pose of the current frame A in B:
c_B = R c_A + p, I_B = R I_A Rᵀ (a tensor about the COM only rotates).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import ModelError, RobotModel, check_inertial
from .model import short_repr


class PayloadError(ModelError):
    """A payload is invalid, or too heavy for the robot it is given to."""


def _skew_sq(d: np.ndarray) -> np.ndarray:
    """|d|² 1 − d dᵀ (= −[d]×²), the parallel-axis term per unit mass."""
    d = np.asarray(d, dtype=float)
    return np.dot(d, d) * np.eye(3) - np.outer(d, d)


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
    semi-definite, triangle inequality; see `dynamics.model.check_inertial`). A zero mass (with zero
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
        except (TypeError, ValueError):
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
        m = self.mass + other.mass
        if m == 0.0:
            return RigidBodyInertia.zero()
        c = (self.mass * self.com + other.mass * other.com) / m
        I = (self.inertia + self.mass * _skew_sq(self.com - c)
             + other.inertia + other.mass * _skew_sq(other.com - c))
        return RigidBodyInertia(m, c, I)

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
        return self.inertia + self.mass * _skew_sq(self.com - np.asarray(point, dtype=float))

    def spatial_matrix(self) -> np.ndarray:
        """6×6 spatial inertia about the frame origin, ordering (angular; linear)."""
        cx = np.array([[0.0, -self.com[2], self.com[1]],
                       [self.com[2], 0.0, -self.com[0]],
                       [-self.com[1], self.com[0], 0.0]])
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


def as_payload(payload) -> RigidBodyInertia:
    """A `RigidBodyInertia`, a mass in kg (point mass at the frame origin) or a mapping with keys
    ``mass``, ``com`` (default 0) and ``inertia`` (default 0)."""
    if isinstance(payload, RigidBodyInertia):
        return payload
    if isinstance(payload, (int, float, np.floating, np.integer)) and not isinstance(payload, bool):
        return RigidBodyInertia.point_mass(float(payload))
    if isinstance(payload, dict):
        unknown = set(payload) - {"mass", "com", "inertia"}
        if unknown:
            raise PayloadError(f"payload: unknown keys {sorted(unknown)} (use mass, com, inertia)")
        if "mass" not in payload:
            raise PayloadError("payload: 'mass' is required")
        return RigidBodyInertia(payload["mass"], payload.get("com", np.zeros(3)),
                                payload.get("inertia", np.zeros((3, 3))))
    raise PayloadError(f"payload: expected a RigidBodyInertia, a mass in kg or a dict, got {type(payload).__name__}")


def body_inertia(robot: RobotModel, body: int) -> RigidBodyInertia:
    """Inertial data of body ``body`` of ``robot`` (in the body frame)."""
    return RigidBodyInertia(robot.masses[body], robot.coms[body], robot.inertias[body])


def with_payload(robot: RobotModel, payload, frame: str | None = None, *, allow_overload: bool = False,
                 tol: float = 1e-9) -> RobotModel:
    """New model in which ``payload`` (given in ``frame``) is rigidly attached to the body carrying ``frame``.

    ``frame`` is a link name or an extra frame name; default the robot's tool frame. The payload's COM
    and inertia are expressed in ``frame``; they are moved into the carrying body's frame with the
    frame's fixed transform (c_B = R c_F + p, I_B = R I_F Rᵀ) and merged with the body's own inertia by
    the parallel-axis theorem (Safeea 2019, Section 6: "the last link … and the object as one body").

    A payload heavier than ``robot.rated_payload`` raises `PayloadError` unless ``allow_overload``.
    The returned model keeps every other field (limits, frames, name, rating) of ``robot``."""
    p = as_payload(payload)
    if p.mass < 0:
        raise PayloadError(f"payload: mass must be >= 0 kg, got {p.mass}")
    rated = robot.rated_payload
    if rated is not None and not allow_overload and p.mass > rated * (1.0 + tol) + tol:
        raise PayloadError(f"payload: mass {p.mass:g} kg exceeds the rated payload {rated:g} kg of robot "
                           f"'{robot.name}' (pass allow_overload=True to plan anyway)")
    body, T_body_frame = robot.frame(frame)
    merged = body_inertia(robot, body) + p.transformed(T_body_frame)
    masses = np.array(robot.masses)
    coms = np.array(robot.coms)
    inertias = np.array(robot.inertias)
    masses[body], coms[body], inertias[body] = merged.mass, merged.com, merged.inertia
    return robot.replace(masses=masses, coms=coms, inertias=inertias)
