"""Palletizing with changing payloads (Safeea et al. 2019, Section 6): cell file → Cartesian paths →
inverse kinematics → joint paths → time-optimal plans with the carried box merged into the model.

A *cell file* (TOML, see ``scenarios/default_cell.toml`` and docs/palletizing.md) describes the robot,
its gripper, where boxes are picked, the pallet, the stacking pattern and a box catalogue. For every
box the robot makes two moves:

* **loaded**: pick (TCP on the box top at the conveyor) → lift → transfer → descend → place, with the
  box as payload (`dynamics.payload.with_payload`: the box merged into the last link);
* **return**: the same Cartesian path backwards with the empty gripper, so every cycle starts from the
  same pick posture (the joint path is the loaded one reversed, which makes the moves repeat exactly).

Cartesian paths are a vertical lift, a horizontal transfer (a swing about the base axis, or a straight
line) and a vertical descent, joined by tangent-continuous cubic Bézier blends; the gripper points down
and turns about the vertical axis during the transfer only (smooth-step in arc length). The TCP poses go through the recursive
IK (`dynamics.inverse_kinematics.track_path`) starting from a preferred posture; the joint samples are
interpolated by a cubic spline (`toppra_app.JointPath`).
"""

from __future__ import annotations

import contextlib
import math
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynamics.forward_kinematics import frame_pose
from dynamics.inverse_kinematics import solve_ik, track_path
from dynamics.model import ModelError, RobotModel
from dynamics.payload import RigidBodyInertia, with_payload
from toppra_app.errors import InfeasiblePathError, InputError, short_repr
from toppra_app.textfile import read_text

DEFAULT_CELL = Path(__file__).with_name("default_cell.toml")
TCP_FRAME = "tcp"

_SCHEMA = {
    "cell": {"name", "robot", "urdf", "flange", "preferred_posture_deg"},
    "gripper": {"mass", "com", "size", "inertia", "tcp_offset"},
    "pick": {"position", "yaw_deg"},
    "pallet": {"position", "size", "yaw_deg"},
    "pattern": {"layers", "rows", "columns", "gap", "alternate", "boxes", "box"},
    "motion": {"approach_height", "clearance", "blend_radius", "transfer", "samples", "grid", "rot_weight",
               "energy_weight"},
    "limits": {"tool_speed_max", "collaborative", "torque_rate_max", "jerk_max"},   # optional extra limits
    "friction": {"coulomb", "viscous"},                 # optional joint friction of the robot model
    "thermal": {"tau_rms", "tau_rms_fraction", "box"},  # optional RMS-torque rating over one box's cycle
    "boxes": None,        # a table of box types
}
_BOX_KEYS = {"size", "mass", "com_offset", "inertia"}
_COLLABORATIVE_KEYS = {"energy_max", "contact_mass"}


# ------------------------------------------------------------------------------ small geometry
def rot_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def tool_down_pose(position, yaw: float) -> np.ndarray:
    """TCP pose with the tool z axis pointing down (−z of the base) and yaw about the vertical:
    R = R_z(yaw) · R_x(π)."""
    T = np.eye(4)
    T[:3, :3] = rot_z(yaw) @ np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = position
    return T


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


# ------------------------------------------------------------------------------ cell data
@dataclass(frozen=True)
class BoxType:
    name: str
    size: np.ndarray             # (3,) along the box axes: length (x), width (y), height (z)
    mass: float
    com_offset: np.ndarray       # (3,) COM relative to the box centre, box axes
    inertia: np.ndarray          # (3, 3) about the COM, box axes

    def payload(self) -> RigidBodyInertia:
        """The box as a payload in the TCP frame. The TCP is at the centre of the box's top face with the
        tool z axis pointing down into the box and the tool x axis along the box's long side, so the box
        centre is at (0, 0, h/2) and the box axes (z up) are seen from the tool through
        R = diag(1, −1, −1): COM = (0, 0, h/2) + R·com_offset, inertia R I Rᵀ."""
        R = np.diag([1.0, -1.0, -1.0])            # box axes (z up) seen from the tool (z down)
        com = np.array([0.0, 0.0, 0.5 * self.size[2]]) + R @ self.com_offset
        return RigidBodyInertia(self.mass, com, R @ self.inertia @ R.T)


@dataclass(frozen=True)
class Slot:
    index: int
    layer: int
    row: int
    column: int
    box: BoxType
    yaw: float                   # TCP yaw at the place pose (rad)
    centre: np.ndarray           # box centre in the base frame
    footprint: tuple             # (half extent along pallet x, along pallet y) of the placed box
    place: np.ndarray            # TCP pose (4, 4) at the place pose

    @property
    def label(self) -> str:
        return f"L{self.layer + 1}R{self.row + 1}C{self.column + 1}"


@dataclass
class Cell:
    source: str
    name: str
    robot_name: str
    base_robot: RobotModel       # as loaded (no gripper)
    robot: RobotModel            # nominal model: gripper merged, "tcp" frame, rated payload minus gripper
    gripper: RigidBodyInertia
    pick: np.ndarray             # TCP pose at the pick (4, 4)
    pallet_pose: np.ndarray      # pallet top-centre frame (4, 4)
    pallet_size: np.ndarray      # (2,)
    layers: int
    rows: int
    columns: int
    gap: float
    alternate: bool
    layer_boxes: list            # BoxType per layer
    boxes: dict                  # name -> BoxType
    approach_height: float
    clearance: float
    blend_radius: float
    transfer: str                # "arc" (swing about the base axis) or "line"
    samples: int
    grid: int | None                 # planner grid intervals per move; None: the planner's adaptive grid
    rot_weight: float
    q_preferred: np.ndarray
    slots: list = field(default_factory=list)
    q_pick: np.ndarray | None = None
    tool_speed_max: float | None = None      # [limits] TCP speed limit (m/s), None: none
    energy_max: float | None = None          # [limits] collaborative = { energy_max } (J), None: none
    contact_mass: float | None = None        # [limits] collaborative = { contact_mass } (kg), None: rigid
    tau_rms: np.ndarray | None = None        # [thermal] RMS torque rating per joint (N·m), None: none
    thermal_box: int = 0                     # [thermal] box = k (1-based in the file): whose cycle is rated
    energy_weight: float = 0.0               # [motion] time–energy trade-off weight (0: time-optimal)
    torque_rate_max: np.ndarray | None = None  # [limits] N·m/s per joint (inf: none), None: none
    jerk_max: np.ndarray | None = None       # [limits] rad/s³ per joint (inf: none), None: none
    reference_robot: object | None = None    # the robot without the cell's [friction] (None: no [friction])

    def planner_options(self) -> dict:
        """Planner keyword options for the cell's optional Cartesian limits of the TCP and time–energy
        weight (empty when it has none)."""
        opts = dict(tool_speed_max=self.tool_speed_max, collision_energy_max=self.energy_max,
                    contact_mass=self.contact_mass, energy_weight=self.energy_weight or None,
                    torque_rate_max=self.torque_rate_max, jerk_max=self.jerk_max)
        return {k: v for k, v in opts.items() if v is not None}


