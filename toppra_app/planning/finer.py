"""Planning again on a finer grid: where repairs stall, or for the gap estimate (`split_for_gap`; on a
dense path at its first solution already; θ̈ linear: for the swing estimate, `split_when_done`); or on the
same grid with θ̈ constant (`plan_constant`), where θ̇² of θ̈ linear would stop inside an interval.

The planner halves the intervals marked bad (`grid.split_grid`: at the spline's knots inside them where
there are any) and plans on that grid with a planner of the same options and one split fewer. That finer
planner is kept on the coarse one (the last two, by the bad intervals), so a re-plan on the same path —
another payload, end speed — that needs the same split reuses its grid, stations and compiled problem.
"""

from __future__ import annotations

from ..verify import gap_estimate
from . import diagnose, refine
from .grid import LINEAR_SIZES, SIZES, split_grid, split_into
from .options import LINEAR_MAX_INTERVALS
from .prepare import DENSE_REFINE_MAX
from .result import with_earlier_work

KEPT = 2                           # finer planners kept per planner
LIMIT_SPLITS = 1                   # splits where repairs stall over a limit beyond `max_splits` (spent on the gap):
                                   # a noisy 300-sample Panda path with a payload ended 0.24 % over a torque limit
                                   # after its two splits for the gap, its torque rows at the holding floor
SIZED_MAX = 0.1                    # `sized`: one split for several only up to this gap estimate (the dense Panda path,
                                   # 5.9 %: halvings kept 0.34 of the room, twice; paths with 1e-3 rad noise, 13–30 %:
                                   # the room moves as the grid is cut, and one split for two ended up to 0.17 %
                                   # longer, a UR5e's 364 samples; above it their first profile is the solution's too)


def plan_finer(planner, bad, record: dict, payload, sd_start: float, sd_end: float, refinements: list,
               iterations: int, timings: dict, t_all: float, law=None, splits: int = 1):
    """The plan of `planner`'s path on its grid with the intervals `bad` (N,) bool halved — or cut into `bad`
    (N,) int pieces (`grid.split_into`), `splits` of its `max_splits` spent on it — the work so far
    (`refinements` and this split's `record`, solver `iterations`, `timings` since `t_all`) counted in; `law`,
    the last solution on the coarser grid, is where it starts (`TimeOptimalPlanner.plan`'s `start`)."""
    def make():                                        # the robot as given: the options apply the profile
        grid = (split_grid if bad.dtype == bool else split_into)(planner.theta, bad, planner.path.knots)
        linear = planner.linear and (grid.size <= LINEAR_MAX_INTERVALS + 1 or not planner.rated)
        finer = type(planner)(planner.drive_robot, planner.path, grid, **{
            **planner._options, "max_splits": max(planner.max_splits - splits, 0),
            "time_law": "linear" if linear else "constant", "gap_target": planner.gap_target})
        finer.limit_splits = planner.limit_splits - (planner.max_splits <= 0)
        return finer
    plan = _kept(planner, bad.dtype.char.encode() + bad.tobytes(), make, True).plan(
        payload=payload, sd_start=sd_start, sd_end=sd_end, start=law)
    return with_earlier_work(plan, refinements + [record], iterations, timings, t_all)


def split_for_limits(planner, check, over: dict, payload, sd_start: float, sd_end: float, refinements: list,
                     iterations: int, timings: dict, t_all: float, law):
    """The plan on a grid with the intervals over a limit halved (`plan_finer`; `over` and `check` the last
    check's) where repairs stall and the planner may split (`may_split`) — if it breaks its limits less than
    the last plan `law` (with its warnings); else None (the planner keeps that plan and warns of it alone,
    `refinements` saying so): a finer grid starts its repairs afresh, and on rough paths may end further over
    (a noisy Panda path with a payload: 0.28 % over before, 0.45 % after)."""
    if not may_split(planner):
        return None
    bad = refine.over_intervals(over, law.theta.size - 1)
    record = dict(action="split", points=int(bad.sum()), worst_ratio=check.worst_ratio)
    with diagnose.held_back() as held:                 # (the warnings of a plan that may be discarded)
        plan = plan_finer(planner, bad, record, payload, sd_start, sd_end, refinements, iterations, timings, t_all,
                          law)
    if plan.worst_ratio <= max(check.worst_ratio, 1.0 + planner.tol):
        diagnose.release(held)
        return plan
    refinements.append(dict(record, action="split undone", finer_worst_ratio=plan.worst_ratio))
    return None


def may_split(planner) -> bool:
    """Whether `planner` may split its grid where repairs stall over a limit: while `max_splits` (the user's
    bound; 0: never) has splits left, and `LIMIT_SPLITS` more after them — the gap's refinements may have
    spent them, and a limit the plan breaks matters more than the gap (a plan over a limit is kept with a
    warning only where the grid may not change)."""
    return planner.auto_grid and (planner.max_splits > 0 or planner.limit_splits > 0)


def _kept(planner, key: bytes, make, auto_grid: bool):
    """The planner kept on `planner` under `key` (`KEPT` of them, the oldest dropped for a new one), made by
    `make()` with `auto_grid` (it may refine its grid as the default one) where there is none yet."""
    with planner._lock:
        other = planner._finer.get(key)
        if other is None:
            other = make()
            other.auto_grid = auto_grid
            if len(planner._finer) >= KEPT:
                planner._finer.pop(next(iter(planner._finer)))
            planner._finer[key] = other
    return other


