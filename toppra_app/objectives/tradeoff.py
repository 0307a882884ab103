"""The time–energy trade-off curve along a path: one plan per energy weight (`objectives.energy` has the
objective itself; this module sits above the planner, which imports `energy` but nothing here)."""

from __future__ import annotations

from ..errors import InputError
from ..planner import TimeOptimalPlanner


def time_energy_curve(robot, path, weights, payload=None, sd_start: float = 0.0, sd_end: float = 0.0,
                      **options) -> list[dict]:
    """Duration vs energy along `path` for each energy weight: a list of
    {"weight", "duration", "energy", "plan"} (energy = ∫ τᵀRτ dt on 1 ms samples, R = `energy_R` option or
    1/τ_max²). Options as for `TimeOptimalPlanner` (grid, limits, energy_R, ...)."""
    if "energy_weight" in options:
        raise InputError("energy_weight: give the weights as the `weights` list, not as an option")
    out = []
    for w in weights:
        plan = TimeOptimalPlanner(robot, path, energy_weight=w, **options).plan(payload=payload, sd_start=sd_start,
                                                                              sd_end=sd_end)
        out.append(dict(weight=float(w), duration=float(plan.duration), energy=float(plan.energy), plan=plan))
    return out
