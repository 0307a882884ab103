"""Recursive forward kinematics with ZXZ Euler angles, after Gonçalves et al. (Robotics 2022).

Every link i is modelled in its own local axes x′y′z′ by points P′ᵢ: its origin A′ᵢ (where it hangs
on its parent), its connection points D′ᵢ (where children hang on it), its centre of mass C′ᵢ and any
drawing points. The recursion (Figure 2) visits the links base first and, for link i with parent p:

    B′ₚ = D′ₚ + d_i v′_{d_i}                         prismatic joint: the parent's connection point moves (eq. 1)
    Rᵢᵖ = ZXZEuler(Z₁, X₂, Z₃)                        angles: constants + joint angle (eq. 2–3)
    R⁰ᵢ = R⁰ₚ Rᵢᵖ                                     orientation (eq. 4)
    P″ᵢ = R⁰ᵢ (P′ᵢ − A′ᵢ)                            rotate about A′ᵢ (eq. 5)
    Pᵢ  = P″ᵢ + Bₚ                                    translate to the parent's connection point (eq. 6)

with Bₚ = R⁰ₚ (B′ₚ − A′ₚ) + (origin of p), the world position of the connection point. Eq. 3 names the
three single-axis joints: about x: ZXZEuler(0, θ, 0); about y: ZXZEuler(π/2, θ, 0); about z:
ZXZEuler(0, 0, θ). A link here carries constant angles plus gains on one joint variable, which
covers eq. 3, the constant rotations of Table 2 (e.g. ZXZEuler(π/2, −π/2, 0)) and joints that move
two links (CHARMIE's claws, ±θ₁₃).

Eq. 2 is evaluated as the product Rz(Z₁) Rx(X₂) Rz(Z₃); its (1,3) entry is s₁s₂ (the paper prints
s₁s₃, a misprint: with it ZXZEuler(π/2, θ, 0) of eq. 3 would not be a rotation).
Everything is vectorised over a leading sample axis; lengths are in whatever unit the points use
(prismatic joint values in the same unit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .checks import ModelError, array, as_batch, short_repr
from .inertial_parameters import merge_inertials  # the parallel-axis theorem
from .model import RobotModel


def zxz_euler(z1, x2, z3) -> np.ndarray:
    """Intrinsic ZXZ Euler rotation Rz(z1) Rx(x2) Rz(z3) (eq. 2), broadcast over the angles: (..., 3, 3)."""
    angles = []
    for name, a in (("z1", z1), ("x2", x2), ("z3", z3)):
        try:
            kind = np.asarray(a).dtype.kind
            arr = np.asarray(a, dtype=float) if kind in "iuf" else None
        except (TypeError, ValueError, OverflowError):    # (OverflowError: an int beyond a double)
            arr = None
        if arr is None or not np.isfinite(arr).all():      # (text, booleans, complex, None, NaN, inf)
            raise ModelError(f"zxz_euler: {name}: expected finite real angles (rad), got {short_repr(a)}")
        angles.append(arr)
    try:
        z1, x2, z3 = np.broadcast_arrays(*angles)
    except ValueError:
        raise ModelError(f"zxz_euler: angle shapes {[a.shape for a in angles]} do not broadcast") from None
    c1, s1, c2, s2, c3, s3 = np.cos(z1), np.sin(z1), np.cos(x2), np.sin(x2), np.cos(z3), np.sin(z3)
    R = np.empty(z1.shape + (3, 3))
    R[..., 0, 0] = c1 * c3 - s1 * c2 * s3
    R[..., 0, 1] = -c1 * s3 - s1 * c2 * c3
    R[..., 0, 2] = s1 * s2
    R[..., 1, 0] = s1 * c3 + c1 * c2 * s3
    R[..., 1, 1] = c1 * c2 * c3 - s1 * s3
    R[..., 1, 2] = -c1 * s2
    R[..., 2, 0] = s2 * s3
    R[..., 2, 1] = s2 * c3
    R[..., 2, 2] = c2
    return R


# eq. 3: constant angles and gains of a single-axis revolute joint
JOINT_AXES = {"x": ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
              "y": ((np.pi / 2, 0.0, 0.0), (0.0, 1.0, 0.0)),
              "z": ((0.0, 0.0, 0.0), (0.0, 0.0, 1.0))}


@dataclass(frozen=True)
class EulerLink:
    """One link, in its local axes (Section 3.1).

    ``points``: local coordinates P′ by name; ``"A"`` (the origin A′, default 0) and the connection
    points D′ (any names) that children name in ``attach``. ``euler``: constant ZXZ angles and
    ``gains``: multiples of the joint variable ``joint`` added to them (revolute, eq. 2–3).
    ``slide``: for a prismatic joint, the unit vector v′ in the *parent's* local axes along which the
    parent's connection point moves (eq. 1). ``lines``: pairs of point names to draw."""
    name: str
    parent: str | None = None
    attach: str | None = None
    euler: tuple = (0.0, 0.0, 0.0)
    joint: str | None = None
    gains: tuple = (0.0, 0.0, 0.0)
    slide: tuple | None = None
    points: dict = field(default_factory=dict)
    lines: tuple = ()

    @property
    def kind(self) -> str:
        if self.joint is None:
            return "fixed"
        return "prismatic" if self.slide is not None else "revolute"


