"""The planner's public face: `plan_time_optimal`, `TimeOptimalPlanner`, `TimeOptimalPlan`.

The work is done in `planning/` (grid, rows at stations, solve, check, refine) on the compiled problems of
`socp/`; this module keeps the most recent planners so that calling `plan_time_optimal` again with the
same robot and path objects but another payload or boundary speeds reuses the grid and the path data.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from .path import JointPath
from .planning.planner import DEFAULT_SUBSTEPS, DEFAULT_TOL, TimeOptimalPlanner
from .planning.result import TimeOptimalPlan
from .socp.problem import problem_stats
from .socp.solvers import SolverError

__all__ = ["plan_time_optimal", "TimeOptimalPlanner", "TimeOptimalPlan", "SolverError", "problem_stats",
           "DEFAULT_SUBSTEPS", "DEFAULT_TOL"]

MAX_KEPT_PLANNERS = 4

_PLANNERS: "OrderedDict[tuple, TimeOptimalPlanner]" = OrderedDict()
_PLANNERS_LOCK = threading.Lock()


def _grid_key(grid):
    if grid is None or isinstance(grid, str) or np.isscalar(grid):
        return repr(grid)
    try:
        if np.iscomplexobj(grid):
            return None                                  # (refused by the planner)
        g = np.asarray(grid, dtype=float)
    except (TypeError, ValueError):
        return None
    return (g.shape, g.tobytes())


def _option_key(value):
    """An option's value as a key, exact: an array's repr rounds to 8 digits and elides past 1000 entries, so
    options differing beyond that (torque_rate_max=800 and 800.000000001) were given one kept planner."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    return repr(value)


def plan_time_optimal(robot, path, grid=None, payload=None, sd_start: float = 0.0, sd_end: float = 0.0,
                      **options) -> TimeOptimalPlan:
    """Minimum-time speed profile along `path` (a `JointPath`, a scipy spline or an (m, n) waypoint array)
    for `robot` with `payload` merged (`robot.with_payload`), rest-to-rest unless sd_start/sd_end (θ̇ at
    the ends) are given. Options as for `TimeOptimalPlanner`.

    Raises `InfeasiblePathError` (where and which limit) when the path cannot be traversed, `InputError`
    for bad inputs, `SolverError` when every solver of the fallback chain failed numerically."""
    key = None
    gk = _grid_key(grid)
    if isinstance(path, JointPath) and gk is not None:
        key = (id(robot), id(path), gk, tuple(sorted((k, _option_key(v)) for k, v in options.items())))
    planner = None
    if key is not None:
        with _PLANNERS_LOCK:
            cached = _PLANNERS.get(key)
            if cached is not None and cached.drive_robot is robot and cached.path is path:
                planner = cached
                _PLANNERS.move_to_end(key)
    if planner is None:
        planner = TimeOptimalPlanner(robot, path, grid, **options)
        if key is not None:
            with _PLANNERS_LOCK:
                _PLANNERS[key] = planner
                while len(_PLANNERS) > MAX_KEPT_PLANNERS:
                    _PLANNERS.popitem(last=False)
    return planner.plan(payload=payload, sd_start=sd_start, sd_end=sd_end)
