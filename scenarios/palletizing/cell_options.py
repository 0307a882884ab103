"""The cell file's optional tables: [limits], [friction], [thermal], [collision], [controller]."""

from __future__ import annotations

import numpy as np

from toppra_app.controller import LARGEST_RATE, SMALLEST
from toppra_app.errors import InputError, short_repr

from .cell import Cell
from .reader import COLLABORATIVE_KEYS, SCHEMA, Reader, table


def read_collision(source, doc, cell: Cell) -> None:
    """[collision] enabled = true|false, link_radius = m (docs/palletizing.md, "Collisions")."""
    rk = Reader(source, table(source, doc, "collision", required=False), "collision")
    rk.check_keys(SCHEMA["collision"])
    enabled = rk.table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise rk.error("enabled", f"expected true or false, got {short_repr(enabled)}")
    cell.check_collisions = enabled
    cell.link_radius = rk.number("link_radius", lo=0.0, hi=1.0) if rk.has("link_radius") else None


MIN_TOOL_SPEED = 1e-3     # m/s: [limits] tool_speed_max below a millimetre a second is no work cell's
MAX_TOOL_SPEED = 10.0     # m/s: and above 10 m/s no arm's tool moves: tool_speed_max = 250 (meant as mm/s) was read
#                           as 250 m/s, a limit that never acts, and the cell planned at full speed without a word


def read_limits(source, doc, cell: Cell) -> None:
    """[limits] tool_speed_max = V (m/s), collaborative = { energy_max = E (J), contact_mass = m (kg) },
    torque_rate_max = N·m/s and jerk_max = rad/s³ (a number for every joint or a list; inf in a list: no limit on
    that joint, as in [controller] and the library — it was refused here)."""
    rl = Reader(source, table(source, doc, "limits", required=False), "limits")
    rl.check_keys(SCHEMA["limits"])
    if rl.has("tool_speed_max"):
        # (at 1e-12 m/s a move lasts ~1e12 s: the sampling then failed naming `dt`, not this key)
        cell.tool_speed_max = rl.number("tool_speed_max", lo=MIN_TOOL_SPEED)
        if cell.tool_speed_max > MAX_TOOL_SPEED:
            raise rl.error("tool_speed_max", f"{cell.tool_speed_max:g} m/s is faster than any arm's tool moves (at most "
                           f"{MAX_TOOL_SPEED:g}); the value is in m/s, not mm/s (250 mm/s is 0.25)")
    if rl.has("collaborative"):
        tbl = rl.table["collaborative"]
        if not isinstance(tbl, dict):
            raise rl.error("collaborative", f"expected a table such as {{ energy_max = 2.0 }}, got {short_repr(tbl)}")
        rc = Reader(source, tbl, "limits.collaborative")
        rc.check_keys(COLLABORATIVE_KEYS)
        cell.energy_max = rc.number("energy_max", positive=True)
        if rc.has("contact_mass"):
            cell.contact_mass = rc.number("contact_mass", positive=True)
    for key in ("torque_rate_max", "jerk_max"):
        if rl.has(key):
            setattr(cell, key, _rates(rl, key, cell.robot.n))


def _rates(reader: "Reader", key: str, n: int) -> np.ndarray:
    """A torque-rate or jerk limit: a number for every joint or a list of n, each within the controller profile's
    range (`controller.SMALLEST` to `LARGEST_RATE`) that plans them (`Cell.rates_profile`): 2e9 or 1e-7 passed here
    and the run stopped after reading the cell with "controller.torque_rate_max: expected at most 1e+09", a key
    the file does not have, without naming the file."""
    v = reader.table[key]
    arr = reader.vector(key, n, positive=True, inf=True) if isinstance(v, list) else \
        np.full(n, reader.number(key, positive=True))     # (inf in a list: that joint unlimited, as in [controller])
    if ((arr < SMALLEST) | (np.isfinite(arr) & (arr > LARGEST_RATE))).any():
        raise reader.error(key, f"values must be from {SMALLEST:g} to {LARGEST_RATE:g}, got {short_repr(v)}")
    return arr


