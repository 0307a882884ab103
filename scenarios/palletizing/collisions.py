"""Collision checking of every move against the cell (coal, the collision library Pinocchio uses).

Moving bodies: each arm link as a capsule from its body's origin to the next body's origin (the last
link to the flange), radius `Cell.link_radius` (default by robot, `LINK_RADIUS`); the gripper as a
cylinder from the flange to 5 mm above the TCP (the suction cup's compliance), radius half its width (none
with the TCP within 5 mm of the flange); on
loaded moves the carried box, hanging below the TCP. Obstacles: the pallet (a 15 cm slab under its top),
the conveyor (a 5 cm slab under the waiting box) and every box already placed — the pallet is built in
slot order, so for box k the slots before k are there (whether planned in this run or not).

The carried box rests on its supports at both ends of a loaded move (the conveyor; the pallet or the boxes
directly below its slot): for these pairs contact is allowed and only penetration deeper than `CONTACT`
counts. The minimum distance reported excludes them.

**Certified between checks** (conservative advancement): with V a bound on the speed of any point of the
moving bodies over the move (Σ_j |q̇_j| R_j, R_j the largest distance of a moving point from joint j's
axis origin, +5 %), a check at time t with distance d clears the interval [t, t + d / V]; the next check
is there (at least the next 1 ms sample). Between consecutive samples the bound is V·Δt / 2."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from dynamics.mimic import body_rates
from toppra_app.errors import InfeasiblePathError, InputError, short_repr

from .cell import rot_z, yaw_pose

LINK_RADIUS = {"iiwa7": 0.07, "panda": 0.06, "ur5e": 0.06, "ur5": 0.06, "ur10": 0.07, "puma560": 0.08}
DEFAULT_RADIUS = 0.06
CONTACT = 1e-4            # m: allowed penetration of a carried box into its support (IK and rounding)
GRIPPER_GAP = 0.005      # m: the gripper cylinder ends this far above the TCP (contact with a box is not a collision)
PALLET_THICKNESS = 0.15
CONVEYOR = (0.6, 0.1, 0.05)   # length along the pick yaw, extra width, thickness (m)


class CollisionError(InfeasiblePathError):
    """A move collides: the box, the move, the time and the two bodies."""


@dataclass
class Clearance:
    distance: float          # m, smallest distance between a moving body and an obstacle (supports excluded)
    time: float              # s into the move
    bodies: tuple            # (moving body, obstacle)
    points: np.ndarray       # (2, 3) the nearest points
    checks: int              # distance evaluations (time samples checked)

    def as_dict(self) -> dict:
        return dict(min_distance_m=self.distance, at_s=self.time, bodies=list(self.bodies), checks=self.checks)


def _coal():
    import coal
    return coal


def _box_object(size, T):
    coal = _coal()
    return coal.CollisionObject(coal.Box(*map(float, size)), coal.Transform3s(T[:3, :3].copy(), T[:3, 3].copy()))


def obstacles(cell, box: int, kind: str):
    """[(name, CollisionObject, bounding-sphere centre, radius, top z, footprint centre xy)] around a move."""
    out = []
    P = cell.pallet_pose.copy()
    P[:3, 3] = P[:3, :3] @ [0.0, 0.0, -0.5 * PALLET_THICKNESS] + P[:3, 3]
    size = (*cell.pallet_size, PALLET_THICKNESS)
    out.append(("pallet", _box_object(size, P), P[:3, 3], 0.5 * np.linalg.norm(size), cell.pallet_pose[2, 3]))
    first = cell.layer_boxes[0]
    C = cell.pick.copy()
    C[:3, :3] = rot_z(np.arctan2(cell.pick[1, 0], cell.pick[0, 0]))
    top = cell.pick[2, 3] - first.size[2]
    C[:3, 3] = [cell.pick[0, 3], cell.pick[1, 3], top - 0.5 * CONVEYOR[2]]
    size = (CONVEYOR[0], first.size[1] + CONVEYOR[1], CONVEYOR[2])
    out.append(("conveyor", _box_object(size, C), C[:3, 3], 0.5 * np.linalg.norm(size), top))
    placed = range(box) if kind == "loaded" else range(box + 1)
    for k in placed:
        s = cell.slots[k]
        out.append((f"box {k + 1} ({s.label})", _box_object(s.box.size, yaw_pose(s.centre, s.box_yaw)), s.centre,
                    0.5 * np.linalg.norm(s.box.size), s.centre[2] + 0.5 * s.box.size[2]))
    return out


def check_layout(cell) -> None:
    """The standing bodies clear of each other when the cell is read: the pallet and every box on it against the
    conveyor and the box waiting on it (contact allowed, `CONTACT`). A pallet put over the conveyor planned its
    first moves and then stopped with "the carried box collides with the conveyor ...; raise [motion] clearance"."""
    from toppra_app.errors import InputError
    coal = _coal()
    obs = obstacles(cell, len(cell.slots) - 1, "return")               # pallet, conveyor, every box
    first = cell.layer_boxes[0]
    W = cell.pick.copy()
    W[:3, :3] = rot_z(np.arctan2(cell.pick[1, 0], cell.pick[0, 0]))
    W[:3, 3] = cell.pick[:3, 3] - [0.0, 0.0, 0.5 * first.size[2]]
    station = [obs[1], ("box waiting at the pick", _box_object(first.size, W), W[:3, 3], 0.5 * np.linalg.norm(first.size))]
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    for a in station:
        for b in [obs[0]] + obs[2:]:
            if np.linalg.norm(a[2] - b[2]) > a[3] + b[3]:          # bounding spheres apart
                continue
            res.clear()
            d = coal.distance(a[1], b[1], req, res)
            if d < -CONTACT:
                what = "pallet" if b[0] == "pallet" else f"{b[0]} on the pallet"
                raise InputError(f"{cell.source}: pallet.position: the {what} overlaps the {a[0]} ({1000 * -d:.1f} mm "
                                 f"deep; pick.position {np.round(cell.pick[:3, 3], 3).tolist()} m): move the pallet or "
                                 f"the pick apart")


def _frame(robot, T, name):
    """Poses (K, 4, 4) of a named frame from the body poses T (K, n, 4, 4)."""
    body, X = robot.frame(name)
    return T[:, body] @ X


def _segments(cell, T):
    """Moving bodies at the body poses T (K, n, 4, 4): [(name, kind, a (K, 3), b (K, 3), radius)] for
    capsules and the gripper cylinder, plus the TCP poses (K, 4, 4)."""
    robot = cell.robot
    P = T[..., :3, 3]
    r = cell.link_radius if cell.link_radius is not None else LINK_RADIUS.get(cell.robot_name, DEFAULT_RADIUS)
    fl = _frame(robot, T, cell.flange)[..., :3, 3] if cell.flange else P[:, -1]
    tcp = _frame(robot, T, "tcp")
    nb = robot.n_bodies
    children = {i: [c for c in range(nb) if robot.parents[c] == i] for i in range(nb)}
    segs = []
    for i in range(nb):
        ends = [P[:, c] for c in children[i]] or [fl]
        for e in ends:
            segs.append((robot.link_names[i], "capsule", P[:, i], e, r))
    down = tcp[:, :3, 2]                                       # tool z points away from the flange
    width = 0.5 * float(max(cell.gripper_size[:2]))
    end = tcp[:, :3, 3] - GRIPPER_GAP * down
    if float(np.dot(end[0] - fl[0], down[0])) > 0.0:
        # the gripper reaches 5 mm short of the TCP; with the TCP within 5 mm of the flange (tcp_offset 0:
        # the tool frame is the TCP) there is no gripper body below the flange to check — a cylinder
        # from the flange to 5 mm *above* it would end at the TCP and touch the box it has just placed
        segs.append(("gripper", "cylinder", fl, end, width))
    return segs, tcp


def _poses_along(a, b):
    """Rotations (K, 3, 3) putting a z-axis-centred shape on the segments a → b (K, 3), and the centres."""
    d = b - a
    L = np.linalg.norm(d, axis=1, keepdims=True)
    z = np.where(L > 1e-9, d / np.where(L > 1e-9, L, 1.0), [0.0, 0.0, 1.0])
    ref = np.where(np.abs(z[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    x = np.cross(z, ref)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.stack([x, np.cross(z, x), z], axis=2), 0.5 * (a + b)


def _geometry(shape):
    """A coal geometry for a `dynamics.urdf_collision.Shape` (meshes loaded once per file and scale)."""
    coal = _coal()
    if shape.kind == "box":
        return coal.Box(*shape.size)
    if shape.kind == "cylinder":
        return coal.Cylinder(*shape.size)
    if shape.kind == "capsule":
        return coal.Capsule(*shape.size)
    if shape.kind == "sphere":
        return coal.Sphere(shape.size[0])
    return _mesh(shape.file, shape.size)


def urdf_geometry(urdf_path, shape):
    """`_geometry` of a URDF's collision shape; a mesh coal cannot read is named with the URDF and link."""
    try:
        return _geometry(shape)
    except InputError as exc:
        raise InputError(f"{urdf_path}: link {short_repr(shape.link)}: {exc}") from None


