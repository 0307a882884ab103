"""`--robot` and its options at the command line (`toppra-app plan`): a built-in robot or a URDF / xacro file,
`--lock`, `--tool-frame`, `--mimic`, `--xacro-arg`, the scaling factors and `--payload-frame`; each bad value is one line
naming the option as typed (exit code 2)."""

from __future__ import annotations

import math
import os

import numpy as np

from toppra_app.errors import InputError

# the built-in robots (`dynamics.robots.BUILTIN_ROBOTS`; tests/test_plan_options.py keeps the two equal), named
# here so that --help imports no model
BUILTIN = ("iiwa7", "panda", "ur5e", "puma560", "planar4", "charmie")
ROBOT_HELP = ("built-in robot (iiwa7, panda, ur5e, planar4; puma560 and charmie have no limits to plan with) or a "
              ".urdf or .xacro file (default iiwa7)")


def parse_locks(items, bare: bool = False) -> dict:
    """{joint: position} of the --lock JOINT=VALUE items; VALUE a plain decimal number, as in the waypoint files
    (float() alone took "1_0" for 10); with `bare` (`draw`'s JOINT[=VALUE]) a JOINT alone is held at 0."""
    from toppra_app.waypoints import number
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        v = 0.0 if bare and not sep else number(value.strip())
        if not (sep or bare) or not name.strip() or v is None or not math.isfinite(v):
            raise InputError(f"--lock: expected JOINT{'[=VALUE]' if bare else '=VALUE'} with a finite number, "
                             f"got '{item}'")
        if name.strip() in out and out[name.strip()] != v:       # (the last one was kept, without a word)
            raise InputError(f"--lock: joint '{name.strip()}' given twice, at {out[name.strip()]:g} and {v:g}")
        out[name.strip()] = v
    return out


def _expected() -> str:
    return f"expected a built-in robot ({', '.join(BUILTIN)}) or a .urdf or .xacro file"


def is_file_arg(name: str) -> bool:
    """`--robot NAME` names a file (a URDF or xacro): it ends in .urdf or .xacro, or is a path."""
    return name.lower().endswith((".urdf", ".xacro")) or os.path.sep in name


def parse_xacro_args(items, robot: str) -> dict:
    """{name: value} of the --xacro-arg NAME=VALUE items (xacro's name:=value), for a .xacro robot only."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--xacro-arg: expected NAME=VALUE, got '{item}'")
        if name.strip() in out and out[name.strip()] != value:
            raise InputError(f"--xacro-arg: '{name.strip()}' given twice, as '{out[name.strip()]}' and '{value}'")
        out[name.strip()] = value
    if out and not robot.lower().endswith(".xacro"):
        raise InputError(f"--xacro-arg: only for a .xacro robot (--robot FILE.xacro), not '{robot}'")
    return out


def load_robot_arg(name: str, locks=None, tool_frame=None, mimic=None, xacro_args=None):
    """The robot `--robot NAME` names: a URDF or xacro file (`is_file_arg`), else a built-in robot; a
    directory, another file or an unknown name is one line naming --robot."""
    import dynamics
    from dynamics.model import ModelError
    if is_file_arg(name):
        if not os.path.exists(name):
            why = "a dangling symbolic link or a symbolic-link loop" if os.path.lexists(name) else "no such file"
            raise InputError(f"--robot: {why} '{name}'")
        if os.path.isdir(name):
            raise InputError(f"--robot {name}: is a directory; {_expected()}")
        return _from_urdf(name, locks, tool_frame, mimic, xacro_args)
    from dynamics.robots import load_robot
    try:
        robot = load_robot(name)
    except ModelError:
        why = "is a directory" if os.path.isdir(name) else "is not a .urdf or .xacro file" if os.path.exists(name) \
            else "no such built-in robot or file"
        raise InputError(f"--robot {name}: {why}; {_expected()}") from None
    if locks or tool_frame or mimic:
        raise InputError(f"--lock / --tool-frame / --mimic: only for a URDF robot (--robot FILE.urdf), not the "
                         f"built-in '{name}'")
    return robot


def _from_urdf(path: str, locks, tool_frame, mimic, xacro_args=None):
    """`dynamics.RobotModel.from_urdf`; a `--tool-frame` that names no link of the robot, or a `--lock` of a
    joint it does not have (or at a position it cannot hold), is one line naming the option."""
    import dynamics
    from dynamics.model import ModelError
    load = dynamics.RobotModel.from_urdf
    try:
        return load(path, locked_joints=locks or None, tool_frame=tool_frame, mimic=mimic or "coupled",
                    xacro_args=xacro_args or None)
    except ModelError as exc:
        if exc.argument in ("locked_joints", "xacro_args"):   # the loader's arguments behind --lock, --xacro-arg
            raise InputError(f"{'--lock' if exc.argument == 'locked_joints' else '--xacro-arg'}: {exc}") from None
        if exc.argument != "tool_frame":
            raise
        names, shown = _frames(load(path, locked_joints=locks or None, mimic=mimic or "coupled",
                                    xacro_args=xacro_args or None))
        raise InputError(f"--tool-frame {tool_frame}: no such link on a moving body of {path} (its links: "
                         f"{shown})") from None


def _frames(robot) -> tuple[list, str]:
    """The robot's links and frames, and the first twelve of them for a message."""
    names = list(robot.link_names) + list(robot.frame_names)
    return names, f"{', '.join(names[:12])}{' …' if len(names) > 12 else ''}"