class _Reader:
    """Typed access to one TOML table with errors naming the file and the field."""

    def __init__(self, source: str, table: dict, prefix: str):
        self.source, self.table, self.prefix = source, table, prefix

    def error(self, key: str | None, msg: str) -> InputError:
        where = self.prefix if key is None else (f"{self.prefix}.{key}" if self.prefix else key)
        return InputError(f"{self.source}: {where}: {msg}")

    def check_keys(self, allowed):
        unknown = sorted(set(self.table) - set(allowed))
        if unknown:
            raise self.error(unknown[0], f"unknown key (known keys: {', '.join(sorted(allowed))})")

    def has(self, key):
        return key in self.table

    def number(self, key, default=None, *, lo=None, hi=None, positive=False, integer=False):
        if key not in self.table:
            if default is None:
                raise self.error(key, "required")
            return default
        v = self.table[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(key, f"expected a number, got {short_repr(v)}")
        if not math.isfinite(v):
            raise self.error(key, f"must be a finite number, got {v}")
        if integer and (not isinstance(v, int) and not float(v).is_integer()):
            raise self.error(key, f"expected an integer, got {v}")
        if positive and not v > 0:
            raise self.error(key, f"must be > 0, got {v}")
        if lo is not None and v < lo:
            raise self.error(key, f"must be >= {lo}, got {v}")
        if hi is not None and v > hi:
            raise self.error(key, f"must be <= {hi}, got {v}")
        return int(v) if integer else float(v)

    def vector(self, key, n, default=None, *, positive=False):
        if key not in self.table:
            if default is None:
                raise self.error(key, "required")
            return np.array(default, dtype=float)
        v = self.table[key]
        if not isinstance(v, list) or len(v) != n or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v):
            raise self.error(key, f"expected a list of {n} numbers, got {short_repr(v)}")
        arr = np.array(v, dtype=float)
        if not np.isfinite(arr).all():
            raise self.error(key, f"values must be finite numbers, got {v}")
        if positive and not (arr > 0).all():
            raise self.error(key, f"values must be > 0, got {v}")
        return arr

    def string(self, key, default=None):
        if key not in self.table:
            if default is None:
                raise self.error(key, "required")
            return default
        v = self.table[key]
        if not isinstance(v, str) or not v:
            raise self.error(key, f"expected a non-empty string, got {short_repr(v)}")
        return v

    def inertia(self, key, mass, default):
        """3 principal moments (along the body axes) or a 3×3 matrix, about the COM."""
        if key not in self.table:
            return default
        v = self.table[key]
        try:
            arr = np.array(v, dtype=float)
        except (TypeError, ValueError):
            raise self.error(key, f"expected 3 numbers or a 3×3 matrix, got {short_repr(v)}") from None
        if arr.shape == (3,):
            arr = np.diag(arr)
        if arr.shape != (3, 3):
            raise self.error(key, f"expected 3 numbers or a 3×3 matrix, got shape {arr.shape}")
        try:
            RigidBodyInertia(mass, np.zeros(3), arr)
        except ModelError as exc:
            raise self.error(key, str(exc).removeprefix("payload: ")) from None
        return arr


def _table(source, doc, key, required=True) -> dict:
    if key not in doc:
        if required:
            raise InputError(f"{source}: [{key}]: required table is missing")
        return {}
    if not isinstance(doc[key], dict):
        raise InputError(f"{source}: {key}: expected a table")
    return doc[key]


def _box_type(source, name, table) -> BoxType:
    if not isinstance(table, dict):
        raise InputError(f"{source}: boxes.{name}: expected a table")
    r = _Reader(source, table, f"boxes.{name}")
    r.check_keys(_BOX_KEYS)
    size = r.vector("size", 3, positive=True)
    mass = r.number("mass", positive=True)
    com = r.vector("com_offset", 3, default=np.zeros(3))
    if np.any(np.abs(com) > 0.5 * size + 1e-12):
        raise r.error("com_offset", f"COM {com.tolist()} lies outside the box of size {size.tolist()}")
    a, b, c = size
    uniform = mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    inertia = r.inertia("inertia", mass, uniform)
    return BoxType(name, size, mass, com, inertia)


def default_preferred_posture(robot: RobotModel, pick: np.ndarray) -> np.ndarray:
    """Start posture for the IK: elbow up, wrist down, joint 1 turned towards the pick (7-axis arms of
    the iiwa/panda family); otherwise the middle of the joint ranges with joint 1 towards the pick."""
    yaw = math.atan2(pick[1, 3], pick[0, 3])
    if robot.n == 7:
        q = np.array([yaw, 0.55, 0.0, -1.35, 0.0, 1.25, 0.0])
    else:
        lo = np.where(np.isfinite(robot.q_min), robot.q_min, -np.pi)
        hi = np.where(np.isfinite(robot.q_max), robot.q_max, np.pi)
        q = 0.5 * (lo + hi)
        q[0] = yaw
    return np.clip(q, robot.q_min, robot.q_max)


def _load_robot(source, r: _Reader, base_dir: Path) -> tuple[str, RobotModel]:
    from dynamics.robots import load_robot
    if r.has("urdf") and r.has("robot"):
        raise r.error("urdf", "give either 'robot' (a built-in name) or 'urdf' (a file), not both")
    if r.has("urdf"):
        path = base_dir / r.string("urdf")
        if not path.is_file():
            raise r.error("urdf", f"no such file: {path}")
        try:
            return path.stem, RobotModel.from_urdf(str(path))
        except ValueError as exc:
            raise r.error("urdf", str(exc)) from None
    name = r.string("robot", "iiwa7")
    try:
        return name, load_robot(name)
    except ModelError as exc:
        raise r.error("robot", str(exc)) from None


def _grid(rm: "_Reader") -> int | None:
    """[motion] grid: "adaptive" (default; the planner's adaptive grid, None) or a number of intervals."""
    value = rm.table.get("grid", "adaptive")
    if value == "adaptive":
        return None
    if isinstance(value, str):
        raise rm.error("grid", f'expected "adaptive" or a number of intervals, got {short_repr(value)}')
    return rm.number("grid", lo=10, hi=5000, integer=True)


MAX_CELL_BYTES = 1 << 20          # a cell file is a few kB; more is not a cell file
MAX_BOXES = 2000                  # boxes per pallet (layers × rows × columns), checked before any planning
MAX_PER_SIDE = 100                # layers, rows or columns
MAX_DISTANCE = 10.0               # m: approach height, clearance, blend radius, gap


def _read_toml(path: Path, source: str) -> dict:
    """The TOML document, or one `InputError` line for anything that is not a small UTF-8 TOML file."""
    text = read_text(path, MAX_CELL_BYTES, "a cell file (TOML)")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: not valid TOML ({exc})") from None
    except RecursionError:
        raise InputError(f"{source}: not valid TOML (arrays or tables nested too deeply)") from None


