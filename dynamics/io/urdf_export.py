"""Any robot model as a URDF file, for other tools (Pinocchio, MoveIt, MuJoCo, Drake): the inverse of
`dynamics.io.urdf.from_urdf`, so that ``from_urdf(to_urdf(robot))`` is the same model.

* The base is a link named ``robot.base_name`` without inertia. Body i is the link ``link_names[i]``
  (``<inertial>``: COM and inertia in the body axes, ``rpy = 0``), moved by the joint ``joint_names[i]``
  whose ``<origin>`` is the placement (R as roll-pitch-yaw, R = Rz(yaw)·Ry(pitch)·Rx(roll)) and whose
  ``<axis>`` is the unit axis.
* Revolute joints without position limits are ``continuous``. ``<limit>`` carries q_min, q_max, q̇_max
  and τ_max; an unlimited velocity or effort is written as 0 (which `from_urdf` reads back as "no
  limit", with a warning) — URDF has no infinity. ``<dynamics damping friction>`` carries viscous and
  Coulomb friction, and a non-zero rotor inertia is written as ``armature`` in it (MuJoCo's name; not in the
  URDF specification: `from_urdf` reads it back, while Pinocchio's and MuJoCo's URDF parsers ignore it).
* Every extra frame (``tcp``, ``flange``, …) is a massless link on a ``fixed`` joint.
* A mimic joint (a model with a `coupling`, `dynamics.mimic`) is written with ``<mimic joint multiplier
  offset>``; its limits are the image of its leader's (position m·q + o, velocity |m|·q̇_max, the leader's
  effort) and its friction and armature are 0, because the coordinate's already include them — so that
  `from_urdf` (``mimic="coupled"``) reads the same coordinates, limits and friction back.
* Not in URDF, so not written: acceleration limits (q̈_max), gravity (URDF assumes −9.81 m/s² along z),
  the rated payload, and a tool frame that is a body's own link rather than a frame (``wrist_3_link`` instead of
  ``tool0``: `from_urdf` picks its default again). They are listed in a comment at the top of the file.

Numbers are written with ``repr`` (17 significant digits), so they read back exactly."""

from __future__ import annotations

import os
import secrets
from xml.sax.saxutils import quoteattr

import numpy as np

from ..checks import ModelError, file_name
from ..model import PRISMATIC, RobotModel
from ..spatial import rpy_from_matrix
from .new_file import link_new


def _f(x) -> str:
    return repr(float(x))


def _vec(v) -> str:
    return " ".join(_f(x) for x in v)


def _origin(T_R, p) -> str:
    return f'<origin xyz="{_vec(p)}" rpy="{_vec(rpy_from_matrix(T_R))}"/>'