def read_friction(source, doc, cell: Cell) -> None:
    """[friction] coulomb = [N·m per joint], viscous = [N·m·s/rad per joint]: the robot's joint friction
    (replacing the model's); every move is then also planned without it for comparison."""
    if "friction" not in doc:
        return
    rf = Reader(source, table(source, doc, "friction", required=False), "friction")
    rf.check_keys(SCHEMA["friction"])
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


def read_thermal(source, doc, cell: Cell) -> None:
    """[thermal] tau_rms = [N·m per joint, inf: not rated] or tau_rms_fraction = f (of τ_max; a joint without a
    torque limit is not rated); box = k (default 1): the RMS torque of the rated joints over box k's cycle
    (loaded move + return move + idle holding the pick posture) must stay under the rating
    (`toppra_app.objectives.thermal`, whose `ratings` checks the values: at least one joint rated)."""
    if "thermal" not in doc:
        return
    from toppra_app.objectives.thermal import ratings, refuse_rate_limits
    rt = Reader(source, table(source, doc, "thermal", required=False), "thermal")
    rt.check_keys(SCHEMA["thermal"])
    robot = cell.robot
    if rt.has("tau_rms") == rt.has("tau_rms_fraction"):
        raise rt.error(None, "give exactly one of tau_rms (N·m per joint) or tau_rms_fraction (of tau_max)")
    if rt.has("tau_rms"):
        try:
            cell.tau_rms = ratings(rt.table["tau_rms"], list(robot.joint_names))
        except InputError as exc:                      # "tau_rms: joint ...": named as the cell's other errors
            raise rt.error("tau_rms", str(exc).removeprefix("tau_rms: ")) from None
    else:
        f = rt.number("tau_rms_fraction", positive=True, hi=1.0)
        if not np.isfinite(robot.tau_max).any():
            raise rt.error("tau_rms_fraction", "the robot has no joint with a torque limit, so no joint would be "
                           "rated; give tau_rms")
        cell.tau_rms = f * np.asarray(robot.tau_max, dtype=float)        # inf (not rated) where τ_max is inf
    cell.thermal_box = int(rt.number("box", 1, lo=1, hi=len(cell.slots), integer=True)) - 1
    try:
        refuse_rate_limits(cell.planner_options())      # the options the cycle is planned with (`plan_pallet`)
    except InputError:
        raise rt.error(None, "the thermal cycle cannot keep the torque-rate / jerk limits of [limits] or [controller] "
                       "(its convex problem has no rate rows, so its moves would break them); leave one of them out"
                       ) from None


def read_controller(source, doc, cell: Cell) -> None:
    """[controller] torque_headroom, velocity_headroom, qdd_max, torque_rate_max, jerk_max, dt, smooth_ends,
    max_passes, time_law, coulomb_reversals: the moves are planned with this controller profile
    (`toppra_app.ControllerProfile`, docs/controller.md); the rate limits then belong here, not in [limits]."""
    if "controller" not in doc:
        return
    from toppra_app.controller import ControllerProfile
    rc = Reader(source, table(source, doc, "controller", required=False), "controller")
    rc.check_keys(SCHEMA["controller"])
    if cell.torque_rate_max is not None or cell.jerk_max is not None:
        raise rc.error(None, "give torque_rate_max / jerk_max in [controller], not also in [limits]")
    profile = ControllerProfile.from_mapping(dict(rc.table), where=f"{source}: controller")
    try:                  # per-joint counts, qdd_max too (it was checked only when the first move was planned)
        profile.limits_for(cell.robot)
        profile.apply(cell.robot)
    except InputError as exc:                            # "controller.KEY: ...": named as the cell's other errors
        raise InputError(f"{source}: {exc}") from None
    cell.controller = profile