_MESHES: dict = {}
_SHAPES: dict = {}
MAX_KEPT = 16          # meshes and URDF robots' shape lists kept (a batch of URDF cells added one a cell, ~17 kB, for good)


def _kept(cache: dict, key, make):
    """cache[key], made once; the oldest entries dropped beyond `MAX_KEPT`."""
    if key not in cache:
        while len(cache) >= MAX_KEPT:
            cache.pop(next(iter(cache)))
        cache[key] = make()
    return cache[key]


def _mesh(path, scale):
    """A mesh file, loaded again when it changed on disk (its size and modification time are in the key)."""
    try:
        st = os.stat(path)
        changed = (st.st_size, st.st_mtime_ns)
    except OSError:                            # (the loader says what is wrong)
        changed = None
    return _kept(_MESHES, (path, tuple(scale), changed), lambda: _load_mesh(path, scale))


def _load_mesh(path, scale):
    """coal's mesh, or one `InputError` line naming the file (coal's error is six lines naming its C++ source)."""
    try:
        return _coal().MeshLoader().load(path, np.asarray(scale, dtype=float))
    except ValueError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines()]
        why = next((ln for ln in lines[lines.index(next((ln for ln in lines if ln.startswith("message:")), lines[0])) + 1:]
                    if ln), "not a mesh coal can read")
        raise InputError(f"mesh {path}: coal could not read it ({short_repr(why, 120)[1:-1]})") from None


