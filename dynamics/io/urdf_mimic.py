"""URDF ``<mimic>`` joints for `dynamics.io.urdf.from_urdf`: reading, resolving, and the coordinates' limits.

``<mimic joint="a" multiplier="m" offset="o"/>`` (defaults m = 1, o = 0) on a movable joint b means
q_b = m q_a + o. With ``mimic="coupled"`` (the default, as Pinocchio's ``buildModelFromUrdf(..., mimic=True)``
and MoveIt) b keeps its body but gets no coordinate of its own (`dynamics.mimic.Coupling`):

* a chain (a mimics c) is resolved to the root leader: q_b = m (m_a q_c + o_a) + o; a loop is refused;
* a mimic of a locked joint is locked too, at m · (locked position) + o; locking both at other positions
  is refused (locking the mimic alone leaves its leader free);
* a mimic of a missing or fixed joint is refused (load with ``mimic="independent"`` or lock it);
* the leader and the mimic may be of different types (the map is a plain linear one on the numbers).

The coordinate's limits are the leader's joined with every follower's:

* position: the leader's interval intersected with the follower's mapped back, (lo_b − o)/m … (hi_b − o)/m
  (swapped for m < 0); an empty intersection is refused, one that is a single point loads with a
  `URDFWarning` naming the joints (PR2's gripper: a −1 mimic of [0, 0.548] leaves its leader only 0);
* velocity: q̇_a ≤ q̇_max,b / |m|;
* effort: the leader's only — a coupled joint has no actuator of its own in this model (as Pinocchio,
  which keeps the leader's effort limit); the follower's torque is part of the coordinate's Gᵀ τ;
* friction: the follower's Coulomb F_c sign(m q̇_a) projected by m adds |m| F_c, viscous m² F_v (exact);
  its armature (rotor inertia) adds m² times it, like viscous friction.

``mimic="independent"`` ignores ``<mimic>``: every mimic joint is a coordinate of its own.
A ``<mimic>`` on a fixed joint is ignored in both modes (the joint does not move).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..checks import ModelError, stacklevel_outside
from .urdf_as_found import URDFWarning

MODES = ("coupled", "independent")


def read_mimic(rd, el, where: str):
    """(leader name, multiplier, offset) of a joint element's <mimic>, or None."""
    m = el.find("mimic")
    if m is None:
        return None
    where = where + " <mimic>"
    leader = rd.attr(m, "joint", where)
    mult = rd.number(m, "multiplier", where, default=1.0)
    off = rd.number(m, "offset", where, default=0.0)
    if not (np.isfinite(mult) and np.isfinite(off)):
        raise rd.error(where, f"multiplier and offset must be finite, got {m.get('multiplier')} and {m.get('offset')}")
    if mult == 0:
        raise rd.error(where, "multiplier=\"0\" holds the joint still; lock it with locked_joints instead")
    return leader, mult, off


def resolve(path: str, joints: dict, locked: dict, movable: set, mode: str):
    """For ``mode="coupled"``: ({follower: (root leader, multiplier, offset)}, {follower: locked position})
    for every movable, not locked joint with a <mimic>; both empty for ``"independent"``."""
    if mode == "independent":
        return {}, {}
    _check_locked_mimics(path, joints, locked, movable)
    follows, lock = {}, {}
    for name, j in joints.items():
        if j.get("mimic") is None or j["type"] not in movable or name in locked:
            continue
        mult, off, seen, cur = 1.0, 0.0, [name], name
        while True:
            leader, m, o = joints[cur]["mimic"]
            where = f"{path}: joint '{cur}' <mimic joint=\"{leader}\">"
            if leader not in joints:
                raise ModelError(f"{where}: no such joint (load with mimic=\"independent\" to keep '{cur}' free, "
                                 f"or lock it)")
            if joints[leader]["type"] not in movable:
                raise ModelError(f"{where}: '{leader}' is a {joints[leader]['type']} joint; a mimic needs a movable "
                                 f"leader (lock '{cur}' instead)")
            mult, off = mult * m, mult * o + off          # q = mult (m q_leader + o) + off
            if leader in seen:
                raise ModelError(f"{where}: the mimic joints {' -> '.join(seen + [leader])} form a loop")
            seen.append(leader)
            if leader in locked:
                lock[name] = mult * locked[leader] + off
                break
            if joints[leader].get("mimic") is None:
                follows[name] = (leader, mult, off)
                break
            cur = leader
    return follows, lock


