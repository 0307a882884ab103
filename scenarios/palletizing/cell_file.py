"""Reading a cell file (TOML): every key checked, one line naming the file and the field on the first
problem (docs/palletizing.md lists the keys)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from dynamics.checks import over_text
from dynamics.mimic import coordinate_prismatic, from_degrees
from dynamics.model import ModelError, RobotModel
from dynamics.payload import RigidBodyInertia, with_payload
from toppra_app.errors import InputError, short_repr
from toppra_app.objectives.energy import MAX_WEIGHT
from toppra_app.textfile import read_toml

from .cell import BoxType, Cell, DEFAULT_CELL, TCP_FRAME, read_only, read_only_int, rot_z, tool_down_pose
from .moves import check_reachable
from .pattern import check_slots, make_slots
from .collisions import check_layout
from .cell_options import read_collision, read_controller, read_friction, read_limits, read_thermal
from .reader import BOX_KEYS, MAX_LENGTH, SCHEMA, Reader, table


def _box_type(source, name, table) -> BoxType:
    if not name.isprintable():      # [boxes."a\nb"]: every message naming the box took two lines
        raise InputError(f"{source}: boxes: a box type's name must be one line of printable text, got {short_repr(name)}")
    if not isinstance(table, dict):
        raise InputError(f"{source}: boxes.{name}: expected a table")
    r = Reader(source, table, f"boxes.{name}")
    r.check_keys(BOX_KEYS)
    size = r.vector("size", 3, positive=True, bound=MAX_LENGTH)
    mass = r.number("mass", positive=True)
    com = r.vector("com_offset", 3, default=np.zeros(3))
    if np.any(np.abs(com) > 0.5 * size + 1e-12):
        raise r.error("com_offset", f"COM {com.tolist()} lies outside the box of size {size.tolist()}")
    a, b, c = size
    uniform = mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    inertia = r.inertia("inertia", mass, uniform)
    # A given inertia: the contents lie inside the box, so along each box axis the mass's second moment about the
    # COM is at most m (s/2 − c)(s/2 + c) (Bhatia–Davis: a spread on [−s/2, s/2] with mean c). [1, 1, 1] kg·m² for
    # a 5 kg box of 0.2 m (at most 0.04) was planned as given; a unit slip (kg·cm²) is 1e4 times too large. (The
    # default, a uniform box about an offset COM, is the documented approximation and not checked.)
    spread = 0.5 * np.trace(inertia) - np.diag(inertia)
    most = mass * (0.25 * size ** 2 - com ** 2)
    over = np.flatnonzero(spread > most * (1 + 1e-9) + 1e-12 * mass * float(size @ size)) if r.has("inertia") else ()
    if len(over):
        k = int(over[0])
        raise r.error("inertia", f"too large for {mass:g} kg inside the box of size {size.tolist()} m (COM offset "
                      f"{com.tolist()}): along the box's {'xyz'[k]} axis the second moment about the COM would be "
                      f"{spread[k]:.4g} kg·m², at most {most[k]:.4g} (inertia in kg·m², about the COM)")
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


def _load_robot(source, r: Reader, base_dir: Path, package_paths=()) -> tuple[str, RobotModel]:
    """[cell] robot (built-in) or urdf (file, relative to the cell file; a xacro file's packages found in
    `package_paths` too) with locked_joints (a table joint = position, rad or m), tool_frame, mimic ("coupled"
    or "independent", see `dynamics.urdf_mimic`) and rated_payload (kg). A locked joint or tool frame the file
    does not have is named as that key (the loader's `ModelError.argument`), not as ``urdf``."""
    from dynamics.robots import load_robot
    if r.has("urdf") and r.has("robot"):
        raise r.error("urdf", "give either 'robot' (a built-in name) or 'urdf' (a file), not both")
    for key in ("locked_joints", "tool_frame", "mimic"):
        if r.has(key) and not r.has("urdf"):
            raise r.error(key, "only for a URDF robot ('urdf = \"FILE.urdf\"')")
    if r.has("urdf"):
        path = base_dir / r.string("urdf")
        try:
            found = path.is_file()
        except OSError as exc:                       # a name too long, ...: the key, not --out (a hunt)
            raise r.error("urdf", f"cannot use {short_repr(str(path))}: {exc.strerror or exc}") from None
        if not found:
            raise r.error("urdf", f"no such file: {path}")
        locked = r.table.get("locked_joints", {})
        if not isinstance(locked, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in locked.values()):
            raise r.error("locked_joints", f"expected a table of joint = position (finite numbers), got "
                                           f"{short_repr(locked)}")
        mimic = r.string("mimic", "coupled")
        if mimic not in ("coupled", "independent"):
            raise r.error("mimic", f"expected \"coupled\" or \"independent\", got {short_repr(mimic)}")
        try:
            name, robot = path.stem, RobotModel.from_urdf(str(path), locked_joints=dict(locked) or None, mimic=mimic,
                                                          tool_frame=r.string("tool_frame") if r.has("tool_frame") else None,
                                                          package_dirs=package_paths)
        except ValueError as exc:
            raise r.error(getattr(exc, "argument", None) or "urdf", str(exc)) from None
    else:
        name = r.string("robot", "iiwa7")
        try:
            robot = load_robot(name)
        except ModelError as exc:
            raise r.error("robot", str(exc)) from None
    if not any(np.isfinite(getattr(robot, k)).any() for k in ("tau_max", "qd_max", "qdd_max")):
        # (puma560, charmie: the planner refused it after the IK, in a line naming no file or key)
        raise r.error("urdf" if r.has("urdf") else "robot", f"robot '{name}' has no joint torque, velocity or "
                      f"acceleration limit, so nothing bounds the motion (its minimum time is 0); choose a robot "
                      f"with limits (iiwa7, panda, ur5e, planar4) or a URDF whose joints have <limit effort velocity>")
    if r.has("rated_payload"):
        robot = robot.replace(rated_payload=r.number("rated_payload", lo=0.0))
    return name, robot, (str(path) if r.has("urdf") else None)


def _package_paths(r: Reader, base_dir: Path) -> tuple:
    """[cell] package_paths: directories (relative to the cell file) in which package:// names are found."""
    value = r.table.get("package_paths", [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise r.error("package_paths", f"expected a list of directories, got {short_repr(value)}")
    out = []
    for v in value:
        d = base_dir / v
        if not d.is_dir():
            raise r.error("package_paths", f"no such directory: {d}")
        out.append(str(d))
    return tuple(out)


def _grid(rm: "Reader") -> int | None:
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
    return read_toml(path, MAX_CELL_BYTES, "a cell file (TOML)", source)


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
    unknown = sorted(set(doc) - set(SCHEMA))
    if unknown:
        raise InputError(f"{source}: {unknown[0]}: unknown table (known: {', '.join(SCHEMA)})")

    rc = Reader(source, table(source, doc, "cell"), "cell")
    rc.check_keys(SCHEMA["cell"])
    package_paths = _package_paths(rc, base_dir)
    robot_name, base, urdf_path = _load_robot(source, rc, base_dir, package_paths)
    flange = rc.string("flange", base.tool_frame or base.link_names[-1])
    try:
        flange_body, T_body_flange = base.frame(flange)
    except ModelError as exc:
        raise rc.error("flange", str(exc)) from None

    rg = Reader(source, table(source, doc, "gripper", required=False), "gripper")
    rg.check_keys(SCHEMA["gripper"])
    g_mass = rg.number("mass", 0.0, lo=0.0)
    g_com = rg.vector("com", 3, default=np.zeros(3), bound=MAX_LENGTH)
    g_size = rg.vector("size", 3, default=np.full(3, 0.05), positive=True, bound=MAX_LENGTH)    # validated even for mass 0
    if g_mass > 0:
        g_inertia = rg.inertia("inertia", g_mass, RigidBodyInertia.box(g_mass, g_size).inertia)
    else:
        g_inertia = rg.inertia("inertia", g_mass, np.zeros((3, 3)))
    gripper = RigidBodyInertia(g_mass, g_com, g_inertia)
    tcp = np.eye(4)
    tcp[:3, 3] = rg.vector("tcp_offset", 3, default=np.zeros(3), bound=MAX_LENGTH)
    rated = base.rated_payload
    if rated is not None and g_mass > rated:
        raise rg.error("mass", f"gripper of {over_text(g_mass, rated)} kg exceeds the rated payload {rated:g} kg of "
                               f"{robot_name}")
    robot = with_payload(base, gripper, frame=flange)
    robot = robot.replace(
        frame_names=tuple(base.frame_names) + (TCP_FRAME,),
        frame_bodies=read_only_int(list(base.frame_bodies) + [flange_body]),
        frame_transforms=read_only(np.concatenate([np.asarray(base.frame_transforms).reshape(-1, 4, 4),
                                             (T_body_flange @ tcp)[None]])),
        tool_frame=TCP_FRAME,
        rated_payload=None if rated is None else rated - g_mass,
    )

    rp = Reader(source, table(source, doc, "pick"), "pick")
    rp.check_keys(SCHEMA["pick"])
    pick = tool_down_pose(rp.vector("position", 3, bound=MAX_LENGTH), math.radians(rp.number("yaw_deg", 0.0, lo=-360.0, hi=360.0)))

    rl = Reader(source, table(source, doc, "pallet"), "pallet")
    rl.check_keys(SCHEMA["pallet"])
    pallet_pose = np.eye(4)
    pallet_pose[:3, :3] = rot_z(math.radians(rl.number("yaw_deg", 0.0, lo=-360.0, hi=360.0)))
    pallet_pose[:3, 3] = rl.vector("position", 3, bound=MAX_LENGTH)
    pallet_size = rl.vector("size", 2, positive=True, bound=MAX_LENGTH)

    boxes_doc = table(source, doc, "boxes")
    if not boxes_doc:
        raise InputError(f"{source}: boxes: define at least one box type ([boxes.NAME] with size and mass)")
    boxes = {name: _box_type(source, name, t) for name, t in boxes_doc.items()}
    cap = robot.rated_payload
    for b in boxes.values():
        if cap is not None and b.mass > cap + 1e-12:
            raise InputError(f"{source}: boxes.{b.name}.mass: {over_text(b.mass, cap)} kg exceeds what {robot_name} "
                             f"can carry "
                             f"(rated payload {rated:g} kg minus gripper {g_mass:g} kg = {cap:g} kg)")

    rt = Reader(source, table(source, doc, "pattern"), "pattern")
    rt.check_keys(SCHEMA["pattern"])
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
    # [pick] position is the top face of every box waiting on the conveyor (the conveyor lies that box's height
    # below it): a box of another height was gripped above its top face (planned, the payload hanging from air)
    # or, taller, "collides with the conveyor at t = 0.000 s" after the layers before it were planned
    tall, low = max(layer_boxes, key=lambda b: b.size[2]), min(layer_boxes, key=lambda b: b.size[2])
    if tall.size[2] - low.size[2] > 1e-9:
        raise rt.error(key, f"box types '{low.name}' ({low.size[2]:g} m high) and '{tall.name}' ({tall.size[2]:g} m) "
                            f"differ in height, but [pick] position is the top face of every box waiting on the "
                            f"conveyor: one box height per cell file")

    rm = Reader(source, table(source, doc, "motion", required=False), "motion")
    rm.check_keys(SCHEMA["motion"])
    cell = Cell(
        source=source, name=rc.string("name", default_name), robot_name=robot_name, base_robot=base, robot=robot,
        gripper=gripper, pick=pick, pallet_pose=pallet_pose, pallet_size=pallet_size, layers=layers, rows=rows,
        flange=flange, tcp_offset=tcp[:3, 3].copy(), gripper_size=g_size, urdf_path=urdf_path,
        package_paths=package_paths,
        columns=columns, gap=gap, alternate=alternate, layer_boxes=layer_boxes, boxes=boxes,
        approach_height=rm.number("approach_height", 0.08, positive=True, hi=MAX_DISTANCE),
        clearance=rm.number("clearance", 0.05, lo=0.0, hi=MAX_DISTANCE),
        blend_radius=rm.number("blend_radius", 0.05, lo=0.0, hi=MAX_DISTANCE),
        transfer=rm.string("transfer", "arc"),
        samples=rm.number("samples", 80, lo=10, hi=2000, integer=True),
        grid=_grid(rm), gap_target=rm.number("gap_target", None, positive=True, hi=1.0) if "gap_target" in rm.table else None,
        rot_weight=rm.number("rot_weight", 0.2, positive=True, hi=MAX_DISTANCE),   # (1e308: its square overflowed)
        energy_weight=rm.number("energy_weight", 0.0, lo=0.0, hi=MAX_WEIGHT),
        q_preferred=np.zeros(robot.n),
    )
    if cell.transfer not in ("arc", "line"):
        raise rm.error("transfer", f"expected 'arc' or 'line', got {short_repr(cell.transfer)}")
    if rc.has("preferred_posture_deg"):
        qp = from_degrees(robot, rc.vector("preferred_posture_deg", robot.n))   # (a prismatic joint's value in m)
        bad = np.flatnonzero((qp < robot.q_min) | (qp > robot.q_max))
        if bad.size:                 # (it said only 'joint X outside its limits': no value, no limits, no unit)
            k = int(bad[0])
            prismatic = bool(coordinate_prismatic(robot)[k])
            unit, scale = ("m", 1.0) if prismatic else ("°", 180.0 / math.pi)
            raise rc.error("preferred_posture_deg", f"joint {robot.joint_names[k]} at {qp[k] * scale:g}{unit} is outside "
                           f"its limits {robot.q_min[k] * scale:g}{unit} to {robot.q_max[k] * scale:g}{unit}")
        cell.q_preferred = qp
    else:
        cell.q_preferred = default_preferred_posture(robot, pick)
    read_collision(source, doc, cell)
    read_limits(source, doc, cell)
    read_friction(source, doc, cell)
    read_controller(source, doc, cell)
    cell.slots = make_slots(cell)
    read_thermal(source, doc, cell)
    check_slots(cell)
    if cell.check_collisions:
        check_layout(cell)                  # (the pallet over the conveyor: before any IK or planning)
    if check_reach:
        check_reachable(cell)
    return cell
