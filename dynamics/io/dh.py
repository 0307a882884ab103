"""Robot models from Denavit–Hartenberg tables (the rotations and transforms are in `dynamics.spatial`).

Two conventions are supported:

* **modified DH (Craig)** — `from_mdh`. The link frame i sits on joint axis i:

      T_{i-1,i} = RotX(α_{i-1}) · TransX(a_{i-1}) · RotZ(θ_i) · TransZ(d_i)

  Craig's frame i moves with joint i and has its origin on the joint axis, so it *is* body i's frame
  in our convention: placement R = RotX(α_{i-1}) RotZ(θ-offset_i), p = (a_{i-1}, 0, 0) + RotX(α_{i-1})
  (0, 0, d_i), joint axis z. Inertial data given in Craig's frame i is used unchanged.

* **standard DH** — `from_dh`. The link frame i sits at the *end* of link i, on joint axis i+1:

      T_{i-1,i} = RotZ(θ_i) · TransZ(d_i) · TransX(a_i) · RotX(α_i)

  Joint i turns about z_{i-1}, so body i's frame is DH frame i-1 turned by θ_i about z_{i-1}
  (origin at DH frame i-1's origin); DH frame i is then fixed in body i at
  E_i = TransZ(d_i) TransX(a_i) RotX(α_i). Placement of body i in body i-1 is E_{i-1} (identity for
  the first joint), COM_body = E_i · COM_DH and I_body = RotX(α_i) I_DH RotX(α_i)ᵀ. DH frame i is
  kept as the named frame ``dh_frame_<i>`` (1-based), and DH frame n as ``flange``.

For a prismatic joint the table's d (standard or modified) is the offset added to q, and θ-offset is a
constant rotation about z.

Inertia tensors may be given per link as 3×3 matrices, as 3 principal moments (Ixx, Iyy, Izz) or as
6 numbers in the order (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) (see `inertia_matrix`).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..checks import ModelError, array, stacklevel_outside
from ..inertial_parameters import inertia_matrix
from ..model import PRISMATIC, REVOLUTE, RobotModel
from ..spatial import homogeneous, rotx, rotz, trans

__all__ = ["mdh_transform", "dh_transform", "mdh_chain", "dh_chain", "as_inertias", "from_mdh", "from_dh"]

MAX_SPREAD = 10.0      # m: a link's RMS distance of mass from its COM, √(tr I_C / 2m), above which a table is doubted


def mdh_transform(alpha: float, a: float, theta: float, d: float) -> np.ndarray:
    """Craig's link transform RotX(α_{i-1}) TransX(a_{i-1}) RotZ(θ_i) TransZ(d_i)."""
    return homogeneous(rotx(alpha)) @ trans(a) @ homogeneous(rotz(theta)) @ trans(z=d)


def dh_transform(theta: float, d: float, a: float, alpha: float) -> np.ndarray:
    """Standard DH link transform RotZ(θ_i) TransZ(d_i) TransX(a_i) RotX(α_i)."""
    return homogeneous(rotz(theta)) @ trans(z=d) @ trans(a) @ homogeneous(rotx(alpha))


def _joint_values(q, theta_offset, d, joint_types, i):
    if joint_types[i] == PRISMATIC:
        return theta_offset[i], d[i] + q[i]
    return theta_offset[i] + q[i], d[i]


def _chain(link_transform, n, theta_offset, d, joint_types, q) -> np.ndarray:
    """Poses (n, 4, 4) of frames 1..n in the base frame: the product of `link_transform(i, θ_i, d_i)`."""
    joint_types = joint_types or (REVOLUTE,) * n
    theta_offset = np.zeros(n) if theta_offset is None else theta_offset
    T, out = np.eye(4), []
    for i in range(n):
        th, di = _joint_values(q, theta_offset, d, joint_types, i)
        T = T @ link_transform(i, th, di)
        out.append(T)
    return np.array(out)


def mdh_chain(alpha, a, d, theta_offset, q, joint_types=None) -> np.ndarray:
    """Poses (n, 4, 4) of Craig's link frames 1..n in the base frame for one configuration q, computed
    directly from the table (a reference for tests)."""
    return _chain(lambda i, th, di: mdh_transform(alpha[i], a[i], th, di), len(q), theta_offset, d, joint_types, q)


def dh_chain(alpha, a, d, theta_offset, q, joint_types=None) -> np.ndarray:
    """Poses (n, 4, 4) of standard DH frames 1..n in the base frame for one configuration q."""
    return _chain(lambda i, th, di: dh_transform(th, di, a[i], alpha[i]), len(q), theta_offset, d, joint_types, q)