def load_cell(path=None, *, check_reach: bool = True) -> Cell:
    """Read and validate a cell file (default: the built-in ``scenarios/default_cell.toml``).

    Every problem raises `InputError` naming the file and the field. With ``check_reach`` the pick pose
    and every place pose are solved by IK (a few ms each) so an unreachable slot is reported up front."""
    path = Path(path) if path is not None else DEFAULT_CELL
    source = str(path)
    return cell_from_document(_read_toml(path, source), source, path.parent, path.stem, check_reach=check_reach)


def cell_from_document(doc: dict, source: str, base_dir: Path, default_name: str, *, check_reach: bool = True) -> Cell:
    """`load_cell` of a parsed cell document (a dict as from `tomllib`); files it names (``urdf``) are
    relative to ``base_dir``; errors name ``source``."""
    base_dir = Path(base_dir)
    unknown = sorted(set(doc) - set(_SCHEMA))
    if unknown:
        raise InputError(f"{source}: {unknown[0]}: unknown table (known: {', '.join(_SCHEMA)})")

    rc = _Reader(source, _table(source, doc, "cell"), "cell")
    rc.check_keys(_SCHEMA["cell"])
    robot_name, base = _load_robot(source, rc, base_dir)
    flange = rc.string("flange", base.tool_frame or base.link_names[-1])
    try:
        flange_body, T_body_flange = base.frame(flange)
    except ModelError as exc:
        raise rc.error("flange", str(exc)) from None

    rg = _Reader(source, _table(source, doc, "gripper", required=False), "gripper")
    rg.check_keys(_SCHEMA["gripper"])
    g_mass = rg.number("mass", 0.0, lo=0.0)
    g_com = rg.vector("com", 3, default=np.zeros(3))
    g_size = rg.vector("size", 3, default=np.full(3, 0.05), positive=True)    # validated even for mass 0
    if g_mass > 0:
        g_inertia = rg.inertia("inertia", g_mass, RigidBodyInertia.box(g_mass, g_size).inertia)
    else:
        g_inertia = rg.inertia("inertia", g_mass, np.zeros((3, 3)))
    gripper = RigidBodyInertia(g_mass, g_com, g_inertia)
    tcp = np.eye(4)
    tcp[:3, 3] = rg.vector("tcp_offset", 3, default=np.zeros(3))
    rated = base.rated_payload
    if rated is not None and g_mass > rated:
        raise rg.error("mass", f"gripper of {g_mass:g} kg exceeds the rated payload {rated:g} kg of {robot_name}")
    robot = with_payload(base, gripper, frame=flange)
    robot = robot.replace(
        frame_names=tuple(base.frame_names) + (TCP_FRAME,),
        frame_bodies=_ro_int(list(base.frame_bodies) + [flange_body]),
        frame_transforms=_ro(np.concatenate([np.asarray(base.frame_transforms).reshape(-1, 4, 4),
                                             (T_body_flange @ tcp)[None]])),
        tool_frame=TCP_FRAME,
        rated_payload=None if rated is None else rated - g_mass,
    )

    rp = _Reader(source, _table(source, doc, "pick"), "pick")
    rp.check_keys(_SCHEMA["pick"])
    pick = tool_down_pose(rp.vector("position", 3), math.radians(rp.number("yaw_deg", 0.0)))

    rl = _Reader(source, _table(source, doc, "pallet"), "pallet")
    rl.check_keys(_SCHEMA["pallet"])
    pallet_pose = np.eye(4)
    pallet_pose[:3, :3] = rot_z(math.radians(rl.number("yaw_deg", 0.0)))
    pallet_pose[:3, 3] = rl.vector("position", 3)
    pallet_size = rl.vector("size", 2, positive=True)

    boxes_doc = _table(source, doc, "boxes")
    if not boxes_doc:
        raise InputError(f"{source}: boxes: define at least one box type ([boxes.NAME] with size and mass)")
    boxes = {name: _box_type(source, name, t) for name, t in boxes_doc.items()}
    cap = robot.rated_payload
    for b in boxes.values():
        if cap is not None and b.mass > cap + 1e-12:
            raise InputError(f"{source}: boxes.{b.name}.mass: {b.mass:g} kg exceeds what {robot_name} can carry "
                             f"(rated payload {rated:g} kg minus gripper {g_mass:g} kg = {cap:g} kg)")

    rt = _Reader(source, _table(source, doc, "pattern"), "pattern")
    rt.check_keys(_SCHEMA["pattern"])
    layers = rt.number("layers", 1, lo=1, hi=MAX_PER_SIDE, integer=True)
    rows = rt.number("rows", 1, lo=1, hi=MAX_PER_SIDE, integer=True)
    columns = rt.number("columns", 1, lo=1, hi=MAX_PER_SIDE, integer=True)
    if layers * rows * columns > MAX_BOXES:
        raise rt.error("layers", f"{layers} layers × {rows} rows × {columns} columns = {layers * rows * columns} "
                                 f"boxes, more than the {MAX_BOXES} a pallet may have")
    gap = rt.number("gap", 0.0, hi=MAX_DISTANCE)
    if gap < 0:
        raise rt.error("gap", f"negative gap {gap} m: neighbouring boxes would overlap")
    alternate = rt.table.get("alternate", False)
    if not isinstance(alternate, bool):
        raise rt.error("alternate", f"expected true or false, got {short_repr(alternate)}")
    if rt.has("box") and rt.has("boxes"):
        raise rt.error("boxes", "give either 'box' (one type) or 'boxes' (a type per layer), not both")
    names = rt.table.get("boxes", rt.table.get("box", next(iter(boxes))))
    if isinstance(names, str):
        names = [names]
    key = "boxes" if rt.has("boxes") else "box"
    if not isinstance(names, list) or not names or not all(isinstance(x, str) for x in names):
        raise rt.error(key, f"expected a box type name or a list of names, got {short_repr(names)}")
    for nm in names:
        if nm not in boxes:
            raise rt.error(key, f"unknown box type '{nm}' (defined: {', '.join(boxes)})")
    layer_boxes = [boxes[names[k % len(names)]] for k in range(layers)]

    rm = _Reader(source, _table(source, doc, "motion", required=False), "motion")
    rm.check_keys(_SCHEMA["motion"])
    cell = Cell(
        source=source, name=rc.string("name", default_name), robot_name=robot_name, base_robot=base, robot=robot,
        gripper=gripper, pick=pick, pallet_pose=pallet_pose, pallet_size=pallet_size, layers=layers, rows=rows,
        columns=columns, gap=gap, alternate=alternate, layer_boxes=layer_boxes, boxes=boxes,
        approach_height=rm.number("approach_height", 0.08, positive=True, hi=MAX_DISTANCE),
        clearance=rm.number("clearance", 0.05, lo=0.0, hi=MAX_DISTANCE),
        blend_radius=rm.number("blend_radius", 0.05, lo=0.0, hi=MAX_DISTANCE),
        transfer=rm.string("transfer", "arc"),
        samples=rm.number("samples", 80, lo=10, hi=2000, integer=True),
        grid=_grid(rm),
        rot_weight=rm.number("rot_weight", 0.2, positive=True),
        energy_weight=rm.number("energy_weight", 0.0, lo=0.0),
        q_preferred=np.zeros(robot.n),
    )
    if cell.transfer not in ("arc", "line"):
        raise rm.error("transfer", f"expected 'arc' or 'line', got {short_repr(cell.transfer)}")
    if rc.has("preferred_posture_deg"):
        qp = np.radians(rc.vector("preferred_posture_deg", robot.n))
        bad = np.flatnonzero((qp < robot.q_min) | (qp > robot.q_max))
        if bad.size:
            raise rc.error("preferred_posture_deg", f"joint {robot.joint_names[bad[0]]} outside its limits")
        cell.q_preferred = qp
    else:
        cell.q_preferred = default_preferred_posture(robot, pick)
    _read_limits(source, doc, cell)
    _read_friction(source, doc, cell)
    cell.slots = make_slots(cell)
    _read_thermal(source, doc, cell)
    check_slots(cell)
    if check_reach:
        check_reachable(cell)
    return cell


