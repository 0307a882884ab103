"""Carried objects (payloads) as rigid-body inertias, and merging them into a robot model.

Safeea et al. (2019), Section 6: when the robot picks up an object whose inertial data (mass, centre
of mass, inertia tensor) is known, "the last link of the robot and the object [are considered] as one
body"; the Christoffel symbols, the mass matrix and the gravity torques are then simply recomputed
from the new model. `with_payload` builds that model; nothing else in `dynamics` needs to know.

The inertial algebra (`RigidBodyInertia`, the parallel-axis theorem, the consistency check) is in
`dynamics.inertial_parameters`; it is re-exported here, where it was first defined.
"""

from __future__ import annotations

import numpy as np

from .checks import PayloadError, over_text, short_repr, switch
from .inertial_parameters import RigidBodyInertia, body_inertia, composite
from .model import RobotModel

__all__ = ["PayloadError", "RigidBodyInertia", "as_payload", "body_inertia", "with_payload"]


def as_payload(payload) -> RigidBodyInertia:
    """A `RigidBodyInertia`, a mass in kg (point mass at the frame origin) or a mapping with keys
    ``mass``, ``com`` (default 0) and ``inertia`` (default 0)."""
    if isinstance(payload, RigidBodyInertia):
        return payload
    if isinstance(payload, (int, float, np.floating, np.integer)) and not isinstance(payload, bool):
        return RigidBodyInertia.point_mass(payload)          # (not float(): RigidBodyInertia names a huge int)
    if isinstance(payload, dict):
        unknown = set(payload) - {"mass", "com", "inertia"}
        if unknown:
            raise PayloadError(f"payload: unknown keys {sorted(unknown)} (use mass, com, inertia)")
        if "mass" not in payload:
            raise PayloadError("payload: 'mass' is required")
        return RigidBodyInertia(payload["mass"], payload.get("com", np.zeros(3)),
                                payload.get("inertia", np.zeros((3, 3))))
    raise PayloadError(f"payload: expected a RigidBodyInertia, a mass in kg or a dict, got {type(payload).__name__}")


def with_payload(robot: RobotModel, payload, frame: str | None = None, *, allow_overload: bool = False,
                 tol: float = 1e-9) -> RobotModel:
    """New model in which ``payload`` (given in ``frame``) is rigidly attached to the body carrying ``frame``.

    ``frame`` is a link name or an extra frame name; default the robot's tool frame. The payload's COM
    and inertia are expressed in ``frame``; they are moved into the carrying body's frame with the
    frame's fixed transform (c_B = R c_F + p, I_B = R I_F Rᵀ) and merged with the body's own inertia by
    the parallel-axis theorem (Safeea 2019, Section 6: "the last link … and the object as one body").

    A payload heavier than ``robot.rated_payload`` (relative tolerance ``tol``, in [0, 1)) raises `PayloadError`
    unless ``allow_overload`` (True or False; anything else is refused, as a tol outside [0, 1) or NaN is).
    The returned model keeps every other field (limits, frames, name, rating) of ``robot``."""
    switch("allow_overload", allow_overload, PayloadError)       # ("no" is truthy: it allowed the overload)
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)) or not 0 <= tol < 1:
        raise PayloadError(f"tol: expected a relative tolerance in [0, 1), got {short_repr(tol)}")   # (NaN: no check)
    p = as_payload(payload)
    if p.mass < 0:
        raise PayloadError(f"payload: mass must be >= 0 kg, got {p.mass}")
    rated = robot.rated_payload
    if rated is not None and not allow_overload and p.mass > rated * (1.0 + tol) + tol:
        raise PayloadError(f"payload: mass {over_text(p.mass, rated)} kg exceeds the rated payload {rated:g} kg of "
                           f"robot '{robot.name}' (pass allow_overload=True to plan anyway)")
    body, T_body_frame = robot.frame(frame)
    masses = np.array(robot.masses)
    coms = np.array(robot.coms)
    inertias = np.array(robot.inertias)
    # (the link as the model holds it: not a RigidBodyInertia, whose check refused the PUMA's link 3 or a URDF's
    # link that breaks the triangle inequality — "payload: principal moments ... violate" for any payload)
    masses[body], coms[body], inertias[body] = composite(masses[body], coms[body], inertias[body],
                                                         p.transformed(T_body_frame))
    return robot.replace(masses=masses, coms=coms, inertias=inertias)