@dataclass(frozen=True, eq=False)
class EulerModel:
    """Links in recursion order (parents first) and the joint variables q, in order."""
    name: str
    links: tuple
    joint_names: tuple

    @property
    def n(self) -> int:
        return len(self.joint_names)

    def link(self, name: str) -> EulerLink:
        for lk in self.links:
            if lk.name == name:
                return lk
        raise ModelError(f"link '{name}': no such link in model '{self.name}'")


def revolute(axis: str) -> dict:
    """Keyword arguments of `EulerLink` for a revolute joint about the local x, y or z axis (eq. 3). "y" is eq. 3
    as printed, ZXZEuler(π/2, θ, 0) = Ry(θ) Rz(π/2): the link's axes are turned 90° about z at θ = 0 (for
    aligned axes: euler=(π/2, 0, −π/2), gains=(0, 1, 0), which is Ry(θ))."""
    euler, gains = JOINT_AXES[axis]
    return {"euler": euler, "gains": gains}


def from_euler_zxz(name: str, links, joint_names=None) -> EulerModel:
    """Build and check a model from `EulerLink`s given parents first. Joint variables are ordered as
    ``joint_names`` (default: order of first use); points are copied as float arrays."""
    out, seen, order = [], {}, []
    for lk in links:
        where = f"model '{name}', link '{lk.name}'"
        if lk.name in seen:
            raise ModelError(f"{where}: duplicate link name")
        # three finite numbers each, named (numpy's reshape or broadcast errors named no link, NaN points were
        # drawn as NaN, and a text gains="001" was read as (0, 0, 1))
        pts = {k: array(f"{where}: point '{k}'", v, (3,)) for k, v in dict(lk.points).items()}
        pts.setdefault("A", np.zeros(3))
        euler, gains = (tuple(array(f"{where}: {f}", v, (3,)).tolist()) for f, v in (("euler", lk.euler),
                                                                                      ("gains", lk.gains)))
        slide = None if lk.slide is None else tuple(array(f"{where}: slide", lk.slide, (3,)).tolist())
        if lk.parent is not None:
            if lk.parent not in seen:
                raise ModelError(f"{where}: parent '{lk.parent}' must come before it")
            if lk.attach not in seen[lk.parent].points:
                raise ModelError(f"{where}: parent '{lk.parent}' has no connection point '{lk.attach}'")
        if lk.kind == "prismatic":
            if lk.parent is None or abs(np.linalg.norm(slide) - 1.0) > 1e-9 or any(gains):
                raise ModelError(f"{where}: a prismatic joint needs a parent and a unit slide vector, no gains")
        elif lk.kind == "revolute" and not any(gains):
            raise ModelError(f"{where}: revolute joint '{lk.joint}' has all gains zero")
        for a, b in lk.lines:
            if a not in pts or b not in pts:
                raise ModelError(f"{where}: line ({a}, {b}) names an unknown point")
        if lk.joint is not None and lk.joint not in order:
            order.append(lk.joint)
        fixed = EulerLink(lk.name, lk.parent, lk.attach, euler, lk.joint, gains, slide, pts, tuple(lk.lines))
        seen[lk.name] = fixed
        out.append(fixed)
    joint_names = tuple(joint_names) if joint_names is not None else tuple(order)
    if set(joint_names) != set(order) or len(joint_names) != len(order):
        raise ModelError(f"model '{name}': joint_names {list(joint_names)} do not match the joints used {order}")
    for lk in out:
        slides = [c for c in out if c.parent == lk.name and c.kind == "prismatic"]
        if len({c.attach for c in slides}) != len(slides):
            raise ModelError(f"model '{name}', link '{lk.name}': two prismatic joints move one connection point")
    return EulerModel(name, tuple(out), joint_names)


