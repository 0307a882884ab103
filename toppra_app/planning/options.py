"""Validation of the planner's options, one line naming the option and what is wrong, and the constants the
planner's steps share.

`whole`, `number` and `choice` check scalars; `controlled_robot` (with `rates_as_profile`), `joint_path`,
`limit_list`, `energy_terms` and `rate_limits` turn the robot, path and limit options of `TimeOptimalPlanner`
into what it plans with, in the order the planner checks them (the first bad option is the one reported).

The options of `TimeOptimalPlanner`: `grid` – "adaptive"/None (`grid.DEFAULT_INTERVALS` intervals placed by a
reachability profile), a number of intervals (placed the same way) or the grid points; `scheme` –
"interpolation" (limits at both ends and the middle of every interval, default) or "collocation"
(left ends); `substeps`, `tol` – the between-grid check; `max_rounds` – solves to repair it;
`gap_target` – refine the default grid (up to `max_splits` times) while `plan.gap_estimate` exceeds it
(default `planner.REFINE_ABOVE`, on dense waypoint paths `planner.DENSE_REFINE_ABOVE`);
`solver` – cvxpy solver name (fallbacks are automatic); `payload_frame`, `allow_overload` – see
`RobotModel.with_payload`; `limits` – replaces the joint limits; `tool_speed_max`,
`collision_energy_max`, `cartesian_frame`, `contact_mass` – Cartesian limits (`cartesian_limits`);
`prune` – pack only the rows that can bind (default True); `relocate` – move grid points to where the
optimum switches before the first solve (`placement`, default True; θ̈-constant plans and user grid sizes, not
θ̈-linear plans on the default grid, `prepare`); `time_law` – θ̈ per interval "constant",
"linear" (also the controller's; continuous with its rate rows) or "auto" (default, `options.linear_law`);
`time_objective` – "tangent" (default: minimise the duration's first-order expansion at a reference
profile, a linear program, `socp.problem` (1′)) or "cone" (the duration itself through time cones, (1)–(2));
dense waypoint paths (every station on) and the controller profile with θ̈ linear always use "cone": on
dense paths the tangent was no faster once they refine (and much slower with rate passes: ur5e/dense-0's
controller plan took 680 s); with the controller's continuous linear law the tangent left zero-speed
intervals next to rest.
Energy-weighted objectives, with torque-rate / jerk limits too, plan through `planning.sequential`; the
rates alone plan as a controller profile (`rates_as_profile`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from dynamics.model import RobotModel
from dynamics.payload import as_payload

from .. import checks
from ..errors import InputError
from ..errors import short_repr
from ..limits.joint import JointAccelerationLimit, JointTorqueLimit, JointVelocityLimit
from ..path import as_joint_path

DEFAULT_SUBSTEPS = 8               # sub-samples per interval of the between-grid check
DEFAULT_TOL = 1e-3                 # allowed relative over-limit between grid points
REFINE_MAX_INTERVALS = 1024        # refined only below this size (a 3000-waypoint path on 4096 intervals
                                   # would take 57 s and 1.1 GB to refine twice, instead of 10 s)
REFINE_SHARE = 0.95                # a refinement halves the intervals holding this share of the room


def snapshot(value, depth: int = 2):
    """`value` with its lists, tuples, dicts and arrays copied (`depth` levels: a controller dict's lists; the
    limits in a list are kept) and an iterator (a generator of limits) as a list, as the options are when a planner
    is made: its finer grids' planners (`finer`) take them again, and a caller's list changed later (reused for
    another planner) reached those alone."""
    if isinstance(value, Iterator):
        value = list(value)
    if isinstance(value, np.ndarray):
        return value.copy()
    if depth > 0 and type(value) in (list, tuple):
        return type(value)(snapshot(v, depth - 1) for v in value)
    if depth > 0 and type(value) is dict:
        return {k: snapshot(v, depth - 1) for k, v in value.items()}
    return value


def whole(value, name: str, lo: int, hi: int) -> int:
    """A whole number in [lo, hi] (bools, strings and non-integral floats refused: `checks.whole`)."""
    return checks.whole(value, name, lo, hi)


def number(value, name: str, lo: float = 0.0, hi: float = 1e150) -> float:
    """A finite real number in [lo, hi] (bools, strings, NaN and inf refused: `checks.real`)."""
    return checks.real(value, name, lo, hi)


def choice(value, name: str, choices) -> str:
    """One of the strings `choices`."""
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"{name}: expected one of {', '.join(choices)}, got {short_repr(value)}")
    return value


def flag(value, name: str) -> bool:
    """True or False (numpy's too); anything else refused: `bool()` took "no", None, 0.5 and a list for a choice and
    failed on an array with numpy's "truth value ... is ambiguous" (docs/planner.md: a bad option is named)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name}: expected True or False, got {short_repr(value)}")
    return bool(value)


def frame_option(robot, value, name: str):
    """None or the name of a frame of `robot` (`RobotModel.frame`): checked when the planner is made, not only when
    a payload is merged (a misspelt payload_frame was taken silently, and then named "frame 'x'" by the first plan
    with a payload)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{name}: expected a frame name (a link or frame of robot '{robot.name}'), got "
                         f"{short_repr(value)}")
    try:
        robot.frame(value)
    except ValueError as exc:
        raise InputError(f"{name}: {exc}") from None
    return value


def plan_arguments(payload, sd_start, sd_end, start, path) -> tuple:
    """`TimeOptimalPlanner.plan`'s arguments checked: (the payload as the `RigidBodyInertia` it stands for — a mass
    or a dict too: the plan keeps it, `plan.payload`, whose summary read `.mass` of a float, and a dict the caller
    changes later cannot change it —, sd_start, sd_end, `start_law`)."""
    return (None if payload is None else as_payload(payload), number(sd_start, "sd_start"), number(sd_end, "sd_end"),
            start_law(start, path))


def start_law(start, path):
    """None or a `TimeLaw` on the path's parameter interval (`TimeOptimalPlanner.plan`'s `start`): anything else
    failed with an AttributeError where viscous friction used it, and was ignored without."""
    from ..trajectory import TimeLaw
    if start is None:
        return None
    ends = (path.s_start, path.s_end)
    if not isinstance(start, TimeLaw) or not np.allclose(start.theta[[0, -1]], ends, rtol=1e-12, atol=0):
        raise InputError(f"start: expected None or the TimeLaw of a plan of this path (plan.law, θ from "
                         f"{ends[0]:g} to {ends[1]:g}), got {short_repr(start)}")
    return start


def controlled_robot(robot, controller, torque_rate_max, jerk_max, rate_dt, energy_weight, max_rate_iterations):
    """(profile, robot, torque_rate_max, jerk_max): the controller profile (docs/controller.md) or None, the
    robot the plan is for — `robot` itself, or with the profile's headroom and acceleration limits applied —
    and the rate options left for the sequential scheme (`rates_as_profile`)."""
    if not isinstance(robot, RobotModel):
        raise InputError(f"robot: expected a dynamics.RobotModel (e.g. dynamics.load_robot('iiwa7')), got "
                         f"{type(robot).__name__}")
    controller, torque_rate_max, jerk_max = rates_as_profile(robot, controller, torque_rate_max, jerk_max, rate_dt,
                                                             energy_weight, max_rate_iterations)
    if controller is None:
        return None, robot, torque_rate_max, jerk_max
    from ..controller import ControllerProfile
    profile = ControllerProfile.from_mapping(controller)
    profile.limits_for(robot)                                # per-joint counts checked here
    robot = profile.apply(robot)                             # headroom, acceleration limits
    if torque_rate_max is not None or jerk_max is not None:
        raise InputError("controller: give torque_rate_max / jerk_max in the controller profile, not as "
                         "planner options as well")
    return profile, robot, None, None


def rates_as_profile(robot, controller, torque_rate_max, jerk_max, rate_dt, energy_weight, max_rate_iterations):
    """(controller, torque_rate_max, jerk_max): the planner options `torque_rate_max` / `jerk_max` given without
    a controller profile become one with headroom 1 — the same limits on the samples every `rate_dt`, the steps
    from and to rest included (docs/planner_limits.md) — and leave the options None. They stay options for
    the sequential scheme (`planning.sequential`) with an energy term, which the profile does not combine with
    rates, or with a `rate_dt` or limit outside the profile's ranges (a period over 1 s, a rate below 1e-6 or above
    `controller.LARGEST_RATE`, 1e9, at which the profile's solves turn inaccurate or fail).
    On the Panda's benchmark paths the sequential scheme took 0.3–2.2 s (straight at 1000 N·m/s: one
    'inaccurate' solve, 1.0009 × the rate), the profile 0.06–0.11 s, within the limits, durations −0.04 …
    +0.7 %. `max_rate_iterations` caps the profile's passes (at most its default, 4). Bad values are named here
    as the options (`rate_limits`)."""
    from ..controller import ControllerProfile
    unchanged = controller, torque_rate_max, jerk_max
    if controller is not None or (torque_rate_max is None and jerk_max is None):
        return unchanged
    rates = rate_limits(robot, torque_rate_max, jerk_max, rate_dt)
    passes = min(whole(max_rate_iterations, "max_rate_iterations", 1, 1000), ControllerProfile.max_passes)
    if not checks.is_real(energy_weight) or energy_weight != 0:
        return unchanged                                    # (a bad energy_weight is named by `energy_terms`)
    as_limit = lambda kind: tuple(rates.limits[kind].tolist()) if kind in rates.limits else None   # noqa: E731
    try:
        return ControllerProfile(torque_headroom=1.0, velocity_headroom=1.0, dt=rates.dt_c, max_passes=passes,
                                 torque_rate_max=as_limit("torque_rate"), jerk_max=as_limit("jerk")), None, None
    except InputError:
        return unchanged


def joint_path(path, robot):
    """`path` as a `JointPath` (`path.as_joint_path`), one value per joint of `robot`."""
    path = as_joint_path(path)
    if path.dof != robot.n:
        raise InputError(f"waypoints: path has {path.dof} joint values per waypoint but robot '{robot.name}' "
                         f"has {robot.n} joints")
    return path


def limit_list(robot, options: dict) -> list:
    """The planner's `options`' (as `snapshot`) `limits` (default: the joint torque, velocity and acceleration
    limits) and the Cartesian ones (`limits.cartesian.cartesian_limits`); refused when nothing bounds the path speed."""
    limits, tool_speed_max, collision_energy_max, cartesian_frame, contact_mass = (options[k] for k in (
        "limits", "tool_speed_max", "collision_energy_max", "cartesian_frame", "contact_mass"))
    from ..limits.rows import Limit
    # (a number, a string or a list of other things failed with a TypeError or AttributeError)
    if limits is not None and (isinstance(limits, (str, bytes, dict)) or not np.iterable(limits)
                               or not all(isinstance(lim, Limit) for lim in limits)):
        raise InputError(f"limits: expected a list of limits (e.g. toppra_app.limits.default_limits() + "
                         f"[CartesianSpeedLimit(1.0)]), got {short_repr(limits)}")
    out = list(limits) if limits is not None else [JointTorqueLimit(), JointVelocityLimit(), JointAccelerationLimit()]
    from ..limits.cartesian import cartesian_limits
    out += cartesian_limits(robot, tool_speed_max, collision_energy_max, cartesian_frame, contact_mass)
    if not out:                                        # (failed in the first plan: "ValueError: no limit rows")
        raise InputError("limits: an empty list, and no tool_speed_max or collision_energy_max: nothing bounds the "
                         "path speed and the minimum time is 0")
    fields = {JointTorqueLimit: "tau_max", JointVelocityLimit: "qd_max", JointAccelerationLimit: "qdd_max"}
    if all(type(lim) in fields and not np.isfinite(getattr(robot, fields[type(lim)])).any() for lim in out):
        if limits is None:
            raise InputError(f"robot '{robot.name}' has no joint torque, velocity or acceleration limit (all inf), so "
                             f"nothing bounds the path speed and the minimum time is 0; set limits with "
                             f"robot.with_limits(tau_max=..., qd_max=..., qdd_max=...)")
        # (JointAccelerationLimit() alone on the iiwa 7, which has none: "ValueError: no limit rows" in the plan)
        raise InputError(f"limits: robot '{robot.name}' has no {' or '.join(fields[type(lim)] for lim in out)} (all "
                         f"inf), so these limits bound nothing and the minimum time is 0; set them with "
                         f"robot.with_limits(...) or give other limits")
    return out


def energy_terms(robot, energy_weight, energy_R, controller) -> tuple[float, np.ndarray]:
    """The time–energy objective's (weight, R) (`objectives.energy.energy_weights`); none with a controller."""
    from ..objectives.energy import energy_weights
    weight, R = energy_weights(robot, energy_weight, energy_R)
    R.flags.writeable = False                      # every plan's `energy_R` is the planner's: read-only, as a robot's
    if controller is not None and weight > 0:
        raise InputError("controller: the controller profile plans for time only; it cannot be combined with "
                         "energy_weight")
    return weight, R


