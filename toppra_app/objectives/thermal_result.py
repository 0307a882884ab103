"""The result of the thermal cycle limit (`objectives.thermal.plan_cycle_with_rms_limit`): the moves' plans,
the cycle time and its idle share, the cycle RMS per joint against the ratings, and the verdict of ``--strict``
(`within_limits`, `limit_problem`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

LIMITED_SHARE = 0.005            # a joint is "thermally limited" when its RMS is within 0.5 % of the rating


@dataclass
class CyclePlan:
    """Result of `plan_cycle_with_rms_limit`."""
    plans: list                        # per-move TimeOptimalPlan with the RMS-limited time laws
    time_optimal_plans: list           # per-move time-optimal plans (no thermal limit)
    cycle_time: float                  # s, T (motion + idle)
    motion_time: float                 # s, Σ move durations
    idle_time: float                   # s, T − motion_time, holding the last move's end posture
    rms: np.ndarray                    # (n,) cycle RMS torque per joint (every joint, rated or not), idle hold included
    tau_rms: np.ndarray                # (n,) the ratings, inf for a joint that is not rated
    rating_used: np.ndarray            # (n,) ratings given to the convex problem (tightened if needed; inf: unrated)
    joint_names: list
    unconstrained_cycle_time: float    # s, Σ time-optimal durations
    unconstrained_rms: np.ndarray      # (n,) RMS of the time-optimal cycle (no idle)
    worst_limit_ratio: float           # worst |value|/limit of the per-move limits between grid points
    solves: list = field(default_factory=list)        # (T, feasible) per convex solve
    retightened: int = 0
    seconds: float = 0.0
    rms_tol: float = 1e-3              # the allowed relative excess of the RMS (`plan_cycle_with_rms_limit`)

    @property
    def bisection(self) -> list:
        """The old name of `solves` (there is no bisection: one convex problem per round)."""
        return self.solves

    @property
    def within_limits(self) -> bool:
        """Whether every rated joint's cycle RMS is within `rms_tol` of its rating and every move keeps its own
        limits (`TimeOptimalPlan.within_limits`): the verdict of ``--strict``."""
        return self.limit_problem() is None

    def limit_problem(self) -> tuple[float, str] | None:
        """(ratio, one line) of the worst excess — a joint's RMS over its rating by more than `rms_tol`, else the
        worst move over its limits (`move_problem`) — or None within them."""
        over = np.where(self.rated, self.rms_ratio, 0.0)
        if over.max() > 1.0 + self.rms_tol:
            k = int(np.argmax(over))
            return float(over[k]), (f"RMS torque of joint {self.joint_names[k]} at {over[k]:.4f} × its rating "
                                    f"{self.tau_rms[k]:.6g} N·m over the cycle (tol {1.0 + self.rms_tol:g})")
        return self.move_problem()

    def move_problem(self) -> tuple[float, str] | None:
        """(ratio, one line) of the move furthest over its own limits (`TimeOptimalPlan.limit_report`), or None."""
        reports = [(m, p.limit_report()) for m, p in enumerate(self.plans)]
        bad = [(r.ratio, f"move {m + 1}: {r.line()}") for m, r in reports if not r.within_limits]
        return max(bad) if bad else None

    @property
    def rated(self) -> np.ndarray:
        """(n,) bool: the joints with a rating (tau_rms finite)."""
        return np.isfinite(self.tau_rms)

    @property
    def unrated(self) -> list:
        """Names of the joints without a rating (tau_rms inf): not limited, their RMS only reported."""
        return [self.joint_names[k] for k in np.flatnonzero(~self.rated)]

    @property
    def rms_ratio(self) -> np.ndarray:
        """(n,) cycle RMS / rating; 0 for an unrated joint (rms / inf: it never approaches a rating), so the worst
        ratio is still `rms_ratio.max()`. (`summary` writes None there: no rating to compare with.)"""
        return self.rms / self.tau_rms

    @property
    def thermally_limited(self) -> list:
        """Names of the rated joints whose cycle RMS is within 0.5 % of (or above) the rating."""
        near = self.rated & (self.rms >= (1.0 - LIMITED_SHARE) * self.tau_rms)
        return [self.joint_names[k] for k in np.flatnonzero(near)]

    @property
    def durations(self) -> list:
        return [float(p.duration) for p in self.plans]

    def summary(self) -> dict:
        """Plain numbers for JSON: per joint lists, None where a joint is not rated (its rating and ratios; its
        RMS is given), so the summary holds no inf or NaN (not valid JSON)."""
        def rated_only(values):
            return [float(v) if r else None for v, r in zip(values, self.rated)]
        return dict(cycle_time_s=self.cycle_time, motion_time_s=self.motion_time, idle_time_s=self.idle_time,
                    unconstrained_cycle_time_s=self.unconstrained_cycle_time,
                    cycle_time_increase_percent=100.0 * (self.cycle_time / self.unconstrained_cycle_time - 1.0),
                    move_durations_s=self.durations,
                    tau_rms=rated_only(self.tau_rms), rms=[float(v) for v in self.rms],
                    rms_ratio=rated_only(self.rms_ratio),
                    unconstrained_rms_ratio=rated_only(self.unconstrained_rms / self.tau_rms),
                    unrated=self.unrated, thermally_limited=self.thermally_limited,
                    worst_limit_ratio=self.worst_limit_ratio,
                    within_limits=self.within_limits, convex_solves=len(self.solves), retightened=self.retightened,
                    seconds=self.seconds)
