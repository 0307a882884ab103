"""Planning again on a finer grid: where repairs stall, or for the gap estimate (`refine.for_the_gap`; on a
dense path at its first solution already, `split_early`).

The planner halves the intervals marked bad (`grid.split_grid`: at the spline's knots inside them where
there are any) and plans on that grid with a planner of the same options and one split fewer. That finer
planner is kept on the coarse one (the last two, by the bad intervals), so a re-plan on the same path —
another payload, end speed — that needs the same split reuses its grid, stations and compiled problem.
"""

from __future__ import annotations

from ..verify import gap_estimate
from . import refine
from .grid import split_grid
from .options import LINEAR_MAX_INTERVALS
from .result import with_earlier_work

KEPT = 2                           # finer planners kept per planner


def plan_finer(planner, bad, record: dict, payload, sd_start: float, sd_end: float, refinements: list,
               iterations: int, timings: dict, t_all: float):
    """The plan of `planner`'s path on its grid with the intervals `bad` (N,) bool halved, the work so far
    (`refinements` and this split's `record`, solver `iterations`, `timings` since `t_all`) counted in."""
    with planner._lock:
        finer = planner._finer.get(bad.tobytes())
        if finer is None:                              # the robot as given: the options apply the profile
            grid = split_grid(planner.theta, bad, planner.path.knots)
            linear = planner.linear and (grid.size <= LINEAR_MAX_INTERVALS + 1 or not planner.rated)
            finer = type(planner)(planner.drive_robot, planner.path, grid, **{
                **planner._options, "max_splits": planner.max_splits - 1,
                "time_law": "linear" if linear else "constant", "gap_target": planner.gap_target})
            finer.auto_grid = True
            if len(planner._finer) >= KEPT:
                planner._finer.pop(next(iter(planner._finer)))
            planner._finer[bad.tobytes()] = finer
    plan = finer.plan(payload=payload, sd_start=sd_start, sd_end=sd_end)
    return with_earlier_work(plan, refinements + [record], iterations, timings, t_all)


def split_early(planner, robot, law, beta, allowed: float, factor: float, payload, sd_start: float, sd_end: float,
                refinements: list, iterations: int, timings: dict, t_all: float):
    """The first solution `law` (grid values `beta`) of a plan on a dense path, checked between grid points
    (`refine.checked`, `allowed` over a limit): (None, the plan on a split grid, `plan_finer`) where its gap
    estimate is above `factor` × the planner's `gap_target` — certifying the solution, re-linearising viscous
    friction and repairs would not bring it below — else ((`beta`, check, over, points over), None), the
    check the plan reuses if this solution is its last."""
    check, over, n_over = refine.checked(robot, planner.sub, law, planner.limits, planner.all_stations, allowed)
    estimate = gap_estimate(check, law)
    if estimate is None or estimate <= factor * planner.gap_target:
        return (beta, check, over, n_over), None
    bad, record = refine.for_the_gap(check, law, estimate, refine.over_intervals(over, law.theta.size - 1))
    return None, plan_finer(planner, bad, record, payload, sd_start, sd_end, refinements, iterations, timings, t_all)