def rate_limits(robot, torque_rate_max, jerk_max, rate_dt):
    """The torque-rate / jerk limits (`limits.rates.RateLimits`), or None without either; `rate_dt` is checked either
    way (rate_dt=-1 or "x" was taken silently without rate limits)."""
    from ..limits.rates import RateLimits
    checks.real(rate_dt, "rate_dt", 0.0, None, bounds="(]", unit=" of seconds")
    return RateLimits(robot, torque_rate_max, jerk_max, rate_dt) if (
        torque_rate_max is not None or jerk_max is not None) else None


# the controller's linear law (θ̈ continuous, for its rate rows) on at most this many intervals: continuity
# leaves a zigzag of θ̈ that only the sag inside the intervals prices, weakly, and Clarabel's solves turned
# inaccurate or failed from 512 intervals on (32-case suite: none at 400, 1 at 512, 2 at 640, 9 at 800)
LINEAR_MAX_INTERVALS = 400


def linear_law(time_law, controller, energy_weight: float, rates, intervals: int | None = None,
               may_choose: bool = True) -> bool:
    """Whether plans have θ̈ linear per interval: the planner's `time_law` option or the controller
    profile's; not with the time–energy objective or the sequential rate limits (`planning.sequential`).
    "auto" (the default) is "linear" for plans that estimate their gap (`estimates_gap`) with the
    interpolation scheme and relocated grid points (`may_choose`, the pipeline it was measured on) and
    "constant" elsewhere (dense waypoint paths, where every station is on, plan constant-law too:
    `TimeOptimalPlanner.plan`). The controller's rate rows need θ̈ continuous, which is not offered on a
    grid the user gives of more than `LINEAR_MAX_INTERVALS` (`intervals`)."""
    law = choice(time_law, "time_law", ("auto", "constant", "linear"))
    rated = controller is not None and controller.has_rates
    linear = law == "linear" or (controller is not None and controller.time_law == "linear")
    if linear and (energy_weight > 0 or rates is not None):
        raise InputError("time_law: 'linear' plans for time with the controller profile's rates; it cannot be "
                         "combined with energy_weight (nor with torque_rate_max / jerk_max and rate_dt over 1 s)")
    if linear and rated and intervals is not None and intervals > LINEAR_MAX_INTERVALS:
        raise InputError(f"time_law: with the controller's rate limits 'linear' plans on grids of up to "
                         f"{LINEAR_MAX_INTERVALS} intervals (its solves turn inaccurate on finer ones), got grid "
                         f"with {intervals}; use time_law='constant'")
    return linear or (law == "auto" and may_choose and estimates_gap(energy_weight, rates, controller))


def estimates_gap(energy_weight: float, rates, controller) -> bool:
    """Whether plans estimate their gap to the optimum (and may refine the grid for it): not with the
    time–energy objective, rate limits or a controller profile with rates."""
    return energy_weight == 0 and rates is None and not (controller is not None and controller.has_rates)