def as_inertias(inertias, n: int, where: str = "inertias") -> np.ndarray:
    """Per-link inertia tensors (n, 3, 3) from 3×3 matrices, 3 principal moments or 6 entries
    (Ixx, Iyy, Izz, Ixy, Ixz, Iyz)."""
    try:
        arr = np.asarray(inertias, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: expected numbers") from None
    if arr.shape == (n, 3, 3):
        return arr.copy()
    if arr.shape == (n, 3):
        return np.array([np.diag(r) for r in arr])
    if arr.shape == (n, 6):
        return np.array([inertia_matrix(*r) for r in arr])
    raise ModelError(f"{where}: expected shape ({n}, 3, 3), ({n}, 3) or ({n}, 6), got {arr.shape}")


# ---------------------------------------------------------------------------------- builders
def _table(name: str, key: str, value, n: int | None, default=None) -> np.ndarray:
    if value is None:
        if default is None:
            raise ModelError(f"robot '{name}': {key}: required")
        value = np.full(n, default, dtype=float)
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"robot '{name}': {key}: expected a list of numbers") from None
    if n is not None and arr.size != n:
        raise ModelError(f"robot '{name}': {key}: expected {n} values (one per joint), got {arr.size}")
    if not np.isfinite(arr).all():
        raise ModelError(f"robot '{name}': {key}: values must be finite numbers, got {arr.tolist()}")
    return arr


def _joint_types(name, joint_types, n):
    if joint_types is None:
        return (REVOLUTE,) * n
    if isinstance(joint_types, str):          # "RRPR…" shorthand
        if not set(joint_types.upper()) <= {"R", "P"}:
            raise ModelError(f"robot '{name}': joint_types: use a string of R/P letters or a list of "
                             f"'revolute'/'prismatic', got '{joint_types}'")
        joint_types = [REVOLUTE if c == "R" else PRISMATIC for c in joint_types.upper()]
    joint_types = tuple(joint_types)
    if len(joint_types) != n:
        raise ModelError(f"robot '{name}': joint_types: expected {n} entries, got {len(joint_types)}")
    for t in joint_types:
        if t not in (REVOLUTE, PRISMATIC):
            raise ModelError(f"robot '{name}': joint_types: unknown joint type '{t}' (use revolute or prismatic)")
    return joint_types


def _flange_transform(name, flange) -> np.ndarray:
    if flange is None:
        return np.eye(4)
    arr = np.asarray(flange, dtype=float)
    if arr.ndim == 0:
        return trans(z=float(arr))
    if arr.shape != (4, 4):
        raise ModelError(f"robot '{name}': flange: expected a d-offset along z or a 4×4 transform, "
                         f"got shape {arr.shape}")
    return arr


def _common(name, n, masses, coms, inertias):
    masses = _table(name, "masses", masses, n)
    coms = array(f"robot '{name}': coms", coms, (n, 3))      # (a (3, n) array was reshaped: COMs scrambled)
    inertias = as_inertias(inertias, n, f"robot '{name}': inertias")
    with np.errstate(all="ignore"):       # (a bad mass or tensor is refused by the model's own checks)
        spread = np.sqrt(np.trace(inertias, axis1=1, axis2=2) / (2.0 * masses))
    far = np.flatnonzero((masses > 0) & (spread > MAX_SPREAD))
    if far.size:                           # (one warning for the table, naming the links)
        warnings.warn(f"robot '{name}': inertias: link{'s' * (far.size > 1)} {', '.join(str(i + 1) for i in far)} "
                      f"{'have their' if far.size > 1 else 'has its'} mass spread up to {spread[far].max():.3g} m around the COM "
                      f"(√(tr I / 2m)): is the tensor in kg·mm² (× 1e-6 for kg·m²)?", UserWarning,
                      stacklevel=stacklevel_outside())
    return masses, coms, inertias


def _radians(name, key, angles):
    """Refuse a DH angle beyond ±2π: every angle has an equal one within, so a table with 90 or −180 was
    written in degrees (it built a different robot without a word)."""
    beyond = np.flatnonzero(np.abs(angles) > 2.0 * np.pi * (1.0 + 1e-12))
    if beyond.size:
        k = int(beyond[0])
        raise ModelError(f"robot '{name}': {key}: {angles[k]:g} for joint {k + 1} is beyond ±2π: DH angles are "
                         f"in radians (a table in degrees? convert it with np.radians)")


def _dh_table(name, alpha, a, d, theta_offset, joint_types, masses, coms, inertias):
    """Checked columns of a (modified or standard) DH table with its inertial data."""
    alpha = _table(name, "alpha", alpha, None)
    n = alpha.size
    if n == 0:
        raise ModelError(f"robot '{name}': alpha: the table has no joints")
    a = _table(name, "a", a, n)
    d = _table(name, "d", d, n)
    theta_offset = _table(name, "theta_offset", theta_offset, n, default=0.0)
    for key, angles in (("alpha", alpha), ("theta_offset", theta_offset)):
        _radians(name, key, angles)
    joint_types = _joint_types(name, joint_types, n)
    masses, coms, inertias = _common(name, n, masses, coms, inertias)
    return n, alpha, a, d, theta_offset, joint_types, masses, coms, inertias


