"""Robot models from URDF files (ROS Unified Robot Description Format), read with xml.etree.

Supported joint types: revolute, continuous (no position limits), prismatic and fixed. The tree is
walked depth-first from the root link, child joints in file order, so parents come before children.

* Every revolute/continuous/prismatic joint that is not locked becomes a body of the model (named after
  its child link). The URDF joint frame is ``parent link · origin(xyz, rpy)``; the child link frame
  coincides with it, and the joint moves the child link about/along ``axis`` (default (1, 0, 0)),
  given in that frame — exactly our placement · X_joint(q) convention.
* A fixed joint, or a movable joint named in ``locked_joints`` (held at the given position), welds its
  child link to the parent's body: the child's inertial data is merged into that body (masses add, the
  COM is the mass-weighted mean, inertias are rotated into the body's axes and moved to the common COM
  by the parallel-axis theorem), and the child link becomes a named frame of the body (e.g. ``tool0``,
  ``panda_hand``). Links welded to the fixed root link are part of the base and are dropped.
* ``<origin rpy>`` is roll-pitch-yaw about fixed axes: R = Rz(yaw) Ry(pitch) Rx(roll).
* ``<inertial>``: ``<mass value>``, ``<origin>`` (the COM frame, whose axes the ``<inertia>`` tensor
  is expressed in; the tensor is about the COM), ``<inertia ixx ixy ixz iyy iyz izz>`` (the matrix
  entries). A link without ``<inertial>`` is massless.
* ``<limit lower upper velocity effort>`` → q_min/q_max (continuous: unbounded), qd_max, tau_max;
  ``<dynamics friction damping>`` → Coulomb / viscous friction; ``<dynamics armature>`` (not in the URDF
  specification: MuJoCo's name for it, written by `to_urdf`) → the rotor inertia, default 0.
* ``<mimic joint multiplier offset>`` joints are coupled by default, q_mimic = multiplier · q_leader + offset:
  their bodies move, but only the independent joints are coordinates (``mimic="coupled"``, see
  `dynamics.io.urdf_mimic` and `dynamics.mimic`); ``mimic="independent"`` makes each its own coordinate.
* Floating/planar joints and closed loops are not supported.

Every problem raises `ModelError` with one line naming the file, the joint or link and the field.
The default tool frame is the last frame welded by fixed joints to the last body (e.g. ``tool0`` or
``panda_hand_tcp``), or the last body itself when it has none; trailing bodies of mimic joints and their leaders
(a gripper's fingers) are passed over, so the Panda with its hand keeps ``panda_hand_tcp``.
"""

from __future__ import annotations

import os

import numpy as np

from ..checks import ModelError, stacklevel_outside
from ..inertial_parameters import check_inertial, merge_inertials
from ..mimic import Coupling
from ..model import PRISMATIC, REVOLUTE, RobotModel
from ..spatial import axis_angle, homogeneous
from . import urdf_args, urdf_mimic
from .packages import search_dirs
from .urdf_as_found import MAX_URDF_BYTES, URDFWarning, lenient_inertia, read_urdf_root, warn_corrections
from .urdf_tool import tool_frame_of
from .urdf_xml import Reader, one_line_errors

__all__ = ["from_urdf", "merge_inertials", "URDFWarning", "read_urdf_root"]

_MOVABLE = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
_KNOWN = set(_MOVABLE) | {"fixed"}
_UNSUPPORTED = {"floating", "planar"}

MAX_ELEMENTS = 4096                # <link>s, and <joint>s, of one URDF (example-robot-data's most: 130 links, 101 moving
                                   # joints); 10⁵ took 20 s and 0.9 GB to read, and one RNEA of 10⁴ joints 16 s, 0.9 GB
MAX_INERTIAL = 1e12                # kg, kg·m²: a larger <mass> or <inertia> entry is no robot's (limits: 1e16)


