"""`--robot` and its options at the command line (`toppra-app plan`): a built-in robot or a URDF / xacro file,
`--lock`, `--tool-frame`, `--mimic` and the scaling factors; each bad value is one line naming the option
(exit code 2)."""

from __future__ import annotations

import math
import os

import numpy as np

from toppra_app.errors import InputError

ROBOT_HELP = "built-in robot (iiwa7, panda, ur5e, puma560, planar4) or a URDF file (default iiwa7)"


def parse_locks(items) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            v = float(value)
        except ValueError:
            v = math.nan
        if not sep or not name.strip() or not math.isfinite(v):
            raise InputError(f"--lock: expected JOINT=VALUE with a finite number, got '{item}'")
        out[name.strip()] = v
    return out


def load_robot_arg(name: str, locks=None, tool_frame=None, mimic=None):
    import dynamics
    if name.lower().endswith((".urdf", ".xacro")) or os.path.sep in name:
        if not os.path.exists(name):
            why = "a dangling symbolic link or a symbolic-link loop" if os.path.lexists(name) else "no such file"
            raise InputError(f"--robot: {why} '{name}'")
        return dynamics.RobotModel.from_urdf(name, locked_joints=locks or None, tool_frame=tool_frame,
                                             mimic=mimic or "coupled")
    if locks or tool_frame or mimic:
        raise InputError(f"--lock / --tool-frame / --mimic: only for a URDF robot (--robot FILE.urdf), not the "
                         f"built-in '{name}'")
    loader = getattr(dynamics, "load_robot", None)
    if loader is None:
        from dynamics.robots import load_robot as loader
    return loader(name)


def scaled_limits(robot, velocity: float, acceleration: float):
    """The robot with every finite joint velocity / acceleration limit times the factor (MoveIt's scaling
    factors); a one-line warning for a factor that has no effect on a joint without such a limit (the built-in
    iiwa7 and ur5e and every URDF have no acceleration limits: URDF cannot give one)."""
    import warnings
    for factor, key, flag, word in ((velocity, "qd_max", "--velocity-scaling", "velocity"),
                                    (acceleration, "qdd_max", "--acceleration-scaling", "acceleration")):
        free = [name for name, v in zip(robot.joint_names, getattr(robot, key)) if not math.isfinite(v)]
        if factor == 1.0 or not free:
            continue
        what = f"has no effect: robot '{robot.name}' has no joint {word} limits to scale" if len(free) == robot.n else \
            f"does not apply to {', '.join(free[:6])}{' …' if len(free) > 6 else ''} of robot '{robot.name}': no " \
            f"{word} limit there"
        warnings.warn(f"{flag} {factor:g} {what} (the command line cannot add such limits; the library can: "
                      f"robot.with_limits({key}=...))", stacklevel=2)
    if velocity == 1.0 and acceleration == 1.0:
        return robot
    return robot.with_limits(qd_max=velocity * np.asarray(robot.qd_max), qdd_max=acceleration * np.asarray(robot.qdd_max))