class EulerPoints(NamedTuple):
    """Forward kinematics: per link, orientation R⁰ᵢ (…, 3, 3) and world points (…, P, 3) in the
    order of ``names[link]``."""
    R: dict
    points: dict
    names: dict

    def point(self, link: str, name: str) -> np.ndarray:
        return self.points[link][..., self.names[link].index(name), :]


def euler_points(model: EulerModel, q) -> EulerPoints:
    """World coordinates of every point of every link for q of shape (n,) or (N, n) (eq. 1–6)."""
    # as every dynamics function: real finite numbers of shape (n,) or (N, n), else one line naming q
    # (text, booleans, NaN and ints beyond a double were read, or gave NaN points, or escaped as OverflowError)
    q2, single = as_batch(model, q, "q")
    N = q2.shape[0]
    col = {jn: q2[:, k] for k, jn in enumerate(model.joint_names)}
    R, P, names = {}, {}, {}
    local = {}                                      # B′ of each link, per sample (eq. 1)
    for lk in model.links:
        names[lk.name] = tuple(lk.points)
        Pl = np.broadcast_to(np.stack(list(lk.points.values())), (N, len(lk.points), 3)).copy()
        for child in model.links:                   # eq. 1: B′ = D′ + d v′ for prismatic children
            if child.parent == lk.name and child.kind == "prismatic":
                Pl[:, names[lk.name].index(child.attach)] += col[child.joint][:, None] * np.array(child.slide)
        local[lk.name] = Pl
        angles = np.broadcast_to(np.array(lk.euler), (N, 3))
        if lk.kind == "revolute":
            angles = angles + np.array(lk.gains)[None, :] * col[lk.joint][:, None]
        Rrel = zxz_euler(angles[:, 0], angles[:, 1], angles[:, 2])          # eq. 2–3, (N, 3, 3)
        if lk.parent is None:
            R[lk.name], origin = Rrel, np.zeros((N, 3))
        else:
            R[lk.name] = R[lk.parent] @ Rrel                                 # eq. 4
            origin = P[lk.parent][:, names[lk.parent].index(lk.attach)]       # B_p, world
        A = lk.points["A"]
        P[lk.name] = np.einsum("nab,npb->npa", R[lk.name], Pl - A) + origin[:, None, :]   # eq. 5–6
    if single:
        R = {k: v[0] for k, v in R.items()}
        P = {k: v[0] for k, v in P.items()}
    return EulerPoints(R, P, names)


