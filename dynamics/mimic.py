"""Mimic (coupled) joints: bodies whose joint position is a fixed linear function of a coordinate.

A URDF ``<mimic joint="a" multiplier="m" offset="o"/>`` on joint b means q_b = m q_a + o. With such
joints the tree has more bodies (n_b) than generalised coordinates (n): every body's joint position is

    q_body = G q + q0,    G (n_b × n) with one non-zero per row, G[b, k(b)] = m_b,  q0[b] = o_b

(k(b) the coordinate driving body b; a body on an independent joint has m = 1, o = 0). The coupling is
linear and constant, so the velocities and accelerations map by G alone (q̇_body = G q̇, q̈_body = G q̈)
and, by the principle of virtual work (the constraint forces do no work on the admissible motions),
the generalised forces are the body-joint forces projected back by Gᵀ. Substituting q̇_body = G q̇
into the kinetic energy ½ q̇_bodyᵀ M_b q̇_body gives (Featherstone, Rigid Body Dynamics Algorithms, §8.2,
"constrained systems" with a constant constraint Jacobian; the same reduction as Pinocchio's
``JointModelMimic`` and MoveIt's mimic joints):

    M(q)    = Gᵀ M_b(Gq + q0) G
    τ       = Gᵀ τ_b(Gq + q0, Gq̇, Gq̈)             (RNEA, gravity Gᵀ g_b, friction of every body joint)
    c^k_ij  = Σ_abc G_ak G_bi G_cj c^a_bc          (Christoffel symbols: ∂/∂q = Gᵀ ∂/∂q_body)
    J       = J_b G                                (Jacobians of frames)

The recursive algorithms run on the bodies and these maps are applied at their entry (positions,
rates) and exit (forces, matrices, symbols), in `dynamics.kinematics` and the algorithm modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .checks import ModelError, readonly


@dataclass(frozen=True, eq=False)
class Coupling:
    """Which coordinate drives each body's joint, and how: q_body[b] = multiplier[b] · q[coordinate[b]] + offset[b].

    ``joint_names[b]`` is the name of body b's joint (the URDF joint); the coordinates are named after
    the joints that drive them (`RobotModel.joint_names`)."""

    joint_names: tuple[str, ...]   # (n_b,)
    coordinate: np.ndarray         # (n_b,) int
    multiplier: np.ndarray         # (n_b,) non-zero
    offset: np.ndarray             # (n_b,)

    @classmethod
    def create(cls, joint_names, coordinate, multiplier, offset) -> "Coupling":
        names = tuple(str(x) for x in joint_names)
        nb = len(names)
        try:
            coord = np.asarray(coordinate)
            mult = np.asarray(multiplier, dtype=float)
            off = np.asarray(offset, dtype=float)
        except (TypeError, ValueError):
            raise ModelError("coupling: expected coordinate indices, multipliers and offsets per body") from None
        for key, arr in (("coordinate", coord), ("multiplier", mult), ("offset", off)):
            if arr.shape != (nb,):
                raise ModelError(f"coupling: {key}: expected {nb} values (one per body), got shape {arr.shape}")
        if not np.issubdtype(coord.dtype, np.integer):
            raise ModelError(f"coupling: coordinate: expected integer indices, got {coord.tolist()}")
        return cls(names, readonly(coord, int), readonly(mult), readonly(off))

    @property
    def n(self) -> int:
        """Number of generalised coordinates."""
        return int(self.coordinate.max()) + 1 if self.coordinate.size else 0

    @cached_property
    def G(self) -> np.ndarray:
        """The (n_b, n) map from coordinate velocities to body joint velocities."""
        G = np.zeros((self.coordinate.size, self.n))
        G[np.arange(self.coordinate.size), self.coordinate] = self.multiplier
        G.setflags(write=False)
        return G

    def body_of(self, joint_name: str) -> int:
        """The body moved by the joint of that name."""
        return self.joint_names.index(joint_name)


def validate(coupling: Coupling, joint_names: tuple[str, ...], n_bodies: int) -> None:
    """Check a coupling against the model's bodies and coordinates (`ModelError` naming the joint)."""
    c = coupling
    if len(c.joint_names) != n_bodies:
        raise ModelError(f"coupling: expected {n_bodies} body joint names (one per body), got {len(c.joint_names)}")
    if len(set(c.joint_names)) != n_bodies:
        raise ModelError(f"coupling: duplicate body joint names in {list(c.joint_names)}")
    n = len(joint_names)
    for b, name in enumerate(c.joint_names):
        if not 0 <= c.coordinate[b] < n:
            raise ModelError(f"coupling: joint '{name}': coordinate {c.coordinate[b]} out of range 0..{n - 1}")
        if not (np.isfinite(c.multiplier[b]) and c.multiplier[b] != 0):
            raise ModelError(f"coupling: joint '{name}': multiplier must be a finite non-zero number, got {c.multiplier[b]}")
        if not np.isfinite(c.offset[b]):
            raise ModelError(f"coupling: joint '{name}': offset must be finite, got {c.offset[b]}")
    for k, name in enumerate(joint_names):
        b = c.joint_names.index(name) if name in c.joint_names else -1
        if b < 0 or c.coordinate[b] != k or c.multiplier[b] != 1.0 or c.offset[b] != 0.0:
            raise ModelError(f"coupling: coordinate '{name}' must drive the body of joint '{name}' with "
                             f"multiplier 1 and offset 0")
    if c.n != n:
        raise ModelError(f"coupling: {c.n} coordinates drive the bodies, expected {n} (one per joint name)")