def _urdf_shapes(cell):
    """The URDF robot's collision shapes (None for built-ins, or a URDF without any); read once per file."""
    if not getattr(cell, "urdf_path", None):
        return None
    from dynamics.urdf_collision import collision_shapes
    key = (cell.urdf_path, tuple(cell.package_paths), id(cell.base_robot))
    return _kept(_SHAPES, key, lambda: (cell.base_robot, collision_shapes(cell.urdf_path, cell.base_robot,
                                                                         cell.package_paths) or None))[1]
    #                                          (the model is kept with its shapes so that its id stays its own)


def moving_bodies(cell, move, q):
    """[(name, coal geometry, R (K, 3, 3), t (K, 3), bounding centre (K, 3), bounding radius)] of the
    arm (URDF collision shapes, or capsules), the gripper and the carried box at samples q; the TCP
    poses (K, 4, 4) and the body poses (K, n, 4, 4)."""
    from dynamics.forward_kinematics import forward_kinematics
    coal = _coal()
    out = []
    T = forward_kinematics(cell.robot, q)                                         # (K, n, 4, 4), once
    segs, tcp = _segments(cell, T)
    shapes = _urdf_shapes(cell)
    if shapes is not None:
        for sh in shapes:
            geom = urdf_geometry(cell.urdf_path, sh)
            geom.computeLocalAABB()
            W = T[:, sh.body] @ sh.T
            R, t = W[:, :3, :3], W[:, :3, 3]
            out.append((sh.link, geom, R, t, t + R @ np.asarray(geom.aabb_center), float(geom.aabb_radius)))
        segs = [sg for sg in segs if sg[0] == "gripper"]
    for name, kind, a, b, r in segs:
        L = max(float(np.linalg.norm(b[0] - a[0])), 1e-6)  # a rigid link: the same length at every sample
        geom = coal.Capsule(r, L) if kind == "capsule" else coal.Cylinder(r, L)
        R, c = _poses_along(a, b)
        out.append((name, geom, R, c, c, 0.5 * L + r))
    if move.kind == "loaded":
        size = move.slot.box.size
        c = tcp[:, :3, 3] + 0.5 * size[2] * tcp[:, :3, 2]
        out.append(("carried box", coal.Box(*map(float, size)), tcp[:, :3, :3], c, c, 0.5 * float(np.linalg.norm(size))))
    return out, tcp, T