@one_line_errors
def from_urdf(path, locked_joints=None, name: str | None = None, tool_frame: str | None = None,
              gravity=(0.0, 0.0, -9.81), strict: bool = False, xacro_args: dict | None = None,
              mimic: str = "coupled", package_dirs=()) -> RobotModel:
    """Model from a URDF file; ``locked_joints`` maps joint names to the positions they are held at
    (a list of names locks them at 0). See the module docstring for what is read and how.

    ``mimic``: ``"coupled"`` (default) keeps every ``<mimic>`` joint at multiplier · q_leader + offset,
    with only the independent joints as coordinates (``robot.n``); ``"independent"`` makes each mimic
    joint a coordinate of its own (see `dynamics.io.urdf_mimic` for limits, locks and chains).

    Real descriptions are often a little off; unless ``strict``, these load with one `URDFWarning` each,
    naming the links or joints: an inertia with a tiny negative principal moment (at most 1e-6 of the
    largest or 1e-6 kg·m²: exporter rounding, or a negligible body) is clipped to positive semi-definite; an inertia no mass
    distribution can have (triangle inequality, or inertia without mass) is kept as given, as Pinocchio
    does — the dynamics only need it positive semi-definite; ``velocity="0"`` or ``effort="0"`` means no
    limit. ``strict=True`` refuses each of these with a `ModelError`.

    A ``.xacro`` file is expanded first by the `xacro` package (``pip install xacro``), with
    ``xacro_args`` as its arguments (``name:=value``). Its ``$(find NAME)`` and ``package://NAME/…`` includes are
    found in ``package_dirs`` (a directory or a list; each holds a folder NAME or is NAME), then ROS 2's ament
    index (where installed), ``ROS_PACKAGE_PATH``, ``AMENT_PREFIX_PATH`` and the file's own ancestors
    (`dynamics.io.packages`): no ROS installation needed.
    A plain URDF's ``package://`` names are mesh files, which the dynamics never read (`collision_shapes` does).

    The steps: read the document, its links and joints; resolve locked and mimic joints; walk the tree
    from the root (movable joints make bodies, the others weld links and become frames); merge the
    inertial data per body; choose the tool frame; build the model."""
    path, locked = urdf_args.checked(path, locked_joints, name, tool_frame, strict, xacro_args, mimic)
    dirs = search_dirs("from_urdf: package_dirs", package_dirs)
    rd = Reader(path)
    root = _read_document(path, xacro_args, dirs)
    notes = {"clipped": [], "unrealisable": [], "unlimited": []}    # what non-strict loading accepted
    links, link_axes, order = _read_links(rd, root, path)
    joints, child_of, children = _read_joints(rd, root, links, strict, notes)
    urdf_args.check_locked(path, locked, joints)
    follows, mimic_locked = urdf_mimic.resolve(path, joints, locked, set(_MOVABLE), mimic)
    held = {**locked, **mimic_locked}            # positions of welded movable joints
    _warn_immobile(path, joints, held)
    base = _root_link(path, order, child_of)
    bodies, frames, body_of, T_in_body = _walk_tree(rd, path, base, joints, children, held, order)
    merged = _body_inertials(path, order, links, link_axes, body_of, T_in_body, len(bodies), strict, notes)
    frame_dict = {fname: (b, T) for fname, b, T, _ in frames}
    fingers = {n for n, j in joints.items() if j.get("mimic")} | {j["mimic"][0] for j in joints.values() if j.get("mimic")}
    tool_frame = tool_frame_of(path, tool_frame, bodies, frames, frame_dict, fingers)

    coupling = None
    js = [bd["joint"] for bd in bodies]
    if follows:
        js, coord, mult, off = urdf_mimic.coordinates(path, js, follows)
        coupling = Coupling.create([bd["joint"]["name"] for bd in bodies], coord, mult, off)
    warn_corrections(path, notes)
    robot_name = name or (root.get("name") and rd.name(root, "<robot>"))
    try:
        return RobotModel.create(
            name=robot_name or os.path.splitext(os.path.basename(path))[0],
            parents=[bd["parent"] for bd in bodies],
            joint_types=[_MOVABLE[bd["joint"]["type"]] for bd in bodies],
            placement_rotations=[bd["placement"][:3, :3] for bd in bodies],
            placement_translations=[bd["placement"][:3, 3] for bd in bodies],
            axes=[bd["joint"]["axis"] for bd in bodies],
            masses=[m for m, _, _ in merged],
            coms=[c for _, c, _ in merged],
            inertias=[I for _, _, I in merged],
            joint_names=[j["name"] for j in js],
            link_names=[bd["link"] for bd in bodies],
            base_name=base,
            q_min=[j["lower"] for j in js], q_max=[j["upper"] for j in js],
            qd_max=[j["velocity"] for j in js], tau_max=[j["effort"] for j in js],
            coulomb=[j["coulomb"] for j in js], viscous=[j["viscous"] for j in js],
            armature=[j["armature"] for j in js],
            gravity=gravity,
            frames=frame_dict,
            tool_frame=tool_frame,
            realisable_inertias=not notes["unrealisable"],
            coupling=coupling,
        )
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None


