"""The time–energy trade-off curve along a path: one plan per energy weight (`objectives.energy` has the
objective itself; this module sits above the planner, which imports `energy` but nothing here)."""

from __future__ import annotations

from ..checks import real, reals
from ..errors import InputError, short_repr
from ..planner import TimeOptimalPlanner
from .energy import MAX_WEIGHT


def time_energy_curve(robot, path, weights, payload=None, sd_start: float = 0.0, sd_end: float = 0.0,
                      **options) -> list[dict]:
    """Duration vs energy along `path` for each energy weight: a list of
    {"weight", "duration", "energy", "plan"} (energy = ∫ τᵀRτ dt on 1 ms samples, R = `energy_R` option or
    1/τ_max²). Options as for `TimeOptimalPlanner` (grid, limits, energy_R, ...). `weights` is checked as a whole
    before anything is planned (None or a number failed with a TypeError, "abc" was planned letter by letter and
    refused as energy_weight 'a', and [1, "x"] planned weight 1 before refusing "x")."""
    if "energy_weight" in options:
        raise InputError("energy_weight: give the weights as the `weights` list, not as an option")
    what = "a list of energy weights (numbers >= 0), e.g. [0, 0.1, 1, 10]"
    if isinstance(weights, (str, bytes)) or not isinstance(weights, (list, tuple)) and not (
            hasattr(weights, "ndim") and weights.ndim == 1):
        raise InputError(f"weights: expected {what}, got {short_repr(weights)}")
    weights = [real(w, f"weights[{i}]", 0.0, MAX_WEIGHT) for i, w in enumerate(reals(weights, "weights", what))]
    out = []
    for w in weights:
        plan = TimeOptimalPlanner(robot, path, energy_weight=w, **options).plan(payload=payload, sd_start=sd_start,
                                                                              sd_end=sd_end)
        out.append(dict(weight=float(w), duration=float(plan.duration), energy=float(plan.energy), plan=plan))
    return out