def _read_limits(source, doc, cell: Cell) -> None:
    """[limits] tool_speed_max = V (m/s), collaborative = { energy_max = E (J), contact_mass = m (kg) },
    torque_rate_max = N·m/s and jerk_max = rad/s³ (a number for every joint or a list)."""
    rl = _Reader(source, _table(source, doc, "limits", required=False), "limits")
    rl.check_keys(_SCHEMA["limits"])
    if rl.has("tool_speed_max"):
        cell.tool_speed_max = rl.number("tool_speed_max", positive=True)
    if rl.has("collaborative"):
        tbl = rl.table["collaborative"]
        if not isinstance(tbl, dict):
            raise rl.error("collaborative", f"expected a table such as {{ energy_max = 2.0 }}, got {short_repr(tbl)}")
        rc = _Reader(source, tbl, "limits.collaborative")
        rc.check_keys(_COLLABORATIVE_KEYS)
        cell.energy_max = rc.number("energy_max", positive=True)
        if rc.has("contact_mass"):
            cell.contact_mass = rc.number("contact_mass", positive=True)
    for key in ("torque_rate_max", "jerk_max"):
        if rl.has(key):
            setattr(cell, key, _scalar_or_vector(rl, key, cell.robot.n))


def _scalar_or_vector(reader: "_Reader", key: str, n: int) -> np.ndarray:
    """A positive number for every joint, or a list of n positive numbers."""
    v = reader.table[key]
    if isinstance(v, list):
        return reader.vector(key, n, positive=True)
    return np.full(n, reader.number(key, positive=True))


def _read_friction(source, doc, cell: Cell) -> None:
    """[friction] coulomb = [N·m per joint], viscous = [N·m·s/rad per joint]: the robot's joint friction
    (replacing the model's); every move is then also planned without it for comparison."""
    if "friction" not in doc:
        return
    rf = _Reader(source, _table(source, doc, "friction", required=False), "friction")
    rf.check_keys(_SCHEMA["friction"])
    n = cell.robot.n
    changes = {}
    for key in ("coulomb", "viscous"):
        if rf.has(key):
            arr = rf.vector(key, n)
            if (arr < 0).any():
                raise rf.error(key, f"values must be >= 0, got {arr.tolist()}")
            changes[key] = arr
    if changes:
        cell.reference_robot = cell.robot
        cell.robot = cell.robot.replace(**changes)


def _read_thermal(source, doc, cell: Cell) -> None:
    """[thermal] tau_rms = [N·m per joint] or tau_rms_fraction = f (of τ_max); box = k (default 1): the RMS
    torque over box k's cycle (loaded move + return move + idle holding the pick posture) must stay under
    the rating (`toppra_app.objectives.thermal`)."""
    if "thermal" not in doc:
        return
    rt = _Reader(source, _table(source, doc, "thermal", required=False), "thermal")
    rt.check_keys(_SCHEMA["thermal"])
    robot = cell.robot
    if rt.has("tau_rms") == rt.has("tau_rms_fraction"):
        raise rt.error(None, "give exactly one of tau_rms (N·m per joint) or tau_rms_fraction (of tau_max)")
    if rt.has("tau_rms"):
        cell.tau_rms = rt.vector("tau_rms", robot.n, positive=True)
    else:
        f = rt.number("tau_rms_fraction", positive=True, hi=1.0)
        if not np.isfinite(robot.tau_max).all():
            raise rt.error("tau_rms_fraction", "the robot has joints without a torque limit; give tau_rms")
        cell.tau_rms = f * np.asarray(robot.tau_max, dtype=float)
    cell.thermal_box = int(rt.number("box", 1, lo=1, hi=len(cell.slots), integer=True)) - 1


def _ro(a):
    a = np.array(a, dtype=float, copy=True)
    a.setflags(write=False)
    return a


def _ro_int(a):
    a = np.array(a, dtype=int, copy=True).reshape(-1)
    a.setflags(write=False)
    return a


# ------------------------------------------------------------------------------ the pattern
def make_slots(cell: Cell) -> list[Slot]:
    """Box positions, layer by layer. In the layer frame boxes lie in ``columns`` along x (their long
    side) and ``rows`` along y, spaced by the box size plus ``gap``, centred on the pallet; with
    ``alternate`` every second layer is turned by 90° about the pallet's vertical axis."""
    slots = []
    z_top = 0.0
    pallet_yaw = math.atan2(cell.pallet_pose[1, 0], cell.pallet_pose[0, 0])
    for layer in range(cell.layers):
        box = cell.layer_boxes[layer]
        L, W, H = box.size
        z_top += H
        turn = (math.pi / 2) if (cell.alternate and layer % 2 == 1) else 0.0
        Rl = rot_z(turn)[:2, :2]
        half = np.abs(Rl) @ np.array([0.5 * L, 0.5 * W])            # footprint half extents, pallet axes
        for row in range(cell.rows):
            for col in range(cell.columns):
                local = np.array([(col - 0.5 * (cell.columns - 1)) * (L + cell.gap),
                                  (row - 0.5 * (cell.rows - 1)) * (W + cell.gap)])
                xy = Rl @ local                                      # in the pallet frame
                centre = cell.pallet_pose[:3, :3] @ np.array([xy[0], xy[1], z_top - 0.5 * H]) + cell.pallet_pose[:3, 3]
                top = centre + cell.pallet_pose[:3, :3] @ np.array([0.0, 0.0, 0.5 * H])
                yaw = _place_yaw(cell, _wrap(pallet_yaw + turn), top)
                slots.append(Slot(len(slots), layer, row, col, box, yaw, centre,
                                  (float(half[0]), float(half[1])), tool_down_pose(top, yaw)))
    return slots