def to_urdf_text(robot: RobotModel) -> str:
    """The URDF document of `robot` (see the module doc)."""
    if not isinstance(robot, RobotModel):
        raise ModelError(f"to_urdf: expected a RobotModel, got {type(robot).__name__}")
    lost = []
    if np.isfinite(robot.qdd_max).any():
        lost.append("qdd_max = [" + ", ".join(_f(x) for x in robot.qdd_max) + "]")
    if not np.allclose(robot.gravity, [0.0, 0.0, -9.81]):
        lost.append("gravity = [" + _vec(robot.gravity) + "]")
    if robot.rated_payload is not None:
        lost.append(f"rated_payload = {_f(robot.rated_payload)} kg")
    if robot.tool_frame is not None and robot.tool_frame not in robot.frame_names:     # a body's own link
        lost.append(f"tool_frame = {robot.tool_frame} (a link: from_urdf takes the last fixed frame of the last body "
                    f"unless given tool_frame=...)")
    out = ['<?xml version="1.0"?>', "<!-- written by toppra-app (dynamics.urdf_export) -->"]
    if lost:
        out.append("<!-- not expressible in URDF: " + "; ".join(lost).replace("--", "- -") + " -->")
    out.append(f"<robot name={quoteattr(robot.name)}>")
    out.append(f"  <link name={quoteattr(robot.base_name)}/>")
    for i in range(robot.n_bodies):
        I = robot.inertias[i]
        out.append(f"  <link name={quoteattr(robot.link_names[i])}>")
        if robot.masses[i] > 0 or np.abs(I).max() > 0:
            out.append(f'    <inertial><origin xyz="{_vec(robot.coms[i])}" rpy="0 0 0"/><mass value="{_f(robot.masses[i])}"/>'
                       f'<inertia ixx="{_f(I[0, 0])}" ixy="{_f(I[0, 1])}" ixz="{_f(I[0, 2])}" iyy="{_f(I[1, 1])}" '
                       f'iyz="{_f(I[1, 2])}" izz="{_f(I[2, 2])}"/></inertial>')
        out.append("  </link>")
        name, lo, hi, vel, eff, viscous, coulomb, armature, mimic = _body_joint(robot, i)
        prismatic = robot.joint_types[i] == PRISMATIC
        limited = np.isfinite(lo) or np.isfinite(hi)
        if limited and not (np.isfinite(lo) and np.isfinite(hi)):
            raise ModelError(f"to_urdf: joint '{name}' has one position limit only; URDF needs both "
                             f"or none (continuous)")
        jtype = "prismatic" if prismatic else ("revolute" if limited else "continuous")
        if prismatic and not limited:
            raise ModelError(f"to_urdf: prismatic joint '{name}' has no position limits, which URDF "
                             f"requires; set them with robot.with_limits(q_min=..., q_max=...)")
        parent = robot.base_name if robot.parents[i] < 0 else robot.link_names[robot.parents[i]]
        vel = vel if np.isfinite(vel) else 0.0
        eff = eff if np.isfinite(eff) else 0.0
        pos = f'lower="{_f(lo)}" upper="{_f(hi)}" ' if limited else ""
        out += [f"  <joint name={quoteattr(name)} type=\"{jtype}\">",
                f"    <parent link={quoteattr(parent)}/><child link={quoteattr(robot.link_names[i])}/>",
                "    " + _origin(robot.placement_rotations[i], robot.placement_translations[i]),
                f'    <axis xyz="{_vec(robot.axes[i])}"/>',
                f'    <limit {pos}velocity="{_f(vel)}" effort="{_f(eff)}"/>',
                f'    <dynamics damping="{_f(viscous)}" friction="{_f(coulomb)}"'
                + (f' armature="{_f(armature)}"/>' if armature else "/>"),
                *(["    " + mimic] if mimic else []),
                "  </joint>"]
    order = sorted(range(len(robot.frame_names)), key=lambda k: robot.frame_names[k] == robot.tool_frame)
    for k in order:                      # the tool frame last: `from_urdf` takes the last fixed frame as tool
        name = robot.frame_names[k]
        T = np.asarray(robot.frame_transforms[k])
        body = robot.link_names[int(robot.frame_bodies[k])]
        out += [f"  <link name={quoteattr(name)}/>",
                f"  <joint name={quoteattr(name + '_fixed')} type=\"fixed\">",
                f"    <parent link={quoteattr(body)}/><child link={quoteattr(name)}/>",
                "    " + _origin(T[:3, :3], T[:3, 3]),
                "  </joint>"]
    out.append("</robot>")
    return "\n".join(out) + "\n"


def _body_joint(robot: RobotModel, i: int):
    """(name, lower, upper, velocity, effort, damping, friction, armature, <mimic> element or "") of body i's
    joint."""
    c = robot.coupling
    k = i if c is None else int(c.coordinate[i])
    limits = (robot.q_min[k], robot.q_max[k], robot.qd_max[k], robot.tau_max[k])
    armature = 0.0 if robot.armature is None else float(robot.armature[k])
    if c is None or c.joint_names[i] == robot.joint_names[k]:
        return (robot.body_joint_names[i], *limits, robot.viscous[k], robot.coulomb[k], armature, "")
    m, o = float(c.multiplier[i]), float(c.offset[i])
    lo, hi = sorted((m * limits[0] + o, m * limits[1] + o))      # q_b = m q_k + o (inf stays inf)
    mimic = f'<mimic joint={quoteattr(robot.joint_names[k])} multiplier="{_f(m)}" offset="{_f(o)}"/>'
    return c.joint_names[i], lo, hi, abs(m) * limits[2], limits[3], 0.0, 0.0, 0.0, mimic


def to_urdf(robot: RobotModel, path) -> str:
    """Write `robot` to a new URDF file at `path` (an existing file is never overwritten); returns the path.
    A name `from_urdf` would refuse (not printable: a newline, a control character) is refused first.

    Whole or not at all (design.md): the text goes to a temporary file next to `path`, which is then
    hard-linked to `path` — an atomic step that fails if `path` exists meanwhile (where the file system has
    no hard links, an exclusive create and copy that removes its own file on failure). Writing `path`
    directly left a truncated file on a full disk or a file size limit, which the next call then refused to
    replace."""
    path = file_name("to_urdf: path", path)
    text = to_urdf_text(robot)
    exists = ModelError(f"to_urdf: {path} exists already (never overwritten); choose a new file name")
    if os.path.lexists(path):
        raise exists
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)), f".to_urdf-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    created = False
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            created = True
            fh.write(text)
        link_new(tmp, path)
    except FileExistsError:
        raise exists from None
    except OSError as exc:
        raise ModelError(f"to_urdf: cannot write {path} ({exc.strerror or exc})") from None
    finally:
        if created:
            os.unlink(tmp)
    return path