def _check_locked_mimics(path: str, joints: dict, locked: dict, movable: set) -> None:
    """A locked mimic joint whose leader (or a leader up its chain) is locked too must be held where its
    <mimic> puts it (the Panda's finger_joint1 at 0.02 and finger_joint2 at 0.03 cannot both hold)."""
    for name, value in locked.items():
        mult, off, seen, cur = 1.0, 0.0, {name}, name
        while joints[cur].get("mimic") is not None and joints[cur]["type"] in movable:
            leader, m, o = joints[cur]["mimic"]
            if leader not in joints or joints[leader]["type"] not in movable or leader in seen:
                break                                   # (refused below, or a free mimic of nothing)
            mult, off = mult * m, mult * o + off        # q_name = mult · q_leader + off
            if leader in locked:
                held = mult * locked[leader] + off
                if abs(value - held) > 1e-9 * max(1.0, abs(held)):
                    raise ModelError(f"{path}: locked joint '{name}': position {value:g} contradicts its <mimic> of "
                                     f"'{leader}', locked at {locked[leader]:g}, which holds it at {held:g} (lock "
                                     f"only '{leader}', or load with mimic=\"independent\")", argument="locked_joints")
                break
            seen.add(leader)
            cur = leader


def coordinates(path: str, body_joints: list[dict], follows: dict):
    """Coupling arrays and per-coordinate joint data from the bodies' joints (in body order):
    (coordinate joints (dicts with the combined limits and friction), coordinate per body, multipliers, offsets)."""
    coords, index = [], {}
    for j in body_joints:
        if j["name"] not in follows:
            index[j["name"]] = len(coords)
            coords.append(dict(j))
    coord, mult, off, pinned = [], [], [], []
    for j in body_joints:
        leader, m, o = follows.get(j["name"], (j["name"], 1.0, 0.0))
        k = index[leader]
        coord.append(k)
        mult.append(m)
        off.append(o)
        if leader == j["name"]:
            continue
        c = coords[k]
        lo, hi = sorted(((j["lower"] - o) / m, (j["upper"] - o) / m))
        new_lo, new_hi = max(c["lower"], lo), min(c["upper"], hi)
        if new_lo > new_hi:
            raise ModelError(f"{path}: joint '{j['name']}' <mimic>: its limits [{j['lower']}, {j['upper']}] allow "
                             f"'{leader}' only in [{lo}, {hi}], outside its own [{c['lower']}, {c['upper']}]")
        if new_lo == new_hi < c["upper"] or new_hi == new_lo > c["lower"]:
            pinned.append(f"'{leader}' at {new_lo + 0.0:g} by '{j['name']}'")
        c["lower"], c["upper"] = new_lo + 0.0, new_hi + 0.0           # (+ 0.0: no -0.0 from a negative m)
        c["velocity"] = min(c["velocity"], j["velocity"] / abs(m))
        c["coulomb"] += abs(m) * j["coulomb"]
        c["viscous"] += m * m * j["viscous"]
        c["armature"] += m * m * j["armature"]          # its rotor's kinetic energy ½ a (m q̇)²
    if pinned:
        warnings.warn(f"{path}: the limits of mimic joints leave a single position to " + ", ".join(pinned)
                      + " (the coordinate cannot move; lock it there, or load with mimic=\"independent\")",
                      URDFWarning, stacklevel=stacklevel_outside())
    return coords, coord, mult, off