def _place_yaw(cell: Cell, yaw: float, top: np.ndarray) -> float:
    """The box footprint is the same for yaw and yaw + π; take the one that needs the least turn of the
    wrist: the tool yaw relative to the arm's azimuth (which joint 1 follows) should change least."""
    yaw_pick = math.atan2(cell.pick[1, 0], cell.pick[0, 0])
    d_az = _wrap(math.atan2(top[1], top[0]) - math.atan2(cell.pick[1, 3], cell.pick[0, 3]))
    cands = (yaw, _wrap(yaw + math.pi))
    return min(cands, key=lambda y: abs(_wrap(y - yaw_pick - d_az)))


def check_slots(cell: Cell) -> None:
    """Every box on the pallet and no two boxes of a layer overlapping (pallet-frame rectangles)."""
    Tinv = np.linalg.inv(cell.pallet_pose)
    hx, hy = 0.5 * cell.pallet_size
    by_layer = {}
    for s in cell.slots:
        c = (Tinv @ np.r_[s.centre, 1.0])[:2]
        fx, fy = s.footprint
        if abs(c[0]) + fx > hx + 1e-9 or abs(c[1]) + fy > hy + 1e-9:
            raise InputError(f"{cell.source}: pattern: box {s.label} ({2 * fx:.3f} × {2 * fy:.3f} m at "
                             f"({c[0]:+.3f}, {c[1]:+.3f}) on the pallet) does not fit on the pallet of size "
                             f"{cell.pallet_size.tolist()} (fewer rows/columns, a smaller gap or a larger pallet)")
        for other, oc in by_layer.get(s.layer, []):
            ox, oy = other.footprint
            if abs(c[0] - oc[0]) < fx + ox - 1e-9 and abs(c[1] - oc[1]) < fy + oy - 1e-9:
                raise InputError(f"{cell.source}: pattern: boxes {other.label} and {s.label} overlap")
        by_layer.setdefault(s.layer, []).append((s, c))


# ------------------------------------------------------------------------------ Cartesian paths
def _dense_line(a, b, step):
    m = max(2, int(math.ceil(np.linalg.norm(b - a) / step)) + 1)
    t = np.linspace(0.0, 1.0, m)[:, None]
    return a + t * (b - a)


def _dense_swing(a, b, step):
    """Horizontal transfer from a to b (same z) as a swing about the base's vertical axis: radius and
    azimuth interpolated linearly (an Archimedean arc), so the tool keeps away from the robot's base.
    Falls back to a straight line when either end is (nearly) on the axis."""
    ra, rb = math.hypot(a[0], a[1]), math.hypot(b[0], b[1])
    if min(ra, rb) < 0.05:
        return _dense_line(a, b, step)
    pa, pb = math.atan2(a[1], a[0]), math.atan2(b[1], b[0])
    dphi = _wrap(pb - pa)
    est = abs(dphi) * 0.5 * (ra + rb) + abs(rb - ra)
    m = max(2, int(math.ceil(est / step)) + 1)
    t = np.linspace(0.0, 1.0, m)
    r = ra + t * (rb - ra)
    phi = pa + t * dphi
    pts = np.stack([r * np.cos(phi), r * np.sin(phi), a[2] + t * (b[2] - a[2])], axis=1)
    pts[0], pts[-1] = a, b
    return pts


def _arc_length(pts):
    return np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))))


def _blend_corners(pieces, radius, step):
    """Join dense pieces (each (m, 3), consecutive pieces share an end point) and round every joint
    between two pieces with a cubic Bézier from the point at arc length b before it to the point b after
    it, tangent to both (handles (2/3)·b, which is the quadratic Bézier with its control point at the
    corner when both sides are straight). b ≤ radius and ≤ half of each adjoining piece."""
    lens = [float(_arc_length(p)[-1]) for p in pieces]
    pts = pieces[0]
    for k in range(1, len(pieces)):
        pts = np.vstack([pts, pieces[k][1:]])
    s = _arc_length(pts)
    corners = np.cumsum(lens)[:-1]
    out_pts, out_s = pts, s
    # last corner first: a blend shortens the path only after the arc length where it starts, so the
    # corners before it keep their arc-length positions
    for k in range(len(corners) - 1, -1, -1):
        b = min(radius, 0.5 * lens[k], 0.5 * lens[k + 1])
        if b <= 1e-6:
            continue
        s_cur = _arc_length(out_pts)
        sc_cur = corners[k]
        interp = lambda sv: np.array([np.interp(sv, s_cur, out_pts[:, i]) for i in range(3)])  # noqa: E731
        A, B = interp(sc_cur - b), interp(sc_cur + b)
        tA = interp(sc_cur - b) - interp(sc_cur - b - min(1e-4, b / 4))
        tB = interp(sc_cur + b + min(1e-4, b / 4)) - interp(sc_cur + b)
        tA /= np.linalg.norm(tA)
        tB /= np.linalg.norm(tB)
        h = 2.0 / 3.0 * b
        m = max(8, int(math.ceil(2 * b / step)) + 1)
        t = np.linspace(0.0, 1.0, m)[:, None]
        C1, C2 = A + h * tA, B - h * tB
        bez = (1 - t) ** 3 * A + 3 * (1 - t) ** 2 * t * C1 + 3 * (1 - t) * t * t * C2 + t ** 3 * B
        before = out_pts[s_cur < sc_cur - b]
        after = out_pts[s_cur > sc_cur + b]
        out_pts = np.vstack([before, bez, after])
        out_s = _arc_length(out_pts)
    return out_pts, out_s


@dataclass
class CartesianPath:
    poses: np.ndarray        # (M, 4, 4) TCP poses
    u: np.ndarray            # (M,) normalised path parameter in [0, 1] (arc length)
    length: float            # m
    waypoints: np.ndarray    # corner points (pick, lifted, above place, place) (4, 3)


def cartesian_path(cell: Cell, slot: Slot, samples: int | None = None) -> CartesianPath:
    """Pick → lift → transfer → descend → place for one slot, sampled at ``samples`` poses uniform in
    arc length. Lift and descent are vertical; the transfer is horizontal at the higher of pick and place
    plus approach height and clearance, either a swing about the base axis ("arc", default) or a straight
    line ("line"); the corners are blended. The tool yaw follows the arm's azimuth and turns the rest of
    the way (to the slot's yaw) with a smooth step over the transfer."""
    M = samples or cell.samples
    p0 = cell.pick[:3, 3]
    p3 = slot.place[:3, 3]
    z_safe = max(p0[2], p3[2]) + cell.approach_height + cell.clearance
    p1 = np.array([p0[0], p0[1], z_safe])
    p2 = np.array([p3[0], p3[1], z_safe])
    step = 1e-3
    transfer = _dense_swing(p1, p2, step) if cell.transfer == "arc" else _dense_line(p1, p2, step)
    pieces = [_dense_line(p0, p1, step), transfer, _dense_line(p2, p3, step)]
    lens = [float(_arc_length(p)[-1]) for p in pieces]
    pts, s = _blend_corners(pieces, cell.blend_radius, step)
    total = float(s[-1])
    su = np.linspace(0.0, total, M)
    pos = np.stack([np.interp(su, s, pts[:, k]) for k in range(3)], axis=1)
    pos[0], pos[-1] = p0, p3
    # yaw = pick yaw + change of azimuth + smooth step of the remaining turn over the transfer
    az = np.unwrap(np.arctan2(pos[:, 1], pos[:, 0]))
    yaw0 = math.atan2(cell.pick[1, 0], cell.pick[0, 0])
    rest = _wrap(slot.yaw - yaw0 - (az[-1] - az[0]))
    b1 = min(cell.blend_radius, 0.5 * lens[0], 0.5 * lens[1])
    b2 = min(cell.blend_radius, 0.5 * lens[1], 0.5 * lens[2])
    s_a, s_b = (lens[0] - b1) / (lens[0] + lens[1] + lens[2]) * total, total - (lens[2] - b2) / sum(lens) * total
    x = np.clip((su - s_a) / max(s_b - s_a, 1e-12), 0.0, 1.0)
    yaw = yaw0 + (az - az[0]) + rest * (x * x * (3.0 - 2.0 * x))
    poses = np.stack([tool_down_pose(pos[k], yaw[k]) for k in range(M)])
    poses[0] = cell.pick
    poses[-1] = slot.place
    return CartesianPath(poses, su / total, total, np.array([p0, p1, p2, p3]))


