"""The arguments of `dynamics.io.urdf.from_urdf`, checked before (`checked`) and after (`check_locked`) the
file is read: a one-line `ModelError` naming the argument, or the file and the joint, for anything else than
what the docstring promises — never a TypeError, and never a string taken apart into characters."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..checks import ModelError, file_name, floats, short_repr
from . import urdf_mimic

__all__ = ["checked", "locked_positions", "check_locked"]


def checked(path, locked_joints, name, tool_frame, strict, xacro_args, mimic) -> tuple[str, dict]:
    """The file name (a printable str) and {locked joint: position as given}; the other arguments' types."""
    path = file_name("from_urdf: path", path)
    if not isinstance(mimic, str) or mimic not in urdf_mimic.MODES:
        raise ModelError(f"from_urdf: mimic: expected 'coupled' or 'independent', got {short_repr(mimic)}")
    for arg, value in (("name", name), ("tool_frame", tool_frame)):
        if value is not None and not isinstance(value, str):
            raise ModelError(f"from_urdf: {arg}: expected a str, got {short_repr(value)}")
    if not isinstance(strict, (bool, np.bool_)):
        raise ModelError(f"from_urdf: strict: expected True or False, got {short_repr(strict)}")
    if xacro_args is not None and not isinstance(xacro_args, Mapping):
        raise ModelError(f"from_urdf: xacro_args: expected a dict {{name: value}}, got {short_repr(xacro_args)}")
    return path, locked_positions(locked_joints)


def locked_positions(locked_joints) -> dict:
    """{joint name: position} from a dict, or from a list of names (held at 0); one name alone is refused
    (it would be a list of its characters)."""
    what = "expected a dict {joint: position} or a list of joint names"
    if locked_joints is None:
        return {}
    if isinstance(locked_joints, (str, bytes)):
        raise ModelError(f"from_urdf: locked_joints: {what}, got the single name {short_repr(locked_joints)} "
                         f"(write [{short_repr(locked_joints)}] to lock it at 0)")
    if isinstance(locked_joints, Mapping):
        out = dict(locked_joints)
    elif isinstance(locked_joints, Iterable):
        out = {j: 0.0 for j in locked_joints}
    else:
        raise ModelError(f"from_urdf: locked_joints: {what}, got {short_repr(locked_joints)}")
    bad = [j for j in out if not isinstance(j, str)]
    if bad:
        raise ModelError(f"from_urdf: locked_joints: joint names must be str, got {short_repr(bad[0])}")
    return out


def check_locked(path: str, locked: dict, joints: dict) -> None:
    """Every locked joint exists and is held at a finite number within its limits (converted in place)."""
    for jname, value in locked.items():
        if jname not in joints:
            raise ModelError(f"{path}: locked joint '{jname}' not found (joints: {', '.join(joints) or 'none'})",
                             argument="locked_joints")
        v = _position(value)
        if v is None:
            raise ModelError(f"{path}: locked joint '{jname}': position {short_repr(value)} is not a number",
                             argument="locked_joints")
        if not np.isfinite(v):
            raise ModelError(f"{path}: locked joint '{jname}': position must be finite, got {value!r}",
                             argument="locked_joints")
        if joints[jname].get("type") == "fixed" and v != 0:    # (held nowhere: the value was silently dropped)
            raise ModelError(f"{path}: locked joint '{jname}' is fixed: it cannot be held at {v:g} (only a revolute, "
                             f"continuous or prismatic joint has a position)", argument="locked_joints")
        lo, hi = joints[jname].get("lower", -np.inf), joints[jname].get("upper", np.inf)
        slack = 1e-9 * max(1.0, hi - lo) if np.isfinite(hi - lo) else 0.0
        if lo < hi and not lo - slack <= v <= hi + slack:   # (lower = upper: a <limit> without them, read as 0)
            raise ModelError(f"{path}: locked joint '{jname}': position {v:g} is outside its range [{lo:g}, {hi:g}]",
                             argument="locked_joints")
        locked[jname] = v


def _position(value) -> float | None:
    """A locked joint's position as a float, or None for anything but one real number: `dynamics.checks.floats`
    (text — float() reads "1_0" as 10 —, bytes, True/False, complex numbers and ints beyond a double were taken
    for numbers or failed otherwise), of no dimension."""
    try:
        v = floats("locked joint", value, "a number")
    except ModelError:
        return None
    return float(v) if v.ndim == 0 else None