# ------------------------------------------------------------------ step 1: the file
def _read_document(path: str, xacro_args, package_dirs=()):
    """The <robot> root element (a regular file of at most MAX_URDF_BYTES; .xacro expanded)."""
    if os.path.exists(path) and (not os.path.isfile(path) or os.path.getsize(path) > MAX_URDF_BYTES):
        what = "not a regular file" if not os.path.isfile(path) else f"larger than {MAX_URDF_BYTES >> 20} MiB"
        raise ModelError(f"{path}: {what}; expected a URDF file")
    root = read_urdf_root(path, xacro_args, package_dirs)
    if root.tag != "robot":
        raise ModelError(f"{path}: the root element is <{root.tag}>, expected <robot>")
    for tag in ("link", "joint"):
        count = len(root.findall(tag))
        if count > MAX_ELEMENTS:
            raise ModelError(f"{path}: {count} <{tag}> elements, more than the {MAX_ELEMENTS} a robot may have")
    return root


# ------------------------------------------------------------------ step 2: links
def _read_links(rd: Reader, root, path: str):
    """{link: (mass, com, inertia about the com)} in the link frame, {link: axes of its <inertial> frame},
    and the links in file order."""
    links: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}   # name -> (mass, com, inertia) in link frame
    link_axes: dict[str, np.ndarray] = {}      # checked below, only for links that end up on a moving body
    order: list[str] = []
    for el in root.findall("link"):
        lname = rd.name(el, "<link>")
        where = f"link '{lname}'"
        if lname in links:
            raise rd.error(where, "defined twice")
        inertial = el.find("inertial")
        if inertial is None:
            links[lname] = (0.0, np.zeros(3), np.zeros((3, 3)))
            link_axes[lname] = np.eye(3)
        else:
            mass = rd.number(rd.child(inertial, "mass", where + " <inertial>"), "value", where + " <inertial>")
            T = rd.origin(inertial, where + " <inertial>")
            iel = rd.child(inertial, "inertia", where + " <inertial>")
            entries = {k: rd.number(iel, k, where + " <inertial>") for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            I = np.array([[entries["ixx"], entries["ixy"], entries["ixz"]],
                          [entries["ixy"], entries["iyy"], entries["iyz"]],
                          [entries["ixz"], entries["iyz"], entries["izz"]]])
            R = T[:3, :3]
            if not (np.isfinite(mass) and np.isfinite(I).all()):
                check_inertial(f"{path}: link '{lname}' <inertial>", mass, I)    # one line: not numbers
            if max(abs(mass), np.abs(I).max()) > MAX_INERTIAL:        # (1e308 overflowed later: numpy warnings)
                raise rd.error(where, f"<inertial>: mass {mass:g} kg or an inertia entry is too large (at most "
                                      f"{MAX_INERTIAL:g})")
            links[lname] = (mass, T[:3, 3].copy(), R @ I @ R.T)
            link_axes[lname] = R
        order.append(lname)
    if not links:
        raise ModelError(f"{path}: no <link> elements")
    return links, link_axes, order


# ------------------------------------------------------------------ step 3: joints
def _read_joints(rd: Reader, root, links: dict, strict: bool, notes: dict):
    """{joint: its fields}, {child link: joint}, {link: joints whose parent it is, in file order}."""
    joints: dict[str, dict] = {}
    child_of: dict[str, str] = {}       # child link -> joint name
    children: dict[str, list[str]] = {lname: [] for lname in links}
    for el in root.findall("joint"):
        jname = rd.name(el, "<joint>")
        where = f"joint '{jname}'"
        if jname in joints:
            raise rd.error(where, "defined twice")
        jtype = rd.attr(el, "type", where)
        if jtype in _UNSUPPORTED:
            raise rd.error(where, f"joint type '{jtype}' is not supported (use revolute, continuous, prismatic or "
                                  f"fixed); the URDF's root link is fixed in the world (a free-flying or planar base "
                                  f"is not modelled)")
        if jtype not in _KNOWN:
            raise rd.error(where, f"unknown joint type '{jtype}' (use revolute, continuous, prismatic or fixed)")
        parent = rd.attr(rd.child(el, "parent", where), "link", where)
        child = rd.attr(rd.child(el, "child", where), "link", where)
        for role, lname in (("parent", parent), ("child", child)):
            if lname not in links:
                raise rd.error(where, f"<{role} link=\"{lname}\">: no such link")
        if child in child_of:
            raise rd.error(where, f"link '{child}' is already the child of joint '{child_of[child]}' "
                                  f"(closed kinematic loops are not supported)")
        if parent == child:
            raise rd.error(where, f"link '{child}' is its own parent (a loop)")
        j = {"name": jname, "type": jtype, "parent": parent, "child": child,
             "origin": rd.origin(el, where), "mimic": None}
        if jtype in _MOVABLE:
            _read_movable(rd, el, j, where, strict, notes)
        joints[jname] = j
        child_of[child] = jname
        children[parent].append(jname)
    return joints, child_of, children


def _read_movable(rd: Reader, el, j: dict, where: str, strict: bool, notes: dict) -> None:
    """A movable joint's axis, <limit>, <dynamics> and <mimic>, into `j`."""
    jname, jtype = j["name"], j["type"]
    axis_el = el.find("axis")
    axis = rd.vector(axis_el, "xyz", where + " <axis>", (1.0, 0.0, 0.0)) if axis_el is not None \
        else np.array([1.0, 0.0, 0.0])
    if np.linalg.norm(axis) < 1e-12:
        raise rd.error(where, f"<axis xyz=\"{axis_el.get('xyz')}\">: the axis must not be zero")
    j["axis"] = axis / np.linalg.norm(axis)
    lim = el.find("limit")
    if lim is None and jtype != "continuous":
        raise rd.error(where, f"missing <limit> (required for a {jtype} joint)")
    if jtype == "continuous":
        j["lower"], j["upper"] = -np.inf, np.inf
    else:
        j["lower"] = rd.number(lim, "lower", where + " <limit>", default=0.0)
        j["upper"] = rd.number(lim, "upper", where + " <limit>", default=0.0)
        if j["lower"] > j["upper"]:
            raise rd.error(where, f"<limit>: lower {j['lower']} is above upper {j['upper']}")
    if lim is not None:
        j["velocity"] = rd.number(lim, "velocity", where + " <limit>")
        j["effort"] = rd.number(lim, "effort", where + " <limit>")
        for key in ("velocity", "effort"):
            if j[key] == 0 and not strict:
                j[key] = np.inf                       # "0" is written for "not given" by many exporters
                notes["unlimited"].append(f"{jname} {key}")
            elif not j[key] > 0:
                raise rd.error(where, f"<limit {key}=\"{lim.get(key)}\">: must be positive")
    else:
        j["velocity"] = j["effort"] = np.inf
    dyn = el.find("dynamics")
    j["coulomb"] = rd.number(dyn, "friction", where + " <dynamics>", default=0.0) if dyn is not None else 0.0
    j["viscous"] = rd.number(dyn, "damping", where + " <dynamics>", default=0.0) if dyn is not None else 0.0
    for key in ("coulomb", "viscous"):
        if not (np.isfinite(j[key]) and j[key] >= 0):   # (inf was refused later, as 'coulomb: ...', naming no joint)
            raise rd.error(where, f"<dynamics {'friction' if key == 'coulomb' else 'damping'}>: must be a finite "
                                  f"number >= 0")
    j["armature"] = rd.number(dyn, "armature", where + " <dynamics>", default=0.0) if dyn is not None else 0.0
    if not (np.isfinite(j["armature"]) and j["armature"] >= 0):     # (not URDF's: MuJoCo's name, what to_urdf writes)
        raise rd.error(where, f"<dynamics armature=\"{dyn.get('armature')}\">: must be a finite number >= 0")
    j["mimic"] = urdf_mimic.read_mimic(rd, el, where)


def _warn_immobile(path: str, joints: dict, held: dict) -> None:
    """One `URDFWarning` naming the free revolute or prismatic joints whose <limit lower> equals upper: they cannot
    move (SolidWorks' exporter writes lower="0" upper="0" for 'not given'; the double pendulum of
    example-robot-data has them), which the planner said only when a waypoint left [0, 0]. As for a mimic
    coupling that leaves a coordinate a single position (`urdf_mimic`)."""
    import warnings
    stuck = [f"'{n}' at {j['lower']:g}" for n, j in joints.items()
             if j["type"] in ("revolute", "prismatic") and n not in held and j["lower"] == j["upper"]]
    if stuck:
        warnings.warn(f"{path}: <limit lower> equals upper for joint(s) {', '.join(stuck)}: the joint cannot move (give "
                      f"its range, or lock it there)", URDFWarning, stacklevel=stacklevel_outside())


# ------------------------------------------------------------------ step 4: the root
def _root_link(path: str, order: list, child_of: dict) -> str:
    roots = [lname for lname in order if lname not in child_of]
    if not roots:
        raise ModelError(f"{path}: no root link: every link is the child of a joint (a loop)")
    if len(roots) > 1:
        raise ModelError(f"{path}: two or more root links ({', '.join(roots)}): links must form one tree "
                         f"(every link but one must be the child of a joint)")
    return roots[0]


# ------------------------------------------------------------------ step 5: walk the tree
def _walk_tree(rd: Reader, path: str, base: str, joints: dict, children: dict, held: dict, order: list):
    """Depth-first from the root, child joints in file order (parents before children): the bodies
    (one per movable, not held joint), the welded links as frames (name, body, transform, how it is reached:
    `via` below), each link's body and its frame in that body."""
    body_of = {base: -1}                  # link -> body index (-1: the fixed base)
    T_in_body = {base: np.eye(4)}         # link frame in its body's frame
    via = {base: 1}                       # how a link is reached from its body: 1 fixed joints only; 3 locked joints
    #                                       only, from the body's own link (a locked wrist), 2 those then fixed joints
    #                                       (the wrist's tool0); 0 else (e.g. fingers locked on a hand)
    bodies: list[dict] = []
    frames: list[tuple[str, int, np.ndarray, int]] = []
    visited = {base}
    stack = list(reversed(children[base]))       # joints still to visit; popped in file order (pre-order)
    while stack:
        jname = stack.pop()
        j = joints[jname]
        p, c = j["parent"], j["child"]
        where = f"joint '{jname}'"
        if c in visited:
            raise rd.error(where, f"link '{c}' is reached twice (a loop)")
        visited.add(c)
        b = body_of[p]
        T_joint = T_in_body[p] @ j["origin"]
        if j["type"] in _MOVABLE and jname not in held:
            bodies.append({"joint": j, "link": c, "parent": b, "placement": T_joint})
            body_of[c], T_in_body[c], via[c] = len(bodies) - 1, np.eye(4), 1
        else:
            X = np.eye(4)
            if j["type"] in _MOVABLE:                 # locked joint: its child is welded at q = held[j]
                qv = held[jname]
                if j["type"] == "prismatic":
                    X[:3, 3] = qv * j["axis"]
                else:
                    X = homogeneous(axis_angle(j["axis"], qv))
            body_of[c], T_in_body[c] = b, T_joint @ X
            if j["type"] == "fixed":
                via[c] = 2 if via[p] == 3 else via[p]
            else:
                via[c] = 3 if via[p] == 3 or (b >= 0 and p == bodies[b]["link"]) else 0
            if b >= 0:
                frames.append((c, b, T_in_body[c], via[c]))
        stack.extend(reversed(children[c]))
    unreached = [lname for lname in order if lname not in visited]
    if unreached:
        raise ModelError(f"{path}: links {', '.join(unreached)} are not connected to the root '{base}' "
                         f"(a loop of joints)")
    if not bodies:
        raise ModelError(f"{path}: no movable joints (all joints are fixed or locked)")
    return bodies, frames, body_of, T_in_body


# ------------------------------------------------------------------ step 6: inertial data per body
def _body_inertials(path, order, links, link_axes, body_of, T_in_body, n, strict, notes) -> list:
    """(mass, com, inertia about the com) of every body in its frame: its links' inertials moved into the
    body frame and merged by the parallel-axis theorem (`dynamics.inertial_parameters.merge_inertials`)."""
    parts: list[list] = [[] for _ in range(n)]
    for lname in order:
        b = body_of[lname]
        if b < 0:
            continue
        m, c, I = links[lname]
        R = link_axes[lname]                       # the <inertial> frame's axes in the link frame
        I = R @ lenient_inertia(f"{path}: link '{lname}' <inertial>", lname, m, R.T @ I @ R, strict, notes) @ R.T
        T = T_in_body[lname]
        parts[b].append((m, T[:3, :3] @ c + T[:3, 3], T[:3, :3] @ I @ T[:3, :3].T))
    return [merge_inertials(p) for p in parts]


_Reader = Reader      # the former private name (dynamics.urdf._Reader)
