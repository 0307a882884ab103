"""`toppra-app plan WAYPOINTS.csv --robot iiwa7 --out DIR`: time-optimal motion through joint waypoints.

WAYPOINTS.csv: one waypoint per row, one column per joint (radians, or degrees with ``--degrees``);
blank lines and lines starting with ``#`` are skipped. An optional header row names the columns: the
robot's joint names in any order (the columns are put in the robot's order), or q1 … qn in the robot's
order; other names are refused. A column named ``s`` (or ``theta``) gives the path parameter of each
waypoint (default uniform on [0, 1]).
Strict rules (no silently dropped waypoint): `toppra_app.waypoints`.

DIR receives summary.json, trajectory.csv (t, q, q̇, q̈, τ at 1 kHz by default), report.html (interactive:
the robot along the path, zoomable profiles, phase plane) and PNG plots
(torques, velocities, accelerations against time with limits; phase plane). Everything is written into
a temporary directory next to DIR and renamed at the end, so DIR is complete or untouched; an existing DIR
is replaced only if this tool wrote it (`toppra_app.output`, docs/safety.md).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from toppra_app import interrupt
from toppra_app.commands.robot_arg import (ROBOT_HELP, check_frame, check_has_limits, is_file_arg, load_robot_arg,
                                          parse_locks, parse_xacro_args, scaled_controller, scaled_limits)
from toppra_app.commands.strict import add_strict, failures_of, strict_exit
from toppra_app.errors import InfeasiblePathError, InputError
from toppra_app.limits.rows import per_joint_positive
from toppra_app.output import atomic_directory
from toppra_app.waypoints import read_waypoints


def add_parser(sub):
    p = sub.add_parser("plan", help="time-optimal motion through joint waypoints (CSV) with full dynamics",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("waypoints", metavar="WAYPOINTS.csv", help="joint waypoints, one row per waypoint")
    p.add_argument("--robot", default="iiwa7", help=ROBOT_HELP)
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output directory: created, or replaced if this tool wrote it (see docs/safety.md)")
    p.add_argument("--force", action="store_true",
                   help="write into an existing directory holding other files (never overwriting or deleting them)")
    p.add_argument("--degrees", action="store_true",
                   help="waypoints of revolute joints are in degrees (prismatic joints stay in m)")
    p.add_argument("--waypoint-tolerance", type=float, default=None, metavar="TOL",
                   help="fit a path with few knots within TOL of every waypoint (the waypoints' units), instead of "
                        "interpolating them: for recorded or noisy waypoints (docs/planner.md)")
    p.add_argument("--payload-mass", type=float, default=None, metavar="KG", help="carried object's mass")
    p.add_argument("--payload-com", type=float, nargs=3, default=None, metavar=("X", "Y", "Z"),
                   help="object's centre of mass in the payload frame [m] (default 0 0 0)")
    p.add_argument("--payload-inertia", type=float, nargs=3, default=None, metavar=("IXX", "IYY", "IZZ"),
                   help="object's principal moments about its COM, payload-frame axes [kg·m²] (default 0)")
    p.add_argument("--payload-frame", default=None, metavar="FRAME", help="frame of the payload (default the tool frame)")
    p.add_argument("--allow-overload", action="store_true", help="accept a payload above the robot's rating")
    p.add_argument("--grid", default=None, metavar="N",
                   help="grid: number of intervals, or 'adaptive' (default: adaptive, the planner's own grid: 128 "
                        "intervals, more where the path needs them; docs/planner.md \"Grid\")")
    p.add_argument("--sd-start", type=float, default=0.0, metavar="V", help="path speed dθ/dt at the start (default 0)")
    p.add_argument("--sd-end", type=float, default=0.0, metavar="V", help="path speed dθ/dt at the end (default 0)")
    p.add_argument("--dt", type=float, default=1e-3, metavar="SECONDS", help="trajectory.csv sample time (default 0.001)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--no-report", action="store_true", help="skip report.html (the interactive report)")
    p.add_argument("--format", default="csv", metavar="LIST",
                   help="trajectory files, comma-separated: csv (trajectory.csv), ros2-yaml, ros2-json "
                        "(trajectory_msgs/JointTrajectory; docs/export.md) (default csv)")
    p.add_argument("--lock", action="append", default=[], metavar="JOINT=VALUE",
                   help="URDF robot: hold a joint at a position (rad or m); repeat for several")
    p.add_argument("--tool-frame", default=None, metavar="FRAME", help="URDF robot: the tool frame (a link name)")
    p.add_argument("--xacro-arg", action="append", default=[], metavar="NAME=VALUE",
                   help="xacro robot: an argument of the file (xacro's name:=value, e.g. ur_type=ur10e); repeat for "
                        "several")
    p.add_argument("--mimic", default=None, choices=("coupled", "independent"),
                   help="URDF robot: <mimic> joints follow their leader (coupled, the default: not in the waypoints) "
                        "or are joints of their own (independent)")
    p.add_argument("--controller", default=None, metavar="SPEC",
                   help="plan with a controller profile (docs/controller.md): key=value pairs such as "
                        "'torque_rate_max=1000,torque_headroom=0.9' (per joint a:b:c; 'default' for the defaults), "
                        "or a TOML file with a [controller] table")
    p.add_argument("--velocity-scaling", type=float, default=1.0, metavar="F",
                   help="scale every joint velocity limit by F in (0, 1] (MoveIt's max_velocity_scaling_factor)")
    p.add_argument("--acceleration-scaling", type=float, default=1.0, metavar="F",
                   help="scale every joint acceleration limit by F in (0, 1] (MoveIt's "
                        "max_acceleration_scaling_factor)")
    add_strict(p)
    return p


def _formats(text: str) -> list[str]:
    """--format: each entry once, none empty (they were dropped without a word: `csv,,ros2-json` may be a list a
    script left a hole in), the one that is wrong named."""
    from toppra_app.export import FORMATS
    items = [x.strip() for x in str(text).split(",")]
    bad = next(("an empty entry" for x in items if not x), None) or \
        next((f"unknown format '{x}'" for x in items if x not in FORMATS), None) or \
        next((f"'{x}' given twice" for k, x in enumerate(items) if x in items[:k]), None)
    if bad:
        raise InputError(f"--format: {bad} in '{text}'; expected a comma-separated list of {', '.join(FORMATS)}")
    return items


def _scaling(value: float, flag: str) -> float:
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise InputError(f"{flag}: expected a factor in (0, 1], got {value:g}")
    return value


# ---------------------------------------------------------------------------------- input
def _controller(spec):
    """--controller: None, key=value pairs or a TOML file with a [controller] table (or only its keys)."""
    if spec is None:
        return None
    from toppra_app.controller import ControllerProfile
    if spec.endswith(".toml") or os.path.isfile(spec):
        from toppra_app.textfile import read_toml
        doc = read_toml(spec, 1 << 16, "a controller profile (TOML)", spec)
        table = doc.get("controller", doc) if isinstance(doc, dict) else doc
        return ControllerProfile.from_mapping(table, where=f"--controller {spec}: controller")
    return ControllerProfile.parse(spec)


def _payload(args, rated=None):
    if args.payload_mass is None:
        if args.payload_com is not None or args.payload_inertia is not None or args.payload_frame is not None:
            raise InputError("--payload-mass: required with --payload-com / --payload-inertia / --payload-frame")
        return None
    from dynamics.checks import over_text
    from dynamics.payload import RigidBodyInertia
    if not (math.isfinite(args.payload_mass) and args.payload_mass >= 0):
        raise InputError(f"--payload-mass: must be a number >= 0 kg, got {args.payload_mass}")
    if rated is not None and args.payload_mass > rated and not args.allow_overload:   # (named as the option:
        raise InputError(f"--payload-mass: {over_text(args.payload_mass, rated)} kg exceeds the rated payload "
                         f"{rated:g} kg of the "
                         f"robot (--allow-overload to plan anyway)")                 # not allow_overload=True)
    from dynamics.payload import PayloadError
    com = np.zeros(3) if args.payload_com is None else np.array(args.payload_com)
    inertia = np.zeros((3, 3)) if args.payload_inertia is None else np.diag(args.payload_inertia)
    # each value checked on its own, so that the line names the option typed (it read "payload: principal
    # moments [1.0, 1.0, 3.0] violate ...", "payload: centre of mass must be finite numbers")
    for flag, c in (("--payload-inertia", np.zeros(3)), ("--payload-com", com)):
        try:
            body = RigidBodyInertia(args.payload_mass, c, inertia)
        except PayloadError as exc:
            raise InputError(f"{flag}: {str(exc).removeprefix('payload: ')}") from None
    return body


def _grid(text):
    if text is None or text == "adaptive":
        return None
    try:
        k = int(text)
    except ValueError:
        raise InputError(f"--grid: expected a number of intervals or 'adaptive', got '{text}'") from None
    if k < 2:
        raise InputError(f"--grid: need at least 2 intervals, got {k}")
    return k


# ---------------------------------------------------------------------------------- output
def _finite(obj):
    """JSON-safe copy: non-finite floats become None, numpy scalars/arrays plain Python."""
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _finite(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    return obj


def write_outputs(directory: str, plan, sample, source: str, plots: bool = True, formats=("csv",),
                  report: bool = True, options: dict | None = None) -> list[str]:
    """summary.json, the trajectory files (`toppra_app.export`) and the plots into an existing (temporary)
    directory; `options` (the command line's, e.g. the scaling factors) are recorded in summary.json."""
    from toppra_app.export import FILE_NAMES, write_trajectory
    from toppra_app.output import _version
    robot = plan.robot
    names = list(robot.joint_names)
    files = ["summary.json"]
    for fmt in formats:
        name = FILE_NAMES[fmt]
        with open(os.path.join(directory, name), "w", encoding="utf-8") as fh:
            write_trajectory(fh, fmt, sample, names)          # in chunks: never the whole text in memory
        files.append(name)
    if report:
        from toppra_app.html_report import plan_report
        with open(os.path.join(directory, "report.html"), "w", encoding="utf-8") as fh:
            fh.write(plan_report(plan, sample, f"{robot.name}: {os.path.basename(source)}"))
        files.append("report.html")
    if plots:
        from toppra_app.plots import plot_plan
        files += [os.path.basename(f) for f in plot_plan(plan, directory, sample=sample)]
    summary = plan.summary()
    summary.update(waypoints_file=os.path.abspath(source), sample_time=float(sample.t[1] - sample.t[0]) if len(sample) > 1 else None,
                   samples=len(sample), files=files, joint_names=names, tool="toppra-app", version=_version(),
                   waypoint_tolerance=None if plan.path.tolerance is None else plan.path.tolerance.tolist(),
                   knot_intervals=len(plan.path.knots) - 1,
                   units=dict(time="s", position="rad or m", velocity="rad/s or m/s",
                              acceleration="rad/s² or m/s²", effort="N·m or N", waypoint_tolerance="rad or m",
                              mass="kg", length="m", inertia="kg·m²"))      # (the payload's: palletize's have them)
    summary.update(options or {})          # (the command's own: `sample_time` as --dt gave it)
    with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(_finite(summary), fh, indent=2)
    return files


def _options(args, robot, locks: dict, xacro_args: dict, velocity_scaling: float, acceleration_scaling: float,
             tol, profile=None) -> dict:
    """What the command line asked for, for summary.json: the robot file, its options, the scaling factors, the
    waypoints' unit and --waypoint-tolerance as given, with its unit (the summary's `waypoint_tolerance` is
    per joint in the positions' units, rad or m)."""
    urdf = is_file_arg(args.robot)
    # sample_time: --dt, not the first step (a plan shorter than --dt has one step, its duration)
    return dict(robot_file=os.path.abspath(args.robot) if urdf else None, locked_joints=locks,
                xacro_args=xacro_args, sample_time=args.dt,
                tool_frame=robot.tool_frame, mimic=(args.mimic or "coupled") if urdf else None,
                velocity_scaling=velocity_scaling, acceleration_scaling=acceleration_scaling, degrees=bool(args.degrees),
                controller=None if profile is None else profile.as_dict(),    # as given (its qdd_max before the factor)
                waypoint_tolerance_given=None if tol is None else dict(value=tol, unit="deg" if args.degrees else
                                                                       "rad or m"),
                payload=None if args.payload_mass is None else dict(   # (payload_mass alone could not re-plan it)
                    mass=args.payload_mass, com=list(args.payload_com or (0.0, 0.0, 0.0)),
                    inertia=list(args.payload_inertia or (0.0, 0.0, 0.0)),
                    frame=args.payload_frame or robot.tool_frame, allow_overload=bool(args.allow_overload)))


def _not_joints(robot, locks: dict) -> dict:
    """{name: why} of the URDF joints that are no coordinate of `robot`: the --lock'ed ones and coupled mimic joints."""
    out = {name: f"locked (--lock {name}={value:g})" for name, value in locks.items()}
    if robot.coupling is not None:
        c = robot.coupling
        for b, name in enumerate(c.joint_names):
            leader = robot.joint_names[c.coordinate[b]]
            if name != leader:
                out[name] = f"a <mimic> joint following '{leader}' (--mimic independent makes it a joint of its own)"
    return out


def _within_range(filename: str, waypoints: np.ndarray, robot, degrees: bool) -> None:
    """One line naming the file, the waypoint and the joint for a waypoint outside a joint's position range
    (the path would leave it; the planner said so naming only the joint), with a hint where the file may be
    in degrees."""
    from toppra_app.planning.diagnose import outside_range
    lo, hi = np.asarray(robot.q_min, float), np.asarray(robot.q_max, float)
    out = outside_range(robot, waypoints)        # as the planner's check (a limit written to 8 digits is on it)
    if not out.any():
        return
    i, k = (int(x[0]) for x in np.nonzero(out))
    hint = " (in degrees? add --degrees)" if not degrees and np.abs(waypoints).max() > 2 * np.pi else ""
    from dynamics.mimic import coordinate_prismatic
    unit = "m" if coordinate_prismatic(robot)[k] else "rad"
    raise InputError(f"{filename}: waypoint {i + 1}: joint {robot.joint_names[k]} = {waypoints[i, k]:.9g} {unit} is "
                     f"outside its range [{lo[k]:.9g}, {hi[k]:.9g}]{hint}")


def run(args) -> int:
    from toppra_app.output import check_output
    from toppra_app.path import JointPath
    from toppra_app.planner import TimeOptimalPlanner
    from toppra_app.planning.options import number
    inputs = [args.waypoints] + [f for f in (args.robot, args.controller) if f is not None and os.path.isfile(f)]
    formats = _formats(args.format)
    from toppra_app.export import FILE_NAMES
    writes = ["summary.json"] + [FILE_NAMES[f] for f in formats] + ([] if args.no_report else ["report.html"])
    target = check_output(args.out, inputs, args.force, writes=writes)   # before any work: a bad --out fails at once
    vs, accs = _scaling(args.velocity_scaling, "--velocity-scaling"), _scaling(args.acceleration_scaling,
                                                                                 "--acceleration-scaling")
    locks = parse_locks(args.lock)
    xacro_args = parse_xacro_args(args.xacro_arg, args.robot)
    robot = load_robot_arg(args.robot, locks, args.tool_frame, args.mimic, xacro_args)
    profile = _controller(args.controller)
    robot = scaled_limits(robot, vs, accs, None if profile is None else profile.qdd_max)
    controller = scaled_controller(profile, accs)
    check_has_limits(robot, f"--robot {args.robot}")
    check_frame(robot, args.payload_frame)
    waypoints, s, _ = read_waypoints(args.waypoints, robot.n, joint_names=robot.joint_names,
                                     not_joints=_not_joints(robot, locks))
    if args.degrees:                        # revolute joints only: a prismatic joint's column is in metres
        from dynamics.mimic import from_degrees
        waypoints = from_degrees(robot, waypoints)
    _within_range(args.waypoints, waypoints, robot, args.degrees)
    tol = None if args.waypoint_tolerance is None else float(
        per_joint_positive(args.waypoint_tolerance, 1, "--waypoint-tolerance", allow_inf=False)[0])
    try:
        path = JointPath.from_waypoints(waypoints, s=s, tolerance=None if tol is None else
                                        (math.radians(tol) if args.degrees else tol))
    except InputError as exc:
        raise InputError(f"{args.waypoints}: {exc}") from None
    if not (math.isfinite(args.dt) and 1e-6 <= args.dt <= 10.0):
        raise InputError(f"--dt: must be a sample time from 1e-6 to 10 s, got {args.dt:g}")
    from toppra_app.controller import finer_sampling
    sd_start, sd_end = number(args.sd_start, "--sd-start"), number(args.sd_end, "--sd-end")
    import warnings
    note = finer_sampling(controller, args.dt)     # (a drive at 4 kHz given the 1 ms profile: 4× its rate, unsaid)
    if note:
        warnings.warn(note, stacklevel=2)
    if sd_end != 0 and {"ros2-yaml", "ros2-json"} & set(formats):
        warnings.warn(f"--sd-end {args.sd_end:g}: the last point's velocities are not zero, and ros2_control's "
                      f"joint_trajectory_controller refuses such a trajectory unless its parameter "
                      f"allow_nonzero_velocity_at_trajectory_end is true (false by default since Jazzy)", stacklevel=2)
    payload = _payload(args, robot.rated_payload)
    planner = TimeOptimalPlanner(robot, path, _grid(args.grid), payload_frame=args.payload_frame,
                                 allow_overload=args.allow_overload, controller=controller)
    interrupt.check()                       # a Ctrl-C swallowed while the inputs and modules loaded ends here
    try:
        plan = planner.plan(payload=payload, sd_start=sd_start, sd_end=sd_end)   # (SolverError: `cli`, code 3)
    except InfeasiblePathError as exc:      # a boundary speed no profile can have: named as the option typed
        flag = {"sd_start": "--sd-start", "sd_end": "--sd-end"}.get(exc.argument)
        if flag is None or not str(exc).startswith(f"{exc.argument} = "):
            raise
        raise InfeasiblePathError(flag + " " + str(exc)[len(exc.argument) + 3:], argument=exc.argument) from None
    interrupt.check()
    try:
        sample = plan.sample(args.dt)
    except InputError as exc:               # too many samples for the plan's duration: named as the option typed
        if not str(exc).startswith("dt: "):
            raise
        raise InputError("--dt" + str(exc)[2:]) from None
    out = str(target.path)
    with atomic_directory(out, inputs, args.force, target) as tmp:
        files = write_outputs(str(tmp), plan, sample, args.waypoints, plots=not args.no_plots, formats=formats,
                              report=not args.no_report,
                              options=_options(args, robot, locks, xacro_args, vs, accs, tol, profile))
    from toppra_app.verify import worst_text
    worst = worst_text(plan.worst)
    fitted = "" if tol is None else (f" (a path on {len(path.knots) - 1} knot intervals within {tol:g}"
                                     f"{' deg' if args.degrees else ''} of them)")
    print(f"{robot.name}: {len(waypoints)} waypoints{fitted}, duration {plan.duration:.4f} s, "
          f"worst value/limit: {worst}")
    if plan.rate_check:
        print("controller profile, on the controller's samples: " + ", ".join(
            f"{k} {100 * w.ratio:.2f} % of the limit" for k, w in plan.rate_check.items()))
    print(f"wrote {out}: {', '.join(files)}")
    return strict_exit("plan", failures_of([(f"the plan of {args.waypoints}", plan)]) if args.strict else [])