def from_mdh(name, alpha, a, d, theta_offset, masses, coms, inertias, *, joint_types=None,
             q_min=None, q_max=None, qd_max=None, qdd_max=None, tau_max=None, coulomb=None, viscous=None,
             gravity=(0.0, 0.0, -9.81), flange=None, tool_frame="flange", rated_payload=None,
             joint_names=None, link_names=None, base_name="base", frames=None, armature=None,
             realisable_inertias: bool = True) -> RobotModel:
    """Serial robot from a modified (Craig) DH table: α_{i-1}, a_{i-1}, d_i, θ-offset_i per joint i.

    ``coms`` and ``inertias`` (about the COM) are in Craig's link frame i (= body i's frame).
    ``flange`` is a d-offset along z_n or a 4×4 transform in link frame n; the frame ``flange`` is always
    added (identity when ``flange`` is None). ``frames`` adds more named frames {name: (body, 4×4)}.
    ``armature`` (per joint, G²·J_m) and ``realisable_inertias`` as in `from_dh` and `RobotModel.create`.
    """
    n, alpha, a, d, theta_offset, joint_types, masses, coms, inertias = _dh_table(
        name, alpha, a, d, theta_offset, joint_types, masses, coms, inertias)
    R = np.array([rotx(alpha[i]) @ rotz(theta_offset[i]) for i in range(n)])
    p = np.array([np.array([a[i], 0.0, 0.0]) + rotx(alpha[i]) @ np.array([0.0, 0.0, d[i]]) for i in range(n)])
    all_frames = {"flange": (n - 1, _flange_transform(name, flange))}
    all_frames.update(frames or {})
    return RobotModel.create(
        name=name, parents=np.arange(-1, n - 1), joint_types=joint_types,
        placement_rotations=R, placement_translations=p, axes=np.tile([0.0, 0.0, 1.0], (n, 1)),
        masses=masses, coms=coms, inertias=inertias, joint_names=joint_names, link_names=link_names,
        q_min=q_min, q_max=q_max, qd_max=qd_max, qdd_max=qdd_max, tau_max=tau_max,
        coulomb=coulomb, viscous=viscous, gravity=gravity, base_name=base_name,
        frames=all_frames, tool_frame=tool_frame, rated_payload=rated_payload, armature=armature,
        realisable_inertias=realisable_inertias)


def from_dh(name, alpha, a, d, theta_offset, masses, coms, inertias, *, joint_types=None,
            q_min=None, q_max=None, qd_max=None, qdd_max=None, tau_max=None, coulomb=None, viscous=None,
            gravity=(0.0, 0.0, -9.81), flange=None, tool_frame="flange", rated_payload=None,
            joint_names=None, link_names=None, base_name="base", frames=None, armature=None,
            realisable_inertias: bool = True) -> RobotModel:
    """Serial robot from a standard DH table: α_i, a_i, d_i, θ-offset_i per joint i.

    ``coms`` and ``inertias`` (about the COM) are in DH frame i (at the end of link i), as in Corke's
    toolboxes and UR's tables; they are moved into body i's frame (see the module docstring). Frames
    ``dh_frame_1`` … ``dh_frame_n`` and ``flange`` (= DH frame n, times ``flange``: a d-offset along
    z_n or a 4×4 transform) are added; ``frames`` adds more named frames {name: (body, 4×4)} given in
    *body* frames.
    """
    n, alpha, a, d, theta_offset, joint_types, masses, coms, inertias = _dh_table(
        name, alpha, a, d, theta_offset, joint_types, masses, coms, inertias)
    # E_i: DH frame i in body i = TransZ(d_i) TransX(a_i) RotX(α_i)
    E = np.array([trans(a[i], 0.0, d[i]) @ homogeneous(rotx(alpha[i])) for i in range(n)])
    R = np.empty((n, 3, 3))
    p = np.zeros((n, 3))
    for i in range(n):
        Rz = rotz(theta_offset[i])
        if i == 0:
            R[i] = Rz
        else:
            R[i] = E[i - 1, :3, :3] @ Rz
            p[i] = E[i - 1, :3, 3]
    coms_body = np.einsum("nij,nj->ni", E[:, :3, :3], coms) + E[:, :3, 3]
    inertias_body = np.einsum("nij,njk,nlk->nil", E[:, :3, :3], inertias, E[:, :3, :3])
    all_frames = {f"dh_frame_{i + 1}": (i, E[i]) for i in range(n)}
    all_frames["flange"] = (n - 1, E[n - 1] @ _flange_transform(name, flange))
    all_frames.update(frames or {})
    return RobotModel.create(
        name=name, parents=np.arange(-1, n - 1), joint_types=joint_types,
        placement_rotations=R, placement_translations=p, axes=np.tile([0.0, 0.0, 1.0], (n, 1)),
        masses=masses, coms=coms_body, inertias=inertias_body, joint_names=joint_names,
        link_names=link_names, q_min=q_min, q_max=q_max, qd_max=qd_max, qdd_max=qdd_max,
        tau_max=tau_max, coulomb=coulomb, viscous=viscous, gravity=gravity, base_name=base_name,
        frames=all_frames, tool_frame=tool_frame, rated_payload=rated_payload, armature=armature,
        realisable_inertias=realisable_inertias)