def split_for_gap(planner, check, law, over: dict | None, factor: float, payload, sd_start: float, sd_end: float,
                  refinements: list, iterations: int, timings: dict, t_all: float):
    """The plan on a split grid (`plan_finer`, the work so far counted in) where the gap estimate of `law`,
    checked between grid points (`check`, `over` as `refine.checked` gives them, or None), is above `factor` ×
    the planner's `gap_target` — the intervals holding the room and those over a limit halved
    (`refine.for_the_gap`): repairs lower the profile and would not bring it below; else None. The planner
    asks after its first check (factor 1), on a dense path at its first solution already, before certifying
    it, re-linearising viscous friction or repairing (factor `planner.EARLY_SPLIT`), and when it is done
    (`split_when_done`)."""
    estimate = gap_estimate(check, law)
    if estimate is None or estimate <= factor * planner.gap_target:
        return None
    over = None if over is None else refine.over_intervals(over, law.theta.size - 1)
    bad, record = refine.for_the_gap(check, law, estimate, over)
    splits = 1
    if in_one(planner, estimate):                                       # the splits left, in one (`sized`)
        bad, record, splits = sized(planner, check, law, estimate, bad, over)
    return plan_finer(planner, bad, record, payload, sd_start, sd_end, refinements, iterations, timings, t_all, law,
                      splits)


def in_one(planner, estimate: float | None) -> bool:
    """Whether `planner`'s split for a gap `estimate` takes its splits left in one (`sized`): a dense path planned
    θ̈ linear with more than one split left, the estimate up to `SIZED_MAX` (where the room stays where it was as
    the grid is cut); there its sweeps' profile may decide the split before any solve (`TimeOptimalPlanner.plan`)."""
    return planner.dense and planner.linear and planner.max_splits > 1 and estimate is not None and \
        estimate <= SIZED_MAX


def sized(planner, check, law, estimate: float, bad, over) -> tuple:
    """(pieces (N,) int, record, splits spent) for `split_for_gap` on a dense path with `max_splits` s > 1 left:
    the grid those s splits would reach, in one (`refine.pieces_for_gap`). Halving the intervals that hold the
    room took several planners, each paying its own preparation, sweeps and solves, and the room shrinks where
    the grid is cut much as the measured order says (halving a dense Panda path's intervals kept 0.34 of their
    room, twice over). Its size: the smallest of `grid.SIZES` whose predicted estimate is within target, up to
    the size s halvings growing the grid as the first (`bad`, `grid.split_grid`) would reach; all s spent
    unless it stays within the first halving's size."""
    N, s = law.theta.size - 1, planner.max_splits
    first = split_grid(planner.theta, bad, planner.path.knots).size - 1
    most = max([k for k in SIZES if k <= N * (first / N) ** s and k <= DENSE_REFINE_MAX] + [first])
    pieces, record = refine.pieces_for_gap(check, law, estimate, planner.gap_target,
                                           [k for k in SIZES if N < k <= most], 2 ** s, over)
    return pieces, record, 1 if pieces.sum() <= first else s


def split_when_done(planner, check, law, gap: bool, swing: bool, payload, sd_start: float, sd_end: float,
                    refinements: list, iterations: int, timings: dict, t_all: float):
    """The plan on a split grid (`plan_finer`) for a finished plan within tol: with `gap`, where its gap estimate
    is above the planner's `gap_target` (`split_for_gap`); with `swing` (θ̈ linear), where its swing estimate is
    above `refine.SWING_TARGET` or a lower `gap_target` (the grid taken to the next of `grid.LINEAR_SIZES`,
    `refine.for_the_swing`); else None."""
    if check.worst_ratio > 1.0 + planner.tol or not planner.auto_grid or planner.max_splits <= 0:
        return None
    if gap:
        return split_for_gap(planner, check, law, None, 1.0, payload, sd_start, sd_end, refinements, iterations,
                             timings, t_all)
    found = refine.for_the_swing(check, law, LINEAR_SIZES, planner.gap_target) if swing else None
    return None if found is None else plan_finer(planner, *found, payload, sd_start, sd_end, refinements, iterations,
                                                 timings, t_all, law)


def plan_constant(planner, payload, sd_start: float, sd_end: float, refinements: list, iterations: int,
                  timings: dict, t_all: float):
    """The plan of `planner`'s path on its grid with θ̈ constant per interval, the work so far counted in. For a
    θ̈-linear solution whose θ̇², a quadratic held ≥ 0 only at the stations, reaches zero inside an interval
    (`MotionStops`) after the time cones too: with θ̈ constant θ̇² is linear between grid points, so it stops
    only where the path must; that planner may still split its grid for the gap estimate (`split_for_gap`)."""
    other = _kept(planner, b"constant", lambda: type(planner)(planner.drive_robot, planner.path, planner.theta, **{
        **planner._options, "time_law": "constant", "gap_target": planner.gap_target}), planner.auto_grid)
    plan = other.plan(payload=payload, sd_start=sd_start, sd_end=sd_end)
    return with_earlier_work(plan, refinements + [dict(action="constant law", points=0)], iterations, timings,
                             t_all)