# ------------------------------------------------------------------------------ inverse kinematics
class IKFailure(InputError):
    pass


def pick_posture(cell: Cell) -> np.ndarray:
    """Joint positions at the pick pose, from the preferred posture (the same every cycle)."""
    if cell.q_pick is None:
        res = solve_ik(cell.robot, cell.pick, cell.q_preferred, TCP_FRAME, rot_weight=cell.rot_weight)
        if not res.success:
            raise IKFailure(f"{cell.source}: pick.position: the pick pose is out of reach of {cell.robot_name} "
                            f"(IK error {res.pos_err:.3g} m, {math.degrees(res.rot_err):.3g}°)")
        cell.q_pick = res.q
    return cell.q_pick


def slot_ik(cell: Cell, slot: Slot, q_start=None):
    """IK of the place pose of one slot, from the pick posture (for reachability checks)."""
    q0 = pick_posture(cell) if q_start is None else q_start
    return solve_ik(cell.robot, slot.place, q0, TCP_FRAME, rot_weight=cell.rot_weight)


def check_reachable(cell: Cell) -> None:
    """IK of the pick pose and of every place pose (from the pick posture), within the joint limits."""
    pick_posture(cell)
    for s in cell.slots:
        res = slot_ik(cell, s)
        if not res.success:
            p = s.place[:3, 3]
            raise IKFailure(f"{cell.source}: pallet.position: box {s.index + 1} ({s.label}) at ({p[0]:.3f}, {p[1]:.3f}, "
                            f"{p[2]:.3f}) m is out of reach of {cell.robot_name} with the gripper pointing down "
                            f"(IK error {res.pos_err:.3g} m, {math.degrees(res.rot_err):.3g}°); move the pallet "
                            f"closer or use fewer rows/columns/layers")


@dataclass
class MoveGeometry:
    slot: Slot
    cart: CartesianPath
    q: np.ndarray            # (M, n) joint samples along the loaded move
    ik_time: float
    ik_sweeps: int
    ik_newton: int


def move_geometry(cell: Cell, slot: Slot) -> MoveGeometry:
    """IK along the loaded move's Cartesian path, starting from the pick posture."""
    cart = cartesian_path(cell, slot)
    t0 = time.perf_counter()
    tr = track_path(cell.robot, cart.poses, pick_posture(cell), TCP_FRAME, rot_weight=cell.rot_weight)
    dt = time.perf_counter() - t0
    if not tr.all_success:
        k = int(np.flatnonzero(~tr.success)[0])
        p = cart.poses[k][:3, 3]
        raise IKFailure(f"{cell.source}: pattern: box {slot.label}: the path to the slot leaves the reach of "
                        f"{cell.robot_name} at ({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m "
                        f"(IK error {tr.pos_err[k]:.3g} m, {math.degrees(tr.rot_err[k]):.3g}°)")
    return MoveGeometry(slot, cart, tr.q, dt, int(tr.sweeps.sum()), int(tr.newton_steps.sum()))


# ------------------------------------------------------------------------------ planning the pallet
@dataclass
class MoveResult:
    index: int                   # move number (0-based, in execution order)
    box: int                     # box number (slot index)
    kind: str                    # "loaded" | "return"
    slot: Slot
    payload: RigidBodyInertia | None
    path: object                 # toppra_app.JointPath
    plan: object                 # toppra_app.planner.TimeOptimalPlan
    plan_seconds: float          # wall time of this plan (problem build/compile + solves + checks)
    reused_problem: bool         # the compiled cvxpy problem was reused (same layout as an earlier move)
    cart: CartesianPath
    ik_seconds: float = 0.0
    path_error: float = 0.0      # max TCP deviation of the joint spline from the Cartesian path (m)
    reference_plan: object | None = None   # the same move without the cell's optional planner options

    @property
    def duration(self) -> float:
        return float(self.plan.duration)

    @property
    def unlimited_duration(self) -> float | None:
        """Duration of the same move without the cell's optional limits and objective (s)."""
        return None if self.reference_plan is None else float(self.reference_plan.duration)

    @property
    def label(self) -> str:
        return f"box{self.box + 1:02d}_{self.kind}"

    def summary(self, robot: RobotModel) -> dict:
        w = {k: v.as_dict(list(robot.joint_names)) for k, v in self.plan.worst.items()}
        return dict(move=self.index + 1, box=self.box + 1, kind=self.kind, slot=self.slot.label,
                    box_type=self.slot.box.name, payload_kg=0.0 if self.payload is None else self.payload.mass,
                    duration_s=self.duration, path_length_m=self.cart.length, worst_ratio=float(self.plan.worst_ratio),
                    worst=w, plan_seconds=self.plan_seconds, ik_seconds=self.ik_seconds,
                    reused_compiled_problem=bool(self.reused_problem), solver=self.plan.solver,
                    iterations=int(self.plan.iterations), path_deviation_m=self.path_error,
                    **({} if self.unlimited_duration is None else
                       dict(duration_without_cell_options_s=self.unlimited_duration)))


@dataclass
class NominalCheck:
    """The empty-gripper plan of a loaded move, executed with the box: torque the motors would need."""
    box: int
    slot: str
    box_type: str
    payload_kg: float
    nominal_duration: float      # s, plan made without the box
    loaded_duration: float       # s, plan made with the box merged into the model
    torque_ratio: float          # worst |τ| / τ_max when the nominal plan is executed with the box
    joint: str
    replan_seconds: float = 0.0  # wall time of the nominal re-plan (same path, only the payload changed)
    replan_reused: bool = False  # it re-used the compiled problem of the loaded plan

    @property
    def over_percent(self) -> float:
        return 100.0 * (self.torque_ratio - 1.0)

    def as_dict(self) -> dict:
        return dict(box=self.box + 1, slot=self.slot, box_type=self.box_type, payload_kg=self.payload_kg,
                    nominal_plan_duration_s=self.nominal_duration, payload_plan_duration_s=self.loaded_duration,
                    executed_torque_ratio=self.torque_ratio, torque_over_limit_percent=self.over_percent,
                    joint=self.joint, replan_seconds=self.replan_seconds,
                    replan_reused_compiled_problem=self.replan_reused)


