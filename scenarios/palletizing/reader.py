"""The cell file's schema and a reader of its tables: every value checked, errors naming the file,
the table and the key."""

from __future__ import annotations

import math

import numpy as np

from dynamics.model import ModelError
from dynamics.payload import RigidBodyInertia
from toppra_app.errors import InputError, short_repr



SCHEMA = {
    "cell": {"name", "robot", "urdf", "locked_joints", "tool_frame", "mimic", "rated_payload", "package_paths", "flange",
             "preferred_posture_deg"},
    "gripper": {"mass", "com", "size", "inertia", "tcp_offset"},
    "pick": {"position", "yaw_deg"},
    "pallet": {"position", "size", "yaw_deg"},
    "pattern": {"layers", "rows", "columns", "gap", "alternate", "boxes", "box"},
    "motion": {"approach_height", "clearance", "blend_radius", "transfer", "samples", "grid", "gap_target", "rot_weight",
               "energy_weight"},
    "limits": {"tool_speed_max", "collaborative", "torque_rate_max", "jerk_max"},   # optional extra limits
    "friction": {"coulomb", "viscous"},                 # optional joint friction of the robot model
    "thermal": {"tau_rms", "tau_rms_fraction", "box"},   # optional RMS-torque rating over one box's cycle
    "controller": {"torque_headroom", "velocity_headroom", "qdd_max", "torque_rate_max", "jerk_max", "dt",
                   "smooth_ends", "max_passes", "time_law", "coulomb_reversals"},   # optional controller profile
    "collision": {"enabled", "link_radius"},           # optional: collision checking of every move
    "boxes": None,        # a table of box types
}
BOX_KEYS = {"size", "mass", "com_offset", "inertia"}
COLLABORATIVE_KEYS = {"energy_max", "contact_mass"}
MAX_LENGTH = 100.0    # m: a position or size in a cell file (a work cell is metres across; at 1e300 m the IK's
#                       squares overflowed: "Singular matrix" with no file or field, "closest nan mm", 600-digit poses)


class Reader:
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
        if isinstance(v, int) and abs(v) > 1e300 or not math.isfinite(v):    # (10**400: math.isfinite's OverflowError)
            raise self.error(key, f"must be a finite number, got {short_repr(v)}")
        if integer and (not isinstance(v, int) and not float(v).is_integer()):
            raise self.error(key, f"expected an integer, got {v}")
        if positive and not v > 0:
            raise self.error(key, f"must be > 0, got {v}")
        if lo is not None and v < lo:
            raise self.error(key, f"must be >= {lo}, got {v}")
        if hi is not None and v > hi:
            raise self.error(key, f"must be <= {hi}, got {v}")
        return int(v) if integer else float(v)

    def vector(self, key, n, default=None, *, positive=False, bound=None, inf=False):
        """A list of n finite numbers (> 0 with ``positive``; within ±``bound`` m when given; ``inf``: +inf too)."""
        if key not in self.table:
            if default is None:
                raise self.error(key, "required")
            return np.array(default, dtype=float)
        v = self.table[key]
        if not isinstance(v, list) or len(v) != n or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v):
            raise self.error(key, f"expected a list of {n} numbers, got {short_repr(v)}")
        arr = np.array(v, dtype=float)
        if not (np.isfinite(arr) | (inf & (arr == np.inf))).all():
            raise self.error(key, f"values must be finite numbers{' or inf' if inf else ''}, got {v}")
        if positive and not (arr > 0).all():
            raise self.error(key, f"values must be > 0, got {v}")
        if bound is not None and (np.abs(arr) > bound).any():
            raise self.error(key, f"values must be within ±{bound:g} m, got {short_repr(v)}")
        return arr

    def string(self, key, default=None):
        if key not in self.table:
            if default is None:
                raise self.error(key, "required")
            return default
        v = self.table[key]
        if not isinstance(v, str) or not v:
            raise self.error(key, f"expected a non-empty string, got {short_repr(v)}")
        if not v.isprintable():     # a newline or an escape code broke the one-line messages and the terminal
            raise self.error(key, f"expected one line of printable text, got {short_repr(v)}")
        return v

    def inertia(self, key, mass, default):
        """3 principal moments (along the body axes) or a 3×3 matrix, about the COM."""
        if key not in self.table:
            return default
        v = self.table[key]
        rows = v if isinstance(v, list) and v and all(isinstance(x, list) for x in v) else [v]
        if not all(isinstance(row, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in row)
                   for row in rows):      # numpy reads "1" and true as numbers: a wrong type was taken silently
            raise self.error(key, f"expected 3 numbers or a 3×3 matrix, got {short_repr(v)}")
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


def table(source, doc, key, required=True) -> dict:
    if key not in doc:
        if required:
            raise InputError(f"{source}: [{key}]: required table is missing")
        return {}
    if not isinstance(doc[key], dict):
        raise InputError(f"{source}: {key}: expected a table")
    return doc[key]