# ------------------------------------------------------------------------ as a RobotModel
def to_robot_model(model: EulerModel, *, inertials=None, exclude=(), frames=None, tool_frame=None, **limits):
    """The same kinematics as a `RobotModel` (revolute/prismatic tree), when every joint variable
    moves one link about one axis. Fixed links are merged into their moving ancestor (their names
    become frames); links in ``exclude`` (and their descendants) are left out.

    ``inertials``: link name → (mass, centre of mass P′ in the link's local coordinates, inertia about
    it in local axes); without it the model is kinematics-only (zero masses). ``frames``: frame name →
    (link, point name), a point fixed on that link: the connection point D′ of a prismatic child stays where
    it is on the parent, while `euler_points` reports it as B′ = D′ + d v′ (eq. 1), where the child hangs —
    for that point name the frame on the child's "A" instead. Joint i of the result is the i-th moving link
    (recursion order)."""
    inertials = dict(inertials or {})
    excluded = set(exclude)
    body_of = {}                       # link -> (body index or −1, 4×4 link frame in that body)
    parents, types, rots, trans, axes, jnames, lnames = [], [], [], [], [], [], []
    frame_defs, used = {}, {}
    inert = {}
    base_name = "base"
    # a link hanging at a connection point that a prismatic sibling moves (eq. 1: B′ₚ = D′ₚ + d v′) rides on that
    # sibling's body, placed first (before, it stayed on the parent at D′ₚ: the RobotModel disagreed with
    # `euler_points` by d v′ and, for a revolute link, in its axis)
    slider = {(lk.parent, lk.attach): lk.name for lk in model.links if lk.kind == "prismatic"}
    links, placed = [], set()
    for lk in model.links:
        for item in (slider.get((lk.parent, lk.attach)), lk.name):
            if item is not None and item not in placed:
                links.append(model.link(item))
                placed.add(item)
    for lk in links:
        if lk.name in excluded or lk.parent in excluded:
            excluded.add(lk.name)
            continue
        if lk.parent is None:
            pbody, Tp, shift = -1, np.eye(4), np.zeros(3)
            if lk.kind == "fixed":
                base_name = lk.name
        else:
            pbody, Tp = body_of[lk.parent]
            plink = model.link(lk.parent)
            shift = plink.points[lk.attach] - plink.points["A"]           # D′ₚ − A′ₚ
        C = zxz_euler(*lk.euler)
        T = Tp @ np.block([[C, shift[:, None]], [np.zeros((1, 3)), np.ones((1, 1))]])
        rider = slider.get((lk.parent, lk.attach))
        if rider not in (None, lk.name) and rider not in excluded:
            # the sibling's frame moved by d v′ is T_slider(d) · [C_sliderᵀ C, 0] (both hang at D′ₚ)
            pbody, T = body_of[rider][0], np.eye(4)
            T[:3, :3] = zxz_euler(*model.link(rider).euler).T @ C
        if lk.kind == "fixed":
            body_of[lk.name] = (pbody, T)
            if pbody >= 0:
                frame_defs[lk.name] = (pbody, T)
        else:
            if lk.joint in used:
                raise ModelError(f"model '{model.name}': joint '{lk.joint}' moves links '{used[lk.joint]}' and "
                                 f"'{lk.name}' (a RobotModel joint moves one body; exclude one of them)")
            used[lk.joint] = lk.name
            if lk.kind == "prismatic":
                axis = C.T @ np.array(lk.slide)                            # eq. 1 in the body axes
            else:
                g = np.array(lk.gains)
                if np.count_nonzero(g) != 1 or abs(abs(g[g != 0][0]) - 1.0) > 1e-12:
                    raise ModelError(f"model '{model.name}', link '{lk.name}': only one Euler angle with gain ±1 "
                                     "can be a RobotModel joint")
                k = int(np.flatnonzero(g)[0])
                # Rz(a1+gq)Rx(a2)Rz(a3) = C·Rot(Cᵀẑ, gq); Rz(a1)Rx(a2+gq)Rz(a3) = C·Rot(Rz(a3)ᵀx̂, gq); ... = C·Rz(gq)
                axis = g[k] * (C.T @ [0, 0, 1.0] if k == 0 else
                               zxz_euler(0, 0, lk.euler[2]).T @ [1.0, 0, 0] if k == 1 else np.array([0, 0, 1.0]))
            parents.append(pbody)
            types.append(lk.kind)
            rots.append(T[:3, :3])
            trans.append(T[:3, 3])
            axes.append(axis)
            jnames.append(lk.joint)
            lnames.append(lk.name)
            body_of[lk.name] = (len(lnames) - 1, np.eye(4))
        if lk.name in inertials:
            b, Tl = body_of[lk.name]
            if b < 0:
                continue                                                    # carried by the fixed base
            mass, com, I = inertials[lk.name]
            com_b = Tl[:3, :3] @ (np.asarray(com, float) - lk.points["A"]) + Tl[:3, 3]
            I_b = Tl[:3, :3] @ np.asarray(I, float) @ Tl[:3, :3].T
            inert[b] = merge_inertials([inert.get(b, (0.0, np.zeros(3), np.zeros((3, 3)))), (float(mass), com_b, I_b)])
    if not lnames:
        raise ModelError(f"model '{model.name}': no moving links")
    for fname, (link, point) in dict(frames or {}).items():
        if link not in body_of or body_of[link][0] < 0 or point not in model.link(link).points:
            raise ModelError(f"frame '{fname}': link '{link}' is excluded, fixed to the base or has no point '{point}'")
        b, Tl = body_of[link]
        Tf = Tl.copy()
        Tf[:3, 3] = Tl[:3, :3] @ (model.link(link).points[point] - model.link(link).points["A"]) + Tl[:3, 3]
        frame_defs[fname] = (b, Tf)
    n = len(lnames)
    masses = [inert.get(b, (0.0,))[0] for b in range(n)]
    coms = [inert.get(b, (0.0, np.zeros(3)))[1] for b in range(n)]
    inertias = [inert.get(b, (0.0, None, np.zeros((3, 3))))[2] for b in range(n)]
    return RobotModel.create(name=model.name, parents=parents, joint_types=types, placement_rotations=rots,
                             placement_translations=trans, axes=axes, masses=masses, coms=coms,
                             inertias=inertias, joint_names=jnames, link_names=lnames, base_name=base_name,
                             frames=frame_defs, tool_frame=tool_frame, **limits)