@dataclass
class PalletReport:
    cell: Cell
    moves: list
    nominal_checks: list
    seconds: dict                # wall times: ik, planning, total
    boxes_planned: list          # slot indices
    thermal: object = None       # toppra_app.objectives.thermal.CyclePlan of the rated box's cycle ([thermal]), or None

    @property
    def total_time(self) -> float:
        return float(sum(m.duration for m in self.moves))

    def cycle_times(self) -> list[dict]:
        out = []
        for b in self.boxes_planned:
            ms = [m for m in self.moves if m.box == b]
            out.append(dict(box=b + 1, slot=ms[0].slot.label, box_type=ms[0].slot.box.name,
                            loaded_s=sum(m.duration for m in ms if m.kind == "loaded"),
                            return_s=sum(m.duration for m in ms if m.kind == "return"),
                            cycle_s=sum(m.duration for m in ms)))
        return out

    def _options_summary(self) -> dict:
        """The cell's optional limits/objective and their effect on the cycle time (empty when none)."""
        cell = self.cell
        if not cell.planner_options() and cell.reference_robot is None:
            return {}
        free = [m.unlimited_duration for m in self.moves]
        rates = {k: (None if getattr(cell, k) is None else getattr(cell, k).tolist())
                 for k in ("torque_rate_max", "jerk_max")}
        friction = (None if cell.reference_robot is None else
                    dict(coulomb=cell.robot.coulomb.tolist(), viscous=cell.robot.viscous.tolist()))
        out = dict(tool_speed_max=cell.tool_speed_max, collision_energy_max=cell.energy_max,
                   contact_mass=cell.contact_mass, energy_weight=cell.energy_weight, friction=friction,
                   frame=TCP_FRAME, **rates)
        for m in self.moves:
            for kind, w in (getattr(m.plan, "rate_check", None) or {}).items():
                out[f"worst_sampled_{kind}_ratio"] = max(out.get(f"worst_sampled_{kind}_ratio", 0.0), float(w.ratio))
        if self.cell.energy_weight > 0:                 # Σ ∫τᵀRτ dt, R = diag(1/τ_max²), on the 1 ms samples
            out["energy_s"] = float(sum(m.plan.energy for m in self.moves))
            if all(m.reference_plan is not None for m in self.moves):
                out["energy_without_s"] = float(sum(m.reference_plan.energy for m in self.moves))
        for kind in ("tool_speed", "collision_energy"):
            ws = [m.plan.worst[kind] for m in self.moves if kind in m.plan.worst]
            if ws:
                out[f"worst_{kind}_ratio"] = float(max(w.ratio for w in ws))
        if all(f is not None for f in free):
            total_free = float(sum(free))
            out.update(total_time_without_s=total_free, total_time_s=self.total_time,
                       cycle_time_increase_percent=100.0 * (self.total_time / total_free - 1.0),
                       mean_cycle_without_s=total_free / max(len(self.boxes_planned), 1),
                       moves_slowed=int(sum(m.duration > f * (1 + 1e-4) for m, f in zip(self.moves, free))))
        return dict(cell_options=out)

    def summary(self) -> dict:
        robot = self.cell.robot
        worst = max(self.moves, key=lambda m: m.plan.worst_ratio)
        plan_first = [m.plan_seconds for m in self.moves if not m.reused_problem]
        plan_reused = ([m.plan_seconds for m in self.moves if m.reused_problem]
                       + [c.replan_seconds for c in self.nominal_checks if c.replan_reused])
        worst_nom = max(self.nominal_checks, key=lambda c: c.torque_ratio) if self.nominal_checks else None
        return dict(
            cell=self.cell.name, cell_file=self.cell.source, robot=self.cell.robot_name,
            boxes_on_pallet=len(self.cell.slots), boxes_planned=len(self.boxes_planned),
            moves=[m.summary(robot) for m in self.moves],
            cycles=self.cycle_times(),
            total_time_s=self.total_time,
            mean_cycle_s=self.total_time / max(len(self.boxes_planned), 1),
            worst_over_limit=dict(ratio=float(worst.plan.worst_ratio), move=worst.index + 1),
            nominal_plan_with_payload=[c.as_dict() for c in self.nominal_checks],
            nominal_plan_worst=None if worst_nom is None else worst_nom.as_dict(),
            planning=dict(first_plan_mean_s=float(np.mean(plan_first)) if plan_first else None,
                          reused_plan_mean_s=float(np.mean(plan_reused)) if plan_reused else None,
                          **{k: float(v) for k, v in self.seconds.items()}),
            gripper_kg=self.cell.gripper.mass,
            rated_payload_kg=self.cell.base_robot.rated_payload,
            **self._options_summary(),
            **self._thermal_summary(),
        )

    def _thermal_summary(self) -> dict:
        """[thermal]: the RMS-limited cycle of one box against its time-optimal cycle."""
        if self.cell.tau_rms is None:
            return {}
        out = dict(box=self.cell.thermal_box + 1, scope="loaded + return move of this box, idle holding the "
                   "pick posture", tau_rms=[float(v) for v in self.cell.tau_rms])
        if self.thermal is None:
            out["note"] = "box not planned (see --boxes / --quick)"
        else:
            out.update(self.thermal.summary())
        return dict(thermal=out)


def _path_deviation(cell: Cell, path, cart: CartesianPath) -> float:
    """Largest TCP distance between the joint spline (at the midpoints between IK samples) and the
    Cartesian path (linearly interpolated there) — the interpolation error of the spline."""
    um = 0.5 * (cart.u[1:] + cart.u[:-1])
    T = frame_pose(cell.robot, path.q(um), TCP_FRAME)
    pm = 0.5 * (cart.poses[1:, :3, 3] + cart.poses[:-1, :3, 3])
    return float(np.linalg.norm(T[:, :3, 3] - pm, axis=1).max())


def select_boxes(cell: Cell, quick: bool = False, boxes=None) -> list[int]:
    """Slot indices to plan: all (default), the ones given, or with ``quick`` the first box of every layer."""
    if boxes is not None:
        return list(boxes)
    if quick:
        seen, out = set(), []
        for s in cell.slots:
            if s.layer not in seen:
                seen.add(s.layer)
                out.append(s.index)
        return out
    return [s.index for s in cell.slots]


@contextlib.contextmanager
def _move_context(slot: Slot, move: str):
    """Planner errors name the box and the move they happened in (same exception class)."""
    try:
        yield
    except InfeasiblePathError as exc:
        raise type(exc)(f"box {slot.label}, {move}: {exc}") from None


@dataclass
class BoxPlans:
    """The plans of one box: its loaded and return moves, the nominal check and wall times (s)."""
    moves: list                  # [loaded, return] MoveResult
    check: NominalCheck | None
    ik_s: float
    plan_s: float
    reference_s: float           # plans without the cell's options (comparison)


