"""The robot model: plain, immutable data for a kinematic tree (Featherstone's spatial_v2 style).

Body ``i`` is moved by joint ``i``; its parent body is ``parents[i]`` (``-1`` is the fixed base).
The pose of body ``i`` in its parent's frame is

    T_parent_i(q_i) = [R_i  p_i] · X_joint(q_i)
                      [0    1  ]

with ``(R_i, p_i)`` the joint placement and ``X_joint`` a rotation by ``q_i`` about ``axis_i``
(revolute) or a translation by ``q_i`` along it (prismatic), ``axis_i`` expressed in body ``i``'s frame.
Inertial data of body ``i`` (mass, centre of mass, inertia about the centre of mass) is in body ``i``'s
frame. Extra named frames (tool flange, TCP, …) are fixed to a body by a 4×4 transform.

Every array is copied and made read-only on construction; "changing" a model returns a new one
(``with_limits``, ``with_payload``), so the same model can be shared between threads and plans.

This module holds the data and its validation only (Pinocchio's ``Model``, spatial_v2's model struct).
Builders and parsers (``from_dh``, ``from_mdh``, ``from_urdf``), ``with_payload`` and ``to_urdf`` are
free functions in their own modules, exported from `dynamics`; `dynamics._aliases` also attaches them
to `RobotModel` as the documented aliases ``RobotModel.from_urdf(...)``, ``robot.with_payload(...)``,
``robot.to_urdf(...)``, so that nothing here imports them back.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from .checks import ModelError, array as _array, readonly as _ro, short_repr, switch as _switch, vector as _vector
from .inertial_parameters import check_inertial
from .mimic import Coupling, validate as _validate_coupling

__all__ = ["RobotModel", "ModelError", "check_inertial", "short_repr", "REVOLUTE", "PRISMATIC", "JOINT_TYPES"]

REVOLUTE = "revolute"
PRISMATIC = "prismatic"
JOINT_TYPES = (REVOLUTE, PRISMATIC)


@dataclass(frozen=True, eq=False)
class RobotModel:
    """Kinematic tree with inertial data, limits and friction. See the module docstring for frames."""

    name: str
    joint_names: tuple[str, ...]
    link_names: tuple[str, ...]
    parents: np.ndarray            # (n,) int, parents[i] < i, -1 for the base
    joint_types: tuple[str, ...]   # "revolute" | "prismatic"
    placement_rotations: np.ndarray    # (n, 3, 3) R_i: joint frame in the parent body frame
    placement_translations: np.ndarray  # (n, 3)   p_i
    axes: np.ndarray               # (n, 3) unit joint axis in the body frame
    masses: np.ndarray             # (n,)
    coms: np.ndarray               # (n, 3) centre of mass in the body frame
    inertias: np.ndarray           # (n, 3, 3) inertia about the centre of mass, body axes
    q_min: np.ndarray
    q_max: np.ndarray
    qd_max: np.ndarray             # inf where unlimited
    qdd_max: np.ndarray            # inf where unlimited
    tau_max: np.ndarray            # inf where unlimited
    coulomb: np.ndarray            # Coulomb friction torque/force per joint (>= 0)
    viscous: np.ndarray            # viscous friction coefficient per joint (>= 0)
    gravity: np.ndarray            # (3,) in the base frame, m/s²
    base_name: str = "base"
    frame_names: tuple[str, ...] = ()          # extra frames fixed to bodies
    frame_bodies: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    frame_transforms: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))
    tool_frame: str | None = None  # default frame for payloads and Cartesian paths
    rated_payload: float | None = None   # kg, manufacturer's rating (None: unknown)
    armature: np.ndarray | None = None   # (n,) rotor inertia reflected to each joint, G²·J_m (kg·m² or kg), added
    #   to M's diagonal (MuJoCo's and Pinocchio's "armature"); None: zero
    realisable_inertias: bool = True     # every link's inertia is one a mass distribution can have (triangle
    #   inequality; zero inertia without mass). False only for URDFs loaded as given (`from_urdf`): then only
    #   what the algorithms need is checked (mass >= 0, inertia symmetric positive semi-definite)
    coupling: Coupling | None = None     # mimic joints (`dynamics.mimic`): then the body fields (parents …
    #   inertias, link_names) have n_bodies entries and the joint fields (joint_names, limits, friction,
    #   armature) one per coordinate, n; None: every body has its own coordinate

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(
        cls,
        *,
        name: str,
        parents,
        joint_types,
        placement_rotations,
        placement_translations,
        axes,
        masses,
        coms,
        inertias,
        joint_names=None,
        link_names=None,
        q_min=None,
        q_max=None,
        qd_max=None,
        qdd_max=None,
        tau_max=None,
        coulomb=None,
        viscous=None,
        gravity=(0.0, 0.0, -9.81),
        base_name: str = "base",
        frames: dict | None = None,
        tool_frame: str | None = None,
        rated_payload: float | None = None,
        realisable_inertias: bool = True,
        armature=None,
        coupling: Coupling | None = None,
    ) -> "RobotModel":
        """Build and validate a model; every per-joint array has length n = len(parents), or with a
        `coupling` (mimic joints) n = coupling.n for joint names, limits, friction and armature.

        ``frames`` maps a frame name to ``(body name or index, 4×4 transform in that body)``.
        Axes are normalised. Missing limits mean unlimited (±inf), missing friction means zero.
        """
        try:
            parents = np.asarray(parents)
        except (TypeError, ValueError):
            raise ModelError("parents: expected a non-empty 1-D list of parent indices") from None
        if parents.ndim != 1 or parents.size == 0 or not np.issubdtype(parents.dtype, np.integer):
            raise ModelError("parents: expected a non-empty 1-D list of parent indices")
        n = nb = parents.size
        if coupling is not None:
            if not isinstance(coupling, Coupling):
                raise ModelError(f"coupling: expected a dynamics.mimic.Coupling or None, got {short_repr(coupling)}")
            n = coupling.n
        joint_names = tuple(joint_names or (f"joint{i + 1}" for i in range(n)))
        link_names = tuple(link_names or (f"link{i + 1}" for i in range(nb)))
        body_joints = joint_names if coupling is None else coupling.joint_names
        axes = _array("axes", axes, (nb, 3))
        norms = np.linalg.norm(axes, axis=1)
        for i in range(nb):
            if not np.isfinite(norms[i]) or norms[i] < 1e-12:
                raise ModelError(f"axes: joint '{body_joints[i]}': axis must be a non-zero finite vector, got {axes[i].tolist()}")
        axes = axes / norms[:, None]
        frames = dict(frames or {})
        names, bodies, transforms = [], [], []
        for fname, (body, T) in frames.items():
            if isinstance(body, str):
                if body not in link_names:
                    raise ModelError(f"frame '{fname}': unknown body '{body}'")
                body = link_names.index(body)
            names.append(fname)
            bodies.append(int(body))
            transforms.append(_array(f"frame '{fname}'", T, (4, 4)))
        model = cls(
            name=name,
            joint_names=joint_names,
            link_names=link_names,
            parents=_ro(parents, int),
            joint_types=tuple(joint_types),
            placement_rotations=_ro(_array("placement_rotations", placement_rotations, (nb, 3, 3))),
            placement_translations=_ro(_array("placement_translations", placement_translations, (nb, 3))),
            axes=_ro(axes),
            masses=_vector("masses", masses, nb, None),
            coms=_ro(_array("coms", coms, (nb, 3))),
            inertias=_ro(_array("inertias", inertias, (nb, 3, 3))),
            q_min=_vector("q_min", q_min, n, -np.inf),
            q_max=_vector("q_max", q_max, n, np.inf),
            qd_max=_vector("qd_max", qd_max, n, np.inf),
            qdd_max=_vector("qdd_max", qdd_max, n, np.inf),
            tau_max=_vector("tau_max", tau_max, n, np.inf),
            coulomb=_vector("coulomb", coulomb, n, 0.0, allow_inf=False),
            viscous=_vector("viscous", viscous, n, 0.0, allow_inf=False),
            gravity=_ro(_array("gravity", gravity, (3,))),
            base_name=base_name,
            frame_names=tuple(names),
            frame_bodies=_ro(np.asarray(bodies, dtype=int).reshape(-1), int),
            frame_transforms=_ro(np.asarray(transforms, dtype=float).reshape(-1, 4, 4)),
            tool_frame=tool_frame,
            rated_payload=rated_payload,
            realisable_inertias=realisable_inertias,
            armature=_vector("armature", armature, n, 0.0, allow_inf=False),
            coupling=coupling,
        )
        return model

    def __post_init__(self):
        _validate(self)

    # ------------------------------------------------------------------ properties
    @property
    def n(self) -> int:
        """Number of generalised coordinates (joints of q); `n_bodies` without mimic joints."""
        return int(self.parents.size) if self.coupling is None else self.coupling.n

    @property
    def n_bodies(self) -> int:
        """Number of moving bodies (one joint each); more than `n` when some joints mimic others."""
        return int(self.parents.size)

    @property
    def body_joint_names(self) -> tuple[str, ...]:
        """The joint of every body (`joint_names` plus the mimic joints)."""
        return self.joint_names if self.coupling is None else self.coupling.joint_names

    @property
    def is_serial(self) -> bool:
        return bool(np.all(self.parents == np.arange(-1, self.n_bodies - 1)))

    @property
    def all_revolute(self) -> bool:
        return all(t == REVOLUTE for t in self.joint_types)

    def replace(self, **changes) -> "RobotModel":
        """A new model with some fields replaced (validated again)."""
        for key in ("q_min", "q_max", "qd_max", "qdd_max", "tau_max", "coulomb", "viscous", "masses"):
            if key in changes:
                size = self.n_bodies if key == "masses" else self.n
                changes[key] = _vector(key, changes[key], size, None, allow_inf=key not in ("coulomb", "viscous", "masses"))
        if "armature" in changes:     # (as `create`: a list was kept as given — mutable, inf or text accepted)
            changes["armature"] = _vector("armature", changes["armature"], self.n, 0.0, allow_inf=False)
        for key in ("coms", "inertias", "gravity", "placement_rotations", "placement_translations", "axes"):
            if key in changes:     # (checked as `create` does: a gravity of 2 values or complex went in unchecked)
                changes[key] = _ro(_array(key, changes[key], getattr(self, key).shape))
        if "parents" in changes:   # (a list ended in AttributeError: 'list' object has no attribute 'size')
            parents = np.asarray(changes["parents"])
            if parents.shape != self.parents.shape or not np.issubdtype(parents.dtype, np.integer):
                raise ModelError(f"parents: expected {self.n_bodies} parent indices, got {short_repr(changes['parents'])}")
            changes["parents"] = _ro(parents, int)
        for key in ("joint_names", "link_names", "joint_types"):     # (a list was kept: changing it changed the model)
            if key in changes:
                if isinstance(changes[key], (str, bytes)) or not hasattr(changes[key], "__iter__"):
                    raise ModelError(f"{key}: expected a list of names, got {short_repr(changes[key])}")
                changes[key] = tuple(changes[key])
        return dataclasses.replace(self, **changes)

    def with_limits(self, *, q_min=None, q_max=None, qd_max=None, qdd_max=None, tau_max=None) -> "RobotModel":
        """New model with other limits; a scalar applies to every joint, None keeps the current value."""
        given = dict(q_min=q_min, q_max=q_max, qd_max=qd_max, qdd_max=qdd_max, tau_max=tau_max)
        return self.replace(**{k: v for k, v in given.items() if v is not None})

    def joint_index(self, name: str) -> int:
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise ModelError(f"joint {short_repr(name)}: no such joint in robot '{self.name}'") from None

    def frame(self, name: str | None = None) -> tuple[int, np.ndarray]:
        """``(body index, 4×4 transform in that body)`` of a named frame (a link name, an extra frame,
        or ``None`` for the tool frame)."""
        if name is None:
            name = self.tool_frame if self.tool_frame is not None else self.link_names[-1]
        if not isinstance(name, str):      # (`name in tuple` of an array: numpy's "truth value … ambiguous")
            raise ModelError(f"frame: expected a frame name (str), got {short_repr(name)}")
        if name in self.frame_names:
            k = self.frame_names.index(name)
            return int(self.frame_bodies[k]), np.array(self.frame_transforms[k])
        if name in self.link_names:
            return self.link_names.index(name), np.eye(4)
        if name == self.base_name:      # (it read "unknown frame", as if misspelt; Pinocchio has it as the universe's)
            raise ModelError(f"frame {short_repr(name)}: the fixed base of robot '{self.name}', not a frame on a moving "
                             f"body: poses and Jacobians are given in it (its pose is the identity)")
        known = ", ".join(self.link_names + self.frame_names)
        raise ModelError(f"frame {short_repr(name)}: unknown frame of robot '{self.name}' (known: {known}; links "
                         f"welded to the fixed base are part of it)")

    def subtree_mask(self) -> np.ndarray:
        """``A[j, i]`` is True when body ``j`` is body ``i`` or one of its ancestors."""
        n = self.n_bodies
        A = np.zeros((n, n), dtype=bool)
        for i in range(n):
            j = i
            while j >= 0:
                A[j, i] = True
                j = self.parents[j]
        return A

    def __repr__(self) -> str:
        kinds = "".join("R" if t == REVOLUTE else "P" for t in self.joint_types)
        mimic = "" if self.coupling is None else f", bodies={self.n_bodies}"
        return f"RobotModel({short_repr(self.name)}, n={self.n}{mimic}, joints={kinds}, serial={self.is_serial})"


def _validate(m: RobotModel) -> None:
    n = nb = m.parents.size
    if m.coupling is not None:
        if not isinstance(m.coupling, Coupling):
            raise ModelError(f"coupling: expected a dynamics.mimic.Coupling or None, got {short_repr(m.coupling)}")
        n = len(m.joint_names)
        _validate_coupling(m.coupling, m.joint_names, nb)
    per_joint = {
        "link_names": len(m.link_names), "joint_types": len(m.joint_types),
        "placement_rotations": m.placement_rotations.shape[0], "placement_translations": m.placement_translations.shape[0],
        "axes": m.axes.shape[0], "masses": m.masses.shape[0], "coms": m.coms.shape[0], "inertias": m.inertias.shape[0],
    }
    if m.coupling is None:
        per_joint["joint_names"] = len(m.joint_names)
    for key, size in per_joint.items():
        if size != nb:
            raise ModelError(f"{key}: expected {nb} entries (one per {'body' if m.coupling else 'joint'}), got {size}")
    for key, names in (("name", (m.name,)), ("base_name", (m.base_name,)), ("joint_names", m.body_joint_names),
                       ("link_names", m.link_names), ("frames", m.frame_names)):
        for nm in names:            # (a name is printed in one-line messages, file headers and exported files)
            if not (isinstance(nm, str) and nm and nm.isprintable()):
                raise ModelError(f"{key}: expected non-empty printable strings, got {short_repr(nm)}")
    if len(set(m.joint_names)) != n:
        raise ModelError(f"joint_names: duplicate names in {list(m.joint_names)}")
    if len(set(m.link_names)) != nb or m.base_name in m.link_names:
        raise ModelError(f"link_names: duplicate names in {[m.base_name, *m.link_names]}")
    body_joints = m.body_joint_names
    for i in range(nb):
        if not (-1 <= m.parents[i] < i):
            raise ModelError(f"joint '{body_joints[i]}': parent index {m.parents[i]} must come before the joint "
                             f"(parents before children, -1 for the base)")
        if m.joint_types[i] not in JOINT_TYPES:
            raise ModelError(f"joint '{body_joints[i]}': unknown joint type '{m.joint_types[i]}' (use revolute or prismatic)")
    for key in ("placement_rotations", "placement_translations", "axes", "coms", "inertias", "gravity"):
        if not np.isfinite(getattr(m, key)).all():
            raise ModelError(f"{key}: values must be finite numbers")
    R = m.placement_rotations
    err = np.abs(np.einsum("nij,nkj->nik", R, R) - np.eye(3)).max(axis=(1, 2))
    for i in np.flatnonzero((err > 1e-9) | (np.linalg.det(R) < 0)):
        raise ModelError(f"joint '{body_joints[i]}': placement rotation is not a proper rotation matrix")
    if np.abs(np.linalg.norm(m.axes, axis=1) - 1).max() > 1e-9:
        raise ModelError("axes: joint axes must be unit vectors (use RobotModel.create to normalise)")
    for i in range(nb):
        check_inertial(f"link '{m.link_names[i]}'", m.masses[i], m.inertias[i], realisable=m.realisable_inertias)
    I = m.inertias          # symmetric within check_inertial's 1e-9: kept symmetric (each algorithm reads other entries:
    if not np.array_equal(I, np.swapaxes(I, 1, 2)):       # RNEA and M q̈ + C q̇ + g disagreed; Pinocchio refuses it)
        object.__setattr__(m, "inertias", _ro(0.5 * (I + np.swapaxes(I, 1, 2))))
    for i in range(n):
        if m.q_min[i] > m.q_max[i]:
            raise ModelError(f"joint '{m.joint_names[i]}': q_min {m.q_min[i]} is above q_max {m.q_max[i]}")
        for key in ("qd_max", "qdd_max", "tau_max"):
            if not getattr(m, key)[i] > 0:
                raise ModelError(f"joint '{m.joint_names[i]}': {key} must be positive, got {getattr(m, key)[i]}")
        for key in ("coulomb", "viscous"):
            if getattr(m, key)[i] < 0:
                raise ModelError(f"joint '{m.joint_names[i]}': {key} friction must be >= 0, got {getattr(m, key)[i]}")
    for k, name in enumerate(m.frame_names):
        if not (0 <= m.frame_bodies[k] < nb):
            raise ModelError(f"frame '{name}': body index {m.frame_bodies[k]} out of range")
        T = m.frame_transforms[k]
        if not np.isfinite(T).all() or np.abs(T[:3, :3] @ T[:3, :3].T - np.eye(3)).max() > 1e-9:
            raise ModelError(f"frame '{name}': transform is not a finite rigid transform")
    if m.tool_frame is not None and m.tool_frame not in m.frame_names + m.link_names:
        raise ModelError(f"tool_frame: unknown frame '{m.tool_frame}'")
    if m.armature is not None and (np.shape(m.armature) != (n,) or not (np.asarray(m.armature) >= 0).all()):
        raise ModelError(f"armature: expected {n} values >= 0 (rotor inertia per joint), got {m.armature}")
    if m.rated_payload is not None:        # (text ended in a TypeError, "no" for realisable_inertias read as True)
        if (isinstance(m.rated_payload, (bool, np.bool_)) or not isinstance(m.rated_payload, (int, float, np.integer, np.floating))
                or not 0 <= m.rated_payload < np.inf):
            raise ModelError(f"rated_payload: expected a mass in kg >= 0 (or None), got {short_repr(m.rated_payload)}")
        object.__setattr__(m, "rated_payload", float(m.rated_payload))
    object.__setattr__(m, "realisable_inertias", _switch("realisable_inertias", m.realisable_inertias))