def check_move(cell, move, sample) -> Clearance:
    """Check one move (`MoveResult` with its `TrajectorySample`); `CollisionError` on a collision."""
    coal = _coal()
    q, qd, t = sample.q, sample.qd, sample.t
    moving, tcp, T = moving_bodies(cell, move, q)
    obs = obstacles(cell, move.box, move.kind)
    carried = move.kind == "loaded"
    slot = move.slot
    bottom = slot.centre[2] - 0.5 * slot.box.size[2]
    supports = {"conveyor"} | {name for name, _, c, _, top in obs
                               if carried and name != "conveyor" and abs(top - bottom) < 1e-6
                               and np.linalg.norm(np.asarray(c[:2]) - slot.centre[:2]) < 1.0}
    # speed bound: Σ_j |q̇_j| R_j, R_j from joint j's origin to the farthest point of any moving body
    O = T[..., :3, 3]                                                          # (K, n, 3) joint origins
    far = np.max([np.linalg.norm(c[:, None, :] - O, axis=2) + r for *_, c, r in moving], axis=0)   # (K, n)
    qd_bodies = body_rates(cell.robot, np.atleast_2d(qd))                      # G q̇ with mimic joints
    V = 1.05 * float(np.max(np.sum(np.abs(qd_bodies) * far.max(axis=0), axis=1))) + 1e-9
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    names = [m[0] for m in moving]
    objs = [coal.CollisionObject(m[1], coal.Transform3s()) for m in moving]
    Rs = [np.ascontiguousarray(m[2]) for m in moving]
    ts = [np.ascontiguousarray(m[3]) for m in moving]
    cs = [m[4] for m in moving]
    rads = [m[5] for m in moving]
    C, rad = np.stack(cs, axis=1), np.array(rads)                           # (K, M, 3), (M,)
    oc = np.array([o[2] for o in obs])
    orad = np.array([o[3] for o in obs])
    support = np.array([[nm == "carried box" and o[0] in supports for o in obs] for nm in names])   # (M, O)
    best = Clearance(np.inf, 0.0, ("", ""), np.zeros((2, 3)), 0)
    dt = float(np.median(np.diff(t))) if len(t) > 1 else 1e-3
    k, checks = 0, 0
    while k < len(t):
        lower = np.linalg.norm(C[k][:, None, :] - oc[None], axis=2) - rad[:, None] - orad[None]   # (M, O)
        d_step, placed = np.inf, set()                      # d_step: a lower bound of every distance here
        for flat in np.argsort(lower, axis=None):
            i, j = divmod(int(flat), len(obs))
            if lower[i, j] > d_step:
                break                                       # no remaining pair can be nearer
            if i not in placed:
                objs[i].setTransform(coal.Transform3s(Rs[i][k], ts[i][k]))
                placed.add(i)
            res.clear()
            d = coal.distance(objs[i], obs[j][1], req, res)
            if support[i, j]:
                if d < -CONTACT:
                    raise CollisionError(_message(cell, move, t[k], names[i], obs[j][0], d))
                d_step = min(d_step, d + CONTACT)
                continue
            if d <= 0.0:
                raise CollisionError(_message(cell, move, t[k], names[i], obs[j][0], d))
            d_step = min(d_step, d)
            if d < best.distance:
                best = Clearance(float(d), float(t[k]), (names[i], obs[j][0]),
                                 np.array([res.getNearestPoint1(), res.getNearestPoint2()]), 0)
        checks += 1
        k += max(1, int(d_step / (V * dt))) if np.isfinite(d_step) else len(t)
    best.checks = checks
    return best


def _message(cell, move, t, a, b, d) -> str:
    return (f"{cell.source}: box {move.box + 1} ({move.slot.label}), move {move.index + 1} ({move.kind}): the "
            f"{a} collides with the {b} at t = {t:.3f} s (penetration {1000 * max(-d, 0.0):.1f} mm); raise "
            f"[motion] clearance or approach_height, or move the pallet")