def _reversible(robot, opts: dict) -> bool:
    """Time reversal keeps the plan optimal and within limits (`TimeOptimalPlan.reversed`)."""
    frictionless = not (np.any(robot.coulomb != 0) or np.any(robot.viscous != 0))
    return frictionless and opts.get("torque_rate_max") is None and opts.get("jerk_max") is None


def plan_box(cell: Cell, b: int, first_index: int = 0, *, nominal: bool = True, planner_options=None) -> BoxPlans:
    """Plan the two moves of box `b` (slot index): the loaded move with the box merged into the model and
    the empty return move along the same Cartesian path backwards; with ``nominal`` also the loaded path
    planned for the empty gripper (re-using the compiled problem, only the payload changes) and executed
    with the box, to show what ignoring the payload would demand.

    On a frictionless robot without rate limits the return move is the nominal plan played backwards
    (`TimeOptimalPlan.reversed`: the same optimum, checked again) instead of a third plan."""
    from dynamics.inverse_dynamics import friction_torques, inverse_dynamics
    from toppra_app.path import JointPath
    from toppra_app.planner import TimeOptimalPlanner
    base_opts = dict(planner_options or {})
    opts = {**base_opts, **cell.planner_options()}
    compare = opts != base_opts or cell.reference_robot is not None
    reference_robot = cell.reference_robot or cell.robot
    t_ref = 0.0

    def unlimited(p, payload):
        nonlocal t_ref
        if not compare:
            return None
        t0 = time.perf_counter()
        plan = TimeOptimalPlanner(reference_robot, p, grid=cell.grid, **base_opts).plan(payload=payload)
        t_ref += time.perf_counter() - t0
        return plan

    slot = cell.slots[b]
    t0 = time.perf_counter()
    geo = move_geometry(cell, slot)
    t_ik = time.perf_counter() - t0
    load = slot.box.payload()
    path = JointPath.from_waypoints(geo.q, s=geo.cart.u)
    t0 = time.perf_counter()
    with _move_context(slot, "loaded move"):
        planner = TimeOptimalPlanner(cell.robot, path, grid=cell.grid, **opts)
        plan = planner.plan(payload=load)
    dt_plan = time.perf_counter() - t0
    t_plan = dt_plan
    loaded = MoveResult(first_index, b, "loaded", slot, load, path, plan, dt_plan, plan.reused_problem, geo.cart,
                        geo.ik_time, _path_deviation(cell, path, geo.cart), unlimited(path, load))
    check = nominal_plan = None
    if nominal:
        t0 = time.perf_counter()
        with _move_context(slot, "loaded move planned without the box"):
            nominal_plan = planner.plan(payload=None)
        dt_replan = time.perf_counter() - t0
        t_plan += dt_replan
        smp = nominal_plan.sample(1e-3)
        loaded_robot = cell.robot.with_payload(load)
        tau = inverse_dynamics(loaded_robot, smp.q, smp.qd, smp.qdd) + friction_torques(loaded_robot, smp.qd)
        ratio = np.abs(tau) / cell.robot.tau_max
        k = int(np.unravel_index(np.argmax(ratio), ratio.shape)[1])
        check = NominalCheck(b, slot.label, slot.box.name, load.mass, float(nominal_plan.duration),
                             float(plan.duration), float(ratio.max()), cell.robot.joint_names[k],
                             dt_replan, bool(nominal_plan.reused_problem))
    # empty return: the same Cartesian path backwards (joint path reversed: ends at the pick posture)
    rcart = CartesianPath(geo.cart.poses[::-1].copy(), 1.0 - geo.cart.u[::-1], geo.cart.length, geo.cart.waypoints[::-1])
    rpath = JointPath.from_waypoints(geo.q[::-1], s=rcart.u)
    t0 = time.perf_counter()
    with _move_context(slot, "return move"):
        if nominal_plan is not None and _reversible(cell.robot, opts):
            rplan = nominal_plan.reversed(rpath)
        else:
            rplan = TimeOptimalPlanner(cell.robot, rpath, grid=cell.grid, **opts).plan(payload=None)
    dt_plan = time.perf_counter() - t0
    t_plan += dt_plan
    ret = MoveResult(first_index + 1, b, "return", slot, None, rpath, rplan, dt_plan, rplan.reused_problem, rcart,
                     0.0, _path_deviation(cell, rpath, rcart), unlimited(rpath, None))
    return BoxPlans([loaded, ret], check, t_ik, t_plan, t_ref)


def plan_pallet(cell: Cell, *, quick: bool = False, boxes=None, progress=None, planner_options=None,
                nominal: bool = True, on_move=None) -> PalletReport:
    """Plan every move of the pallet (or a subset) box by box (`plan_box`): the loaded move, the empty
    return move and, with ``nominal``, the loaded path planned for the empty gripper and executed with the
    box. ``progress(done, total, label)`` and ``on_move(MoveResult)`` are called after every move.

    With optional planner options in the cell (``[limits]``: TCP speed, collaborative energy;
    ``[motion] energy_weight``) every move is planned with them and, for comparison, once more without
    them (`MoveResult.unlimited_duration`, summary ``cell_options``: the effect on the cycle time)."""
    opts = {**dict(planner_options or {}), **cell.planner_options()}
    compare = opts != dict(planner_options or {}) or cell.reference_robot is not None
    chosen = select_boxes(cell, quick, boxes)
    total_moves = 2 * len(chosen)
    moves, checks = [], []
    t_all = time.perf_counter()
    t_ik = t_plan = t_ref = 0.0
    pick_posture(cell)
    for b in chosen:
        box = plan_box(cell, b, len(moves), nominal=nominal, planner_options=planner_options)
        t_ik, t_plan, t_ref = t_ik + box.ik_s, t_plan + box.plan_s, t_ref + box.reference_s
        if box.check is not None:
            checks.append(box.check)
        for m in box.moves:
            for plan in (m.plan, m.reference_plan):
                if plan is not None:
                    plan.planner = None         # keep the plan's data, not its planner's caches (flat memory)
            moves.append(m)
            if on_move:
                on_move(m)
            if progress:
                progress(len(moves), total_moves, m.label)
    thermal = None
    if cell.tau_rms is not None and cell.thermal_box in chosen:
        from toppra_app.objectives.thermal import plan_cycle_with_rms_limit
        ms = [m for m in moves if m.box == cell.thermal_box]
        t0 = time.perf_counter()
        thermal = plan_cycle_with_rms_limit(cell.robot, [m.path for m in ms], cell.tau_rms,
                                            payloads=[m.payload for m in ms], grid=cell.grid, **opts)
        t_plan += time.perf_counter() - t0
    seconds = dict(ik_s=t_ik, planning_s=t_plan, total_s=time.perf_counter() - t_all)
    if compare:
        seconds["planning_without_cell_options_s"] = t_ref
    if thermal is not None:
        seconds["thermal_s"] = thermal.seconds
    return PalletReport(cell, moves, checks, seconds, chosen, thermal)
