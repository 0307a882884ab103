"""The controller profile: what a drive needs from a plan beyond the robot's rated limits
(docs/controller.md).

* headroom on torque and velocity — the plan uses `torque_headroom` × τ_max and `velocity_headroom` ×
  q̇_max, leaving the rest to the feedback controller;
* acceleration limits (`qdd_max`, the smaller of it and the robot's);
* torque-rate and/or joint-jerk limits as a controller sampling every `dt` sees them (finite differences
  of the 1 ms samples), planned in one compiled SOCP structure (`planning.controller`);
* smooth starts and stops: the step of q̈ and τ from rest into the first sample and back to rest after
  the last is limited like every other step (`smooth_ends`).

Used as `TimeOptimalPlanner(robot, path, controller=ControllerProfile(...))`, `plan_time_optimal(...,
controller=...)`, a `[controller]` table of a cell file or `toppra-app plan --controller ...`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from .errors import InputError, short_repr

FIELDS = ("torque_headroom", "velocity_headroom", "qdd_max", "torque_rate_max", "jerk_max", "dt", "smooth_ends",
          "max_passes", "time_law", "coulomb_reversals")
TIME_LAWS = ("constant", "linear")
REVERSALS = ("refuse", "exempt")


def _fraction(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"controller.{name}: expected a number in (0, 1], got {short_repr(value)}")
    try:
        v = float(value)
    except OverflowError:                  # (an integer of 400 digits: a traceback)
        v = math.inf
    if not (math.isfinite(v) and 0.0 < v <= 1.0):
        raise InputError(f"controller.{name}: must be in (0, 1] (a share of the rated limit), got {short_repr(value)}")
    return v


SMALLEST = 1e-6                    # the smallest acceleration, torque-rate or jerk limit a profile takes
LARGEST_RATE = 1e9                 # the largest finite torque-rate or jerk limit: from ~1e12 its rows, scaled by it,
                                   # left the solve 'optimal_inaccurate' (iiwa7 straight, jerk, θ̈ linear), at 1e20
                                   # Clarabel failed (SCS ran out of time, 3.6 s) and at 1e200 cvxpy's 'Problem data
                                   # contains NaN or Inf' leaked; inf (no limit) is the value for "no limit"


def _per_joint(value, name: str):
    """None, a positive number or a list of positive numbers (inf: no limit for that joint; inf for every joint
    is None); the count is checked against the robot in `limits_for`."""
    if value is None:
        return None
    if isinstance(value, (bool, str, np.bool_)):
        raise InputError(f"controller.{name}: expected a positive number or one per joint, got {short_repr(value)}")
    try:
        v = np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError):      # (OverflowError: an integer of 400 digits, a traceback)
        raise InputError(f"controller.{name}: expected a positive number or one per joint, got "
                         f"{short_repr(value)}") from None
    if v.ndim > 1 or v.size == 0 or np.isnan(v).any() or (v <= 0).any():
        raise InputError(f"controller.{name}: expected a positive number or one positive number per joint "
                         f"(inf = no limit), got {short_repr(value)}")
    if (v < SMALLEST).any():               # (1e-300 planned a motion 1.6e305× over it, printing 300-digit numbers)
        raise InputError(f"controller.{name}: expected at least {SMALLEST:g} (or inf = no limit), got "
                         f"{short_repr(value)}")
    if name != "qdd_max" and (np.isfinite(v) & (v > LARGEST_RATE)).any():
        raise InputError(f"controller.{name}: expected at most {LARGEST_RATE:g} (or inf = no limit), got "
                         f"{short_repr(value)}")
    if np.isinf(v).all():                  # no limit on any joint: none at all (rate rows of no joint failed)
        return None
    return float(v) if v.ndim == 0 else tuple(v.tolist())


def finer_sampling(profile, dt: float, option: str = "--dt") -> str | None:
    """One warning line where trajectory samples every `dt` are finer than a rate-limited profile's `dt`, else None.
    The rate limits hold on the controller's samples t = k·profile.dt: a step the plan takes within one of its
    periods — from rest into the first sample, and with θ̈ constant at every grid point (docs/controller.md, (C1))
    — is a step on finer samples too, so their finite differences reach profile.dt / dt × the limit."""
    if profile is None or not profile.has_rates or not dt < profile.dt * (1.0 - 1e-9):
        return None
    kinds = " and ".join(k for k, v in (("torque-rate", profile.torque_rate_max), ("jerk", profile.jerk_max))
                         if v is not None)
    return (f"{option} {dt:g} s is finer than the controller profile's dt {profile.dt:g} s: its {kinds} limits "
            f"hold on samples every {profile.dt:g} s, and on these samples the step from rest into the first one "
            f"is up to {profile.dt / dt:.3g}× the limit; for a drive sampling every {dt:g} s give the profile "
            f"dt={dt:g}")


@dataclass(frozen=True)
class ControllerProfile:
    """Headroom factors (0, 1] on τ_max and q̇_max, acceleration limits (rad/s², m/s²), torque-rate limits
    (N·m/s), jerk limits (rad/s³) — each None, a number or one per joint — the controller's sample period
    `dt` (s), `smooth_ends` (limit the steps from and to rest), `max_passes` (solves of the rate rows
    around the last speed profile, 1–20) and `time_law`: "constant" (θ̈ constant per grid interval) or
    "linear" (θ̈ linear and continuous: no steps of q̈ and τ at grid points, so rate-limited plans do not
    creep — shorter motions for a longer planning time, docs/controller.md). `coulomb_reversals`: where a joint
    reverses, its ideal Coulomb friction steps by 2 F_c; "refuse" (default) refuses a path on which that step
    exceeds one sample of torque rate, "exempt" leaves the step out of the sampled torque rate (real friction
    passes through it in its pre-sliding regime; the feed-forward torque still holds it: docs/controller.md)."""
    torque_headroom: float = 0.9
    velocity_headroom: float = 0.95
    qdd_max: object = None
    torque_rate_max: object = None
    jerk_max: object = None
    dt: float = 1e-3
    smooth_ends: bool = True
    max_passes: int = 4
    time_law: str = "constant"
    coulomb_reversals: str = "refuse"

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)   # noqa: E731
        set_("torque_headroom", _fraction(self.torque_headroom, "torque_headroom"))
        set_("velocity_headroom", _fraction(self.velocity_headroom, "velocity_headroom"))
        for name in ("qdd_max", "torque_rate_max", "jerk_max"):
            set_(name, _per_joint(getattr(self, name), name))
        dt = self.dt
        if isinstance(dt, (bool, str, np.bool_)) or not isinstance(dt, (int, float, np.integer, np.floating)) \
                or not (1e-6 <= dt <= 1.0):    # (compared as given: float() of an integer of 400 digits overflowed)
            raise InputError(f"controller.dt: expected a sample period from 1e-6 to 1 s, got {short_repr(dt)}")
        set_("dt", float(dt))
        if not isinstance(self.smooth_ends, (bool, np.bool_)):
            raise InputError(f"controller.smooth_ends: expected true or false, got {short_repr(self.smooth_ends)}")
        set_("smooth_ends", bool(self.smooth_ends))
        mp = self.max_passes
        if isinstance(mp, (bool, np.bool_)) or not isinstance(mp, (int, np.integer, float, np.floating)) \
                or not 1 <= mp <= 20 or mp != int(mp):   # (range first: int() of nan or inf raised, unnamed)
            raise InputError(f"controller.max_passes: expected a whole number from 1 to 20, got {short_repr(mp)}")
        set_("max_passes", int(mp))
        if not isinstance(self.time_law, str) or self.time_law not in TIME_LAWS:
            raise InputError(f"controller.time_law: expected one of {', '.join(TIME_LAWS)}, got "
                             f"{short_repr(self.time_law)}")
        if not isinstance(self.coulomb_reversals, str) or self.coulomb_reversals not in REVERSALS:
            raise InputError(f"controller.coulomb_reversals: expected one of {', '.join(REVERSALS)}, got "
                             f"{short_repr(self.coulomb_reversals)}")

    @property
    def has_rates(self) -> bool:
        return self.torque_rate_max is not None or self.jerk_max is not None

    def limits_for(self, robot) -> dict:
        """{"torque_rate": (n,), "jerk": (n,)} of the given limits, checked against the robot's joint count."""
        from .limits.rows import per_joint_positive
        out = {}
        for kind, name in (("torque_rate", "torque_rate_max"), ("jerk", "jerk_max")):
            value = getattr(self, name)
            if value is not None:
                out[kind] = per_joint_positive(value, robot.n, f"controller.{name}")
        return out

    def apply(self, robot):
        """The robot the plan is made for: τ_max and q̇_max times the headroom, q̈_max the smaller of the
        robot's and the profile's (`RobotModel.with_limits`)."""
        from .limits.rows import per_joint_positive
        qdd = robot.qdd_max
        if self.qdd_max is not None:
            qdd = np.minimum(qdd, per_joint_positive(self.qdd_max, robot.n, "controller.qdd_max"))
        return robot.with_limits(tau_max=self.torque_headroom * np.asarray(robot.tau_max, float),
                                 qd_max=self.velocity_headroom * np.asarray(robot.qd_max, float), qdd_max=qdd)

    # ------------------------------------------------------------------ from text
    @classmethod
    def from_mapping(cls, table, where: str = "controller") -> "ControllerProfile":
        """From a dict (a TOML table): unknown keys are refused, naming them."""
        if isinstance(table, ControllerProfile):
            return table
        if not isinstance(table, dict):
            raise InputError(f"{where}: expected a table of {', '.join(FIELDS)}, got {short_repr(table)}")
        unknown = sorted(set(table) - set(FIELDS))
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})")
        try:
            return cls(**table)
        except InputError as exc:
            raise InputError(str(exc).replace("controller.", f"{where}.", 1) if where != "controller"
                             else str(exc)) from None

    @classmethod
    def parse(cls, text: str) -> "ControllerProfile":
        """From `key=value,key=value` (per-joint values separated by ':', e.g. `jerk_max=7500:3750:5000`;
        `smooth_ends=false`), as `toppra-app plan --controller` takes it; `default` alone = all defaults."""
        if not isinstance(text, str):
            raise InputError(f"--controller: expected key=value pairs, got {short_repr(text)}")
        if not text.replace(",", "").strip():          # (an unset shell variable: not the defaults by accident)
            raise InputError(f"--controller: empty; give key=value pairs, 'default', or a TOML file (keys: "
                             f"{', '.join(FIELDS)})")
        table = {}
        for item in (p.strip() for p in text.split(",")):
            if not item or item == "default":
                continue
            key, eq, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not eq or not key or not value:
                raise InputError(f"--controller: expected key=value, got {item!r} (keys: {', '.join(FIELDS)})")
            if key in table:
                raise InputError(f"--controller: {key} given twice")
            if key in ("time_law", "coulomb_reversals"):
                table[key] = value
                continue
            if key == "smooth_ends":
                if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise InputError(f"--controller: smooth_ends: expected true or false, got {value!r}")
                table[key] = value.lower() in ("true", "1", "yes")
                continue
            try:
                nums = [float(v) for v in value.split(":")]
            except ValueError:
                raise InputError(f"--controller: {key}: expected a number (per joint: a:b:c), got {value!r}") from None
            if key == "max_passes" and len(nums) == 1 and math.isfinite(nums[0]) and nums[0] == int(nums[0]):
                table[key] = int(nums[0])
            else:
                table[key] = nums[0] if len(nums) == 1 else nums
        return cls.from_mapping(table, where="--controller")

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}