def coordinate_prismatic(robot) -> np.ndarray:
    """(n,) bool: coordinate k is a prismatic joint (the type of its own body's joint; `joint_types` is per body,
    so indexing it by a coordinate was wrong past a mimic joint)."""
    body = {name: b for b, name in enumerate(robot.body_joint_names)}
    return np.array([robot.joint_types[body[name]] == "prismatic" for name in robot.joint_names], dtype=bool)


def from_degrees(robot, values) -> np.ndarray:
    """Joint values (..., n) written in degrees for the revolute coordinates and metres for the prismatic ones
    (`plan --degrees`, a cell's ``preferred_posture_deg``) in the model's units, rad and m."""
    values = np.asarray(values, dtype=float)
    return np.where(coordinate_prismatic(robot), values, np.radians(values))


# ------------------------------------------------------------------ maps used by the algorithms
def body_positions(robot, q: np.ndarray) -> np.ndarray:
    """q_body = G q + q0, (N, n) → (N, n_b); the input itself for a model without coupling."""
    c = robot.coupling
    return q if c is None else q[:, c.coordinate] * c.multiplier + c.offset


def body_rates(robot, v: np.ndarray) -> np.ndarray:
    """q̇_body = G q̇ (also q̈ and path derivatives), (N, n) → (N, n_b)."""
    c = robot.coupling
    return v if c is None else v[:, c.coordinate] * c.multiplier


def coordinate_forces(robot, tau: np.ndarray) -> np.ndarray:
    """τ = Gᵀ τ_body, (..., n_b) → (..., n)."""
    c = robot.coupling
    return tau if c is None else tau @ c.G


def coordinate_matrix(robot, M: np.ndarray) -> np.ndarray:
    """Gᵀ M G for a (..., n_b, n_b) matrix of the bodies (mass matrix, its derivative, Coriolis matrix)."""
    c = robot.coupling
    return M if c is None else np.swapaxes(c.G, 0, 1) @ M @ c.G


def coordinate_jacobian(robot, J: np.ndarray) -> np.ndarray:
    """J = J_body G, (..., rows, n_b) → (..., rows, n)."""
    c = robot.coupling
    return J if c is None else J @ c.G


def coordinate_christoffel(robot, C: np.ndarray) -> np.ndarray:
    """c^k_ij = Σ_abc G_ak G_bi G_cj c^a_bc, (..., n_b, n_b, n_b) → (..., n, n, n)."""
    c = robot.coupling
    if c is None:
        return C
    G = c.G
    return np.einsum("...abc,ak,bi,cj->...kij", C, G, G, G, optimize=True)
