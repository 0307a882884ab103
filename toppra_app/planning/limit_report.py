"""Did a plan keep its limits? One answer from everything the planner checked (`TimeOptimalPlan.limit_report`).

A plan is within its limits when
* the check between grid points (`verify`: torque, velocity, acceleration, the Cartesian limits) finds no
  value over its limit by more than the planner's `tol` (the same test as `diagnose.warn_plan`'s warning),
* the sampled torque-rate / jerk check, where the plan has rate limits or a controller profile
  (`plan.rate_check`, on the controller's samples), finds none either (the same test as its warning), and
* the solve that gave the plan's time law ended "optimal": an "optimal_inaccurate" solve met the solver's
  tolerances only loosely (`diagnose.plan_status` warned), so the plan is not certified even where the check
  passes.

The warnings say the same in words; this is for a program (a CI job, a cell controller) that must decide
without reading stderr: `toppra-app plan|palletize|batch --strict` exit with `STRICT_EXIT` on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

GRID = "grid"            # where the worst value was found: between grid points (the check of the exact time law)
SAMPLES = "samples"      # ... or on the sampled trajectory (the torque-rate / jerk check; its `theta` is a time)
WHERE = {GRID: "between grid points", SAMPLES: "on the sampled trajectory"}


@dataclass(frozen=True)
class LimitReport:
    """The verdict on one plan: `within_limits`, the worst value/limit `ratio` over every checked limit, which
    `limit` and `joint` (its name; None for a limit of the tool) it was, `found` ("grid": between grid points,
    at `at` = θ; "samples": on the sampled trajectory, at `at` = t in s), the tolerance `tol` (a ratio up to
    1 + tol passes), the solver `status`, and `problems`: one phrase per reason the plan is not within its
    limits."""
    within_limits: bool
    ratio: float
    limit: str | None
    joint: str | None
    found: str | None
    at: float | None
    tol: float
    status: str
    problems: tuple = ()

    def line(self) -> str:
        """The problems on one line ("within its limits" when there are none)."""
        return "; ".join(self.problems) if self.problems else "within its limits"

    def as_dict(self) -> dict:
        """For summary.json: plain values (`at` None where it is not a number)."""
        return dict(within_limits=self.within_limits, ratio=self.ratio, limit=self.limit, joint=self.joint,
                    found=self.found, at=self.at, at_unit=None if self.found is None else
                    ("s" if self.found == SAMPLES else "theta"), tol=self.tol, status=self.status,
                    problems=list(self.problems))


def limit_report(plan, tol: float) -> LimitReport:
    """The `LimitReport` of `plan` (a `TimeOptimalPlan`) with the tolerance `tol` its planner used."""
    names = list(plan.robot.joint_names)
    found = [(w, GRID) for w in plan.check.worst.values() if math.isfinite(w.limit)] + \
        [(w, SAMPLES) for w in (plan.rate_check or {}).values()]          # (inf: the robot has no such limit)
    problems = []
    for where in (GRID, SAMPLES):
        over = [w for w, f in found if f == where and not w.ratio <= 1.0 + tol]      # (NaN: not within)
        if over:
            problems.append(_phrase(max(over, key=lambda w: w.ratio), where, names, tol))
    if plan.status != "optimal":
        problems.append(f"the solve that gave the plan ended {plan.status} (not certified optimal)")
    worst, where = max(found, key=lambda x: x[0].ratio, default=(None, None))
    if worst is None:                                                   # no limit of any kind
        return LimitReport(not problems, 0.0, None, None, None, None, tol, plan.status, tuple(problems))
    return LimitReport(not problems, float(worst.ratio), worst.kind, _joint(worst, names), where,
                       float(worst.theta) if math.isfinite(worst.theta) else None, tol, plan.status,
                       tuple(problems))


def _joint(w, names) -> str | None:
    return names[w.joint] if w.joint >= 0 else None


def _phrase(w, where: str, names, tol: float) -> str:
    """E.g. 'torque of joint a4 at 1.00322 × its limit between grid points at θ = 0.512 (tol 1.001)'."""
    joint = _joint(w, names)
    at = f"t = {w.theta:.6g} s" if where == SAMPLES else f"θ = {w.theta:.6g}"
    return (f"{w.kind}{'' if joint is None else f' of joint {joint}'} at {w.ratio:.6g} × its limit {WHERE[where]} at "
            f"{at} (tol {1.0 + tol:.6g})")