def check_frame(robot, frame, flag: str = "--payload-frame") -> None:
    """A frame option names a link or frame of the robot; else one line naming the option and the frames."""
    if frame is None:
        return
    names, shown = _frames(robot)
    if frame not in names:
        raise InputError(f"{flag} {frame}: no such link or frame of robot '{robot.name}' (known: {shown})")


def check_has_limits(robot, flag: str = "--robot") -> None:
    """A robot with no joint torque, velocity or acceleration limit cannot be planned (its minimum time is 0);
    the planner says to call `robot.with_limits`, which the command line has no option for."""
    if not any(np.isfinite(getattr(robot, k)).any() for k in ("tau_max", "qd_max", "qdd_max")):
        raise InputError(f"{flag}: robot '{robot.name}' has no joint torque, velocity or acceleration limit, so nothing "
                         f"bounds the motion (its minimum time is 0); the command line cannot add limits: give a URDF "
                         f"whose joints have <limit effort=... velocity=...>, or plan it with the library after "
                         f"robot.with_limits(...)")


def scaled_limits(robot, velocity: float, acceleration: float, controller_qdd=None):
    """The robot with every finite joint velocity / acceleration limit times the factor (MoveIt's scaling
    factors); a one-line warning for a factor that has no effect on a joint without such a limit (the built-in
    iiwa7 and ur5e and every URDF have no acceleration limits: URDF cannot give one). `controller_qdd`: a controller
    profile's acceleration limits (`--controller qdd_max=...`), which the caller scales by the same factor
    (`scaled_controller`): a joint with one of them has a limit to scale."""
    import warnings

    from toppra_app.limits.rows import per_joint_positive
    extra = np.full(robot.n, np.inf) if controller_qdd is None else \
        per_joint_positive(controller_qdd, robot.n, "controller.qdd_max")      # (a wrong count: its error, no warning)
    for factor, key, flag, word in ((velocity, "qd_max", "--velocity-scaling", "velocity"),
                                    (acceleration, "qdd_max", "--acceleration-scaling", "acceleration")):
        own = np.asarray(getattr(robot, key), dtype=float)
        has = np.isfinite(own) | (np.isfinite(extra) if key == "qdd_max" else False)
        free = [name for name, h in zip(robot.joint_names, has) if not h]
        if factor == 1.0 or not free:
            continue
        what = f"has no effect: robot '{robot.name}' has no joint {word} limits to scale" if len(free) == robot.n else \
            f"does not apply to {', '.join(free[:6])}{' …' if len(free) > 6 else ''} of robot '{robot.name}': no " \
            f"{word} limit there"
        how = "the command line cannot add such limits; the library can: robot.with_limits(qd_max=...)" \
            if key == "qd_max" else "--controller qdd_max=... adds such limits, which the factor then scales"
        warnings.warn(f"{flag} {factor:g} {what} ({how})", stacklevel=2)
    if velocity == 1.0 and acceleration == 1.0:
        return robot
    return robot.with_limits(qd_max=velocity * np.asarray(robot.qd_max), qdd_max=acceleration * np.asarray(robot.qdd_max))


def scaled_controller(controller, acceleration: float):
    """A controller profile with its acceleration limits (`qdd_max`) times `--acceleration-scaling`: MoveIt's
    factor scales every acceleration limit the motion is planned with, and the profile's are such limits (the factor
    left them as they were, and warned that it had no effect)."""
    if controller is None or controller.qdd_max is None or acceleration == 1.0:
        return controller
    from dataclasses import replace
    qdd = np.multiply(acceleration, controller.qdd_max)
    try:
        return replace(controller, qdd_max=float(qdd) if qdd.ndim == 0 else tuple(qdd.tolist()))
    except InputError:                      # (it named controller.qdd_max with a value the user had not given)
        from toppra_app.controller import SMALLEST
        raise InputError(f"--acceleration-scaling {acceleration:g}: takes controller.qdd_max "
                         f"{np.min(controller.qdd_max):g} to {np.min(qdd):g}, below the smallest acceleration limit a "
                         f"profile takes ({SMALLEST:g})") from None
